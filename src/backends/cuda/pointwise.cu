// Pointwise CUDA kernels: Cast, ElementWise, Unary, Activation, Select, ParametricReLU, Scale, Quantize and
// Dequantize. Grid-stride loops; broadcast operands indexed through pw::Broadcast; fp16/bf16 computed in fp32,
// integers in int64 (wrapping as the reference does), conversions through double where the reference's rounding
// (double, then float, then the storage type) must be reproduced bit for bit.
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "backends/cuda/activation.cuh"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/pointwise_kernels.h"

namespace kiln::cuda::pw {
namespace {

using dev::DType;

constexpr int kThreads = 256;

template <typename T>
constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16> ||
                          std::is_same_v<T, __nv_fp8_e4m3>;

__device__ __forceinline__ int64_t firstIndex() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t gridStride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// Elements per thread per grid-stride step: element i, i + s, ..., i + (kUnroll - 1) s (s = grid size, so each
// load stays coalesced across the warp), all loaded before any is computed or stored. One 2-byte element per
// thread leaves too few bytes in flight to keep HBM busy.
constexpr int kUnroll = 4;

// Blocks for n elements: kUnroll per thread from kUnrollFrom elements on; below, one per thread (the grid-stride
// loop is the same; small tensors are latency-bound, and more blocks spread them over more SMs).
constexpr int64_t kUnrollFrom = int64_t{1} << 20;
inline unsigned unrolledBlocks(int64_t n) {
  return dev::blocksFor(n < kUnrollFrom ? n : (n + kUnroll - 1) / kUnroll, kThreads);
}

// The unrolled grid-stride loop over a contiguous input: loads x[i] for the kUnroll elements of each step, then
// calls store(value, i) for each (cast, unary and activation share it).
template <typename T, typename Store>
__device__ __forceinline__ void forEachUnrolled(T const* x, int64_t n, Store store) {
  int64_t const s = gridStride();
  for (int64_t i0 = firstIndex(); i0 < n; i0 += s * kUnroll) {
    T v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (i0 + u * s < n) v[u] = x[i0 + u * s];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (i0 + u * s < n) store(v[u], i0 + u * s);
  }
}

// Offsets of output element i into K operands (K <= kMaxOperands). Where every linear index fits in 32 bits
// (n < 2^31: operands are no larger than the output), the divisions are 32-bit, several times cheaper.
template <int K>
__device__ __forceinline__ void operandOffsets(Broadcast const& bc, int64_t i, int64_t (&off)[K]) {
#pragma unroll
  for (int k = 0; k < K; ++k) off[k] = 0;
  if (bc.small) {
    auto r = static_cast<uint32_t>(i);
    uint32_t o[K] = {};
    for (int d = bc.rank - 1; d >= 0; --d) {
      auto e = static_cast<uint32_t>(bc.dims[d]);
      uint32_t q = r / e;
      uint32_t idx = r - q * e;
      r = q;
#pragma unroll
      for (int k = 0; k < K; ++k) o[k] += idx * static_cast<uint32_t>(bc.strides[k][d]);
    }
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] = o[k];
    return;
  }
  for (int d = bc.rank - 1; d >= 0; --d) {
    int64_t e = bc.dims[d];
    int64_t q = i / e;
    int64_t idx = i - q * e;
    i = q;
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] += idx * bc.strides[k][d];
  }
}

// ---- conversions matching the reference (core/dtype.h fromDouble / reference_util storeFrom*) ----

template <typename T>
__device__ __forceinline__ double loadDouble(T v) {
  if constexpr (kIsFloat<T>)
    return static_cast<double>(dev::toFloat(v));
  else
    return static_cast<double>(v);
}

__device__ __forceinline__ __nv_fp8_e4m3 fp8FromFloat(float f) {
  // Round to nearest even, saturating to +-448 (infinities too), NaN kept: core/dtype.cc's floatToFp8e4m3.
  __nv_fp8_e4m3 r;
  r.__x = __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3);
  return r;
}

// A double stored with the reference's rounding: floats through float (RNE), integers truncated and saturated
// (NaN -> 0), bool as != 0.
template <typename O>
__device__ __forceinline__ O storeDouble(double d) {
  if constexpr (std::is_same_v<O, float>)
    return static_cast<float>(d);
  else if constexpr (std::is_same_v<O, __half>)
    return __float2half_rn(static_cast<float>(d));
  else if constexpr (std::is_same_v<O, __nv_bfloat16>)
    return __float2bfloat16_rn(static_cast<float>(d));
  else if constexpr (std::is_same_v<O, __nv_fp8_e4m3>)
    return fp8FromFloat(static_cast<float>(d));
  else if constexpr (std::is_same_v<O, bool>)
    return d != 0.0;
  else {
    if (isnan(d)) return O(0);
    double t = trunc(d);
    constexpr O lo = std::numeric_limits<O>::min();
    constexpr O hi = std::numeric_limits<O>::max();
    if (t <= static_cast<double>(lo)) return lo;
    if (t >= static_cast<double>(hi)) return hi;
    return static_cast<O>(t);
  }
}

// A float result stored to a float storage type (fp32 math for fp16/bf16 storage).
template <typename O>
__device__ __forceinline__ O storeFloat(float f) {
  if constexpr (std::is_same_v<O, __nv_fp8_e4m3>)
    return fp8FromFloat(f);
  else
    return dev::fromFloat<O>(f);
}

// Element i of a tensor of run-time type `type`, as double (exact for every type but int64 past 2^53).
__device__ __forceinline__ double loadAny(void const* p, int32_t type, int64_t i) {
  switch (type) {
    case dev::kFLOAT:
      return static_cast<float const*>(p)[i];
    case dev::kHALF:
      return __half2float(static_cast<__half const*>(p)[i]);
    case dev::kBF16:
      return __bfloat162float(static_cast<__nv_bfloat16 const*>(p)[i]);
    case dev::kFP8:
      return static_cast<float>(static_cast<__nv_fp8_e4m3 const*>(p)[i]);
    case dev::kINT8:
      return static_cast<int8_t const*>(p)[i];
    case dev::kUINT8:
      return static_cast<uint8_t const*>(p)[i];
    case dev::kINT32:
      return static_cast<int32_t const*>(p)[i];
    case dev::kINT64:
      return static_cast<double>(static_cast<int64_t const*>(p)[i]);
    case dev::kBOOL:
      return static_cast<bool const*>(p)[i] ? 1.0 : 0.0;
    default:
      return 0.0;
  }
}

// ---- Cast ----

template <typename I, typename O>
__device__ __forceinline__ void castOne(I v, void* y, int64_t i) {
  O* out = static_cast<O*>(y);
  if constexpr (!kIsFloat<I> && !kIsFloat<O>) {
    // Integer/bool to integer/bool: exact through int64, narrowing wraps (storeFromInt), bool is != 0.
    int64_t x = static_cast<int64_t>(v);
    if constexpr (std::is_same_v<O, bool>)
      out[i] = x != 0;
    else
      out[i] = static_cast<O>(x);
  } else {
    out[i] = storeDouble<O>(loadDouble(v));
  }
}

template <typename I>
__device__ __forceinline__ void castStore(I v, void* y, int32_t outType, int64_t i) {
    switch (outType) {
      case dev::kFLOAT:
        castOne<I, float>(v, y, i);
        break;
      case dev::kHALF:
        castOne<I, __half>(v, y, i);
        break;
      case dev::kBF16:
        castOne<I, __nv_bfloat16>(v, y, i);
        break;
      case dev::kFP8:
        castOne<I, __nv_fp8_e4m3>(v, y, i);
        break;
      case dev::kINT8:
        castOne<I, int8_t>(v, y, i);
        break;
      case dev::kUINT8:
        castOne<I, uint8_t>(v, y, i);
        break;
      case dev::kINT32:
        castOne<I, int32_t>(v, y, i);
        break;
      case dev::kINT64:
        castOne<I, int64_t>(v, y, i);
        break;
      case dev::kBOOL:
        castOne<I, bool>(v, y, i);
        break;
      default:
        break;
    }
}

template <typename I>
__global__ void castKernel(I const* x, void* y, int32_t outType, int64_t n) {
  forEachUnrolled(x, n, [&](I v, int64_t i) { castStore<I>(v, y, outType, i); });
}

// ---- ElementWise ----

__device__ __forceinline__ int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
__device__ __forceinline__ int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
__device__ __forceinline__ int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
__device__ __forceinline__ int64_t wrapNeg(int64_t a) { return static_cast<int64_t>(0 - static_cast<uint64_t>(a)); }

// Division by zero is 0 and INT64_MIN / -1 wraps, as in the reference.
__device__ __forceinline__ int64_t truncDiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return wrapNeg(a);
  return a / b;
}
__device__ __forceinline__ int64_t floorDiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return wrapNeg(a);
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
// Negative exponents give the truncated 1 / a^|b| (0 but for a == +-1), as in the reference.
__device__ __forceinline__ int64_t intPow(int64_t a, int64_t b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b & 1) ? -1 : 1;
    return 0;
  }
  int64_t result = 1, base = a;
  while (b > 0) {
    if (b & 1) result = wrapMul(result, base);
    base = wrapMul(base, base);
    b >>= 1;
  }
  return result;
}

__device__ __forceinline__ int64_t intBinary(int32_t op, int64_t a, int64_t b) {
  switch (op) {
    case kEwSum:
      return wrapAdd(a, b);
    case kEwProd:
      return wrapMul(a, b);
    case kEwMax:
      return a > b ? a : b;
    case kEwMin:
      return a < b ? a : b;
    case kEwSub:
      return wrapSub(a, b);
    case kEwDiv:
      return truncDiv(a, b);
    case kEwPow:
      return intPow(a, b);
    case kEwFloorDiv:
      return floorDiv(a, b);
    case kEwAnd:
      return (a != 0) && (b != 0);
    case kEwOr:
      return (a != 0) || (b != 0);
    case kEwXor:
      return (a != 0) != (b != 0);
    case kEwEqual:
      return a == b;
    case kEwGreater:
      return a > b;
    case kEwLess:
      return a < b;
    case kEwBitAnd:
      return a & b;
    case kEwBitOr:
      return a | b;
    case kEwBitXor:
      return a ^ b;
    default:
      return 0;
  }
}

// kMAX/kMIN propagate NaN (unlike fmaxf/fminf), as in the reference.
__device__ __forceinline__ float floatBinary(int32_t op, float a, float b) {
  switch (op) {
    case kEwSum:
      return a + b;
    case kEwProd:
      return a * b;
    case kEwMax:
      return (isnan(a) || isnan(b)) ? __int_as_float(0x7fc00000) : (a > b ? a : b);
    case kEwMin:
      return (isnan(a) || isnan(b)) ? __int_as_float(0x7fc00000) : (a < b ? a : b);
    case kEwSub:
      return a - b;
    case kEwDiv:
      return a / b;
    case kEwPow:
      return powf(a, b);
    case kEwFloorDiv:
      return floorf(a / b);
    case kEwAnd:
      return (a != 0.f) && (b != 0.f);
    case kEwOr:
      return (a != 0.f) || (b != 0.f);
    case kEwXor:
      return (a != 0.f) != (b != 0.f);
    case kEwEqual:
      return a == b;
    case kEwGreater:
      return a > b;
    case kEwLess:
      return a < b;
    default:
      return 0.f;
  }
}

__host__ __device__ __forceinline__ bool ewBoolOut(int32_t op) {
  return op == kEwAnd || op == kEwOr || op == kEwXor || op == kEwEqual || op == kEwGreater || op == kEwLess;
}

template <typename T, bool kContiguous>
__global__ void elementWiseKernel(T const* a, T const* b, void* y, int32_t op, int64_t n, Broadcast bc) {
  bool const boolOut = ewBoolOut(op) || std::is_same_v<T, bool>;
  int64_t const s = gridStride();
  for (int64_t i0 = firstIndex(); i0 < n; i0 += s * kUnroll) {
    T va[kUnroll], vb[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      int64_t i = i0 + u * s;
      if (i >= n) continue;
      int64_t off[2] = {i, i};
      if constexpr (!kContiguous) operandOffsets<2>(bc, i, off);
      va[u] = a[off[0]];
      vb[u] = b[off[1]];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      int64_t i = i0 + u * s;
      if (i >= n) continue;
      if constexpr (kIsFloat<T>) {
        float r = floatBinary(op, dev::toFloat(va[u]), dev::toFloat(vb[u]));
        if (boolOut)
          static_cast<bool*>(y)[i] = r != 0.f;
        else
          static_cast<T*>(y)[i] = storeFloat<T>(r);
      } else {
        int64_t r = intBinary(op, static_cast<int64_t>(va[u]), static_cast<int64_t>(vb[u]));
        if (boolOut)
          static_cast<bool*>(y)[i] = r != 0;
        else
          static_cast<T*>(y)[i] = static_cast<T>(r);
      }
    }
  }
}

// ---- Unary ----

__device__ __forceinline__ float floatUnary(int32_t op, float x) {
  switch (op) {
    case kUnExp:
      return expf(x);
    case kUnLog:
      return logf(x);
    case kUnSqrt:
      return sqrtf(x);
    case kUnRecip:
      return 1.0f / x;
    case kUnAbs:
      return fabsf(x);
    case kUnNeg:
      return -x;
    case kUnSin:
      return sinf(x);
    case kUnCos:
      return cosf(x);
    case kUnTan:
      return tanf(x);
    case kUnSinh:
      return sinhf(x);
    case kUnCosh:
      return coshf(x);
    case kUnAsin:
      return asinf(x);
    case kUnAcos:
      return acosf(x);
    case kUnAtan:
      return atanf(x);
    case kUnAsinh:
      return asinhf(x);
    case kUnAcosh:
      return acoshf(x);
    case kUnAtanh:
      return atanhf(x);
    case kUnCeil:
      return ceilf(x);
    case kUnFloor:
      return floorf(x);
    case kUnErf:
      return erff(x);
    case kUnNot:
      return x == 0.f ? 1.f : 0.f;
    case kUnSign:
      return isnan(x) ? x : (x > 0.f ? 1.f : (x < 0.f ? -1.f : 0.f));
    case kUnRound:
      return rintf(x);  // ties to even
    case kUnIsInf:
      return isinf(x) ? 1.f : 0.f;
    case kUnIsNan:
      return isnan(x) ? 1.f : 0.f;
    default:
      return x;
  }
}

__device__ __forceinline__ int64_t intUnary(int32_t op, int64_t x) {
  int64_t neg = wrapNeg(x);
  switch (op) {
    case kUnAbs:
      return x < 0 ? neg : x;
    case kUnNeg:
      return neg;
    case kUnSign:
      return x > 0 ? 1 : (x < 0 ? -1 : 0);
    case kUnNot:
      return x == 0 ? 1 : 0;
    case kUnBitNot:
      return ~x;
    default:
      return x;
  }
}

template <typename T>
__global__ void unaryKernel(T const* x, void* y, int32_t op, int64_t n) {
  bool const boolOut = op == kUnIsInf || op == kUnIsNan || std::is_same_v<T, bool>;
  forEachUnrolled(x, n, [&](T v, int64_t i) {
    if constexpr (kIsFloat<T>) {
      float r = floatUnary(op, dev::toFloat(v));
      if (boolOut)
        static_cast<bool*>(y)[i] = r != 0.f;
      else
        static_cast<T*>(y)[i] = storeFloat<T>(r);
    } else {
      int64_t r = intUnary(op, static_cast<int64_t>(v));
      if (boolOut)
        static_cast<bool*>(y)[i] = r != 0;
      else
        static_cast<T*>(y)[i] = static_cast<T>(r);
    }
  });
}

// ---- Activation (activation_math.h's formulas in fp32) ----


template <typename T>
__global__ void activationKernel(T const* x, T* y, int32_t act, float alpha, float beta, int64_t n) {
  forEachUnrolled(x, n,
                  [&](T v, int64_t i) { y[i] = storeFloat<T>(dev::activate<float>(act, dev::toFloat(v), alpha, beta)); });
}

// ---- Select, ParametricReLU ----

template <typename W, bool kContiguous>
__global__ void selectKernel(bool const* c, W const* a, W const* b, W* y, int64_t n, Broadcast bc) {
  int64_t const s = gridStride();
  for (int64_t i0 = firstIndex(); i0 < n; i0 += s * kUnroll) {
    W v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      int64_t i = i0 + u * s;
      if (i >= n) continue;
      int64_t off[3] = {i, i, i};
      if constexpr (!kContiguous) operandOffsets<3>(bc, i, off);
      v[u] = c[off[0]] ? a[off[1]] : b[off[2]];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (i0 + u * s < n) y[i0 + u * s] = v[u];
  }
}

template <typename T, bool kContiguous>
__global__ void preluKernel(T const* x, T const* slope, T* y, int64_t n, Broadcast bc) {
  for (int64_t i = firstIndex(); i < n; i += gridStride()) {
    int64_t off[2] = {i, i};
    if constexpr (!kContiguous) operandOffsets<2>(bc, i, off);
    T xv = x[i];
    float v = dev::toFloat(xv);
    y[i] = v >= 0.f ? xv : storeFloat<T>(dev::toFloat(slope[off[1]]) * v);
  }
}

// ---- Scale ----

template <typename T>
__global__ void scaleKernel(T const* x, T* y, Coef shift, Coef scale, Coef power, int64_t n, int64_t inner,
                            int64_t count) {
  for (int64_t i = firstIndex(); i < n; i += gridStride()) {
    int64_t ci = (i / inner) % count;
    float v = dev::toFloat(x[i]);
    float s = scale.data ? static_cast<float>(loadAny(scale.data, scale.type, ci)) : 1.f;
    float b = shift.data ? static_cast<float>(loadAny(shift.data, shift.type, ci)) : 0.f;
    v = fmaf(v, s, b);
    if (power.data) v = powf(v, static_cast<float>(loadAny(power.data, power.type, ci)));
    y[i] = storeFloat<T>(v);
  }
}

// ---- Quantize / Dequantize (quantize.cc: x / scale in double rounded to float; round half to even) ----

__device__ __forceinline__ int64_t scaleIndex(QuantIndex const& q, int64_t i) {
  if (!q.blocked) return (i / q.inner) % q.count;
  int64_t s = 0;
  for (int d = q.rank - 1; d >= 0; --d) {
    int64_t e = q.dims[d];
    int64_t next = i / e;
    s += (i - next * e) / q.block[d] * q.scaleStrides[d];
    i = next;
  }
  return s;
}

__global__ void quantizeKernel(void const* x, int32_t xType, void const* scale, int32_t scaleType, void const* zp,
                               int32_t zpType, void* y, int32_t yType, int64_t n, QuantIndex qi) {
  for (int64_t i = firstIndex(); i < n; i += gridStride()) {
    int64_t si = scaleIndex(qi, i);
    double q = static_cast<double>(static_cast<float>(loadAny(x, xType, i) / loadAny(scale, scaleType, si)));
    double z = zp ? loadAny(zp, zpType, si) : 0.0;
    if (yType == dev::kFP8) {
      static_cast<__nv_fp8_e4m3*>(y)[i] = fp8FromFloat(static_cast<float>(q + z));
      continue;
    }
    double lo = yType == dev::kINT8 ? -128.0 : 0.0;
    double hi = yType == dev::kINT8 ? 127.0 : 255.0;
    double r = isnan(q) ? 0.0 : rint(q) + z;
    int64_t v = static_cast<int64_t>(fmin(fmax(r, lo), hi));
    if (yType == dev::kINT8)
      static_cast<int8_t*>(y)[i] = static_cast<int8_t>(v);
    else
      static_cast<uint8_t*>(y)[i] = static_cast<uint8_t>(v);
  }
}

__global__ void dequantizeKernel(void const* x, int32_t xType, void const* scale, int32_t scaleType, void const* zp,
                                 int32_t zpType, void* y, int32_t yType, int64_t n, QuantIndex qi) {
  for (int64_t i = firstIndex(); i < n; i += gridStride()) {
    int64_t si = scaleIndex(qi, i);
    double z = zp ? loadAny(zp, zpType, si) : 0.0;
    float v = static_cast<float>((loadAny(x, xType, i) - z) * loadAny(scale, scaleType, si));
    switch (yType) {
      case dev::kFLOAT:
        static_cast<float*>(y)[i] = v;
        break;
      case dev::kHALF:
        static_cast<__half*>(y)[i] = __float2half_rn(v);
        break;
      case dev::kBF16:
        static_cast<__nv_bfloat16*>(y)[i] = __float2bfloat16_rn(v);
        break;
      default:
        break;
    }
  }
}

bool isQuantFloat(int32_t t) { return t == dev::kFLOAT || t == dev::kHALF || t == dev::kBF16; }

}  // namespace


bool launchCast(void const* x, int32_t inType, void* y, int32_t outType, int64_t n, cudaStream_t s) {
  if (n <= 0) return true;
  return KILN_CUDA_DISPATCH(
      inType, castKernel<T><<<unrolledBlocks(n), kThreads, 0, s>>>(static_cast<T const*>(x), y, outType, n));
}

bool launchElementWise(void const* a, void const* b, void* y, int32_t type, int32_t op, int64_t n, Broadcast const& bc,
                       cudaStream_t s) {
  if (n <= 0) return true;
  unsigned blocks = unrolledBlocks(n);
  return KILN_CUDA_DISPATCH(type, {
    if (bc.contiguous)
      elementWiseKernel<T, true>
          <<<blocks, kThreads, 0, s>>>(static_cast<T const*>(a), static_cast<T const*>(b), y, op, n, bc);
    else
      elementWiseKernel<T, false>
          <<<blocks, kThreads, 0, s>>>(static_cast<T const*>(a), static_cast<T const*>(b), y, op, n, bc);
  });
}

bool launchUnary(void const* x, void* y, int32_t type, int32_t op, int64_t n, cudaStream_t s) {
  if (n <= 0) return true;
  return KILN_CUDA_DISPATCH(
      type, unaryKernel<T><<<unrolledBlocks(n), kThreads, 0, s>>>(static_cast<T const*>(x), y, op, n));
}

bool launchActivation(void const* x, void* y, int32_t type, int32_t act, float alpha, float beta, int64_t n,
                      cudaStream_t s) {
  if (n <= 0) return true;
  return KILN_CUDA_DISPATCH_FLOAT(type, activationKernel<T><<<unrolledBlocks(n), kThreads, 0, s>>>(
                                          static_cast<T const*>(x), static_cast<T*>(y), act, alpha, beta, n));
}

bool launchSelect(void const* c, void const* a, void const* b, void* y, int32_t elemBytes, int64_t n,
                  Broadcast const& bc, cudaStream_t s) {
  if (n <= 0) return true;
  unsigned blocks = unrolledBlocks(n);
  auto run = [&](auto tag) {
    using W = decltype(tag);
    auto const* cp = static_cast<bool const*>(c);
    if (bc.contiguous)
      selectKernel<W, true><<<blocks, kThreads, 0, s>>>(cp, static_cast<W const*>(a), static_cast<W const*>(b),
                                                        static_cast<W*>(y), n, bc);
    else
      selectKernel<W, false><<<blocks, kThreads, 0, s>>>(cp, static_cast<W const*>(a), static_cast<W const*>(b),
                                                         static_cast<W*>(y), n, bc);
    return true;
  };
  switch (elemBytes) {
    case 1:
      return run(uint8_t{});
    case 2:
      return run(uint16_t{});
    case 4:
      return run(uint32_t{});
    case 8:
      return run(uint64_t{});
    default:
      return false;
  }
}

bool launchParametricRelu(void const* x, void const* slope, void* y, int32_t type, int64_t n, Broadcast const& bc,
                          cudaStream_t s) {
  if (n <= 0) return true;
  unsigned blocks = dev::blocksFor(n, kThreads);
  return KILN_CUDA_DISPATCH_FLOAT(type, {
    if (bc.contiguous)
      preluKernel<T, true><<<blocks, kThreads, 0, s>>>(static_cast<T const*>(x), static_cast<T const*>(slope),
                                                       static_cast<T*>(y), n, bc);
    else
      preluKernel<T, false><<<blocks, kThreads, 0, s>>>(static_cast<T const*>(x), static_cast<T const*>(slope),
                                                        static_cast<T*>(y), n, bc);
  });
}

bool launchScale(void const* x, void* y, int32_t type, Coef shift, Coef scale, Coef power, int64_t n, int64_t inner,
                 int64_t count, cudaStream_t s) {
  if (n <= 0) return true;
  if (inner <= 0 || count <= 0) return false;
  return KILN_CUDA_DISPATCH_FLOAT(
      type, scaleKernel<T><<<dev::blocksFor(n, kThreads), kThreads, 0, s>>>(
                static_cast<T const*>(x), static_cast<T*>(y), shift, scale, power, n, inner, count));
}

static bool validIndex(QuantIndex const& qi) {
  if (!qi.blocked) return qi.inner > 0 && qi.count > 0;
  if (qi.rank < 0 || qi.rank > kMaxRank) return false;
  for (int d = 0; d < qi.rank; ++d)
    if (qi.dims[d] <= 0 || qi.block[d] <= 0) return false;
  return true;
}

bool launchQuantize(void const* x, int32_t xType, void const* scale, int32_t scaleType, void const* zp, int32_t zpType,
                    void* y, int32_t yType, int64_t n, QuantIndex const& qi, cudaStream_t s) {
  if (n <= 0) return true;
  if (!validIndex(qi) || !isQuantFloat(xType) || !isQuantFloat(scaleType)) return false;
  if (yType != dev::kINT8 && yType != dev::kUINT8 && yType != dev::kFP8) return false;
  quantizeKernel<<<dev::blocksFor(n, kThreads), kThreads, 0, s>>>(x, xType, scale, scaleType, zp, zpType, y, yType, n,
                                                                  qi);
  return true;
}

bool launchDequantize(void const* x, int32_t xType, void const* scale, int32_t scaleType, void const* zp,
                      int32_t zpType, void* y, int32_t yType, int64_t n, QuantIndex const& qi, cudaStream_t s) {
  if (n <= 0) return true;
  if (!validIndex(qi) || !isQuantFloat(yType) || !isQuantFloat(scaleType)) return false;
  dequantizeKernel<<<dev::blocksFor(n, kThreads), kThreads, 0, s>>>(x, xType, scale, scaleType, zp, zpType, y, yType, n,
                                                                    qi);
  return true;
}

}  // namespace kiln::cuda::pw
