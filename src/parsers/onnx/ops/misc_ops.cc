// ONNX importers composed from Kiln layers or mapped onto the breadth layers: DepthToSpace/SpaceToDepth
// (shuffles), Hardmax, LRN, MeanVarianceNormalization, GroupNormalization, ReverseSequence, GridSample,
// Celu/Mish/HardSwish.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Result<ITensor*> ew(ImportContext& ctx, Node const& node, ITensor* a, ITensor* b, ElementWiseOperation op) {
  KO_ASSIGN_OR_RETURN(int32_t ra, rankOf(node, a));
  KO_ASSIGN_OR_RETURN(int32_t rb, rankOf(node, b));
  int32_t const r = std::max(ra, rb);
  KO_ASSIGN_OR_RETURN(a, broadcastToRank(ctx, node, a, r));
  KO_ASSIGN_OR_RETURN(b, broadcastToRank(ctx, node, b, r));
  IElementWiseLayer* l = ctx.network().addElementWise(*a, *b, op);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "elementwise"));
  return l->getOutput(0);
}

Result<ITensor*> unary(ImportContext& ctx, Node const& node, ITensor* x, UnaryOperation op) {
  IUnaryLayer* l = ctx.network().addUnary(*x, op);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "unary"));
  return l->getOutput(0);
}

/// A 0-D constant of `type` (FLOAT, INT32 or INT64) holding `v`.
Result<ITensor*> scalar(ImportContext& ctx, Node const& node, DataType type, double v, char const* tag) {
  KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(type, Dims{0, {}}));
  if (type == DataType::kFLOAT) {
    float f = static_cast<float>(v);
    std::memcpy(c->bytes.data(), &f, sizeof(f));
  } else if (type == DataType::kINT32) {
    int32_t i = static_cast<int32_t>(v);
    std::memcpy(c->bytes.data(), &i, sizeof(i));
  } else if (type == DataType::kINT64) {
    int64_t i = static_cast<int64_t>(v);
    std::memcpy(c->bytes.data(), &i, sizeof(i));
  } else {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "type ", static_cast<int>(type),
                                    " is not supported here yet (FLOAT, INT32, INT64)");
  }
  return ctx.constantTensor(c, node.name() + tag);
}

Result<Dims> staticDims(Node const& node, ITensor* x, int32_t from) {
  Dims const d = x->getDimensions();
  for (int32_t i = from; i < d.nbDims; ++i) {
    if (d.d[i] < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node, "needs static extents after axis ",
                                      from - 1, ", got ", dimsString(d), " (not supported yet)");
    }
  }
  return d;
}

/// Reshape, then transpose (one shuffle), then reshape again.
Result<ITensor*> reshapeTransposeReshape(ImportContext& ctx, Node const& node, ITensor* x, Dims const& first,
                                         Permutation perm, Dims const& last) {
  IShuffleLayer* a = ctx.network().addShuffle(*x);
  KO_RETURN_IF_ERROR(ctx.check(a, node, "shuffle"));
  a->setReshapeDimensions(first);
  a->setSecondTranspose(perm);
  return reshape(ctx, node, a->getOutput(0), last);
}

template <bool kToSpace>
Status importDepthSpace(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int64_t b, attrInt(node, "blocksize", 0));
  KO_ASSIGN_OR_RETURN(std::string mode, attrString(node, "mode", "DCR"));
  if (r != 4 || b <= 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "needs a 4-D input and blocksize > 0");
  }
  KO_ASSIGN_OR_RETURN(Dims d, staticDims(node, x, 1));
  int64_t const c = d.d[1];
  int64_t const h = d.d[2];
  int64_t const w = d.d[3];
  ITensor* y = nullptr;
  if (kToSpace) {
    if (c % (b * b) != 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "channels ", c, " not divisible by blocksize^2");
    }
    int64_t const co = c / (b * b);
    Dims const last{4, {0, co, h * b, w * b}};
    if (mode == "DCR") {
      KO_ASSIGN_OR_RETURN(y, reshapeTransposeReshape(ctx, node, x, Dims{6, {0, b, b, co, h, w}},
                                                     Permutation{{0, 3, 4, 1, 5, 2}}, last));
    } else if (mode == "CRD") {
      KO_ASSIGN_OR_RETURN(y, reshapeTransposeReshape(ctx, node, x, Dims{6, {0, co, b, b, h, w}},
                                                     Permutation{{0, 1, 4, 2, 5, 3}}, last));
    } else {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "unknown mode '", mode, "'");
    }
  } else {
    if (h % b != 0 || w % b != 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "spatial extents not divisible by blocksize");
    }
    KO_ASSIGN_OR_RETURN(y, reshapeTransposeReshape(ctx, node, x, Dims{6, {0, c, h / b, b, w / b, b}},
                                                   Permutation{{0, 3, 5, 1, 2, 4}},
                                                   Dims{4, {0, c * b * b, h / b, w / b}}));
  }
  return ctx.setOutput(node, 0, y);
}

/// Hardmax: TopK k = 1 for the arg max, then OneHot back onto the axis. Before opset 13 the input is flattened
/// to 2-D at `axis` (static extents needed when that is not the last axis).
Status importHardmax(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  bool const legacy = ctx.opset() < 13;
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", legacy ? 1 : -1));
  if (r == 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input must have rank >= 1");
  }
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
  Dims const in = x->getDimensions();
  ITensor* t = x;
  bool flattened = false;
  if (legacy && axis != r - 1) {
    KO_ASSIGN_OR_RETURN(Dims d, staticDims(node, x, 0));
    int64_t outer = 1;
    for (int32_t i = 0; i < axis; ++i) {
      outer *= d.d[i];
    }
    KO_ASSIGN_OR_RETURN(t, reshape(ctx, node, x, Dims{2, {outer, -1}}));
    axis = 1;
    flattened = true;
  }
  Dims const td = t->getDimensions();
  if (td.d[axis] < 0) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                    "needs a static extent on the axis (not supported yet)");
  }
  ITopKLayer* top = ctx.network().addTopK(*t, TopKOperation::kMAX, 1, 1U << static_cast<uint32_t>(axis));
  KO_RETURN_IF_ERROR(ctx.check(top, node, "topk"));
  top->setIndicesType(DataType::kINT64);
  KO_ASSIGN_OR_RETURN(ITensor * axes, ctx.int64Tensor({axis}, node.name() + "_axes"));
  ISqueezeLayer* sq = ctx.network().addSqueeze(*top->getOutput(1), *axes);
  KO_RETURN_IF_ERROR(ctx.check(sq, node, "squeeze"));
  if (t->getType() != DataType::kFLOAT) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "supports FLOAT only");
  }
  KO_ASSIGN_OR_RETURN(Constant * vals, ctx.newConstant(DataType::kFLOAT, Dims{1, {2}}));
  float const v[2] = {0.0F, 1.0F};
  std::memcpy(vals->bytes.data(), v, sizeof(v));
  KO_ASSIGN_OR_RETURN(ITensor * vt, ctx.constantTensor(vals, node.name() + "_values"));
  KO_ASSIGN_OR_RETURN(ITensor * depth, scalar(ctx, node, DataType::kINT64, static_cast<double>(td.d[axis]), "_depth"));
  IOneHotLayer* oh = ctx.network().addOneHot(*sq->getOutput(0), *vt, *depth, axis);
  KO_RETURN_IF_ERROR(ctx.check(oh, node, "onehot"));
  ITensor* y = oh->getOutput(0);
  if (flattened) {
    KO_ASSIGN_OR_RETURN(y, reshape(ctx, node, y, in));
  }
  return ctx.setOutput(node, 0, y);
}

Status importLRN(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int64_t size, attrInt(node, "size", 0));
  KO_ASSIGN_OR_RETURN(float alpha, attrFloat(node, "alpha", 1e-4F));
  KO_ASSIGN_OR_RETURN(float beta, attrFloat(node, "beta", 0.75F));
  KO_ASSIGN_OR_RETURN(float bias, attrFloat(node, "bias", 1.0F));
  if (size <= 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "size must be positive");
  }
  ILRNLayer* l = ctx.network().addLRN(*x, size, alpha, beta, bias);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "lrn"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

/// (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9) over `axes` (ONNX's function body).
Status importMVN(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> axes, attrInts(node, "axes", {0, 2, 3}));
  uint32_t mask = 0;
  for (int64_t a : axes) {
    KO_ASSIGN_OR_RETURN(int32_t n, normalizeAxis(node, a, r));
    mask |= 1U << static_cast<uint32_t>(n);
  }
  IReduceLayer* mean = ctx.network().addReduce(*x, ReduceOperation::kAVG, mask, true);
  KO_RETURN_IF_ERROR(ctx.check(mean, node, "mean"));
  KO_ASSIGN_OR_RETURN(ITensor * x2, ew(ctx, node, x, x, ElementWiseOperation::kPROD));
  IReduceLayer* ex2 = ctx.network().addReduce(*x2, ReduceOperation::kAVG, mask, true);
  KO_RETURN_IF_ERROR(ctx.check(ex2, node, "mean_square"));
  ITensor* m = mean->getOutput(0);
  KO_ASSIGN_OR_RETURN(ITensor * m2, ew(ctx, node, m, m, ElementWiseOperation::kPROD));
  KO_ASSIGN_OR_RETURN(ITensor * var, ew(ctx, node, ex2->getOutput(0), m2, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * sd, unary(ctx, node, var, UnaryOperation::kSQRT));
  KO_ASSIGN_OR_RETURN(ITensor * eps, scalar(ctx, node, x->getType(), 1e-9, "_eps"));
  KO_ASSIGN_OR_RETURN(sd, ew(ctx, node, sd, eps, ElementWiseOperation::kSUM));
  KO_ASSIGN_OR_RETURN(ITensor * d, ew(ctx, node, x, m, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * y, ew(ctx, node, d, sd, ElementWiseOperation::kDIV));
  return ctx.setOutput(node, 0, y);
}

/// GroupNormalization: [N, G, -1] statistics, then per-channel scale and bias (opset 18's per-group scale and
/// bias, when constant, are expanded to channels).
Status importGroupNorm(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(float epsilon, attrFloat(node, "epsilon", 1e-5F));
  KO_ASSIGN_OR_RETURN(int64_t groups, attrInt(node, "num_groups", 0));
  if (r < 2 || groups <= 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "needs rank >= 2 and num_groups > 0");
  }
  if (x->getType() != DataType::kFLOAT) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "supports FLOAT only");
  }
  int64_t const c = x->getDimensions().d[1];
  if (c < 0 || c % groups != 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "channels ", c,
                                    " must be static and divisible by num_groups ", groups);
  }
  IShapeLayer* shape = ctx.network().addShape(*x);
  KO_RETURN_IF_ERROR(ctx.check(shape, node, "shape"));
  KO_ASSIGN_OR_RETURN(ITensor * g, reshape(ctx, node, x, Dims{3, {0, groups, -1}}));
  IReduceLayer* mean = ctx.network().addReduce(*g, ReduceOperation::kAVG, 4U, true);
  KO_RETURN_IF_ERROR(ctx.check(mean, node, "mean"));
  KO_ASSIGN_OR_RETURN(ITensor * d, ew(ctx, node, g, mean->getOutput(0), ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * d2, ew(ctx, node, d, d, ElementWiseOperation::kPROD));
  IReduceLayer* var = ctx.network().addReduce(*d2, ReduceOperation::kAVG, 4U, true);
  KO_RETURN_IF_ERROR(ctx.check(var, node, "variance"));
  KO_ASSIGN_OR_RETURN(ITensor * eps, scalar(ctx, node, DataType::kFLOAT, epsilon, "_eps"));
  KO_ASSIGN_OR_RETURN(ITensor * ve, ew(ctx, node, var->getOutput(0), eps, ElementWiseOperation::kSUM));
  KO_ASSIGN_OR_RETURN(ITensor * sd, unary(ctx, node, ve, UnaryOperation::kSQRT));
  KO_ASSIGN_OR_RETURN(ITensor * n, ew(ctx, node, d, sd, ElementWiseOperation::kDIV));
  IShuffleLayer* back = ctx.network().addShuffle(*n);
  KO_RETURN_IF_ERROR(ctx.check(back, node, "restore_shape"));
  back->setInput(1, *shape->getOutput(0));
  ITensor* y = back->getOutput(0);
  Dims cshape{r, {}};
  for (int32_t i = 0; i < r; ++i) {
    cshape.d[i] = i == 1 ? c : 1;
  }
  for (int i = 1; i <= 2; ++i) {
    ITensor* p = nullptr;
    Constant const* pc = ctx.constant(node, i);
    if (pc != nullptr && pc->count() == groups && groups != c) {
      KO_ASSIGN_OR_RETURN(Constant * e, ctx.newConstant(DataType::kFLOAT, cshape));
      for (int64_t k = 0; k < c; ++k) {
        float const v = static_cast<float>(pc->asDouble(k / (c / groups)));
        std::memcpy(e->bytes.data() + k * 4, &v, 4);
      }
      KO_ASSIGN_OR_RETURN(p, ctx.constantTensor(e, node.name() + (i == 1 ? "_scale" : "_bias")));
    } else {
      KO_ASSIGN_OR_RETURN(p, ctx.tensor(node, i));
      Dims const pd = p->getDimensions();
      if (pd.nbDims != 1 || pd.d[0] != c) {
        return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_INPUT, node, "scale/bias ", dimsString(pd),
                                        " must be [C] or constant [num_groups]");
      }
      KO_ASSIGN_OR_RETURN(p, reshape(ctx, node, p, cshape));
    }
    KO_ASSIGN_OR_RETURN(y, ew(ctx, node, y, p, i == 1 ? ElementWiseOperation::kPROD : ElementWiseOperation::kSUM));
  }
  return ctx.setOutput(node, 0, y);
}

Status importReverseSequence(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * lens, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int64_t batchAttr, attrInt(node, "batch_axis", 1));
  KO_ASSIGN_OR_RETURN(int64_t timeAttr, attrInt(node, "time_axis", 0));
  KO_ASSIGN_OR_RETURN(int32_t batch, normalizeAxis(node, batchAttr, r));
  KO_ASSIGN_OR_RETURN(int32_t time, normalizeAxis(node, timeAttr, r));
  IReverseSequenceLayer* l = ctx.network().addReverseSequence(*x, *lens);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "reverse_sequence"));
  l->setBatchAxis(batch);
  l->setSequenceAxis(time);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importGridSample(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * grid, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(std::string mode, attrString(node, "mode", ctx.opset() >= 20 ? "linear" : "bilinear"));
  KO_ASSIGN_OR_RETURN(std::string pad, attrString(node, "padding_mode", "zeros"));
  KO_ASSIGN_OR_RETURN(int64_t align, attrInt(node, "align_corners", 0));
  InterpolationMode im = InterpolationMode::kLINEAR;
  if (mode == "nearest") {
    im = InterpolationMode::kNEAREST;
  } else if (mode == "bicubic" || mode == "cubic") {
    im = InterpolationMode::kCUBIC;
  } else if (mode != "bilinear" && mode != "linear") {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "unknown mode '", mode, "'");
  }
  SampleMode sm = SampleMode::kFILL;
  if (pad == "border") {
    sm = SampleMode::kCLAMP;
  } else if (pad == "reflection") {
    sm = SampleMode::kREFLECT;
  } else if (pad != "zeros") {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "unknown padding_mode '", pad, "'");
  }
  IGridSampleLayer* l = ctx.network().addGridSample(*x, *grid);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "grid_sample"));
  l->setInterpolationMode(im);
  l->setAlignCorners(align != 0);
  l->setSampleMode(sm);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Result<ITensor*> activation(ImportContext& ctx, Node const& node, ITensor* x, ActivationType t, float alpha,
                            float beta) {
  IActivationLayer* l = ctx.network().addActivation(*x, t);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "activation"));
  l->setAlpha(alpha);
  l->setBeta(beta);
  return l->getOutput(0);
}

/// Celu(x) = alpha * elu(x / alpha).
Status importCelu(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(float alpha, attrFloat(node, "alpha", 1.0F));
  KO_ASSIGN_OR_RETURN(ITensor * a, scalar(ctx, node, x->getType(), alpha, "_alpha"));
  KO_ASSIGN_OR_RETURN(ITensor * t, ew(ctx, node, x, a, ElementWiseOperation::kDIV));
  KO_ASSIGN_OR_RETURN(t, activation(ctx, node, t, ActivationType::kELU, 1.0F, 0.0F));
  KO_ASSIGN_OR_RETURN(t, ew(ctx, node, t, a, ElementWiseOperation::kPROD));
  return ctx.setOutput(node, 0, t);
}

/// Mish(x) = x * tanh(softplus(x)).
Status importMish(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * t, activation(ctx, node, x, ActivationType::kSOFTPLUS, 1.0F, 1.0F));
  KO_ASSIGN_OR_RETURN(t, activation(ctx, node, t, ActivationType::kTANH, 0.0F, 0.0F));
  KO_ASSIGN_OR_RETURN(t, ew(ctx, node, x, t, ElementWiseOperation::kPROD));
  return ctx.setOutput(node, 0, t);
}

/// HardSwish(x) = x * HardSigmoid(x; alpha = 1/6, beta = 0.5).
Status importHardSwish(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * t, activation(ctx, node, x, ActivationType::kHARD_SIGMOID, 1.0F / 6.0F, 0.5F));
  KO_ASSIGN_OR_RETURN(t, ew(ctx, node, x, t, ElementWiseOperation::kPROD));
  return ctx.setOutput(node, 0, t);
}

KILN_ONNX_REGISTER("", "DepthToSpace", importDepthSpace<true>);
KILN_ONNX_REGISTER("", "SpaceToDepth", importDepthSpace<false>);
KILN_ONNX_REGISTER("", "Hardmax", importHardmax);
KILN_ONNX_REGISTER("", "LRN", importLRN);
KILN_ONNX_REGISTER("", "MeanVarianceNormalization", importMVN);
KILN_ONNX_REGISTER("", "GroupNormalization", importGroupNorm);
KILN_ONNX_REGISTER("", "ReverseSequence", importReverseSequence);
KILN_ONNX_REGISTER("", "GridSample", importGridSample);
KILN_ONNX_REGISTER("", "Celu", importCelu);
KILN_ONNX_REGISTER("", "Mish", importMish);
KILN_ONNX_REGISTER("", "HardSwish", importHardSwish);

}  // namespace
}  // namespace kiln::onnx
