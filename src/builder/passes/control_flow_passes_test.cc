// The builder on graphs with If/Loop nodes (made through the public network API): the pass pipelines and the
// precision pass keep them working (checked against the host interpreter), constant folding leaves them, and
// a full build chooses the reference control-flow tactics and writes a plan that reads back with subgraphs.
#include <memory>

#include "builder/passes/pass_test_util.h"
#include "builder/passes/pipeline.h"
#include "builder/precision.h"
#include "kiln/kiln.h"
#include "network/network.h"
#include "plan/plan.h"

namespace kiln::builder {
namespace {

struct QuietLogger : ILogger {
  void log(Severity severity, AsciiChar const* msg) noexcept override {
    if (severity <= Severity::kERROR) last = msg;
  }
  std::string last;
};

// prefix = cumulative sum over the rows of x [4, 3] (a loop with an iterator), total = its last value, and
// y = (flag ? relu(total) : total * 2) through a conditional; every constant is foldable-looking.
void defineNetwork(INetworkDefinition& net, std::vector<float>& zeros, std::vector<float>& twos) {
  ITensor* x = net.addInput("x", DataType::kFLOAT, makeDims({4, 3}));
  ITensor* flag = net.addInput("flag", DataType::kBOOL, makeDims({}));
  zeros.assign(3, 0.F);
  twos.assign(3, 2.F);
  ITensor* zero = net.addConstant(makeDims({3}), Weights{DataType::kFLOAT, zeros.data(), 3})->getOutput(0);
  ITensor* two = net.addConstant(makeDims({3}), Weights{DataType::kFLOAT, twos.data(), 3})->getOutput(0);
  ILoop* loop = net.addLoop();
  IIteratorLayer* it = loop->addIterator(*x, 0, false);
  IRecurrenceLayer* rec = loop->addRecurrence(*zero);
  ITensor* sum = net.addElementWise(*rec->getOutput(0), *it->getOutput(0), ElementWiseOperation::kSUM)->getOutput(0);
  rec->setInput(1, *sum);
  ITensor* total = loop->addLoopOutput(*rec->getOutput(0), LoopOutput::kLAST_VALUE)->getOutput(0);
  ITensor* prefix = loop->addLoopOutput(*sum, LoopOutput::kCONCATENATE, 0)->getOutput(0);
  IIfConditional* c = net.addIfConditional();
  c->setCondition(*flag);
  ITensor* ti = c->addInput(*total)->getOutput(0);
  ITensor* t = net.addActivation(*ti, ActivationType::kRELU)->getOutput(0);
  ITensor* f = net.addElementWise(*ti, *two, ElementWiseOperation::kPROD)->getOutput(0);
  ITensor* y = c->addOutput(*t, *f)->getOutput(0);
  prefix->setName("prefix");
  y->setName("y");
  net.markOutput(*prefix);
  net.markOutput(*y);
}

HostTensor flagTensor(bool b) { return HostTensor::fromVector(DataType::kBOOL, makeDims({}), std::vector<int>{b}); }

std::vector<HostTensor> sampleInputs(bool flag) {
  std::vector<float> xv{1, -2, 3, 4, -5, 6, -7, 8, 9, 10, 11, -12};
  return {HostTensor::fromVector(DataType::kFLOAT, makeDims({4, 3}), xv), flagTensor(flag)};
}

// The expected outputs, computed here.
std::vector<std::vector<double>> expected(bool flag) {
  std::vector<float> xv{1, -2, 3, 4, -5, 6, -7, 8, 9, 10, 11, -12};
  std::vector<double> acc(3, 0), prefix;
  for (int r = 0; r < 4; ++r) {
    for (int j = 0; j < 3; ++j) acc[j] += xv[r * 3 + j];
    prefix.insert(prefix.end(), acc.begin(), acc.end());
  }
  std::vector<double> y;
  for (double v : acc) y.push_back(flag ? std::max(v, 0.0) : v * 2);
  return {prefix, y};
}

std::vector<double> values(HostTensor const& t) {
  std::vector<double> r;
  for (int64_t i = 0; i < t.count(); ++i) r.push_back(t.doubleAt(i));
  return r;
}

class ControlFlowBuild : public ::testing::Test {
 protected:
  void SetUp() override {
    builder_.reset(createInferBuilder(logger_));
    ASSERT_NE(builder_, nullptr);
    net_.reset(builder_->createNetworkV2(0));
    defineNetwork(*net_, zeros_, twos_);
    auto* impl = dynamic_cast<network::NetworkImpl*>(net_.get());
    ASSERT_NE(impl, nullptr);
    graph_ = impl->graph().clone();
    ASSERT_TRUE(ir::inferGraphInPlace(*graph_, &testing::evaluator()).isOk());
  }
  void expectRuns(ir::Graph const& g) {
    for (bool flag : {true, false}) {
      auto r = backends::runGraphOnHost(g, sampleInputs(flag));
      ASSERT_TRUE(r.isOk()) << r.status().toString();
      ASSERT_EQ(r->size(), 2u);
      auto want = expected(flag);
      EXPECT_EQ(values((*r)[0]), want[0]);
      EXPECT_EQ(values((*r)[1]), want[1]);
    }
  }
  static size_t count(ir::Graph const& g, ir::OpType op) {
    size_t n = 0;
    for (auto const& node : g.nodes()) n += node->op == op;
    return n;
  }

  QuietLogger logger_;
  std::unique_ptr<IBuilder> builder_;
  std::unique_ptr<INetworkDefinition> net_;
  std::vector<float> zeros_, twos_;
  std::unique_ptr<ir::Graph> graph_;
};

TEST_F(ControlFlowBuild, LoweredGraphRuns) {
  EXPECT_EQ(count(*graph_, ir::OpType::kLoop), 1u);
  EXPECT_EQ(count(*graph_, ir::OpType::kIf), 1u);
  expectRuns(*graph_);
}

TEST_F(ControlFlowBuild, PipelinesKeepControlFlow) {
  for (int level : {0, 3}) {
    auto g = graph_->clone();
    PassContext ctx;
    ctx.optimizationLevel = level;
    ctx.evaluator = &testing::evaluator();
    Status s = runPipeline(*g, ctx);
    ASSERT_TRUE(s.isOk()) << s.toString();
    EXPECT_EQ(count(*g, ir::OpType::kLoop), 1u) << "level " << level;
    EXPECT_EQ(count(*g, ir::OpType::kIf), 1u) << "level " << level;
    expectRuns(*g);
  }
}

TEST_F(ControlFlowBuild, LoopOnConstantsIsNotFolded) {
  // Replace the scanned input by a constant: every Loop input is then constant, and folding must still skip it.
  auto g = graph_->clone();
  ir::Node* loop = nullptr;
  for (auto const& n : g->nodes())
    if (n->op == ir::OpType::kLoop) loop = n.get();
  ASSERT_TRUE(loop);
  std::vector<float> xv(12, 1.F);
  ir::Node* c = g->addConstant("x_const", HostTensor::fromVector(DataType::kFLOAT, makeDims({4, 3}), xv));
  for (auto& in : loop->inputs)
    if (in && in->name == "x") in = c->outputs[0];
  ASSERT_TRUE(g->renumber().isOk());
  ASSERT_TRUE(ir::inferGraphInPlace(*g, &testing::evaluator()).isOk());
  PassContext ctx;
  ctx.optimizationLevel = 0;
  ctx.evaluator = &testing::evaluator();
  ASSERT_TRUE(runPipeline(*g, ctx).isOk());
  EXPECT_EQ(count(*g, ir::OpType::kLoop), 1u);
}

TEST_F(ControlFlowBuild, ReducedPrecisionLeavesSubgraphsInFloat) {
  for (BuilderFlag flag : {BuilderFlag::kFP16, BuilderFlag::kBF16}) {
    // x * 1 before the loop: a compute op whose output moves to the reduced type, feeding the Loop.
    auto g = graph_->clone();
    ir::Node* loop = nullptr;
    for (auto const& n : g->nodes())
      if (n->op == ir::OpType::kLoop) loop = n.get();
    ASSERT_TRUE(loop);
    ir::Node* ones = g->addConstant("ones", HostTensor::fromVector(DataType::kFLOAT, makeDims({1, 1}),
                                                                   std::vector<float>{1.F}));
    ir::Node* mul = g->addNode(ir::OpType::kElementWise, "times_one", {g->inputs()[0], ones->outputs[0]});
    mul->attrs.setInt("op", static_cast<int64_t>(ElementWiseOperation::kPROD));
    for (auto& in : loop->inputs)
      if (in == g->inputs()[0]) in = mul->outputs[0];
    ASSERT_TRUE(g->renumber().isOk());
    ASSERT_TRUE(ir::inferGraphInPlace(*g, &testing::evaluator()).isOk());
    PrecisionOptions opt;
    opt.flags = 1u << static_cast<uint32_t>(flag);
    Status s = assignPrecision(*g, opt);
    ASSERT_TRUE(s.isOk()) << s.toString();
    ASSERT_TRUE(ir::inferGraphInPlace(*g, &testing::evaluator()).isOk());
    for (auto const& n : g->nodes())
      for (auto const& sub : n->subgraphs)
        for (ir::Value const* v : sub->inputs()) {
          if (v->name != "iteration" && v->dtype != DataType::kBOOL) {
            EXPECT_EQ(v->dtype, DataType::kFLOAT) << v->name;
          }
        }
    EXPECT_EQ(mul->outputs[0]->dtype, flag == BuilderFlag::kFP16 ? DataType::kHALF : DataType::kBF16);
    expectRuns(*g);  // exact: the subgraphs compute in float32 and nothing else rounds these small integers
  }
}

TEST_F(ControlFlowBuild, FullBuildChoosesControlFlowTactics) {
  std::unique_ptr<IBuilderConfig> config(builder_->createBuilderConfig());
  config->setDefaultDeviceType(DeviceType::kCPU);
  std::unique_ptr<IHostMemory> plan(builder_->buildSerializedNetwork(*net_, *config));
  ASSERT_NE(plan, nullptr) << logger_.last;
  auto read = plan::readPlan(plan->data(), plan->size());
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  int seen = 0;
  for (auto const& n : read->graph->nodes()) {
    if (n->op == ir::OpType::kLoop) {
      EXPECT_EQ(n->tactic, "loop_reference");
      ASSERT_EQ(n->subgraphs.size(), 1u);
      ++seen;
    }
    if (n->op == ir::OpType::kIf) {
      EXPECT_EQ(n->tactic, "if_reference");
      EXPECT_EQ(n->subgraphs.size(), 2u);
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2);
  expectRuns(*read->graph);
}

// Outer loop (trip 3) { acc' = flag ? 2 * inner(acc) : inner(acc) } with inner loop (trip 2) { a' = a + 1 }: the
// lowered graph (a loop holding a loop and an if, capturing 'flag') computes what a plain loop does.
TEST(ControlFlowNested, NestedLoweringComputesTheNestedLoops) {
  QuietLogger logger;
  std::unique_ptr<IBuilder> builder(createInferBuilder(logger));
  std::unique_ptr<INetworkDefinition> net(builder->createNetworkV2(0));
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({1}));
  ITensor* flag = net->addInput("flag", DataType::kBOOL, makeDims({}));
  float one = 1.F;
  int32_t three = 3, two = 2;
  ITensor* oneT = net->addConstant(makeDims({1}), Weights{DataType::kFLOAT, &one, 1})->getOutput(0);
  ILoop* outer = net->addLoop();
  outer->addTripLimit(*net->addConstant(makeDims({}), Weights{DataType::kINT32, &three, 1})->getOutput(0),
                      TripLimit::kCOUNT);
  IRecurrenceLayer* acc = outer->addRecurrence(*x);
  ILoop* inner = net->addLoop();
  inner->addTripLimit(*net->addConstant(makeDims({}), Weights{DataType::kINT32, &two, 1})->getOutput(0),
                      TripLimit::kCOUNT);
  IRecurrenceLayer* a = inner->addRecurrence(*acc->getOutput(0));
  a->setInput(1, *net->addElementWise(*a->getOutput(0), *oneT, ElementWiseOperation::kSUM)->getOutput(0));
  ITensor* innerOut = inner->addLoopOutput(*a->getOutput(0), LoopOutput::kLAST_VALUE)->getOutput(0);
  IIfConditional* c = net->addIfConditional();
  c->setCondition(*flag);
  ITensor* ci = c->addInput(*innerOut)->getOutput(0);
  ITensor* doubled = net->addElementWise(*ci, *ci, ElementWiseOperation::kSUM)->getOutput(0);
  acc->setInput(1, *c->addOutput(*doubled, *ci)->getOutput(0));
  ILoopOutputLayer* all = outer->addLoopOutput(*acc->getOutput(0), LoopOutput::kCONCATENATE, 0);
  int32_t three2 = 3;
  all->setInput(1, *net->addConstant(makeDims({}), Weights{DataType::kINT32, &three2, 1})->getOutput(0));
  ITensor* result = outer->addLoopOutput(*acc->getOutput(0), LoopOutput::kLAST_VALUE)->getOutput(0);
  net->markOutput(*result);
  net->markOutput(*all->getOutput(0));
  auto* impl = dynamic_cast<network::NetworkImpl*>(net.get());
  ASSERT_NE(impl, nullptr);
  ir::Graph const& g = impl->graph();
  ASSERT_TRUE(logger.last.empty()) << logger.last;
  for (bool f : {true, false}) {
    for (float x0 : {0.F, 1.5F, -4.F}) {
      auto r = backends::runGraphOnHost(
          g, {HostTensor::fromVector(DataType::kFLOAT, makeDims({1}), std::vector<float>{x0}), flagTensor(f)});
      ASSERT_TRUE(r.isOk()) << r.status().toString();
      double v = x0;
      std::vector<double> starts;
      for (int i = 0; i < 3; ++i) {
        starts.push_back(v);  // the recurrence's value at the start of each iteration
        v = f ? 2 * (v + 2) : v + 2;
      }
      EXPECT_EQ((*r)[0].doubleAt(0), v);
      EXPECT_EQ(values((*r)[1]), starts);
    }
  }
}

}  // namespace
}  // namespace kiln::builder
