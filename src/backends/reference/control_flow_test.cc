// Tests of the If and Loop reference kernels and their shape inference, on hand-built IR graphs; expected
// values come from plain loops written here.
#include <gtest/gtest.h>

#include <cmath>

#include "backends/backend.h"
#include "backends/reference/graph_interpreter.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::backends {
namespace {

using ir::Graph;
using ir::Node;
using ir::OpType;
using ir::Value;

constexpr int64_t kAdd = static_cast<int64_t>(ElementWiseOperation::kSUM);
constexpr int64_t kMul = static_cast<int64_t>(ElementWiseOperation::kPROD);
constexpr int64_t kLess = static_cast<int64_t>(ElementWiseOperation::kLESS);

Value* in(Graph& g, std::string const& name, DataType t, Dims const& s) {
  auto r = g.addInput(name, t, s);
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  return *r;
}

Value* binary(Graph& g, std::string const& name, int64_t op, Value* a, Value* b) {
  Node* n = g.addNode(OpType::kElementWise, name, {a, b});
  n->attrs.setInt("op", op);
  return n->outputs[0];
}

template <typename T>
Value* constant(Graph& g, std::string const& name, DataType t, Dims const& s, std::vector<T> const& v) {
  return g.addConstant(name, HostTensor::fromVector(t, s, v))->outputs[0];
}

HostTensor f32(Dims const& s, std::vector<float> const& v) { return HostTensor::fromVector(DataType::kFLOAT, s, v); }
HostTensor boolScalar(bool b) { return HostTensor::fromVector(DataType::kBOOL, makeDims({}), std::vector<int>{b}); }
HostTensor i32Scalar(int v) { return HostTensor::fromVector(DataType::kINT32, makeDims({}), std::vector<int>{v}); }

std::vector<double> values(HostTensor const& t) {
  std::vector<double> r;
  for (int64_t i = 0; i < t.count(); ++i) r.push_back(t.doubleAt(i));
  return r;
}

// Infers `g` for its inputs' declared shapes (no contents known except constants); returns the output infos.
std::vector<ir::TensorInfo> inferOutputs(Graph& g, Status* status = nullptr) {
  EXPECT_TRUE(g.renumber().isOk());
  ir::ShapeState st;
  st.resize(g.values().size());
  for (Value* v : g.inputs()) st.info[v->id] = {v->dtype, v->shape};
  ir::HostEvaluator eval = referenceEvaluator();
  Status s = ir::inferShapes(g, st, &eval);
  if (status) *status = s;
  else EXPECT_TRUE(s.isOk()) << s.toString();
  std::vector<ir::TensorInfo> r;
  for (Value* v : g.outputs()) r.push_back(st.info[v->id]);
  return r;
}

// Runs the single control-flow node `n` of `g` (whose inputs are graph inputs or constants) as the runtime
// would: outputs of unknown shape come without memory and the kernel must call allocateOutput.
Result<std::vector<HostTensor>> runNodeAsRuntime(Graph& g, Node* n, std::vector<HostTensor> const& inputs) {
  std::vector<ir::TensorInfo> outInfo = inferOutputs(g);
  (void)outInfo;
  KILN_RETURN_IF_ERROR(g.renumber());
  ir::ShapeState st;
  st.resize(g.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) st.info[g.inputs()[i]->id] = {inputs[i].dtype(), inputs[i].shape()};
  KILN_RETURN_IF_ERROR(ir::inferShapes(g, st, nullptr));
  LaunchContext ctx;
  CpuStream stream;
  ctx.stream = &stream;
  std::vector<TensorInfo> inInfo, oInfo;
  for (Value* v : n->inputs) {
    if (!v) {
      Dims none{};
      none.nbDims = -1;
      ctx.inputs.push_back({nullptr, DataType::kFLOAT, none});
      inInfo.push_back({DataType::kFLOAT, none});
      continue;
    }
    HostTensor const* t = nullptr;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (g.inputs()[i] == v) t = &inputs[i];
    if (!t && v->producer && v->producer->constant) t = &*v->producer->constant;
    if (!t) return internalError("test: input not found");
    ctx.inputs.push_back({const_cast<void*>(t->data()), t->dtype(), t->shape()});
    inInfo.push_back({t->dtype(), t->shape()});
  }
  std::vector<std::optional<HostTensor>> out(n->outputs.size());
  for (size_t i = 0; i < n->outputs.size(); ++i) {
    ir::TensorInfo info = st.info[n->outputs[i]->id];
    oInfo.push_back(info);
    if (dimsKnown(info.shape)) {
      KILN_ASSIGN_OR_RETURN(out[i], HostTensor::allocate(info.dtype, info.shape, "test"));
      ctx.outputs.push_back({out[i]->mutableData(), info.dtype, info.shape});
    } else {
      ctx.outputs.push_back({nullptr, info.dtype, info.shape});
    }
  }
  ctx.allocateOutput = [&](size_t i, Dims const& shape) -> Result<void*> {
    EXPECT_FALSE(ctx.outputs[i].data) << "allocateOutput for a preallocated output";
    KILN_ASSIGN_OR_RETURN(out[i], HostTensor::allocate(oInfo[i].dtype, shape, "test"));
    return out[i]->mutableData();
  };
  Tactic const* t = TacticRegistry::instance().find(n->op == OpType::kIf ? "if_reference" : "loop_reference");
  if (!t) return internalError("test: tactic missing");
  if (!t->supports(*n, inInfo, oInfo)) return internalError("test: tactic does not support the node");
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k, t->create(*n));
  KILN_RETURN_IF_ERROR(k->enqueue(ctx));
  std::vector<HostTensor> r;
  for (auto& o : out) {
    if (!o) return internalError("test: output not written");
    r.push_back(std::move(*o));
  }
  return r;
}

// then: x + y, else: x * y (same shapes).
std::unique_ptr<Graph> branch(bool add) {
  auto b = std::make_unique<Graph>();
  Value* x = in(*b, "x", DataType::kFLOAT, makeDims({3}));
  Value* y = in(*b, "y", DataType::kFLOAT, makeDims({3}));
  b->markOutput(binary(*b, "op", add ? kAdd : kMul, x, y));
  return b;
}

TEST(ControlFlowIf, UnknownConditionRunsTheChosenBranch) {
  Graph g;
  Value* c = in(g, "c", DataType::kBOOL, makeDims({}));
  Value* x = in(g, "x", DataType::kFLOAT, makeDims({3}));
  Value* y = in(g, "y", DataType::kFLOAT, makeDims({3}));
  Node* n = g.addNode(OpType::kIf, "if", {c, x, y});
  n->subgraphs.push_back(branch(true));
  n->subgraphs.push_back(branch(false));
  g.markOutput(n->outputs[0]);
  auto info = inferOutputs(g);
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(info[0].dtype, DataType::kFLOAT);
  EXPECT_TRUE(dimsEqual(info[0].shape, makeDims({3})));
  HostTensor xv = f32(makeDims({3}), {1.5f, -2.f, 3.f});
  HostTensor yv = f32(makeDims({3}), {2.f, 4.f, -0.5f});
  for (bool cond : {true, false}) {
    auto r = runGraphOnHost(g, {boolScalar(cond), xv, yv});
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    std::vector<double> want;
    for (int i = 0; i < 3; ++i)
      want.push_back(cond ? xv.doubleAt(i) + yv.doubleAt(i) : xv.doubleAt(i) * yv.doubleAt(i));
    EXPECT_EQ(values((*r)[0]), want);
  }
}

// then: x ([3]), else: concat(x, x) ([6]); the output is [-1] unless the condition is known.
std::unique_ptr<Graph> shapeBranch(bool twice) {
  auto b = std::make_unique<Graph>();
  Value* x = in(*b, "x", DataType::kFLOAT, makeDims({3}));
  if (!twice) {
    b->markOutput(x);
    return b;
  }
  Node* cat = b->addNode(OpType::kConcatenation, "cat", {x, x});
  cat->attrs.setInt("axis", 0);
  b->markOutput(cat->outputs[0]);
  return b;
}

TEST(ControlFlowIf, BranchShapesMergeToDataDependentDims) {
  Graph g;
  Value* c = in(g, "c", DataType::kBOOL, makeDims({}));
  Value* x = in(g, "x", DataType::kFLOAT, makeDims({3}));
  Node* n = g.addNode(OpType::kIf, "if", {c, x});
  n->subgraphs.push_back(shapeBranch(false));
  n->subgraphs.push_back(shapeBranch(true));
  g.markOutput(n->outputs[0]);
  auto info = inferOutputs(g);
  EXPECT_TRUE(dimsEqual(info[0].shape, makeDims({-1})));
  HostTensor xv = f32(makeDims({3}), {1.f, 2.f, 3.f});
  auto t = runNodeAsRuntime(g, n, {boolScalar(true), xv});
  ASSERT_TRUE(t.isOk()) << t.status().toString();
  EXPECT_EQ(values((*t)[0]), (std::vector<double>{1, 2, 3}));
  auto e = runNodeAsRuntime(g, n, {boolScalar(false), xv});
  ASSERT_TRUE(e.isOk()) << e.status().toString();
  EXPECT_EQ(values((*e)[0]), (std::vector<double>{1, 2, 3, 1, 2, 3}));
}

TEST(ControlFlowIf, KnownConditionGivesTheBranchShape) {
  for (bool cond : {true, false}) {
    Graph g;
    Value* c = constant(g, "c", DataType::kBOOL, makeDims({}), std::vector<int>{cond});
    Value* x = in(g, "x", DataType::kFLOAT, makeDims({3}));
    Node* n = g.addNode(OpType::kIf, "if", {c, x});
    n->subgraphs.push_back(shapeBranch(false));
    n->subgraphs.push_back(shapeBranch(true));
    g.markOutput(n->outputs[0]);
    auto info = inferOutputs(g);
    EXPECT_TRUE(dimsEqual(info[0].shape, makeDims({cond ? 3 : 6})));
    auto r = runGraphOnHost(g, {f32(makeDims({3}), {4.f, 5.f, 6.f})});
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    EXPECT_EQ((*r)[0].count(), cond ? 3 : 6);
  }
}

TEST(ControlFlowIf, BadGraphsAreErrors) {
  {  // float condition
    Graph g;
    Value* c = in(g, "c", DataType::kFLOAT, makeDims({}));
    Value* x = in(g, "x", DataType::kFLOAT, makeDims({3}));
    Value* y = in(g, "y", DataType::kFLOAT, makeDims({3}));
    Node* n = g.addNode(OpType::kIf, "if", {c, x, y});
    n->subgraphs.push_back(branch(true));
    n->subgraphs.push_back(branch(false));
    g.markOutput(n->outputs[0]);
    Status s;
    inferOutputs(g, &s);
    EXPECT_FALSE(s.isOk());
    EXPECT_NE(s.message().find("condition"), std::string::npos) << s.toString();
  }
  {  // branches of different ranks
    Graph g;
    Value* c = in(g, "c", DataType::kBOOL, makeDims({}));
    Value* x = in(g, "x", DataType::kFLOAT, makeDims({3}));
    Node* n = g.addNode(OpType::kIf, "if", {c, x});
    n->subgraphs.push_back(shapeBranch(false));
    auto other = std::make_unique<Graph>();
    Value* ox = in(*other, "x", DataType::kFLOAT, makeDims({3}));
    Node* sh = other->addNode(OpType::kShape, "shape", {ox});
    (void)sh;
    Node* cast = other->addNode(OpType::kCast, "cast", {sh->outputs[0]});
    cast->attrs.setInt("to", static_cast<int64_t>(DataType::kFLOAT));
    Node* cat = other->addNode(OpType::kConcatenation, "cat", {cast->outputs[0], ox});
    cat->attrs.setInt("axis", 0);
    other->markOutput(cast->outputs[0]);
    n->subgraphs.push_back(std::move(other));
    g.markOutput(n->outputs[0]);
    Status s;
    inferOutputs(g, &s);
    EXPECT_TRUE(s.isOk()) << s.toString();  // [3] vs [1]: same rank, merged to [-1]
    // A wrong number of branches.
    n->subgraphs.pop_back();
    inferOutputs(g, &s);
    EXPECT_FALSE(s.isOk());
  }
}

// Loop: carried c (f32[2]) with c' = c * 2 + x (x captured); outputs: last c, c' of every iteration (axis
// `axis`), and the iteration index of every iteration reversed.
struct CountingLoop {
  Graph g;
  Node* loop = nullptr;
};

std::unique_ptr<Graph> countingBody() {
  auto b = std::make_unique<Graph>();
  Value* iter = in(*b, "iter", DataType::kINT64, makeDims({}));
  Value* c = in(*b, "c", DataType::kFLOAT, makeDims({2}));
  Value* x = in(*b, "x", DataType::kFLOAT, makeDims({2}));
  Value* two = constant(*b, "two", DataType::kFLOAT, makeDims({1}), std::vector<float>{2.f});
  Value* next = binary(*b, "add", kAdd, binary(*b, "mul", kMul, c, two), x);
  b->markOutput(next);
  b->markOutput(iter);
  return b;
}

void makeCountingLoop(CountingLoop& cl, Value* trip, int64_t axis) {
  Value* c0 = in(cl.g, "c0", DataType::kFLOAT, makeDims({2}));
  Value* x = in(cl.g, "x", DataType::kFLOAT, makeDims({2}));
  Node* n = cl.g.addNode(OpType::kLoop, "loop", {trip, c0, x}, 3);
  n->attrs.setInt("num_carried", 1);
  n->attrs.setInt("num_scanned", 0);
  n->attrs.setInts("scan_axes", {});
  n->attrs.setInts("scan_reverse", {});
  n->attrs.setInt("has_condition", 0);
  n->attrs.setInts("output_sources", {0, 0, 1});
  n->attrs.setInts("output_kinds", {0, 1, 2});
  n->attrs.setInts("output_axes", {0, axis, 0});
  n->subgraphs.push_back(countingBody());
  for (Value* o : n->outputs) cl.g.markOutput(o);
  cl.loop = n;
}

TEST(ControlFlowLoop, TripCountLastValueConcatenateAndReverse) {
  for (int trip : {0, 1, 3}) {
    for (int64_t axis : {0, 1, -1}) {
      CountingLoop cl;
      Value* t = constant(cl.g, "trip", DataType::kINT32, makeDims({}), std::vector<int>{trip});
      makeCountingLoop(cl, t, axis);
      auto info = inferOutputs(cl.g);
      ASSERT_EQ(info.size(), 3u);
      EXPECT_TRUE(dimsEqual(info[0].shape, makeDims({2})));
      Dims cat = axis == 0 ? makeDims({trip, 2}) : makeDims({2, trip});
      EXPECT_TRUE(dimsEqual(info[1].shape, cat)) << dimsToString(info[1].shape);
      EXPECT_TRUE(dimsEqual(info[2].shape, makeDims({trip})));
      EXPECT_EQ(info[2].dtype, DataType::kINT64);
      HostTensor c0 = f32(makeDims({2}), {1.f, -1.f});
      HostTensor x = f32(makeDims({2}), {0.5f, 3.f});
      auto r = runGraphOnHost(cl.g, {c0, x});
      ASSERT_TRUE(r.isOk()) << r.status().toString();
      // Naive: per iteration values.
      std::vector<std::vector<double>> it;
      std::vector<double> c{1.0, -1.0};
      for (int k = 0; k < trip; ++k) {
        c = {c[0] * 2 + 0.5, c[1] * 2 + 3.0};
        it.push_back(c);
      }
      EXPECT_EQ(values((*r)[0]), c);
      std::vector<double> want;
      if (axis == 0) {
        for (auto const& v : it) want.insert(want.end(), v.begin(), v.end());
      } else {
        for (int j = 0; j < 2; ++j)
          for (auto const& v : it) want.push_back(v[j]);
      }
      EXPECT_EQ(values((*r)[1]), want);
      std::vector<double> rev;
      for (int k = trip - 1; k >= 0; --k) rev.push_back(k);
      EXPECT_EQ(values((*r)[2]), rev);
    }
  }
}

TEST(ControlFlowLoop, UnknownTripCountIsDataDependent) {
  CountingLoop cl;
  Value* t = in(cl.g, "trip", DataType::kINT64, makeDims({}));
  makeCountingLoop(cl, t, 0);
  auto info = inferOutputs(cl.g);
  EXPECT_TRUE(dimsEqual(info[0].shape, makeDims({2})));
  EXPECT_TRUE(dimsEqual(info[1].shape, makeDims({-1, 2})));
  EXPECT_TRUE(dimsEqual(info[2].shape, makeDims({-1})));
  HostTensor trip = HostTensor::fromVector(DataType::kINT64, makeDims({}), std::vector<int64_t>{4});
  auto r = runNodeAsRuntime(cl.g, cl.loop, {trip, f32(makeDims({2}), {0.f, 1.f}), f32(makeDims({2}), {1.f, 1.f})});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(values((*r)[0]), (std::vector<double>{15, 31}));
  EXPECT_TRUE(dimsEqual((*r)[1].shape(), makeDims({4, 2})));
  EXPECT_EQ(values((*r)[1]), (std::vector<double>{1, 3, 3, 7, 7, 15, 15, 31}));
  EXPECT_EQ(values((*r)[2]), (std::vector<double>{3, 2, 1, 0}));
  // A negative trip count is an error, not a crash.
  HostTensor neg = HostTensor::fromVector(DataType::kINT64, makeDims({}), std::vector<int64_t>{-2});
  auto bad = runNodeAsRuntime(cl.g, cl.loop, {neg, f32(makeDims({2}), {0.f, 1.f}), f32(makeDims({2}), {1.f, 1.f})});
  EXPECT_FALSE(bad.isOk());
}

// While loop: carried i (int64) and s (float); cond = i < limit; i' = i + 1; s' = s + i.
std::unique_ptr<Graph> whileBody() {
  auto b = std::make_unique<Graph>();
  in(*b, "iter", DataType::kINT64, makeDims({}));
  Value* i = in(*b, "i", DataType::kINT64, makeDims({}));
  Value* s = in(*b, "s", DataType::kFLOAT, makeDims({}));
  Value* limit = in(*b, "limit", DataType::kINT64, makeDims({}));
  Value* one = constant(*b, "one", DataType::kINT64, makeDims({}), std::vector<int64_t>{1});
  Node* cast = b->addNode(OpType::kCast, "cast", {i});
  cast->attrs.setInt("to", static_cast<int64_t>(DataType::kFLOAT));
  b->markOutput(binary(*b, "less", kLess, i, limit));
  b->markOutput(binary(*b, "inc", kAdd, i, one));
  b->markOutput(binary(*b, "acc", kAdd, s, cast->outputs[0]));
  return b;
}

TEST(ControlFlowLoop, WhileLoopStopsWhenTheConditionTurnsFalse) {
  Graph g;
  Value* i0 = in(g, "i0", DataType::kINT64, makeDims({}));
  Value* s0 = in(g, "s0", DataType::kFLOAT, makeDims({}));
  Value* limit = in(g, "limit", DataType::kINT64, makeDims({}));
  Node* n = g.addNode(OpType::kLoop, "while", {nullptr, i0, s0, limit}, 3);
  n->attrs.setInt("num_carried", 2);
  n->attrs.setInt("num_scanned", 0);
  n->attrs.setInt("has_condition", 1);
  n->attrs.setInts("output_sources", {1, 2, 2});
  n->attrs.setInts("output_kinds", {0, 0, 1});
  n->attrs.setInts("output_axes", {0, 0, 0});
  n->subgraphs.push_back(whileBody());
  for (Value* o : n->outputs) g.markOutput(o);
  auto info = inferOutputs(g);
  EXPECT_TRUE(dimsEqual(info[2].shape, makeDims({-1})));
  auto i64 = [](int64_t v) { return HostTensor::fromVector(DataType::kINT64, makeDims({}), std::vector<int64_t>{v}); };
  auto f = [](float v) { return HostTensor::fromVector(DataType::kFLOAT, makeDims({}), std::vector<float>{v}); };
  for (int64_t start : {0, 3, 5, 9}) {
    auto r = runNodeAsRuntime(g, n, {i64(start), f(0.5f), i64(5)});
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    double s = 0.5;
    std::vector<double> sums;
    int64_t i = start;
    while (i < 5) {
      s += static_cast<double>(i);
      ++i;
      sums.push_back(s);
    }
    EXPECT_EQ((*r)[0].intAt(0), i);
    EXPECT_EQ((*r)[1].doubleAt(0), s);
    EXPECT_EQ(values((*r)[2]), sums);
  }
}

// Scan: acc' = acc + slice(x); outputs: last acc, acc' of every iteration.
Graph* scanLoop(Graph& g, Dims const& xShape, int64_t axis, bool reverse, int64_t outKind) {
  Value* acc0 = in(g, "acc0", DataType::kFLOAT, makeDims({2}));
  Value* x = in(g, "x", DataType::kFLOAT, xShape);
  Node* n = g.addNode(OpType::kLoop, "scan", {nullptr, acc0, x}, 2);
  n->attrs.setInt("num_carried", 1);
  n->attrs.setInt("num_scanned", 1);
  n->attrs.setInts("scan_axes", {axis});
  n->attrs.setInts("scan_reverse", {reverse ? 1 : 0});
  n->attrs.setInt("has_condition", 0);
  n->attrs.setInts("output_sources", {0, 0});
  n->attrs.setInts("output_kinds", {0, outKind});
  n->attrs.setInts("output_axes", {0, 0});
  auto b = std::make_unique<Graph>();
  in(*b, "iter", DataType::kINT64, makeDims({}));
  Value* acc = in(*b, "acc", DataType::kFLOAT, makeDims({2}));
  Value* sl = in(*b, "slice", DataType::kFLOAT, makeDims({2}));
  b->markOutput(binary(*b, "add", kAdd, acc, sl));
  n->subgraphs.push_back(std::move(b));
  for (Value* o : n->outputs) g.markOutput(o);
  return &g;
}

TEST(ControlFlowLoop, ScannedInputCumulativeSum) {
  // x [4, 2] scanned along axis 0, or its transpose [2, 4] along axis 1 (or -1).
  std::vector<std::vector<float>> rows{{1, 2}, {3, 4}, {5, 6}, {7, 8}};
  for (int64_t axis : {0, 1, -1}) {
    for (bool reverse : {false, true}) {
      for (int64_t kind : {1, 2}) {
        Graph g;
        Dims xs = axis == 0 ? makeDims({4, 2}) : makeDims({2, 4});
        scanLoop(g, xs, axis, reverse, kind);
        auto info = inferOutputs(g);
        EXPECT_TRUE(dimsEqual(info[1].shape, makeDims({4, 2}))) << dimsToString(info[1].shape);
        std::vector<float> xv;
        if (axis == 0) {
          for (auto const& r : rows) xv.insert(xv.end(), r.begin(), r.end());
        } else {
          for (int j = 0; j < 2; ++j)
            for (auto const& r : rows) xv.push_back(r[j]);
        }
        auto r = runGraphOnHost(g, {f32(makeDims({2}), {10.f, 20.f}), f32(xs, xv)});
        ASSERT_TRUE(r.isOk()) << r.status().toString();
        std::vector<std::vector<double>> steps;
        std::vector<double> acc{10, 20};
        for (int k = 0; k < 4; ++k) {
          auto const& row = rows[reverse ? 3 - k : k];
          acc = {acc[0] + row[0], acc[1] + row[1]};
          steps.push_back(acc);
        }
        if (kind == 2) std::reverse(steps.begin(), steps.end());
        std::vector<double> want;
        for (auto const& s : steps) want.insert(want.end(), s.begin(), s.end());
        EXPECT_EQ(values((*r)[0]), acc);
        EXPECT_EQ(values((*r)[1]), want) << "axis " << axis << " reverse " << reverse << " kind " << kind;
      }
    }
  }
}

TEST(ControlFlowLoop, ZeroLengthScanKeepsTheInitialValue) {
  Graph g;
  scanLoop(g, makeDims({0, 2}), 0, false, 1);
  auto info = inferOutputs(g);
  EXPECT_TRUE(dimsEqual(info[1].shape, makeDims({0, 2})));
  auto r = runGraphOnHost(g, {f32(makeDims({2}), {10.f, 20.f}), f32(makeDims({0, 2}), {})});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(values((*r)[0]), (std::vector<double>{10, 20}));
  EXPECT_EQ((*r)[1].count(), 0);
}

// A Loop node that wraps `inner` as its body: trip count `trip` (captured constant inside its parent), carried
// acc (f32 0-D): acc' = inner(acc) when inner is given, acc + 1 otherwise.
std::unique_ptr<Graph> nestBody(std::unique_ptr<Graph> innerBody, int trip, int64_t* innerCount) {
  auto b = std::make_unique<Graph>();
  in(*b, "iter", DataType::kINT64, makeDims({}));
  Value* acc = in(*b, "acc", DataType::kFLOAT, makeDims({}));
  Value* one = constant(*b, "one", DataType::kFLOAT, makeDims({}), std::vector<float>{1.f});
  Value* next = binary(*b, "inc", kAdd, acc, one);
  if (innerBody) {
    Value* t = constant(*b, "trip", DataType::kINT32, makeDims({}), std::vector<int>{trip});
    Node* n = b->addNode(OpType::kLoop, "inner", {t, next}, 2);
    n->attrs.setInt("num_carried", 1);
    n->attrs.setInt("num_scanned", 0);
    n->attrs.setInt("has_condition", 0);
    n->attrs.setInts("output_sources", {0, 0});
    n->attrs.setInts("output_kinds", {0, 1});
    n->attrs.setInts("output_axes", {0, 0});
    n->subgraphs.push_back(std::move(innerBody));
    next = n->outputs[0];
    b->markOutput(next);
    b->markOutput(n->outputs[1]);
  } else {
    b->markOutput(next);
  }
  if (innerCount) ++*innerCount;
  return b;
}

TEST(ControlFlowLoop, NestedLoops) {
  // outer (trip from an input) { acc += 1; inner (trip 3) { acc += 1 } }: acc grows by 4 per outer iteration.
  Graph g;
  Value* trip = in(g, "trip", DataType::kINT32, makeDims({}));
  Value* acc0 = in(g, "acc0", DataType::kFLOAT, makeDims({}));
  Node* n = g.addNode(OpType::kLoop, "outer", {trip, acc0}, 2);
  n->attrs.setInt("num_carried", 1);
  n->attrs.setInt("num_scanned", 0);
  n->attrs.setInt("has_condition", 0);
  n->attrs.setInts("output_sources", {0, 1});
  n->attrs.setInts("output_kinds", {0, 1});
  n->attrs.setInts("output_axes", {0, 0});
  n->subgraphs.push_back(nestBody(nestBody(nullptr, 0, nullptr), 3, nullptr));
  for (Value* o : n->outputs) g.markOutput(o);
  auto info = inferOutputs(g);
  EXPECT_TRUE(dimsEqual(info[0].shape, makeDims({})));
  EXPECT_TRUE(dimsEqual(info[1].shape, makeDims({-1, 3})));
  auto r = runNodeAsRuntime(g, n, {i32Scalar(2), HostTensor::fromVector(DataType::kFLOAT, makeDims({}),
                                                                          std::vector<float>{0.f})});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].doubleAt(0), 8.0);
  // Inner values: iteration 0: acc 1 -> 2, 3, 4; iteration 1: 5 -> 6, 7, 8.
  EXPECT_EQ(values((*r)[1]), (std::vector<double>{2, 3, 4, 6, 7, 8}));
}

TEST(ControlFlowLoop, NestingDeeperThanTheLimitIsAnError) {
  for (int depth : {16, 17}) {
    std::unique_ptr<Graph> body;
    for (int d = 0; d < depth; ++d) body = nestBody(std::move(body), 1, nullptr);
    Graph g;
    Value* acc0 = in(g, "acc0", DataType::kFLOAT, makeDims({}));
    Value* t = constant(g, "trip", DataType::kINT32, makeDims({}), std::vector<int>{1});
    Node* n = g.addNode(OpType::kLoop, "outer", {t, acc0}, 1);
    n->attrs.setInt("num_carried", 1);
    n->attrs.setInt("has_condition", 0);
    n->attrs.setInts("output_sources", {0});
    n->attrs.setInts("output_kinds", {0});
    n->attrs.setInts("output_axes", {0});
    n->subgraphs.push_back(std::move(body));
    g.markOutput(n->outputs[0]);
    Status s;
    inferOutputs(g, &s);
    if (depth <= 16) {
      EXPECT_TRUE(s.isOk()) << s.toString();
      auto r = runGraphOnHost(g, {HostTensor::fromVector(DataType::kFLOAT, makeDims({}), std::vector<float>{0.f})});
      ASSERT_TRUE(r.isOk()) << r.status().toString();
      EXPECT_EQ((*r)[0].doubleAt(0), static_cast<double>(depth));
    } else {
      EXPECT_FALSE(s.isOk());
      EXPECT_NE(s.message().find("nested"), std::string::npos) << s.toString();
      Tactic const* tac = TacticRegistry::instance().find("loop_reference");
      ASSERT_TRUE(tac);
      auto k = tac->create(*n);
      EXPECT_FALSE(k.isOk());
    }
  }
}

TEST(ControlFlowLoop, BadLoopsAreErrors) {
  {  // no trip count, no condition, no scan
    Graph g;
    Value* c0 = in(g, "c0", DataType::kFLOAT, makeDims({2}));
    Value* x = in(g, "x", DataType::kFLOAT, makeDims({2}));
    Node* n = g.addNode(OpType::kLoop, "loop", {nullptr, c0, x}, 1);
    n->attrs.setInt("num_carried", 1);
    n->attrs.setInts("output_sources", {0});
    n->attrs.setInts("output_kinds", {0});
    n->attrs.setInts("output_axes", {0});
    n->subgraphs.push_back(countingBody());
    g.markOutput(n->outputs[0]);
    Status s;
    inferOutputs(g, &s);
    EXPECT_FALSE(s.isOk());
  }
  {  // the body changes the carried type
    Graph g;
    Value* t = constant(g, "trip", DataType::kINT32, makeDims({}), std::vector<int>{2});
    Value* c0 = in(g, "c0", DataType::kFLOAT, makeDims({2}));
    Node* n = g.addNode(OpType::kLoop, "loop", {t, c0}, 1);
    n->attrs.setInt("num_carried", 1);
    n->attrs.setInts("output_sources", {0});
    n->attrs.setInts("output_kinds", {0});
    n->attrs.setInts("output_axes", {0});
    auto b = std::make_unique<Graph>();
    in(*b, "iter", DataType::kINT64, makeDims({}));
    Value* c = in(*b, "c", DataType::kFLOAT, makeDims({2}));
    Node* cast = b->addNode(OpType::kCast, "cast", {c});
    cast->attrs.setInt("to", static_cast<int64_t>(DataType::kINT32));
    b->markOutput(cast->outputs[0]);
    n->subgraphs.push_back(std::move(b));
    g.markOutput(n->outputs[0]);
    Status s;
    inferOutputs(g, &s);
    EXPECT_FALSE(s.isOk());
    EXPECT_NE(s.message().find("carried"), std::string::npos) << s.toString();
  }
  {  // an output reading a body output that does not exist
    CountingLoop cl;
    Value* t = constant(cl.g, "trip", DataType::kINT32, makeDims({}), std::vector<int>{2});
    makeCountingLoop(cl, t, 0);
    cl.loop->attrs.setInts("output_sources", {0, 0, 5});
    Status s;
    inferOutputs(cl.g, &s);
    EXPECT_FALSE(s.isOk());
  }
}

}  // namespace
}  // namespace kiln::backends
