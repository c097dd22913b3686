// Tests of LRN: parameter checks of shape inference, a hand-computed case, and the reference kernel against a
// naive cross-channel computation for several windows, ranks and every float type.
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
