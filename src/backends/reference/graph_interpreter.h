// Runs a whole IR graph on the host with the reference kernels, node by node: the oracle for pass tests and
// end-to-end checks, and the engine of constant folding.
#pragma once

#include <vector>

#include "core/tensor.h"
#include "ir/graph.h"

namespace kiln::backends {

/// Runs `g` on host tensors: `inputs` follow g.inputs() (count, dtype and rank must match; dims that the graph
/// leaves dynamic take the given sizes). Shapes are inferred for these inputs, then every node runs through
/// evaluateOnHost in topological order. Returns the graph outputs in g.outputs() order, owned by the caller.
/// `g` itself is not changed (a renumbered clone is used when needed). Errors name the failing layer.
Result<std::vector<HostTensor>> runGraphOnHost(ir::Graph const& g, std::vector<HostTensor> const& inputs);

}  // namespace kiln::backends
