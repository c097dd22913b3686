// Reference kernel of OneHot: out[..., j, ...] = values[1] (on) where j == indices[...] (negative indices wrap
// once by depth), values[0] (off) elsewhere; values copied exactly.
#include <cmath>
#include <cstring>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

// An index or depth element as an integer (floats truncate toward zero, as ONNX casts them).
int64_t loadIndex(TensorView const& v, int64_t i) {
  if (isFloatType(v.dtype)) return static_cast<int64_t>(std::trunc(loadAsDouble(v, i)));
  return loadAsInt(v, i);
}

Status runOneHot(LaunchContext const& ctx, int64_t axisAttr, std::string const& what) {
  TensorView const& idx = ctx.inputs[0];
  TensorView const& values = ctx.inputs[1];
  TensorView const& depthT = ctx.inputs[2];
  TensorView const& y = ctx.outputs[0];
  if (values.count() != 2 || values.dtype != y.dtype) return invalidArgument(what, ": values must be [2] (off, on)");
  if (depthT.count() != 1) return invalidArgument(what, ": depth must have one element");
  int64_t depth = loadIndex(depthT, 0);
  if (depth < 1) return invalidArgument(what, ": depth must be >= 1, not ", depth);
  int32_t rank = idx.shape.nbDims;
  int64_t axis = axisAttr < 0 ? axisAttr + rank + 1 : axisAttr;
  if (axis < 0 || axis > rank) return invalidArgument(what, ": axis ", axisAttr, " is out of range");
  if (y.shape.nbDims != rank + 1 || y.shape.d[axis] != depth || y.count() != idx.count() * depth)
    return invalidArgument(what, ": output ", dimsToString(y.shape), " does not fit depth ", depth);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= idx.shape.d[d];
  for (int64_t d = axis; d < rank; ++d) inner *= idx.shape.d[d];
  size_t es = dataTypeSize(y.dtype);
  auto const* off = static_cast<unsigned char const*>(values.data);
  auto const* on = off + es;
  auto* out = static_cast<unsigned char*>(y.data);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t k = loadIndex(idx, o * inner + i);
      if (k < 0) k += depth;
      for (int64_t j = 0; j < depth; ++j)
        std::memcpy(out + ((o * depth + j) * inner + i) * es, j == k ? on : off, es);
    }
  }
  return Status::ok();
}

Tactic oneHotTactic() {
  return makeTactic(
      "onehot_reference", ir::OpType::kOneHot,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        int64_t axis = node.attrs.getInt("axis", -1);
        std::string what = node.describe();
        return makeKernel([=](LaunchContext const& ctx) { return runOneHot(ctx, axis, what); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const&) {
        return in.size() == 3 && in[0].dtype != DataType::kBOOL && isSupportedType(in[0].dtype) &&
               isSupportedType(in[1].dtype) && dataTypeSize(in[1].dtype) > 0 && in[2].dtype != DataType::kBOOL &&
               isSupportedType(in[2].dtype);
      });
}

KILN_REGISTER_TACTIC(oneHotTactic);

}  // namespace
}  // namespace kiln::backends::reference
