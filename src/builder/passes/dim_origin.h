// Proving two unknown (-1) dims equal without symbolic shapes: follow each back to the tensor and axis it is copied
// from (its origin); two dims of one origin are equal at run time whatever the dynamic shapes. Used by the fusions
// that need equal shapes (fuse_attention's layout 1, fuse_bias_activation's residual).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace kiln::builder::passutil {

/// A permutation attribute `name` of `n` with `rank` entries (absent or empty: the identity); nullopt when it has
/// another count of entries.
std::optional<std::vector<int64_t>> permAttr(ir::Node const& n, char const* name, int32_t rank);

/// A Shuffle's two permutations and whether it reshapes.
struct ShuffleView {
  bool reshape = false;
  std::vector<int64_t> first, second;
};

/// The view of `sh` when it is a Shuffle with one output, a data input, at most a reshape input besides and
/// well-formed permutations; nullopt otherwise (null included).
std::optional<ShuffleView> readShuffle(ir::Node const* sh);

/// Where dim `axis` of `v` comes from: followed back through Shuffles that carry it
/// (permutations, a reshape's placeholder 0), layers whose output has their first input's shape (Activation,
/// Unary, Cast, Identity, SoftMax, Normalization), Convolutions that keep it (the batch; a spatial dim of a stride-1
/// window padded by the kernel's extent), ElementWise with a constant that does not broadcast it, MatrixMultiply
/// rows (first operand not transposed, of the output's rank) and batch dims over a constant second operand without
/// batch dims, and ElementWise or MatrixMultiply batch dims of two computed operands of the output's rank whose
/// dims there have one origin (256 steps at most in all). Returns the value and axis where the walk stopped
/// (`v`, `axis` itself when it cannot go back).
std::pair<ir::Value const*, int32_t> dimOrigin(ir::Value const* v, int32_t axis);

/// True when dim `i` of `a` and dim `j` of `b` are equal at run time: both known and equal, or both unknown (-1)
/// with one origin (dimOrigin). False when either axis is out of range or it cannot be proven.
bool sameDim(ir::Value const* a, int32_t i, ir::Value const* b, int32_t j);

/// True when `a` and `b` have the same shape at run time: one rank and every dim equal by sameDim.
bool sameShape(ir::Value const* a, ir::Value const* b);

}  // namespace kiln::builder::passutil
