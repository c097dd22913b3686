// Host helpers shared by the convolution family's tactics (convolution.cc, deconvolution.cc, pooling.cc):
// owning cuDNN descriptors, Kiln's float types as cuDNN's, N-D geometry as the 3-D ConvGeom of conv_kernels.h,
// and a per-shape plan cache (kernels are shared by threads, so plans are built once under a mutex).
#pragma once

#include <cudnn.h>

#include <climits>
#include <map>
#include <memory>
#include <mutex>
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
