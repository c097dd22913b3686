// The builder's graph optimization pipelines, one per optimization level.
#pragma once

#include "builder/passes/pass.h"

namespace kiln::builder {

/// Most rounds of the level >= 1 pipeline before it stops looking for a fixed point.
inline constexpr int kMaxPipelineRounds = 8;

/// Optimizes `g` in place. Level 0: dead-layer elimination and constant folding only; level >= 1: every pass,
/// repeated until none changes the graph (at most kMaxPipelineRounds rounds). Shapes are re-inferred after each
/// pass that changed something (with ctx.evaluator). Precondition: ir::inferGraphInPlace succeeded on `g`.
Status runPipeline(ir::Graph& g, PassContext const& ctx);

}  // namespace kiln::builder
