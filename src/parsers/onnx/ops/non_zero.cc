// ONNX importer: NonZero.
#include <algorithm>
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/index_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace index_ops_detail;  // NOLINT(google-build-using-namespace)

Status importNonZero(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  INonZeroLayer* l = ctx.network().addNonZero(*x, DataType::kINT64);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "nonzero"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "NonZero", importNonZero);

}  // namespace
}  // namespace kiln::onnx
