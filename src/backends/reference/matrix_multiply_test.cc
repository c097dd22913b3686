// Tests of MatrixMultiply: shape inference (transposes, vectors, batch broadcasting) and its errors, and the
// reference kernel with bias and activation against a naive product written here, in float32/float16/bfloat16.
#include <gtest/gtest.h>

#include <algorithm>
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

int64_t count(std::vector<int64_t> const& s) {
  int64_t n = 1;
  for (auto v : s)
    n *= v;
  return n;
}

// Naive: a is [Ba..., M, K] (or [Ba..., K, M] when ta, [Ba..., K] when va), likewise b; batch dims right-aligned
// broadcast to `batch`. Returns y in row-major [batch..., (M), (N)] plus bias[(i*N + j) % bias.size()] style
// handled by the caller.
std::vector<double> naiveMatMul(std::vector<int64_t> const& as, std::vector<double> const& a, int opA,
                                std::vector<int64_t> const& bs, std::vector<double> const& b, int opB,
                                std::vector<int64_t> const& batch) {
  int ma = opA == 2 ? 1 : 2, mb = opB == 2 ? 1 : 2;
  size_t ra = as.size(), rb = bs.size();
  int64_t m = opA == 2 ? 1 : (opA == 1 ? as[ra - 1] : as[ra - 2]);
  int64_t k = opA == 2 ? as[ra - 1] : (opA == 1 ? as[ra - 2] : as[ra - 1]);
  int64_t n = opB == 2 ? 1 : (opB == 1 ? bs[rb - 2] : bs[rb - 1]);
  std::vector<int64_t> aBatch(as.begin(), as.end() - ma), bBatch(bs.begin(), bs.end() - mb);
  std::vector<double> y;
  int64_t nb = count(batch);
  for (int64_t bi = 0; bi < nb; ++bi) {
    // Batch coordinates, then each operand's batch index with broadcasting.
    std::vector<int64_t> coord(batch.size());
    int64_t rem = bi;
    for (size_t d = batch.size(); d-- > 0;) {
      coord[d] = rem % batch[d];
      rem /= batch[d];
    }
    auto index = [&](std::vector<int64_t> const& own) {
      int64_t idx = 0;
      for (size_t d = 0; d < own.size(); ++d) {
        int64_t c = coord[batch.size() - own.size() + d];
        idx = idx * own[d] + (own[d] == 1 ? 0 : c);
      }
      return idx;
    };
    int64_t ia = index(aBatch) * m * k, ib = index(bBatch) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t t = 0; t < k; ++t) {
          double va = opA == 1 ? a[ia + t * m + i] : a[ia + i * k + t];
          double vb = opB == 1 ? b[ib + j * k + t] : b[ib + t * n + j];
          s += va * vb;
        }
        y.push_back(s);
      }
  }
  return y;
}

struct MmCase {
  std::vector<int64_t> as;
  int opA;
  std::vector<int64_t> bs;
  int opB;
  std::vector<int64_t> batch, want;
};

class MatMulTypes : public ::testing::TestWithParam<DataType> {};

TEST_P(MatMulTypes, AgainstNaive) {
  DataType dt = GetParam();
  std::vector<MmCase> cases = {
      {{2, 3, 4}, 0, {2, 4, 5}, 0, {2}, {2, 3, 5}},
      {{2, 4, 3}, 1, {2, 5, 4}, 1, {2}, {2, 3, 5}},
      {{3, 4}, 0, {5, 4}, 1, {}, {3, 5}},
      {{2, 1, 3, 4}, 0, {5, 4, 2}, 0, {2, 5}, {2, 5, 3, 2}},  // batch broadcast, different ranks
      {{1, 4, 3}, 1, {4, 4, 3}, 0, {4}, {4, 3, 3}},
      {{3, 4}, 2, {4, 5}, 0, {3}, {3, 5}},              // batch of row vectors times a matrix
      {{2, 3, 4}, 0, {4}, 2, {2}, {2, 3}},              // matrix times vector
      {{4}, 2, {4}, 2, {}, {}},                         // dot product: rank 0 output
      {{2, 4}, 2, {1, 4}, 2, {2}, {2}},                 // batched dot with broadcast
      {{1, 1}, 0, {1, 7}, 0, {}, {1, 7}},               // K = 1
      {{2, 3}, 2, {6, 1, 3, 4}, 0, {6, 2}, {6, 2, 4}},  // vector batch broadcast against matrix batch
  };
  for (auto const& c : cases) {
    auto av = randomValues(count(c.as), 11), bv = randomValues(count(c.bs), 12);
    ir::Graph g;
    ir::Node* n =
        g.addNode(OpType::kMatrixMultiply, "mm", {constant(g, "a", dt, c.as, av), constant(g, "b", dt, c.bs, bv)});
    n->attrs.setInt("op_a", c.opA);
    n->attrs.setInt("op_b", c.opB);
    auto out = run(g, n);
    ASSERT_TRUE(out.isOk()) << out.status().toString();
    EXPECT_EQ(dimsToString(out->shape()), dimsToString(makeDims(c.want)));
    expectClose(*out, naiveMatMul(c.as, av, c.opA, c.bs, bv, c.opB, c.batch), dt);
  }
}

TEST_P(MatMulTypes, BiasAndActivation) {
  DataType dt = GetParam();
  auto av = randomValues(2 * 3 * 4, 1), bv = randomValues(4 * 5, 2), biasv = randomValues(3, 3);
  ir::Graph g;
  ir::Value* bias = constant(g, "bias", dt, {3, 1}, biasv);  // broadcast along N and the batch
  ir::Node* n = g.addNode(OpType::kMatrixMultiply, "mm",
                          {constant(g, "a", dt, {2, 3, 4}, av), constant(g, "b", dt, {4, 5}, bv), bias});
  n->attrs.setInt("activation", static_cast<int64_t>(ActivationType::kSIGMOID));
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  auto ref = naiveMatMul({2, 3, 4}, av, 0, {4, 5}, bv, 0, {2});
  for (size_t i = 0; i < ref.size(); ++i)
    ref[i] = 1.0 / (1.0 + std::exp(-(ref[i] + biasv[(i / 5) % 3])));
  expectClose(*out, ref, dt);
}

// y = act(a b + bias + residual): the residual is added with the bias, before the activation.
TEST_P(MatMulTypes, ResidualThenActivation) {
  DataType dt = GetParam();
  auto av = randomValues(2 * 3 * 4, 4), bv = randomValues(4 * 5, 5), biasv = randomValues(5, 6),
       rv = randomValues(2 * 3 * 5, 7);
  for (bool withBias : {false, true}) {
    ir::Graph g;
    ir::Value* bias = withBias ? constant(g, "bias", dt, {5}, biasv) : nullptr;
    ir::Node* n = g.addNode(OpType::kMatrixMultiply, "mm",
                            {constant(g, "a", dt, {2, 3, 4}, av), constant(g, "b", dt, {4, 5}, bv), bias,
                             constant(g, "r", dt, {2, 3, 5}, rv)});
    n->attrs.setInt("activation", static_cast<int64_t>(ActivationType::kRELU));
    auto out = run(g, n);
    ASSERT_TRUE(out.isOk()) << out.status().toString();
    auto ref = naiveMatMul({2, 3, 4}, av, 0, {4, 5}, bv, 0, {2});
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = std::max(0.0, ref[i] + (withBias ? biasv[i % 5] : 0.0) + rv[i]);
    expectClose(*out, ref, dt);
  }
}

INSTANTIATE_TEST_SUITE_P(AllFloat, MatMulTypes, ::testing::Values(DataType::kFLOAT, DataType::kHALF, DataType::kBF16),
                         [](auto const& pi) { return std::string(dataTypeShortName(pi.param)); });

TEST(MatrixMultiply, HandComputedWithRowBiasAndRelu) {
  ir::Graph g;
  ir::Value* a = constant(g, "a", DataType::kFLOAT, {2, 2}, {1, 2, 3, 4});
  ir::Value* b = constant(g, "b", DataType::kFLOAT, {2, 2}, {5, 6, 7, 8});
  ir::Value* bias = constant(g, "bias", DataType::kFLOAT, {2}, {-30, 0});
  ir::Node* n = g.addNode(OpType::kMatrixMultiply, "mm", {a, b, bias});
  n->attrs.setInt("activation", static_cast<int64_t>(ActivationType::kRELU));
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  expectClose(*out, {0, 22, 13, 50}, DataType::kFLOAT);  // [[19, 22], [43, 50]] + [-30, 0], relu
}

TEST(MatrixMultiply, ZeroSizedAndUnknownDims) {
  ir::Graph g;
  auto a = g.addInput("a", DataType::kFLOAT, makeDims({-1, 3, 4}));
  ASSERT_TRUE(a.isOk());
  ir::Node* n =
      g.addNode(OpType::kMatrixMultiply, "mm", {*a, constant(g, "b", DataType::kFLOAT, {4, 6}, randomValues(24, 1))});
  ASSERT_TRUE(ir::inferGraphInPlace(g, nullptr).isOk());
  EXPECT_EQ(dimsToString(n->output(0)->shape), "[-1,3,6]");

  ir::Graph g2;
  ir::Node* z = g2.addNode(OpType::kMatrixMultiply, "mm",
                           {constant(g2, "a", DataType::kFLOAT, {0, 3}, {}),
                            constant(g2, "b", DataType::kFLOAT, {3, 2}, randomValues(6, 1))});
  auto out = run(g2, z);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  EXPECT_EQ(dimsToString(out->shape()), "[0,2]");
  ir::Graph g3;  // K = 0: all zeros
  ir::Node* k0 =
      g3.addNode(OpType::kMatrixMultiply, "mm",
                 {constant(g3, "a", DataType::kFLOAT, {2, 0}, {}), constant(g3, "b", DataType::kFLOAT, {0, 2}, {})});
  auto out3 = run(g3, k0);
  ASSERT_TRUE(out3.isOk()) << out3.status().toString();
  expectClose(*out3, {0, 0, 0, 0}, DataType::kFLOAT);
}

Status inferMm(std::vector<int64_t> const& as, int opA, std::vector<int64_t> const& bs, int opB,
               std::vector<int64_t> const* biasShape = nullptr, int64_t act = -1) {
  ir::Graph g;
  auto a = g.addInput("a", DataType::kFLOAT, makeDims(as));
  auto b = g.addInput("b", DataType::kFLOAT, makeDims(bs));
  if (!a || !b)
    return invalidArgument("bad test input");
  ir::Value* bias = nullptr;
  if (biasShape) {
    auto bi = g.addInput("bias", DataType::kFLOAT, makeDims(*biasShape));
    if (!bi)
      return bi.status();
    bias = *bi;
  }
  ir::Node* n = g.addNode(OpType::kMatrixMultiply, "mm", {*a, *b, bias});
  n->attrs.setInt("op_a", opA);
  n->attrs.setInt("op_b", opB);
  n->attrs.setInt("activation", act);
  return ir::inferGraphInPlace(g, nullptr);
}

TEST(MatrixMultiply, InferErrors) {
  EXPECT_TRUE(inferMm({3, 4}, 0, {4, 5}, 0).isOk());
  EXPECT_FALSE(inferMm({3, 4}, 0, {5, 4}, 0).isOk());        // inner dims differ
  EXPECT_FALSE(inferMm({3, 4}, 1, {4, 5}, 0).isOk());        // transposed a gives K = 3
  EXPECT_FALSE(inferMm({4}, 0, {4, 5}, 0).isOk());           // rank 1 is not a matrix
  EXPECT_FALSE(inferMm({3, 4}, 0, {}, 2).isOk());            // rank 0 is not a vector
  EXPECT_FALSE(inferMm({2, 3, 4}, 0, {3, 4, 5}, 0).isOk());  // batch dims 2 vs 3
  EXPECT_FALSE(inferMm({3, 4}, 3, {4, 5}, 0).isOk());        // unknown op
  EXPECT_FALSE(inferMm({3, 4}, 0, {4, 5}, 0, nullptr, 42).isOk());
  std::vector<int64_t> badBias{4}, goodBias{3, 1}, longBias{1, 1, 3, 5};
  EXPECT_FALSE(inferMm({3, 4}, 0, {4, 5}, 0, &badBias).isOk());
  EXPECT_TRUE(inferMm({3, 4}, 0, {4, 5}, 0, &goodBias).isOk());
  EXPECT_FALSE(inferMm({3, 4}, 0, {4, 5}, 0, &longBias).isOk());
  EXPECT_TRUE(inferMm({-1, 4}, 0, {-1, 5}, 0).isOk());
}

// The residual must have y's shape and type; unknown dims pass.
TEST(MatrixMultiply, InferResidual) {
  auto infer = [](std::vector<int64_t> const& rs, DataType rt) {
    ir::Graph g;
    auto a = g.addInput("a", DataType::kFLOAT, makeDims({2, 3, 4}));
    auto b = g.addInput("b", DataType::kFLOAT, makeDims({4, 5}));
    auto r = g.addInput("r", rt, makeDims(rs));
    if (!a || !b || !r) return invalidArgument("bad test input");
    g.addNode(OpType::kMatrixMultiply, "mm", {*a, *b, nullptr, *r});
    return ir::inferGraphInPlace(g, nullptr);
  };
  EXPECT_TRUE(infer({2, 3, 5}, DataType::kFLOAT).isOk());
  EXPECT_TRUE(infer({-1, 3, 5}, DataType::kFLOAT).isOk());
  Status wrongShape = infer({3, 5}, DataType::kFLOAT);  // broadcasting is not a residual
  EXPECT_FALSE(wrongShape.isOk());
  EXPECT_NE(wrongShape.toString().find("residual [3,5] must have the output's shape"), std::string::npos)
      << wrongShape.toString();
  EXPECT_FALSE(infer({2, 3, 4}, DataType::kFLOAT).isOk());
  EXPECT_FALSE(infer({2, 3, 5}, DataType::kHALF).isOk());
}

}  // namespace
}  // namespace kiln
