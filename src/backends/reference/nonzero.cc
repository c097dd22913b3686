// Reference kernel of NonZero: the coordinates of the non-zero elements in row-major order, as [rank, count];
// count is known only after the scan, so the output is allocated through LaunchContext::allocateOutput.
#include <cstring>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

// Whether element i is non-zero (NaN is non-zero, -0.0 is zero).
bool isNonZero(TensorView const& v, int64_t i) {
  bool r = false;
  (void)dispatchType(v.dtype, [&](auto tag) {
    using S = decltype(tag);
    S const x = static_cast<S const*>(v.data)[i];
    if constexpr (kIsFloatStorage<S>) r = toDouble(x) != 0.0;
    else r = x != S{};
    return Status::ok();
  });
  return r;
}

Status runNonZero(LaunchContext const& ctx, std::string const& what) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& y = ctx.outputs[0];
  int32_t rank = x.shape.nbDims;
  int64_t n = x.count();
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < n; ++i)
    if (isNonZero(x, i)) hits.push_back(i);
  int64_t count = static_cast<int64_t>(hits.size());
  Dims shape = makeDims({rank, count});
  TensorView out = y;
  out.shape = shape;
  if (dimsKnown(y.shape) && y.shape.nbDims == 2 && y.shape.d[0] == rank && y.shape.d[1] == count) {
    // Already allocated (host evaluation with a pinned shape).
  } else if (ctx.allocateOutput) {
    KILN_ASSIGN_OR_RETURN(out.data, ctx.allocateOutput(0, shape));
  } else {
    return invalidArgument(what, ": output ", dimsToString(y.shape), " does not fit ", dimsToString(shape),
                           " and cannot be allocated here");
  }
  for (int64_t j = 0; j < count; ++j) {
    int64_t rest = hits[j];
    for (int32_t d = rank - 1; d >= 0; --d) {
      storeFromInt(out, d * count + j, rest % x.shape.d[d]);
      rest /= x.shape.d[d];
    }
  }
  return Status::ok();
}

Tactic nonZeroTactic() {
  return makeTactic(
      "nonzero_reference", ir::OpType::kNonZero,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        std::string what = node.describe();
        return makeKernel([what](LaunchContext const& ctx) { return runNonZero(ctx, what); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return in.size() == 1 && isSupportedType(in[0].dtype) && out.size() == 1 &&
               typeIn(out[0].dtype, {DataType::kINT32, DataType::kINT64});
      });
}

KILN_REGISTER_TACTIC(nonZeroTactic);

}  // namespace
}  // namespace kiln::backends::reference
