// The GPU pass pipeline on a real exported transformer read from a plan: $KILN_ATTENTION_MODEL_PLAN names a
// level-0 plan (kilnexec --onnx=M --builderOptimizationLevel=0 --saveEngine=P) of a model with one dynamic batch
// input; the test builds it as the builder does for a GPU target and one shape (batch $KILN_ATTENTION_MODEL_BATCH,
// default 2: the pipeline, profile constants, fuse_attention's re-run), prints what layers are left, expects every
// attention packed, and checks the outputs against the unfused graph on the reference backend. Skipped when the
// variable is unset.
#include <array>
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

// The graph inputs' dims with every unknown dim set to `batch`.
std::vector<Dims> fixedInputs(ir::Graph const& g, int64_t batch) {
  std::vector<Dims> r;
  for (ir::Value const* in : g.inputs()) {
    Dims d = in->shape;
    for (int32_t i = 0; i < d.nbDims; ++i)
      if (d.d[i] < 0) d.d[i] = batch;
    r.push_back(d);
  }
  return r;
}

TEST(AttentionModel, GpuPipelineOnPlanFromEnvironment) {
  char const* path = std::getenv("KILN_ATTENTION_MODEL_PLAN");
  if (!path) GTEST_SKIP() << "KILN_ATTENTION_MODEL_PLAN is not set";
  char const* batchVar = std::getenv("KILN_ATTENTION_MODEL_BATCH");
  int64_t const batch = batchVar && *batchVar ? std::atoi(batchVar) : 2;
  ASSERT_GT(batch, 0);
  std::ifstream f(path, std::ios::binary);
  ASSERT_TRUE(f) << path;
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto info = plan::readPlan(bytes.data(), bytes.size());
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  std::unique_ptr<ir::Graph> g = std::move(info->graph);
  for (auto const& n : g->nodes()) n->tactic.clear();
  ASSERT_TRUE(ir::inferGraphInPlace(*g, &testing::evaluator()).isOk());
  auto before = g->clone();

  // As the builder does for a GPU target built for one shape (kilnexec --shapes): the pipeline on the network's
  // -1 dims, the profile constants, then fuse_attention again with the views and projections after it.
  PassContext ctx;
  ctx.evaluator = &testing::evaluator();
  std::vector<std::string> log;
  ctx.log = &log;
  Status st = runPipeline(*g, ctx);
  ASSERT_TRUE(st.isOk()) << st.toString();
  std::vector<std::vector<Dims>> const profileInputs(3, fixedInputs(*g, batch));
  std::array<ir::ShapeState, 3> states;
  for (int s = 0; s < 3; ++s) {
    states[s].resize(g->values().size());
    for (size_t i = 0; i < g->inputs().size(); ++i)
      states[s].info[g->inputs()[i]->id] = {g->inputs()[i]->dtype, profileInputs[0][i]};
    ASSERT_TRUE(ir::inferShapes(*g, states[s], ctx.evaluator).isOk());
  }
  std::vector<std::array<ir::ShapeState, 3>> all;
  all.push_back(std::move(states));
  auto folded = foldProfileConstants(*g, all, nullptr);
  ASSERT_TRUE(folded.isOk()) << folded.status().toString();
  ASSERT_TRUE(createEliminateDeadLayersPass()->run(*g, ctx).isOk());
  ASSERT_TRUE(ir::inferGraphInPlace(*g, ctx.evaluator).isOk());
  ctx.profileInputs = &profileInputs;
  for (auto make : {createFuseAttentionPass, createAbsorbAttentionViewsPass, createMergeQkvProjectionsPass,
                    createEliminateDeadLayersPass}) {
    auto r = make()->run(*g, ctx);
    ASSERT_TRUE(r.isOk()) << r.status().toString();
  }
  ASSERT_TRUE(ir::inferGraphInPlace(*g, ctx.evaluator).isOk());

  std::map<std::string, int> ops;
  int packed = 0;
  for (auto const& n : g->nodes()) {
    ++ops[ir::opName(n->op)];
    packed += n->op == ir::OpType::kAttention && n->attrs.getInt("packed_qkv", 0) == 1;
  }
  std::printf("%zu layers after the GPU pipeline (profile constants: %d, packed attentions: %d):", g->nodes().size(),
              *folded, packed);
  for (auto const& [op, count] : ops) std::printf(" %s %d", op.c_str(), count);
  std::printf("\n");
  for (auto const& l : log)
    if (l.find("attention") != std::string::npos || l.find("qkv") != std::string::npos)
      std::printf("  %s\n", l.c_str());
  if (std::getenv("KILN_ATTENTION_MODEL_PRINT")) std::printf("%s", ir::printGraph(*g).c_str());
  // Every attention fused and reading its projection packed.
  EXPECT_GT(ops["Attention"], 0);
  EXPECT_EQ(packed, ops["Attention"]);
  // The same outputs at the profile's shape (the only one the folded graph is built for).
  std::vector<HostTensor> in = testing::randomInputs(*before, 7, batch);
  auto ra = backends::runGraphOnHost(*before, in);
  auto rb = backends::runGraphOnHost(*g, in);
  ASSERT_TRUE(ra.isOk()) << ra.status().toString();
  ASSERT_TRUE(rb.isOk()) << rb.status().toString();
  ASSERT_EQ(ra->size(), rb->size());
  for (size_t i = 0; i < ra->size(); ++i) EXPECT_LE(testing::relativeError((*rb)[i], (*ra)[i]), 1e-4);
}

}  // namespace
}  // namespace kiln::builder
