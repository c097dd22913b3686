// ONNX BatchNormalization. Inference with constant parameters folds into one per-channel scale layer; run-time
// parameters and training mode (batch statistics plus the running mean/var outputs) are composed from
// element-wise and reduce layers.
#include <cmath>
#include <cstring>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// y = (x - mean) / sqrt(var + eps) * scale + B with constant parameters, as a kCHANNEL scale layer.
Status foldedBatchNorm(ImportContext& ctx, Node const& node, ITensor* x, Constant const* const (&p)[4], float eps) {
  int64_t const c = p[0]->count();
  for (int i = 1; i < 4; ++i) {
    if (p[i]->count() != c) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "parameter ", i + 1, " has ", p[i]->count(),
                                      " values, scale has ", c);
    }
  }
  Dims const cd{1, {c}};
  KO_ASSIGN_OR_RETURN(Constant * scale, ctx.newConstant(DataType::kFLOAT, cd));
  KO_ASSIGN_OR_RETURN(Constant * shift, ctx.newConstant(DataType::kFLOAT, cd));
  for (int64_t i = 0; i < c; ++i) {
    double const s = p[0]->asDouble(i) / std::sqrt(p[3]->asDouble(i) + static_cast<double>(eps));
    auto const sc = static_cast<float>(s);
    auto const sh = static_cast<float>(p[1]->asDouble(i) - p[2]->asDouble(i) * s);
    std::memcpy(scale->bytes.data() + i * 4, &sc, 4);
    std::memcpy(shift->bytes.data() + i * 4, &sh, 4);
  }
  IScaleLayer* l = ctx.network().addScaleNd(*x, ScaleMode::kCHANNEL, shift->weights(), scale->weights(),
                                            Weights{DataType::kFLOAT, nullptr, 0}, 1);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "batchnorm"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

/// (x - mean) / sqrt(var + eps) * scale + bias; mean and var already [1, C, 1...] views (or batch statistics).
Result<ITensor*> normalize(ImportContext& ctx, Node const& node, ITensor* x, ITensor* mean, ITensor* var,
                           ITensor* scale, ITensor* bias, float eps) {
  KO_ASSIGN_OR_RETURN(ITensor * e, scalar(ctx, node, var->getType(), static_cast<double>(eps)));
  KO_ASSIGN_OR_RETURN(ITensor * ve, elementwise(ctx, node, var, e, ElementWiseOperation::kSUM));
  KO_ASSIGN_OR_RETURN(ITensor * sd, unary(ctx, node, ve, UnaryOperation::kSQRT));
  KO_ASSIGN_OR_RETURN(ITensor * d, elementwise(ctx, node, x, mean, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * n, elementwise(ctx, node, d, sd, ElementWiseOperation::kDIV));
  KO_ASSIGN_OR_RETURN(ITensor * s, elementwise(ctx, node, n, scale, ElementWiseOperation::kPROD));
  return elementwise(ctx, node, s, bias, ElementWiseOperation::kSUM);
}

Status importBatchNormalization(ImportContext& ctx, Node const& node) {
  if (node.input_size() != 5) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "expects 5 inputs, got ", node.input_size());
  }
  // training_mode exists from opset 14; before it extra outputs meant training (opset < 9 also `is_test`).
  KO_ASSIGN_OR_RETURN(int64_t training, attrInt(node, "training_mode", 0));
  bool const extraOutputs =
      (node.output_size() > 1 && !node.output(1).empty()) || (node.output_size() > 2 && !node.output(2).empty());
  if (training == 0 && extraOutputs) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node,
                                    "the running mean/var outputs need training_mode=1 (opset >= 14)");
  }
  if (node.output_size() > 3) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node,
                                    "the saved mean/var outputs (opset < 14) are not supported");
  }
  KO_ASSIGN_OR_RETURN(int64_t spatial, attrInt(node, "spatial", 1));
  if (spatial == 0) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "spatial=0 is not supported");
  }
  KO_ASSIGN_OR_RETURN(float eps, attrFloat(node, "epsilon", 1e-5F));
  KO_ASSIGN_OR_RETURN(float momentum, attrFloat(node, "momentum", 0.9F));
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t rank, rankOf(node, x));
  if (rank < 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input rank ", rank, " is below 2");
  }
  Constant const* p[4];
  bool allConstant = true;
  for (int i = 0; i < 4; ++i) {
    p[i] = ctx.constant(node, i + 1);
    allConstant &= p[i] != nullptr;
  }
  if (training == 0 && allConstant) {
    return foldedBatchNorm(ctx, node, x, p, eps);
  }
  ITensor* v[4];  // scale, B, mean, var as [1, C, 1, ...]
  for (int i = 0; i < 4; ++i) {
    KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, i + 1));
    KO_ASSIGN_OR_RETURN(v[i], perChannelView(ctx, node, t, rank));
  }
  if (training == 0) {
    KO_ASSIGN_OR_RETURN(ITensor * y, normalize(ctx, node, x, v[2], v[3], v[0], v[1], eps));
    return ctx.setOutput(node, 0, y);
  }
  // Training: normalize with the batch statistics (population variance) over every axis but 1.
  uint32_t const axes = allAxes(rank) & ~(1U << 1U);
  KO_ASSIGN_OR_RETURN(ITensor * mean, reduce(ctx, node, x, ReduceOperation::kAVG, axes, true));
  KO_ASSIGN_OR_RETURN(ITensor * d, elementwise(ctx, node, x, mean, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * d2, elementwise(ctx, node, d, d, ElementWiseOperation::kPROD));
  KO_ASSIGN_OR_RETURN(ITensor * var, reduce(ctx, node, d2, ReduceOperation::kAVG, axes, true));
  KO_ASSIGN_OR_RETURN(ITensor * y, normalize(ctx, node, x, mean, var, v[0], v[1], eps));
  KO_RETURN_IF_ERROR(ctx.setOutput(node, 0, y));
  // running = input_running * momentum + batch * (1 - momentum), as [C].
  ITensor* const batch[2] = {mean, var};
  for (int k = 0; k < 2; ++k) {
    if (node.output_size() <= k + 1 || node.output(k + 1).empty()) {
      continue;
    }
    KO_ASSIGN_OR_RETURN(ITensor * running, ctx.tensor(node, 3 + k));
    KO_ASSIGN_OR_RETURN(ITensor * m, scalar(ctx, node, running->getType(), static_cast<double>(momentum)));
    KO_ASSIGN_OR_RETURN(ITensor * m1, scalar(ctx, node, running->getType(), 1.0 - static_cast<double>(momentum)));
    KO_ASSIGN_OR_RETURN(ITensor * flat, reshape(ctx, node, batch[k], Dims{1, {-1}}));
    KO_ASSIGN_OR_RETURN(ITensor * a, elementwise(ctx, node, running, m, ElementWiseOperation::kPROD));
    KO_ASSIGN_OR_RETURN(ITensor * b, elementwise(ctx, node, flat, m1, ElementWiseOperation::kPROD));
    KO_ASSIGN_OR_RETURN(ITensor * out, elementwise(ctx, node, a, b, ElementWiseOperation::kSUM));
    KO_RETURN_IF_ERROR(ctx.setOutput(node, k + 1, out));
  }
  return Status::success();
}

KILN_ONNX_REGISTER("", "BatchNormalization", importBatchNormalization);

}  // namespace
}  // namespace kiln::onnx
