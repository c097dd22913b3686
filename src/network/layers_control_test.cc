// Tests of IIfConditional and ILoop through the public network API: boundary layers and their shapes in the
// flat network, and the IR the builder sees (bodies moved into If/Loop subgraphs), including nesting, the
// depth limit and misuse errors.
#include "ir/shape_inference.h"
#include "network/network_test_util.h"

namespace kiln::network {
namespace {

using testing::NetworkTest;

class ControlTest : public NetworkTest {
 protected:
  ITensor* constant(std::vector<float> const& v, Dims const& d) {
    store_.push_back(std::make_shared<std::vector<float>>(v));
    IConstantLayer* c = net->addConstant(d, weights(*store_.back()));
    EXPECT_NE(c, nullptr);
    return c->getOutput(0);
  }
  ITensor* intScalar(int32_t v) {
    istore_.push_back(std::make_shared<std::vector<int32_t>>(std::vector<int32_t>{v}));
    IConstantLayer* c = net->addConstant(makeDims({}), weights(*istore_.back()));
    EXPECT_NE(c, nullptr);
    return c->getOutput(0);
  }
  ITensor* add(ITensor* a, ITensor* b) {
    IElementWiseLayer* l = net->addElementWise(*a, *b, ElementWiseOperation::kSUM);
    EXPECT_NE(l, nullptr);
    return l->getOutput(0);
  }
  // The lowered graph's nodes of one op.
  static std::vector<ir::Node const*> nodesOf(ir::Graph const& g, ir::OpType op) {
    std::vector<ir::Node const*> r;
    for (auto const& n : g.nodes())
      if (n->op == op) r.push_back(n.get());
    return r;
  }
  // Shapes of the lowered graph's outputs as ir::inferShapes computes them (no host evaluator).
  static std::vector<std::string> inferredOutputs(ir::Graph const& lowered) {
    std::unique_ptr<ir::Graph> g = lowered.clone();
    Status s = ir::inferGraphInPlace(*g, nullptr);
    EXPECT_TRUE(s.isOk()) << s.toString();
    std::vector<std::string> r;
    for (ir::Value const* v : g->outputs()) r.push_back(v->name + dimsToString(v->shape));
    return r;
  }
  std::vector<std::shared_ptr<std::vector<float>>> store_;
  std::vector<std::shared_ptr<std::vector<int32_t>>> istore_;
};

TEST_F(ControlTest, CountingLoop) {
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2}));
  ITensor* trip = intScalar(5);
  ITensor* one = constant({1.F, 1.F}, makeDims({2}));
  ILoop* loop = net->addLoop();
  ASSERT_NE(loop, nullptr);
  loop->setName("count");
  EXPECT_STREQ(loop->getName(), "count");
  ITripLimitLayer* tl = loop->addTripLimit(*trip, TripLimit::kCOUNT);
  ASSERT_NE(tl, nullptr);
  EXPECT_EQ(tl->getType(), LayerType::kTRIP_LIMIT);
  EXPECT_EQ(tl->getTripLimit(), TripLimit::kCOUNT);
  EXPECT_EQ(tl->getLoop(), loop);
  EXPECT_EQ(tl->getNbOutputs(), 0);
  EXPECT_EQ(loop->addTripLimit(*trip, TripLimit::kCOUNT), nullptr);  // a second kCOUNT limit
  EXPECT_EQ(errors(), 1);
  IRecurrenceLayer* rec = loop->addRecurrence(*x);
  ASSERT_NE(rec, nullptr);
  EXPECT_EQ(rec->getType(), LayerType::kRECURRENCE);
  ITensor* next = add(rec->getOutput(0), one);
  rec->setInput(1, *next);
  EXPECT_EQ(rec->getNbInputs(), 2);
  EXPECT_EQ(rec->getInput(1), next);
  ILoopOutputLayer* last = loop->addLoopOutput(*rec->getOutput(0), LoopOutput::kLAST_VALUE);
  ILoopOutputLayer* all = loop->addLoopOutput(*next, LoopOutput::kCONCATENATE, 0);
  ASSERT_NE(last, nullptr);
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(all->getLoopOutput(), LoopOutput::kCONCATENATE);
  EXPECT_EQ(all->getAxis(), 0);
  expectDims(all->getOutput(0), {-1, 2});  // the length is unknown until input 1 is set
  all->setInput(1, *trip);
  expectDims(all->getOutput(0), {5, 2});
  expectDims(last->getOutput(0), {2});
  last->getOutput(0)->setName("last");
  all->getOutput(0)->setName("all");
  net->markOutput(*last->getOutput(0));
  net->markOutput(*all->getOutput(0));
  EXPECT_EQ(errors(), 1);

  ir::Graph const& g = net->graph();
  EXPECT_EQ(errors(), 1) << lastError();
  auto loops = nodesOf(g, ir::OpType::kLoop);
  ASSERT_EQ(loops.size(), 1u);
  ir::Node const& n = *loops[0];
  EXPECT_TRUE(nodesOf(g, ir::OpType::kElementWise).empty());  // moved into the body
  ASSERT_EQ(n.subgraphs.size(), 1u);
  EXPECT_EQ(n.attrs.getInt("num_carried"), 1);
  EXPECT_EQ(n.attrs.getInt("num_scanned"), 0);
  EXPECT_EQ(n.attrs.getInt("has_condition"), 0);
  EXPECT_EQ(n.attrs.getInts("output_sources"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(n.attrs.getInts("output_kinds"), (std::vector<int64_t>{0, 1}));
  ASSERT_EQ(n.inputs.size(), 2u);  // trip count, initial value (the constant 'one' is copied into the body)
  EXPECT_EQ(n.inputs[0]->producer->op, ir::OpType::kConstant);
  EXPECT_EQ(n.inputs[1]->name, "x");
  ir::Graph const& body = *n.subgraphs[0];
  ASSERT_EQ(body.inputs().size(), 2u);  // iteration, carried
  EXPECT_EQ(body.inputs()[0]->dtype, DataType::kINT64);
  EXPECT_EQ(nodesOf(body, ir::OpType::kElementWise).size(), 1u);
  EXPECT_EQ(nodesOf(body, ir::OpType::kConstant).size(), 1u);
  EXPECT_EQ(body.outputs().size(), 2u);
  EXPECT_EQ(inferredOutputs(g), (std::vector<std::string>{"last[2]", "all[5,2]"}));
  // The network itself keeps its flat layers.
  EXPECT_EQ(net->getNbLayers(), 7);
}

TEST_F(ControlTest, CumulativeSumWithIterator) {
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({4, 3}));
  ITensor* zero = constant({0.F, 0.F, 0.F}, makeDims({3}));
  ILoop* loop = net->addLoop();
  IIteratorLayer* it = loop->addIterator(*x, 0, false);
  ASSERT_NE(it, nullptr);
  EXPECT_EQ(it->getAxis(), 0);
  EXPECT_FALSE(it->getReverse());
  it->setReverse(true);
  EXPECT_TRUE(it->getReverse());
  it->setReverse(false);
  expectDims(it->getOutput(0), {3});
  IRecurrenceLayer* rec = loop->addRecurrence(*zero);
  ITensor* sum = add(rec->getOutput(0), it->getOutput(0));
  rec->setInput(1, *sum);
  ILoopOutputLayer* last = loop->addLoopOutput(*rec->getOutput(0), LoopOutput::kLAST_VALUE);
  ILoopOutputLayer* all = loop->addLoopOutput(*sum, LoopOutput::kCONCATENATE, 0);
  ILoopOutputLayer* rev = loop->addLoopOutput(*sum, LoopOutput::kREVERSE, 1);
  last->getOutput(0)->setName("total");
  all->getOutput(0)->setName("prefix");
  rev->getOutput(0)->setName("prefix_t");
  net->markOutput(*last->getOutput(0));
  net->markOutput(*all->getOutput(0));
  net->markOutput(*rev->getOutput(0));
  ir::Graph const& g = net->graph();
  EXPECT_EQ(errors(), 0) << lastError();
  auto loops = nodesOf(g, ir::OpType::kLoop);
  ASSERT_EQ(loops.size(), 1u);
  ir::Node const& n = *loops[0];
  EXPECT_EQ(n.input(0), nullptr);  // no trip count: the scan length bounds it
  EXPECT_EQ(n.attrs.getInt("num_scanned"), 1);
  EXPECT_EQ(n.attrs.getInts("scan_axes"), (std::vector<int64_t>{0}));
  EXPECT_EQ(n.attrs.getInts("scan_reverse"), (std::vector<int64_t>{0}));
  EXPECT_EQ(n.attrs.getInts("output_kinds"), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(n.attrs.getInts("output_axes"), (std::vector<int64_t>{0, 0, 1}));
  ASSERT_EQ(n.inputs.size(), 3u);
  EXPECT_EQ(n.inputs[2]->name, "x");
  EXPECT_EQ(inferredOutputs(g), (std::vector<std::string>{"total[3]", "prefix[4,3]", "prefix_t[3,4]"}));
}

TEST_F(ControlTest, IfElse) {
  ITensor* cond = net->addInput("cond", DataType::kBOOL, makeDims({}));
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({3}));
  ITensor* two = constant({2.F, 2.F, 2.F}, makeDims({3}));
  IIfConditional* c = net->addIfConditional();
  ASSERT_NE(c, nullptr);
  IConditionLayer* cl = c->setCondition(*cond);
  ASSERT_NE(cl, nullptr);
  EXPECT_EQ(cl->getType(), LayerType::kCONDITION);
  EXPECT_EQ(cl->getConditional(), c);
  EXPECT_EQ(c->setCondition(*cond), nullptr);
  EXPECT_EQ(errors(), 1);
  IIfConditionalInputLayer* in = c->addInput(*x);
  ASSERT_NE(in, nullptr);
  ITensor* xi = in->getOutput(0);
  ITensor* t = net->addActivation(*xi, ActivationType::kRELU)->getOutput(0);
  ITensor* f = net->addElementWise(*xi, *two, ElementWiseOperation::kPROD)->getOutput(0);
  IIfConditionalOutputLayer* out = c->addOutput(*t, *f);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->getType(), LayerType::kCONDITIONAL_OUTPUT);
  expectDims(out->getOutput(0), {3});
  out->getOutput(0)->setName("y");
  net->markOutput(*out->getOutput(0));
  ir::Graph const& g = net->graph();
  EXPECT_EQ(errors(), 1) << lastError();
  auto ifs = nodesOf(g, ir::OpType::kIf);
  ASSERT_EQ(ifs.size(), 1u);
  ir::Node const& n = *ifs[0];
  ASSERT_EQ(n.subgraphs.size(), 2u);
  ASSERT_EQ(n.inputs.size(), 2u);
  EXPECT_EQ(n.inputs[0]->name, "cond");
  EXPECT_EQ(n.inputs[1]->name, "x");
  EXPECT_EQ(nodesOf(*n.subgraphs[0], ir::OpType::kActivation).size(), 1u);
  EXPECT_EQ(nodesOf(*n.subgraphs[0], ir::OpType::kElementWise).size(), 0u);
  EXPECT_EQ(nodesOf(*n.subgraphs[1], ir::OpType::kElementWise).size(), 1u);
  EXPECT_EQ(nodesOf(*n.subgraphs[1], ir::OpType::kConstant).size(), 1u);
  EXPECT_EQ(n.subgraphs[0]->inputs().size(), 1u);
  EXPECT_EQ(n.subgraphs[1]->inputs().size(), 1u);
  EXPECT_TRUE(nodesOf(g, ir::OpType::kActivation).empty());
  EXPECT_EQ(inferredOutputs(g), (std::vector<std::string>{"y[3]"}));
}

// Outer loop (trip 3) whose body holds an inner loop (trip 2) and an if on the outer iteration's value.
TEST_F(ControlTest, NestedLoopAndIfInsideALoop) {
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({1}));
  ITensor* flag = net->addInput("flag", DataType::kBOOL, makeDims({}));
  ITensor* one = constant({1.F}, makeDims({1}));
  ILoop* outer = net->addLoop();
  outer->addTripLimit(*intScalar(3), TripLimit::kCOUNT);
  IRecurrenceLayer* acc = outer->addRecurrence(*x);
  ILoop* inner = net->addLoop();
  inner->addTripLimit(*intScalar(2), TripLimit::kCOUNT);
  IRecurrenceLayer* acc2 = inner->addRecurrence(*acc->getOutput(0));
  ITensor* n2 = add(acc2->getOutput(0), one);
  acc2->setInput(1, *n2);
  ITensor* innerOut = inner->addLoopOutput(*acc2->getOutput(0), LoopOutput::kLAST_VALUE)->getOutput(0);
  IIfConditional* cond = net->addIfConditional();
  cond->setCondition(*flag);
  ITensor* ci = cond->addInput(*innerOut)->getOutput(0);
  ITensor* doubled = add(ci, ci);
  ITensor* chosen = cond->addOutput(*doubled, *ci)->getOutput(0);
  acc->setInput(1, *chosen);
  ITensor* result = outer->addLoopOutput(*acc->getOutput(0), LoopOutput::kLAST_VALUE)->getOutput(0);
  result->setName("result");
  net->markOutput(*result);
  ir::Graph const& g = net->graph();
  EXPECT_EQ(errors(), 0) << lastError();
  auto loops = nodesOf(g, ir::OpType::kLoop);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_TRUE(nodesOf(g, ir::OpType::kIf).empty());
  ir::Graph const& body = *loops[0]->subgraphs[0];
  auto innerLoops = nodesOf(body, ir::OpType::kLoop);
  auto ifs = nodesOf(body, ir::OpType::kIf);
  ASSERT_EQ(innerLoops.size(), 1u);
  ASSERT_EQ(ifs.size(), 1u);
  EXPECT_EQ(nodesOf(*innerLoops[0]->subgraphs[0], ir::OpType::kElementWise).size(), 1u);
  EXPECT_EQ(nodesOf(*ifs[0]->subgraphs[0], ir::OpType::kElementWise).size(), 1u);
  EXPECT_EQ(nodesOf(*ifs[0]->subgraphs[1], ir::OpType::kElementWise).size(), 0u);
  // The outer body captures 'flag' (the if's condition).
  bool capturesFlag = false;
  for (ir::Value const* v : loops[0]->inputs) capturesFlag = capturesFlag || (v && v->name == "flag");
  EXPECT_TRUE(capturesFlag);
  EXPECT_EQ(inferredOutputs(g), (std::vector<std::string>{"result[1]"}));
}

// `depth` loops nested inside each other, each of trip 1 adding nothing but a carried value.
void buildNested(INetworkDefinition& net, ITensor* x, ITensor* trip, ITensor* one, int depth) {
  std::vector<ILoop*> loops;
  std::vector<IRecurrenceLayer*> recs;
  ITensor* cur = x;
  for (int d = 0; d < depth; ++d) {
    ILoop* l = net.addLoop();
    l->addTripLimit(*trip, TripLimit::kCOUNT);
    IRecurrenceLayer* r = l->addRecurrence(*cur);
    cur = r->getOutput(0);
    loops.push_back(l);
    recs.push_back(r);
  }
  ITensor* next = net.addElementWise(*cur, *one, ElementWiseOperation::kSUM)->getOutput(0);
  for (int d = depth - 1; d >= 0; --d) {
    recs[d]->setInput(1, *next);
    next = loops[d]->addLoopOutput(*recs[d]->getOutput(0), LoopOutput::kLAST_VALUE)->getOutput(0);
  }
  net.markOutput(*next);
}

int depthOf(ir::Graph const& g) {
  int d = 0;
  for (auto const& n : g.nodes())
    for (auto const& s : n->subgraphs) d = std::max(d, 1 + depthOf(*s));
  return d;
}

TEST_F(ControlTest, NestingUpToTheLimit) {
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({1}));
  buildNested(*net, x, intScalar(1), constant({1.F}, makeDims({1})), 16);
  ir::Graph const& g = net->graph();
  EXPECT_EQ(errors(), 0) << lastError();
  EXPECT_EQ(depthOf(g), 16);
}

TEST_F(ControlTest, NestingBeyondTheLimitIsAnError) {
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({1}));
  buildNested(*net, x, intScalar(1), constant({1.F}, makeDims({1})), 17);
  int before = errors();
  ir::Graph const& g = net->graph();
  EXPECT_GT(errors(), before);
  EXPECT_NE(lastError().find("nested"), std::string::npos) << lastError();
  EXPECT_EQ(depthOf(g), 0);  // the flat graph comes back; its boundary nodes have no kernels
}

TEST_F(ControlTest, BodyTensorUsedOutsideIsAnError) {
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2}));
  ILoop* loop = net->addLoop();
  loop->addTripLimit(*intScalar(2), TripLimit::kCOUNT);
  IRecurrenceLayer* rec = loop->addRecurrence(*x);
  ITensor* next = add(rec->getOutput(0), rec->getOutput(0));
  rec->setInput(1, *next);
  net->markOutput(*next);  // not through addLoopOutput
  (void)net->graph();
  EXPECT_GE(errors(), 1);
  EXPECT_NE(lastError().find("addLoopOutput"), std::string::npos) << lastError();
}

TEST_F(ControlTest, MisuseIsReported) {
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2}));
  {  // a recurrence without a next value
    ILoop* loop = net->addLoop();
    loop->addTripLimit(*intScalar(2), TripLimit::kCOUNT);
    IRecurrenceLayer* rec = loop->addRecurrence(*x);
    net->markOutput(*loop->addLoopOutput(*rec->getOutput(0), LoopOutput::kLAST_VALUE)->getOutput(0));
    (void)net->graph();
    EXPECT_GE(errors(), 1);
    EXPECT_NE(lastError().find("next value"), std::string::npos) << lastError();
  }
  int before = errors();
  ILoop* loop = net->addLoop();
  EXPECT_EQ(loop->addTripLimit(*x, static_cast<TripLimit>(7)), nullptr);
  EXPECT_EQ(loop->addLoopOutput(*x, static_cast<LoopOutput>(9)), nullptr);
  EXPECT_EQ(errors(), before + 2);
  // A kCOUNT limit that is not an integer scalar: reported by shape inference.
  loop->addTripLimit(*x, TripLimit::kCOUNT);
  (void)x->getDimensions();
  EXPECT_EQ(errors(), before + 3);
  EXPECT_NE(lastError().find("kCOUNT"), std::string::npos) << lastError();
  // An iterator axis out of range.
  IIteratorLayer* it = loop->addIterator(*x, 3);
  (void)it->getOutput(0)->getDimensions();
  EXPECT_EQ(errors(), before + 4);
  // A conditional whose outputs disagree in type.
  IIfConditional* c = net->addIfConditional();
  ITensor* i32 = intScalar(1);
  ITensor* f = constant({1.F}, makeDims({}));
  c->addOutput(*i32, *f);
  (void)f->getDimensions();
  EXPECT_EQ(errors(), before + 5);
}

}  // namespace
}  // namespace kiln::network
