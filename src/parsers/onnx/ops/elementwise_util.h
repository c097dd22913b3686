// Helpers shared by the ONNX importers split out of the former elementwise.cc (one file per importer).
#pragma once

#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx::elementwise_detail {

using Node = ::onnx::NodeProto;

inline Status activation(ImportContext& ctx, Node const& node, ActivationType type, float alpha, float beta) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  IActivationLayer* l = ctx.network().addActivation(*x, type);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "activation"));
  l->setAlpha(alpha);
  l->setBeta(beta);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

}  // namespace kiln::onnx::elementwise_detail
