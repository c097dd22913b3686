// Reference kernels of Squeeze and Unsqueeze: the elements are unchanged (row-major order is kept), so the
// kernels copy the bytes once the output holds as many elements as the input. Any storable data type.
#include <cstring>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

Tactic reshapeLikeTactic(char const* name, ir::OpType op) {
  return makeTactic(
      name, op,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        std::string what = node.describe();
        return makeKernel([what](LaunchContext const& ctx) -> Status {
          TensorView const& x = ctx.inputs[0];
          TensorView const& y = ctx.outputs[0];
          if (x.dtype != y.dtype || x.count() != y.count())
            return invalidArgument(what, ": output ", dimsToString(y.shape), " does not hold the elements of ",
                                   dimsToString(x.shape));
          size_t bytes = static_cast<size_t>(x.count()) * dataTypeSize(x.dtype);
          if (bytes > 0 && x.data != y.data) std::memmove(y.data, x.data, bytes);
          return Status::ok();
        });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return in.size() == 2 && out.size() == 1 && in[0].dtype == out[0].dtype && dataTypeSize(in[0].dtype) > 0 &&
               typeIn(in[1].dtype, {DataType::kINT32, DataType::kINT64});
      });
}

Tactic squeezeTactic() { return reshapeLikeTactic("squeeze_reference", ir::OpType::kSqueeze); }
Tactic unsqueezeTactic() { return reshapeLikeTactic("unsqueeze_reference", ir::OpType::kUnsqueeze); }

KILN_REGISTER_TACTIC(squeezeTactic);
KILN_REGISTER_TACTIC(unsqueezeTactic);

}  // namespace
}  // namespace kiln::backends::reference
