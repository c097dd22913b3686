// ONNX importer: Einsum.
#include <algorithm>
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/index_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace index_ops_detail;  // NOLINT(google-build-using-namespace)

Status importEinsum(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(std::string eq, attrString(node, "equation", ""));
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  std::vector<ITensor*> ins;
  for (int i = 0; i < node.input_size(); ++i) {
    KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, i));
    ins.push_back(t);
  }
  if (ins.empty() || eq.empty()) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "needs inputs and an equation");
  }
  IEinsumLayer* l = ctx.network().addEinsum(ins.data(), static_cast<int32_t>(ins.size()), eq.c_str());
  KO_RETURN_IF_ERROR(ctx.check(l, node, "einsum"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "Einsum", importEinsum);

}  // namespace
}  // namespace kiln::onnx
