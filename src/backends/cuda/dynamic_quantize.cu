// DynamicQuantize kernels: one warp per scale block. The warp reduces the block's absolute maximum (NaN ignored,
// as fmax does), derives and stores the scale, then quantizes the block. The rounding steps follow the
// reference: scale = float(absmax / qmax); stored = scale type(scale / dq); y = quantize(float(x / (stored * dq)))
// with the last division in double.
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/dynamic_quantize_kernels.h"

namespace kiln::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / 32;

__device__ __forceinline__ float loadScalar(int32_t dtype, void const* p) {
  switch (dtype) {
    case dev::kHALF:
      return dev::toFloat(*static_cast<__half const*>(p));
    case dev::kBF16:
      return dev::toFloat(*static_cast<__nv_bfloat16 const*>(p));
    default:
      return *static_cast<float const*>(p);
  }
}

// Rounds v to the scale type, stores it at scales[i] when `store`, and returns the stored value.
__device__ __forceinline__ float storeScale(int32_t dtype, void* scales, int64_t i, float v, bool store) {
  switch (dtype) {
    case dev::kHALF: {
      __half h = __float2half_rn(v);
      if (store) static_cast<__half*>(scales)[i] = h;
      return __half2float(h);
    }
    case dev::kBF16: {
      __nv_bfloat16 b = __float2bfloat16_rn(v);
      if (store) static_cast<__nv_bfloat16*>(scales)[i] = b;
      return __bfloat162float(b);
    }
    case dev::kFP8: {
      __nv_fp8_e4m3 f(v);  // round to nearest even, saturating to +-448, NaN kept
      if (store) static_cast<__nv_fp8_e4m3*>(scales)[i] = f;
      return static_cast<float>(f);
    }
    default:
      if (store) static_cast<float*>(scales)[i] = v;
      return v;
  }
}

template <typename TY>
struct QuantTraits;
template <>
struct QuantTraits<__nv_fp8_e4m3> {
  static constexpr float kMax = 448.f;
  __device__ static __nv_fp8_e4m3 quantize(float q) { return __nv_fp8_e4m3(q + 0.f); }
};
template <>
struct QuantTraits<int8_t> {
  static constexpr float kMax = 127.f;
  __device__ static int8_t quantize(float q) {
    if (isnan(q)) return 0;
    float r = fminf(fmaxf(rintf(q), -128.f), 127.f);  // half to even, saturate
    return static_cast<int8_t>(r);
  }
};

// Offset in x of element l (row-major inside the block) of a block.
__device__ __forceinline__ int64_t inBlockOffset(DynamicQuantizeShape const& s, int64_t l) {
  int64_t off = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    int64_t e = s.block[d];
    off += (l % e) * s.stride[d];
    l /= e;
  }
  return off;
}

template <typename TX, typename TY>
__global__ void __launch_bounds__(kThreads)
    dynamicQuantize(DynamicQuantizeShape s, int64_t numScales, int64_t blockVolume, TX const* __restrict__ x,
                    void const* dqPtr, int32_t dqType, TY* __restrict__ y, void* scales, int32_t scaleType) {
  int lane = threadIdx.x & 31;
  int64_t warp = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) >> 5;
  int64_t numWarps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  double dq = dqPtr ? static_cast<double>(loadScalar(dqType, dqPtr)) : 1.0;
  for (int64_t b = warp; b < numScales; b += numWarps) {
    int64_t base = 0, rest = b;
    for (int d = s.rank - 1; d >= 0; --d) {
      int64_t e = s.scale[d];
      base += (rest % e) * s.block[d] * s.stride[d];
      rest /= e;
    }
    float m = 0.f;
    for (int64_t l = lane; l < blockVolume; l += 32) m = fmaxf(m, fabsf(dev::toFloat(x[base + inBlockOffset(s, l)])));
    for (int d = 16; d > 0; d >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, d));
    float scale = m / QuantTraits<TY>::kMax;  // IEEE float division: float(absmax / qmax)
    float stored = storeScale(scaleType, scales, b, static_cast<float>(dq != 0.0 ? scale / dq : 0.0), lane == 0);
    double eff = static_cast<double>(stored) * dq;
    for (int64_t l = lane; l < blockVolume; l += 32) {
      int64_t off = base + inBlockOffset(s, l);
      float q = eff != 0.0 ? static_cast<float>(static_cast<double>(dev::toFloat(x[off])) / eff) : 0.f;
      y[off] = QuantTraits<TY>::quantize(q);
    }
  }
}

template <typename TX>
bool launchFor(int32_t yType, int32_t scaleType, int32_t dqType, DynamicQuantizeShape const& shape, int64_t numScales,
               int64_t blockVolume, void const* x, void const* dq, void* y, void* scales, cudaStream_t stream) {
  int64_t blocks64 = (numScales + kWarpsPerBlock - 1) / kWarpsPerBlock;
  unsigned blocks = static_cast<unsigned>(blocks64 < 65535 * 16 ? blocks64 : 65535 * 16);
  if (yType == dev::kFP8)
    dynamicQuantize<TX, __nv_fp8_e4m3>
        <<<blocks, kThreads, 0, stream>>>(shape, numScales, blockVolume, static_cast<TX const*>(x), dq, dqType,
                                          static_cast<__nv_fp8_e4m3*>(y), scales, scaleType);
  else if (yType == dev::kINT8)
    dynamicQuantize<TX, int8_t><<<blocks, kThreads, 0, stream>>>(shape, numScales, blockVolume,
                                                                 static_cast<TX const*>(x), dq, dqType,
                                                                 static_cast<int8_t*>(y), scales, scaleType);
  else
    return false;
  return true;
}

}  // namespace

bool launchDynamicQuantize(int32_t xType, int32_t yType, int32_t scaleType, int32_t dqType,
                           DynamicQuantizeShape const& shape, int64_t numScales, int64_t blockVolume, void const* x,
                           void const* dq, void* y, void* scales, cudaStream_t stream) {
  if (scaleType != dev::kFLOAT && scaleType != dev::kHALF && scaleType != dev::kBF16 && scaleType != dev::kFP8)
    return false;
  if (dq && dqType != dev::kFLOAT && dqType != dev::kHALF && dqType != dev::kBF16) return false;
  switch (xType) {
    case dev::kFLOAT:
      return launchFor<float>(yType, scaleType, dqType, shape, numScales, blockVolume, x, dq, y, scales, stream);
    case dev::kHALF:
      return launchFor<__half>(yType, scaleType, dqType, shape, numScales, blockVolume, x, dq, y, scales, stream);
    case dev::kBF16:
      return launchFor<__nv_bfloat16>(yType, scaleType, dqType, shape, numScales, blockVolume, x, dq, y, scales,
                                      stream);
    default:
      return false;
  }
}

}  // namespace kiln::cuda
