// Network I/O formats: each input/output binding gets a memory layout from what ITensor::setAllowedFormats
// allows (kLINEAR whenever it is allowed), and one Reformat converts between the binding and the network.
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"

namespace kiln::builder {

/// The format a binding of `dtype` and rank `rank` gets from the `allowed` set: kLINEAR when allowed, else the
/// first of kHWC8, kHWC16, kDHWC8, kCHW32, kCHW16, kCHW4, kCHW2, kCDHW32, kHWC, kDHWC that is allowed and takes
/// the type and rank (checkIOFormat). Fails naming `tensor`, the allowed set and why each format was refused.
Result<TensorFormat> chooseIOFormat(std::string const& tensor, TensorFormats allowed, DataType dtype, int32_t rank);

/// Chooses the format of every network input and output (`allowed` by tensor name; a name not listed allows
/// everything) and inserts the Reformat layers: an input's users read it through a Reformat from its format
/// (a Reformat from kLINEAR already there, e.g. into channels-last, takes the binding's format instead), an
/// output is written by a Reformat into its format (the one converting it to kLINEAR, if any, converts to the
/// binding's format instead). Returns the bindings that are not kLINEAR. Shapes must be inferred; the caller
/// renumbers the graph and infers it again.
Result<std::map<ir::Value*, TensorFormat>> assignIOFormats(ir::Graph& g,
                                                           std::map<std::string, TensorFormats> const& allowed);

}  // namespace kiln::builder
