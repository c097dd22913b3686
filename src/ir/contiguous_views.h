// Layers whose data movement is one contiguous byte run per tensor: a Concatenation whose inputs are whole blocks
// of its output, a unit-stride Slice or a constant-index Gather that selects one contiguous run of its input.
// The builder places such tensors inside one another's memory and the runtime then skips (or shortens) the copy.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "ir/shape_inference.h"

namespace kiln::ir {

/// Byte offsets of a contiguous view at these tensor types and shapes: for a Concatenation, where each input
/// starts inside the output (one entry per input); for a Slice or Gather, where the output starts inside input 0
/// (one entry). nullopt when the node is no such view here: another op, unknown or non-matching shapes, a
/// sub-byte or unsupported type, a Concatenation with a dim other than 1 before its axis, a Slice that is not
/// kSTRICT_BOUNDS with unit strides and attribute parameters over one contiguous run, a Gather that is not
/// kDEFAULT with constant indices in bounds that name consecutive rows in order (one index, or BERT's flattened
/// mask gathered at b * S + s) and only dims of 1 before its axis.
std::optional<std::vector<int64_t>> contiguousViewOffsets(Node const& n, std::vector<TensorInfo> const& in,
                                                          std::vector<TensorInfo> const& out);

/// Name of the node attribute the builder sets on a layer it planned in place: one int per input for a
/// Concatenation (1: that input already lives at its offset inside the output; 0: the runtime copies it there),
/// {1} for a Slice or Gather whose output lives inside its input.
inline constexpr char kInPlaceAttr[] = "in_place";

}  // namespace kiln::ir
