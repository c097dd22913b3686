// Einsum equations: parsing an equation against its inputs' shapes into labels per axis (shared by shape
// inference, the reference kernel and the network layer's equation check).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dims.h"
#include "core/status.h"

namespace kiln::ir {

/// A parsed einsum equation. Labels are small integers: 0..51 for the letters a-z, A-Z, then one per axis
/// covered by an ellipsis (right-aligned across inputs, numpy broadcasting of extent 1).
struct EinsumSpec {
  std::vector<std::vector<int32_t>> inputLabels;  // per input, the label of each axis
  std::vector<int32_t> outputLabels;              // label of each output axis
  std::vector<int32_t> summedLabels;              // labels absent from the output
  std::vector<int64_t> extents;                   // by label; -1 unknown
};

/// Checks the equation's syntax alone (letters, ',', '->', one '...' per term).
Status checkEinsumEquation(std::string const& equation);

/// Parses `equation` for inputs of the given shapes (dims may be -1). Implicit output (no "->"): the
/// ellipsis axes, then the letters that appear exactly once, in ASCII order. Errors say what is wrong.
Result<EinsumSpec> parseEinsum(std::string const& equation, std::vector<Dims> const& shapes);

}  // namespace kiln::ir
