// Reference kernel of Gather in TensorRT's kDEFAULT, kELEMENT (ONNX GatherElements) and kND (ONNX GatherND,
// batch dims = num_elementwise_dims) modes: any data type; int32/int64 indices, negative ones counting from
// the end; an index out of range is an error naming the layer.
#include <algorithm>
#include <array>
#include <cstring>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

// ONNX GatherElements: y[p] = data[p with p[axis] replaced by indices[p]].
Status gatherElements(LaunchContext const& ctx, int64_t axisAttr, std::string const& what) {
  TensorView const& data = ctx.inputs[0];
  TensorView const& indices = ctx.inputs[1];
  TensorView const& y = ctx.outputs[0];
  Result<int32_t> axisR = normalizeAxis(axisAttr, data.shape.nbDims);
  if (!axisR.isOk())
    return axisR.status().withContext(what);
  int32_t axis = *axisR;
  if (indices.shape.nbDims != data.shape.nbDims || dimsToVector(y.shape) != dimsToVector(indices.shape) ||
      y.dtype != data.dtype)
    return invalidArgument(what, ": output ", dimsToString(y.shape), " does not fit data ", dimsToString(data.shape),
                           " and indices ", dimsToString(indices.shape));
  for (int32_t i = 0; i < data.shape.nbDims; ++i)
    if (i != axis && indices.shape.d[i] > data.shape.d[i])
      return invalidArgument(what, ": indices ", dimsToString(indices.shape), " exceed data ",
                             dimsToString(data.shape), " on axis ", i);
  std::vector<int64_t> ds = rowMajorStrides(data.shape);
  std::array<std::vector<int64_t>, 1> strides{ds};
  int64_t n = data.shape.d[axis];
  size_t elem = dataTypeSize(data.dtype);
  auto const* src = static_cast<unsigned char const*>(data.data);
  auto* dst = static_cast<unsigned char*>(y.data);
  Status st;
  // Walk the indices' positions; offset[0] is the data offset of the same position with index 0 on `axis`.
  std::vector<int64_t> along(strides[0]);
  along[axis] = 0;
  forEachIndex<1>(indices.shape, {along}, [&](int64_t lin, std::array<int64_t, 1> const& off) {
    if (!st)
      return;
    int64_t k = loadAsInt(indices, lin);
    int64_t kk = k < 0 ? k + n : k;
    if (kk < 0 || kk >= n) {
      st = invalidArgument(what, ": index ", k, " is out of range [", -n, ", ", n, ") on axis ", axis);
      return;
    }
    std::memcpy(dst + static_cast<size_t>(lin) * elem, src + static_cast<size_t>(off[0] + kk * ds[axis]) * elem,
                elem);
  });
  return st;
}

// ONNX GatherND with `b` batch dims: y[batch, i] = data[batch, indices[batch, i, :], ...].
Status gatherNd(LaunchContext const& ctx, int64_t b, std::string const& what) {
  TensorView const& data = ctx.inputs[0];
  TensorView const& indices = ctx.inputs[1];
  TensorView const& y = ctx.outputs[0];
  Dims const& ds = data.shape;
  Dims const& is = indices.shape;
  if (is.nbDims < 1 || b < 0 || b >= is.nbDims || b >= ds.nbDims)
    return invalidArgument(what, ": indices ", dimsToString(is), " do not fit data ", dimsToString(ds));
  int64_t k = is.d[is.nbDims - 1];
  if (k < 1 || b + k > ds.nbDims)
    return invalidArgument(what, ": index tuples of length ", k, " do not fit data ", dimsToString(ds));
  std::vector<int64_t> expect;
  for (int32_t i = 0; i + 1 < is.nbDims; ++i)
    expect.push_back(is.d[i]);
  for (int64_t i = b + k; i < ds.nbDims; ++i)
    expect.push_back(ds.d[i]);
  bool batchOk = true;
  for (int64_t i = 0; i < b; ++i)
    batchOk = batchOk && ds.d[i] == is.d[i];
  if (!batchOk || expect != dimsToVector(y.shape) || y.dtype != data.dtype)
    return invalidArgument(what, ": output ", dimsToString(y.shape), " does not fit data ", dimsToString(ds),
                           " and indices ", dimsToString(is));
  int64_t batch = 1, perBatch = 1, slab = 1, dataBatch = 1;
  for (int64_t i = 0; i < b; ++i)
    batch *= ds.d[i];
  for (int64_t i = b; i + 1 < is.nbDims; ++i)
    perBatch *= is.d[i];
  for (int64_t i = b + k; i < ds.nbDims; ++i)
    slab *= ds.d[i];
  for (int64_t i = b; i < ds.nbDims; ++i)
    dataBatch *= ds.d[i];
  std::vector<int64_t> strides = rowMajorStrides(ds);
  size_t elem = dataTypeSize(data.dtype);
  size_t slabBytes = static_cast<size_t>(slab) * elem;
  auto const* src = static_cast<unsigned char const*>(data.data);
  auto* dst = static_cast<unsigned char*>(y.data);
  for (int64_t bi = 0; bi < batch; ++bi) {
    for (int64_t j = 0; j < perBatch; ++j) {
      int64_t tuple = (bi * perBatch + j) * k;
      int64_t off = bi * dataBatch;
      for (int64_t t = 0; t < k; ++t) {
        int64_t n = ds.d[b + t];
        int64_t v = loadAsInt(indices, tuple + t);
        int64_t vv = v < 0 ? v + n : v;
        if (vv < 0 || vv >= n)
          return invalidArgument(what, ": index ", v, " is out of range [", -n, ", ", n, ") on axis ", b + t);
        off += vv * strides[static_cast<size_t>(b + t)];
      }
      if (slabBytes > 0)
        std::memcpy(dst + static_cast<size_t>(bi * perBatch + j) * slabBytes, src + static_cast<size_t>(off) * elem,
                    slabBytes);
    }
  }
  return Status::ok();
}

Tactic gatherTactic() {
  return makeTactic(
      "gather_reference", ir::OpType::kGather,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        int64_t mode = node.attrs.getInt("mode", 0);
        int64_t axisAttr = node.attrs.getInt("axis", 0);
        int64_t ne = node.attrs.getInt("num_elementwise_dims", 0);
        std::string what = node.describe();
        if (mode == static_cast<int64_t>(GatherMode::kELEMENT))
          return makeKernel([axisAttr, ne, what](LaunchContext const& ctx) -> Status {
            if (ne != 0)
              return invalidArgument(what, ": kELEMENT mode needs num_elementwise_dims 0");
            if (ctx.inputs[0].shape.nbDims < 1)
              return invalidArgument(what, ": cannot gather from a rank-0 tensor");
            return gatherElements(ctx, axisAttr, what);
          });
        if (mode == static_cast<int64_t>(GatherMode::kND))
          return makeKernel([ne, what](LaunchContext const& ctx) -> Status { return gatherNd(ctx, ne, what); });
        if (mode != static_cast<int64_t>(GatherMode::kDEFAULT))
          return invalidArgument(what, ": unknown gather mode ", mode);
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
        int64_t mode = node.attrs.getInt("mode", 0);
        return mode >= 0 && mode < EnumMax<GatherMode>() && in.size() == 2 && out.size() == 1 &&
               in[0].dtype == out[0].dtype && dataTypeSize(in[0].dtype) > 0 &&
               typeIn(in[1].dtype, {DataType::kINT32, DataType::kINT64});
      });
}

KILN_REGISTER_TACTIC(gatherTactic);

}  // namespace
}  // namespace kiln::backends::reference
