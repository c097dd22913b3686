// ONNX MaxUnpool: scatters X into zeros of the default unpooled shape ((in - 1) * stride + kernel - pads) at the
// flat indices I (as MaxPool's Indices output gives them), then, with output_shape, zero-extends the result to
// that shape (a kFILL slice), as the reference implementations do.
#include <vector>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importMaxUnpool(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * indices, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  Dims const in = x->getDimensions();
  int32_t const nb = r - 2;
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> k, attrInts(node, "kernel_shape"));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> st, attrInts(node, "strides"));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> pads, attrInts(node, "pads"));
  auto const n = static_cast<size_t>(nb);
  if (nb < 1 || k.size() != n || (!st.empty() && st.size() != n) || (!pads.empty() && pads.size() != 2 * n)) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "kernel_shape/strides/pads do not match ", nb,
                                    " spatial axes");
  }
  st.resize(n, 1);
  pads.resize(2 * n, 0);
  Dims out{r, {}};
  int64_t total = 1;
  for (int32_t i = 0; i < r; ++i) {
    if (in.d[i] < 0) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node, "needs static input extents, got ",
                                      dimsString(in));
    }
    auto const s = static_cast<size_t>(i - 2);
    out.d[i] = i < 2 ? in.d[i] : (in.d[i] - 1) * st[s] + k[s] - pads[s] - pads[s + n];
    if (out.d[i] < 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "negative output extent on axis ", i);
    }
    total *= out.d[i];
    if (total > kMaxConstantElements) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "output too large");
    }
  }
  // Zeros of the flattened default shape.
  IFillLayer* zeros = ctx.network().addFill(Dims{1, {total}}, FillOperation::kLINSPACE, DataType::kFLOAT);
  KO_RETURN_IF_ERROR(ctx.check(zeros, node, "zeros"));
  KO_ASSIGN_OR_RETURN(ITensor * z0, compose::scalar(ctx, node, x->getType(), 0, "_zero"));
  zeros->setInput(1, *z0);
  zeros->setInput(2, *z0);
  KO_ASSIGN_OR_RETURN(ITensor * flatX, reshape(ctx, node, x, Dims{1, {-1}}));
  KO_ASSIGN_OR_RETURN(ITensor * flatI, reshape(ctx, node, indices, Dims{1, {-1}}));
  KO_ASSIGN_OR_RETURN(ITensor * base, compose::cast(ctx, node, zeros->getOutput(0), x->getType()));
  IScatterLayer* sc = ctx.network().addScatter(*base, *flatI, *flatX, ScatterMode::kELEMENT);
  KO_RETURN_IF_ERROR(ctx.check(sc, node, "scatter"));
  sc->setAxis(0);
  KO_ASSIGN_OR_RETURN(ITensor * y, reshape(ctx, node, sc->getOutput(0), out));
  if (ImportContext::hasInput(node, 2)) {
    KO_ASSIGN_OR_RETURN(ITensor * shape, ctx.tensor(node, 2));
    KO_ASSIGN_OR_RETURN(shape, compose::cast(ctx, node, shape, DataType::kINT64));
    Dims start{r, {}}, stride{r, {}};
    for (int32_t i = 0; i < r; ++i) {
      start.d[i] = 0;
      stride.d[i] = 1;
    }
    ISliceLayer* s = ctx.network().addSlice(*y, start, out, stride);
    KO_RETURN_IF_ERROR(ctx.check(s, node, "output_shape"));
    s->setMode(SampleMode::kFILL);
    s->setInput(2, *shape);
    y = s->getOutput(0);
  }
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "MaxUnpool", importMaxUnpool);

}  // namespace
}  // namespace kiln::onnx
