// Tests of RaggedSoftMax: shape inference and its errors, hand-computed rows (bounds 0, partial and full),
// a naive comparison in every float type, and bad bounds at run time.
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

ir::Value* bounds(ir::Graph& g, std::vector<int64_t> const& shape, std::vector<int32_t> const& b) {
  return g.addConstant("bounds", HostTensor::fromVector(DataType::kINT32, makeDims(shape), b))->output(0);
}

TEST(RaggedSoftMaxReference, HandComputed) {
  ir::Graph g;
  ir::Node* n = g.addNode(
      OpType::kRaggedSoftMax, "rs",
      {constant(g, "x", DataType::kFLOAT, {1, 3, 3}, {0, 0, 5, 1, 2, 3, 7, 8, 9}), bounds(g, {1, 3, 1}, {2, 3, 0})});
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  double e = std::exp(1.0), s = 1 + e + e * e;
  expectClose(*out, {0.5, 0.5, 0, 1 / s, e / s, e * e / s, 0, 0, 0}, DataType::kFLOAT);
}

TEST(RaggedSoftMaxReference, MatchesNaiveEveryType) {
  for (DataType dt : kFloatTypes) {
    for (int32_t rank : {2, 3}) {
      int64_t z = 4, s = 5;
      std::vector<double> xv = randomValues(z * s, 17);
      std::vector<int32_t> bv{5, 1, 3, 0};
      std::vector<int64_t> xs = rank == 3 ? std::vector<int64_t>{1, z, s} : std::vector<int64_t>{z, s};
      std::vector<int64_t> bs = rank == 3 ? std::vector<int64_t>{1, z, 1} : std::vector<int64_t>{z, 1};
      ir::Graph g;
      ir::Node* n = g.addNode(OpType::kRaggedSoftMax, "rs", {constant(g, "x", dt, xs, xv), bounds(g, bs, bv)});
      auto out = run(g, n);
      ASSERT_TRUE(out.isOk()) << out.status().toString();
      std::vector<double> ref;
      for (int64_t r = 0; r < z; ++r) {
        double sum = 0;
        for (int64_t i = 0; i < bv[r]; ++i) sum += std::exp(xv[r * s + i]);
        for (int64_t i = 0; i < s; ++i) ref.push_back(i < bv[r] ? std::exp(xv[r * s + i]) / sum : 0.0);
      }
      expectClose(*out, ref, dt);
    }
  }
}

TEST(RaggedSoftMaxReference, LargeValuesAreStable) {
  ir::Graph g;
  ir::Node* n =
      g.addNode(OpType::kRaggedSoftMax, "rs",
                {constant(g, "x", DataType::kFLOAT, {1, 1, 3}, {1000, 1000, -1000}), bounds(g, {1, 1, 1}, {2})});
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk());
  expectClose(*out, {0.5, 0.5, 0}, DataType::kFLOAT);
}

TEST(RaggedSoftMaxErrors, ShapesTypesAndBounds) {
  ir::Graph g;
  g.addNode(
      OpType::kRaggedSoftMax, "rs",
      {constant(g, "x", DataType::kFLOAT, {1, 2, 3}, std::vector<double>(6, 0)), bounds(g, {1, 3, 1}, {1, 1, 1})});
  EXPECT_FALSE(ir::inferGraphInPlace(g, nullptr));
  ir::Graph g2;
  g2.addNode(OpType::kRaggedSoftMax, "rs",
             {constant(g2, "x", DataType::kFLOAT, {1, 2, 3}, std::vector<double>(6, 0)),
              constant(g2, "b", DataType::kINT64, {1, 2, 1}, {1, 1})});
  EXPECT_FALSE(ir::inferGraphInPlace(g2, nullptr));
  ir::Graph g3;
  g3.addNode(OpType::kRaggedSoftMax, "rs",
             {constant(g3, "x", DataType::kFLOAT, {6}, std::vector<double>(6, 0)), bounds(g3, {1}, {1})});
  EXPECT_FALSE(ir::inferGraphInPlace(g3, nullptr));
  for (int32_t b : {-1, 4}) {
    ir::Graph g4;
    ir::Node* n = g4.addNode(OpType::kRaggedSoftMax, "rs",
                             {constant(g4, "x", DataType::kFLOAT, {1, 1, 3}, {1, 2, 3}), bounds(g4, {1, 1, 1}, {b})});
    auto out = run(g4, n);
    EXPECT_FALSE(out.isOk()) << b;
  }
}

}  // namespace
}  // namespace kiln
