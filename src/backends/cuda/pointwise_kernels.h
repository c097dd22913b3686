// Launchers of the pointwise CUDA kernels (pointwise.cu): Cast, ElementWise, Unary, Activation, Select,
// ParametricReLU, Scale, Quantize and Dequantize. Plain signatures (device pointers, dtype codes = Kiln's
// DataType integers, by-value descriptors) so that this header is shared by nvcc and the host compiler.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda::pw {

/// Most axes a broadcast descriptor holds (TensorRT's Dims::MAX_DIMS).
constexpr int kMaxRank = 8;
/// Most operands (inputs) a broadcast descriptor indexes.
constexpr int kMaxOperands = 3;

/// Index math of a broadcast: the output's extents (row-major, outermost first) and, per operand, the element
/// stride along each output axis (0 where the operand is broadcast). `contiguous`: every operand has the
/// output's shape, so operand offsets equal the output's linear index.
struct Broadcast {
  int32_t rank = 0;
  bool contiguous = true;
  /// Every linear index of the output (and so of every operand) is below 2^31: offsets use 32-bit math.
  bool small = false;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxOperands][kMaxRank] = {};
};

// Operation codes, equal to Kiln's public enum values (pointwise.cc static_asserts that they match).
enum EwOp : int32_t {
  kEwSum = 0,
  kEwProd = 1,
  kEwMax = 2,
  kEwMin = 3,
  kEwSub = 4,
  kEwDiv = 5,
  kEwPow = 6,
  kEwFloorDiv = 7,
  kEwAnd = 8,
  kEwOr = 9,
  kEwXor = 10,
  kEwEqual = 11,
  kEwGreater = 12,
  kEwLess = 13,
  kEwBitAnd = 100,
  kEwBitOr = 101,
  kEwBitXor = 102,
};
enum UnOp : int32_t {
  kUnExp = 0,
  kUnLog = 1,
  kUnSqrt = 2,
  kUnRecip = 3,
  kUnAbs = 4,
  kUnNeg = 5,
  kUnSin = 6,
  kUnCos = 7,
  kUnTan = 8,
  kUnSinh = 9,
  kUnCosh = 10,
  kUnAsin = 11,
  kUnAcos = 12,
  kUnAtan = 13,
  kUnAsinh = 14,
  kUnAcosh = 15,
  kUnAtanh = 16,
  kUnCeil = 17,
  kUnFloor = 18,
  kUnErf = 19,
  kUnNot = 20,
  kUnSign = 21,
  kUnRound = 22,
  kUnIsInf = 23,
  kUnIsNan = 24,
  kUnBitNot = 100,
};
/// y[i] = convert(x[i]) for n elements from type `inType` to `outType` (the reference's rules: float->int
/// truncates and saturates, NaN -> 0; int->int wraps; ->bool is != 0; floats round to nearest even).
/// Returns false for a type code it does not handle.
bool launchCast(void const* x, int32_t inType, void* y, int32_t outType, int64_t n, cudaStream_t s);

/// y = a op b over `n` output elements with broadcast `bc` (operands 0: a, 1: b); a and b have type `type`;
/// y has type `type`, or bool for comparisons and logical ops.
bool launchElementWise(void const* a, void const* b, void* y, int32_t type, int32_t op, int64_t n, Broadcast const& bc,
                       cudaStream_t s);

/// y = op(x) for n elements; y has type `type`, or bool for kISINF/kISNAN.
bool launchUnary(void const* x, void* y, int32_t type, int32_t op, int64_t n, cudaStream_t s);

/// y = activation(x) for n elements of a float type.
bool launchActivation(void const* x, void* y, int32_t type, int32_t act, float alpha, float beta, int64_t n,
                      cudaStream_t s);

/// y = c ? a : b over n output elements (operands 0: c (bool), 1: a, 2: b), elements of `elemBytes` bytes.
bool launchSelect(void const* c, void const* a, void const* b, void* y, int32_t elemBytes, int64_t n,
                  Broadcast const& bc, cudaStream_t s);

/// y = x >= 0 ? x : slope * x over n elements (operand 0: x, 1: slope), float types.
bool launchParametricRelu(void const* x, void const* slope, void* y, int32_t type, int64_t n, Broadcast const& bc,
                          cudaStream_t s);

/// One optional coefficient of Scale: null when absent.
struct Coef {
  void const* data = nullptr;
  int32_t type = 0;
};
/// y = (x * scale + shift) ^ power; coefficient of element i is (i / inner) % count.
bool launchScale(void const* x, void* y, int32_t type, Coef shift, Coef scale, Coef power, int64_t n, int64_t inner,
                 int64_t count, cudaStream_t s);

/// Which scale element applies to element i of x: (i / inner) % count (per tensor: count 1; per axis: count the
/// axis extent, inner the extent after it), or, when `blocked`, the sum over axes d of
/// (index_d / block[d]) * scaleStrides[d], x's extents being dims[d].
struct QuantIndex {
  int64_t inner = 1;
  int64_t count = 1;
  int32_t rank = 0;
  bool blocked = false;
  int64_t dims[kMaxRank] = {};
  int64_t block[kMaxRank] = {};
  int64_t scaleStrides[kMaxRank] = {};
};

/// Quantize: y = saturate(round_half_even(x / scale) + zp) (fp8: round(x / scale + zp)); zp may be null.
bool launchQuantize(void const* x, int32_t xType, void const* scale, int32_t scaleType, void const* zp, int32_t zpType,
                    void* y, int32_t yType, int64_t n, QuantIndex const& qi, cudaStream_t s);
/// Dequantize: y = (x - zp) * scale, rounded to float32 then to y's type.
bool launchDequantize(void const* x, int32_t xType, void const* scale, int32_t scaleType, void const* zp,
                      int32_t zpType, void* y, int32_t yType, int64_t n, QuantIndex const& qi, cudaStream_t s);

}  // namespace kiln::cuda::pw
