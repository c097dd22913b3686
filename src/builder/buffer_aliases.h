// Which arena tensors share one buffer, and where inside it: views (an output that renames its input's shape, a
// contiguous Slice or Gather), outputs a tactic may write over an input it reads last (a convolution's residual),
// and Concatenation inputs written in place inside the output; decided before the arena is planned.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/shape_inference.h"

namespace kiln::builder {

/// True for nodes whose output is their input under another shape (same bytes, same order): a Shuffle without
/// transposes, Squeeze, Unsqueeze, a same-type single-input Identity.
bool isViewNode(ir::Node const& n);

/// For a node, the index of the input whose memory its output 0 may be written over (-1: none); in the builder
/// this is the chosen tactic's `Tactic::outputMayReuseInput`.
using ReusableInputFn = std::function<int32_t(ir::Node const& n)>;

/// What the alias planner knows of the values of a graph (indexed by value id).
struct AliasInputs {
  /// The value lives in the activation arena (not network I/O, not a constant, sized at build time).
  std::vector<bool> inArena;
  /// Its size in bytes (the largest over the profile shapes).
  std::vector<int64_t> bytes;
  /// Its type and shape where the shape is the same at every profile shape (nbDims -1 otherwise): byte offsets
  /// inside another buffer are planned only between such values.
  std::vector<ir::TensorInfo> fixed;
  /// See ReusableInputFn; may be empty.
  ReusableInputFn reusableInput;
  /// Byte offsets inside another value's buffer are multiples of this (the arena's alignment, which kernels'
  /// vectorized paths and library plans count on); other placements are not planned.
  int64_t alignment = 256;
};

/// The shared buffers of a graph's values.
struct BufferAliases {
  /// For a value that lives in another's buffer, that value's id (always one that owns its buffer), else -1.
  std::vector<int32_t> aliasOf;
  /// Where such a value starts inside its owner's buffer, in bytes (0 for owners).
  std::vector<int64_t> offset;
  /// Layers the runtime does not run as kernels: (node index, `ir::kInPlaceAttr` value) for a Concatenation with
  /// inputs in place (1 per such input) and for a Slice or Gather whose output is a view ({1}).
  std::vector<std::pair<size_t, std::vector<int64_t>>> inPlace;
  /// One line per in-place layer, for the builder's verbose log.
  std::vector<std::string> log;
};

/// Decides the shared buffers of the values of `g`, whose nodes are in execution order (node i runs at step i).
/// `firstUse[v]`/`lastUse[v]` are the first and last steps that touch value v; an owner's are widened over its
/// sharers'. A view (isViewNode) shares its input's bytes. Output 0 shares input i's bytes, where
/// `reusableInput` names i, when both have one size, no later node reads that buffer (directly or through a
/// view), no other input of the node lives in it and input i and the output have one recorded CPU activation
/// format. A Slice or Gather selecting one contiguous run (`ir::contiguousViewOffsets`) of an arena input is a
/// view at that offset. A Concatenation whose inputs are contiguous blocks of its output takes each input that is
/// produced in the arena, owns its buffer (or is a whole view of a buffer it can move: same size, offset 0), is
/// read through no other input of the node and lands at an aligned offset: that buffer moves inside the output's;
/// the other inputs are copied there at run time. Values with planned offsets must be plain layouts (kLINEAR on
/// the GPU, no recorded blocked CPU format) with fixed shapes.
BufferAliases planBufferAliases(ir::Graph const& g, AliasInputs const& in, std::vector<int32_t>& firstUse,
                                std::vector<int32_t>& lastUse);

}  // namespace kiln::builder
