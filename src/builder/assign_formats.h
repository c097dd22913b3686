// Memory layouts of a GPU build: convolutions and pooling in channels-last (kHWC) where a format-aware tactic
// takes them, element-wise layers between them following their inputs, and Reformat layers only where a
// producer's layout differs from what its consumer reads.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/shape_inference.h"

namespace kiln::builder {

struct FormatContext {
  DeviceType device = DeviceType::kGPU;
  TacticSources sources = 0;
  /// Shapes of every value at each shape of every profile (the graph renumbered for them); element-wise
  /// layers follow a channels-last input only when every input has the output's shape (or one element) at
  /// all of them, so no broadcast crosses layouts.
  std::vector<ir::ShapeState const*> states;
  /// The shapes tactics are asked about (the first profile's opt shapes); one of `states`.
  ir::ShapeState const* opt = nullptr;
};

/// Assigns the attribute `format` (kHWC) to the nodes that run channels-last and inserts Reformat nodes
/// (weights get one too, which constant folding then computes at build time). Graph outputs stay kLINEAR.
/// Returns the number of nodes set to kHWC. The graph must be renumbered and its shapes inferred.
Result<int> assignFormats(ir::Graph& g, FormatContext const& ctx);

}  // namespace kiln::builder
