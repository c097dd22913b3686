// Device-side element types for the CUDA kernels (.cu files only): storage types of Kiln's DataType values and
// their conversions through float (fp16/bf16/fp8 compute in fp32) or exact integers. Kernels take a DType code
// (the DataType integer) and dispatch with KILN_CUDA_DISPATCH.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

namespace kiln::cuda::dev {

// DataType values (kiln_base.h), repeated here so .cu files include no Kiln header.
enum DType : int32_t {
  kFLOAT = 0, kHALF = 1, kINT8 = 2, kINT32 = 3, kBOOL = 4, kUINT8 = 5, kFP8 = 6, kBF16 = 7, kINT64 = 8,
};

template <typename T> struct Compute { using type = T; };          // the type math is done in
template <> struct Compute<__half> { using type = float; };
template <> struct Compute<__nv_bfloat16> { using type = float; };
template <> struct Compute<__nv_fp8_e4m3> { using type = float; };
template <> struct Compute<bool> { using type = int32_t; };

template <typename T> __device__ __forceinline__ float toFloat(T v) { return static_cast<float>(v); }
template <> __device__ __forceinline__ float toFloat(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float toFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
template <> __device__ __forceinline__ float toFloat(__nv_fp8_e4m3 v) { return static_cast<float>(v); }

template <typename T> __device__ __forceinline__ T fromFloat(float v) { return static_cast<T>(v); }
template <> __device__ __forceinline__ __half fromFloat(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 fromFloat(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ __nv_fp8_e4m3 fromFloat(float v) { return __nv_fp8_e4m3(v); }
template <> __device__ __forceinline__ bool fromFloat(float v) { return v != 0.f; }

// Grid-stride loop bounds for n elements.
inline unsigned blocksFor(int64_t n, int threads = 256) {
  int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 * 16 ? 65535 * 16 : b));
}

}  // namespace kiln::cuda::dev

// Calls F<T>(args...) for the storage type of dtype code DT (float, half, bf16, fp8, int8, uint8, int32, int64,
// bool); evaluates to false for other codes.
#define KILN_CUDA_DISPATCH(DT, ...)                                                     \
  [&]() -> bool {                                                                       \
    switch (DT) {                                                                       \
      case ::kiln::cuda::dev::kFLOAT: { using T = float; __VA_ARGS__; return true; }    \
      case ::kiln::cuda::dev::kHALF: { using T = __half; __VA_ARGS__; return true; }    \
      case ::kiln::cuda::dev::kBF16: { using T = __nv_bfloat16; __VA_ARGS__; return true; } \
      case ::kiln::cuda::dev::kFP8: { using T = __nv_fp8_e4m3; __VA_ARGS__; return true; } \
      case ::kiln::cuda::dev::kINT8: { using T = int8_t; __VA_ARGS__; return true; }    \
      case ::kiln::cuda::dev::kUINT8: { using T = uint8_t; __VA_ARGS__; return true; }  \
      case ::kiln::cuda::dev::kINT32: { using T = int32_t; __VA_ARGS__; return true; }  \
      case ::kiln::cuda::dev::kINT64: { using T = int64_t; __VA_ARGS__; return true; }  \
      case ::kiln::cuda::dev::kBOOL: { using T = bool; __VA_ARGS__; return true; }      \
      default: return false;                                                            \
    }                                                                                   \
  }()

// KILN_CUDA_DISPATCH for the float storage types only (float, half, bf16: fp32 math); false for other codes.
#define KILN_CUDA_DISPATCH_FLOAT(DT, ...)                                                    \
  [&]() -> bool {                                                                            \
    switch (DT) {                                                                            \
      case ::kiln::cuda::dev::kFLOAT: { using T = float; __VA_ARGS__; return true; }         \
      case ::kiln::cuda::dev::kHALF: { using T = __half; __VA_ARGS__; return true; }         \
      case ::kiln::cuda::dev::kBF16: { using T = __nv_bfloat16; __VA_ARGS__; return true; }  \
      default: return false;                                                                 \
    }                                                                                        \
  }()
