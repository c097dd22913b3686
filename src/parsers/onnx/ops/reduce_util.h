// Shared importer of the ONNX Reduce* family: axes from the attribute or from input 1 (ReduceSum from opset 13,
// all from 18; constant or known only at run time), keepdims, noop_with_empty_axes, and the pre/post element-wise
// ops of the composite reductions (L1, L2, LogSum, LogSumExp, SumSquare).
#pragma once

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

/// Imports one Reduce* node of kind `kind`.
Status importReduceKind(ImportContext& ctx, ::onnx::NodeProto const& node, ReduceKind kind);

}  // namespace kiln::onnx
