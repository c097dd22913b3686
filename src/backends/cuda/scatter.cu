// Device side of Scatter (scatter_kernels.h): combine() follows the reference per type (floats in fp64 rounded to
// the storage type, integers wrapping, bool as or/and, NaN updates winning max/min).
#include <cstdint>
#include <type_traits>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/scatter_kernels.h"

namespace kiln::cuda {
namespace {

constexpr int32_t kNone = 0, kAdd = 1, kMul = 2, kMax = 3, kMin = 4;

template <typename T>
constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16> ||
                          std::is_same_v<T, __nv_fp8_e4m3>;

template <typename T>
__device__ __forceinline__ double asDouble(T v) {
  if constexpr (std::is_same_v<T, float>)
    return static_cast<double>(v);
  else
    return static_cast<double>(dev::toFloat(v));
}

template <typename T>
__device__ __forceinline__ T fromDouble(double v) {
  if constexpr (std::is_same_v<T, float>)
    return static_cast<float>(v);
  else
    return dev::fromFloat<T>(static_cast<float>(v));
}

template <typename T>
__device__ T combine(T a, T b, int32_t r) {
  switch (r) {
    case kAdd:
      if constexpr (std::is_same_v<T, bool>)
        return a || b;
      else if constexpr (kIsFloat<T>)
        return fromDouble<T>(asDouble(a) + asDouble(b));
      else
        return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    case kMul:
      if constexpr (std::is_same_v<T, bool>)
        return a && b;
      else if constexpr (kIsFloat<T>)
        return fromDouble<T>(asDouble(a) * asDouble(b));
      else
        return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    case kMax:
      if constexpr (kIsFloat<T>)
        return asDouble(b) > asDouble(a) || isnan(asDouble(b)) ? b : a;
      else
        return b > a ? b : a;
    case kMin:
      if constexpr (kIsFloat<T>)
        return asDouble(b) < asDouble(a) || isnan(asDouble(b)) ? b : a;
      else
        return b < a ? b : a;
    case kNone:
    default:
      return b;
  }
}

template <typename T, typename Ix>
__global__ void scatterElementKernel(T* __restrict__ y, Ix const* __restrict__ idx, T const* __restrict__ upd,
                                     int32_t reduction, ScatterElementPlan p, int64_t lines) {
  int64_t len = p.idxDims[p.axis];
  for (int64_t line = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; line < lines;
       line += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rem = line, u = 0, dOff = 0;
    for (int32_t d = p.rank - 1; d >= 0; --d) {
      if (d == p.axis) continue;
      int64_t c = rem % p.idxDims[d];
      rem /= p.idxDims[d];
      u += c * p.idxStrides[d];
      dOff += c * p.dataStrides[d];
    }
    for (int64_t a = 0; a < len; ++a, u += p.idxStrides[p.axis]) {
      int64_t k = static_cast<int64_t>(idx[u]);
      if (k < 0) k += p.axisDim;
      if (k < 0 || k >= p.axisDim) continue;
      T* t = y + dOff + k * p.dataStrides[p.axis];
      *t = combine<T>(*t, upd[u], reduction);
    }
  }
}

template <typename T, typename Ix>
__global__ void scatterNdKernel(T* __restrict__ y, Ix const* __restrict__ idx, T const* __restrict__ upd,
                                int32_t reduction, ScatterNdPlan p) {
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < p.slab;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    for (int64_t j = 0; j < p.tuples; ++j) {
      int64_t off = 0;
      bool ok = true;
      for (int32_t t = 0; t < p.tupleLen; ++t) {
        int64_t k = static_cast<int64_t>(idx[j * p.tupleLen + t]);
        if (k < 0) k += p.tupleDims[t];
        ok = ok && k >= 0 && k < p.tupleDims[t];
        off += k * p.tupleStrides[t];
      }
      if (!ok) continue;
      T* t = y + off + e;
      *t = combine<T>(*t, upd[j * p.slab + e], reduction);
    }
  }
}

}  // namespace

cudaError_t launchScatterElement(void* y, void const* indices, bool indices64, void const* updates, int32_t dtype,
                                 int32_t reduction, ScatterElementPlan const& p, cudaStream_t stream) {
  int64_t lines = 1;
  for (int32_t d = 0; d < p.rank; ++d)
    if (d != p.axis) lines *= p.idxDims[d];
  if (lines <= 0 || p.idxDims[p.axis] <= 0) return cudaSuccess;
  unsigned blocks = dev::blocksFor(lines);
  bool known = KILN_CUDA_DISPATCH(dtype, {
    if (indices64)
      scatterElementKernel<T, int64_t><<<blocks, 256, 0, stream>>>(static_cast<T*>(y),
                                                                   static_cast<int64_t const*>(indices),
                                                                   static_cast<T const*>(updates), reduction, p, lines);
    else
      scatterElementKernel<T, int32_t><<<blocks, 256, 0, stream>>>(static_cast<T*>(y),
                                                                   static_cast<int32_t const*>(indices),
                                                                   static_cast<T const*>(updates), reduction, p, lines);
  });
  return known ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launchScatterNd(void* y, void const* indices, bool indices64, void const* updates, int32_t dtype,
                            int32_t reduction, ScatterNdPlan const& p, cudaStream_t stream) {
  if (p.slab <= 0 || p.tuples <= 0) return cudaSuccess;
  unsigned blocks = dev::blocksFor(p.slab);
  bool known = KILN_CUDA_DISPATCH(dtype, {
    if (indices64)
      scatterNdKernel<T, int64_t><<<blocks, 256, 0, stream>>>(static_cast<T*>(y), static_cast<int64_t const*>(indices),
                                                              static_cast<T const*>(updates), reduction, p);
    else
      scatterNdKernel<T, int32_t><<<blocks, 256, 0, stream>>>(static_cast<T*>(y), static_cast<int32_t const*>(indices),
                                                              static_cast<T const*>(updates), reduction, p);
  });
  return known ? cudaGetLastError() : cudaErrorInvalidValue;
}

}  // namespace kiln::cuda
