// Tests of the build's specialization to a profile that fixes every input's shape: the passes see the profile's
// dims (a residual add whose operands the network's -1s leave unrelated is fused), the plan's I/O keeps the
// network's dims, and ranged or several profiles build the network as it is.
#include "builder/build_engine.h"

#include <gtest/gtest.h>

#include "ir/text.h"

namespace kiln::builder {
namespace {

using ir::OpType;

// BERT's head merge as exporters write it: the reshape's target comes from Shape -> Gather -> Concat, so
// inference gives the matmul [-1,-1,16] and cannot prove the residual sum's operands of one shape.
constexpr char kBlock[] =
    "graph {\n"
    "  input x: f32[-1,4,16]\n"
    "  r: f32[-1,4,16] = Activation \"relu\" (x) {type=0}\n"
    "  s: i64[3] = Shape \"shape\" (r)\n"
    "  idx: i32[2] = Constant \"idx\" () {data=[0,1]}\n"
    "  lead: i64[2] = Gather \"lead\" (s, idx) {axis=0}\n"
    "  last: i64[1] = Constant \"last\" () {data=[16]}\n"
    "  tgt: i64[3] = Concatenation \"target\" (lead, last) {axis=0}\n"
    "  t: f32[-1,-1,16] = Shuffle \"merge\" (r, tgt)\n"
    "  w: f32[16,16] = Constant \"w\" () {data=random(1)}\n"
    "  m: f32[-1,-1,16] = MatrixMultiply \"matmul\" (t, w) {op_a=0, op_b=0}\n"
    "  bias: f32[1,1,16] = Constant \"bias\" () {data=random(2)}\n"
    "  b: f32[-1,-1,16] = ElementWise \"bias_add\" (m, bias) {op=0}\n"
    "  sum: f32[-1,4,16] = ElementWise \"residual\" (b, x) {op=0}\n"
    "  g: f32[1,1,16] = Constant \"g\" () {data=random(3)}\n"
    "  be: f32[1,1,16] = Constant \"be\" () {data=random(4)}\n"
    "  y: f32[-1,4,16] = Normalization \"ln\" (sum, g, be) {axes=[2], epsilon=0.001, num_groups=1}\n"
    "  output y\n"
    "}\n";

// Builds kBlock for the CPU at `level` with one profile per {min, opt, max} batch triple.
Result<plan::PlanInfo> build(std::vector<std::array<int32_t, 3>> const& batches, int32_t level = 3) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> g, ir::parseGraph(kBlock));
  BuilderConfigImpl config;
  config.setDefaultDeviceType(DeviceType::kCPU);
  config.setBuilderOptimizationLevel(level);
  std::vector<std::unique_ptr<OptimizationProfileImpl>> profiles;
  for (auto const& b : batches) {
    auto p = std::make_unique<OptimizationProfileImpl>();
    p->setDimensions("x", OptProfileSelector::kMIN, Dims3{b[0], 4, 16});
    p->setDimensions("x", OptProfileSelector::kOPT, Dims3{b[1], 4, 16});
    p->setDimensions("x", OptProfileSelector::kMAX, Dims3{b[2], 4, 16});
    if (config.addOptimizationProfile(p.get()) < 0) return invalidArgument("profile refused");
    profiles.push_back(std::move(p));
  }
  NetworkView view;
  view.graph = g.get();
  view.name = "block";
  return buildPlanInfo(view, config, BuildEnv{});
}

ir::Node const* find(ir::Graph const& g, std::string const& name) {
  for (auto const& n : g.nodes())
    if (n->name == name) return n.get();
  return nullptr;
}

TEST(BuildEngineSpecialization, FixedProfileFusesTheResidualSumAndKeepsTheDeclaredIODims) {
  auto info = build({{2, 2, 2}});
  ASSERT_TRUE(info.isOk()) << info.status().message();
  ir::Graph const& g = *info->graph;
  EXPECT_EQ(find(g, "residual"), nullptr);
  ir::Node const* mm = find(g, "matmul");
  ASSERT_NE(mm, nullptr);
  ASSERT_NE(mm->input(3), nullptr);
  EXPECT_EQ(mm->input(3)->name, "x");
  // Inside, the profile's shapes; at the I/O, the network's.
  EXPECT_TRUE(dimsEqual(mm->output(0)->shape, Dims3{2, 4, 16})) << dimsToString(mm->output(0)->shape);
  EXPECT_TRUE(dimsEqual(g.inputs()[0]->shape, Dims3{-1, 4, 16})) << dimsToString(g.inputs()[0]->shape);
  EXPECT_TRUE(dimsEqual(g.outputs()[0]->shape, Dims3{-1, 4, 16})) << dimsToString(g.outputs()[0]->shape);
  ASSERT_EQ(info->profiles.size(), 1u);
  EXPECT_TRUE(dimsEqual(info->profiles[0].inputs[0].min, Dims3{2, 4, 16}));
}

// Level 0 builds the network as written (it is --check's oracle), fixed profile or not.
TEST(BuildEngineSpecialization, LevelZeroIsNotSpecialized) {
  auto info = build({{2, 2, 2}}, 0);
  ASSERT_TRUE(info.isOk()) << info.status().message();
  ir::Node const* shape = find(*info->graph, "shape");
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(shape->op, OpType::kShape);
  EXPECT_NE(find(*info->graph, "residual"), nullptr);
  ir::Node const* mm = find(*info->graph, "matmul");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->output(0)->shape.d[0], -1);
}

TEST(BuildEngineSpecialization, RangedOrSeveralProfilesBuildTheNetworkAsItIs) {
  for (auto const& batches :
       {std::vector<std::array<int32_t, 3>>{{1, 2, 4}}, std::vector<std::array<int32_t, 3>>{{2, 2, 2}, {3, 3, 3}}}) {
    SCOPED_TRACE(batches.size());
    auto info = build(batches);
    ASSERT_TRUE(info.isOk()) << info.status().message();
    ir::Graph const& g = *info->graph;
    EXPECT_NE(find(g, "residual"), nullptr);
    ir::Node const* mm = find(g, "matmul");
    ASSERT_NE(mm, nullptr);
    EXPECT_EQ(mm->input(3), nullptr);
    EXPECT_EQ(mm->output(0)->shape.d[0], -1);
    EXPECT_TRUE(dimsEqual(g.inputs()[0]->shape, Dims3{-1, 4, 16}));
  }
}

}  // namespace
}  // namespace kiln::builder
