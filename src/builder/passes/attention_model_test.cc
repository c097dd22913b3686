// The GPU pass pipeline on a real exported transformer read from a plan: $KILN_ATTENTION_MODEL_PLAN names a
// level-0 plan (kilnexec --onnx=M --builderOptimizationLevel=0 --saveEngine=P) of a model with one dynamic batch
// input; the test folds its profile constants at batch sizes 1, 2, 4 (or fixes the batch to
// $KILN_ATTENTION_MODEL_BATCH), runs the level-3 pipeline for a GPU target, prints what layers are left, and checks
// the outputs against the unfused graph on the reference backend. Skipped when the variable is unset.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>

#include "builder/build_engine.h"
#include "builder/passes/pass_test_util.h"
#include "builder/passes/pipeline.h"
#include "plan/plan.h"

namespace kiln::builder {
namespace {

// States of `g` (renumbered) at batch sizes 1 and 4 (min, opt, max: 1, 2, 4) of its dynamic input dims.
Result<std::vector<std::array<ir::ShapeState, 3>>> batchStates(ir::Graph const& g) {
  std::array<ir::ShapeState, 3> st;
  int64_t const sizes[3] = {1, 2, 4};
  for (int s = 0; s < 3; ++s) {
    st[s].resize(g.values().size());
    for (ir::Value const* in : g.inputs()) {
      Dims d = in->shape;
      for (int32_t i = 0; i < d.nbDims; ++i)
        if (d.d[i] < 0) d.d[i] = sizes[s];
      st[s].info[in->id] = {in->dtype, d};
    }
    KILN_RETURN_IF_ERROR(ir::inferShapes(g, st[s], &testing::evaluator()));
  }
  std::vector<std::array<ir::ShapeState, 3>> r;
  r.push_back(std::move(st));
  return r;
}

TEST(AttentionModel, GpuPipelineOnPlanFromEnvironment) {
  char const* path = std::getenv("KILN_ATTENTION_MODEL_PLAN");
  if (!path) GTEST_SKIP() << "KILN_ATTENTION_MODEL_PLAN is not set";
  std::ifstream f(path, std::ios::binary);
  ASSERT_TRUE(f) << path;
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto info = plan::readPlan(bytes.data(), bytes.size());
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  std::unique_ptr<ir::Graph> g = std::move(info->graph);
  for (auto const& n : g->nodes()) n->tactic.clear();
  // KILN_ATTENTION_MODEL_BATCH=N: the dynamic dims fixed to N in the network itself (static shapes).
  char const* batch = std::getenv("KILN_ATTENTION_MODEL_BATCH");
  if (batch && !*batch) batch = nullptr;
  if (batch)
    for (ir::Value* in : g->inputs())
      for (int32_t i = 0; i < in->shape.nbDims; ++i)
        if (in->shape.d[i] < 0) in->shape.d[i] = std::atoi(batch);
  ASSERT_TRUE(ir::inferGraphInPlace(*g, &testing::evaluator()).isOk());
  auto before = g->clone();

  // As the builder does for a GPU target: profile constants, the pipeline, fuse_attention again (+ merge).
  auto states = batchStates(*g);
  ASSERT_TRUE(states.isOk()) << states.status().toString();
  auto folded = foldProfileConstants(*g, *states, nullptr);
  ASSERT_TRUE(folded.isOk()) << folded.status().toString();
  PassContext ctx;
  ctx.evaluator = &testing::evaluator();
  std::vector<std::string> log;
  ctx.log = &log;
  ASSERT_TRUE(createEliminateDeadLayersPass()->run(*g, ctx).isOk());
  ASSERT_TRUE(ir::inferGraphInPlace(*g, ctx.evaluator).isOk());
  Status st = runPipeline(*g, ctx);
  ASSERT_TRUE(st.isOk()) << st.toString();
  ASSERT_TRUE(createFuseAttentionPass()->run(*g, ctx).isOk());
  ASSERT_TRUE(createAbsorbAttentionViewsPass()->run(*g, ctx).isOk());
  ASSERT_TRUE(createMergeQkvProjectionsPass()->run(*g, ctx).isOk());
  ASSERT_TRUE(createEliminateDeadLayersPass()->run(*g, ctx).isOk());
  ASSERT_TRUE(ir::inferGraphInPlace(*g, ctx.evaluator).isOk());

  std::map<std::string, int> ops;
  for (auto const& n : g->nodes()) ++ops[ir::opName(n->op)];
  std::printf("%zu layers after the GPU pipeline (profile constants: %d):", g->nodes().size(), *folded);
  for (auto const& [op, count] : ops) std::printf(" %s %d", op.c_str(), count);
  std::printf("\n");
  for (auto const& l : log)
    if (l.find("attention") != std::string::npos || l.find("qkv") != std::string::npos)
      std::printf("  %s\n", l.c_str());
  if (std::getenv("KILN_ATTENTION_MODEL_PRINT")) std::printf("%s", ir::printGraph(*g).c_str());
  // With static shapes every attention is fused (the dynamic-batch export computes its head split from Shape
  // arithmetic that inference cannot see through: the dims stay unknown and the layers stay).
  if (batch) {
    EXPECT_GT(ops["Attention"], 0);
  }
  testing::expectSameOutputs(*before, *g, 1e-4);
}

}  // namespace
}  // namespace kiln::builder
