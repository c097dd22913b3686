// Precision assignment: with kFP16/kBF16 (weak typing) float32 compute layers run in the reduced type, with
// casts inserted at the boundaries; per-layer precision (ILayer::setPrecision) and output types
// (ILayer::setOutputType) are honored; strongly typed networks keep the types they were given.
#pragma once

#include <functional>
#include <vector>

#include "ir/graph.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::builder {

struct PrecisionOptions {
  BuilderFlags flags = 0;
  bool stronglyTyped = false;
  /// When set: whether a library tactic (not a reference or host-fallback one) runs `node` with these input and
  /// output types and shapes. kFP16/kBF16 allow the reduced type, they do not require it (TensorRT's builder picks
  /// the fastest): a layer without a precision of its own whose reduced-type form has no library tactic while its
  /// float32 form has one keeps float32. Unset: every float compute layer takes the reduced type.
  std::function<bool(ir::Node const& node, std::vector<ir::TensorInfo> const& in,
                     std::vector<ir::TensorInfo> const& out)>
      hasLibraryTactic;
};

/// Rewrites the graph (inferGraphInPlace must have run). Network I/O types never change.
Status assignPrecision(ir::Graph& g, PrecisionOptions const& opt);

}  // namespace kiln::builder
