// TensorRT's activation formulas (ActivationType integers; the reference's activation_math.h) on the device, in the
// accumulation type A (float for fp32/fp16/bf16 storage, double for fp64), for every kernel that applies or fuses
// an activation (Activation, convolution and matrix-multiply epilogues). .cu files only.
#pragma once

#include <cstdint>

namespace kiln::cuda::dev {

__device__ __forceinline__ float mExp(float x) { return expf(x); }
__device__ __forceinline__ double mExp(double x) { return exp(x); }
__device__ __forceinline__ float mExpm1(float x) { return expm1f(x); }
__device__ __forceinline__ double mExpm1(double x) { return expm1(x); }
__device__ __forceinline__ float mLog1p(float x) { return log1pf(x); }
__device__ __forceinline__ double mLog1p(double x) { return log1p(x); }
__device__ __forceinline__ float mTanh(float x) { return tanhf(x); }
__device__ __forceinline__ double mTanh(double x) { return tanh(x); }
__device__ __forceinline__ float mErfc(float x) { return erfcf(x); }
__device__ __forceinline__ double mErfc(double x) { return erfc(x); }
__device__ __forceinline__ float mAbs(float x) { return fabsf(x); }
__device__ __forceinline__ double mAbs(double x) { return fabs(x); }
__device__ __forceinline__ float mFma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double mFma(double a, double b, double c) { return fma(a, b, c); }

template <typename A>
__device__ __forceinline__ bool isNan(A x) {
  return x != x;
}

/// The activation `type` (-1: none) of x with TensorRT's alpha/beta; NaN kept where the reference keeps it.
template <typename A>
__device__ __forceinline__ A activate(int32_t type, A x, A alpha, A beta) {
  A const zero = A(0), one = A(1);
  switch (type) {
    case 0:  // kRELU
      return isNan(x) ? x : (x > zero ? x : zero);
    case 1:  // kSIGMOID
      return one / (one + mExp(-x));
    case 2:  // kTANH
      return mTanh(x);
    case 3:  // kLEAKY_RELU
      return x >= zero ? x : alpha * x;
    case 4:  // kELU
      return x >= zero ? x : alpha * mExpm1(x);
    case 5:  // kSELU
      return x > zero ? beta * x : beta * alpha * mExpm1(x);
    case 6:  // kSOFTSIGN
      return x / (one + mAbs(x));
    case 7: {  // kSOFTPLUS, without overflow for large beta * x
      A t = beta * x;
      return alpha * (t > zero ? t + mLog1p(mExp(-t)) : mLog1p(mExp(t)));
    }
    case 8: {  // kCLIP: max(alpha, min(beta, x))
      if (isNan(x)) return x;
      A m = x < beta ? x : beta;
      return alpha < m ? m : alpha;
    }
    case 9: {  // kHARD_SIGMOID: one rounding, since alpha * x + beta cancels near 0
      A t = mFma(alpha, x, beta);
      if (isNan(t)) return t;
      A m = t < one ? t : one;
      return zero < m ? m : zero;
    }
    case 10:  // kSCALED_TANH
      return alpha * mTanh(beta * x);
    case 11:  // kTHRESHOLDED_RELU
      return isNan(x) ? x : (x > alpha ? x : zero);
    // 1 + erf(v) and 1 + tanh(z) cancel for negative arguments; erfc(-v) and 2 / (1 + exp(-2z)) are the same
    // values without the cancellation (the reference computes the plain formulas in double).
    case 12:  // kGELU_ERF
      return A(0.5) * x * mErfc(-x * A(0.70710678118654752440));
    case 13: {                                // kGELU_TANH
      A const k = A(0.79788456080286535588);  // sqrt(2 / pi)
      A z = k * (A(0.044715) * x * x * x + x);
      return x / (one + mExp(A(-2) * z));
    }
    default:
      return x;
  }
}

}  // namespace kiln::cuda::dev
