// Reference kernel of Assertion: fails with the layer's message when any element of the condition is false.
#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

Tactic assertionTactic() {
  return makeTactic(
      "assertion_reference", ir::OpType::kAssertion,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        std::string message = node.attrs.getString("message");
        std::string what = node.describe();
        return makeKernel([=](LaunchContext const& ctx) -> Status {
          TensorView const& c = ctx.inputs[0];
          if (c.dtype != DataType::kBOOL) return invalidArgument(what, ": condition must be bool");
          auto const* p = static_cast<bool const*>(c.data);
          for (int64_t i = 0; i < c.count(); ++i)
            if (!p[i]) return invalidArgument(what, ": assertion failed: ", message);
          return Status::ok();
        });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const&) {
        return in.size() == 1 && in[0].dtype == DataType::kBOOL;
      });
}

KILN_REGISTER_TACTIC(assertionTactic);

}  // namespace
}  // namespace kiln::backends::reference
