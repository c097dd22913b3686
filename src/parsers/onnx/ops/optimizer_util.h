// Pieces shared by the ai.onnx.preview.training optimizer importers (Adagrad, Adam, Momentum): the run-time
// learning rate R and step count T, and a*x + b with a constant a.
#pragma once

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {

/// The ai.onnx.preview.training domain.
inline constexpr char const* kTrainingDomain = "ai.onnx.preview.training";

/// a * x + b for a constant `a` (b may be nullptr: a * x).
inline Result<ITensor*> axpb(ImportContext& ctx, ::onnx::NodeProto const& node, double a, ITensor* x, ITensor* b) {
  KO_ASSIGN_OR_RETURN(ITensor * at, scalar(ctx, node, x->getType(), a));
  KO_ASSIGN_OR_RETURN(ITensor * ax, elementwise(ctx, node, at, x, ElementWiseOperation::kPROD));
  if (b == nullptr) {
    return ax;
  }
  return elementwise(ctx, node, ax, b, ElementWiseOperation::kSUM);
}

/// Checks that `node` has 2 + k * n inputs (R, T, then k groups of n tensors) and k' * n outputs; returns n.
inline Result<int> optimizerGroups(::onnx::NodeProto const& node, int inputGroups, int outputGroups) {
  int const n = (node.input_size() - 2) / inputGroups;
  if (node.input_size() < 2 + inputGroups || (node.input_size() - 2) % inputGroups != 0 ||
      node.output_size() != outputGroups * n) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "expects R, T and ", inputGroups,
                                    " groups of tensors in, ", outputGroups, " groups out; got ", node.input_size(),
                                    " inputs and ", node.output_size(), " outputs");
  }
  return n;
}

/// T > 0 as a kBOOL scalar (T is the int64 step count, input 1).
inline Result<ITensor*> stepPositive(ImportContext& ctx, ::onnx::NodeProto const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(ITensor * zero, scalar(ctx, node, t->getType(), 0));
  return elementwise(ctx, node, t, zero, ElementWiseOperation::kGREATER);
}

}  // namespace kiln::onnx
