// ONNX importer: Where.
#include <algorithm>
#include <cstring>
#include <limits>
#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importWhere(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * c, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * a, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, 2));
  KO_ASSIGN_OR_RETURN(int32_t rc, rankOf(node, c));
  KO_ASSIGN_OR_RETURN(int32_t ra, rankOf(node, a));
  KO_ASSIGN_OR_RETURN(int32_t rb, rankOf(node, b));
  int32_t const r = std::max({rc, ra, rb});
  KO_ASSIGN_OR_RETURN(c, broadcastToRank(ctx, node, c, r));
  KO_ASSIGN_OR_RETURN(a, broadcastToRank(ctx, node, a, r));
  KO_ASSIGN_OR_RETURN(b, broadcastToRank(ctx, node, b, r));
  ISelectLayer* l = ctx.network().addSelect(*c, *a, *b);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "where"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "Where", importWhere);

}  // namespace
}  // namespace kiln::onnx
