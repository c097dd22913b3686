// ONNX Bernoulli: y = (u < p) cast to `dtype` (default: p's type), u a uniform random fill in [0, 1) of p's shape.
// Draws come from Kiln's own generator (the public IFillLayer has no seed, so the `seed` attribute is accepted
// and not honoured): they cannot match another runtime's, only its distribution.
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// True when every extent of `d` is known.
bool isStatic(Dims const& d) {
  for (int32_t i = 0; i < d.nbDims; ++i) {
    if (d.d[i] < 0) {
      return false;
    }
  }
  return d.nbDims >= 0;
}

Status importBernoulli(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * p, ctx.tensor(node, 0));
  DataType const pType = p->getType();
  if (pType != DataType::kFLOAT && pType != DataType::kFLOAT64 && pType != DataType::kHALF &&
      pType != DataType::kBF16) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node,
                                    "input must be a floating-point tensor, got type ", static_cast<int>(pType));
  }
  DataType type = pType;
  if (findAttr(node, "dtype") != nullptr) {
    KO_ASSIGN_OR_RETURN(int64_t onnxType, attrInt(node, "dtype", 0));
    KO_ASSIGN_OR_RETURN(type, fromOnnxType(static_cast<int32_t>(onnxType)));
  }
  // Draw and compare in fp64: every p converts exactly, and a u narrowed to fp32 or fp16 could round up to 1 and
  // then never be below p = 1.
  KO_ASSIGN_OR_RETURN(ITensor * pd, compose::cast(ctx, node, p, DataType::kFLOAT64));
  Dims const d = p->getDimensions();
  bool const known = isStatic(d);
  IFillLayer* f = ctx.network().addFill(known ? d : Dims{0, {}}, FillOperation::kRANDOM_UNIFORM, DataType::kFLOAT64);
  KO_RETURN_IF_ERROR(ctx.check(f, node, "uniform"));
  f->setAlpha(0.0);
  f->setBeta(1.0);
  if (!known) {
    IShapeLayer* s = ctx.network().addShape(*p);
    KO_RETURN_IF_ERROR(ctx.check(s, node, "shape"));
    f->setInput(0, *s->getOutput(0));
  }
  KO_ASSIGN_OR_RETURN(ITensor * hit, compose::binary(ctx, node, f->getOutput(0), pd, ElementWiseOperation::kLESS));
  KO_ASSIGN_OR_RETURN(ITensor * y, compose::cast(ctx, node, hit, type));
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "Bernoulli", importBernoulli);

}  // namespace
}  // namespace kiln::onnx
