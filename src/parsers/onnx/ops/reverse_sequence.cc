// ONNX importer: ReverseSequence.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/misc_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace misc_ops_detail;  // NOLINT(google-build-using-namespace)

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

KILN_ONNX_REGISTER("", "ReverseSequence", importReverseSequence);

}  // namespace
}  // namespace kiln::onnx
