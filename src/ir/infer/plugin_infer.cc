// Shape and type inference of PluginV2 / PluginV3 nodes: the plugin's own expressions (ir/plugin.h), evaluated
// over the concrete dims of this inference (-1 where unknown).
#include "ir/plugin.h"
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferPlugin(InferContext& ctx) {
  if (!ctx.node.plugin) return ctx.error("has no plugin object (a plan's plugin must be resolved before use)");
  int64_t shapeInputs = ctx.node.op == OpType::kPluginV3 ? ctx.node.attrs.getInt("num_shape_inputs", 0) : 0;
  return ctx.node.plugin->infer(ctx, static_cast<int32_t>(shapeInputs), ctx.node.attrs.getInts("out_types"));
}

}  // namespace

KILN_REGISTER_INFER(kPluginV2, inferPlugin);
KILN_REGISTER_INFER(kPluginV3, inferPlugin);

}  // namespace kiln::ir
