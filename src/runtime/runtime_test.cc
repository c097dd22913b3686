// Runtime tests over a hand-made plan (no builder): loading, shapes within profiles, execution, memory
// strategies, destruction order, the inspector and the profiler.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/dims.h"
#include "ir/contiguous_views.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"
#include "plan/plan.h"

namespace kiln {
namespace {

struct CapturingLogger : ILogger {
  void log(Severity severity, AsciiChar const* msg) noexcept override {
    if (severity <= Severity::kWARNING) messages.push_back(msg);
  }
  bool saw(std::string const& part) const {
    for (auto const& m : messages)
      if (m.find(part) != std::string::npos) return true;
    return false;
  }
  std::vector<std::string> messages;
};

struct Profiler : IProfiler {
  void reportLayerTime(char const* layerName, float ms) noexcept override { layers.push_back(layerName); }
  std::vector<std::string> layers;
};

// y = (x + c) as float32, through an activation that lives in the arena: x[-1,4] -> add -> t -> identity -> y.
std::vector<uint8_t> makePlan(bool detailedWithInfinity = false, std::string const& target = "cpu") {
  plan::PlanInfo p;
  p.name = "tiny";
  p.target = target;
  p.kilnVersion = "0.1.0";
  p.graph = std::make_unique<ir::Graph>();
  ir::Graph& g = *p.graph;
  ir::Value* x = *g.addInput("x", DataType::kFLOAT, makeDims({-1, 4}));
  ir::Node* c = g.addConstant("c", HostTensor::fromVector(DataType::kFLOAT, makeDims({1, 4}), std::vector<float>{1, 2, 3, 4}));
  c->tactic = "constant_reference";
  ir::Node* add = g.addNode(ir::OpType::kElementWise, "add", {x, c->outputs[0]});
  add->attrs.setInt("op", static_cast<int64_t>(ElementWiseOperation::kSUM));
  add->tactic = "elementwise_reference";
  ir::Node* id = g.addNode(ir::OpType::kIdentity, "copy", {add->outputs[0]});
  id->tactic = "identity_reference";
  (void)g.renameValue(id->outputs[0], "y");
  if (detailedWithInfinity) {
    p.profilingVerbosity = static_cast<int32_t>(ProfilingVerbosity::kDETAILED);
    add->attrs.setFloat("bound", -INFINITY);
    add->attrs.set("limits", std::vector<double>{0.5, INFINITY, NAN});
  }
  g.markOutput(id->outputs[0]);
  EXPECT_TRUE(ir::inferGraphInPlace(g, nullptr).isOk());
  p.profiles.push_back({{{"x", makeDims({1, 4}), makeDims({2, 4}), makeDims({3, 4})}}});
  p.placements.assign(g.values().size(), {});
  p.placements[add->outputs[0]->id] = {0, 3 * 4 * 4};
  p.workspaceOffsets.assign(g.nodes().size(), -1);
  p.workspaceSizes.assign(g.nodes().size(), 0);
  p.arenaSize = 256;
  auto bytes = plan::writePlan(p);
  EXPECT_TRUE(bytes.isOk()) << bytes.status().toString();
  auto const* b = static_cast<uint8_t const*>(bytes->data());
  return std::vector<uint8_t>(b, b + bytes->size());
}

TEST(Runtime, RunsAHandMadePlanWithDynamicBatch) {
  CapturingLogger logger;
  std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
  ASSERT_TRUE(runtime);
  auto blob = makePlan();
  std::unique_ptr<ICudaEngine> engine(runtime->deserializeCudaEngine(blob.data(), blob.size()));
  ASSERT_TRUE(engine) << (logger.messages.empty() ? "" : logger.messages.back());
  EXPECT_EQ(engine->getNbIOTensors(), 2);
  EXPECT_STREQ(engine->getIOTensorName(0), "x");
  EXPECT_EQ(engine->getTensorIOMode("y"), TensorIOMode::kOUTPUT);
  EXPECT_EQ(engine->getTensorShape("x").d[0], -1);
  EXPECT_EQ(engine->getProfileShape("x", 0, OptProfileSelector::kMAX).d[0], 3);
  EXPECT_EQ(engine->getDeviceMemorySizeV2(), 256);
  EXPECT_EQ(engine->getNbLayers(), 2);

  std::unique_ptr<IExecutionContext> ctx(engine->createExecutionContext());
  ASSERT_TRUE(ctx);
  std::vector<float> x = {0, 0, 0, 0, 10, 10, 10, 10}, y(8, -1.f);
  EXPECT_FALSE(ctx->enqueueV3(nullptr));  // shape not set
  EXPECT_TRUE(logger.saw("setInputShape"));
  EXPECT_FALSE(ctx->setInputShape("x", makeDims({4, 4})));  // past the profile's max
  EXPECT_TRUE(logger.saw("outside optimization profile"));
  EXPECT_FALSE(ctx->setInputShape("y", makeDims({1, 4})));
  ASSERT_TRUE(ctx->setInputShape("x", makeDims({2, 4})));
  EXPECT_EQ(ctx->getTensorShape("y").d[0], 2);
  EXPECT_FALSE(ctx->enqueueV3(nullptr));  // no addresses
  ASSERT_TRUE(ctx->setTensorAddress("x", x.data()));
  ASSERT_TRUE(ctx->setTensorAddress("y", y.data()));
  EXPECT_FALSE(ctx->setTensorAddress("nope", y.data()));
  Profiler prof;
  ctx->setProfiler(&prof);
  ASSERT_TRUE(ctx->enqueueV3(nullptr));
  EXPECT_EQ(y, (std::vector<float>{1, 2, 3, 4, 11, 12, 13, 14}));
  EXPECT_EQ(prof.layers, (std::vector<std::string>{"add", "copy"}));

  // executeV2 with bindings in I/O order, at another batch size.
  ASSERT_TRUE(ctx->setInputShape("x", makeDims({1, 4})));
  std::vector<float> y1(4);
  void* bindings[] = {x.data(), y1.data()};
  ASSERT_TRUE(ctx->executeV2(bindings));
  EXPECT_EQ(y1, (std::vector<float>{1, 2, 3, 4}));
}

TEST(Runtime, UserManagedMemoryAndDestructionInAnyOrder) {
  CapturingLogger logger;
  std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
  auto blob = makePlan();
  ICudaEngine* engine = runtime->deserializeCudaEngine(blob.data(), blob.size());
  ASSERT_TRUE(engine);
  IExecutionContext* ctx = engine->createExecutionContext(ExecutionContextAllocationStrategy::kUSER_MANAGED);
  ASSERT_TRUE(ctx);
  std::vector<float> x(4, 1.f), y(4);
  ASSERT_TRUE(ctx->setInputShape("x", makeDims({1, 4})));
  ctx->setTensorAddress("x", x.data());
  ctx->setTensorAddress("y", y.data());
  EXPECT_FALSE(ctx->enqueueV3(nullptr));
  EXPECT_TRUE(logger.saw("setDeviceMemoryV2"));
  std::vector<uint8_t> small(16), arena(static_cast<size_t>(engine->getDeviceMemorySizeV2()));
  ctx->setDeviceMemoryV2(small.data(), 16);  // refused: too small
  EXPECT_FALSE(ctx->enqueueV3(nullptr));
  ctx->setDeviceMemoryV2(arena.data(), static_cast<int64_t>(arena.size()));
  // Destroy the engine and the runtime first: the context keeps what it needs.
  IEngineInspector* inspector = engine->createEngineInspector();
  delete engine;
  runtime.reset();
  EXPECT_TRUE(logger.saw("still use it"));
  ASSERT_TRUE(ctx->enqueueV3(nullptr));
  EXPECT_EQ(y, (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(ctx->getEngine().getNbIOTensors(), 2);
  std::string info = inspector->getEngineInformation(LayerInformationFormat::kJSON);
  EXPECT_NE(info.find("\"add\""), std::string::npos);
  delete inspector;
  delete ctx;
}

TEST(Runtime, RefusesBadPlans) {
  CapturingLogger logger;
  std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
  auto blob = makePlan();
  EXPECT_EQ(runtime->deserializeCudaEngine(blob.data(), 0), nullptr);
  EXPECT_EQ(runtime->deserializeCudaEngine(blob.data(), blob.size() / 2), nullptr);
  auto flipped = blob;
  flipped[flipped.size() - 3] ^= 0x10;
  EXPECT_EQ(runtime->deserializeCudaEngine(flipped.data(), flipped.size()), nullptr);
  EXPECT_GE(logger.messages.size(), 3u);
}

// Found by plan_fuzz (a resealed plan): a placement at an odd arena offset made the reference kernels store
// floats at misaligned addresses (UBSan). Offsets not aligned to 64 bytes are refused when the plan loads.
TEST(Runtime, RefusesMisalignedArenaOffsets) {
  CapturingLogger logger;
  std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
  auto blob = makePlan();
  auto info = plan::readPlan(blob.data(), blob.size());
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  bool moved = false;
  for (auto& pl : info.value().placements) {
    if (pl.offset >= 0) {
      pl.offset += 7;
      moved = true;
    }
  }
  ASSERT_TRUE(moved);
  auto bytes = plan::writePlan(info.value());
  ASSERT_TRUE(bytes.isOk());
  EXPECT_EQ(runtime->deserializeCudaEngine(bytes.value().data(), bytes.value().size()), nullptr);
  EXPECT_TRUE(logger.saw("not aligned to 64 bytes")) << (logger.messages.empty() ? "" : logger.messages.back());
  EXPECT_NE(std::unique_ptr<ICudaEngine>(runtime->deserializeCudaEngine(blob.data(), blob.size())), nullptr);
}

// A plan whose output is declared another type than its layer gives (plan_fuzz: a TopK's indices declared int32,
// written as int64 past the user's buffer) is refused before any kernel runs.
TEST(Runtime, RefusesAnOutputTypedOtherwiseThanItsLayer) {
  CapturingLogger logger;
  std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
  auto blob = makePlan();
  auto info = plan::readPlan(blob.data(), blob.size());
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  info.value().graph->outputs()[0]->dtype = DataType::kHALF;
  auto bytes = plan::writePlan(info.value());
  ASSERT_TRUE(bytes.isOk()) << bytes.status().toString();
  std::unique_ptr<ICudaEngine> engine(runtime->deserializeCudaEngine(bytes.value().data(), bytes.value().size()));
  ASSERT_TRUE(engine) << (logger.messages.empty() ? "" : logger.messages.back());
  EXPECT_EQ(engine->getTensorDataType("y"), DataType::kHALF);
  std::unique_ptr<IExecutionContext> ctx(engine->createExecutionContext());
  ASSERT_TRUE(ctx);
  ASSERT_TRUE(ctx->setInputShape("x", makeDims({2, 4})));
  std::vector<float> x(8, 1.f);
  std::vector<uint16_t> y(8, 0);
  ASSERT_TRUE(ctx->setTensorAddress("x", x.data()));
  ASSERT_TRUE(ctx->setTensorAddress("y", y.data()));
  EXPECT_FALSE(ctx->enqueueV3(nullptr));
  EXPECT_TRUE(logger.saw("output 'y' is float16 in the plan but its layer gives float32"))
      << (logger.messages.empty() ? "" : logger.messages.back());
  EXPECT_EQ(y, std::vector<uint16_t>(8, 0));
}

// A GPU plan where the CUDA backend cannot run (this test binary on a machine without a GPU, or a plan for another
// architecture) is refused with the target and the reason, and a CPU plan naming GPU tactics is refused too.
TEST(Runtime, GpuPlanWithoutTheGpuIsAClearError) {
  CapturingLogger logger;
  std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
  auto blob = makePlan(false, "sm_10");  // no device has this architecture
  EXPECT_EQ(runtime->deserializeCudaEngine(blob.data(), blob.size()), nullptr);
  EXPECT_TRUE(logger.saw("sm_10")) << (logger.messages.empty() ? "" : logger.messages.back());
  EXPECT_TRUE(logger.saw("CUDA") || logger.saw("rebuild the engine on this GPU"))
      << (logger.messages.empty() ? "" : logger.messages.back());
}

TEST(Runtime, MemoryLimitRefusesTheArena) {
  CapturingLogger logger;
  std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
  auto blob = makePlan();
  std::unique_ptr<ICudaEngine> engine(runtime->deserializeCudaEngine(blob.data(), blob.size()));
  ASSERT_TRUE(engine);
  ASSERT_TRUE(runtime->setMemoryLimit(1));
  EXPECT_EQ(engine->createExecutionContext(), nullptr);
  EXPECT_TRUE(logger.saw("memory limit"));
  EXPECT_TRUE(runtime->setMemoryLimit(0));
  EXPECT_EQ(runtime->getMemoryLimit(), 0);
  std::unique_ptr<IExecutionContext> ctx(engine->createExecutionContext());
  EXPECT_TRUE(ctx);
}

// Regression: the inspector's JSON wrote non-finite float attributes as bare inf/nan, which is not JSON
// (kilnexec's --report could not read such engines).
TEST(Runtime, InspectorJsonWritesNonFiniteAttributesAsStrings) {
  CapturingLogger logger;
  std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
  auto blob = makePlan(true);
  std::unique_ptr<ICudaEngine> engine(runtime->deserializeCudaEngine(blob.data(), blob.size()));
  ASSERT_TRUE(engine) << (logger.messages.empty() ? "" : logger.messages.back());
  std::unique_ptr<IEngineInspector> inspector(engine->createEngineInspector());
  std::string const info = inspector->getLayerInformation(0, LayerInformationFormat::kJSON);
  EXPECT_NE(info.find("\"bound\": \"-inf\""), std::string::npos) << info;
  EXPECT_NE(info.find("\"limits\": [0.5,\"inf\",\"nan\"]"), std::string::npos) << info;
}

// out = concat(x + c, x * c) along axis 1 through a Concatenation planned in place: x[-1,16], a and b in the
// arena at `aAt` and `bAt`, the concatenation's output at 0 (its in_place flags `flags`), copied to the output.
std::vector<uint8_t> makeConcatPlan(int64_t bAt, std::vector<int64_t> const& flags, bool flagTheAdd = false) {
  plan::PlanInfo p;
  p.name = "cat";
  p.target = "cpu";
  p.kilnVersion = "0.1.0";
  p.graph = std::make_unique<ir::Graph>();
  ir::Graph& g = *p.graph;
  ir::Value* x = *g.addInput("x", DataType::kFLOAT, makeDims({-1, 16}));
  std::vector<float> cv(16);
  for (size_t i = 0; i < cv.size(); ++i) cv[i] = static_cast<float>(i) - 4.f;
  ir::Node* c = g.addConstant("c", HostTensor::fromVector(DataType::kFLOAT, makeDims({1, 16}), cv));
  c->tactic = "constant_reference";
  ir::Node* a = g.addNode(ir::OpType::kElementWise, "add", {x, c->outputs[0]});
  a->attrs.setInt("op", static_cast<int64_t>(ElementWiseOperation::kSUM));
  a->tactic = "elementwise_reference";
  if (flagTheAdd) a->attrs.setInts(ir::kInPlaceAttr, {1});
  ir::Node* b = g.addNode(ir::OpType::kElementWise, "mul", {x, c->outputs[0]});
  b->attrs.setInt("op", static_cast<int64_t>(ElementWiseOperation::kPROD));
  b->tactic = "elementwise_reference";
  ir::Node* cat = g.addNode(ir::OpType::kConcatenation, "cat", {a->outputs[0], b->outputs[0]});
  cat->attrs.setInt("axis", 1);
  cat->attrs.setInts(ir::kInPlaceAttr, flags);
  cat->tactic = "concatenation_reference";
  ir::Node* id = g.addNode(ir::OpType::kIdentity, "copy", {cat->outputs[0]});
  id->tactic = "identity_reference";
  (void)g.renameValue(id->outputs[0], "y");
  g.markOutput(id->outputs[0]);
  EXPECT_TRUE(ir::inferGraphInPlace(g, nullptr).isOk());
  p.profiles.push_back({{{"x", makeDims({1, 16}), makeDims({1, 16}), makeDims({2, 16})}}});
  p.placements.assign(g.values().size(), {});
  p.placements[a->outputs[0]->id] = {0, 2 * 64};
  p.placements[b->outputs[0]->id] = {bAt, 2 * 64};
  p.placements[cat->outputs[0]->id] = {0, 2 * 128};
  p.workspaceOffsets.assign(g.nodes().size(), -1);
  p.workspaceSizes.assign(g.nodes().size(), 0);
  p.arenaSize = 512;
  auto bytes = plan::writePlan(p);
  EXPECT_TRUE(bytes.isOk()) << bytes.status().toString();
  if (!bytes.isOk()) return {};
  auto const* data = static_cast<uint8_t const*>(bytes->data());
  return std::vector<uint8_t>(data, data + bytes->size());
}

// Runs the concatenation plan on x[rows,16]; returns y, or nothing when the run fails.
std::vector<float> runConcat(IRuntime& runtime, std::vector<uint8_t> const& blob, int64_t rows, bool* ok) {
  std::unique_ptr<ICudaEngine> engine(runtime.deserializeCudaEngine(blob.data(), blob.size()));
  EXPECT_TRUE(engine);
  if (!engine) return {};
  std::unique_ptr<IExecutionContext> ctx(engine->createExecutionContext());
  std::vector<float> x(static_cast<size_t>(rows * 16)), y(static_cast<size_t>(rows * 32), -99.f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * static_cast<float>(i);
  EXPECT_TRUE(ctx->setInputShape("x", makeDims({rows, 16})));
  EXPECT_TRUE(ctx->setTensorAddress("x", x.data()));
  EXPECT_TRUE(ctx->setTensorAddress("y", y.data()));
  *ok = ctx->enqueueV3(nullptr);
  return y;
}

std::vector<float> concatExpected() {
  std::vector<float> y(32);
  for (size_t i = 0; i < 16; ++i) {
    float x = 0.5f * static_cast<float>(i), c = static_cast<float>(i) - 4.f;
    y[i] = x + c;
    y[16 + i] = x * c;
  }
  return y;
}

TEST(Runtime, InPlaceConcatenationSkipsOrCopiesPerInput) {
  CapturingLogger logger;
  std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
  bool ok = false;
  // Both inputs in place (b at byte 64 of the output): the layer does not run.
  EXPECT_EQ(runConcat(*runtime, makeConcatPlan(64, {1, 1}), 1, &ok), concatExpected());
  EXPECT_TRUE(ok);
  // b in a buffer of its own: copied into the output.
  EXPECT_EQ(runConcat(*runtime, makeConcatPlan(256, {1, 0}), 1, &ok), concatExpected());
  EXPECT_TRUE(ok);
}

TEST(Runtime, InPlaceLayersWhoseMemoryDoesNotMatchAreRefused) {
  CapturingLogger logger;
  std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
  bool ok = true;
  // Flagged in place, but b is not at byte 64 of the output.
  runConcat(*runtime, makeConcatPlan(256, {1, 1}), 1, &ok);
  EXPECT_FALSE(ok);
  EXPECT_TRUE(logger.saw("input 1 is not at byte 64 of the output")) << logger.messages.back();
  // Two rows: each input is two blocks of the output, which a plan for one row did not foresee.
  runConcat(*runtime, makeConcatPlan(64, {1, 1}), 2, &ok);
  EXPECT_FALSE(ok);
  EXPECT_TRUE(logger.saw("not contiguous blocks")) << logger.messages.back();
  // A flag per input, 0 or 1: refused when the engine is loaded.
  for (auto const& flags : {std::vector<int64_t>{1, 2}, std::vector<int64_t>{1}}) {
    auto bad = makeConcatPlan(64, flags);
    EXPECT_EQ(runtime->deserializeCudaEngine(bad.data(), bad.size()), nullptr);
    EXPECT_TRUE(logger.saw("in_place flags must be one 0 or 1 per input")) << logger.messages.back();
  }
  // Only a Concatenation, Slice or Gather can be in place.
  auto blob = makeConcatPlan(64, {1, 1}, true);
  EXPECT_EQ(runtime->deserializeCudaEngine(blob.data(), blob.size()), nullptr);
  EXPECT_TRUE(logger.saw("only a Concatenation, Slice or Gather")) << logger.messages.back();
}

// y = concat(x + 1, z * 2) along axis 1 with x[1, -1] (1 to 8 columns) and z[1, 4]: x + 1 in place at the start of
// the output, z * 2 copied in at byte 4 * columns, an offset that moves with x's shape.
std::vector<uint8_t> makeMovingConcatPlan() {
  plan::PlanInfo p;
  p.name = "moving_cat";
  p.target = "cpu";
  p.kilnVersion = "0.1.0";
  p.graph = std::make_unique<ir::Graph>();
  ir::Graph& g = *p.graph;
  ir::Value* x = *g.addInput("x", DataType::kFLOAT, makeDims({1, -1}));
  ir::Value* z = *g.addInput("z", DataType::kFLOAT, makeDims({1, 4}));
  ir::Node* one =
      g.addConstant("one", HostTensor::fromVector(DataType::kFLOAT, makeDims({1, 1}), std::vector<float>{1.f}));
  one->tactic = "constant_reference";
  ir::Node* two =
      g.addConstant("two", HostTensor::fromVector(DataType::kFLOAT, makeDims({1, 1}), std::vector<float>{2.f}));
  two->tactic = "constant_reference";
  ir::Node* a = g.addNode(ir::OpType::kElementWise, "add", {x, one->outputs[0]});
  a->attrs.setInt("op", static_cast<int64_t>(ElementWiseOperation::kSUM));
  a->tactic = "elementwise_reference";
  ir::Node* b = g.addNode(ir::OpType::kElementWise, "mul", {z, two->outputs[0]});
  b->attrs.setInt("op", static_cast<int64_t>(ElementWiseOperation::kPROD));
  b->tactic = "elementwise_reference";
  ir::Node* cat = g.addNode(ir::OpType::kConcatenation, "cat", {a->outputs[0], b->outputs[0]});
  cat->attrs.setInt("axis", 1);
  cat->attrs.setInts(ir::kInPlaceAttr, {1, 0});
  cat->tactic = "concatenation_reference";
  ir::Node* id = g.addNode(ir::OpType::kIdentity, "copy", {cat->outputs[0]});
  id->tactic = "identity_reference";
  (void)g.renameValue(id->outputs[0], "y");
  g.markOutput(id->outputs[0]);
  EXPECT_TRUE(ir::inferGraphInPlace(g, nullptr).isOk());
  p.profiles.push_back({{{"x", makeDims({1, 1}), makeDims({1, 4}), makeDims({1, 8})},
                         {"z", makeDims({1, 4}), makeDims({1, 4}), makeDims({1, 4})}}});
  p.placements.assign(g.values().size(), {});
  p.placements[a->outputs[0]->id] = {0, 32};
  p.placements[cat->outputs[0]->id] = {0, 48};
  p.placements[b->outputs[0]->id] = {256, 16};
  p.workspaceOffsets.assign(g.nodes().size(), -1);
  p.workspaceSizes.assign(g.nodes().size(), 0);
  p.arenaSize = 512;
  auto bytes = plan::writePlan(p);
  EXPECT_TRUE(bytes.isOk()) << bytes.status().toString();
  if (!bytes.isOk()) return {};
  auto const* data = static_cast<uint8_t const*>(bytes->data());
  return std::vector<uint8_t>(data, data + bytes->size());
}

TEST(Runtime, InPlaceOffsetsFollowShapeChanges) {
  CapturingLogger logger;
  std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
  auto blob = makeMovingConcatPlan();
  std::unique_ptr<ICudaEngine> engine(runtime->deserializeCudaEngine(blob.data(), blob.size()));
  ASSERT_TRUE(engine) << (logger.messages.empty() ? "" : logger.messages.back());
  std::unique_ptr<IExecutionContext> ctx(engine->createExecutionContext());
  ASSERT_TRUE(ctx);
  std::vector<float> z{1.f, 2.f, 3.f, 4.f};
  ASSERT_TRUE(ctx->setTensorAddress("z", z.data()));
  // One context through shapes that move the copied input's offset, back again, and runs repeated at one shape:
  // offsets kept from an earlier shape would put z * 2 in the wrong place (or leave stale values).
  for (int64_t cols : {4, 8, 8, 1, 4, 7}) {
    SCOPED_TRACE(cols);
    std::vector<float> x(static_cast<size_t>(cols)), y(static_cast<size_t>(cols + 4), -99.f), want;
    for (size_t i = 0; i < x.size(); ++i) x[i] = 10.f * static_cast<float>(cols) + static_cast<float>(i);
    for (float v : x) want.push_back(v + 1.f);
    for (float v : z) want.push_back(v * 2.f);
    ASSERT_TRUE(ctx->setInputShape("x", makeDims({1, cols})));
    ASSERT_TRUE(ctx->setTensorAddress("x", x.data()));
    ASSERT_TRUE(ctx->setTensorAddress("y", y.data()));
    ASSERT_TRUE(ctx->enqueueV3(nullptr)) << logger.messages.back();
    EXPECT_EQ(y, want);
  }
}

}  // namespace
}  // namespace kiln
