// Reference kernel of Select: out = condition ? then : else with numpy broadcasting; elements copied exactly.
#include <cstring>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

Status runSelect(LaunchContext const& ctx, std::string const& what) {
  TensorView const& c = ctx.inputs[0];
  TensorView const& a = ctx.inputs[1];
  TensorView const& b = ctx.inputs[2];
  TensorView const& y = ctx.outputs[0];
  if (c.dtype != DataType::kBOOL || a.dtype != y.dtype || b.dtype != y.dtype)
    return invalidArgument(what, ": bad input types");
  for (TensorView const* v : {&c, &a, &b})
  {
    if (v->shape.nbDims > y.shape.nbDims) return invalidArgument(what, ": an input has a higher rank than the output");
    for (int32_t i = 0; i < v->shape.nbDims; ++i) {
      int64_t d = v->shape.d[i], o = y.shape.d[i + y.shape.nbDims - v->shape.nbDims];
      if (d != 1 && d != o)
        return invalidArgument(what, ": input ", dimsToString(v->shape), " does not broadcast to ",
                               dimsToString(y.shape));
    }
  }
  size_t es = dataTypeSize(y.dtype);
  std::array<std::vector<int64_t>, 3> strides{broadcastStrides(c.shape, y.shape), broadcastStrides(a.shape, y.shape),
                                              broadcastStrides(b.shape, y.shape)};
  auto const* cp = static_cast<bool const*>(c.data);
  auto const* ap = static_cast<unsigned char const*>(a.data);
  auto const* bp = static_cast<unsigned char const*>(b.data);
  auto* yp = static_cast<unsigned char*>(y.data);
  forEachIndex<3>(y.shape, strides, [&](int64_t lin, std::array<int64_t, 3> const& off) {
    unsigned char const* src = cp[off[0]] ? ap + off[1] * es : bp + off[2] * es;
    std::memcpy(yp + lin * es, src, es);
  });
  return Status::ok();
}

Tactic selectTactic() {
  return makeTactic(
      "select_reference", ir::OpType::kSelect,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        std::string what = node.describe();
        return makeKernel([what](LaunchContext const& ctx) { return runSelect(ctx, what); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const&) {
        return in.size() == 3 && in[0].dtype == DataType::kBOOL && in[1].dtype == in[2].dtype &&
               isSupportedType(in[1].dtype) && dataTypeSize(in[1].dtype) > 0;
      });
}

KILN_REGISTER_TACTIC(selectTactic);

}  // namespace
}  // namespace kiln::backends::reference
