// Einsum kernels: one thread per output element looping over the summed labels (odometer over the inputs'
// offsets), or one block per output element sharing the sum when the output is small and the sum long.
// Floats accumulate in fp32, integers in wrapping 64-bit arithmetic as the reference does.
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/einsum_kernels.h"

namespace kiln::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxIn = EinsumParams::kMaxInputs;

// Accumulation: fp32 for float storage, uint64 (wrapping, as the reference's int64 math) for integers.
template <typename T>
struct EinsumAcc {
  using type = float;
  static constexpr bool kFloat = true;
};
template <typename T>
struct IntAcc {
  using type = unsigned long long;
  static constexpr bool kFloat = false;
};
template <>
struct EinsumAcc<int8_t> : IntAcc<int8_t> {};
template <>
struct EinsumAcc<uint8_t> : IntAcc<uint8_t> {};
template <>
struct EinsumAcc<int32_t> : IntAcc<int32_t> {};
template <>
struct EinsumAcc<int64_t> : IntAcc<int64_t> {};

template <typename T, typename Acc>
__device__ __forceinline__ Acc loadAcc(void const* p, int64_t i) {
  T v = static_cast<T const*>(p)[i];
  if constexpr (EinsumAcc<T>::kFloat) {
    return dev::toFloat(v);
  } else {
    return static_cast<Acc>(static_cast<long long>(v));
  }
}

template <typename T, typename Acc>
__device__ __forceinline__ T storeAcc(Acc a) {
  if constexpr (EinsumAcc<T>::kFloat) {
    return dev::fromFloat<T>(a);
  } else {
    return static_cast<T>(static_cast<long long>(a));  // wraps like the reference's C cast
  }
}

// Offsets of output element o in each input (loops [0, numOut)).
__device__ __forceinline__ void outputOffsets(EinsumParams const& p, int64_t o, int64_t (&off)[kMaxIn]) {
#pragma unroll
  for (int k = 0; k < kMaxIn; ++k) off[k] = 0;
  for (int j = p.numOut - 1; j >= 0; --j) {
    int64_t e = p.ext[j];
    int64_t i = o % e;
    o /= e;
#pragma unroll
    for (int k = 0; k < kMaxIn; ++k)
      if (k < p.numInputs) off[k] += i * p.stride[k][j];
  }
}

template <typename T, typename Acc>
__device__ __forceinline__ Acc product(EinsumParams const& p, int64_t const (&off)[kMaxIn]) {
  Acc prod = loadAcc<T, Acc>(p.in[0], off[0]);
#pragma unroll
  for (int k = 1; k < kMaxIn; ++k)
    if (k < p.numInputs) prod = prod * loadAcc<T, Acc>(p.in[k], off[k]);
  return prod;
}

template <typename T>
__global__ void einsumDirect(EinsumParams p, T* __restrict__ y, int64_t outCount, int64_t sumCount) {
  using Acc = typename EinsumAcc<T>::type;
  int32_t const first = p.numOut, last = p.numOut + p.numSum;  // summed loops
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < outCount;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[kMaxIn];
    outputOffsets(p, o, off);
    int64_t idx[EinsumParams::kMaxLoops];
    for (int j = first; j < last; ++j) idx[j] = 0;
    Acc acc = Acc(0);
    for (int64_t s = 0; s < sumCount; ++s) {
      acc = acc + product<T, Acc>(p, off);
      // Odometer over the summed loops, last fastest.
      for (int j = last - 1; j >= first; --j) {
        if (++idx[j] < p.ext[j]) {
#pragma unroll
          for (int k = 0; k < kMaxIn; ++k)
            if (k < p.numInputs) off[k] += p.stride[k][j];
          break;
        }
#pragma unroll
        for (int k = 0; k < kMaxIn; ++k)
          if (k < p.numInputs) off[k] -= p.stride[k][j] * (p.ext[j] - 1);
        idx[j] = 0;
      }
    }
    y[o] = storeAcc<T, Acc>(acc);
  }
}

template <typename Acc>
__device__ __forceinline__ Acc blockSum(Acc v, Acc* shared) {
  for (int d = 16; d > 0; d >>= 1) v = v + __shfl_down_sync(0xffffffffu, v, d);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  Acc r = Acc(0);
  if (threadIdx.x == 0)
    for (int w = 0; w < kThreads / 32; ++w) r = r + shared[w];
  __syncthreads();  // shared is reused by the next output
  return r;
}

// One block per output element: the threads split the summed index space (decomposed per element).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    einsumBlock(EinsumParams p, T* __restrict__ y, int64_t outCount, int64_t sumCount) {
  using Acc = typename EinsumAcc<T>::type;
  __shared__ Acc shared[kThreads / 32];
  int32_t const first = p.numOut, last = p.numOut + p.numSum;
  for (int64_t o = blockIdx.x; o < outCount; o += gridDim.x) {
    int64_t base[kMaxIn];
    outputOffsets(p, o, base);
    Acc acc = Acc(0);
    for (int64_t s = threadIdx.x; s < sumCount; s += kThreads) {
      int64_t off[kMaxIn];
#pragma unroll
      for (int k = 0; k < kMaxIn; ++k) off[k] = base[k];
      int64_t rest = s;
      for (int j = last - 1; j >= first; --j) {
        int64_t e = p.ext[j];
        int64_t i = rest % e;
        rest /= e;
#pragma unroll
        for (int k = 0; k < kMaxIn; ++k)
          if (k < p.numInputs) off[k] += i * p.stride[k][j];
      }
      acc = acc + product<T, Acc>(p, off);
    }
    Acc total = blockSum(acc, shared);
    if (threadIdx.x == 0) y[o] = storeAcc<T, Acc>(total);
  }
}

template <typename T>
void launch(EinsumParams const& p, void* y, int64_t outCount, int64_t sumCount, cudaStream_t stream) {
  // Few outputs with long sums: a block per output keeps the GPU busy; otherwise a thread per output.
  if (sumCount >= 512 && outCount < 16384) {
    unsigned blocks = static_cast<unsigned>(outCount < 65535 * 16 ? outCount : 65535 * 16);
    einsumBlock<T><<<blocks, kThreads, 0, stream>>>(p, static_cast<T*>(y), outCount, sumCount);
  } else {
    einsumDirect<T>
        <<<dev::blocksFor(outCount, kThreads), kThreads, 0, stream>>>(p, static_cast<T*>(y), outCount, sumCount);
  }
}

}  // namespace

bool launchEinsum(int32_t dtype, EinsumParams const& p, void* y, int64_t outCount, int64_t sumCount,
                  cudaStream_t stream) {
  switch (dtype) {
    case dev::kFLOAT:
      launch<float>(p, y, outCount, sumCount, stream);
      return true;
    case dev::kHALF:
      launch<__half>(p, y, outCount, sumCount, stream);
      return true;
    case dev::kBF16:
      launch<__nv_bfloat16>(p, y, outCount, sumCount, stream);
      return true;
    case dev::kINT8:
      launch<int8_t>(p, y, outCount, sumCount, stream);
      return true;
    case dev::kUINT8:
      launch<uint8_t>(p, y, outCount, sumCount, stream);
      return true;
    case dev::kINT32:
      launch<int32_t>(p, y, outCount, sumCount, stream);
      return true;
    case dev::kINT64:
      launch<int64_t>(p, y, outCount, sumCount, stream);
      return true;
    default:
      return false;
  }
}

}  // namespace kiln::cuda
