// The readable text form of the IR: printGraph writes one line per input, node and output; parseGraph reads
// it back (print(parse(print(g))) == print(g)). Used by pass tests, debugging dumps and the engine inspector.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ir/graph.h"

namespace kiln::ir {

/// What printGraph writes.
struct PrintOptions {
  /// Print every constant's data as `data=[...]` (parseable); otherwise constants with more than
  /// kMaxInlineConstant elements print as a summary `data=<f32 x 216>` that parseGraph refuses.
  bool fullConstants = false;
  /// Print the @precision / @tactic / @fused / @out_types annotations.
  bool annotations = true;
};

/// Constants up to this many elements are always printed in full.
inline constexpr int64_t kMaxInlineConstant = 16;

/// Largest constant parseGraph makes (data=[...], random(), fill()): the text form is for tests and dumps, and
/// a few characters of `fill(0)` must not ask for gigabytes.
inline constexpr int64_t kMaxTextConstantElements = int64_t{1} << 24;

/// The text form of `g`. Nodes are printed in topological order (node order when the graph has a cycle).
///
///   graph {
///     input x: f32[1,3,-1,-1]
///     w: f32[8,3,3,3] = Constant "w" () {data=<f32 x 216>}
///     y: f32[1,8,-1,-1] = Convolution "conv1" (x, w, _) {groups=1, kernel_shape=[3,3]} @fused=["bn"]
///     output y
///   }
std::string printGraph(Graph const& g, PrintOptions options = {});

/// Parses the text form. Constants accept `data=[...]` (exactly the declared element count),
/// `data=random(SEED)` (see makeRandomTensor) and `data=fill(V)`. Errors say "line L, column C: ...".
Result<std::unique_ptr<Graph>> parseGraph(std::string_view text);

/// A deterministic pseudo-random tensor: float types uniform in [-1, 1), integer types in [-8, 8)
/// (uint8 in [0, 16)), bool 0/1. The same seed, dtype and shape always give the same bytes.
Result<HostTensor> makeRandomTensor(DataType dtype, Dims const& shape, uint64_t seed);

/// Formats a double so that it reads back exactly and always looks like a float ("1.0", "2.5e-08", "inf").
std::string formatFloat(double v);

}  // namespace kiln::ir
