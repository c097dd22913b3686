// Two small shape helpers that shape inference and several kernels' argument checks share: the leading dims of a
// shape, and whether one shape broadcasts to another (numpy-style, right-aligned).
#pragma once

#include <cstdint>

#include "core/dims.h"

namespace kiln {

/// The first `n` dims of `d` (n <= d.nbDims).
inline Dims leadingDims(Dims const& d, int32_t n) {
  Dims r{};
  r.nbDims = n;
  for (int32_t i = 0; i < n; ++i) r.d[i] = d.d[i];
  return r;
}

/// True when `in` broadcasts (numpy-style, right-aligned) to exactly `out`: no more dims, each 1 or `out`'s.
inline bool broadcastsTo(Dims const& in, Dims const& out) {
  if (in.nbDims < 0 || in.nbDims > out.nbDims) return false;
  for (int32_t i = 0; i < in.nbDims; ++i) {
    int64_t const d = in.d[i], o = out.d[out.nbDims - in.nbDims + i];
    if (d != 1 && d != o) return false;
  }
  return true;
}

}  // namespace kiln
