// Scatter on the GPU: kELEMENT (ONNX ScatterElements) and kND (ONNX ScatterND) with the reduction extension
// (none/add/mul/max/min), for float, half, bf16, fp8, int8, uint8, int32, int64 and bool; int32/int64 indices.
// The data is copied into the output, then updates that may collide are applied in order by one thread (the
// reference's order, so results are deterministic). kND walks the tuples serially per slab element: slow when
// the slab is tiny and the tuples many.
#include <vector>

#include "backends/cuda/copy_host.h"
#include "backends/cuda/scatter_kernels.h"

namespace kiln::cuda {
namespace {

bool scatterType(DataType t) {
  switch (t) {
    case DataType::kFLOAT:
    case DataType::kHALF:
    case DataType::kBF16:
    case DataType::kFP8:
    case DataType::kINT8:
    case DataType::kUINT8:
    case DataType::kINT32:
    case DataType::kINT64:
    case DataType::kBOOL:
      return true;
    case DataType::kINT4:
    case DataType::kFP4:
    case DataType::kE8M0:
    case DataType::kFLOAT64:
    case DataType::kINT16:
    case DataType::kUINT16:
    case DataType::kUINT32:
    case DataType::kUINT64:
      return false;
  }
  return false;
}

class ScatterKernel final : public backends::Kernel {
 public:
  ScatterKernel(int64_t mode, int64_t axis, int32_t reduction, std::string what)
      : mode_(mode), axis_(axis), reduction_(reduction), what_(std::move(what)) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& data = ctx.inputs[0];
    auto const& indices = ctx.inputs[1];
    auto const& updates = ctx.inputs[2];
    auto const& y = ctx.outputs[0];
    Dims const& ds = data.shape;
    Dims const& is = indices.shape;
    if (ds.nbDims < 1) return invalidArgument(what_, ": cannot scatter into a rank-0 tensor");
    if (y.dtype != data.dtype || updates.dtype != data.dtype || !dimsEqual(y.shape, ds))
      return invalidArgument(what_, ": output ", dimsToString(y.shape), " does not fit data ", dimsToString(ds));
    bool i64 = indices.dtype == DataType::kINT64;
    int32_t dt = static_cast<int32_t>(data.dtype);
    cudaStream_t stream = streamOf(ctx);
    int64_t strides[kCopyMaxRank];
    denseStrides(ds, strides);
    if (mode_ == static_cast<int64_t>(ScatterMode::kND)) {
      if (is.nbDims < 1) return invalidArgument(what_, ": kND mode needs indices of rank >= 1");
      int64_t k = is.d[is.nbDims - 1];
      if (k < 1 || k > ds.nbDims)
        return invalidArgument(what_, ": index tuples of length ", k, " do not fit data ", dimsToString(ds));
      std::vector<int64_t> expect;
      for (int32_t i = 0; i + 1 < is.nbDims; ++i) expect.push_back(is.d[i]);
      for (int64_t i = k; i < ds.nbDims; ++i) expect.push_back(ds.d[i]);
      if (expect != dimsToVector(updates.shape))
        return invalidArgument(what_, ": updates ", dimsToString(updates.shape), " do not fit data ", dimsToString(ds),
                               " and indices ", dimsToString(is));
      ScatterNdPlan p;
      p.tuples = 1;
      p.slab = 1;
      for (int32_t i = 0; i + 1 < is.nbDims; ++i) p.tuples *= is.d[i];
      for (int64_t i = k; i < ds.nbDims; ++i) p.slab *= ds.d[i];
      p.tupleLen = static_cast<int32_t>(k);
      for (int64_t t = 0; t < k; ++t) {
        p.tupleDims[t] = ds.d[t];
        p.tupleStrides[t] = strides[t];
      }
      KILN_RETURN_IF_ERROR(copyData(ctx));
      KILN_CUDA_RETURN_IF_ERROR(launchScatterNd(y.data, indices.data, i64, updates.data, dt, reduction_, p, stream),
                                what_);
      return Status::ok();
    }
    Result<int32_t> axisR = normalizeAxis(axis_, ds.nbDims);
    if (!axisR.isOk()) return axisR.status().withContext(what_);
    int32_t axis = *axisR;
    if (is.nbDims != ds.nbDims || !dimsEqual(is, updates.shape))
      return invalidArgument(what_, ": indices ", dimsToString(is), " and updates ", dimsToString(updates.shape),
                             " do not fit data ", dimsToString(ds));
    for (int32_t i = 0; i < ds.nbDims; ++i)
      if (i != axis && is.d[i] > ds.d[i])
        return invalidArgument(what_, ": indices ", dimsToString(is), " exceed data ", dimsToString(ds), " on axis ",
                               i);
    ScatterElementPlan p;
    p.rank = ds.nbDims;
    p.axis = axis;
    denseStrides(is, p.idxStrides);
    for (int32_t d = 0; d < ds.nbDims; ++d) {
      p.idxDims[d] = is.d[d];
      p.dataStrides[d] = strides[d];
    }
    p.axisDim = ds.d[axis];
    KILN_RETURN_IF_ERROR(copyData(ctx));
    KILN_CUDA_RETURN_IF_ERROR(launchScatterElement(y.data, indices.data, i64, updates.data, dt, reduction_, p, stream),
                              what_);
    return Status::ok();
  }

 private:
  Status copyData(backends::LaunchContext const& ctx) const {
    auto const& data = ctx.inputs[0];
    auto const& y = ctx.outputs[0];
    size_t bytes = static_cast<size_t>(data.count()) * dataTypeSize(data.dtype);
    if (bytes > 0 && y.data != data.data)
      KILN_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(y.data, data.data, bytes, cudaMemcpyDeviceToDevice, streamOf(ctx)),
                                what_);
    return Status::ok();
  }

  int64_t mode_, axis_;
  int32_t reduction_;
  std::string what_;
};

backends::Tactic makeScatter() {
  backends::Tactic t;
  t.name = "scatter_cuda_ordered";
  t.op = ir::OpType::kScatter;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    int64_t mode = node.attrs.getInt("mode", 0), red = node.attrs.getInt("reduction", 0);
    return mode >= 0 && mode < EnumMax<ScatterMode>() && red >= 0 && red < EnumMax<ScatterReduction>() &&
           in.size() == 3 && out.size() == 1 && in[0].dtype == out[0].dtype && in[2].dtype == in[0].dtype &&
           scatterType(in[0].dtype) && (in[1].dtype == DataType::kINT32 || in[1].dtype == DataType::kINT64);
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    int64_t mode = node.attrs.getInt("mode", 0), red = node.attrs.getInt("reduction", 0);
    std::string what = node.describe();
    if (mode < 0 || mode >= EnumMax<ScatterMode>()) return invalidArgument(what, ": unknown scatter mode ", mode);
    if (red < 0 || red >= EnumMax<ScatterReduction>())
      return invalidArgument(what, ": unknown scatter reduction ", red);
    return std::unique_ptr<backends::Kernel>(
        new ScatterKernel(mode, node.attrs.getInt("axis", 0), static_cast<int32_t>(red), std::move(what)));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeScatter);

}  // namespace
}  // namespace kiln::cuda
