// ONNX importer: Transpose.
#include <algorithm>
#include <cstring>
#include <limits>
#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importTranspose(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  std::vector<int64_t> def;
  for (int32_t i = r - 1; i >= 0; --i) {
    def.push_back(i);
  }
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> perm, attrInts(node, "perm", def));
  if (perm.size() != static_cast<size_t>(r)) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "perm has ", perm.size(), " entries for rank ", r);
  }
  Permutation p{};
  std::vector<bool> seen(static_cast<size_t>(r), false);
  for (int32_t i = 0; i < r; ++i) {
    if (perm[static_cast<size_t>(i)] < 0 || perm[static_cast<size_t>(i)] >= r ||
        seen[static_cast<size_t>(perm[static_cast<size_t>(i)])]) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "perm is not a permutation");
    }
    seen[static_cast<size_t>(perm[static_cast<size_t>(i)])] = true;
    p.order[i] = static_cast<int32_t>(perm[static_cast<size_t>(i)]);
  }
  IShuffleLayer* l = ctx.network().addShuffle(*x);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "transpose"));
  l->setFirstTranspose(p);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "Transpose", importTranspose);

}  // namespace
}  // namespace kiln::onnx
