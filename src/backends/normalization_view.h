// The index view every backend's Normalization kernel walks, so that they agree on it: x as a list of dims
// (group norm: [N, G, C/G, spatial...]), which dims are normalized over, and the element strides of x, scale and
// bias along them (0 where scale/bias broadcast). Header-only: the CUDA library uses it too.
#pragma once

#include <string>
#include <vector>

#include "core/dims.h"
#include "core/status.h"

namespace kiln::backends {

struct NormalizationView {
  std::vector<int64_t> shape;
  std::vector<bool> reduced;
  std::vector<int64_t> xStrides, scaleStrides, biasStrides;
};

/// Whether Normalization's fused residual `r` fits x: x's shape with some leading dims 1 (a position embedding
/// [1, S, H] added to [B, S, H]), so element i of x (row-major) pairs with element i % volume(r) of r.
inline bool residualFits(Dims const& r, Dims const& x) {
  if (r.nbDims != x.nbDims) return false;
  bool leading = true;  // every residual dim so far is 1
  for (int32_t d = 0; d < x.nbDims; ++d) {
    if (r.d[d] == x.d[d]) {
      leading = leading && r.d[d] == 1;
    } else if (!(r.d[d] == 1 && leading)) {
      return false;
    }
  }
  return true;
}

/// The view of x for a Normalization over `axes` (layer / instance norm: scale and bias broadcast to x), or with
/// `groups` > 1 over each channel group and the axes (scale/bias per group, or per channel with `v2`). Errors
/// name `who`.
inline Result<NormalizationView> normalizationView(std::string const& who, Dims const& x, Dims const& scale,
                                                   Dims const& bias, std::vector<int64_t> const& axes, int64_t groups,
                                                   bool v2) {
  int32_t rank = x.nbDims;
  std::vector<bool> reducedX(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    int64_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank) return invalidArgument(who, ": axis ", a, " is out of range for ", dimsToString(x));
    reducedX[static_cast<size_t>(axis)] = true;
  }
  NormalizationView v;
  if (groups > 1) {
    if (rank < 3 || x.d[1] % groups != 0)
      return invalidArgument(who, ": ", dimsToString(x), " does not split into ", groups, " groups");
    int64_t c = x.d[1], cg = c / groups;
    int64_t want = v2 ? c : groups;
    if (volume(scale) != want || volume(bias) != want)
      return invalidArgument(who, ": scale and bias must hold ", want, " values for group normalization");
    v.shape = {x.d[0], groups, cg};
    v.reduced = {false, false, true};
    for (int32_t d = 2; d < rank; ++d) {
      v.shape.push_back(x.d[d]);
      v.reduced.push_back(reducedX[static_cast<size_t>(d)]);
    }
    v.scaleStrides.assign(v.shape.size(), 0);
    if (v2) {
      v.scaleStrides[1] = cg;
      v.scaleStrides[2] = 1;
    } else {
      v.scaleStrides[1] = 1;
    }
    v.biasStrides = v.scaleStrides;
  } else {
    for (int32_t d = 0; d < rank; ++d) v.shape.push_back(x.d[d]);
    v.reduced = reducedX;
    // By position, not by address: a caller may pass one Dims object as both scale and bias.
    Dims const* const params[2] = {&scale, &bias};
    std::vector<int64_t>* const strides[2] = {&v.scaleStrides, &v.biasStrides};
    for (int j = 0; j < 2; ++j) {
      Dims const* t = params[j];
      if (t->nbDims > rank) return invalidArgument(who, ": scale/bias do not broadcast to x");
      std::vector<int64_t> s(static_cast<size_t>(rank), 0);
      int64_t step = 1;
      for (int32_t i = t->nbDims; i-- > 0;) {
        int64_t sd = t->d[i];
        int32_t xd = rank - t->nbDims + i;
        if (sd != 1 && sd != x.d[xd]) return invalidArgument(who, ": scale/bias do not broadcast to x");
        s[static_cast<size_t>(xd)] = sd == 1 ? 0 : step;
        step *= sd;
      }
      *strides[j] = std::move(s);
    }
  }
  v.xStrides.assign(v.shape.size(), 1);
  for (size_t i = v.shape.size(); i-- > 1;) v.xStrides[i - 1] = v.xStrides[i] * v.shape[i];
  return v;
}

}  // namespace kiln::backends
