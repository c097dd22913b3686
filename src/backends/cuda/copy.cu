// Device side of the data-movement family's generic kernels (copy_kernels.h): the strided gather-copy and the
// sampled copy. Elements move as unsigned integers of their byte width, so every storage type is exact.
#include <cstdint>

#include "backends/cuda/copy_kernels.h"
#include "backends/cuda/device_types.cuh"

namespace kiln::cuda {
namespace {

// I: the type of the coordinate arithmetic (32-bit when every linear index fits, which is much cheaper).
template <typename E, typename I>
__global__ void stridedCopyKernel(E const* __restrict__ in, E* __restrict__ out, CopyPlan p, I n) {
  for (I lin = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; lin < n;
       lin += static_cast<I>(gridDim.x) * blockDim.x) {
    I rem = lin;
    int64_t src = 0, dst = 0;
#pragma unroll
    for (int32_t d = kCopyMaxRank - 1; d >= 0; --d) {
      if (d < p.rank) {
        I dim = static_cast<I>(p.dims[d]);
        I c = rem % dim;
        rem /= dim;
        src += static_cast<int64_t>(c) * p.inStrides[d];
        dst += static_cast<int64_t>(c) * p.outStrides[d];
      }
    }
    if (p.rank2 > 0) {
      I l = static_cast<I>(src);
      src = 0;
#pragma unroll
      for (int32_t d = kCopyMaxRank - 1; d >= 0; --d) {
        if (d < p.rank2) {
          I dim = static_cast<I>(p.dims2[d]);
          I c = l % dim;
          l /= dim;
          src += static_cast<int64_t>(c) * p.strides2[d];
        }
      }
    }
    out[p.outOffset + dst] = in[p.inOffset + src];
  }
}

template <typename E>
cudaError_t stridedCopyAs(void const* in, void* out, CopyPlan const& p, int64_t n, cudaStream_t stream) {
  int64_t n2 = 1;
  for (int32_t d = 0; d < p.rank2; ++d) n2 *= p.dims2[d];
  unsigned blocks = dev::blocksFor(n);
  if (n < INT32_MAX && n2 < INT32_MAX)
    stridedCopyKernel<E, uint32_t>
        <<<blocks, 256, 0, stream>>>(static_cast<E const*>(in), static_cast<E*>(out), p, static_cast<uint32_t>(n));
  else
    stridedCopyKernel<E, int64_t><<<blocks, 256, 0, stream>>>(static_cast<E const*>(in), static_cast<E*>(out), p, n);
  return cudaGetLastError();
}

__device__ __forceinline__ int64_t positiveMod(int64_t a, int64_t n) {
  int64_t m = a % n;
  return m < 0 ? m + n : m;
}

template <typename E>
__global__ void sampledCopyKernel(E const* __restrict__ in, E* __restrict__ out, SamplePlan p, int64_t n) {
  E fill;
  if (p.fillDevice)
    fill = *static_cast<E const*>(p.fillDevice);
  else
    fill = static_cast<E>(p.fillBits);
  for (int64_t lin = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; lin < n;
       lin += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rem = lin, off = 0, inStride = 1;
    bool isFill = false;
#pragma unroll
    for (int32_t d = kCopyMaxRank - 1; d >= 0; --d) {
      if (d < p.rank) {
        int64_t c = rem % p.outDims[d];
        rem /= p.outDims[d];
        int64_t m = p.inDims[d];
        int64_t s = p.start[d] + c * p.stride[d];
        if (s < 0 || s >= m) {
          switch (p.mode) {
            case kSampleWrap:
              s = positiveMod(s, m);
              break;
            case kSampleClamp:
              s = s < 0 ? 0 : m - 1;
              break;
            case kSampleReflect:
              if (m == 1) {
                s = 0;
              } else {
                int64_t period = 2 * (m - 1);
                s = positiveMod(s, period);
                if (s >= m) s = period - s;
              }
              break;
            default:
              isFill = true;
              s = 0;
              break;  // kSampleFill (strict mode never gets here)
          }
        }
        off += s * inStride;
        inStride *= m;
      }
    }
    out[lin] = isFill ? fill : in[off];
  }
}

template <typename E>
cudaError_t sampledCopyAs(void const* in, void* out, SamplePlan const& p, int64_t n, cudaStream_t stream) {
  sampledCopyKernel<E><<<dev::blocksFor(n), 256, 0, stream>>>(static_cast<E const*>(in), static_cast<E*>(out), p, n);
  return cudaGetLastError();
}

}  // namespace

int32_t widenCopyPlan(void const* in, void const* out, int32_t elemSize, CopyPlan& p) {
  if (p.rank2 != 0 || p.rank < 1 || elemSize <= 0 || elemSize >= 16) return 1;
  int32_t last = p.rank - 1;
  if (p.inStrides[last] != 1 || p.outStrides[last] != 1) return 1;
  for (int32_t k = 16 / elemSize; k > 1; k /= 2) {
    auto const bytes = static_cast<uintptr_t>(k) * static_cast<uintptr_t>(elemSize);
    bool ok = p.dims[last] % k == 0 && p.inOffset % k == 0 && p.outOffset % k == 0 &&
              reinterpret_cast<uintptr_t>(in) % bytes == 0 && reinterpret_cast<uintptr_t>(out) % bytes == 0;
    for (int32_t d = 0; d < last && ok; ++d) ok = p.inStrides[d] % k == 0 && p.outStrides[d] % k == 0;
    if (!ok) continue;
    p.dims[last] /= k;
    for (int32_t d = 0; d < last; ++d) {
      p.inStrides[d] /= k;
      p.outStrides[d] /= k;
    }
    p.inOffset /= k;
    p.outOffset /= k;
    return k;
  }
  return 1;
}

cudaError_t launchStridedCopy(void const* in, void* out, int32_t elemSize, CopyPlan const& original,
                              cudaStream_t stream) {
  int64_t n = 1;
  for (int32_t d = 0; d < original.rank; ++d) n *= original.dims[d];
  if (n <= 0) return cudaSuccess;
  // Rows contiguous on both sides move in 16-, 8- or 4-byte words: far fewer threads and index divisions, and
  // each thread has more bytes in flight (2-byte elements one per thread leave HBM mostly idle).
  CopyPlan plan = original;
  int32_t k = widenCopyPlan(in, out, elemSize, plan);
  if (k > 1) {
    n /= k;
    elemSize *= k;
  }
  switch (elemSize) {
    case 16:
      return stridedCopyAs<uint4>(in, out, plan, n, stream);
    case 1:
      return stridedCopyAs<uint8_t>(in, out, plan, n, stream);
    case 2:
      return stridedCopyAs<uint16_t>(in, out, plan, n, stream);
    case 4:
      return stridedCopyAs<uint32_t>(in, out, plan, n, stream);
    case 8:
      return stridedCopyAs<uint64_t>(in, out, plan, n, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launchSampledCopy(void const* in, void* out, int32_t elemSize, SamplePlan const& plan,
                              cudaStream_t stream) {
  int64_t n = 1;
  for (int32_t d = 0; d < plan.rank; ++d) n *= plan.outDims[d];
  if (n <= 0) return cudaSuccess;
  switch (elemSize) {
    case 1:
      return sampledCopyAs<uint8_t>(in, out, plan, n, stream);
    case 2:
      return sampledCopyAs<uint16_t>(in, out, plan, n, stream);
    case 4:
      return sampledCopyAs<uint32_t>(in, out, plan, n, stream);
    case 8:
      return sampledCopyAs<uint64_t>(in, out, plan, n, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace kiln::cuda
