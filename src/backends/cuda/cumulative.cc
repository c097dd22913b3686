// Cumulative (running sum) on the GPU along a constant axis, inclusive or exclusive, forwards or backwards: float
// types (fp64 running sums, as the reference), int32, int64. An axis known only on the device at run time is
// left to the host fallback.
#include <optional>

#include "backends/cuda/cuda_util.h"
#include "backends/cuda/cumulative_kernels.h"
#include "kiln/kiln.h"

namespace kiln::cuda {
namespace {

std::optional<int64_t> constantAxis(ir::Node const& node) {
  if (node.inputs.size() != 2 || !node.inputs[1]) return std::nullopt;
  HostTensor const* a = constantInput(node, 1);
  if (!a || a->count() != 1) return std::nullopt;
  return a->toInt64Vector()[0];
}

class CumulativeKernel final : public backends::Kernel {
 public:
  CumulativeKernel(std::string who, int64_t axis, bool exclusive, bool reverse)
      : who_(std::move(who)), axis_(axis), exclusive_(exclusive), reverse_(reverse) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& y = ctx.outputs[0];
    int32_t rank = x.shape.nbDims;
    if (rank < 1 || axis_ < -rank || axis_ >= rank)
      return invalidArgument(who_, ": axis ", axis_, " is out of range for rank ", rank);
    int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (y.count() != x.count() || y.dtype != x.dtype) return invalidArgument(who_, ": output does not fit the input");
    int64_t n = x.shape.d[axis], outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.shape.d[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape.d[d];
    if (outer * n * inner == 0) return Status::ok();
    if (!launchCumulativeSum(static_cast<int32_t>(x.dtype), x.data, y.data, outer, n, inner, exclusive_, reverse_,
                             streamOf(ctx)))
      return unsupported(who_, ": no GPU cumulative sum for ", dataTypeName(x.dtype));
    return launchStatus(who_);
  }

 private:
  std::string who_;
  int64_t axis_;
  bool exclusive_, reverse_;
};

backends::Tactic makeCumulative() {
  backends::Tactic t;
  t.name = "cumulative_cuda_scan";
  t.op = ir::OpType::kCumulative;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    if (in.size() != 2 || out.size() != 1 || !constantAxis(node)) return false;
    if (node.attrs.getInt("op", 0) != static_cast<int64_t>(CumulativeOperation::kSUM)) return false;
    DataType dt = in[0].dtype;
    return (isCudaFloat(dt) || dt == DataType::kINT32 || dt == DataType::kINT64) && out[0].dtype == dt;
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    auto axis = constantAxis(node);
    if (!axis) return unsupported(node.describe(), ": the axis input is not a constant");
    if (node.attrs.getInt("op", 0) != static_cast<int64_t>(CumulativeOperation::kSUM))
      return unsupported(node.describe(), ": cumulative operation ", node.attrs.getInt("op", 0), " is not supported");
    return std::unique_ptr<backends::Kernel>(new CumulativeKernel(
        node.describe(), *axis, node.attrs.getInt("exclusive", 0) != 0, node.attrs.getInt("reverse", 0) != 0));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeCumulative);

}  // namespace
}  // namespace kiln::cuda
