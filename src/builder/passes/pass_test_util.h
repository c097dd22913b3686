// Helpers of the pass tests: parse + infer IR text, run a pass, compare the printed result with the expected
// text, and compare the graph's outputs before and after on random inputs with the host interpreter.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "backends/backend.h"
#include "backends/reference/graph_interpreter.h"
#include "builder/passes/pass.h"
#include "ir/text.h"

namespace kiln::builder::testing {

inline ir::HostEvaluator const& evaluator() {
  static ir::HostEvaluator const e = backends::referenceEvaluator();
  return e;
}

/// Parses `text` and runs shape inference (a pass's precondition); null (with a test failure) on error.
inline std::unique_ptr<ir::Graph> parseInferred(std::string_view text) {
  auto g = ir::parseGraph(text);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  if (!g.isOk()) return nullptr;
  Status st = ir::inferGraphInPlace(**g, &evaluator());
  EXPECT_TRUE(st.isOk()) << st.toString();
  if (!st.isOk()) return nullptr;
  return std::move(g).value();
}

/// Random inputs for `g`: dynamic dims become `dynamicDim`.
inline std::vector<HostTensor> randomInputs(ir::Graph const& g, uint64_t seed, int64_t dynamicDim = 3) {
  std::vector<HostTensor> r;
  for (ir::Value const* v : g.inputs()) {
    Dims s = v->shape;
    for (int32_t i = 0; i < s.nbDims; ++i)
      if (s.d[i] < 0) s.d[i] = dynamicDim;
    auto t = ir::makeRandomTensor(v->dtype, s, seed++);
    EXPECT_TRUE(t.isOk());
    r.push_back(t.isOk() ? std::move(t).value() : HostTensor());
  }
  return r;
}

/// ||a - b|| / ||b|| (0 when both are zero; exact equality required for non-float types).
inline double relativeError(HostTensor const& a, HostTensor const& b) {
  if (a.dtype() != b.dtype() || !dimsEqual(a.shape(), b.shape())) return INFINITY;
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.count(); ++i) {
    double x = a.doubleAt(i), y = b.doubleAt(i);
    num += (x - y) * (x - y);
    den += y * y;
  }
  if (num == 0) return 0;
  return den == 0 ? INFINITY : std::sqrt(num / den);
}

/// Runs both graphs on the same random inputs (several dynamic sizes) and expects outputs within `tolerance`.
inline void expectSameOutputs(ir::Graph const& before, ir::Graph const& after, double tolerance) {
  ASSERT_EQ(before.inputs().size(), after.inputs().size());
  ASSERT_EQ(before.outputs().size(), after.outputs().size());
  for (size_t i = 0; i < before.outputs().size(); ++i) EXPECT_EQ(before.outputs()[i]->name, after.outputs()[i]->name);
  for (int64_t dyn : {1, 4}) {
    std::vector<HostTensor> in = randomInputs(before, 100 + static_cast<uint64_t>(dyn), dyn);
    auto ra = backends::runGraphOnHost(before, in);
    auto rb = backends::runGraphOnHost(after, in);
    ASSERT_TRUE(ra.isOk()) << ra.status().toString();
    ASSERT_TRUE(rb.isOk()) << rb.status().toString();
    ASSERT_EQ(ra->size(), rb->size());
    for (size_t i = 0; i < ra->size(); ++i) {
      EXPECT_GT((*ra)[i].count(), 0) << "output " << i << " is empty: the comparison would prove nothing";
      EXPECT_LE(relativeError((*rb)[i], (*ra)[i]), tolerance) << "output " << before.outputs()[i]->name;
    }
  }
}

/// The number of nodes of `g` with op `op`.
inline int countOps(ir::Graph const& g, ir::OpType op) {
  int c = 0;
  for (auto const& n : g.nodes()) c += n->op == op;
  return c;
}

/// Runs `pass` on `g` and returns whether it changed something (failing the test on an error).
inline bool runPass(Pass& pass, ir::Graph& g, PassContext const* ctxIn = nullptr) {
  PassContext ctx;
  if (ctxIn) ctx = *ctxIn;
  if (!ctx.evaluator) ctx.evaluator = &evaluator();
  auto r = pass.run(g, ctx);
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  return r.isOk() && *r;
}

/// The graph after `pass`: expects the printed result to be `expected`, the result to stay valid (inference
/// succeeds and changes no printed shape) and, when `tolerance` >= 0, the same outputs as before on random inputs.
inline std::unique_ptr<ir::Graph> expectRewrite(Pass& pass, std::string_view in, std::string_view expected,
                                                double tolerance = 1e-6) {
  auto g = parseInferred(in);
  if (!g) return nullptr;
  auto before = g->clone();
  EXPECT_TRUE(runPass(pass, *g)) << pass.name() << " did not fire";
  std::string printed = ir::printGraph(*g);
  EXPECT_EQ(printed, expected);
  Status st = ir::inferGraphInPlace(*g, &evaluator());
  EXPECT_TRUE(st.isOk()) << st.toString();
  EXPECT_EQ(ir::printGraph(*g), printed) << "shape inference disagrees with the shapes the pass left";
  if (tolerance >= 0) expectSameOutputs(*before, *g, tolerance);
  return g;
}

/// Expects `pass` to leave the graph exactly as it was.
inline void expectNoRewrite(Pass& pass, std::string_view in) {
  auto g = parseInferred(in);
  if (!g) return;
  std::string before = ir::printGraph(*g);
  EXPECT_FALSE(runPass(pass, *g)) << pass.name() << " fired on\n" << in;
  EXPECT_EQ(ir::printGraph(*g), before);
}

}  // namespace kiln::builder::testing
