// Reduce on the GPU (sum, product, max, min, average over any set of axes, keep_dims or not): float types in fp32
// math, int32/int64 exact, bool max/min. The axes come from the attribute or from a constant axes input; axes
// known only on the device at run time are left to the host fallback. Channels-last (kHWC) 4-D input is taken when
// both spatial axes are reduced (GlobalAveragePool after the last convolution): the output then has the same bytes
// in either layout, and one thread per (n, c) output reads the channels of a pixel side by side (coalesced).
#include <optional>
#include <vector>

#include "backends/cuda/cuda_util.h"
#include "backends/cuda/reduce_kernels.h"
#include "kiln/kiln.h"

namespace kiln::cuda {
namespace {

// The axes of the node: its constant axes input when it has one, else the attribute; nullopt when the axes input
// is not a constant.
std::optional<std::vector<int64_t>> reduceAxes(ir::Node const& node) {
  if (node.inputs.size() > 1 && node.inputs[1]) {
    HostTensor const* a = constantInput(node, 1);
    if (!a) return std::nullopt;
    return a->toInt64Vector();
  }
  return node.attrs.getInts("axes");
}

// True when `axes` (of a rank-`rank` tensor) include both spatial axes of a 4-D NCHW tensor.
bool reducesBothSpatialAxes(std::vector<int64_t> const& axes, int32_t rank) {
  if (rank != 4) return false;
  bool h = false, w = false;
  for (int64_t a : axes) {
    int64_t n = a < 0 ? a + rank : a;
    h = h || n == 2;
    w = w || n == 3;
  }
  return h && w;
}

class ReduceKernel final : public backends::Kernel {
 public:
  ReduceKernel(std::string who, int32_t op, std::vector<int64_t> axes, bool hwc)
      : who_(std::move(who)), op_(op), axes_(std::move(axes)), hwc_(hwc) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& y = ctx.outputs[0];
    int32_t rank = x.shape.nbDims;
    bool reduced[Dims::MAX_DIMS] = {};
    for (int64_t a : axes_) {
      KILN_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(a, rank));
      if (reduced[axis]) return invalidArgument(who_, ": axis ", a, " is listed twice");
      reduced[axis] = true;
    }
    std::vector<int64_t> strides = rowMajorStrides(x.shape);
    if (hwc_) {
      // Logical [N, C, H, W] stored as [N, H, W, C]; the output (both spatial axes reduced) is the same either way.
      if (rank != 4 || !reduced[2] || !reduced[3])
        return invalidArgument(who_, ": channels-last input needs a 4-D reduction over both spatial axes");
      int64_t const c = x.shape.d[1], h = x.shape.d[2], w = x.shape.d[3];
      strides = {h * w * c, 1, w * c, c};
    }
    int64_t const* sp[1] = {strides.data()};
    StridedSpace outer = makeSpace(rank, x.shape.d, reduced, false, 1, sp);
    StridedSpace inner = makeSpace(rank, x.shape.d, reduced, true, 1, sp);
    if (outer.count != y.count())
      return invalidArgument(who_, ": y ", dimsToString(y.shape), " does not match the reduction of ",
                             dimsToString(x.shape));
    if (outer.count == 0) return Status::ok();
    if (!launchReduce(static_cast<int32_t>(x.dtype), x.data, y.data, outer, inner, op_, streamOf(ctx)))
      return unsupported(who_, ": no GPU reduction for ", dataTypeName(x.dtype));
    return launchStatus(who_);
  }

 private:
  std::string who_;
  int32_t op_;
  std::vector<int64_t> axes_;
  bool hwc_;
};

backends::Tactic makeReduce() {
  backends::Tactic t;
  t.name = "reduce_cuda_rows";
  t.op = ir::OpType::kReduce;
  t.source = TacticSource::kKILN;
  t.formatAware = true;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    if (in.empty() || in.size() > 2 || out.size() != 1 || in[0].dtype != out[0].dtype) return false;
    if (in[0].shape.nbDims > Dims::MAX_DIMS) return false;
    auto axes = reduceAxes(node);
    if (!axes) return false;
    TensorFormat f = backends::nodeFormat(node);
    if (f != TensorFormat::kLINEAR && (f != TensorFormat::kHWC || !reducesBothSpatialAxes(*axes, in[0].shape.nbDims)))
      return false;
    int64_t op = node.attrs.getInt("op", 0);
    if (op < 0 || op >= EnumMax<ReduceOperation>()) return false;
    DataType dt = in[0].dtype;
    if (dt == DataType::kBOOL)
      return op == static_cast<int64_t>(ReduceOperation::kMAX) || op == static_cast<int64_t>(ReduceOperation::kMIN);
    return isCudaFloat(dt) || dt == DataType::kINT32 || dt == DataType::kINT64;
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    auto axes = reduceAxes(node);
    if (!axes) return unsupported(node.describe(), ": the axes input is not a constant");
    int64_t op = node.attrs.getInt("op", 0);
    if (op < 0 || op >= EnumMax<ReduceOperation>()) return invalidGraph(node.describe(), ": unknown reduce op ", op);
    bool hwc = backends::nodeFormat(node) == TensorFormat::kHWC;
    return std::unique_ptr<backends::Kernel>(new ReduceKernel(node.describe(), static_cast<int32_t>(op), *axes, hwc));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeReduce);

}  // namespace
}  // namespace kiln::cuda
