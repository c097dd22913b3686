// Reference kernels of Constant, Identity, Cast and Shape.
#include <cstring>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

using ir::OpType;

// Converts every element of `in` into `out`'s type (same count): exact for ints, RNE for floats.
Status convert(TensorView const& in, TensorView const& out) {
  int64_t n = out.count();
  if (in.count() != n)
    return invalidArgument("input ", dimsToString(in.shape), " and output ", dimsToString(out.shape),
                           " differ in size");
  if (in.dtype == out.dtype) {
    if (n > 0 && in.data != out.data)
      std::memcpy(out.data, in.data, static_cast<size_t>(n) * dataTypeSize(in.dtype));
    return Status::ok();
  }
  bool intToInt = !isFloatType(in.dtype) && !isFloatType(out.dtype);
  for (int64_t i = 0; i < n; ++i) {
    if (intToInt)
      storeFromInt(out, i, loadAsInt(in, i));
    else
      storeFromDouble(out, i, loadAsDouble(in, i));
  }
  return Status::ok();
}

Tactic constantTactic() {
  return makeTactic("constant_reference", OpType::kConstant,
                    [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
                      if (!node.constant)
                        return invalidGraph(node.describe(), " has no data");
                      HostTensor data = *node.constant;
                      std::string what = node.describe();
                      return makeKernel([data, what](LaunchContext const& ctx) -> Status {
                        TensorView const& y = ctx.outputs[0];
                        if (y.dtype != data.dtype() || y.count() != data.count())
                          return invalidArgument(what, ": output ", dimsToString(y.shape),
                                                 " does not fit the constant ", dimsToString(data.shape()));
                        if (data.bytes() && ctx.outputs[0].data != data.data())
                          std::memcpy(ctx.outputs[0].data, data.data(), data.bytes());
                        return Status::ok();
                      });
                    });
}

Tactic identityTactic() {
  return makeTactic("identity_reference", OpType::kIdentity, [](ir::Node const&) -> Result<std::unique_ptr<Kernel>> {
    return makeKernel([](LaunchContext const& ctx) { return convert(ctx.inputs[0], ctx.outputs[0]); });
  });
}

Tactic castTactic() {
  return makeTactic("cast_reference", OpType::kCast, [](ir::Node const&) -> Result<std::unique_ptr<Kernel>> {
    return makeKernel([](LaunchContext const& ctx) { return convert(ctx.inputs[0], ctx.outputs[0]); });
  });
}

Tactic shapeTactic() {
  return makeTactic("shape_reference", OpType::kShape, [](ir::Node const&) -> Result<std::unique_ptr<Kernel>> {
    return makeKernel([](LaunchContext const& ctx) -> Status {
      Dims const& s = ctx.inputs[0].shape;
      if (s.nbDims < 0 || ctx.outputs[0].count() != s.nbDims)
        return invalidArgument("shape of a rank-", s.nbDims, " tensor cannot fill output ",
                               dimsToString(ctx.outputs[0].shape));
      for (int32_t i = 0; i < s.nbDims; ++i)
        storeFromInt(ctx.outputs[0], i, s.d[i]);
      return Status::ok();
    });
  });
}

KILN_REGISTER_TACTIC(constantTactic);
KILN_REGISTER_TACTIC(identityTactic);
KILN_REGISTER_TACTIC(castTactic);
KILN_REGISTER_TACTIC(shapeTactic);

}  // namespace
}  // namespace kiln::backends::reference
