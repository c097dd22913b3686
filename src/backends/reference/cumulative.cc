// Reference kernel of Cumulative (kSUM): running sums along one axis, inclusive or exclusive, forwards or
// backwards. Floats accumulate in double (rounded once per stored element), integers exactly with wrap-around.
#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

Status runCumulative(LaunchContext const& ctx, bool exclusive, bool reverse, std::string const& what) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& y = ctx.outputs[0];
  int32_t rank = x.shape.nbDims;
  if (!ctx.inputs[1].data || ctx.inputs[1].count() != 1) return invalidArgument(what, ": axis is missing");
  int64_t axis = loadAsInt(ctx.inputs[1], 0);
  if (rank < 1 || axis < -rank || axis >= rank)
    return invalidArgument(what, ": axis ", axis, " is out of range for rank ", rank);
  if (axis < 0) axis += rank;
  if (y.count() != x.count() || y.dtype != x.dtype) return invalidArgument(what, ": output does not fit the input");
  int64_t n = x.shape.d[axis], outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape.d[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape.d[d];
  bool isFloat = isFloatType(x.dtype);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double fsum = 0;
      uint64_t isum = 0;  // unsigned: wraps without undefined behaviour
      for (int64_t s = 0; s < n; ++s) {
        int64_t j = reverse ? n - 1 - s : s;
        int64_t at = (o * n + j) * inner + i;
        if (isFloat) {
          double v = loadAsDouble(x, at);
          if (!exclusive) fsum += v;
          storeFromDouble(y, at, fsum);
          if (exclusive) fsum += v;
        } else {
          auto v = static_cast<uint64_t>(loadAsInt(x, at));
          if (!exclusive) isum += v;
          storeFromInt(y, at, static_cast<int64_t>(isum));
          if (exclusive) isum += v;
        }
      }
    }
  }
  return Status::ok();
}

Tactic cumulativeTactic() {
  return makeTactic(
      "cumulative_reference", ir::OpType::kCumulative,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        if (node.attrs.getInt("op", 0) != static_cast<int64_t>(CumulativeOperation::kSUM))
          return unsupported(node.describe(), ": cumulative operation ", node.attrs.getInt("op", 0),
                             " is not supported yet");
        bool exclusive = node.attrs.getInt("exclusive", 0) != 0;
        bool reverse = node.attrs.getInt("reverse", 0) != 0;
        std::string what = node.describe();
        return makeKernel([=](LaunchContext const& ctx) { return runCumulative(ctx, exclusive, reverse, what); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const&) {
        return in.size() == 2 && in[0].dtype != DataType::kBOOL && isSupportedType(in[0].dtype) &&
               isIntegerType(in[1].dtype);
      });
}

KILN_REGISTER_TACTIC(cumulativeTactic);

}  // namespace
}  // namespace kiln::backends::reference
