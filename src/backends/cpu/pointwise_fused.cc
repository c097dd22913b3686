// CPU kernel of PointwiseFused: a block interpreter. The output is walked in blocks of 256 elements; each input is
// loaded (converted to fp32) into a block, each instruction runs as one loop over the block (simple arithmetic
// vectorizes), and the last block is stored in the output type. Blocks split over the OpenMP threads from 32768
// elements, so GPU-built plans with fused chains run on the CPU too.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/onednn_util.h"
#include "backends/pointwise_program_math.h"

namespace kiln::backends::cpu {
namespace {

constexpr int64_t kBlock = 256;

template <typename F>
void map1(float* d, float const* a, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) d[i] = f(a[i]);
}
template <typename F>
void map2(float* d, float const* a, float const* b, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) d[i] = f(a[i], b[i]);
}

void runInstruction(ir::PwInstruction const& in, float* d, float const* a, float const* b, float const* c, int64_t n) {
  switch (in.opcode) {
    case ir::PwOpcode::kElementWise: {
      auto const op = static_cast<ElementWiseOperation>(in.param);
      if (op == ElementWiseOperation::kSUM) return map2(d, a, b, n, [](float x, float y) { return x + y; });
      if (op == ElementWiseOperation::kPROD) return map2(d, a, b, n, [](float x, float y) { return x * y; });
      if (op == ElementWiseOperation::kSUB) return map2(d, a, b, n, [](float x, float y) { return x - y; });
      if (op == ElementWiseOperation::kDIV) return map2(d, a, b, n, [](float x, float y) { return x / y; });
      return map2(d, a, b, n, [op](float x, float y) { return pw::elementWise(op, x, y); });
    }
    case ir::PwOpcode::kUnary: {
      auto const op = static_cast<UnaryOperation>(in.param);
      if (op == UnaryOperation::kNEG) return map1(d, a, n, [](float x) { return -x; });
      if (op == UnaryOperation::kABS) return map1(d, a, n, [](float x) { return std::fabs(x); });
      return map1(d, a, n, [op](float x) { return pw::unary(op, x); });
    }
    case ir::PwOpcode::kActivation: {
      auto const type = static_cast<ActivationType>(in.param);
      float const alpha = in.alpha, beta = in.beta;
      if (type == ActivationType::kRELU)
        return map1(d, a, n, [](float x) { return x != x ? x : (x > 0.0f ? x : 0.0f); });
      return map1(d, a, n, [type, alpha, beta](float x) { return pw::activation(type, x, alpha, beta); });
    }
    case ir::PwOpcode::kCast: {
      auto const to = static_cast<DataType>(in.param);
      if (to == DataType::kFLOAT) return map1(d, a, n, [](float x) { return x; });
      return map1(d, a, n, [to](float x) { return pw::castTo(to, x); });
    }
    case ir::PwOpcode::kSelect:
      for (int64_t i = 0; i < n; ++i) d[i] = a[i] != 0.0f ? b[i] : c[i];
      return;
  }
}

float loadOne(void const* p, DataType t, int64_t i) {
  if (t == DataType::kHALF) return halfToFloat(static_cast<uint16_t const*>(p)[i]);
  if (t == DataType::kBF16) return bf16ToFloat(static_cast<uint16_t const*>(p)[i]);
  if (t == DataType::kBOOL) return static_cast<uint8_t const*>(p)[i] != 0 ? 1.0f : 0.0f;
  return static_cast<float const*>(p)[i];
}

// A run of n contiguous elements from `start` as fp32.
void loadRun(void const* p, DataType t, int64_t start, int64_t n, float* d) {
  if (t == DataType::kFLOAT) {
    std::memcpy(d, static_cast<float const*>(p) + start, static_cast<size_t>(n) * sizeof(float));
  } else if (t == DataType::kHALF) {
    uint16_t const* s = static_cast<uint16_t const*>(p) + start;
    for (int64_t i = 0; i < n; ++i) d[i] = halfToFloat(s[i]);
  } else if (t == DataType::kBF16) {
    uint16_t const* s = static_cast<uint16_t const*>(p) + start;
    for (int64_t i = 0; i < n; ++i) d[i] = bf16ToFloat(s[i]);
  } else {
    uint8_t const* s = static_cast<uint8_t const*>(p) + start;
    for (int64_t i = 0; i < n; ++i) d[i] = s[i] != 0 ? 1.0f : 0.0f;
  }
}

void storeRun(void* p, DataType t, int64_t start, int64_t n, float const* v) {
  if (t == DataType::kFLOAT) {
    std::memcpy(static_cast<float*>(p) + start, v, static_cast<size_t>(n) * sizeof(float));
  } else if (t == DataType::kHALF) {
    uint16_t* o = static_cast<uint16_t*>(p) + start;
    for (int64_t i = 0; i < n; ++i) o[i] = floatToHalf(v[i]);
  } else if (t == DataType::kBF16) {
    uint16_t* o = static_cast<uint16_t*>(p) + start;
    for (int64_t i = 0; i < n; ++i) o[i] = floatToBf16(v[i]);
  } else {
    uint8_t* o = static_cast<uint8_t*>(p) + start;
    for (int64_t i = 0; i < n; ++i) o[i] = v[i] != 0.0f ? 1 : 0;
  }
}

enum class Mode { kFull, kScalar, kStrided };

class PointwiseFusedCpuKernel final : public Kernel {
 public:
  PointwiseFusedCpuKernel(ir::PointwiseProgram p, std::string what) : p_(std::move(p)), what_(std::move(what)) {}

  Status enqueue(LaunchContext const& ctx) const override {
    size_t const numIn = ctx.inputs.size();
    if (numIn != static_cast<size_t>(p_.numInputs) || ctx.outputs.size() != 1)
      return invalidArgument(what_, ": ", numIn, " inputs where the program reads ", p_.numInputs);
    TensorView const& y = ctx.outputs[0];
    // The loads and stores below know these storage types only (the program was validated for the node's types;
    // this guards the views a run passes).
    auto storable = [](DataType t) { return ir::isPointwiseFloatType(t) || t == DataType::kBOOL; };
    if (!storable(y.dtype)) return invalidArgument(what_, ": output is ", dataTypeName(y.dtype));
    for (size_t k = 0; k < numIn; ++k)
      if (!storable(ctx.inputs[k].dtype))
        return invalidArgument(what_, ": input ", k, " is ", dataTypeName(ctx.inputs[k].dtype));
    Dims const& out = y.shape;
    int64_t const n = y.count();
    std::vector<Mode> modes(numIn);
    std::vector<std::vector<int64_t>> strides(numIn,
                                              std::vector<int64_t>(static_cast<size_t>(std::max(out.nbDims, 0)), 0));
    for (size_t k = 0; k < numIn; ++k) {
      TensorView const& x = ctx.inputs[k];
      if (x.shape.nbDims < 0 || x.shape.nbDims > out.nbDims)
        return invalidArgument(what_, ": input ", k, " ", dimsToString(x.shape), " does not broadcast to ",
                               dimsToString(out));
      int32_t const lead = out.nbDims - x.shape.nbDims;
      int64_t stride = 1;
      bool full = true;
      for (int32_t d = out.nbDims - 1; d >= 0; --d) {
        int64_t e = d >= lead ? x.shape.d[d - lead] : 1;
        if (e != 1 && e != out.d[d])
          return invalidArgument(what_, ": input ", k, " ", dimsToString(x.shape), " does not broadcast to ",
                                 dimsToString(out));
        if (e != out.d[d]) full = false;
        strides[k][static_cast<size_t>(d)] = e == 1 ? 0 : stride;
        stride *= e;
      }
      modes[k] = x.count() == 1 ? Mode::kScalar : full ? Mode::kFull : Mode::kStrided;
    }
    if (n <= 0) return Status::ok();
    int64_t const blocks = (n + kBlock - 1) / kBlock;
    OmpThreads threads(ctx, n);
    int const nt = static_cast<int>(std::min<int64_t>(threads.count(), blocks));
    size_t const numInstr = p_.instructions.size(), numImm = p_.immediates.size();
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
      // Per thread: input blocks, immediate blocks, one block per instruction.
      std::vector<float> buf((numIn + numImm + numInstr) * static_cast<size_t>(kBlock));
      auto block = [&](size_t i) { return buf.data() + i * static_cast<size_t>(kBlock); };
      for (size_t k = 0; k < numIn; ++k)
        if (modes[k] == Mode::kScalar)
          std::fill_n(block(k), kBlock, loadOne(ctx.inputs[k].data, ctx.inputs[k].dtype, 0));
      for (size_t m = 0; m < numImm; ++m) std::fill_n(block(numIn + m), kBlock, p_.immediates[m]);
      std::vector<int64_t> idx(static_cast<size_t>(std::max(out.nbDims, 0)));
      int const tid = omp_get_thread_num(), nth = omp_get_num_threads();
      for (int64_t b = tid; b < blocks; b += nth) {
        int64_t const start = b * kBlock, len = std::min(kBlock, n - start);
        for (size_t k = 0; k < numIn; ++k) {
          TensorView const& x = ctx.inputs[k];
          if (modes[k] == Mode::kFull) {
            loadRun(x.data, x.dtype, start, len, block(k));
          } else if (modes[k] == Mode::kStrided) {
            // The block's first multi-index, then an odometer over out's dims.
            int64_t rem = start, off = 0;
            for (int32_t d = out.nbDims - 1; d >= 0; --d) {
              idx[static_cast<size_t>(d)] = rem % out.d[d];
              rem /= out.d[d];
              off += idx[static_cast<size_t>(d)] * strides[k][static_cast<size_t>(d)];
            }
            float* dst = block(k);
            for (int64_t i = 0; i < len; ++i) {
              dst[i] = loadOne(x.data, x.dtype, off);
              for (int32_t d = out.nbDims - 1; d >= 0; --d) {
                size_t const du = static_cast<size_t>(d);
                off += strides[k][du];
                if (++idx[du] < out.d[d]) break;
                off -= strides[k][du] * out.d[d];
                idx[du] = 0;
              }
            }
          }
        }
        for (size_t i = 0; i < numInstr; ++i) {
          ir::PwInstruction const& in = p_.instructions[i];
          float const* ops[3] = {nullptr, nullptr, nullptr};
          for (int32_t o = 0; o < in.numOperands; ++o) {
            ir::PwOperand const& src = in.operands[static_cast<size_t>(o)];
            size_t const slot = src.source == ir::PwSource::kInput ? static_cast<size_t>(src.index)
                                : src.source == ir::PwSource::kImmediate
                                    ? numIn + static_cast<size_t>(src.index)
                                    : numIn + numImm + static_cast<size_t>(src.index);
            ops[o] = block(slot);
          }
          runInstruction(in, block(numIn + numImm + i), ops[0], ops[1], ops[2], len);
        }
        storeRun(y.data, y.dtype, start, len, block(numIn + numImm + numInstr - 1));
      }
    }
    return Status::ok();
  }

 private:
  ir::PointwiseProgram p_;
  std::string what_;
};

Tactic makePointwiseFused() {
  Tactic t;
  t.name = "pointwisefused_cpu_block";
  t.op = ir::OpType::kPointwiseFused;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kONEDNN;
  t.priority = 10;
  t.supports = [](ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
    if (backends::nodeFormat(node) != TensorFormat::kLINEAR || out.size() != 1 || node.attrs.has("cpu_formats_in"))
      return false;
    std::vector<DataType> types;
    for (auto const& i : in) types.push_back(i.dtype);
    return ir::decodePointwiseProgram(node.attrs, types, out[0].dtype, node.describe()).isOk();
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
    std::vector<DataType> types;
    for (ir::Value const* v : node.inputs) {
      if (!v) return invalidGraph(node.describe(), ": an input is absent");
      types.push_back(v->dtype);
    }
    if (node.outputs.size() != 1) return invalidGraph(node.describe(), ": needs one output");
    KILN_ASSIGN_OR_RETURN(ir::PointwiseProgram p,
                          ir::decodePointwiseProgram(node.attrs, types, node.outputs[0]->dtype, node.describe()));
    return std::unique_ptr<Kernel>(new PointwiseFusedCpuKernel(std::move(p), node.describe()));
  };
  return t;
}
KILN_REGISTER_TACTIC(makePointwiseFused);

}  // namespace
}  // namespace kiln::backends::cpu
