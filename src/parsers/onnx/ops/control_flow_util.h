// Helpers shared by the control-flow importers (Loop, Scan and the recurrent ops): loop counters, scalars and
// body-output copies.
#pragma once

#include <string>
#include <vector>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {

/// True if `graph` (or a subgraph nested in it) reads the value `name`, or lists it as an output.
bool graphReads(::onnx::GraphProto const& graph, std::string const& name);

/// `t` (one element) as a 0-D tensor; error naming the node and `what` if it holds more than one element.
Result<ITensor*> scalarOf(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* t, char const* what);

/// A 0-D constant tensor of `type` (kINT32, kINT64 or kFLOAT) holding `v`.
Result<ITensor*> scalarConstant(ImportContext& ctx, ::onnx::NodeProto const& node, DataType type, double v);

/// A recurrence of `loop` counting iterations from `start` by `step` (0-D tensor of `type`, kINT32 or kINT64);
/// returns the count of the current iteration. `start` defaults to a constant 0.
Result<ITensor*> iterationCounter(ImportContext& ctx, ::onnx::NodeProto const& node, ILoop& loop, DataType type,
                                  ITensor* start = nullptr, int64_t step = 1);

/// `t`, or a copy of it when it is one of `boundary` (a body input: the loop needs a body-made tensor).
Result<ITensor*> distinctFrom(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* t,
                              std::vector<ITensor*> const& boundary);

}  // namespace kiln::onnx
