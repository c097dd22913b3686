// Reference kernel of TopK: per line along the axis, a stable sort of (value, index) pairs, so that ties keep
// the lower index first; values are copied exactly, NaN counts as the largest value.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

// Orders two values: -1, 0 or 1 (NaN above everything, equal to another NaN).
template <typename T>
int compareValues(T a, T b) {
  if constexpr (kIsFloatStorage<T>) {
    double x = toDouble(a), y = toDouble(b);
    bool nx = std::isnan(x), ny = std::isnan(y);
    if (nx || ny) return nx == ny ? 0 : (nx ? 1 : -1);
    return x < y ? -1 : (x > y ? 1 : 0);
  } else {
    return a < b ? -1 : (a > b ? 1 : 0);
  }
}

Status runTopK(LaunchContext const& ctx, bool largest, int64_t axis, int64_t kAttr, std::string const& what) {
  TensorView const& x = ctx.inputs[0];
  TensorView vals = ctx.outputs[0];
  TensorView idx = ctx.outputs[1];
  int64_t k = kAttr;
  if (ctx.inputs.size() > 1 && ctx.inputs[1].data) k = loadAsInt(ctx.inputs[1], 0);
  if (axis < 0 || axis >= x.shape.nbDims) return invalidArgument(what, ": axis ", axis, " is out of range");
  int64_t n = x.shape.d[axis];
  if (k < 0 || k > n) return invalidArgument(what, ": k = ", k, " is out of range for an axis of ", n);
  if (!dimsKnown(vals.shape) || !dimsKnown(idx.shape)) {
    // k came from a tensor known only at run time: the outputs are allocated now.
    if (!ctx.allocateOutput) return invalidArgument(what, ": output shapes are unknown and cannot be allocated here");
    Dims s = x.shape;
    s.d[axis] = k;
    KILN_ASSIGN_OR_RETURN(vals.data, ctx.allocateOutput(0, s));
    KILN_ASSIGN_OR_RETURN(idx.data, ctx.allocateOutput(1, s));
    vals.shape = s;
    idx.shape = s;
  }
  if (vals.shape.nbDims != x.shape.nbDims || vals.shape.d[axis] != k || idx.shape.d[axis] != k)
    return invalidArgument(what, ": outputs ", dimsToString(vals.shape), " do not fit k = ", k);
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= x.shape.d[d];
  for (int32_t d = static_cast<int32_t>(axis) + 1; d < x.shape.nbDims; ++d) inner *= x.shape.d[d];
  return dispatchType(x.dtype, [&](auto tag) -> Status {
    using T = decltype(tag);
    T const* in = static_cast<T const*>(x.data);
    T* out = static_cast<T*>(vals.data);
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        int64_t base = o * n * inner + i;
        for (int64_t j = 0; j < n; ++j) order[j] = j;
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          int c = compareValues(in[base + a * inner], in[base + b * inner]);
          return largest ? c > 0 : c < 0;
        });
        for (int64_t j = 0; j < k; ++j) {
          int64_t dst = o * k * inner + j * inner + i;
          out[dst] = in[base + order[j] * inner];
          storeFromInt(idx, dst, order[j]);
        }
      }
    }
    return Status::ok();
  });
}

Tactic topKTactic() {
  return makeTactic(
      "topk_reference", ir::OpType::kTopK,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        bool largest = node.attrs.getInt("op", 0) == static_cast<int64_t>(TopKOperation::kMAX);
        int64_t axis = node.attrs.getInt("axis", 0);
        int64_t k = node.attrs.getInt("k", 1);
        std::string what = node.describe();
        return makeKernel([=](LaunchContext const& ctx) { return runTopK(ctx, largest, axis, k, what); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return !in.empty() && in[0].dtype != DataType::kBOOL && isSupportedType(in[0].dtype) && out.size() == 2 &&
               typeIn(out[1].dtype, {DataType::kINT32, DataType::kINT64});
      });
}

KILN_REGISTER_TACTIC(topKTactic);

}  // namespace
}  // namespace kiln::backends::reference
