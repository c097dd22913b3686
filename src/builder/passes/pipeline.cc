// The optimization-level pipelines: which passes run, in which order, and until when.
#include "builder/passes/pipeline.h"

namespace kiln::builder {
namespace {

Result<bool> runPass(Pass& p, ir::Graph& g, PassContext const& ctx) {
  Result<bool> changed = p.run(g, ctx);
  if (!changed.isOk()) return changed.status().withContext(strCat("pass ", p.name()));
  if (*changed)
    KILN_RETURN_IF_ERROR(ir::inferGraphInPlace(g, ctx.evaluator).withContext(strCat("after pass ", p.name())));
  return *changed;
}

}  // namespace

Status runPipeline(ir::Graph& g, PassContext const& ctx) {
  std::vector<std::unique_ptr<Pass>> passes;
  passes.push_back(createEliminateDeadLayersPass());
  passes.push_back(createFoldConstantsPass());
  if (ctx.optimizationLevel <= 0) {
    for (auto& p : passes) KILN_RETURN_IF_ERROR(runPass(*p, g, ctx).status());
    // Folding leaves the folded nodes' constant inputs behind.
    return runPass(*passes[0], g, ctx).status();
  }
  passes.push_back(createEliminateIdentityPass());
  passes.push_back(createEliminateCommonSubexpressionsPass());
  // Before attention fusion: the mask it takes keeps its key-padding shape.
  passes.push_back(createEliminateBroadcastsPass());
  passes.push_back(createFoldScaleIntoConvolutionPass());
  passes.push_back(createFuseGeluPass());
  // Before transpose and bias folding, which would otherwise take parts of the attention pattern apart.
  passes.push_back(createFuseAttentionPass());
  // Right after it, while the views around a new Attention are as the exporter wrote them.
  passes.push_back(createAbsorbAttentionViewsPass());
  // After it (its packed Attention is what the swapped region holds) and before bias/residual fusion, which then
  // finds the residual add right after the out-projection GEMM.
  passes.push_back(createAbsorbBatchTransposesPass());
  passes.push_back(createFoldTransposeIntoMatmulPass());
  passes.push_back(createFuseBiasActivationPass());
  // After bias fusion, so that the projections' biases are merged with their weights.
  passes.push_back(createMergeQkvProjectionsPass());
  // After bias/residual fusion, which may absorb a residual add into the GEMM before it.
  passes.push_back(createFuseResidualLayerNormPass());
  passes.push_back(createFuseCpuSwishPass());
  for (int round = 0; round < kMaxPipelineRounds; ++round) {
    bool any = false;
    for (auto& p : passes) {
      KILN_ASSIGN_OR_RETURN(bool changed, runPass(*p, g, ctx));
      any |= changed;
    }
    if (!any) return Status::ok();
  }
  return Status::ok();
}

}  // namespace kiln::builder
