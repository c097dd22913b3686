// Tests of Attention: shape inference and its errors, and the reference kernel against the unfused layers it
// replaces (MatrixMultiply, scale, mask Add, SoftMax, NaN cleanup, MatrixMultiply) run by the host interpreter,
// with batch and mask broadcasting, transposed k, fully masked rows, and every float type; layouts 1 and 2
// ([B, S, H, D] / [S, B, H, D] operands) against layout 0 between transposes, packed q/k/v against separate ones.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "backends/backend.h"
#include "backends/reference/graph_interpreter.h"
#include "ir/shape_inference.h"
#include "ir/text.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using ir::OpType;

struct Case {
  DataType dtype = DataType::kFLOAT64;
  std::vector<int64_t> q, k, v, mask;  // k as stored (transposed when kTransposed); mask empty: none
  bool kTransposed = false;
  bool nanToZero = false;
  double scale = 0.125;
};

ir::Value* input(ir::Graph& g, std::string const& name, DataType t, std::vector<int64_t> const& s) {
  auto v = g.addInput(name, t, makeDims(s));
  EXPECT_TRUE(v.isOk());
  return v.isOk() ? *v : nullptr;
}

ir::Value* scalar(ir::Graph& g, std::string const& name, DataType t, double x) {
  return g.addConstant(name, HostTensor::fromVector(t, makeDims({1}), std::vector<double>{x}))->output(0);
}

ir::Value* binary(ir::Graph& g, std::string const& name, ElementWiseOperation op, ir::Value* a, ir::Value* b) {
  ir::Node* n = g.addNode(OpType::kElementWise, name, {a, b});
  n->attrs.setInt("op", static_cast<int64_t>(op));
  return n->output(0);
}

// The layers fuse_attention replaces, as the exporters write them.
std::unique_ptr<ir::Graph> unfused(Case const& c) {
  auto g = std::make_unique<ir::Graph>();
  ir::Value* q = input(*g, "q", c.dtype, c.q);
  ir::Value* k = input(*g, "k", c.dtype, c.k);
  ir::Value* v = input(*g, "v", c.dtype, c.v);
  ir::Node* mm = g->addNode(OpType::kMatrixMultiply, "qk", {q, k});
  mm->attrs.setInt("op_a", 0);
  mm->attrs.setInt("op_b", static_cast<int64_t>(c.kTransposed ? MatrixOperation::kNONE : MatrixOperation::kTRANSPOSE));
  ir::Value* s = binary(*g, "scale", ElementWiseOperation::kPROD, mm->output(0), scalar(*g, "c", c.dtype, c.scale));
  if (!c.mask.empty()) s = binary(*g, "mask_add", ElementWiseOperation::kSUM, s, input(*g, "m", c.dtype, c.mask));
  ir::Node* sm = g->addNode(OpType::kSoftMax, "softmax", {s});
  sm->attrs.setInt("axis", static_cast<int64_t>(c.q.size()) - 1);
  ir::Value* p = sm->output(0);
  if (c.nanToZero) {
    ir::Node* isNan = g->addNode(OpType::kUnary, "isnan", {p});
    isNan->attrs.setInt("op", static_cast<int64_t>(UnaryOperation::kISNAN));
    p = g->addNode(OpType::kSelect, "where", {isNan->output(0), scalar(*g, "zero", c.dtype, 0.0), p})->output(0);
  }
  ir::Node* pv = g->addNode(OpType::kMatrixMultiply, "pv", {p, v});
  pv->attrs.setInt("op_a", 0);
  pv->attrs.setInt("op_b", 0);
  g->markOutput(pv->output(0));
  return g;
}

std::unique_ptr<ir::Graph> fused(Case const& c) {
  auto g = std::make_unique<ir::Graph>();
  std::vector<ir::Value*> in{input(*g, "q", c.dtype, c.q), input(*g, "k", c.dtype, c.k), input(*g, "v", c.dtype, c.v)};
  if (!c.mask.empty()) in.push_back(input(*g, "m", c.dtype, c.mask));
  ir::Node* n = g->addNode(OpType::kAttention, "attention", in);
  n->attrs.setFloat("scale", c.scale);
  n->attrs.setInt("k_transposed", c.kTransposed ? 1 : 0);
  n->attrs.setInt("nan_to_zero", c.nanToZero ? 1 : 0);
  g->markOutput(n->output(0));
  return g;
}

std::vector<HostTensor> randomInputs(Case const& c, uint64_t seed) {
  std::vector<HostTensor> r;
  for (auto const* s : {&c.q, &c.k, &c.v, &c.mask}) {
    if (s == &c.mask && c.mask.empty()) continue;
    auto t = ir::makeRandomTensor(c.dtype, makeDims(*s), seed++);
    EXPECT_TRUE(t.isOk());
    r.push_back(*t);
  }
  return r;
}

// Fused and unfused outputs on `in`: equal within `tol` (relative to the largest magnitude), NaN where the other is.
void expectMatch(Case const& c, std::vector<HostTensor> const& in, double tol) {
  auto a = unfused(c), b = fused(c);
  ASSERT_TRUE(ir::inferGraphInPlace(*a, nullptr).isOk());
  Status st = ir::inferGraphInPlace(*b, nullptr);
  ASSERT_TRUE(st.isOk()) << st.toString();
  EXPECT_EQ(dimsToString(a->outputs()[0]->shape), dimsToString(b->outputs()[0]->shape));
  auto ra = backends::runGraphOnHost(*a, in);
  auto rb = backends::runGraphOnHost(*b, in);
  ASSERT_TRUE(ra.isOk()) << ra.status().toString();
  ASSERT_TRUE(rb.isOk()) << rb.status().toString();
  HostTensor const& x = (*ra)[0];
  HostTensor const& y = (*rb)[0];
  ASSERT_EQ(x.count(), y.count());
  ASSERT_GT(x.count(), 0);
  for (int64_t i = 0; i < x.count(); ++i) {
    double e = x.doubleAt(i), g = y.doubleAt(i);
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(g)) << "element " << i;
    } else {
      EXPECT_NEAR(g, e, tol) << "element " << i;
    }
  }
}

TEST(AttentionReference, MatchesTheUnfusedLayers) {
  std::vector<Case> cases;
  Case c;
  c.q = {2, 3, 5, 8};
  c.k = {2, 3, 7, 8};
  c.v = {2, 3, 7, 4};
  cases.push_back(c);
  c.mask = {2, 1, 1, 7};  // BERT's padding mask
  cases.push_back(c);
  c.mask = {2, 1, 5, 7};
  c.nanToZero = true;
  cases.push_back(c);
  c.mask = {1, 1, 1, 7};
  c.kTransposed = true;
  c.k = {2, 3, 8, 7};
  cases.push_back(c);
  // Broadcast batch dims: k and v shared by the heads, q without a batch dim for v; a mask of rank 2.
  Case b;
  b.q = {2, 3, 5, 8};
  b.k = {2, 1, 7, 8};
  b.v = {7, 6};
  b.mask = {5, 7};
  b.scale = 0.7;
  cases.push_back(b);
  for (Case const& cc : cases) {
    SCOPED_TRACE(testing::Message() << "q " << cc.q.size() << " mask " << cc.mask.size() << " kT " << cc.kTransposed);
    expectMatch(cc, randomInputs(cc, 7), 1e-12);
    Case f = cc;
    f.dtype = DataType::kFLOAT;
    expectMatch(f, randomInputs(f, 7), 1e-6);
  }
}

TEST(AttentionReference, ReducedTypesRoundOnce) {
  for (DataType t : {DataType::kHALF, DataType::kBF16}) {
    Case c;
    c.dtype = t;
    c.q = {1, 2, 9, 16};
    c.k = {1, 2, 11, 16};
    c.v = {1, 2, 11, 8};
    c.mask = {1, 1, 9, 11};
    // The unfused layers round every intermediate; the fused kernel only its output.
    expectMatch(c, randomInputs(c, 3), t == DataType::kHALF ? 5e-3 : 3e-2);
  }
}

// Sets row `row` of a [.., R, C] mask tensor (innermost two dims) to `value` in every leading index.
void fillMaskRow(HostTensor& m, int64_t rows, int64_t cols, int64_t row, double value) {
  HostTensor r = HostTensor::fromVector(m.dtype(), m.shape(), std::vector<double>(static_cast<size_t>(m.count())));
  std::vector<double> vals;
  for (int64_t i = 0; i < m.count(); ++i) vals.push_back(((i / cols) % rows == row) ? value : m.doubleAt(i));
  m = HostTensor::fromVector(m.dtype(), m.shape(), vals);
}

TEST(AttentionReference, FullyMaskedRows) {
  for (DataType t : {DataType::kFLOAT64, DataType::kFLOAT, DataType::kHALF}) {
    for (bool nanToZero : {false, true}) {
      Case c;
      c.dtype = t;
      c.q = {1, 2, 4, 8};
      c.k = {1, 2, 6, 8};
      c.v = {1, 2, 6, 8};
      c.mask = {1, 1, 4, 6};
      c.nanToZero = nanToZero;
      std::vector<HostTensor> in = randomInputs(c, 11);
      fillMaskRow(in[3], 4, 6, 2, -INFINITY);
      expectMatch(c, in, t == DataType::kHALF ? 5e-3 : 1e-6);
      auto r = backends::runGraphOnHost(*fused(c), in);
      ASSERT_TRUE(r.isOk()) << r.status().toString();
      // Row 2 of each head: 0 with nan_to_zero, NaN without (as SoftMax gives it); the others finite.
      for (int64_t i = 0; i < (*r)[0].count(); ++i) {
        double x = (*r)[0].doubleAt(i);
        if ((i / 8) % 4 == 2) {
          if (nanToZero)
            EXPECT_EQ(x, 0.0);
          else
            EXPECT_TRUE(std::isnan(x));
        } else {
          EXPECT_TRUE(std::isfinite(x));
        }
      }
    }
  }
}

TEST(AttentionReference, LargeNegativeMaskIsNotNaN) {
  // -3.4e38 (torch.finfo(float32).min, BERT's mask) on every key: the max subtraction keeps the row finite.
  Case c;
  c.dtype = DataType::kFLOAT;
  c.q = {1, 1, 3, 8};
  c.k = {1, 1, 5, 8};
  c.v = {1, 1, 5, 8};
  c.mask = {1, 1, 1, 5};
  std::vector<HostTensor> in = randomInputs(c, 5);
  in[3] = HostTensor::fromVector(DataType::kFLOAT, makeDims({1, 1, 1, 5}), std::vector<double>(5, -3.4e38));
  expectMatch(c, in, 1e-6);
}

Status inferStatus(Case const& c) { return ir::inferGraphInPlace(*fused(c), nullptr); }

TEST(AttentionReference, ShapeInference) {
  Case c;
  c.dtype = DataType::kFLOAT;
  c.q = {2, 12, 128, 64};
  c.k = {2, 12, 64, 300};
  c.kTransposed = true;
  c.v = {2, 12, 300, 32};
  c.mask = {2, 1, 1, 300};
  auto g = fused(c);
  ASSERT_TRUE(ir::inferGraphInPlace(*g, nullptr).isOk());
  EXPECT_EQ(dimsToString(g->outputs()[0]->shape), "[2,12,128,32]");

  Case bad = c;
  bad.kTransposed = false;  // k [.., 64, 300] then gives D = 300
  EXPECT_NE(inferStatus(bad).message().find("head dim"), std::string::npos) << inferStatus(bad).toString();
  bad = c;
  bad.v = {2, 12, 299, 32};
  EXPECT_NE(inferStatus(bad).message().find("key count"), std::string::npos);
  bad = c;
  bad.mask = {2, 1, 2, 300};
  EXPECT_NE(inferStatus(bad).message().find("does not broadcast"), std::string::npos);
  bad = c;
  bad.mask = {4, 2, 12, 128, 300};  // would enlarge the output
  EXPECT_NE(inferStatus(bad).message().find("does not broadcast"), std::string::npos);
  bad = c;
  bad.q = {3, 12, 128, 64};
  EXPECT_NE(inferStatus(bad).message().find("do not broadcast"), std::string::npos);

  // Mixed types.
  ir::Graph g2;
  auto q = g2.addInput("q", DataType::kFLOAT, makeDims({4, 8}));
  auto k = g2.addInput("k", DataType::kHALF, makeDims({4, 8}));
  auto v = g2.addInput("v", DataType::kFLOAT, makeDims({4, 8}));
  ir::Node* n = g2.addNode(OpType::kAttention, "attention", {*q, *k, *v});
  g2.markOutput(n->output(0));
  Status st = ir::inferGraphInPlace(g2, nullptr);
  EXPECT_NE(st.message().find("one type"), std::string::npos) << st.toString();
}

// Layout 1 (BSHD): q [B, Sq, H, D], k [B, Skv, H, D], v [B, Skv, H, Dv]; `mask` as for the scores [B, H, Sq, Skv].
struct BshdCase {
  DataType dtype = DataType::kFLOAT64;
  int64_t b = 2, sq = 5, skv = 7, h = 3, d = 8, dv = 4;
  std::vector<int64_t> mask;
  bool nanToZero = false;
};

ir::Value* swapAxes12(ir::Graph& g, std::string const& name, ir::Value* x) {
  ir::Node* n = g.addNode(OpType::kShuffle, name, {x});
  n->attrs.setInts("first_perm", {0, 2, 1, 3});
  return n->output(0);
}

// Layout 1 directly, or (`viaLayout0`) layout 0 between Transposes (0,2,1,3) of q, k, v and y.
std::unique_ptr<ir::Graph> bshdGraph(BshdCase const& c, bool viaLayout0, int64_t layoutAttr = 1) {
  auto g = std::make_unique<ir::Graph>();
  std::vector<ir::Value*> in{input(*g, "q", c.dtype, {c.b, c.sq, c.h, c.d}),
                             input(*g, "k", c.dtype, {c.b, c.skv, c.h, c.d}),
                             input(*g, "v", c.dtype, {c.b, c.skv, c.h, c.dv})};
  if (viaLayout0)
    for (size_t i = 0; i < 3; ++i) in[i] = swapAxes12(*g, "t" + std::to_string(i), in[i]);
  if (!c.mask.empty()) in.push_back(input(*g, "m", c.dtype, c.mask));
  ir::Node* n = g->addNode(OpType::kAttention, "attention", in);
  n->attrs.setFloat("scale", 0.3);
  n->attrs.setInt("k_transposed", 0);
  n->attrs.setInt("nan_to_zero", c.nanToZero ? 1 : 0);
  if (!viaLayout0) n->attrs.setInt("layout", layoutAttr);
  g->markOutput(viaLayout0 ? swapAxes12(*g, "ty", n->output(0)) : n->output(0));
  return g;
}

std::vector<HostTensor> bshdInputs(BshdCase const& c, uint64_t seed) {
  std::vector<std::vector<int64_t>> shapes{{c.b, c.sq, c.h, c.d}, {c.b, c.skv, c.h, c.d}, {c.b, c.skv, c.h, c.dv}};
  if (!c.mask.empty()) shapes.push_back(c.mask);
  std::vector<HostTensor> r;
  for (auto const& s : shapes) {
    auto t = ir::makeRandomTensor(c.dtype, makeDims(s), seed++);
    EXPECT_TRUE(t.isOk());
    r.push_back(*t);
  }
  return r;
}

TEST(AttentionReference, BshdLayoutMatchesLayout0BetweenTransposes) {
  std::vector<BshdCase> cases;
  BshdCase c;
  cases.push_back(c);
  c.mask = {2, 1, 1, 7};  // BERT's padding mask
  cases.push_back(c);
  c.mask = {2, 3, 5, 7};  // a full mask: every stride differs
  c.nanToZero = true;
  cases.push_back(c);
  c.mask = {5, 7};
  c.b = 1;
  c.h = 1;  // tile-1 batch and heads
  cases.push_back(c);
  BshdCase big;
  big.b = 3;
  big.sq = 1;
  big.skv = 9;
  big.h = 4;
  big.d = 16;
  big.dv = 24;
  big.mask = {3, 1, 1, 9};
  cases.push_back(big);
  for (BshdCase const& cc : cases)
    for (DataType t : {DataType::kFLOAT64, DataType::kFLOAT, DataType::kHALF}) {
      SCOPED_TRACE(testing::Message() << "b " << cc.b << " h " << cc.h << " mask " << cc.mask.size() << " type "
                                      << dataTypeName(t));
      BshdCase x = cc;
      x.dtype = t;
      auto a = bshdGraph(x, true), b = bshdGraph(x, false);
      ASSERT_TRUE(ir::inferGraphInPlace(*a, nullptr).isOk());
      Status st = ir::inferGraphInPlace(*b, nullptr);
      ASSERT_TRUE(st.isOk()) << st.toString();
      EXPECT_EQ(dimsToString(b->outputs()[0]->shape), dimsToString(makeDims({x.b, x.sq, x.h, x.dv})));
      std::vector<HostTensor> in = bshdInputs(x, 21);
      auto ra = backends::runGraphOnHost(*a, in);
      auto rb = backends::runGraphOnHost(*b, in);
      ASSERT_TRUE(ra.isOk()) << ra.status().toString();
      ASSERT_TRUE(rb.isOk()) << rb.status().toString();
      ASSERT_EQ((*ra)[0].count(), (*rb)[0].count());
      // The same sums in the same order, rounded once: equal bits.
      for (int64_t i = 0; i < (*ra)[0].count(); ++i) ASSERT_EQ((*ra)[0].doubleAt(i), (*rb)[0].doubleAt(i)) << i;
    }
}

TEST(AttentionReference, BshdFullyMaskedRows) {
  BshdCase c;
  c.dtype = DataType::kFLOAT;
  c.mask = {2, 3, 5, 7};
  for (bool nanToZero : {false, true}) {
    c.nanToZero = nanToZero;
    std::vector<HostTensor> in = bshdInputs(c, 4);
    fillMaskRow(in[3], 5, 7, 1, -INFINITY);  // query row 1 of every (batch, head)
    auto r = backends::runGraphOnHost(*bshdGraph(c, false), in);
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    // y [2, 5, 3, 4]: row 1 is y[b, 1, h, :] in every batch entry and head.
    for (int64_t i = 0; i < (*r)[0].count(); ++i) {
      double x = (*r)[0].doubleAt(i);
      if ((i / (3 * 4)) % 5 == 1) {
        if (nanToZero)
          EXPECT_EQ(x, 0.0) << i;
        else
          EXPECT_TRUE(std::isnan(x)) << i;
      } else {
        EXPECT_TRUE(std::isfinite(x)) << i;
      }
    }
  }
}

// Shape inference of `g` after `edit` changed its Attention node or inputs; the message.
std::string bshdInferError(BshdCase const& c, std::function<void(ir::Graph&, ir::Node&)> const& edit) {
  auto g = bshdGraph(c, false);
  ir::Node* n = g->findNode("attention");
  edit(*g, *n);
  Status st = ir::inferGraphInPlace(*g, nullptr);
  return st.isOk() ? std::string("ok") : st.message();
}

void setInputShape(ir::Graph& g, ir::Node& n, size_t i, std::vector<int64_t> const& s) {
  auto v = g.addInput("x" + std::to_string(i), n.inputs[i]->dtype, makeDims(s));
  ASSERT_TRUE(v.isOk());
  n.inputs[i] = *v;
}

TEST(AttentionReference, BshdShapeInference) {
  BshdCase c;
  c.dtype = DataType::kFLOAT;
  c.mask = {2, 1, 1, 7};
  auto has = [](std::string const& msg, char const* what) { EXPECT_NE(msg.find(what), std::string::npos) << msg; };
  has(bshdInferError(c, [](ir::Graph& g, ir::Node& n) { setInputShape(g, n, 0, {2, 4, 3, 8}); }), "ok");
  has(bshdInferError(c, [](ir::Graph& g, ir::Node& n) { setInputShape(g, n, 0, {2, 5, 24}); }), "needs rank 4");
  has(bshdInferError(c, [](ir::Graph& g, ir::Node& n) { setInputShape(g, n, 1, {1, 7, 3, 8}); }), "batch dim");
  has(bshdInferError(c, [](ir::Graph& g, ir::Node& n) { setInputShape(g, n, 2, {2, 7, 1, 4}); }), "head count");
  has(bshdInferError(c, [](ir::Graph& g, ir::Node& n) { setInputShape(g, n, 1, {2, 7, 3, 16}); }), "head dim");
  has(bshdInferError(c, [](ir::Graph& g, ir::Node& n) { setInputShape(g, n, 2, {2, 6, 3, 4}); }), "key count");
  has(bshdInferError(c,
                     [](ir::Graph& g, ir::Node& n) {
                       setInputShape(g, n, 3, {2, 3, 7, 7});
                     }),
      "does not broadcast to the scores [2,3,5,7]");
  has(bshdInferError(c, [](ir::Graph&, ir::Node& n) { n.attrs.setInt("k_transposed", 1); }), "untransposed");
  has(bshdInferError(c, [](ir::Graph&, ir::Node& n) { n.attrs.setInt("layout", 3); }), "layout is 3");
  // Unknown extents are checked when they are known.
  has(bshdInferError(c, [](ir::Graph& g, ir::Node& n) { setInputShape(g, n, 0, {-1, 5, 3, 8}); }), "ok");
}

// The kernel itself checks the shapes it is launched with (a plan's shapes reach it without inference when they
// are static), naming the layout; an unknown layout is refused when the kernel is made.
TEST(AttentionReference, BshdKernelRefusesShapesThatDoNotFit) {
  backends::Tactic const* tactic = backends::TacticRegistry::instance().find("attention_reference");
  ASSERT_NE(tactic, nullptr);
  ir::Node n;
  n.op = OpType::kAttention;
  n.name = "attention";
  n.attrs.setFloat("scale", 0.5);
  n.attrs.setInt("layout", 1);
  auto k = tactic->create(n);
  ASSERT_TRUE(k.isOk()) << k.status().toString();
  std::vector<float> buf(4096, 0.f);
  auto launch = [&](std::vector<int64_t> const& q, std::vector<int64_t> const& kk, std::vector<int64_t> const& v,
                    std::vector<int64_t> const& y) {
    backends::CpuStream stream;
    backends::LaunchContext ctx;
    ctx.stream = &stream;
    for (auto const* s : {&q, &kk, &v}) ctx.inputs.push_back({buf.data(), DataType::kFLOAT, makeDims(*s)});
    ctx.outputs.push_back({buf.data(), DataType::kFLOAT, makeDims(y)});
    return (*k)->enqueue(ctx);
  };
  EXPECT_TRUE(launch({2, 5, 3, 8}, {2, 7, 3, 8}, {2, 7, 3, 4}, {2, 5, 3, 4}).isOk());
  Status st = launch({2, 5, 3, 8}, {1, 7, 3, 8}, {2, 7, 3, 4}, {2, 5, 3, 4});  // k's batch differs
  EXPECT_NE(st.message().find("layout 1 (BSHD)"), std::string::npos) << st.toString();
  st = launch({2, 5, 3, 8}, {2, 7, 3, 8}, {2, 7, 3, 4}, {2, 3, 5, 4});  // y as layout 0 would have it
  EXPECT_NE(st.message().find("giving y [2,3,5,4]"), std::string::npos) << st.toString();
  st = launch({2, 5, 24}, {2, 7, 24}, {2, 7, 12}, {2, 5, 12});
  EXPECT_NE(st.message().find("rank 4"), std::string::npos) << st.toString();
  n.attrs.setInt("layout", 5);
  auto bad = tactic->create(n);
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("layout 5"), std::string::npos) << bad.status().toString();
}

// Layout 2 (SBHD): q [Sq, B, H, D], k [Skv, B, H, D], v [Skv, B, H, Dv] -> y [Sq, B, H, Dv]. Directly, or
// (`viaLayout0`) layout 0 between Transposes (1,2,0,3) to [B, H, S, D] and (2,0,1,3) back, as
// torch.nn.MultiheadAttention permutes them.
std::unique_ptr<ir::Graph> sbhdGraph(BshdCase const& c, bool viaLayout0) {
  auto g = std::make_unique<ir::Graph>();
  std::vector<ir::Value*> in{input(*g, "q", c.dtype, {c.sq, c.b, c.h, c.d}),
                             input(*g, "k", c.dtype, {c.skv, c.b, c.h, c.d}),
                             input(*g, "v", c.dtype, {c.skv, c.b, c.h, c.dv})};
  auto permute = [&](std::string const& name, ir::Value* x, std::vector<int64_t> const& perm) {
    ir::Node* n = g->addNode(OpType::kShuffle, name, {x});
    n->attrs.setInts("first_perm", perm);
    return n->output(0);
  };
  if (viaLayout0)
    for (size_t i = 0; i < 3; ++i) in[i] = permute("t" + std::to_string(i), in[i], {1, 2, 0, 3});
  if (!c.mask.empty()) in.push_back(input(*g, "m", c.dtype, c.mask));
  ir::Node* n = g->addNode(OpType::kAttention, "attention", in);
  n->attrs.setFloat("scale", 0.3);
  n->attrs.setInt("nan_to_zero", c.nanToZero ? 1 : 0);
  if (!viaLayout0) n->attrs.setInt("layout", 2);
  g->markOutput(viaLayout0 ? permute("ty", n->output(0), {2, 0, 1, 3}) : n->output(0));
  return g;
}

void expectSameBits(ir::Graph& a, ir::Graph& b, std::vector<HostTensor> const& ina,
                    std::vector<HostTensor> const& inb) {
  auto ra = backends::runGraphOnHost(a, ina);
  auto rb = backends::runGraphOnHost(b, inb);
  ASSERT_TRUE(ra.isOk()) << ra.status().toString();
  ASSERT_TRUE(rb.isOk()) << rb.status().toString();
  ASSERT_EQ(dimsToString((*ra)[0].shape()), dimsToString((*rb)[0].shape()));
  ASSERT_GT((*ra)[0].count(), 0);
  // The same sums in the same order, rounded once: equal bits (NaN where both are NaN).
  for (int64_t i = 0; i < (*ra)[0].count(); ++i) {
    double const x = (*ra)[0].doubleAt(i), y = (*rb)[0].doubleAt(i);
    if (std::isnan(x) && std::isnan(y)) continue;
    ASSERT_EQ(x, y) << i;
  }
}

std::vector<BshdCase> headMajorCases() {
  std::vector<BshdCase> cases;
  BshdCase c;
  cases.push_back(c);
  c.mask = {2, 1, 1, 7};
  cases.push_back(c);
  c.mask = {2, 3, 5, 7};  // a full mask, one row fully masked below
  c.nanToZero = true;
  cases.push_back(c);
  c.mask = {5, 7};
  c.b = 1;
  c.h = 1;
  cases.push_back(c);
  BshdCase odd;  // one query row, more keys, wider heads
  odd.b = 3;
  odd.sq = 1;
  odd.skv = 9;
  odd.h = 4;
  odd.d = 16;
  odd.dv = 16;
  odd.mask = {3, 1, 1, 9};
  cases.push_back(odd);
  return cases;
}

TEST(AttentionReference, SbhdLayoutMatchesLayout0BetweenTransposes) {
  for (BshdCase const& cc : headMajorCases())
    for (DataType t : {DataType::kFLOAT64, DataType::kFLOAT, DataType::kHALF}) {
      SCOPED_TRACE(testing::Message() << "b " << cc.b << " h " << cc.h << " mask " << cc.mask.size() << " type "
                                      << dataTypeName(t));
      BshdCase x = cc;
      x.dtype = t;
      auto a = sbhdGraph(x, true), b = sbhdGraph(x, false);
      ASSERT_TRUE(ir::inferGraphInPlace(*a, nullptr).isOk());
      Status st = ir::inferGraphInPlace(*b, nullptr);
      ASSERT_TRUE(st.isOk()) << st.toString();
      EXPECT_EQ(dimsToString(b->outputs()[0]->shape), dimsToString(makeDims({x.sq, x.b, x.h, x.dv})));
      std::vector<std::vector<int64_t>> shapes{{x.sq, x.b, x.h, x.d}, {x.skv, x.b, x.h, x.d}, {x.skv, x.b, x.h, x.dv}};
      if (!x.mask.empty()) shapes.push_back(x.mask);
      std::vector<HostTensor> in;
      uint64_t seed = 31;
      for (auto const& sh : shapes) {
        auto r = ir::makeRandomTensor(t, makeDims(sh), seed++);
        ASSERT_TRUE(r.isOk());
        in.push_back(*r);
      }
      if (x.mask.size() == 4) fillMaskRow(in[3], x.sq, x.skv, 1, -INFINITY);
      expectSameBits(*a, *b, in, in);
    }
}

// Packed q/k/v in layout `layout` (1 or 2): the Attention reading [B, S, 3, H, D] / [S, B, 3, H, D] against the
// one reading the three slices as separate tensors, copied out on the host.
std::unique_ptr<ir::Graph> headMajorGraph(BshdCase const& c, int64_t layout, bool packed) {
  auto g = std::make_unique<ir::Graph>();
  auto order = [&](int64_t s, std::vector<int64_t> rest) {
    std::vector<int64_t> r = layout == 2 ? std::vector<int64_t>{s, c.b} : std::vector<int64_t>{c.b, s};
    r.insert(r.end(), rest.begin(), rest.end());
    return r;
  };
  std::vector<ir::Value*> in;
  if (packed) {
    in = {input(*g, "qkv", c.dtype, order(c.sq, {3, c.h, c.d})), nullptr, nullptr};
  } else {
    in = {input(*g, "q", c.dtype, order(c.sq, {c.h, c.d})), input(*g, "k", c.dtype, order(c.sq, {c.h, c.d})),
          input(*g, "v", c.dtype, order(c.sq, {c.h, c.d}))};
  }
  if (!c.mask.empty()) in.push_back(input(*g, "m", c.dtype, c.mask));
  ir::Node* n = g->addNode(OpType::kAttention, "attention", in);
  n->attrs.setFloat("scale", 0.3);
  n->attrs.setInt("nan_to_zero", c.nanToZero ? 1 : 0);
  n->attrs.setInt("layout", layout);
  if (packed) n->attrs.setInt("packed_qkv", 1);
  g->markOutput(n->output(0));
  return g;
}

TEST(AttentionReference, PackedQkvMatchesSeparateOperands) {
  for (int64_t layout : {1, 2})
    for (BshdCase cc : headMajorCases())
      for (DataType t : {DataType::kFLOAT64, DataType::kHALF}) {
        cc.skv = cc.sq;  // one sequence: q, k and v come from one tensor
        cc.dv = cc.d;
        if (cc.mask.size() == 4) cc.mask[3] = cc.sq;
        if (cc.mask.size() == 2) cc.mask = {cc.sq, cc.sq};
        SCOPED_TRACE(testing::Message() << "layout " << layout << " b " << cc.b << " h " << cc.h << " mask "
                                        << cc.mask.size() << " type " << dataTypeName(t));
        BshdCase x = cc;
        x.dtype = t;
        auto packed = headMajorGraph(x, layout, true), separate = headMajorGraph(x, layout, false);
        Status st = ir::inferGraphInPlace(*packed, nullptr);
        ASSERT_TRUE(st.isOk()) << st.toString();
        ASSERT_TRUE(ir::inferGraphInPlace(*separate, nullptr).isOk());
        EXPECT_EQ(dimsToString(packed->outputs()[0]->shape), dimsToString(separate->outputs()[0]->shape));
        Dims const pd = packed->inputs()[0]->shape;
        auto p = ir::makeRandomTensor(t, pd, 5);
        ASSERT_TRUE(p.isOk());
        // Slot j of the "3" dim (dim 2) of the packed tensor, as its own tensor.
        int64_t const inner = x.h * x.d, outer = pd.d[0] * pd.d[1];
        std::vector<HostTensor> sep;
        for (int64_t j = 0; j < 3; ++j) {
          std::vector<double> vals;
          for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) vals.push_back(p->doubleAt((o * 3 + j) * inner + i));
          sep.push_back(HostTensor::fromVector(t, makeDims({pd.d[0], pd.d[1], x.h, x.d}), vals));
        }
        std::vector<HostTensor> pin{*p};
        if (!x.mask.empty()) {
          auto m = ir::makeRandomTensor(t, makeDims(x.mask), 9);
          ASSERT_TRUE(m.isOk());
          if (x.mask.size() == 4) fillMaskRow(*m, x.sq, x.skv, 1, -INFINITY);
          pin.push_back(*m);
          sep.push_back(*m);
        }
        expectSameBits(*packed, *separate, pin, sep);
      }
}

// Shape inference of layout 2 and of packed q/k/v: every malformed shape or attribute is named.
TEST(AttentionReference, SbhdAndPackedShapeInference) {
  BshdCase c;
  c.dtype = DataType::kFLOAT;
  c.mask = {2, 1, 1, 7};
  auto has = [](std::string const& msg, char const* what) { EXPECT_NE(msg.find(what), std::string::npos) << msg; };
  auto sbhdError = [&](std::function<void(ir::Graph&, ir::Node&)> const& edit) {
    auto g = sbhdGraph(c, false);
    edit(*g, *g->findNode("attention"));
    Status st = ir::inferGraphInPlace(*g, nullptr);
    return st.isOk() ? std::string("ok") : st.message();
  };
  has(sbhdError([](ir::Graph&, ir::Node&) {}), "ok");
  has(sbhdError([](ir::Graph& g, ir::Node& n) { setInputShape(g, n, 0, {5, 2, 24}); }), "needs rank 4 ([S, B, H, D])");
  has(sbhdError([](ir::Graph& g, ir::Node& n) { setInputShape(g, n, 1, {7, 1, 3, 8}); }), "batch dim (dim 1)");
  has(sbhdError([](ir::Graph& g, ir::Node& n) { setInputShape(g, n, 2, {6, 2, 3, 4}); }), "key count (dim 0)");
  has(sbhdError([](ir::Graph& g, ir::Node& n) { setInputShape(g, n, 2, {7, 2, 1, 4}); }), "head count");
  has(sbhdError([](ir::Graph&, ir::Node& n) { n.attrs.setInt("k_transposed", 1); }), "layout 2 (SBHD) takes k");
  has(sbhdError([](ir::Graph&, ir::Node& n) { n.attrs.setInt("layout", 3); }), "layout is 3");
  has(sbhdError([](ir::Graph&, ir::Node& n) { n.attrs.setInt("packed_qkv", 2); }), "packed_qkv is 2");
  has(sbhdError([](ir::Graph&, ir::Node& n) { n.attrs.setInt("packed_qkv", 1); }), "inputs 1 and 2 absent");
  auto packedError = [&](int64_t layout, std::function<void(ir::Graph&, ir::Node&)> const& edit) {
    BshdCase p = c;
    p.skv = p.sq;
    p.mask = {2, 1, 1, 5};
    auto g = headMajorGraph(p, layout, true);
    edit(*g, *g->findNode("attention"));
    Status st = ir::inferGraphInPlace(*g, nullptr);
    if (st.isOk()) return "ok " + dimsToString(g->outputs()[0]->shape);
    return st.message();
  };
  has(packedError(1, [](ir::Graph&, ir::Node&) {}), "ok [2,5,3,8]");
  has(packedError(2, [](ir::Graph&, ir::Node&) {}), "ok [5,2,3,8]");
  has(packedError(2,
                  [](ir::Graph& g, ir::Node& n) {
                    setInputShape(g, n, 0, {5, 2, 3, 24});
                  }),
      "layout 2 (SBHD, packed q/k/v): input 0 [5,2,3,24] needs rank 5 ([S, B, 3, H, D])");
  has(packedError(1,
                  [](ir::Graph& g, ir::Node& n) {
                    setInputShape(g, n, 0, {2, 5, 2, 3, 8});
                  }),
      "has 2 in dim 2, not 3");
  has(packedError(1,
                  [](ir::Graph& g, ir::Node& n) {
                    setInputShape(g, n, 0, {2, 6, 3, 3, 8});
                  }),
      "does not broadcast to the scores");
  has(packedError(1, [](ir::Graph& g, ir::Node& n) { n.inputs[1] = n.inputs[0]; }), "inputs 1 and 2 absent");
  has(packedError(1, [](ir::Graph&, ir::Node& n) { n.attrs.setInt("layout", 0); }), "needs layout 1 or 2, not 0");
  // A dynamic batch or sequence is checked when it is known.
  has(packedError(2, [](ir::Graph& g, ir::Node& n) { setInputShape(g, n, 0, {5, -1, 3, 3, 8}); }), "ok [5,-1,3,8]");
}

// The kernel checks the shapes it is launched with for layout 2 and packed q/k/v, naming the layout.
TEST(AttentionReference, SbhdAndPackedKernelsRefuseShapesThatDoNotFit) {
  backends::Tactic const* tactic = backends::TacticRegistry::instance().find("attention_reference");
  ASSERT_NE(tactic, nullptr);
  ir::Node n;
  n.op = OpType::kAttention;
  n.name = "attention";
  n.attrs.setInt("layout", 2);
  std::vector<float> buf(4096, 0.f);
  auto launch = [&](std::vector<std::vector<int64_t>> const& ins, std::vector<int64_t> const& y) {
    auto k = tactic->create(n);
    if (!k.isOk()) return k.status();
    backends::CpuStream stream;
    backends::LaunchContext ctx;
    ctx.stream = &stream;
    for (auto const& s : ins)
      ctx.inputs.push_back(s.empty() ? backends::TensorView{nullptr, DataType::kFLOAT, Dims{-1, {}}}
                                     : backends::TensorView{buf.data(), DataType::kFLOAT, makeDims(s)});
    ctx.outputs.push_back({buf.data(), DataType::kFLOAT, makeDims(y)});
    return (*k)->enqueue(ctx);
  };
  EXPECT_TRUE(launch({{5, 2, 3, 8}, {7, 2, 3, 8}, {7, 2, 3, 4}}, {5, 2, 3, 4}).isOk());
  Status st = launch({{5, 2, 3, 8}, {7, 2, 3, 8}, {7, 2, 3, 4}}, {2, 5, 3, 4});  // y as layout 1 would have it
  EXPECT_NE(st.message().find("layout 2 (SBHD): q [5,2,3,8]"), std::string::npos) << st.toString();
  EXPECT_NE(st.message().find("giving y [2,5,3,4]"), std::string::npos) << st.toString();
  n.attrs.setInt("packed_qkv", 1);
  EXPECT_TRUE(launch({{5, 2, 3, 3, 8}, {}, {}}, {5, 2, 3, 8}).isOk());
  EXPECT_TRUE(launch({{5, 2, 3, 3, 8}}, {5, 2, 3, 8}).isOk());
  st = launch({{5, 2, 4, 3, 8}, {}, {}}, {5, 2, 3, 8});
  EXPECT_NE(st.message().find("qkv [5,2,4,3,8] is not [S, B, 3, H, D]"), std::string::npos) << st.toString();
  st = launch({{5, 2, 24}, {}, {}}, {5, 2, 3, 8});
  EXPECT_NE(st.message().find("packed q/k/v of rank 5"), std::string::npos) << st.toString();
  n.attrs.setInt("layout", 0);
  st = launch({{5, 2, 3, 3, 8}}, {5, 2, 3, 8});
  EXPECT_NE(st.message().find("needs layout 1 or 2"), std::string::npos) << st.toString();
  n.attrs.setInt("layout", 1);
  n.attrs.setInt("packed_qkv", 3);
  st = launch({{5, 2, 3, 3, 8}}, {5, 2, 3, 8});
  EXPECT_NE(st.message().find("packed_qkv 3"), std::string::npos) << st.toString();
}

}  // namespace
}  // namespace kiln
