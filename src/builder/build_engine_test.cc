// Tests of the build's specialization to a profile that fixes every input's shape: the passes see the profile's
// dims (a residual add whose operands the network's -1s leave unrelated is fused), the plan's I/O keeps the
// network's dims, and ranged or several profiles build the network as it is; and of BERT-style embeddings in a
// reduced-precision build (tables converted once, position rows folded once the profiles fix the length).
#include "builder/build_engine.h"

#include <gtest/gtest.h>

#include <cmath>

#include "backends/reference/graph_interpreter.h"
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

// BERT's embeddings as exporters write them: word rows gathered by the input ids, position rows gathered by
// position ids sliced to the sequence length (computed from the ids' shape), added, then a LayerNorm. Sequence 72,
// hidden 64: the position rows (4608 values) are more than inference evaluates on the host (kMaxHostEvalElements),
// so only folding the Gather makes them constant.
std::string embeddings() {
  std::string posids;
  for (int i = 0; i < 128; ++i) posids += strCat(i ? "," : "", i);
  return strCat(
      "graph {\n"
      "  input ids: i64[-1,72]\n"
      "  word: f32[50,64] = Constant \"word\" () {data=random(5)}\n"
      "  pos: f32[128,64] = Constant \"pos\" () {data=random(6)}\n"
      "  posids: i64[1,128] = Constant \"posids\" () {data=[",
      posids,
      "]}\n"
      "  shp: i64[2] = Shape \"shape\" (ids)\n"
      "  one: i64[1] = Constant \"one\" () {data=[1]}\n"
      "  zero: i64[1] = Constant \"zero\" () {data=[0]}\n"
      "  seq: i64[1] = Gather \"seq\" (shp, one) {axis=0}\n"
      "  p: i64[1,-1] = Slice \"posslice\" (posids, zero, seq, one, _, one) {mode=0}\n"
      "  we: f32[-1,72,64] = Gather \"wordgather\" (word, ids) {axis=0}\n"
      "  pe: f32[1,-1,64] = Gather \"posgather\" (pos, p) {axis=0}\n"
      "  e: f32[-1,72,64] = ElementWise \"add\" (we, pe) {op=0}\n"
      "  g: f32[1,1,64] = Constant \"g\" () {data=random(7)}\n"
      "  b: f32[1,1,64] = Constant \"b\" () {data=random(8)}\n"
      "  y: f32[-1,72,64] = Normalization \"ln\" (e, g, b) {axes=[2], epsilon=0.001, num_groups=1}\n"
      "  output y\n"
      "}\n");
}

// An FP16 build with a ranged batch: the word Gather reads the table converted to fp16 at build time (no Cast
// runs on the gathered rows), the position rows, constant once the profiles fix the sequence length, are folded;
// the plan's graph computes what the float32 network does, within fp16's error.
TEST(BuildEngineEmbeddings, Fp16GathersFromConvertedTablesAndFoldsThePositionRows) {
  auto g = ir::parseGraph(embeddings());
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  BuilderConfigImpl config;
  config.setDefaultDeviceType(DeviceType::kCPU);
  config.setFlag(BuilderFlag::kFP16);
  // Reference tactics only: with the oneDNN ones the sum, which has no fp16 library tactic on the CPU, would keep
  // float32 and the rows with it (a reduced type is taken only where a library tactic runs it, or none does).
  ASSERT_TRUE(config.setTacticSources(1u << static_cast<uint32_t>(TacticSource::kREFERENCE)));
  OptimizationProfileImpl profile;
  profile.setDimensions("ids", OptProfileSelector::kMIN, Dims2{1, 72});
  profile.setDimensions("ids", OptProfileSelector::kOPT, Dims2{2, 72});
  profile.setDimensions("ids", OptProfileSelector::kMAX, Dims2{4, 72});
  ASSERT_GE(config.addOptimizationProfile(&profile), 0);
  NetworkView view;
  view.graph = g->get();
  view.name = "embeddings";
  auto info = buildPlanInfo(view, config, BuildEnv{});
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  ir::Graph const& plan = *info->graph;
  std::string const text = ir::printGraph(plan);
  ir::Node const* word = find(plan, "wordgather");
  ASSERT_NE(word, nullptr) << text;
  EXPECT_EQ(word->outputs[0]->dtype, DataType::kHALF) << text;
  ASSERT_TRUE(word->inputs[0]->producer);
  EXPECT_EQ(word->inputs[0]->producer->op, OpType::kConstant) << text;
  EXPECT_EQ(word->inputs[0]->dtype, DataType::kHALF) << text;
  ir::Node const* pos = find(plan, "posgather");  // folded: a Constant of its name
  ASSERT_NE(pos, nullptr) << text;
  EXPECT_EQ(pos->op, OpType::kConstant) << text;
  EXPECT_EQ(pos->outputs[0]->dtype, DataType::kHALF) << text;
  int casts = 0, floatGathers = 0;
  for (auto const& n : plan.nodes()) {
    casts += n->op == OpType::kCast;
    floatGathers += n->op == OpType::kGather && isFloatType(n->outputs[0]->dtype);
  }
  EXPECT_EQ(casts, 1) << text;  // the fp32 output's
  EXPECT_EQ(floatGathers, 1) << text;
  for (int64_t batch : {1, 3}) {
    std::vector<int64_t> ids;
    for (int64_t i = 0; i < batch * 72; ++i) ids.push_back((i * 7 + 3) % 50);
    std::vector<HostTensor> in{HostTensor::fromVector(DataType::kINT64, makeDims({batch, 72}), ids)};
    auto got = backends::runGraphOnHost(plan, in);
    auto want = backends::runGraphOnHost(**g, in);
    ASSERT_TRUE(got.isOk()) << got.status().toString();
    ASSERT_TRUE(want.isOk()) << want.status().toString();
    ASSERT_EQ((*got)[0].count(), batch * 72 * 64);
    double num = 0, den = 0;
    for (int64_t i = 0; i < (*got)[0].count(); ++i) {
      double const d = (*got)[0].doubleAt(i) - (*want)[0].doubleAt(i);
      num += d * d;
      den += (*want)[0].doubleAt(i) * (*want)[0].doubleAt(i);
    }
    EXPECT_LT(std::sqrt(num / den), 5e-3) << batch;
  }
}

// The position rows as the network's output: folded once the profiles fix the length, and still written into the
// output's buffer by a layer (an Identity over the constant), as every output folded into a constant is.
TEST(BuildEngineEmbeddings, PositionRowsFoldedIntoAnOutputAreCopiedThere) {
  std::string text = embeddings();
  text.replace(text.find("  output y\n"), 11, "  output pe\n");
  auto g = ir::parseGraph(text);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  BuilderConfigImpl config;
  config.setDefaultDeviceType(DeviceType::kCPU);
  OptimizationProfileImpl profile;
  profile.setDimensions("ids", OptProfileSelector::kMIN, Dims2{1, 72});
  profile.setDimensions("ids", OptProfileSelector::kOPT, Dims2{2, 72});
  profile.setDimensions("ids", OptProfileSelector::kMAX, Dims2{4, 72});
  ASSERT_GE(config.addOptimizationProfile(&profile), 0);
  NetworkView view;
  view.graph = g->get();
  view.name = "positions";
  auto info = buildPlanInfo(view, config, BuildEnv{});
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  ir::Graph const& plan = *info->graph;
  ASSERT_EQ(plan.outputs().size(), 1u);
  ir::Node const* producer = plan.outputs()[0]->producer;
  ASSERT_NE(producer, nullptr);
  EXPECT_EQ(producer->op, OpType::kIdentity) << ir::printGraph(plan);
  ASSERT_TRUE(producer->inputs[0]->producer);
  EXPECT_EQ(producer->inputs[0]->producer->op, OpType::kConstant) << ir::printGraph(plan);
  std::vector<int64_t> ids(72, 0);
  auto got = backends::runGraphOnHost(plan, {HostTensor::fromVector(DataType::kINT64, makeDims({1, 72}), ids)});
  auto want = backends::runGraphOnHost(**g, {HostTensor::fromVector(DataType::kINT64, makeDims({1, 72}), ids)});
  ASSERT_TRUE(got.isOk()) << got.status().toString();
  ASSERT_TRUE(want.isOk()) << want.status().toString();
  ASSERT_EQ((*got)[0].count(), (*want)[0].count());
  for (int64_t i = 0; i < (*got)[0].count(); ++i) EXPECT_EQ((*got)[0].doubleAt(i), (*want)[0].doubleAt(i)) << i;
}

}  // namespace
}  // namespace kiln::builder
