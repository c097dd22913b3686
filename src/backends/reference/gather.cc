// Reference kernel of Gather in TensorRT's kDEFAULT mode (any data type; int32/int64 indices, negative ones
// counting from the end; an index out of range is an error naming the layer). kELEMENT/kND: not yet.
#include <algorithm>
#include <cstring>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

Tactic gatherTactic() {
  return makeTactic(
      "gather_reference", ir::OpType::kGather,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        if (node.attrs.getInt("mode", 0) != static_cast<int64_t>(GatherMode::kDEFAULT))
          return unsupported(node.describe(), ": gather modes kELEMENT and kND are not supported yet");
        int64_t axisAttr = node.attrs.getInt("axis", 0);
        int64_t ne = node.attrs.getInt("num_elementwise_dims", 0);
        std::string what = node.describe();
        return makeKernel([axisAttr, ne, what](LaunchContext const& ctx) -> Status {
          TensorView const& data = ctx.inputs[0];
          TensorView const& indices = ctx.inputs[1];
          TensorView const& y = ctx.outputs[0];
          if (ne != 0 && ne != 1)
            return invalidArgument(what, ": num_elementwise_dims must be 0 or 1");
          if (data.shape.nbDims < 1)
            return invalidArgument(what, ": cannot gather from a rank-0 tensor");
          Result<int32_t> axisR = normalizeAxis(axisAttr, data.shape.nbDims);
          if (!axisR.isOk())
            return axisR.status().withContext(what);
          int32_t axis = *axisR;
          if (axis < ne || indices.shape.nbDims < ne || y.dtype != data.dtype)
            return invalidArgument(what, ": inputs do not fit the gather attributes");
          // Expected output shape: data[:axis] + indices[ne:] + data[axis+1:].
          std::vector<int64_t> expect;
          for (int32_t i = 0; i < axis; ++i)
            expect.push_back(data.shape.d[i]);
          for (int32_t i = static_cast<int32_t>(ne); i < indices.shape.nbDims; ++i)
            expect.push_back(indices.shape.d[i]);
          for (int32_t i = axis + 1; i < data.shape.nbDims; ++i)
            expect.push_back(data.shape.d[i]);
          if (expect != dimsToVector(y.shape) || (ne == 1 && data.shape.d[0] != indices.shape.d[0]))
            return invalidArgument(what, ": output ", dimsToString(y.shape), " does not fit data ",
                                   dimsToString(data.shape), " and indices ", dimsToString(indices.shape));
          int64_t outer = 1, inner = 1, lead = 1;
          for (int32_t i = 0; i < axis; ++i)
            outer *= data.shape.d[i];
          for (int32_t i = axis + 1; i < data.shape.nbDims; ++i)
            inner *= data.shape.d[i];
          if (ne == 1)
            lead = data.shape.d[0];
          int64_t perLead = lead > 0 ? outer / lead : 0;  // outer positions sharing one leading index
          int64_t n = data.shape.d[axis];
          int64_t nIdx = indices.count() / (ne == 1 ? std::max<int64_t>(lead, 1) : 1);
          if (ne == 1 && lead == 0)
            nIdx = 0;
          size_t elem = dataTypeSize(data.dtype);
          size_t block = static_cast<size_t>(inner) * elem;
          auto const* src = static_cast<unsigned char const*>(data.data);
          auto* dst = static_cast<unsigned char*>(y.data);
          for (int64_t o = 0; o < outer; ++o) {
            int64_t idxBase = ne == 1 ? (o / perLead) * nIdx : 0;
            for (int64_t j = 0; j < nIdx; ++j) {
              int64_t k = loadAsInt(indices, idxBase + j);
              int64_t kk = k < 0 ? k + n : k;
              if (kk < 0 || kk >= n)
                return invalidArgument(what, ": index ", k, " is out of range [", -n, ", ", n, ") on axis ", axis);
              if (block > 0)
                std::memcpy(dst + static_cast<size_t>(o * nIdx + j) * block,
                            src + static_cast<size_t>(o * n + kk) * block, block);
            }
          }
          return Status::ok();
        });
      },
      [](ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return node.attrs.getInt("mode", 0) == static_cast<int64_t>(GatherMode::kDEFAULT) && in.size() == 2 &&
               out.size() == 1 && in[0].dtype == out[0].dtype && dataTypeSize(in[0].dtype) > 0 &&
               typeIn(in[1].dtype, {DataType::kINT32, DataType::kINT64});
      });
}

KILN_REGISTER_TACTIC(gatherTactic);

}  // namespace
}  // namespace kiln::backends::reference
