// The constant matrix of a discrete Fourier transform, shared by the DFT and STFT importers: it maps n
// interleaved (real[, imaginary]) input samples to k interleaved (real, imaginary) outputs in one MatrixMultiply.
#pragma once

#include <cmath>
#include <numbers>
#include <vector>

namespace kiln::onnx {

/// cos and sin of 2*pi*m/length, exact at multiples of a quarter turn (so exact zeros stay zero).
inline void unitRoot(int64_t m, int64_t length, double& c, double& s) {
  m %= length;
  if (m == 0) {
    c = 1.0, s = 0.0;
  } else if (2 * m == length) {
    c = -1.0, s = 0.0;
  } else if (4 * m == length) {
    c = 0.0, s = 1.0;
  } else if (4 * m == 3 * length) {
    c = 0.0, s = -1.0;
  } else {
    double const a = 2.0 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(length);
    c = std::cos(a), s = std::sin(a);
  }
}

/// Row-major [n * channels, k * 2] matrix of the length-`length` DFT (inverse: conjugate kernel and 1/length) of
/// n input samples with `channels` (1: real, 2: complex) values each; samples at or past `length` are dropped
/// (inputs shorter than `length` are zero-padded by having no rows).
inline std::vector<double> dftMatrix(int64_t n, int64_t channels, int64_t length, int64_t k, bool inverse) {
  std::vector<double> w(static_cast<size_t>(n * channels * k * 2), 0.0);
  double const sign = inverse ? 1.0 : -1.0;
  double const norm = inverse ? 1.0 / static_cast<double>(length) : 1.0;
  for (int64_t i = 0; i < n && i < length; ++i) {
    for (int64_t f = 0; f < k; ++f) {
      double c = 0.0, s = 0.0;
      unitRoot(i * f, length, c, s);
      // (xr + i xi) * (c + i sign s) = (xr c - sign xi s) + i (sign xr s + xi c)
      double* realRow = w.data() + (i * channels) * k * 2 + f * 2;
      realRow[0] = c * norm;
      realRow[1] = sign * s * norm;
      if (channels == 2) {
        double* imagRow = realRow + k * 2;
        imagRow[0] = -sign * s * norm;
        imagRow[1] = c * norm;
      }
    }
  }
  return w;
}

}  // namespace kiln::onnx
