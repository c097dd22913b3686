// Scalar math of PointwiseFused programs (ir/pointwise_program.h), templated on the compute type: the reference
// kernel evaluates in double, the CPU kernel in float; the CUDA code generator writes the same formulas as text.
// Bools are 0 and 1. The formulas are the unfused kernels' (reference/unary.cc, elementwise.cc, activation_math.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/dtype.h"
#include "ir/pointwise_program.h"

namespace kiln::backends::pw {

/// A quiet NaN of T.
template <typename T>
T quietNan() {
  return std::numeric_limits<T>::quiet_NaN();
}

/// Round half to even, independent of the floating-point environment's rounding mode.
template <typename T>
T roundHalfEven(T x) {
  if (!std::isfinite(x)) return x;
  T f = std::floor(x);
  T frac = x - f;
  if (frac < T(0.5)) return f;
  if (frac > T(0.5)) return f + T(1);
  return std::fmod(f, T(2)) == T(0) ? f : f + T(1);
}

/// ElementWise `op` on a and b (comparisons and logical ops give 0 or 1; max/min propagate NaN).
template <typename T>
T elementWise(ElementWiseOperation op, T a, T b) {
  switch (op) {
    case ElementWiseOperation::kSUM:
      return a + b;
    case ElementWiseOperation::kPROD:
      return a * b;
    case ElementWiseOperation::kMAX:
      return (std::isnan(a) || std::isnan(b)) ? quietNan<T>() : (a > b ? a : b);
    case ElementWiseOperation::kMIN:
      return (std::isnan(a) || std::isnan(b)) ? quietNan<T>() : (a < b ? a : b);
    case ElementWiseOperation::kSUB:
      return a - b;
    case ElementWiseOperation::kDIV:
      return a / b;
    case ElementWiseOperation::kPOW:
      return std::pow(a, b);
    case ElementWiseOperation::kFLOOR_DIV:
      return std::floor(a / b);
    case ElementWiseOperation::kAND:
      return (a != T(0) && b != T(0)) ? T(1) : T(0);
    case ElementWiseOperation::kOR:
      return (a != T(0) || b != T(0)) ? T(1) : T(0);
    case ElementWiseOperation::kXOR:
      return ((a != T(0)) != (b != T(0))) ? T(1) : T(0);
    case ElementWiseOperation::kEQUAL:
      return a == b ? T(1) : T(0);
    case ElementWiseOperation::kGREATER:
      return a > b ? T(1) : T(0);
    case ElementWiseOperation::kLESS:
      return a < b ? T(1) : T(0);
    case ElementWiseOperation::kBITWISE_AND:
    case ElementWiseOperation::kBITWISE_OR:
    case ElementWiseOperation::kBITWISE_XOR:
      break;  // refused by decodePointwiseProgram
  }
  return T(0);
}

/// Unary `op` on x (kNOT, kISINF, kISNAN give 0 or 1; kROUND rounds half to even).
template <typename T>
T unary(UnaryOperation op, T x) {
  switch (op) {
    case UnaryOperation::kEXP:
      return std::exp(x);
    case UnaryOperation::kLOG:
      return std::log(x);
    case UnaryOperation::kSQRT:
      return std::sqrt(x);
    case UnaryOperation::kRECIP:
      return T(1) / x;
    case UnaryOperation::kABS:
      return std::fabs(x);
    case UnaryOperation::kNEG:
      return -x;
    case UnaryOperation::kSIN:
      return std::sin(x);
    case UnaryOperation::kCOS:
      return std::cos(x);
    case UnaryOperation::kTAN:
      return std::tan(x);
    case UnaryOperation::kSINH:
      return std::sinh(x);
    case UnaryOperation::kCOSH:
      return std::cosh(x);
    case UnaryOperation::kASIN:
      return std::asin(x);
    case UnaryOperation::kACOS:
      return std::acos(x);
    case UnaryOperation::kATAN:
      return std::atan(x);
    case UnaryOperation::kASINH:
      return std::asinh(x);
    case UnaryOperation::kACOSH:
      return std::acosh(x);
    case UnaryOperation::kATANH:
      return std::atanh(x);
    case UnaryOperation::kCEIL:
      return std::ceil(x);
    case UnaryOperation::kFLOOR:
      return std::floor(x);
    case UnaryOperation::kERF:
      return std::erf(x);
    case UnaryOperation::kNOT:
      return x == T(0) ? T(1) : T(0);
    case UnaryOperation::kSIGN:
      return std::isnan(x) ? x : (x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0)));
    case UnaryOperation::kROUND:
      return roundHalfEven(x);
    case UnaryOperation::kISINF:
      return std::isinf(x) ? T(1) : T(0);
    case UnaryOperation::kISNAN:
      return std::isnan(x) ? T(1) : T(0);
    case UnaryOperation::kBITWISE_NOT:
      break;  // refused by decodePointwiseProgram
  }
  return x;
}

/// TensorRT's IActivationLayer formulas (reference/activation_math.h's, in T).
template <typename T>
T activation(ActivationType type, T x, T alpha, T beta) {
  switch (type) {
    case ActivationType::kRELU:
      return std::isnan(x) ? x : (x > T(0) ? x : T(0));
    case ActivationType::kSIGMOID:
      return T(1) / (T(1) + std::exp(-x));
    case ActivationType::kTANH:
      return std::tanh(x);
    case ActivationType::kLEAKY_RELU:
      return x >= T(0) ? x : alpha * x;
    case ActivationType::kELU:
      return x >= T(0) ? x : alpha * std::expm1(x);
    case ActivationType::kSELU:
      return x > T(0) ? beta * x : beta * alpha * std::expm1(x);
    case ActivationType::kSOFTSIGN:
      return x / (T(1) + std::fabs(x));
    case ActivationType::kSOFTPLUS: {
      T t = beta * x;
      T sp = t > T(0) ? t + std::log1p(std::exp(-t)) : std::log1p(std::exp(t));
      return alpha * sp;
    }
    case ActivationType::kCLIP:
      return std::isnan(x) ? x : std::max(alpha, std::min(beta, x));
    case ActivationType::kHARD_SIGMOID: {
      T t = alpha * x + beta;
      return std::isnan(t) ? t : std::max(T(0), std::min(T(1), t));
    }
    case ActivationType::kSCALED_TANH:
      return alpha * std::tanh(beta * x);
    case ActivationType::kTHRESHOLDED_RELU:
      return std::isnan(x) ? x : (x > alpha ? x : T(0));
    case ActivationType::kGELU_ERF:
      return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
    case ActivationType::kGELU_TANH: {
      T const k = T(0.79788456080286535588);  // sqrt(2 / pi)
      return T(0.5) * x * (T(1) + std::tanh(k * (T(0.044715) * x * x * x + x)));
    }
  }
  return x;
}

/// The value `x` takes when stored as `to` and read back (the unfused Cast's rounding: through float for the
/// 16-bit types, as core/dtype.h's fromDouble does); bool: 0 or 1.
template <typename T>
T castTo(DataType to, T x) {
  if (to == DataType::kHALF) return static_cast<T>(halfToFloat(floatToHalf(static_cast<float>(x))));
  if (to == DataType::kBF16) return static_cast<T>(bf16ToFloat(floatToBf16(static_cast<float>(x))));
  if (to == DataType::kBOOL) return x != T(0) ? T(1) : T(0);
  return static_cast<T>(static_cast<float>(x));  // kFLOAT (decodePointwiseProgram admits nothing else)
}

/// One instruction on scalar operands (a, b, c as the instruction's operands).
template <typename T>
T evalInstruction(ir::PwInstruction const& in, T a, T b, T c) {
  switch (in.opcode) {
    case ir::PwOpcode::kElementWise:
      return elementWise(static_cast<ElementWiseOperation>(in.param), a, b);
    case ir::PwOpcode::kUnary:
      return unary(static_cast<UnaryOperation>(in.param), a);
    case ir::PwOpcode::kActivation:
      return activation(static_cast<ActivationType>(in.param), a, static_cast<T>(in.alpha), static_cast<T>(in.beta));
    case ir::PwOpcode::kCast:
      return castTo(static_cast<DataType>(in.param), a);
    case ir::PwOpcode::kSelect:
      return a != T(0) ? b : c;
  }
  return a;
}

}  // namespace kiln::backends::pw
