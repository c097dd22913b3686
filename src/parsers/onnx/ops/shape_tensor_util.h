// Shape-tensor arithmetic for ONNX importers whose parameters (axes, pads, sizes, starts...) may be graph inputs
// known only at run time: small int64 tensors combined with network layers, which the runtime evaluates once
// their inputs exist (and shape inference folds when they are constants).
#pragma once

#include <string>
#include <vector>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {

/// `t` as INT64 (a cast layer unless it already is).
Result<ITensor*> asInt64(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* t);

/// Input `i` of `node` as a 1-D INT64 tensor (0-D inputs become [1]); error if it has another rank.
Result<ITensor*> int64Vector(ImportContext& ctx, ::onnx::NodeProto const& node, int i);

/// 1-D INT64 constant tensor holding `values`.
Result<ITensor*> int64Const(ImportContext& ctx, ::onnx::NodeProto const& node, std::vector<int64_t> const& values);

/// a op b (same rank, extent-1 axes broadcast).
Result<ITensor*> binary(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* a, ITensor* b,
                        ElementWiseOperation op);

/// condition ? a : b.
Result<ITensor*> choose(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* condition, ITensor* a, ITensor* b);

/// The INT64 shape of `x` (1-D, one entry per axis).
Result<ITensor*> shapeOf(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* x);

/// t[indices] along axis 0.
Result<ITensor*> gather(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* t, ITensor* indices);

/// min(max(t, lo), hi).
Result<ITensor*> clamp(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* t, ITensor* lo, ITensor* hi);

/// Axes (1-D INT64, may be negative) made non-negative for a tensor of rank `rank`: a + (a < 0 ? rank : 0).
Result<ITensor*> normalizeAxes(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* axes, int32_t rank);

/// `t` reshaped to 0-D (it must hold one element).
Result<ITensor*> toScalar(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* t);

/// An assertion layer: the run fails with `message` (prefixed with the node's name) unless every element of the
/// bool tensor `condition` is true.
Status assertAll(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* condition, std::string const& message);

/// The length of a 1-D tensor, if known at build time; error otherwise.
Result<int64_t> vectorLength(::onnx::NodeProto const& node, ITensor* t, char const* what);

}  // namespace kiln::onnx
