// Tests of RaggedSoftMax: shape inference and its errors, hand-computed rows (bounds 0, partial and full),
// a naive comparison in every float type, and bad bounds at run time.
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
