// Scalar activation math shared by the reference kernels (Activation, and the activations fused into
// Convolution and MatrixMultiply): TensorRT's IActivationLayer formulas, computed in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kiln/kiln.h"

namespace kiln::backends::reference {

/// Applies activation `type` to `x` with TensorRT's meanings of alpha and beta:
/// kLEAKY_RELU x>=0 ? x : alpha*x; kELU x>=0 ? x : alpha*(exp(x)-1); kSELU x>0 ? beta*x : beta*alpha*(exp(x)-1);
/// kSOFTPLUS alpha*log(exp(beta*x)+1); kCLIP max(alpha, min(beta, x)); kHARD_SIGMOID max(0, min(1, alpha*x+beta));
/// kSCALED_TANH alpha*tanh(beta*x); kTHRESHOLDED_RELU x>alpha ? x : 0; the others take no parameters.
/// NaN propagates (except where TensorRT's formula itself selects a constant).
inline double applyActivation(ActivationType type, double x, double alpha, double beta) {
  switch (type) {
    case ActivationType::kRELU:
      return std::isnan(x) ? x : (x > 0.0 ? x : 0.0);
    case ActivationType::kSIGMOID:
      return 1.0 / (1.0 + std::exp(-x));
    case ActivationType::kTANH:
      return std::tanh(x);
    case ActivationType::kLEAKY_RELU:
      return x >= 0.0 ? x : alpha * x;
    case ActivationType::kELU:
      return x >= 0.0 ? x : alpha * std::expm1(x);
    case ActivationType::kSELU:
      return x > 0.0 ? beta * x : beta * alpha * std::expm1(x);
    case ActivationType::kSOFTSIGN:
      return x / (1.0 + std::fabs(x));
    case ActivationType::kSOFTPLUS: {
      // log1p(exp(t)) without overflow for large t.
      double t = beta * x;
      double sp = t > 0.0 ? t + std::log1p(std::exp(-t)) : std::log1p(std::exp(t));
      return alpha * sp;
    }
    case ActivationType::kCLIP:
      return std::isnan(x) ? x : std::max(alpha, std::min(beta, x));
    case ActivationType::kHARD_SIGMOID: {
      double t = alpha * x + beta;
      return std::isnan(t) ? t : std::max(0.0, std::min(1.0, t));
    }
    case ActivationType::kSCALED_TANH:
      return alpha * std::tanh(beta * x);
    case ActivationType::kTHRESHOLDED_RELU:
      return std::isnan(x) ? x : (x > alpha ? x : 0.0);
    case ActivationType::kGELU_ERF:
      return 0.5 * x * (1.0 + std::erf(x * std::sqrt(0.5)));
    case ActivationType::kGELU_TANH: {
      double const k = std::sqrt(2.0 / 3.14159265358979323846);
      return 0.5 * x * (1.0 + std::tanh(k * (0.044715 * x * x * x + x)));
    }
  }
  return x;
}

/// True when `v` (an attribute's integer) names an ActivationType.
inline bool isActivationType(int64_t v) { return v >= 0 && v <= static_cast<int64_t>(ActivationType::kGELU_TANH); }

}  // namespace kiln::backends::reference
