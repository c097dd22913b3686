// Small builders shared by importers that compose an ONNX op from public network layers (losses, optimizers,
// training-mode normalization): broadcasting element-wise ops, scalars of a given type, casts, selects, reductions.
#pragma once

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {

/// a `op` b with both brought to the same rank by leading 1-dims (numpy broadcasting). Layers are named after
/// `node`; fails naming the node if the network refuses a layer.
Result<ITensor*> elementwise(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* a, ITensor* b,
                             ElementWiseOperation op);

/// `op`(x).
Result<ITensor*> unary(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* x, UnaryOperation op);

/// Rank-0 constant of `type` holding `value`. Float, double, integer and bool types are stored directly; other
/// types (half, bfloat16, fp8) are stored as float and cast.
Result<ITensor*> scalar(ImportContext& ctx, ::onnx::NodeProto const& node, DataType type, double value);

/// x cast to `type` (x itself when it already has that type).
Result<ITensor*> cast(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* x, DataType type);

/// cond ? a : b with numpy broadcasting of all three (cond is kBOOL).
Result<ITensor*> select(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* cond, ITensor* a, ITensor* b);

/// Reduction `op` over the axes in the `axes` bit mask.
Result<ITensor*> reduce(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* x, ReduceOperation op,
                        uint32_t axes, bool keepDims);

/// Bit mask of all axes of a rank-`rank` tensor.
inline uint32_t allAxes(int32_t rank) { return rank <= 0 ? 0U : (rank >= 32 ? ~0U : (1U << rank) - 1U); }

/// `t` (rank 1) reshaped to [1, C, 1, ...] of rank `rank` so that it broadcasts along axis 1.
Result<ITensor*> perChannelView(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* t, int32_t rank);

/// Host result of integer `op` (kSUM, kSUB or kPROD) on inputs 0 and 1 of `node` when both are int32/int64
/// constants of one type that broadcast trivially (equal dims, or one holds a single element); nullptr when
/// they are not, so the caller adds a layer instead. Keeps shape arithmetic of constants constant.
Result<Constant const*> foldIntegerBinary(ImportContext& ctx, ::onnx::NodeProto const& node, ElementWiseOperation op);

}  // namespace kiln::onnx
