// gpu: the If/Loop device tactics (control_flow.cc) against the reference kernels on hand-built IR graphs: both
// branches, branches of different shapes, trip counts (read and constant), conditions, scanned inputs and stacked
// outputs, an RNN-like recurrence with MatMuls, nesting; fp32 and fp16; outputs poisoned first; CUDA graph capture.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "backends/cuda/cuda_test_util.h"
#include "kiln/kiln.h"

namespace kiln::cudatest {
namespace {

using ir::Graph;
using ir::Node;
using ir::OpType;
using ir::Value;

constexpr int64_t kAdd = static_cast<int64_t>(ElementWiseOperation::kSUM);
constexpr int64_t kMul = static_cast<int64_t>(ElementWiseOperation::kPROD);
constexpr int64_t kLess = static_cast<int64_t>(ElementWiseOperation::kLESS);

Value* input(Graph& g, std::string const& name, DataType t, std::vector<int64_t> const& s) {
  auto r = g.addInput(name, t, makeDims(s));
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  return *r;
}
Value* binary(Graph& g, std::string const& name, int64_t op, Value* a, Value* b) {
  Node* n = g.addNode(OpType::kElementWise, name, {a, b});
  n->attrs.setInt("op", op);
  return n->outputs[0];
}
Value* tanhOf(Graph& g, std::string const& name, Value* x) {
  Node* n = g.addNode(OpType::kActivation, name, {x});
  n->attrs.setInt("type", static_cast<int64_t>(ActivationType::kTANH));
  return n->outputs[0];
}
Value* matmul(Graph& g, std::string const& name, Value* a, Value* b) {
  Node* n = g.addNode(OpType::kMatrixMultiply, name, {a, b});
  n->attrs.setInt("op_a", static_cast<int64_t>(MatrixOperation::kNONE));
  n->attrs.setInt("op_b", static_cast<int64_t>(MatrixOperation::kNONE));
  return n->outputs[0];
}
Value* constant(Graph& g, std::string const& name, HostTensor t) {
  return g.addConstant(name, std::move(t))->outputs[0];
}
Value* scalarConst(Graph& g, std::string const& name, DataType t, double v) {
  return constant(g, name, HostTensor::fromVector(t, makeDims({}), std::vector<double>{v}));
}
HostTensor boolScalar(bool b) { return HostTensor::fromVector(DataType::kBOOL, makeDims({}), std::vector<int>{b}); }
HostTensor intScalar(DataType t, int64_t v) { return HostTensor::fromVector(t, makeDims({}), std::vector<int64_t>{v}); }

// Sets a Loop node's attributes.
void loopAttrs(Node* n, int64_t carried, std::vector<int64_t> scanAxes, std::vector<int64_t> scanReverse, bool cond,
               std::vector<int64_t> sources, std::vector<int64_t> kinds, std::vector<int64_t> axes) {
  n->attrs.setInt("num_carried", carried);
  n->attrs.setInt("num_scanned", static_cast<int64_t>(scanAxes.size()));
  n->attrs.setInts("scan_axes", std::move(scanAxes));
  n->attrs.setInts("scan_reverse", std::move(scanReverse));
  n->attrs.setInt("has_condition", cond ? 1 : 0);
  n->attrs.setInts("output_sources", std::move(sources));
  n->attrs.setInts("output_kinds", std::move(kinds));
  n->attrs.setInts("output_axes", std::move(axes));
}

// The library's tactic named `name` (without installing the backend, so that supports() is checked here too).
backends::Tactic const* cudaTactic(std::string const& name) {
  for (auto const& t : cuda::CudaTactics::instance().all())
    if (t.name == name) return &t;
  return nullptr;
}

struct RunOptions {
  bool withState = true;  // false: no per-context state (as the builder's timing runs)
  bool capture = false;   // enqueue inside a CUDA graph capture, then replay the graph
};

// Runs the control-flow node `n` of `g` (its inputs are graph inputs, given in `inputs`, or constants) with the
// reference kernel and with the device tactic `tactic`, which must be the first GPU candidate; outputs poisoned,
// data-dependent ones through allocateOutput; compares by norm-relative error.
void expectMatchesReference(Graph& g, Node* n, std::vector<HostTensor> const& inputs, std::string const& tactic,
                            RunOptions opt = {}) {
  ASSERT_TRUE(g.renumber().isOk());
  ir::ShapeState st;
  st.resize(g.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) st.info[g.inputs()[i]->id] = {inputs[i].dtype(), inputs[i].shape()};
  ir::HostEvaluator eval = backends::referenceEvaluator();
  Status inf = ir::inferShapes(g, st, &eval);
  ASSERT_TRUE(inf.isOk()) << inf.toString();
  std::vector<HostTensor const*> ptrs;
  std::vector<ir::TensorInfo> inInfo, outInfo;
  for (Value* v : n->inputs) {
    HostTensor const* t = nullptr;
    if (!v) {
      ir::TensorInfo none;
      none.shape.nbDims = -1;
      inInfo.push_back(none);
      ptrs.push_back(nullptr);
      continue;
    }
    for (size_t i = 0; i < inputs.size(); ++i)
      if (g.inputs()[i] == v) t = &inputs[i];
    if (!t && v->producer && v->producer->constant) t = &*v->producer->constant;
    ASSERT_NE(t, nullptr) << "input " << v->name;
    ptrs.push_back(t);
    inInfo.push_back({t->dtype(), t->shape()});
  }
  for (Value* v : n->outputs) outInfo.push_back(st.info[v->id]);
  auto ref = backends::evaluateOnHostDynamic(*n, ptrs, outInfo);
  ASSERT_TRUE(ref.isOk()) << ref.status().toString();
  // Checked without a device too: the tactic takes the node (every subgraph node has a CUDA kernel).
  backends::Tactic const* own = cudaTactic(tactic);
  ASSERT_NE(own, nullptr);
  ASSERT_TRUE(own->supports(*n, inInfo, outInfo)) << tactic << " does not support " << n->describe();
  KILN_REQUIRE_GPU();

  auto cands = backends::TacticRegistry::instance().candidates(*n, inInfo, outInfo, DeviceType::kGPU, ~0u);
  ASSERT_FALSE(cands.empty());
  EXPECT_EQ(cands.front()->name, tactic);  // the device tactic, ahead of the host fallback
  EXPECT_FALSE(backends::isHostFallback(*cands.front()));
  backends::Tactic const* t = backends::TacticRegistry::instance().find(tactic);
  ASSERT_NE(t, nullptr);
  auto k = t->create(*n);
  ASSERT_TRUE(k.isOk()) << k.status().toString();
  std::unique_ptr<backends::KernelContextState> state;
  if (opt.withState) {
    auto s = (*k)->createContextState(backends::ContextResources{});
    ASSERT_TRUE(s.isOk()) << s.status().toString();
    state = std::move(s).value();
    ASSERT_NE(state, nullptr);
  }

  backends::DeviceBackend* dev = device();
  void* stream = *dev->createStream();
  backends::DeviceStream ds(dev, stream);
  backends::LaunchContext ctx;
  ctx.stream = &ds;
  ctx.state = state.get();
  std::vector<backends::DeviceBuffer> bufs;
  for (size_t i = 0; i < ptrs.size(); ++i) {
    if (!ptrs[i]) {
      ctx.inputs.push_back({nullptr, DataType::kFLOAT, inInfo[i].shape});
      continue;
    }
    auto b = backends::DeviceBuffer::allocate(dev, std::max<size_t>(ptrs[i]->bytes(), 1), "test input");
    ASSERT_TRUE(b.isOk());
    ASSERT_TRUE(
        dev->copy(b->data(), ptrs[i]->data(), ptrs[i]->bytes(), backends::CopyKind::kHostToDevice, stream).isOk());
    ctx.inputs.push_back({b->data(), ptrs[i]->dtype(), ptrs[i]->shape()});
    bufs.push_back(std::move(*b));
  }
  std::vector<std::optional<backends::DeviceBuffer>> outBufs(outInfo.size());
  std::vector<Dims> outShapes;
  for (size_t i = 0; i < outInfo.size(); ++i) {
    outShapes.push_back(outInfo[i].shape);
    if (!dimsKnown(outInfo[i].shape)) {
      ctx.outputs.push_back({nullptr, outInfo[i].dtype, outInfo[i].shape});
      continue;
    }
    size_t bytes = static_cast<size_t>(volume(outInfo[i].shape)) * dataTypeSize(outInfo[i].dtype);
    auto b = backends::DeviceBuffer::allocate(dev, std::max<size_t>(bytes, 1), "test output");
    ASSERT_TRUE(b.isOk());
    ASSERT_TRUE(dev->fill(b->data(), 0xff, bytes, stream).isOk());  // poison: NaN for floats, -1 for integers
    ctx.outputs.push_back({b->data(), outInfo[i].dtype, outInfo[i].shape});
    outBufs[i] = std::move(*b);
  }
  ctx.allocateOutput = [&](size_t i, Dims const& shape) -> Result<void*> {
    EXPECT_FALSE(dimsKnown(outInfo[i].shape)) << "allocateOutput for a planned output " << i;
    size_t bytes = static_cast<size_t>(volume(shape)) * dataTypeSize(outInfo[i].dtype);
    KILN_ASSIGN_OR_RETURN(auto b, backends::DeviceBuffer::allocate(dev, std::max<size_t>(bytes, 1), "test output"));
    KILN_RETURN_IF_ERROR(dev->fill(b.data(), 0xff, bytes, stream));
    outBufs[i] = std::move(b);
    outShapes[i] = shape;
    return outBufs[i]->data();
  };
  ASSERT_TRUE(dev->synchronize(stream).isOk());
  if (opt.capture) {
    ASSERT_TRUE(dev->beginCapture(stream).isOk());
    Status s = (*k)->enqueue(ctx);
    auto exec = dev->endCapture(stream);
    ASSERT_TRUE(s.isOk()) << s.toString();
    ASSERT_TRUE(exec.isOk()) << exec.status().toString();
    ASSERT_TRUE(dev->launchGraph(*exec, stream).isOk());
    ASSERT_TRUE(dev->synchronize(stream).isOk());
    dev->destroyGraph(*exec);
  } else {
    Status s = (*k)->enqueue(ctx);
    ASSERT_TRUE(s.isOk()) << s.toString();
    ASSERT_TRUE(dev->synchronize(stream).isOk());
  }
  for (size_t i = 0; i < outInfo.size(); ++i) {
    HostTensor const& r = (*ref)[i];
    ASSERT_EQ(dimsToString(outShapes[i]), dimsToString(r.shape())) << "output " << i;
    ASSERT_TRUE(outBufs[i].has_value()) << "output " << i << " was not written";
    auto host = HostTensor::allocate(r.dtype(), r.shape(), "test download");
    ASSERT_TRUE(dev->copy(host->mutableData(), outBufs[i]->data(), r.bytes(), backends::CopyKind::kDeviceToHost, stream)
                    .isOk());
    ASSERT_TRUE(dev->synchronize(stream).isOk());
    double err = normRelativeError(*host, r);
    EXPECT_LE(err, defaultTolerance(r.dtype()))
        << "output " << i << " (" << dataTypeName(r.dtype()) << ", shape " << dimsToString(r.shape()) << ")";
  }
  dev->destroyStream(stream);
}

// ---- If ----

// then: (x + y, tanh(x)); else: (x * y, y) -- the else branch passes a captured value through.
std::unique_ptr<Graph> ifBranch(bool then, DataType t) {
  auto b = std::make_unique<Graph>();
  Value* x = input(*b, "x", t, {2, 3});
  Value* y = input(*b, "y", t, {2, 3});
  b->markOutput(binary(*b, "op", then ? kAdd : kMul, x, y));
  b->markOutput(then ? tanhOf(*b, "tanh", x) : y);
  return b;
}

TEST(CudaControlFlow, IfRunsEitherBranch) {
  for (DataType t : {DataType::kFLOAT, DataType::kHALF}) {
    for (bool cond : {true, false}) {
      SCOPED_TRACE(strCat(dataTypeName(t), cond ? " then" : " else"));
      Graph g;
      Value* c = input(g, "c", DataType::kBOOL, {});
      Value* x = input(g, "x", t, {2, 3});
      Value* y = input(g, "y", t, {2, 3});
      Node* n = g.addNode(OpType::kIf, "if", {c, x, y}, 2);
      n->subgraphs.push_back(ifBranch(true, t));
      n->subgraphs.push_back(ifBranch(false, t));
      for (Value* o : n->outputs) g.markOutput(o);
      for (bool withState : {true, false})
        expectMatchesReference(g, n, {boolScalar(cond), randomTensor(t, {2, 3}, 1), randomTensor(t, {2, 3}, 2)},
                               "if_cuda_subgraph", {withState, false});
    }
  }
}

TEST(CudaControlFlow, IfBranchesOfDifferentShapes) {
  for (bool cond : {true, false}) {
    SCOPED_TRACE(cond ? "then" : "else");
    Graph g;
    Value* c = input(g, "c", DataType::kBOOL, {});
    Value* x = input(g, "x", DataType::kFLOAT, {2, 3});
    Node* n = g.addNode(OpType::kIf, "if", {c, x});
    auto thenG = std::make_unique<Graph>();
    Value* tx = input(*thenG, "x", DataType::kFLOAT, {2, 3});
    Node* cat = thenG->addNode(OpType::kConcatenation, "cat", {tx, tx});
    cat->attrs.setInt("axis", 0);
    thenG->markOutput(cat->outputs[0]);  // [4, 3]
    auto elseG = std::make_unique<Graph>();
    Value* ex = input(*elseG, "x", DataType::kFLOAT, {2, 3});
    elseG->markOutput(tanhOf(*elseG, "tanh", ex));  // [2, 3]
    n->subgraphs.push_back(std::move(thenG));
    n->subgraphs.push_back(std::move(elseG));
    g.markOutput(n->outputs[0]);  // [-1, 3]: allocated once the branch ran
    expectMatchesReference(g, n, {boolScalar(cond), randomTensor(DataType::kFLOAT, {2, 3}, 3)}, "if_cuda_subgraph");
  }
}

TEST(CudaControlFlow, IfConditionReadIsRefusedInsideCapture) {
  KILN_REQUIRE_GPU();
  Graph g;
  Value* c = input(g, "c", DataType::kBOOL, {});
  Value* x = input(g, "x", DataType::kFLOAT, {2, 3});
  Value* y = input(g, "y", DataType::kFLOAT, {2, 3});
  Node* n = g.addNode(OpType::kIf, "my_if", {c, x, y}, 2);
  n->subgraphs.push_back(ifBranch(true, DataType::kFLOAT));
  n->subgraphs.push_back(ifBranch(false, DataType::kFLOAT));
  ASSERT_TRUE(g.renumber().isOk());
  backends::Tactic const* t = backends::TacticRegistry::instance().find("if_cuda_subgraph");
  ASSERT_NE(t, nullptr);
  auto k = t->create(*n);
  ASSERT_TRUE(k.isOk()) << k.status().toString();
  backends::DeviceBackend* dev = device();
  void* stream = *dev->createStream();
  auto cb = backends::DeviceBuffer::allocate(dev, 1, "cond");
  auto xb = backends::DeviceBuffer::allocate(dev, 24, "x");
  auto ob = backends::DeviceBuffer::allocate(dev, 48, "out");
  ASSERT_TRUE(cb.isOk() && xb.isOk() && ob.isOk());
  backends::DeviceStream ds(dev, stream);
  backends::LaunchContext ctx;
  ctx.stream = &ds;
  ctx.inputs = {{cb->data(), DataType::kBOOL, makeDims({})},
                {xb->data(), DataType::kFLOAT, makeDims({2, 3})},
                {xb->data(), DataType::kFLOAT, makeDims({2, 3})}};
  ctx.outputs = {{ob->data(), DataType::kFLOAT, makeDims({2, 3})},
                 {static_cast<char*>(ob->data()) + 24, DataType::kFLOAT, makeDims({2, 3})}};
  ASSERT_TRUE(dev->beginCapture(stream).isOk());
  Status s = (*k)->enqueue(ctx);
  auto exec = dev->endCapture(stream);
  if (exec.isOk()) dev->destroyGraph(*exec);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("my_if"), std::string::npos) << s.toString();
  EXPECT_NE(s.message().find("CUDA graph"), std::string::npos) << s.toString();
  dev->destroyStream(stream);
}

// A capture that fails (here: synchronizing the capturing stream, which capture refuses and which invalidates it) ends
// with an error from endCapture and leaves no CUDA error behind for the next launch's check to take as its own: the
// builder's graph timing falls back from such a capture and goes on timing other kernels.
TEST(CudaGraphCapture, AFailedCaptureLeavesNoStaleError) {
  KILN_REQUIRE_GPU();
  backends::DeviceBackend* dev = device();
  void* stream = *dev->createStream();
  auto buf = backends::DeviceBuffer::allocate(dev, 16, "capture test");
  ASSERT_TRUE(buf.isOk());
  ASSERT_TRUE(dev->beginCapture(stream).isOk());
  EXPECT_TRUE(dev->fill(buf->data(), 1, 16, stream).isOk());
  EXPECT_NE(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), cudaSuccess);
  auto exec = dev->endCapture(stream);
  EXPECT_FALSE(exec.isOk());
  if (exec.isOk()) dev->destroyGraph(*exec);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_FALSE(dev->isCapturing(stream));
  EXPECT_TRUE(dev->fill(buf->data(), 0, 16, stream).isOk());
  EXPECT_TRUE(dev->synchronize(stream).isOk());
  dev->destroyStream(stream);
}

// ---- Loop ----

// Body of a running sum: (iteration, acc, x) -> (acc + x, (acc + x) * x).
std::unique_ptr<Graph> sumBody(DataType t) {
  auto b = std::make_unique<Graph>();
  input(*b, "i", DataType::kINT64, {});
  Value* acc = input(*b, "acc", t, {2, 3});
  Value* x = input(*b, "x", t, {2, 3});
  Value* next = binary(*b, "add", kAdd, acc, x);
  b->markOutput(next);
  b->markOutput(binary(*b, "mul", kMul, next, x));
  return b;
}

// A Loop with a trip count (a graph input, read while running, or a constant), one carried value and the outputs
// last value, concatenated along axis 0 and reversed along axis 1.
void runTripLoop(DataType t, int64_t trips, bool constantTrip, RunOptions opt = {}) {
  Graph g;
  Value* trip = constantTrip ? scalarConst(g, "trip", DataType::kINT64, static_cast<double>(trips))
                             : input(g, "trip", DataType::kINT32, {});
  Value* acc = input(g, "acc0", t, {2, 3});
  Value* x = input(g, "x", t, {2, 3});
  Node* n = g.addNode(OpType::kLoop, "loop", {trip, acc, x}, 4);
  loopAttrs(n, 1, {}, {}, false, {0, 0, 1, 1}, {0, 1, 2, 1}, {0, 0, 1, 2});
  n->subgraphs.push_back(sumBody(t));
  for (Value* o : n->outputs) g.markOutput(o);
  std::vector<HostTensor> in;
  if (!constantTrip) in.push_back(intScalar(DataType::kINT32, trips));
  in.push_back(randomTensor(t, {2, 3}, 4));
  in.push_back(randomTensor(t, {2, 3}, 5));
  expectMatchesReference(g, n, in, "loop_cuda_subgraph", opt);
}

TEST(CudaControlFlow, LoopWithTripCount) {
  for (DataType t : {DataType::kFLOAT, DataType::kHALF})
    for (int64_t trips : {0, 1, 5})
      for (bool constantTrip : {false, true}) {
        SCOPED_TRACE(strCat(dataTypeName(t), " trips ", trips, constantTrip ? " constant" : " read"));
        runTripLoop(t, trips, constantTrip);
      }
}

TEST(CudaControlFlow, LoopWithConstantTripCountIsCapturedAndReplayed) {
  runTripLoop(DataType::kFLOAT, 4, true, {true, true});
}

// while (k < 5): k += 1; acc = acc * 1.5 + x -- the condition computed on the device from a carried value (read
// every iteration) or from the iteration number (known on the host).
TEST(CudaControlFlow, LoopWithCondition) {
  for (bool fromIteration : {false, true}) {
    SCOPED_TRACE(fromIteration ? "condition from the iteration number" : "condition from a carried value");
    Graph g;
    Value* k0 = input(g, "k0", DataType::kINT32, {});
    Value* acc0 = input(g, "acc0", DataType::kFLOAT, {4});
    Value* x = input(g, "x", DataType::kFLOAT, {4});
    Node* n = g.addNode(OpType::kLoop, "loop", {nullptr, k0, acc0, x}, 3);
    loopAttrs(n, 2, {}, {}, true, {1, 2, 2}, {0, 0, 1}, {0, 0, 0});
    auto b = std::make_unique<Graph>();
    Value* i = input(*b, "i", DataType::kINT64, {});
    Value* k = input(*b, "k", DataType::kINT32, {});
    Value* acc = input(*b, "acc", DataType::kFLOAT, {4});
    Value* bx = input(*b, "x", DataType::kFLOAT, {4});
    Value* k1 = binary(*b, "inc", kAdd, k, scalarConst(*b, "one", DataType::kINT32, 1));
    Value* cond = fromIteration ? binary(*b, "less", kLess, i, scalarConst(*b, "three", DataType::kINT64, 3))
                                : binary(*b, "less", kLess, k1, scalarConst(*b, "five", DataType::kINT32, 5));
    Value* scaled = binary(*b, "scale", kMul, acc, scalarConst(*b, "c", DataType::kFLOAT, 1.5));
    b->markOutput(cond);
    b->markOutput(k1);
    b->markOutput(binary(*b, "acc_next", kAdd, scaled, bx));
    n->subgraphs.push_back(std::move(b));
    for (Value* o : n->outputs) g.markOutput(o);
    expectMatchesReference(g, n,
                           {intScalar(DataType::kINT32, 0), randomTensor(DataType::kFLOAT, {4}, 6),
                            randomTensor(DataType::kFLOAT, {4}, 7)},
                           "loop_cuda_subgraph");
  }
}

// Scanned inputs along axis 0 (slices handed on as views where aligned) and along axis 1 in reverse (copied);
// a carried sum; outputs stacked along a new axis 0 and reversed along a new last axis.
TEST(CudaControlFlow, LoopOverScannedInputs) {
  for (DataType t : {DataType::kFLOAT, DataType::kHALF}) {
    SCOPED_TRACE(dataTypeName(t));
    Graph g;
    Value* sum0 = input(g, "sum0", t, {8, 8});
    Value* s = input(g, "s", t, {5, 8, 8});
    Value* r = input(g, "r", t, {2, 6, 3});
    Node* n = g.addNode(OpType::kLoop, "loop", {nullptr, sum0, s, r}, 3);
    loopAttrs(n, 1, {0, 1}, {0, 1}, false, {0, 1, 2}, {0, 1, 2}, {0, 0, 2});
    auto b = std::make_unique<Graph>();
    input(*b, "i", DataType::kINT64, {});
    Value* sum = input(*b, "sum", t, {8, 8});
    Value* st = input(*b, "s_t", t, {8, 8});
    Value* rt = input(*b, "r_t", t, {2, 3});
    b->markOutput(binary(*b, "acc", kAdd, sum, st));
    b->markOutput(binary(*b, "twice", kMul, st, scalarConst(*b, "two", t, 2)));
    b->markOutput(tanhOf(*b, "tanh", rt));
    n->subgraphs.push_back(std::move(b));
    for (Value* o : n->outputs) g.markOutput(o);
    // 5 iterations: the shorter scanned length (5 against 6).
    expectMatchesReference(g, n,
                           {randomTensor(t, {8, 8}, 8), randomTensor(t, {5, 8, 8}, 9), randomTensor(t, {2, 6, 3}, 10)},
                           "loop_cuda_subgraph");
  }
}

// An RNN cell as the ONNX importer builds them: h' = tanh(x_t W + h R + b) over the time axis, with the last
// hidden state and all of them as outputs.
TEST(CudaControlFlow, RecurrenceWithMatMul) {
  for (DataType t : {DataType::kFLOAT, DataType::kHALF}) {
    SCOPED_TRACE(dataTypeName(t));
    int64_t const T = 7, B = 3, I = 5, H = 4;
    Graph g;
    Value* x = input(g, "x", t, {T, B, I});
    Value* h0 = input(g, "h0", t, {B, H});
    Value* trip = scalarConst(g, "trip", DataType::kINT64, static_cast<double>(T));
    Node* n = g.addNode(OpType::kLoop, "rnn", {trip, h0, x}, 2);
    loopAttrs(n, 1, {0}, {0}, false, {0, 0}, {0, 1}, {0, 0});
    auto b = std::make_unique<Graph>();
    input(*b, "i", DataType::kINT64, {});
    Value* h = input(*b, "h", t, {B, H});
    Value* xt = input(*b, "x_t", t, {B, I});
    Value* w = constant(*b, "W", randomTensor(t, {I, H}, 11));
    Value* rw = constant(*b, "R", randomTensor(t, {H, H}, 12));
    Value* bias = constant(*b, "b", randomTensor(t, {1, H}, 13));
    Value* sum = binary(*b, "sum", kAdd, matmul(*b, "xw", xt, w), matmul(*b, "hr", h, rw));
    b->markOutput(tanhOf(*b, "h_next", binary(*b, "biased", kAdd, sum, bias)));
    n->subgraphs.push_back(std::move(b));
    for (Value* o : n->outputs) g.markOutput(o);
    expectMatchesReference(g, n, {randomTensor(t, {T, B, I}, 14), randomTensor(t, {B, H}, 15)}, "loop_cuda_subgraph");
  }
}

// A Loop whose body holds an If on the iteration number: h * 2 for the first two iterations, h + 1 after.
TEST(CudaControlFlow, IfNestedInLoop) {
  Graph g;
  Value* h0 = input(g, "h0", DataType::kFLOAT, {3});
  Value* trip = scalarConst(g, "trip", DataType::kINT32, 4);
  Node* n = g.addNode(OpType::kLoop, "loop", {trip, h0}, 2);
  loopAttrs(n, 1, {}, {}, false, {0, 0}, {0, 1}, {0, 0});
  auto b = std::make_unique<Graph>();
  Value* i = input(*b, "i", DataType::kINT64, {});
  Value* h = input(*b, "h", DataType::kFLOAT, {3});
  Value* early = binary(*b, "early", kLess, i, scalarConst(*b, "two", DataType::kINT64, 2));
  Node* inner = b->addNode(OpType::kIf, "inner_if", {early, h});
  for (bool then : {true, false}) {
    auto br = std::make_unique<Graph>();
    Value* bh = input(*br, "h", DataType::kFLOAT, {3});
    br->markOutput(binary(*br, then ? "double" : "inc", then ? kMul : kAdd, bh,
                          scalarConst(*br, "k", DataType::kFLOAT, then ? 2 : 1)));
    inner->subgraphs.push_back(std::move(br));
  }
  b->markOutput(inner->outputs[0]);
  n->subgraphs.push_back(std::move(b));
  for (Value* o : n->outputs) g.markOutput(o);
  expectMatchesReference(g, n, {randomTensor(DataType::kFLOAT, {3}, 16)}, "loop_cuda_subgraph");
}

// supports() needs no device: a subgraph node without a CUDA kernel (Assertion) leaves the If to the host fallback.
TEST(CudaControlFlow, SubgraphNodeWithoutCudaKernelIsNotSupported) {
  backends::Tactic const* ifT = cudaTactic("if_cuda_subgraph");
  ASSERT_NE(ifT, nullptr);
  for (bool withAssertion : {false, true}) {
    Graph g;
    Value* c = input(g, "c", DataType::kBOOL, {});
    Value* x = input(g, "x", DataType::kFLOAT, {2, 3});
    Value* y = input(g, "y", DataType::kFLOAT, {2, 3});
    Node* n = g.addNode(OpType::kIf, "if", {c, x, y}, 2);
    n->subgraphs.push_back(ifBranch(true, DataType::kFLOAT));
    n->subgraphs.push_back(ifBranch(false, DataType::kFLOAT));
    if (withAssertion) {
      Graph& e = *n->subgraphs[1];
      Value* ok = binary(e, "cmp", kLess, e.inputs()[0], e.inputs()[1]);
      e.addNode(OpType::kAssertion, "check", {ok}, 0)->attrs.setString("message", "x < y");
    }
    ASSERT_TRUE(g.renumber().isOk());
    std::vector<ir::TensorInfo> in = {
        {DataType::kBOOL, makeDims({})}, {DataType::kFLOAT, makeDims({2, 3})}, {DataType::kFLOAT, makeDims({2, 3})}};
    std::vector<ir::TensorInfo> out = {{DataType::kFLOAT, makeDims({2, 3})}, {DataType::kFLOAT, makeDims({2, 3})}};
    EXPECT_EQ(ifT->supports(*n, in, out), !withAssertion);
  }
}

}  // namespace
}  // namespace kiln::cudatest
