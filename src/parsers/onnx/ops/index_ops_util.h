// Helpers shared by the ONNX importers split out of the former index_ops.cc (one file per importer).
#pragma once

#include <algorithm>
#include <cstring>
#include "parsers/onnx/import_context.h"

namespace kiln::onnx::index_ops_detail {

using Node = ::onnx::NodeProto;

/// `t` reshaped to 0-D (a one-element tensor, e.g. ONNX's [1]-shaped K or depth), cast to INT64 if needed.
inline Result<ITensor*> scalarInt64(ImportContext& ctx, Node const& node, ITensor* t) {
  if (t->getType() != DataType::kINT64) {
    ICastLayer* c = ctx.network().addCast(*t, DataType::kINT64);
    KO_RETURN_IF_ERROR(ctx.check(c, node, "cast_int64"));
    t = c->getOutput(0);
  }
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, t));
  if (r == 0) {
    return t;
  }
  return reshape(ctx, node, t, Dims{0, {}});
}

}  // namespace kiln::onnx::index_ops_detail
