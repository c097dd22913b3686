// --check and --check-layers: compare an engine's tensors with the reference backend's on the same inputs
// (Polygraphy-like metrics) and find the first layer whose output diverges.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tensor_io.h"

namespace kilnexec {

/// How one tensor compares with its reference. Relative errors are taken where the reference is not 0.
struct Comparison {
  std::string name;
  size_t count = 0;       ///< elements compared
  size_t mismatches = 0;  ///< elements with |x - ref| > atol + rtol * |ref| (NaN against non-NaN counts)
  double maxAbs = 0, meanAbs = 0;
  double maxRel = 0, meanRel = 0;
  double normRel = 0;     ///< ||x - ref||_2 / ||ref||_2 (0 when both are 0, inf when only ref is 0)
  size_t worstIndex = 0;  ///< element with the largest absolute error
  double worstValue = 0, worstReference = 0;
  bool pass = true;
  std::string problem;  ///< a shape or type difference that made comparing impossible ("" otherwise)
};

/// Compares `actual` with `reference` elementwise in double precision.
Comparison compareTensors(Tensor const& actual, Tensor const& reference, double atol, double rtol);

/// One line per comparison: "probs: max abs 1.2e-07, mean abs ..., PASS".
std::string formatComparison(Comparison const& c);

/// The result of --check-layers: the comparisons in layer order and the first failing one.
struct LayerCheck {
  std::vector<std::pair<std::string, Comparison>> tensors;  ///< (producing layer, comparison), layer order
  int64_t firstFailure = -1;                                ///< index into tensors, -1 when all pass
};

/// Compares every tensor of `order` ((tensor, layer) in layer order) found in both `actual` and `reference`.
LayerCheck checkLayers(std::vector<std::pair<std::string, std::string>> const& order, std::vector<Tensor> const& actual,
                       std::vector<Tensor> const& reference, double atol, double rtol);

}  // namespace kilnexec
