// Plans holding a PointwiseFused layer: a well-formed program loads and runs on the CPU (reference and CPU block
// tactics), and a plan whose program was corrupted (operand indices, opcodes, types, version, truncation) is
// refused at load with the layer named and what is wrong, never run.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/pointwise_test_programs.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"
#include "plan/plan.h"

namespace kiln {
namespace {

struct Logger : ILogger {
  void log(Severity severity, AsciiChar const* msg) noexcept override {
    if (severity <= Severity::kWARNING) messages.push_back(msg);
  }
  std::string all() const {
    std::string s;
    for (auto const& m : messages) s += m + "\n";
    return s;
  }
  std::vector<std::string> messages;
};

// y[2, 3] = richProgram(x0[2, 3], x1[3], x2[1]) in float32.
std::vector<uint8_t> makePlan(std::string const& tactic, ir::Attributes const& attrs) {
  plan::PlanInfo p;
  p.name = "pwn";
  p.target = "cpu";
  p.kilnVersion = "0.1.0";
  p.graph = std::make_unique<ir::Graph>();
  ir::Graph& g = *p.graph;
  ir::Value* x0 = *g.addInput("x0", DataType::kFLOAT, makeDims({2, 3}));
  ir::Value* x1 = *g.addInput("x1", DataType::kFLOAT, makeDims({3}));
  ir::Value* x2 = *g.addInput("x2", DataType::kFLOAT, makeDims({1}));
  ir::Node* n = g.addNode(ir::OpType::kPointwiseFused, "PWN(mul, add, gelu)", {x0, x1, x2});
  n->attrs = attrs;
  n->tactic = tactic;
  n->fusedFrom = {"mul", "add", "gelu"};
  (void)g.renameValue(n->outputs[0], "y");
  g.markOutput(n->outputs[0]);
  EXPECT_TRUE(ir::inferGraphInPlace(g, nullptr).isOk());
  p.profiles.push_back({{{"x0", makeDims({2, 3}), makeDims({2, 3}), makeDims({2, 3})},
                         {"x1", makeDims({3}), makeDims({3}), makeDims({3})},
                         {"x2", makeDims({1}), makeDims({1}), makeDims({1})}}});
  p.placements.assign(g.values().size(), {});
  p.workspaceOffsets.assign(g.nodes().size(), -1);
  p.workspaceSizes.assign(g.nodes().size(), 0);
  p.arenaSize = 256;
  auto bytes = plan::writePlan(p);
  EXPECT_TRUE(bytes.isOk()) << bytes.status().toString();
  auto const* b = static_cast<uint8_t const*>(bytes->data());
  return std::vector<uint8_t>(b, b + bytes->size());
}

TEST(PointwiseFusedPlan, LoadsAndRunsOnTheCpu) {
  ir::Attributes const attrs = pwtest::programAttrs(pwtest::richProgram(DataType::kHALF), DataType::kFLOAT);
  std::vector<float> y[2];
  int i = 0;
  for (std::string tactic : {"pointwisefused_reference", "pointwisefused_cpu_block"}) {
    SCOPED_TRACE(tactic);
    Logger logger;
    std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
    auto blob = makePlan(tactic, attrs);
    std::unique_ptr<ICudaEngine> engine(runtime->deserializeCudaEngine(blob.data(), blob.size()));
    ASSERT_TRUE(engine) << logger.all();
    std::unique_ptr<IExecutionContext> ctx(engine->createExecutionContext());
    ASSERT_TRUE(ctx) << logger.all();
    std::vector<float> x0 = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}, x1 = {0.5f, 1.0f, 2.0f}, x2 = {0.25f};
    y[i].assign(6, -7.0f);
    ASSERT_TRUE(ctx->setTensorAddress("x0", x0.data()));
    ASSERT_TRUE(ctx->setTensorAddress("x1", x1.data()));
    ASSERT_TRUE(ctx->setTensorAddress("x2", x2.data()));
    ASSERT_TRUE(ctx->setTensorAddress("y", y[i].data()));
    ASSERT_TRUE(ctx->enqueueV3(nullptr)) << logger.all();
    ++i;
  }
  for (int k = 0; k < 6; ++k) {
    EXPECT_NEAR(y[0][static_cast<size_t>(k)], y[1][static_cast<size_t>(k)], 1e-3);
    EXPECT_NE(y[0][static_cast<size_t>(k)], -7.0f);
  }
}

TEST(PointwiseFusedPlan, CorruptProgramsAreRefusedAtLoadNamingTheLayer) {
  ir::Attributes const good = pwtest::programAttrs(pwtest::richProgram(DataType::kHALF), DataType::kFLOAT);
  std::vector<int64_t> const code = good.getInts("program");
  struct Case {
    std::string name;
    std::function<void(ir::Attributes&)> corrupt;
    std::string expect;
  };
  auto setAt = [&](size_t at, int64_t v) {
    return [at, v, code](ir::Attributes& a) {
      std::vector<int64_t> c = code;
      c[at] = v;
      a.setInts("program", c);
    };
  };
  std::vector<Case> cases = {
      {"operand past the inputs", setAt(2 + 2, 1000), "operand 0 code 1000"},
      {"negative operand", setAt(2 + 3, -1000), "operand 1 code -1000"},
      {"opcode", setAt(2 + 5 * 4, 42), "unknown opcode 42"},
      {"cast to int8", setAt(2 + 5 * 3 + 1, static_cast<int64_t>(DataType::kINT8)), "cast to type"},
      {"version", setAt(0, 2), "version 2"},
      {"truncated",
       [&](ir::Attributes& a) { a.setInts("program", std::vector<int64_t>(code.begin(), code.begin() + 9)); },
       "entries where"},
      {"no floats", [](ir::Attributes& a) { a.erase("program_floats"); }, "program_floats"},
      {"bool output", [](ir::Attributes& a) { a.setInt("to", static_cast<int64_t>(DataType::kBOOL)); }, "'to'"},
  };
  for (auto const& c : cases) {
    SCOPED_TRACE(c.name);
    ir::Attributes a = good;
    c.corrupt(a);
    Logger logger;
    std::unique_ptr<IRuntime> runtime(createInferRuntime(logger));
    auto blob = makePlan("pointwisefused_cpu_block", good);
    auto info = plan::readPlan(blob.data(), blob.size());
    ASSERT_TRUE(info.isOk()) << info.status().toString();
    for (auto const& n : info.value().graph->nodes())
      if (n->op == ir::OpType::kPointwiseFused) n->attrs = a;
    auto bytes = plan::writePlan(info.value());
    ASSERT_TRUE(bytes.isOk()) << bytes.status().toString();
    EXPECT_EQ(runtime->deserializeCudaEngine(bytes.value().data(), bytes.value().size()), nullptr);
    std::string const log = logger.all();
    EXPECT_NE(log.find(c.expect), std::string::npos) << log;
    EXPECT_NE(log.find("PWN(mul, add, gelu)"), std::string::npos) << log;
  }
}

}  // namespace
}  // namespace kiln
