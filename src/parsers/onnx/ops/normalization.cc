// ONNX normalization importers: BatchNormalization (inference form, folded into a per-channel scale layer when
// its parameters are constants), InstanceNormalization and LayerNormalization (normalization layer).
#include <cmath>
#include <cstring>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importBatchNormalization(ImportContext& ctx, Node const& node) {
  if (node.input_size() != 5) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "expects 5 inputs, got ", node.input_size());
  }
  KO_ASSIGN_OR_RETURN(int64_t training, attrInt(node, "training_mode", 0));
  if (training != 0 || (node.output_size() > 1 && !node.output(1).empty())) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "training mode is not supported");
  }
  KO_ASSIGN_OR_RETURN(int64_t spatial, attrInt(node, "spatial", 1));
  if (spatial == 0) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "spatial=0 is not supported");
  }
  KO_ASSIGN_OR_RETURN(float eps, attrFloat(node, "epsilon", 1e-5F));
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t rank, rankOf(node, x));
  if (rank < 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input rank ", rank, " is below 2");
  }
  Constant const* p[4];
  for (int i = 0; i < 4; ++i) {
    p[i] = ctx.constant(node, i + 1);
    if (p[i] == nullptr) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_INPUT, node,
                                      "scale, B, mean and var must be constants");
    }
  }
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

/// Scale/bias input `i` reshaped so that it broadcasts against rank `rank` along axis 1 ([1,C,1,...]).
Result<ITensor*> perChannel(ImportContext& ctx, Node const& node, int i, int32_t rank) {
  KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, i));
  Dims d{rank, {}};
  for (int32_t k = 0; k < rank; ++k) {
    d.d[k] = 1;
  }
  d.d[1] = -1;
  return reshape(ctx, node, t, d);
}

Status importInstanceNormalization(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(float eps, attrFloat(node, "epsilon", 1e-5F));
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t rank, rankOf(node, x));
  if (rank < 3) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input rank ", rank, " is below 3");
  }
  KO_ASSIGN_OR_RETURN(ITensor * scale, perChannel(ctx, node, 1, rank));
  KO_ASSIGN_OR_RETURN(ITensor * bias, perChannel(ctx, node, 2, rank));
  uint32_t axes = 0;
  for (int32_t i = 2; i < rank; ++i) {
    axes |= 1U << static_cast<uint32_t>(i);
  }
  INormalizationLayer* l = ctx.network().addNormalization(*x, *scale, *bias, axes);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "instancenorm"));
  l->setEpsilon(eps);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importLayerNormalization(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(float eps, attrFloat(node, "epsilon", 1e-5F));
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", -1));
  KO_ASSIGN_OR_RETURN(int64_t stash, attrInt(node, "stash_type", 1));
  (void)stash;
  for (int i = 1; i < node.output_size(); ++i) {
    if (!node.output(i).empty()) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node,
                                      "the Mean/InvStdDev outputs are not supported yet");
    }
  }
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t rank, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, rank));
  KO_ASSIGN_OR_RETURN(ITensor * scale, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(scale, broadcastToRank(ctx, node, scale, rank));
  ITensor* bias = nullptr;
  if (ImportContext::hasInput(node, 2)) {
    KO_ASSIGN_OR_RETURN(bias, ctx.tensor(node, 2));
  } else {
    KO_ASSIGN_OR_RETURN(Constant * zero, ctx.newConstant(scale->getType(), Dims{0, {}}));
    KO_ASSIGN_OR_RETURN(bias, ctx.constantTensor(zero, node.name() + "_zero_bias"));
  }
  KO_ASSIGN_OR_RETURN(bias, broadcastToRank(ctx, node, bias, rank));
  uint32_t axes = 0;
  for (int32_t i = axis; i < rank; ++i) {
    axes |= 1U << static_cast<uint32_t>(i);
  }
  INormalizationLayer* l = ctx.network().addNormalization(*x, *scale, *bias, axes);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "layernorm"));
  l->setEpsilon(eps);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "BatchNormalization", importBatchNormalization);
KILN_ONNX_REGISTER("", "InstanceNormalization", importInstanceNormalization);
KILN_ONNX_REGISTER("", "LayerNormalization", importLayerNormalization);

}  // namespace
}  // namespace kiln::onnx
