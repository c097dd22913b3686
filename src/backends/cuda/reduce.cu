// Reduce kernels: one block per output (threads stride over the reduced elements, then a shuffle tree) or, for
// short reductions feeding many outputs, one thread per output. fp32 accumulation for float storage; exact
// wrapping int64 arithmetic for integers (as the reference); NaN propagates through max/min.
#include <cstdint>
#include <type_traits>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/reduce_device.cuh"
#include "backends/cuda/reduce_kernels.h"

namespace kiln::cuda {
namespace {

template <typename T>
struct RedAcc {
  using A = float;
};
template <>
struct RedAcc<int32_t> {
  using A = int64_t;
};
template <>
struct RedAcc<int64_t> {
  using A = int64_t;
};
template <>
struct RedAcc<bool> {
  using A = int64_t;
};

struct Combine {
  int32_t op;
  __device__ __forceinline__ float operator()(float a, float b) const {
    switch (op) {
      case kRedProd:
        return a * b;
      case kRedMax:
        return red::nanMax(a, b);
      case kRedMin:
        return red::nanMin(a, b);
      default:
        return a + b;  // sum, avg
    }
  }
  __device__ __forceinline__ int64_t operator()(int64_t a, int64_t b) const {
    // Unsigned arithmetic wraps like the reference's, without undefined behaviour.
    switch (op) {
      case kRedProd:
        return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
      case kRedMax:
        return a > b ? a : b;
      case kRedMin:
        return a < b ? a : b;
      default:
        return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    }
  }
};

template <typename T>
__device__ __forceinline__ typename RedAcc<T>::A identity(int32_t op) {
  using A = typename RedAcc<T>::A;
  if constexpr (std::is_same_v<A, float>) {
    switch (op) {
      case kRedProd:
        return 1.f;
      case kRedMax:
        return -INFINITY;
      case kRedMin:
        return INFINITY;
      default:
        return 0.f;
    }
  } else {
    bool const isBool = std::is_same_v<T, bool>;
    switch (op) {
      case kRedProd:
        return 1;
      case kRedMax:
        return isBool ? 0 : INT64_MIN;
      case kRedMin:
        return isBool ? 1 : INT64_MAX;
      default:
        return 0;
    }
  }
}

template <typename T>
__device__ __forceinline__ typename RedAcc<T>::A load(T v) {
  if constexpr (std::is_same_v<typename RedAcc<T>::A, float>)
    return dev::toFloat(v);
  else if constexpr (std::is_same_v<T, bool>)
    return v ? 1 : 0;
  else
    return static_cast<int64_t>(v);
}

template <typename T>
__device__ __forceinline__ T finish(typename RedAcc<T>::A acc, int32_t op, int64_t n) {
  if constexpr (std::is_same_v<typename RedAcc<T>::A, float>) {
    if (op == kRedAvg) acc /= static_cast<float>(n);  // 0/0: NaN over an empty set, as the reference
    return dev::fromFloat<T>(acc);
  } else if constexpr (std::is_same_v<T, bool>) {
    return acc != 0;
  } else {
    if (op == kRedAvg) acc = n > 0 ? acc / n : 0;  // truncates toward zero, as the reference
    return static_cast<T>(acc);
  }
}

template <typename T>
__global__ void reduceBlockKernel(T const* __restrict__ x, T* __restrict__ y, StridedSpace outer, StridedSpace inner,
                                  int32_t op) {
  using A = typename RedAcc<T>::A;
  __shared__ A scratch[33];
  Combine f{op};
  A const id = identity<T>(op);
  for (int64_t o = blockIdx.x; o < outer.count; o += gridDim.x) {
    T const* base = x + red::offset0(outer, o);
    A acc = id;
    for (int64_t i = threadIdx.x; i < inner.count; i += blockDim.x) acc = f(acc, load(base[red::offset0(inner, i)]));
    acc = red::blockReduce(acc, f, id, scratch);
    if (threadIdx.x == 0) y[o] = finish<T>(acc, op, inner.count);
  }
}

template <typename T>
__global__ void reduceThreadKernel(T const* __restrict__ x, T* __restrict__ y, StridedSpace outer, StridedSpace inner,
                                   int32_t op) {
  using A = typename RedAcc<T>::A;
  Combine f{op};
  A const id = identity<T>(op);
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < outer.count; o += step) {
    T const* base = x + red::offset0(outer, o);
    A acc = id;
    for (int64_t i = 0; i < inner.count; ++i) acc = f(acc, load(base[red::offset0(inner, i)]));
    y[o] = finish<T>(acc, op, inner.count);
  }
}

template <typename T>
void launch(void const* x, void* y, StridedSpace const& outer, StridedSpace const& inner, int32_t op,
            cudaStream_t stream) {
  auto const* xp = static_cast<T const*>(x);
  auto* yp = static_cast<T*>(y);
  bool const shortRows = inner.count <= 16 || (inner.count <= 64 && outer.count >= 4096);
  if (shortRows) {
    reduceThreadKernel<T><<<dev::blocksFor(outer.count), 256, 0, stream>>>(xp, yp, outer, inner, op);
  } else {
    int threads = inner.count >= 256 ? 256 : static_cast<int>((inner.count + 31) / 32 * 32);
    auto blocks = static_cast<unsigned>(outer.count < (1 << 20) ? outer.count : (1 << 20));
    reduceBlockKernel<T><<<blocks, threads, 0, stream>>>(xp, yp, outer, inner, op);
  }
}

}  // namespace

bool launchReduce(int32_t dtype, void const* x, void* y, StridedSpace const& outer, StridedSpace const& inner,
                  int32_t op, cudaStream_t stream) {
  switch (dtype) {
    case dev::kFLOAT:
      launch<float>(x, y, outer, inner, op, stream);
      return true;
    case dev::kHALF:
      launch<__half>(x, y, outer, inner, op, stream);
      return true;
    case dev::kBF16:
      launch<__nv_bfloat16>(x, y, outer, inner, op, stream);
      return true;
    case dev::kINT32:
      launch<int32_t>(x, y, outer, inner, op, stream);
      return true;
    case dev::kINT64:
      launch<int64_t>(x, y, outer, inner, op, stream);
      return true;
    case dev::kBOOL:
      launch<bool>(x, y, outer, inner, op, stream);
      return true;
    default:
      return false;
  }
}

}  // namespace kiln::cuda
