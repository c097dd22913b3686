// Gather on the GPU in TensorRT's kDEFAULT, kELEMENT (ONNX GatherElements) and kND (ONNX GatherND) modes: any
// 1/2/4/8-byte type, int32/int64 indices, negative indices from the end. Shapes are checked as the reference
// does; an out-of-range index (an error on the host) yields zeros, as the device cannot report it.
#include <algorithm>
#include <vector>

#include "backends/cuda/copy_host.h"
#include "backends/cuda/gather_kernels.h"

namespace kiln::cuda {
namespace {

class GatherKernel final : public backends::Kernel {
 public:
  GatherKernel(int64_t mode, int64_t axis, int64_t ne, std::string what)
      : mode_(mode), axis_(axis), ne_(ne), what_(std::move(what)) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& data = ctx.inputs[0];
    auto const& indices = ctx.inputs[1];
    auto const& y = ctx.outputs[0];
    if (y.dtype != data.dtype) return invalidArgument(what_, ": output type differs from the data's");
    bool i64 = indices.dtype == DataType::kINT64;
    int32_t es = static_cast<int32_t>(dataTypeSize(data.dtype));
    cudaStream_t stream = streamOf(ctx);
    if (mode_ == static_cast<int64_t>(GatherMode::kELEMENT)) {
      if (ne_ != 0) return invalidArgument(what_, ": kELEMENT mode needs num_elementwise_dims 0");
      if (data.shape.nbDims < 1) return invalidArgument(what_, ": cannot gather from a rank-0 tensor");
      Result<int32_t> axisR = normalizeAxis(axis_, data.shape.nbDims);
      if (!axisR.isOk()) return axisR.status().withContext(what_);
      int32_t axis = *axisR;
      if (indices.shape.nbDims != data.shape.nbDims || !dimsEqual(y.shape, indices.shape))
        return invalidArgument(what_, ": output ", dimsToString(y.shape), " does not fit data ",
                               dimsToString(data.shape), " and indices ", dimsToString(indices.shape));
      for (int32_t i = 0; i < data.shape.nbDims; ++i)
        if (i != axis && indices.shape.d[i] > data.shape.d[i])
          return invalidArgument(what_, ": indices ", dimsToString(indices.shape), " exceed data ",
                                 dimsToString(data.shape), " on axis ", i);
      GatherElementPlan p;
      p.rank = indices.shape.nbDims;
      denseStrides(data.shape, p.dataStrides);
      for (int32_t d = 0; d < p.rank; ++d) p.dims[d] = indices.shape.d[d];
      p.axisStride = p.dataStrides[axis];
      p.axisDim = data.shape.d[axis];
      p.dataStrides[axis] = 0;
      KILN_CUDA_RETURN_IF_ERROR(launchGatherElement(data.data, indices.data, i64, y.data, es, p, stream), what_);
      return Status::ok();
    }
    if (mode_ == static_cast<int64_t>(GatherMode::kND)) return enqueueNd(ctx, i64, es, stream);
    if (ne_ != 0 && ne_ != 1) return invalidArgument(what_, ": num_elementwise_dims must be 0 or 1");
    if (data.shape.nbDims < 1) return invalidArgument(what_, ": cannot gather from a rank-0 tensor");
    Result<int32_t> axisR = normalizeAxis(axis_, data.shape.nbDims);
    if (!axisR.isOk()) return axisR.status().withContext(what_);
    int32_t axis = *axisR;
    if (axis < ne_ || indices.shape.nbDims < ne_)
      return invalidArgument(what_, ": inputs do not fit the gather attributes");
    std::vector<int64_t> expect;
    for (int32_t i = 0; i < axis; ++i) expect.push_back(data.shape.d[i]);
    for (int32_t i = static_cast<int32_t>(ne_); i < indices.shape.nbDims; ++i) expect.push_back(indices.shape.d[i]);
    for (int32_t i = axis + 1; i < data.shape.nbDims; ++i) expect.push_back(data.shape.d[i]);
    if (expect != dimsToVector(y.shape) || (ne_ == 1 && data.shape.d[0] != indices.shape.d[0]))
      return invalidArgument(what_, ": output ", dimsToString(y.shape), " does not fit data ", dimsToString(data.shape),
                             " and indices ", dimsToString(indices.shape));
    GatherDefaultPlan p;
    p.outer = 1;
    p.inner = 1;
    for (int32_t i = 0; i < axis; ++i) p.outer *= data.shape.d[i];
    for (int32_t i = axis + 1; i < data.shape.nbDims; ++i) p.inner *= data.shape.d[i];
    int64_t lead = ne_ == 1 ? data.shape.d[0] : 1;
    p.perLead = lead > 0 ? std::max<int64_t>(p.outer / lead, 1) : 1;
    p.nIdx = indices.count() / (ne_ == 1 ? std::max<int64_t>(lead, 1) : 1);
    if (ne_ == 1 && lead == 0) p.nIdx = 0;
    p.axisDim = data.shape.d[axis];
    p.elementwise = static_cast<int32_t>(ne_);
    KILN_CUDA_RETURN_IF_ERROR(launchGatherDefault(data.data, indices.data, i64, y.data, es, p, stream), what_);
    return Status::ok();
  }

 private:
  Status enqueueNd(backends::LaunchContext const& ctx, bool i64, int32_t es, cudaStream_t stream) const {
    auto const& data = ctx.inputs[0];
    auto const& indices = ctx.inputs[1];
    auto const& y = ctx.outputs[0];
    Dims const& ds = data.shape;
    Dims const& is = indices.shape;
    int64_t b = ne_;
    if (is.nbDims < 1 || b < 0 || b >= is.nbDims || b >= ds.nbDims)
      return invalidArgument(what_, ": indices ", dimsToString(is), " do not fit data ", dimsToString(ds));
    int64_t k = is.d[is.nbDims - 1];
    if (k < 1 || b + k > ds.nbDims)
      return invalidArgument(what_, ": index tuples of length ", k, " do not fit data ", dimsToString(ds));
    std::vector<int64_t> expect;
    for (int32_t i = 0; i + 1 < is.nbDims; ++i) expect.push_back(is.d[i]);
    for (int64_t i = b + k; i < ds.nbDims; ++i) expect.push_back(ds.d[i]);
    bool batchOk = true;
    for (int64_t i = 0; i < b; ++i) batchOk = batchOk && ds.d[i] == is.d[i];
    if (!batchOk || expect != dimsToVector(y.shape))
      return invalidArgument(what_, ": output ", dimsToString(y.shape), " does not fit data ", dimsToString(ds),
                             " and indices ", dimsToString(is));
    GatherNdPlan p;
    p.batch = p.perBatch = p.slab = p.dataBatch = 1;
    for (int64_t i = 0; i < b; ++i) p.batch *= ds.d[i];
    for (int64_t i = b; i + 1 < is.nbDims; ++i) p.perBatch *= is.d[i];
    for (int64_t i = b + k; i < ds.nbDims; ++i) p.slab *= ds.d[i];
    for (int64_t i = b; i < ds.nbDims; ++i) p.dataBatch *= ds.d[i];
    int64_t strides[kCopyMaxRank];
    denseStrides(ds, strides);
    p.tupleLen = static_cast<int32_t>(k);
    for (int64_t t = 0; t < k; ++t) {
      p.tupleDims[t] = ds.d[b + t];
      p.tupleStrides[t] = strides[b + t];
    }
    KILN_CUDA_RETURN_IF_ERROR(launchGatherNd(data.data, indices.data, i64, y.data, es, p, stream), what_);
    return Status::ok();
  }

  int64_t mode_, axis_, ne_;
  std::string what_;
};

backends::Tactic makeGather() {
  backends::Tactic t;
  t.name = "gather_cuda_direct";
  t.op = ir::OpType::kGather;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    int64_t mode = node.attrs.getInt("mode", 0);
    return mode >= 0 && mode < EnumMax<GatherMode>() && in.size() == 2 && out.size() == 1 &&
           in[0].dtype == out[0].dtype && isByteCopyable(in[0].dtype) &&
           (in[1].dtype == DataType::kINT32 || in[1].dtype == DataType::kINT64);
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    int64_t mode = node.attrs.getInt("mode", 0);
    if (mode < 0 || mode >= EnumMax<GatherMode>())
      return invalidArgument(node.describe(), ": unknown gather mode ", mode);
    return std::unique_ptr<backends::Kernel>(new GatherKernel(
        mode, node.attrs.getInt("axis", 0), node.attrs.getInt("num_elementwise_dims", 0), node.describe()));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeGather);

}  // namespace
}  // namespace kiln::cuda
