// Tests of ParametricReLU: shape inference and its errors, and the reference kernel against a naive
// computation with per-channel, scalar and full-shape slopes in every float type.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/backend.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"
#include "backends/reference/spatial_test_util.h"

namespace kiln {
namespace {

using ir::OpType;

using namespace spatialtest;  // NOLINT: test helpers

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
