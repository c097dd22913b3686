// CUDA tactics of the pointwise ops (kernels in pointwise.cu): Cast, ElementWise, Unary, Activation, Select,
// ParametricReLU, Scale, Quantize and Dequantize. Each claims exactly the types and layouts its kernel computes
// with the reference's semantics; everything else falls back to the host reference kernel.
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/cuda_util.h"
#include "backends/cuda/pointwise_kernels.h"
#include "ir/extension_enums.h"
#include "ir/infer/quantize_util.h"

namespace kiln::cuda {
namespace {

using backends::LaunchContext;
using backends::TensorView;
using ir::TensorInfo;
using Infos = std::vector<TensorInfo>;

// The kernels' operation codes are Kiln's enum values.
static_assert(pw::kEwSum == static_cast<int32_t>(ElementWiseOperation::kSUM) &&
              pw::kEwLess == static_cast<int32_t>(ElementWiseOperation::kLESS) &&
              pw::kEwFloorDiv == static_cast<int32_t>(ElementWiseOperation::kFLOOR_DIV) &&
              pw::kEwBitAnd == static_cast<int32_t>(ElementWiseOperation::kBITWISE_AND) &&
              pw::kEwBitXor == static_cast<int32_t>(ElementWiseOperation::kBITWISE_XOR));
static_assert(EnumMax<ElementWiseOperation>() == 14 && EnumMax<UnaryOperation>() == 25 &&
              EnumMax<ActivationType>() == 14 && EnumMax<ScaleMode>() == 3);
static_assert(pw::kUnExp == static_cast<int32_t>(UnaryOperation::kEXP) &&
              pw::kUnErf == static_cast<int32_t>(UnaryOperation::kERF) &&
              pw::kUnIsNan == static_cast<int32_t>(UnaryOperation::kISNAN) &&
              pw::kUnBitNot == static_cast<int32_t>(UnaryOperation::kBITWISE_NOT));

bool typeIn(DataType t, std::initializer_list<DataType> types) {
  for (DataType u : types)
    if (t == u) return true;
  return false;
}

// Every storage type the kernels handle (KILN_CUDA_DISPATCH's list).
bool isDeviceType(DataType t) {
  return typeIn(t, {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kFP8, DataType::kINT8,
                    DataType::kUINT8, DataType::kINT32, DataType::kINT64, DataType::kBOOL});
}
// The reference's arithmetic types that the device stores.
bool isArithmetic(DataType t) {
  return typeIn(t, {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kUINT8,
                    DataType::kINT32, DataType::kINT64});
}
bool isBitwise(DataType t) { return isDeviceType(t) && ir::isBitwiseType(t); }
bool isSignedInt(DataType t) { return typeIn(t, {DataType::kINT8, DataType::kINT32, DataType::kINT64}); }
int32_t code(DataType t) { return static_cast<int32_t>(t); }
bool present(TensorInfo const& t) { return t.shape.nbDims >= 0; }
bool present(TensorView const& t) { return t.data != nullptr && t.shape.nbDims >= 0; }

Status launched(bool ok, std::string const& what) {
  if (!ok) return unsupported(what, ": no CUDA kernel for these types");
  return launchStatus(what);
}

// The broadcast of operand shapes `ins` to `out` (each right-aligned; extents 1 or equal), with axes of extent 1
// dropped and adjacent axes merged where every operand walks them as one, so the kernels divide less.
Result<pw::Broadcast> makeBroadcast(Dims const& out, std::vector<Dims> const& ins, std::string const& what) {
  int32_t rank = out.nbDims;
  if (rank < 0 || rank > pw::kMaxRank || ins.size() > static_cast<size_t>(pw::kMaxOperands))
    return unsupported(what, ": broadcast of rank ", rank, " over ", ins.size(), " operands");
  int64_t st[pw::kMaxOperands][pw::kMaxRank] = {};
  for (size_t k = 0; k < ins.size(); ++k) {
    Dims const& in = ins[k];
    if (in.nbDims < 0 || in.nbDims > rank)
      return invalidArgument(what, ": input ", dimsToString(in), " does not broadcast to ", dimsToString(out));
    int64_t stride = 1;
    for (int32_t d = rank - 1; d >= 0; --d) {
      int32_t id = d - (rank - in.nbDims);
      int64_t e = id >= 0 ? in.d[id] : 1;
      if (e != 1 && e != out.d[d])
        return invalidArgument(what, ": input ", dimsToString(in), " does not broadcast to ", dimsToString(out));
      st[k][d] = e == 1 ? 0 : stride;
      stride *= e;
    }
  }
  pw::Broadcast bc;
  int32_t r = 0;
  for (int32_t d = 0; d < rank; ++d) {
    if (out.d[d] == 1) continue;
    bool merge = r > 0;
    for (size_t k = 0; k < ins.size() && merge; ++k) merge = bc.strides[k][r - 1] == st[k][d] * out.d[d];
    if (merge) {
      bc.dims[r - 1] *= out.d[d];
    } else {
      bc.dims[r] = out.d[d];
      ++r;
    }
    for (size_t k = 0; k < ins.size(); ++k) bc.strides[k][r - 1] = st[k][d];
  }
  bc.rank = r;
  int64_t count = 1;
  for (int32_t d = 0; d < rank; ++d) count *= out.d[d];
  bc.small = count < (int64_t{1} << 31);
  bc.contiguous = true;
  if (r > 1) bc.contiguous = false;
  for (size_t k = 0; k < ins.size() && r == 1; ++k)
    if (bc.strides[k][0] != 1) bc.contiguous = false;
  return bc;
}

// ---- Cast ----

class CastKernel final : public backends::Kernel {
 public:
  explicit CastKernel(std::string what) : what_(std::move(what)) {}
  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& x = ctx.inputs[0];
    TensorView const& y = ctx.outputs[0];
    int64_t n = y.count();
    if (x.count() != n)
      return invalidArgument(what_, ": input ", dimsToString(x.shape), " and output ", dimsToString(y.shape),
                             " differ in size");
    if (n <= 0) return Status::ok();
    if (x.dtype == y.dtype) {  // the reference copies bits (NaN payloads included)
      if (x.data == y.data) return Status::ok();
      KILN_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(y.data, x.data, static_cast<size_t>(n) * dataTypeSize(x.dtype),
                                                cudaMemcpyDeviceToDevice, streamOf(ctx)),
                                what_ + " copy");
      return Status::ok();
    }
    return launched(pw::launchCast(x.data, code(x.dtype), y.data, code(y.dtype), n, streamOf(ctx)), what_);
  }

 private:
  std::string what_;
};

backends::Tactic makeCast() {
  backends::Tactic t;
  t.name = "cast_cuda_pointwise";
  t.op = ir::OpType::kCast;
  t.source = TacticSource::kKILN;
  t.formatAware = true;
  t.supports = [](ir::Node const& node, Infos const& in, Infos const& out) {
    if (!backends::elementWiseLayoutOk(node, in, out)) return false;
    return in.size() == 1 && out.size() == 1 && isDeviceType(in[0].dtype) && isDeviceType(out[0].dtype);
  };
  t.create = [](ir::Node const& n) -> Result<std::unique_ptr<backends::Kernel>> {
    return std::unique_ptr<backends::Kernel>(new CastKernel(n.describe()));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeCast);

// ---- ElementWise ----

// The output type of `op` on inputs of type `t` where the device computes it (elementwise.cc's outputType
// restricted to device storage types), or nullopt.
std::optional<DataType> elementWiseOutput(int64_t op, DataType t) {
  if (!ir::isValidElementWiseOperation(op)) return std::nullopt;
  switch (static_cast<ElementWiseOperation>(op)) {
    case ElementWiseOperation::kSUM:
    case ElementWiseOperation::kPROD:
    case ElementWiseOperation::kMAX:
    case ElementWiseOperation::kMIN:
    case ElementWiseOperation::kSUB:
    case ElementWiseOperation::kDIV:
    case ElementWiseOperation::kPOW:
    case ElementWiseOperation::kFLOOR_DIV:
      return isArithmetic(t) ? std::optional<DataType>(t) : std::nullopt;
    case ElementWiseOperation::kAND:
    case ElementWiseOperation::kOR:
    case ElementWiseOperation::kXOR:
      return t == DataType::kBOOL ? std::optional<DataType>(t) : std::nullopt;
    case ElementWiseOperation::kEQUAL:
      return (isArithmetic(t) || t == DataType::kBOOL) ? std::optional<DataType>(DataType::kBOOL) : std::nullopt;
    case ElementWiseOperation::kGREATER:
    case ElementWiseOperation::kLESS:
      return isArithmetic(t) ? std::optional<DataType>(DataType::kBOOL) : std::nullopt;
    case ElementWiseOperation::kBITWISE_AND:
    case ElementWiseOperation::kBITWISE_OR:
    case ElementWiseOperation::kBITWISE_XOR:
      return isBitwise(t) ? std::optional<DataType>(t) : std::nullopt;
  }
  return std::nullopt;
}

class ElementWiseKernel final : public backends::Kernel {
 public:
  ElementWiseKernel(int32_t op, std::string what) : op_(op), what_(std::move(what)) {}
  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& a = ctx.inputs[0];
    TensorView const& b = ctx.inputs[1];
    TensorView const& y = ctx.outputs[0];
    std::optional<DataType> outType = elementWiseOutput(op_, a.dtype);
    if (a.dtype != b.dtype || !outType || *outType != y.dtype)
      return unsupported(what_, ": no CUDA elementwise for these types");
    Result<Dims> shape = broadcastShapes(a.shape, b.shape);
    if (!shape.isOk()) return shape.status().withContext(what_);
    if (!dimsEqual(*shape, y.shape))
      return invalidArgument(what_, ": output shape ", dimsToString(y.shape), " is not the broadcast shape ",
                             dimsToString(*shape));
    int64_t n = y.count();
    if (n <= 0) return Status::ok();
    KILN_ASSIGN_OR_RETURN(pw::Broadcast bc, makeBroadcast(y.shape, {a.shape, b.shape}, what_));
    return launched(pw::launchElementWise(a.data, b.data, y.data, code(a.dtype), op_, n, bc, streamOf(ctx)), what_);
  }

 private:
  int32_t op_;
  std::string what_;
};

backends::Tactic makeElementWise() {
  backends::Tactic t;
  t.name = "elementwise_cuda_broadcast";
  t.op = ir::OpType::kElementWise;
  t.source = TacticSource::kKILN;
  t.formatAware = true;
  t.supports = [](ir::Node const& node, Infos const& in, Infos const& out) {
    if (!backends::elementWiseLayoutOk(node, in, out)) return false;
    if (in.size() != 2 || out.size() != 1 || in[0].dtype != in[1].dtype) return false;
    std::optional<DataType> o = elementWiseOutput(node.attrs.getInt("op", -1), in[0].dtype);
    return o && *o == out[0].dtype && out[0].shape.nbDims <= pw::kMaxRank;
  };
  t.create = [](ir::Node const& n) -> Result<std::unique_ptr<backends::Kernel>> {
    int64_t op = n.attrs.getInt("op", -1);
    if (!ir::isValidElementWiseOperation(op)) return invalidGraph(n.describe(), ": invalid elementwise operation ", op);
    return std::unique_ptr<backends::Kernel>(new ElementWiseKernel(static_cast<int32_t>(op), n.describe()));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeElementWise);

// ---- Unary ----

// unary.cc's outputType restricted to device storage types.
std::optional<DataType> unaryOutput(int64_t op, DataType t) {
  if (!ir::isValidUnaryOperation(op)) return std::nullopt;
  bool isFloat = isCudaFloat(t);
  switch (static_cast<UnaryOperation>(op)) {
    case UnaryOperation::kNOT:
      return t == DataType::kBOOL ? std::optional<DataType>(t) : std::nullopt;
    case UnaryOperation::kBITWISE_NOT:
      return isBitwise(t) ? std::optional<DataType>(t) : std::nullopt;
    case UnaryOperation::kABS:
    case UnaryOperation::kNEG:
    case UnaryOperation::kSIGN:
      return (isFloat || isSignedInt(t)) ? std::optional<DataType>(t) : std::nullopt;
    case UnaryOperation::kISINF:
    case UnaryOperation::kISNAN:
      return isFloat ? std::optional<DataType>(DataType::kBOOL) : std::nullopt;
    case UnaryOperation::kEXP:
    case UnaryOperation::kLOG:
    case UnaryOperation::kSQRT:
    case UnaryOperation::kRECIP:
    case UnaryOperation::kSIN:
    case UnaryOperation::kCOS:
    case UnaryOperation::kTAN:
    case UnaryOperation::kSINH:
    case UnaryOperation::kCOSH:
    case UnaryOperation::kASIN:
    case UnaryOperation::kACOS:
    case UnaryOperation::kATAN:
    case UnaryOperation::kASINH:
    case UnaryOperation::kACOSH:
    case UnaryOperation::kATANH:
    case UnaryOperation::kCEIL:
    case UnaryOperation::kFLOOR:
    case UnaryOperation::kERF:
    case UnaryOperation::kROUND:
      return isFloat ? std::optional<DataType>(t) : std::nullopt;
  }
  return std::nullopt;
}

class UnaryKernel final : public backends::Kernel {
 public:
  UnaryKernel(int32_t op, std::string what) : op_(op), what_(std::move(what)) {}
  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& x = ctx.inputs[0];
    TensorView const& y = ctx.outputs[0];
    std::optional<DataType> t = unaryOutput(op_, x.dtype);
    if (!t || *t != y.dtype) return unsupported(what_, ": no CUDA unary for these types");
    if (!dimsEqual(x.shape, y.shape))
      return invalidArgument(what_, ": output shape ", dimsToString(y.shape), " differs from input shape ",
                             dimsToString(x.shape));
    int64_t n = x.count();
    if (n <= 0) return Status::ok();
    return launched(pw::launchUnary(x.data, y.data, code(x.dtype), op_, n, streamOf(ctx)), what_);
  }

 private:
  int32_t op_;
  std::string what_;
};

backends::Tactic makeUnary() {
  backends::Tactic t;
  t.name = "unary_cuda_pointwise";
  t.op = ir::OpType::kUnary;
  t.source = TacticSource::kKILN;
  t.formatAware = true;
  t.supports = [](ir::Node const& node, Infos const& in, Infos const& out) {
    if (!backends::elementWiseLayoutOk(node, in, out)) return false;
    if (in.size() != 1 || out.size() != 1) return false;
    std::optional<DataType> o = unaryOutput(node.attrs.getInt("op", -1), in[0].dtype);
    return o && *o == out[0].dtype;
  };
  t.create = [](ir::Node const& n) -> Result<std::unique_ptr<backends::Kernel>> {
    int64_t op = n.attrs.getInt("op", -1);
    if (!ir::isValidUnaryOperation(op)) return invalidGraph(n.describe(), ": invalid unary operation ", op);
    return std::unique_ptr<backends::Kernel>(new UnaryKernel(static_cast<int32_t>(op), n.describe()));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeUnary);

// ---- Activation ----

bool isActivation(int64_t v) { return v >= 0 && v < EnumMax<ActivationType>(); }

class ActivationKernel final : public backends::Kernel {
 public:
  ActivationKernel(int32_t act, float alpha, float beta, std::string what)
      : act_(act), alpha_(alpha), beta_(beta), what_(std::move(what)) {}
  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& x = ctx.inputs[0];
    TensorView const& y = ctx.outputs[0];
    if (!dimsEqual(x.shape, y.shape) || x.dtype != y.dtype)
      return invalidArgument(what_, ": output ", dimsToString(y.shape), " differs from input ", dimsToString(x.shape));
    int64_t n = x.count();
    if (n <= 0) return Status::ok();
    return launched(pw::launchActivation(x.data, y.data, code(x.dtype), act_, alpha_, beta_, n, streamOf(ctx)), what_);
  }

 private:
  int32_t act_;
  float alpha_, beta_;
  std::string what_;
};

backends::Tactic makeActivation() {
  backends::Tactic t;
  t.name = "activation_cuda_pointwise";
  t.op = ir::OpType::kActivation;
  t.source = TacticSource::kKILN;
  t.formatAware = true;
  t.supports = [](ir::Node const& node, Infos const& in, Infos const& out) {
    if (!backends::elementWiseLayoutOk(node, in, out)) return false;
    return isActivation(node.attrs.getInt("type", -1)) && in.size() == 1 && out.size() == 1 &&
           isCudaFloat(in[0].dtype) && out[0].dtype == in[0].dtype;
  };
  t.create = [](ir::Node const& n) -> Result<std::unique_ptr<backends::Kernel>> {
    int64_t type = n.attrs.getInt("type", -1);
    if (!isActivation(type)) return invalidGraph(n.describe(), ": invalid activation type ", type);
    return std::unique_ptr<backends::Kernel>(
        new ActivationKernel(static_cast<int32_t>(type), static_cast<float>(n.attrs.getFloat("alpha", 0.0)),
                             static_cast<float>(n.attrs.getFloat("beta", 0.0)), n.describe()));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeActivation);

// ---- Select ----

class SelectKernel final : public backends::Kernel {
 public:
  explicit SelectKernel(std::string what) : what_(std::move(what)) {}
  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& c = ctx.inputs[0];
    TensorView const& a = ctx.inputs[1];
    TensorView const& b = ctx.inputs[2];
    TensorView const& y = ctx.outputs[0];
    if (c.dtype != DataType::kBOOL || a.dtype != y.dtype || b.dtype != y.dtype)
      return invalidArgument(what_, ": bad input types");
    KILN_ASSIGN_OR_RETURN(pw::Broadcast bc, makeBroadcast(y.shape, {c.shape, a.shape, b.shape}, what_));
    int64_t n = y.count();
    if (n <= 0) return Status::ok();
    return launched(pw::launchSelect(c.data, a.data, b.data, y.data, static_cast<int32_t>(dataTypeSize(y.dtype)), n, bc,
                                     streamOf(ctx)),
                    what_);
  }

 private:
  std::string what_;
};

backends::Tactic makeSelect() {
  backends::Tactic t;
  t.name = "select_cuda_broadcast";
  t.op = ir::OpType::kSelect;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const&, Infos const& in, Infos const& out) {
    return in.size() == 3 && out.size() == 1 && in[0].dtype == DataType::kBOOL && in[1].dtype == in[2].dtype &&
           out[0].dtype == in[1].dtype && isDeviceType(in[1].dtype) && out[0].shape.nbDims <= pw::kMaxRank;
  };
  t.create = [](ir::Node const& n) -> Result<std::unique_ptr<backends::Kernel>> {
    return std::unique_ptr<backends::Kernel>(new SelectKernel(n.describe()));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeSelect);

// ---- ParametricReLU ----

class ParametricReluKernel final : public backends::Kernel {
 public:
  explicit ParametricReluKernel(std::string what) : what_(std::move(what)) {}
  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& x = ctx.inputs[0];
    TensorView const& s = ctx.inputs[1];
    TensorView const& y = ctx.outputs[0];
    if (!dimsEqual(x.shape, y.shape) || x.dtype != y.dtype || s.dtype != x.dtype)
      return invalidArgument(what_, ": y must have x's shape and type, the slope x's type");
    KILN_ASSIGN_OR_RETURN(pw::Broadcast bc, makeBroadcast(y.shape, {x.shape, s.shape}, what_));
    int64_t n = y.count();
    if (n <= 0) return Status::ok();
    return launched(pw::launchParametricRelu(x.data, s.data, y.data, code(x.dtype), n, bc, streamOf(ctx)), what_);
  }

 private:
  std::string what_;
};

backends::Tactic makeParametricRelu() {
  backends::Tactic t;
  t.name = "parametric_relu_cuda_broadcast";
  t.op = ir::OpType::kParametricReLU;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const&, Infos const& in, Infos const& out) {
    return in.size() == 2 && out.size() == 1 && isCudaFloat(in[0].dtype) && in[1].dtype == in[0].dtype &&
           out[0].dtype == in[0].dtype && out[0].shape.nbDims <= pw::kMaxRank;
  };
  t.create = [](ir::Node const& n) -> Result<std::unique_ptr<backends::Kernel>> {
    return std::unique_ptr<backends::Kernel>(new ParametricReluKernel(n.describe()));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeParametricRelu);

// ---- Scale ----

class ScaleKernel final : public backends::Kernel {
 public:
  ScaleKernel(ScaleMode mode, bool hasAxis, int64_t axis, std::string what)
      : mode_(mode), hasAxis_(hasAxis), axis_(axis), what_(std::move(what)) {}
  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& x = ctx.inputs[0];
    TensorView const& y = ctx.outputs[0];
    if (!dimsEqual(x.shape, y.shape) || x.dtype != y.dtype) return invalidArgument(what_, ": y must have x's shape");
    int32_t rank = x.shape.nbDims;
    // Coefficient index of element i is (i / inner) % count, as in scale.cc.
    int64_t count = 1, inner = 1;
    if (mode_ != ScaleMode::kUNIFORM) {
      int64_t a = hasAxis_ ? axis_ : (rank >= 2 ? 1 : 0);
      auto axis = normalizeAxis(a, rank);
      if (!axis.isOk())
        return invalidArgument(what_, ": channel_axis ", a, " is out of range for ", dimsToString(x.shape));
      count = x.shape.d[*axis];
      for (int32_t d = *axis + 1; d < rank; ++d) {
        if (mode_ == ScaleMode::kELEMENTWISE)
          count *= x.shape.d[d];
        else
          inner *= x.shape.d[d];
      }
    }
    pw::Coef coef[3];  // shift, scale, power
    for (size_t i = 1; i < 4 && i < ctx.inputs.size(); ++i) {
      TensorView const& c = ctx.inputs[i];
      if (!present(c)) continue;
      if (c.count() != count)
        return invalidArgument(what_, ": coefficient input ", i, " holds ", c.count(), " values, needs ", count);
      coef[i - 1] = {c.data, code(c.dtype)};
    }
    int64_t n = x.count();
    if (n <= 0) return Status::ok();
    return launched(
        pw::launchScale(x.data, y.data, code(x.dtype), coef[0], coef[1], coef[2], n, inner, count, streamOf(ctx)),
        what_);
  }

 private:
  ScaleMode mode_;
  bool hasAxis_;
  int64_t axis_;
  std::string what_;
};

backends::Tactic makeScale() {
  backends::Tactic t;
  t.name = "scale_cuda_pointwise";
  t.op = ir::OpType::kScale;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& node, Infos const& in, Infos const& out) {
    int64_t mode = node.attrs.getInt("mode", 0);
    if (mode < 0 || mode >= EnumMax<ScaleMode>() || in.empty() || in.size() > 4 || out.size() != 1) return false;
    for (size_t i = 1; i < in.size(); ++i)
      if (present(in[i]) && !isCudaFloat(in[i].dtype)) return false;
    return present(in[0]) && isCudaFloat(in[0].dtype) && out[0].dtype == in[0].dtype;
  };
  t.create = [](ir::Node const& n) -> Result<std::unique_ptr<backends::Kernel>> {
    int64_t mode = n.attrs.getInt("mode", 0);
    if (mode < 0 || mode >= EnumMax<ScaleMode>()) return invalidGraph(n.describe(), ": unknown scale mode ", mode);
    return std::unique_ptr<backends::Kernel>(new ScaleKernel(static_cast<ScaleMode>(mode), n.attrs.has("channel_axis"),
                                                             n.attrs.getInt("channel_axis", 1), n.describe()));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeScale);

// ---- Quantize / Dequantize (per tensor, per axis and per block) ----

class QuantKernel final : public backends::Kernel {
 public:
  QuantKernel(bool quantize, int64_t axis, bool hasBlock, std::vector<int64_t> block, std::string what)
      : quantize_(quantize), axis_(axis), hasBlock_(hasBlock), block_(std::move(block)), what_(std::move(what)) {}
  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& x = ctx.inputs[0];
    TensorView const& s = ctx.inputs[1];
    TensorView const& y = ctx.outputs[0];
    if (!dimsEqual(x.shape, y.shape))
      return invalidArgument(what_, ": output ", dimsToString(y.shape), " differs from input ", dimsToString(x.shape));
    Result<ir::QuantLayout> l = ir::resolveQuantLayout(x.shape, s.shape, axis_, hasBlock_, block_);
    if (!l.isOk()) return l.status().withContext(what_);
    bool hasZp = ctx.inputs.size() > 2 && present(ctx.inputs[2]);
    if (hasZp && !dimsEqual(ctx.inputs[2].shape, s.shape))
      return invalidArgument(what_, ": zero point must have the scale's shape");
    int64_t n = x.count();
    if (n <= 0) return Status::ok();
    pw::QuantIndex qi;
    switch (l->kind) {
      case ir::QuantLayout::Kind::kTENSOR:
        break;
      case ir::QuantLayout::Kind::kAXIS:
        qi.count = x.shape.d[l->axis];
        for (int32_t d = l->axis + 1; d < x.shape.nbDims; ++d) qi.inner *= x.shape.d[d];
        break;
      case ir::QuantLayout::Kind::kBLOCK: {
        // Scale index of element (i_0, ..., i_r-1) is sum_d (i_d / block_d) * stride_d, strides row-major over the
        // scale's extents (quantize_util.cc's scaleIndexMap).
        if (x.shape.nbDims > pw::kMaxRank || s.shape.nbDims != x.shape.nbDims)
          return invalidArgument(what_, ": block scale ", dimsToString(s.shape), " does not fit ",
                                 dimsToString(x.shape));
        qi.blocked = true;
        qi.rank = x.shape.nbDims;
        int64_t stride = 1;
        for (int32_t d = qi.rank - 1; d >= 0; --d) {
          qi.dims[d] = x.shape.d[d];
          qi.block[d] = l->block[static_cast<size_t>(d)];
          qi.scaleStrides[d] = stride;
          stride *= s.shape.d[d];
        }
        break;
      }
    }
    void const* zp = hasZp ? ctx.inputs[2].data : nullptr;
    int32_t zpType = hasZp ? code(ctx.inputs[2].dtype) : 0;
    bool ok = quantize_ ? pw::launchQuantize(x.data, code(x.dtype), s.data, code(s.dtype), zp, zpType, y.data,
                                             code(y.dtype), n, qi, streamOf(ctx))
                        : pw::launchDequantize(x.data, code(x.dtype), s.data, code(s.dtype), zp, zpType, y.data,
                                               code(y.dtype), n, qi, streamOf(ctx));
    return launched(ok, what_);
  }

 private:
  bool quantize_;
  int64_t axis_;
  bool hasBlock_;
  std::vector<int64_t> block_;
  std::string what_;
};

bool quantSupports(bool quantize, ir::Node const& node, Infos const& in, Infos const& out) {
  if (in.size() < 2 || in.size() > 3 || out.size() != 1) return false;
  if (!present(in[0]) || !present(in[1]) || !isCudaFloat(in[1].dtype)) return false;
  if (in.size() > 2 && present(in[2]) && !isDeviceType(in[2].dtype)) return false;
  if (quantize)
    return isCudaFloat(in[0].dtype) && typeIn(out[0].dtype, {DataType::kINT8, DataType::kUINT8, DataType::kFP8});
  return typeIn(in[0].dtype, {DataType::kINT8, DataType::kUINT8, DataType::kFP8, DataType::kINT32}) &&
         isCudaFloat(out[0].dtype);
}

backends::Tactic makeQuantTactic(bool quantize) {
  backends::Tactic t;
  t.name = quantize ? "quantize_cuda_pointwise" : "dequantize_cuda_pointwise";
  t.op = quantize ? ir::OpType::kQuantize : ir::OpType::kDequantize;
  t.source = TacticSource::kKILN;
  t.supports = [quantize](ir::Node const& node, Infos const& in, Infos const& out) {
    return quantSupports(quantize, node, in, out);
  };
  t.create = [quantize](ir::Node const& n) -> Result<std::unique_ptr<backends::Kernel>> {
    return std::unique_ptr<backends::Kernel>(new QuantKernel(
        quantize, n.attrs.getInt("axis", 0), n.attrs.has("block_shape"), n.attrs.getInts("block_shape"), n.describe()));
  };
  return t;
}
backends::Tactic makeQuantize() { return makeQuantTactic(true); }
backends::Tactic makeDequantize() { return makeQuantTactic(false); }
KILN_REGISTER_CUDA_TACTIC(makeQuantize);
KILN_REGISTER_CUDA_TACTIC(makeDequantize);

}  // namespace
}  // namespace kiln::cuda
