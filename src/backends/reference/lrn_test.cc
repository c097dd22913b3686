// Tests of LRN: parameter checks of shape inference, a hand-computed case, and the reference kernel against a
// naive cross-channel computation for several windows, ranks and every float type.
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

ir::Node* addLrn(ir::Graph& g, ir::Value* x, int64_t window, double alpha, double beta, double k) {
  ir::Node* n = g.addNode(OpType::kLRN, "lrn", {x});
  n->attrs.setInt("window", window);
  n->attrs.setFloat("alpha", alpha);
  n->attrs.setFloat("beta", beta);
  n->attrs.setFloat("k", k);
  return n;
}

TEST(LRNReference, HandComputed) {
  // Channels 1, 2, 3 at one position; window 3, alpha 3 (alpha / window = 1), beta 1, k 1.
  ir::Graph g;
  ir::Node* n = addLrn(g, constant(g, "x", DataType::kFLOAT, {1, 3, 1}, {1, 2, 3}), 3, 3.0, 1.0, 1.0);
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  expectClose(*out, {1.0 / 6.0, 2.0 / 15.0, 3.0 / 14.0}, DataType::kFLOAT);
}

TEST(LRNReference, MatchesNaive) {
  struct Case {
    std::vector<int64_t> shape;
    int64_t window;
    double alpha, beta, k;
  };
  std::vector<Case> cases = {{{2, 5, 3, 2}, 3, 1e-1, 0.75, 2.0},
                             {{1, 4, 3}, 5, 0.5, 0.5, 1.0},
                             {{1, 1, 2, 2}, 1, 2.0, 1.5, 1.0},
                             {{1, 7, 1, 1, 2}, 15, 1.0, 2.0, 0.5},
                             {{0, 3, 2}, 3, 1.0, 1.0, 1.0}};
  for (DataType dt : kFloatTypes) {
    for (auto const& c : cases) {
      int64_t count = 1;
      for (int64_t d : c.shape) count *= d;
      std::vector<double> xv = randomValues(count, 11);
      ir::Graph g;
      ir::Node* n = addLrn(g, constant(g, "x", dt, c.shape, xv), c.window, c.alpha, c.beta, c.k);
      auto out = run(g, n);
      ASSERT_TRUE(out.isOk()) << out.status().toString();
      int64_t ch = c.shape[1], inner = count == 0 ? 0 : count / (c.shape[0] * ch);
      std::vector<double> ref(xv.size());
      for (int64_t i = 0; i < count; ++i) {
        int64_t s = i % inner, cc = (i / inner) % ch, b = i / (inner * ch);
        double sum = 0;
        for (int64_t j = cc - c.window / 2; j <= cc + c.window / 2; ++j)
          if (j >= 0 && j < ch) sum += xv[(b * ch + j) * inner + s] * xv[(b * ch + j) * inner + s];
        ref[i] = xv[i] / std::pow(c.k + c.alpha * sum / static_cast<double>(c.window), c.beta);
      }
      expectClose(*out, ref, dt);
    }
  }
}

TEST(LRNInfer, Errors) {
  auto bad = [](std::vector<int64_t> shape, int64_t window, double alpha, double beta, double k) {
    ir::Graph g;
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    addLrn(g, constant(g, "x", DataType::kFLOAT, shape, std::vector<double>(count, 1)), window, alpha, beta, k);
    return !ir::inferGraphInPlace(g, nullptr);
  };
  EXPECT_FALSE(bad({1, 3, 2}, 3, 1, 1, 1));
  EXPECT_TRUE(bad({1, 3}, 3, 1, 1, 1));         // rank 2
  EXPECT_TRUE(bad({1, 3, 2}, 4, 1, 1, 1));      // even window
  EXPECT_TRUE(bad({1, 3, 2}, 17, 1, 1, 1));     // window too large
  EXPECT_TRUE(bad({1, 3, 2}, 3, 1, 0.001, 1));  // beta too small
  EXPECT_TRUE(bad({1, 3, 2}, 3, 1, 1, 0));      // k too small
  EXPECT_TRUE(bad({1, 3, 2}, 3, 1e21, 1, 1));   // alpha too large
}

}  // namespace
}  // namespace kiln
