// Host helpers shared by the convolution family's tactics (convolution.cc, deconvolution.cc, pooling.cc):
// owning cuDNN descriptors, Kiln's float types as cuDNN's, N-D geometry as the 3-D ConvGeom of conv_kernels.h,
// and a per-shape plan cache (kernels are shared by threads, so plans are built once under a mutex).
#pragma once

#include <cudnn.h>

#include <climits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cuda/conv_kernels.h"
#include "backends/cuda/cuda_libs.h"
#include "backends/cuda/cuda_util.h"

namespace kiln::cuda::convfamily {

/// Owns one cuDNN descriptor of type D (created by C, destroyed by X).
template <typename D, cudnnStatus_t (*C)(D*), cudnnStatus_t (*X)(D)>
class CudnnDesc {
 public:
  CudnnDesc() = default;
  ~CudnnDesc() {
    if (d_) X(d_);
  }
  CudnnDesc(CudnnDesc const&) = delete;
  CudnnDesc& operator=(CudnnDesc const&) = delete;
  Status create(char const* what) {
    KILN_CUDNN_RETURN_IF_ERROR(C(&d_), what);
    return Status::ok();
  }
  D get() const { return d_; }

 private:
  D d_ = nullptr;
};

using TensorDesc = CudnnDesc<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDesc = CudnnDesc<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvDesc =
    CudnnDesc<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor>;
using ActDesc =
    CudnnDesc<cudnnActivationDescriptor_t, cudnnCreateActivationDescriptor, cudnnDestroyActivationDescriptor>;
using PoolDesc = CudnnDesc<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor, cudnnDestroyPoolingDescriptor>;

/// The types and ranks the convolution family's tactics take: x and w present with 1..3 spatial dims, at most
/// `maxInputs` inputs, and every present input of y's float type.
inline bool sameFloatTypeWindowOp(std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out,
                                  size_t maxInputs) {
  if (in.size() < 2 || in.size() > maxInputs || out.size() != 1 || !isCudaFloat(out[0].dtype)) return false;
  if (in[0].shape.nbDims < 0 || in[1].shape.nbDims < 0) return false;
  for (auto const& t : in)
    if (t.shape.nbDims >= 0 && t.dtype != out[0].dtype) return false;
  return in[0].shape.nbDims >= 3 && in[0].shape.nbDims <= 5;
}

/// cuDNN's data type for Kiln's float types (fp32, fp16, bf16).
inline cudnnDataType_t cudnnTypeOf(DataType t) {
  return t == DataType::kHALF ? CUDNN_DATA_HALF : t == DataType::kBF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

/// True when every value fits cuDNN's int dims and the tensors' element counts stay below 2^31.
inline bool fitsInt(std::vector<int64_t> const& dims) {
  int64_t vol = 1;
  for (int64_t d : dims) {
    if (d < 1 || d > INT_MAX) return false;
    vol *= d;
    if (vol > INT_MAX) return false;
  }
  return true;
}

inline std::vector<int> toInts(std::vector<int64_t> const& v) { return std::vector<int>(v.begin(), v.end()); }

/// A fully packed NCHW / NCDHW tensor descriptor of `dims` (4 or 5 entries).
inline Status setPackedTensor(TensorDesc& d, DataType t, std::vector<int64_t> const& dims) {
  KILN_RETURN_IF_ERROR(d.create("creating a cuDNN tensor descriptor"));
  std::vector<int> di = toInts(dims), st(dims.size());
  int64_t s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    st[i] = static_cast<int>(s);
    s *= dims[i];
  }
  KILN_CUDNN_RETURN_IF_ERROR(
      cudnnSetTensorNdDescriptor(d.get(), cudnnTypeOf(t), static_cast<int>(di.size()), di.data(), st.data()),
      "cudnnSetTensorNdDescriptor");
  return Status::ok();
}

/// A channels-last (kHWC) descriptor of the logical 4-D tensor `dims` = [N, C, H, W]: memory [N, H, W, C].
inline Status setNhwcTensor(TensorDesc& d, DataType t, std::vector<int64_t> const& dims) {
  if (dims.size() != 4) return invalidArgument("a channels-last cuDNN tensor needs 4 dims");
  KILN_RETURN_IF_ERROR(d.create("creating a cuDNN tensor descriptor"));
  std::vector<int> di = toInts(dims);
  KILN_CUDNN_RETURN_IF_ERROR(
      cudnnSetTensor4dDescriptor(d.get(), CUDNN_TENSOR_NHWC, cudnnTypeOf(t), di[0], di[1], di[2], di[3]),
      "cudnnSetTensor4dDescriptor(NHWC)");
  return Status::ok();
}

/// `v` (one entry per spatial dim, 1 to 3 of them) as cuDNN wants it: 1-D becomes 2-D with a leading `one`.
inline std::vector<int64_t> cudnnSpatial(std::vector<int64_t> const& v, int64_t one) {
  std::vector<int64_t> r = v;
  if (r.size() == 1) r.insert(r.begin(), one);
  return r;
}

/// Fills 3-D extents (leading 1s / `fill`) from up to three spatial values.
inline void to3(std::vector<int64_t> const& v, int64_t* dst, int64_t fill) {
  size_t lead = 3 - v.size();
  for (size_t i = 0; i < 3; ++i) dst[i] = i < lead ? fill : v[i - lead];
}

/// The cuDNN descriptors of one convolution geometry: x and y tensors, the filter and the convolution.
struct ConvDescriptors {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
};

/// Sets `d` for x `xd`, filter `wd`, y `yd` (cuDNN's N-D layouts), symmetric `pads`, `stride`, `dil`, `groups`,
/// with fp32 kept on FMA math unless `tf32` and fp16/bf16 on tensor cores. `hwc`: x, y and the filter are
/// channels-last (2-D only; the filter then laid out [K, R, S, C/groups]). A convolution's forward pass maps x to y; a deconvolution is the
/// backward-data pass of the convolution mapping y to x (`deconv`). Either way cuDNN's output size of the
/// forward pass must be the expected one.
inline Status setConvDescriptors(ConvDescriptors& d, DataType dt, std::vector<int64_t> const& xd,
                                 std::vector<int64_t> const& wd, std::vector<int64_t> const& yd,
                                 std::vector<int64_t> const& pads, std::vector<int64_t> const& stride,
                                 std::vector<int64_t> const& dil, int64_t groups, bool tf32, bool deconv,
                                 std::string const& who, bool hwc = false) {
  if (!fitsInt(xd) || !fitsInt(wd) || !fitsInt(yd) || !fitsInt({groups})) return invalidArgument(who, ": too large for cuDNN");
  if (hwc && (xd.size() != 4 || wd.size() != 4 || yd.size() != 4))
    return invalidArgument(who, ": channels-last needs a 2-D convolution");
  KILN_RETURN_IF_ERROR(hwc ? setNhwcTensor(d.x, dt, xd) : setPackedTensor(d.x, dt, xd));
  KILN_RETURN_IF_ERROR(hwc ? setNhwcTensor(d.y, dt, yd) : setPackedTensor(d.y, dt, yd));
  KILN_RETURN_IF_ERROR(d.w.create("creating a cuDNN filter descriptor"));
  std::vector<int> wi = toInts(wd);
  KILN_CUDNN_RETURN_IF_ERROR(cudnnSetFilterNdDescriptor(d.w.get(), cudnnTypeOf(dt), hwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                                        static_cast<int>(wi.size()), wi.data()),
                             "cudnnSetFilterNdDescriptor");
  KILN_RETURN_IF_ERROR(d.conv.create("creating a cuDNN convolution descriptor"));
  std::vector<int> pad = toInts(pads), str = toInts(stride), dl = toInts(dil);
  KILN_CUDNN_RETURN_IF_ERROR(
      cudnnSetConvolutionNdDescriptor(d.conv.get(), static_cast<int>(pad.size()), pad.data(), str.data(), dl.data(),
                                      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
      "cudnnSetConvolutionNdDescriptor");
  KILN_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionGroupCount(d.conv.get(), static_cast<int>(groups)),
                             "cudnnSetConvolutionGroupCount");
  // fp32 without TF32 must stay on FMA math (cuDNN's default math may pick TF32 tensor cores for fp32).
  cudnnMathType_t math = dt == DataType::kFLOAT ? (tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH) : CUDNN_TENSOR_OP_MATH;
  KILN_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionMathType(d.conv.get(), math), "cudnnSetConvolutionMathType");
  std::vector<int64_t> const& fwdOut = deconv ? xd : yd;
  std::vector<int> got(fwdOut.size());
  KILN_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionNdForwardOutputDim(d.conv.get(), deconv ? d.y.get() : d.x.get(), d.w.get(),
                                                                   static_cast<int>(got.size()), got.data()),
                             "cudnnGetConvolutionNdForwardOutputDim");
  if (got != toInts(fwdOut)) return invalidArgument(who, ": cuDNN's geometry differs");
  return Status::ok();
}

/// Per-shape plans (immutable once built) keyed by the shapes that decide them, built once under a mutex.
template <typename Plan>
class PlanCache {
 public:
  /// The plan for `key`, building it with `build()` (-> Result<std::shared_ptr<Plan>>) on first use.
  template <typename Build>
  Result<std::shared_ptr<Plan const>> get(std::vector<int64_t> const& key, Build const& build) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<Plan const> p, build());
    plans_[key] = p;
    return p;
  }

 private:
  mutable std::mutex mu_;
  mutable std::map<std::vector<int64_t>, std::shared_ptr<Plan const>> plans_;
};

/// Rounds a workspace offset up to 256 bytes.
inline size_t alignUp(size_t b) { return (b + 255) / 256 * 256; }

}  // namespace kiln::cuda::convfamily
