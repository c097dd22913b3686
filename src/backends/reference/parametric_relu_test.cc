// Tests of ParametricReLU: shape inference and its errors, and the reference kernel against a naive
// computation with per-channel, scalar and full-shape slopes in every float type.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/backend.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using ir::OpType;

// Values k/16 with |k| <= 32: exact in float16 and bfloat16, so only the output is rounded.
[[maybe_unused]] std::vector<double> randomValues(int64_t n, uint32_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<double>(static_cast<int32_t>((s >> 16) % 65) - 32) / 16.0;
  }
  return v;
}

ir::Value* constant(ir::Graph& g, std::string const& name, DataType dt, std::vector<int64_t> const& shape,
                    std::vector<double> const& vals) {
  return g.addConstant(name, HostTensor::fromVector(dt, makeDims(shape), vals))->output(0);
}

// Infers the graph, then runs `n` (whose inputs are all constants) with the reference backend.
Result<HostTensor> run(ir::Graph& g, ir::Node* n) {
  KILN_RETURN_IF_ERROR(ir::inferGraphInPlace(g, nullptr));
  std::vector<HostTensor const*> in;
  for (ir::Value* v : n->inputs) in.push_back(v ? &*v->producer->constant : nullptr);
  KILN_ASSIGN_OR_RETURN(HostTensor out, HostTensor::allocate(n->output(0)->dtype, n->output(0)->shape, "test"));
  std::vector<HostTensor> outs{out};
  KILN_RETURN_IF_ERROR(backends::evaluateOnHost(*n, in, outs));
  return outs[0];
}

[[maybe_unused]] double tolerance(DataType dt) {
  return dt == DataType::kFLOAT64 ? 1e-12 : dt == DataType::kFLOAT ? 1e-5 : (dt == DataType::kHALF ? 2e-3 : 1e-2);
}

[[maybe_unused]] void expectClose(HostTensor const& out, std::vector<double> const& ref, DataType dt) {
  ASSERT_EQ(out.count(), static_cast<int64_t>(ref.size()));
  for (size_t i = 0; i < ref.size(); ++i)
    ASSERT_NEAR(out.doubleAt(static_cast<int64_t>(i)), ref[i], tolerance(dt) * std::max(1.0, std::fabs(ref[i])))
        << "at " << i;
}

[[maybe_unused]] std::vector<double> values(HostTensor const& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.count(); ++i) v.push_back(t.doubleAt(i));
  return v;
}

DataType const kFloatTypes[] = {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kFLOAT64};

TEST(ParametricReLUReference, BroadcastSlopesEveryType) {
  struct Case {
    std::vector<int64_t> x, s;
  };
  std::vector<Case> cases = {{{2, 3, 2, 2}, {1, 3, 1, 1}}, {{2, 3, 2, 2}, {1}}, {{2, 3}, {2, 3}},
                             {{1, 5, 3}, {5, 1}},          {{4}, {4}},          {{2, 0, 3}, {1, 1, 3}}};
  for (DataType dt : kFloatTypes) {
    for (auto const& c : cases) {
      int64_t nx = 1, ns = 1;
      for (int64_t d : c.x) nx *= d;
      for (int64_t d : c.s) ns *= d;
      std::vector<double> xv = randomValues(nx, 5), sv = randomValues(ns, 9);
      ir::Graph g;
      ir::Node* n =
          g.addNode(OpType::kParametricReLU, "prelu", {constant(g, "x", dt, c.x, xv), constant(g, "s", dt, c.s, sv)});
      auto out = run(g, n);
      ASSERT_TRUE(out.isOk()) << out.status().toString();
      EXPECT_EQ(dimsToString(out->shape()), dimsToString(makeDims(c.x)));
      // Naive: right-aligned broadcast index of the slope.
      std::vector<double> ref;
      for (int64_t i = 0; i < nx; ++i) {
        int64_t rem = i, off = 0, mul = 1;
        for (size_t a = c.x.size(); a-- > 0;) {
          int64_t idx = rem % c.x[a];
          rem /= c.x[a];
          int64_t sa = static_cast<int64_t>(a) - static_cast<int64_t>(c.x.size() - c.s.size());
          if (sa >= 0) {
            off += (c.s[sa] == 1 ? 0 : idx) * mul;
            mul *= c.s[sa];
          }
        }
        ref.push_back(xv[i] >= 0 ? xv[i] : xv[i] * sv[off]);
      }
      expectClose(*out, ref, dt);
    }
  }
}

TEST(ParametricReLUReference, HandComputed) {
  ir::Graph g;
  ir::Node* n = g.addNode(OpType::kParametricReLU, "prelu",
                          {constant(g, "x", DataType::kFLOAT, {1, 2, 2}, {-1, 2, -3, 0}),
                           constant(g, "s", DataType::kFLOAT, {1, 2, 1}, {0.5, -2})});
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk());
  EXPECT_EQ(values(*out), (std::vector<double>{-0.5, 2, 6, 0}));
}

TEST(ParametricReLUInfer, Errors) {
  ir::Graph g;
  g.addNode(OpType::kParametricReLU, "p",
            {constant(g, "x", DataType::kFLOAT, {2, 3}, std::vector<double>(6, 0)),
             constant(g, "s", DataType::kFLOAT, {2}, {1, 1})});
  EXPECT_FALSE(ir::inferGraphInPlace(g, nullptr));
  ir::Graph g2;
  g2.addNode(OpType::kParametricReLU, "p",
             {constant(g2, "x", DataType::kFLOAT, {3}, std::vector<double>(3, 0)),
              constant(g2, "s", DataType::kFLOAT, {1, 3}, {1, 1, 1})});
  EXPECT_FALSE(ir::inferGraphInPlace(g2, nullptr));
  ir::Graph g3;
  g3.addNode(OpType::kParametricReLU, "p",
             {constant(g3, "x", DataType::kFLOAT, {3}, std::vector<double>(3, 0)),
              constant(g3, "s", DataType::kHALF, {1}, {1})});
  EXPECT_FALSE(ir::inferGraphInPlace(g3, nullptr));
  ir::Graph g4;  // integer inputs: inferred, but no reference kernel supports them
  ir::Node* n4 =
      g4.addNode(OpType::kParametricReLU, "p",
                 {constant(g4, "x", DataType::kINT32, {3}, {1, -1, 2}), constant(g4, "s", DataType::kINT32, {1}, {2})});
  EXPECT_FALSE(run(g4, n4).isOk());
}

}  // namespace
}  // namespace kiln
