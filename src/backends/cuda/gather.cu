// Device side of Gather (gather_kernels.h): one thread per output element, elements copied as raw bytes.
#include <cstdint>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/gather_kernels.h"

namespace kiln::cuda {
namespace {

__device__ __forceinline__ int64_t wrapIndex(int64_t k, int64_t n) { return k < 0 ? k + n : k; }

template <typename E, typename Ix>
__global__ void gatherDefaultKernel(E const* __restrict__ data, Ix const* __restrict__ idx, E* __restrict__ out,
                                    GatherDefaultPlan p, int64_t total) {
  for (int64_t lin = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; lin < total;
       lin += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t i = lin % p.inner;
    int64_t row = lin / p.inner;
    int64_t j = row % p.nIdx;
    int64_t o = row / p.nIdx;
    int64_t base = p.elementwise ? (o / p.perLead) * p.nIdx : 0;
    int64_t k = wrapIndex(static_cast<int64_t>(idx[base + j]), p.axisDim);
    out[lin] = k >= 0 && k < p.axisDim ? data[(o * p.axisDim + k) * p.inner + i] : E(0);
  }
}

template <typename E, typename Ix>
__global__ void gatherElementKernel(E const* __restrict__ data, Ix const* __restrict__ idx, E* __restrict__ out,
                                    GatherElementPlan p, int64_t total) {
  for (int64_t lin = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; lin < total;
       lin += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rem = lin, off = 0;
#pragma unroll
    for (int32_t d = 7; d >= 0; --d) {
      if (d < p.rank) {
        off += (rem % p.dims[d]) * p.dataStrides[d];
        rem /= p.dims[d];
      }
    }
    int64_t k = wrapIndex(static_cast<int64_t>(idx[lin]), p.axisDim);
    out[lin] = k >= 0 && k < p.axisDim ? data[off + k * p.axisStride] : E(0);
  }
}

template <typename E, typename Ix>
__global__ void gatherNdKernel(E const* __restrict__ data, Ix const* __restrict__ idx, E* __restrict__ out,
                               GatherNdPlan p, int64_t total) {
  for (int64_t lin = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; lin < total;
       lin += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t e = lin % p.slab;
    int64_t row = lin / p.slab;
    int64_t off = (row / p.perBatch) * p.dataBatch;
    bool ok = true;
    for (int32_t t = 0; t < p.tupleLen; ++t) {
      int64_t k = wrapIndex(static_cast<int64_t>(idx[row * p.tupleLen + t]), p.tupleDims[t]);
      ok = ok && k >= 0 && k < p.tupleDims[t];
      off += k * p.tupleStrides[t];
    }
    out[lin] = ok ? data[off + e] : E(0);
  }
}

// Calls body with E bound to the unsigned type of elemSize bytes and Ix to the index type.
#define KILN_GATHER_DISPATCH(...)       \
  do {                                  \
    switch (elemSize) {                 \
      case 1: {                         \
        using E = uint8_t;              \
        KILN_GATHER_INDEX(__VA_ARGS__); \
      } break;                          \
      case 2: {                         \
        using E = uint16_t;             \
        KILN_GATHER_INDEX(__VA_ARGS__); \
      } break;                          \
      case 4: {                         \
        using E = uint32_t;             \
        KILN_GATHER_INDEX(__VA_ARGS__); \
      } break;                          \
      case 8: {                         \
        using E = uint64_t;             \
        KILN_GATHER_INDEX(__VA_ARGS__); \
      } break;                          \
      default:                          \
        return cudaErrorInvalidValue;   \
    }                                   \
  } while (0)
#define KILN_GATHER_INDEX(...) \
  if (indices64) {             \
    using Ix = int64_t;        \
    __VA_ARGS__;               \
  } else {                     \
    using Ix = int32_t;        \
    __VA_ARGS__;               \
  }

}  // namespace

cudaError_t launchGatherDefault(void const* data, void const* indices, bool indices64, void* out, int32_t elemSize,
                                GatherDefaultPlan const& p, cudaStream_t stream) {
  int64_t total = p.outer * p.nIdx * p.inner;
  if (total <= 0) return cudaSuccess;
  KILN_GATHER_DISPATCH(gatherDefaultKernel<E, Ix><<<dev::blocksFor(total), 256, 0, stream>>>(
      static_cast<E const*>(data), static_cast<Ix const*>(indices), static_cast<E*>(out), p, total));
  return cudaGetLastError();
}

cudaError_t launchGatherElement(void const* data, void const* indices, bool indices64, void* out, int32_t elemSize,
                                GatherElementPlan const& p, cudaStream_t stream) {
  int64_t total = 1;
  for (int32_t d = 0; d < p.rank; ++d) total *= p.dims[d];
  if (total <= 0) return cudaSuccess;
  KILN_GATHER_DISPATCH(gatherElementKernel<E, Ix><<<dev::blocksFor(total), 256, 0, stream>>>(
      static_cast<E const*>(data), static_cast<Ix const*>(indices), static_cast<E*>(out), p, total));
  return cudaGetLastError();
}

cudaError_t launchGatherNd(void const* data, void const* indices, bool indices64, void* out, int32_t elemSize,
                           GatherNdPlan const& p, cudaStream_t stream) {
  int64_t total = p.batch * p.perBatch * p.slab;
  if (total <= 0) return cudaSuccess;
  KILN_GATHER_DISPATCH(gatherNdKernel<E, Ix><<<dev::blocksFor(total), 256, 0, stream>>>(
      static_cast<E const*>(data), static_cast<Ix const*>(indices), static_cast<E*>(out), p, total));
  return cudaGetLastError();
}

}  // namespace kiln::cuda
