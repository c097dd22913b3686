// Reference kernel of Concatenation: copies each input's block along the axis into the output (any type).
#include <cstring>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

Tactic concatenationTactic() {
  return makeTactic(
      "concatenation_reference", ir::OpType::kConcatenation,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        int64_t axisAttr = node.attrs.getInt("axis", 0);
        std::string what = node.describe();
        return makeKernel([axisAttr, what](LaunchContext const& ctx) -> Status {
          TensorView const& y = ctx.outputs[0];
          Result<int32_t> axis = normalizeAxis(axisAttr, y.shape.nbDims);
          if (!axis.isOk())
            return axis.status().withContext(what);
          int64_t outer = 1, inner = 1, total = 0;
          for (int32_t d = 0; d < *axis; ++d)
            outer *= y.shape.d[d];
          for (int32_t d = *axis + 1; d < y.shape.nbDims; ++d)
            inner *= y.shape.d[d];
          for (size_t i = 0; i < ctx.inputs.size(); ++i) {
            TensorView const& x = ctx.inputs[i];
            bool fits = x.dtype == y.dtype && x.shape.nbDims == y.shape.nbDims;
            for (int32_t d = 0; fits && d < y.shape.nbDims; ++d)
              if (d != *axis && x.shape.d[d] != y.shape.d[d])
                fits = false;
            if (!fits)
              return invalidArgument(what, ": input ", i, " ", dimsToString(x.shape), " does not fit output ",
                                     dimsToString(y.shape), " on axis ", *axis);
            total += x.shape.d[*axis];
          }
          if (total != y.shape.d[*axis])
            return invalidArgument(what, ": inputs add up to ", total, " along axis ", *axis, ", output has ",
                                   y.shape.d[*axis]);
          size_t elem = dataTypeSize(y.dtype);
          auto* dst = static_cast<unsigned char*>(y.data);
          size_t outRow = static_cast<size_t>(y.shape.d[*axis] * inner) * elem;
          size_t offset = 0;
          for (TensorView const& x : ctx.inputs) {
            size_t row = static_cast<size_t>(x.shape.d[*axis] * inner) * elem;
            auto const* src = static_cast<unsigned char const*>(x.data);
            if (row > 0)
              for (int64_t o = 0; o < outer; ++o)
                std::memcpy(dst + static_cast<size_t>(o) * outRow + offset, src + static_cast<size_t>(o) * row, row);
            offset += row;
          }
          return Status::ok();
        });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        if (in.empty() || out.size() != 1 || dataTypeSize(out[0].dtype) == 0)
          return false;
        for (TensorInfo const& t : in)
          if (t.dtype != out[0].dtype)
            return false;
        return true;
      });
}

KILN_REGISTER_TACTIC(concatenationTactic);

}  // namespace
}  // namespace kiln::backends::reference
