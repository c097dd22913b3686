// ONNX Dropout. At inference (no training_mode, or a constant false one) y is x and the optional mask is all
// true. With training_mode true or known only at run time it is composed from a uniform random fill:
// keep = !(u < ratio) (or !training), y = keep ? x / (1 - ratio) : 0, so a zero ratio gives y = x exactly.
// Random draws come from Kiln's own generator: they cannot match another runtime's for ratio > 0.
#include <cstring>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

bool wanted(Node const& node, int i) { return node.output_size() > i && !node.output(i).empty(); }

/// True when every extent of `d` is known.
bool isStatic(Dims const& d) {
  for (int32_t i = 0; i < d.nbDims; ++i) {
    if (d.d[i] < 0) {
      return false;
    }
  }
  return d.nbDims >= 0;
}

/// A kFLOAT tensor of x's shape: uniform draws in [0, 1) (kRANDOM_UNIFORM) or zeros (kLINSPACE, step 0).
Result<ITensor*> fillLike(ImportContext& ctx, Node const& node, ITensor* x, FillOperation op) {
  Dims const d = x->getDimensions();
  bool const known = isStatic(d);
  IFillLayer* f = ctx.network().addFill(known ? d : Dims{0, {}}, op, DataType::kFLOAT);
  KO_RETURN_IF_ERROR(ctx.check(f, node, "fill"));
  f->setAlpha(0.0);
  f->setBeta(op == FillOperation::kRANDOM_UNIFORM ? 1.0 : 0.0);
  if (!known) {
    IShapeLayer* s = ctx.network().addShape(*x);
    KO_RETURN_IF_ERROR(ctx.check(s, node, "shape"));
    f->setInput(0, *s->getOutput(0));
  }
  return f->getOutput(0);
}

/// All-true kBOOL tensor of x's shape: a constant when the shape is known, else zeros == 0.
Result<ITensor*> allTrueLike(ImportContext& ctx, Node const& node, ITensor* x) {
  Dims const d = x->getDimensions();
  if (isStatic(d)) {
    KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(DataType::kBOOL, d));
    std::memset(c->bytes.data(), 1, c->bytes.size());
    return ctx.constantTensor(c, node.name() + "_mask");
  }
  KO_ASSIGN_OR_RETURN(ITensor * zeros, fillLike(ctx, node, x, FillOperation::kLINSPACE));
  KO_ASSIGN_OR_RETURN(ITensor * zero, scalar(ctx, node, DataType::kFLOAT, 0));
  return elementwise(ctx, node, zeros, zero, ElementWiseOperation::kEQUAL);
}

Status inferenceDropout(ImportContext& ctx, Node const& node) {
  if (Constant const* c = ctx.constant(node, 0); c != nullptr && !wanted(node, 1)) {
    return ctx.setOutputConstant(node, 0, c);
  }
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  IIdentityLayer* l = ctx.network().addIdentity(*x);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "identity"));
  KO_RETURN_IF_ERROR(ctx.setOutput(node, 0, l->getOutput(0)));
  if (wanted(node, 1)) {
    KO_ASSIGN_OR_RETURN(ITensor * mask, allTrueLike(ctx, node, x));
    // Before opset 10 the mask has x's type.
    if (ctx.opset() < 10) {
      KO_ASSIGN_OR_RETURN(mask, cast(ctx, node, mask, x->getType()));
    }
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 1, mask));
  }
  return Status::success();
}

Status importDropout(ImportContext& ctx, Node const& node) {
  if (ctx.opset() < 12 || !ImportContext::hasInput(node, 2)) {
    return inferenceDropout(ctx, node);
  }
  ITensor* training = nullptr;  // nullptr: known true
  if (Constant const* t = ctx.constant(node, 2)) {
    if (t->count() != 1) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "training_mode must be a scalar");
    }
    if (t->asInt(0) == 0) {
      return inferenceDropout(ctx, node);
    }
  } else {
    KO_ASSIGN_OR_RETURN(training, ctx.tensor(node, 2));
  }
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  ITensor* ratio = nullptr;
  if (ImportContext::hasInput(node, 1)) {
    KO_ASSIGN_OR_RETURN(ratio, ctx.tensor(node, 1));
    KO_ASSIGN_OR_RETURN(ratio, cast(ctx, node, ratio, DataType::kFLOAT));
  } else {
    KO_ASSIGN_OR_RETURN(ratio, scalar(ctx, node, DataType::kFLOAT, 0.5));
  }
  KO_ASSIGN_OR_RETURN(ITensor * u, fillLike(ctx, node, x, FillOperation::kRANDOM_UNIFORM));
  KO_ASSIGN_OR_RETURN(ITensor * dropped, elementwise(ctx, node, u, ratio, ElementWiseOperation::kLESS));
  KO_ASSIGN_OR_RETURN(ITensor * keep, unary(ctx, node, dropped, UnaryOperation::kNOT));
  KO_ASSIGN_OR_RETURN(ITensor * one, scalar(ctx, node, DataType::kFLOAT, 1));
  KO_ASSIGN_OR_RETURN(ITensor * kept, elementwise(ctx, node, one, ratio, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * scale, elementwise(ctx, node, one, kept, ElementWiseOperation::kDIV));
  if (training != nullptr) {
    KO_ASSIGN_OR_RETURN(ITensor * off, unary(ctx, node, training, UnaryOperation::kNOT));
    KO_ASSIGN_OR_RETURN(keep, elementwise(ctx, node, keep, off, ElementWiseOperation::kOR));
    KO_ASSIGN_OR_RETURN(scale, select(ctx, node, training, scale, one));
  }
  KO_ASSIGN_OR_RETURN(scale, cast(ctx, node, scale, x->getType()));
  KO_ASSIGN_OR_RETURN(ITensor * scaled, elementwise(ctx, node, x, scale, ElementWiseOperation::kPROD));
  KO_ASSIGN_OR_RETURN(ITensor * zero, scalar(ctx, node, x->getType(), 0));
  KO_ASSIGN_OR_RETURN(ITensor * y, select(ctx, node, keep, scaled, zero));
  KO_RETURN_IF_ERROR(ctx.setOutput(node, 0, y));
  if (wanted(node, 1)) {
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 1, keep));
  }
  return Status::success();
}

KILN_ONNX_REGISTER("", "Dropout", importDropout);

}  // namespace
}  // namespace kiln::onnx
