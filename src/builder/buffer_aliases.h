// Which arena tensors share one buffer: views (an output that renames its input's shape) and outputs a tactic may
// write over an input it reads last (a convolution's residual), decided before the arena is planned.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ir/graph.h"

namespace kiln::builder {

/// True for nodes whose output is their input under another shape (same bytes, same order): a Shuffle without
/// transposes, Squeeze, Unsqueeze, a same-type single-input Identity.
bool isViewNode(ir::Node const& n);

/// For a node, the index of the input whose memory its output 0 may be written over (-1: none); in the builder
/// this is the chosen tactic's `Tactic::outputMayReuseInput`.
using ReusableInputFn = std::function<int32_t(ir::Node const& n)>;

/// Decides the shared buffers of the values of `g`, whose nodes are in execution order (node i runs at step i).
/// `inArena[v]` says value v lives in the arena, `bytes[v]` its size, `lastUse[v]` the last step that touches it.
/// Returns `aliasOf`: for a value that lives in another's buffer, that value's id (always a value that owns its
/// buffer), else -1; the owner's `lastUse` is extended over its sharers'. A view shares its input's buffer; an
/// output shares input i's buffer, where `reusableInput` names i, when both live in the arena with one size, no
/// node after this one reads input i's buffer (directly or through a view), no other input of the node lives in
/// it, and input i and the output have one recorded CPU activation format (`cpu_formats_in` / `cpu_formats_out`).
std::vector<int32_t> planBufferAliases(ir::Graph const& g, std::vector<bool> const& inArena,
                                       std::vector<int64_t> const& bytes, std::vector<int32_t>& lastUse,
                                       ReusableInputFn const& reusableInput);

}  // namespace kiln::builder
