// Device side of Shape, OneHot and ReverseSequence (index_ops_kernels.h).
#include <cstdint>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/index_ops_kernels.h"

namespace kiln::cuda {
namespace {

template <typename T>
__global__ void writeShapeKernel(T* out, ShapeValues dims) {
  for (int32_t i = static_cast<int32_t>(threadIdx.x); i < dims.rank; i += static_cast<int32_t>(blockDim.x))
    out[i] = static_cast<T>(dims.d[i]);
}

template <typename Ix>
__device__ __forceinline__ int64_t loadIndex(Ix v) {
  return static_cast<int64_t>(v);  // float: truncation toward zero, as the reference does
}

template <typename E, typename Ix>
__global__ void oneHotKernel(Ix const* __restrict__ idx, E const* __restrict__ values, E* __restrict__ out,
                             int64_t depth, int64_t inner, int64_t total) {
  E off = values[0], on = values[1];
  for (int64_t lin = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; lin < total;
       lin += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t i = lin % inner;
    int64_t row = lin / inner;
    int64_t j = row % depth;
    int64_t o = row / depth;
    int64_t k = loadIndex(idx[o * inner + i]);
    if (k < 0) k += depth;
    out[lin] = j == k ? on : off;
  }
}

template <typename E, typename L>
__global__ void reverseSequenceKernel(E const* __restrict__ x, L const* __restrict__ lens, E* __restrict__ y, int64_t n,
                                      int64_t batch, int64_t batchStride, int64_t steps, int64_t seqStride) {
  for (int64_t lin = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; lin < n;
       lin += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t b = (lin / batchStride) % batch;
    int64_t t = (lin / seqStride) % steps;
    int64_t l = static_cast<int64_t>(lens[b]);
    int64_t src = l >= 0 && l <= steps && t < l ? lin + (l - 1 - 2 * t) * seqStride : lin;
    y[lin] = x[src];
  }
}

template <typename E>
cudaError_t oneHotAs(void const* indices, int32_t indexCode, void const* values, void* out, int64_t depth,
                     int64_t inner, int64_t total, cudaStream_t stream) {
  unsigned blocks = dev::blocksFor(total);
  auto const* v = static_cast<E const*>(values);
  auto* o = static_cast<E*>(out);
  switch (indexCode) {
    case kIndexInt32:
      oneHotKernel<E><<<blocks, 256, 0, stream>>>(static_cast<int32_t const*>(indices), v, o, depth, inner, total);
      break;
    case kIndexInt64:
      oneHotKernel<E><<<blocks, 256, 0, stream>>>(static_cast<int64_t const*>(indices), v, o, depth, inner, total);
      break;
    case kIndexFloat:
      oneHotKernel<E><<<blocks, 256, 0, stream>>>(static_cast<float const*>(indices), v, o, depth, inner, total);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <typename E>
cudaError_t reverseSequenceAs(void const* x, void const* lens, bool lens64, void* y, int64_t n, int64_t batch,
                              int64_t batchStride, int64_t steps, int64_t seqStride, cudaStream_t stream) {
  unsigned blocks = dev::blocksFor(n);
  if (lens64)
    reverseSequenceKernel<E><<<blocks, 256, 0, stream>>>(static_cast<E const*>(x), static_cast<int64_t const*>(lens),
                                                         static_cast<E*>(y), n, batch, batchStride, steps, seqStride);
  else
    reverseSequenceKernel<E><<<blocks, 256, 0, stream>>>(static_cast<E const*>(x), static_cast<int32_t const*>(lens),
                                                         static_cast<E*>(y), n, batch, batchStride, steps, seqStride);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launchWriteShape(void* out, bool out64, ShapeValues const& dims, cudaStream_t stream) {
  if (dims.rank <= 0) return cudaSuccess;
  if (out64)
    writeShapeKernel<<<1, 32, 0, stream>>>(static_cast<int64_t*>(out), dims);
  else
    writeShapeKernel<<<1, 32, 0, stream>>>(static_cast<int32_t*>(out), dims);
  return cudaGetLastError();
}

cudaError_t launchOneHot(void const* indices, int32_t indexCode, void const* values, void* out, int32_t elemSize,
                         int64_t outer, int64_t depth, int64_t inner, cudaStream_t stream) {
  int64_t total = outer * depth * inner;
  if (total <= 0) return cudaSuccess;
  switch (elemSize) {
    case 1:
      return oneHotAs<uint8_t>(indices, indexCode, values, out, depth, inner, total, stream);
    case 2:
      return oneHotAs<uint16_t>(indices, indexCode, values, out, depth, inner, total, stream);
    case 4:
      return oneHotAs<uint32_t>(indices, indexCode, values, out, depth, inner, total, stream);
    case 8:
      return oneHotAs<uint64_t>(indices, indexCode, values, out, depth, inner, total, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launchReverseSequence(void const* x, void const* lens, bool lens64, void* y, int32_t elemSize, int64_t n,
                                  int64_t batch, int64_t batchStride, int64_t steps, int64_t seqStride,
                                  cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  switch (elemSize) {
    case 1:
      return reverseSequenceAs<uint8_t>(x, lens, lens64, y, n, batch, batchStride, steps, seqStride, stream);
    case 2:
      return reverseSequenceAs<uint16_t>(x, lens, lens64, y, n, batch, batchStride, steps, seqStride, stream);
    case 4:
      return reverseSequenceAs<uint32_t>(x, lens, lens64, y, n, batch, batchStride, steps, seqStride, stream);
    case 8:
      return reverseSequenceAs<uint64_t>(x, lens, lens64, y, n, batch, batchStride, steps, seqStride, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace kiln::cuda
