// Precision assignment: with kFP16/kBF16 (weak typing) float32 compute layers run in the reduced type, with
// casts inserted at the boundaries; per-layer precision (ILayer::setPrecision) and output types
// (ILayer::setOutputType) are honored; strongly typed networks keep the types they were given.
#pragma once

#include "ir/graph.h"
#include "kiln/kiln.h"

namespace kiln::builder {

struct PrecisionOptions {
  BuilderFlags flags = 0;
  bool stronglyTyped = false;
};

/// Rewrites the graph (inferGraphInPlace must have run). Network I/O types never change.
Status assignPrecision(ir::Graph& g, PrecisionOptions const& opt);

}  // namespace kiln::builder
