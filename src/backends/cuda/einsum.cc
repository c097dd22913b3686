// Einsum on the GPU: any equation the reference accepts (diagonals, implicit output, broadcasting ellipsis, any
// number of inputs up to 8), parsed against the current shapes at each launch. Floats (fp32 math) and int8,
// uint8, int32, int64 (wrapping 64-bit math as the reference).
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/einsum_kernels.h"
#include "ir/infer/einsum_util.h"

namespace kiln::cuda {
namespace {

bool einsumType(DataType t) {
  return isCudaFloat(t) || t == DataType::kINT8 || t == DataType::kUINT8 || t == DataType::kINT32 ||
         t == DataType::kINT64;
}

// The device form of a parsed equation for these input shapes (as the reference: loops are the output labels
// then the summed ones; an input's stride along a loop sums its axes with that label, 0 where it broadcasts).
EinsumParams einsumParams(ir::EinsumSpec const& spec, std::vector<Dims> const& shapes) {
  EinsumParams p;
  std::vector<int32_t> loop(spec.outputLabels);
  loop.insert(loop.end(), spec.summedLabels.begin(), spec.summedLabels.end());
  p.numInputs = static_cast<int32_t>(shapes.size());
  p.numOut = static_cast<int32_t>(spec.outputLabels.size());
  p.numSum = static_cast<int32_t>(spec.summedLabels.size());
  for (size_t j = 0; j < loop.size(); ++j) p.ext[j] = spec.extents[static_cast<size_t>(loop[j])];
  for (size_t k = 0; k < shapes.size(); ++k) {
    Dims const& s = shapes[k];
    int64_t st = 1;
    for (int32_t ax = s.nbDims - 1; ax >= 0; --ax) {
      int32_t l = spec.inputLabels[k][static_cast<size_t>(ax)];
      for (size_t j = 0; j < loop.size(); ++j)
        if (loop[j] == l && !(s.d[ax] == 1 && p.ext[j] != 1)) p.stride[k][j] += st;
      st *= s.d[ax];
    }
  }
  return p;
}

bool fitsDevice(ir::EinsumSpec const& spec, size_t numInputs) {
  return numInputs >= 1 && numInputs <= static_cast<size_t>(EinsumParams::kMaxInputs) &&
         spec.outputLabels.size() + spec.summedLabels.size() <= static_cast<size_t>(EinsumParams::kMaxLoops);
}

class EinsumKernel final : public backends::Kernel {
 public:
  EinsumKernel(std::string who, std::string equation) : who_(std::move(who)), equation_(std::move(equation)) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& y = ctx.outputs[0];
    std::vector<Dims> shapes;
    for (auto const& v : ctx.inputs) {
      if (v.dtype != y.dtype) return invalidArgument(who_, ": inputs and output must have one type");
      shapes.push_back(v.shape);
    }
    Result<ir::EinsumSpec> spec = ir::parseEinsum(equation_, shapes);
    if (!spec.isOk()) return spec.status().withContext(who_);
    bool fits = y.shape.nbDims == static_cast<int32_t>(spec->outputLabels.size());
    for (int32_t i = 0; fits && i < y.shape.nbDims; ++i)
      fits = y.shape.d[i] == spec->extents[static_cast<size_t>(spec->outputLabels[static_cast<size_t>(i)])];
    if (!fits)
      return invalidArgument(who_, ": output ", dimsToString(y.shape), " does not fit the equation '", equation_, "'");
    if (!fitsDevice(*spec, shapes.size())) return unsupported(who_, ": too many inputs or labels for the GPU einsum");
    EinsumParams p = einsumParams(*spec, shapes);
    for (size_t k = 0; k < ctx.inputs.size(); ++k) p.in[k] = ctx.inputs[k].data;
    int64_t outCount = 1, sumCount = 1;
    for (int32_t j = 0; j < p.numOut; ++j) outCount *= p.ext[j];
    for (int32_t j = p.numOut; j < p.numOut + p.numSum; ++j) sumCount *= p.ext[j];
    if (outCount <= 0) return Status::ok();
    if (sumCount < 0) sumCount = 0;
    if (!launchEinsum(static_cast<int32_t>(y.dtype), p, y.data, outCount, sumCount, streamOf(ctx)))
      return unsupported(who_, ": no GPU einsum for ", dataTypeName(y.dtype));
    return launchStatus(who_);
  }

 private:
  std::string who_, equation_;
};

backends::Tactic makeEinsum() {
  backends::Tactic t;
  t.name = "einsum_cuda_direct";
  t.op = ir::OpType::kEinsum;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    if (in.empty() || in.size() > static_cast<size_t>(EinsumParams::kMaxInputs) || out.size() != 1 ||
        !einsumType(out[0].dtype))
      return false;
    std::vector<Dims> shapes;
    for (auto const& i : in) {
      if (i.dtype != out[0].dtype || i.shape.nbDims < 0) return false;
      shapes.push_back(i.shape);
    }
    // The label count is known from the ranks (extents may be -1 here).
    Result<ir::EinsumSpec> spec = ir::parseEinsum(node.attrs.getString("equation"), shapes);
    return spec.isOk() && fitsDevice(*spec, in.size());
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    std::string equation = node.attrs.getString("equation");
    KILN_RETURN_IF_ERROR(ir::checkEinsumEquation(equation).withContext(node.describe()));
    return std::unique_ptr<backends::Kernel>(new EinsumKernel(node.describe(), equation));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeEinsum);

}  // namespace
}  // namespace kiln::cuda
