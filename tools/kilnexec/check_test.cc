// Tests of --check's metrics against values worked out by hand, and of --check-layers' first divergence.
#include "check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace kilnexec {
namespace {

Tensor floats(std::string name, std::vector<int64_t> dims, std::vector<float> const& v) {
  Tensor t{std::move(name), kiln::DataType::kFLOAT, std::move(dims), {}};
  t.bytes.resize(v.size() * 4);
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

TEST(Check, Metrics) {
  // Differences 0, 0.5, 1 (reference 1, 2, -4): abs max 1, mean 0.5; rel 0, 0.25, 0.25 (max .25, mean 1/6);
  // norm rel sqrt(0.25 + 1) / sqrt(1 + 4 + 16).
  Tensor const ref = floats("y", {3}, {1, 2, -4});
  Tensor const out = floats("y", {3}, {1, 2.5, -3});
  Comparison c = compareTensors(out, ref, 0.0, 0.3);  // tolerances 0.3, 0.6, 1.2: all pass
  EXPECT_EQ(c.count, 3u);
  EXPECT_DOUBLE_EQ(c.maxAbs, 1.0);
  EXPECT_DOUBLE_EQ(c.meanAbs, 0.5);
  EXPECT_DOUBLE_EQ(c.maxRel, 0.25);
  EXPECT_DOUBLE_EQ(c.meanRel, 0.5 / 3);
  EXPECT_NEAR(c.normRel, std::sqrt(1.25) / std::sqrt(21.0), 1e-15);
  EXPECT_TRUE(c.pass);
  EXPECT_EQ(c.worstIndex, 2u);

  Comparison strict = compareTensors(out, ref, 0.5, 0.0);  // only the 1.0 difference exceeds
  EXPECT_FALSE(strict.pass);
  EXPECT_EQ(strict.mismatches, 1u);
  EXPECT_NE(formatComparison(strict).find("FAIL"), std::string::npos);
  EXPECT_NE(formatComparison(c).find("PASS"), std::string::npos);
}

TEST(Check, ZeroReferenceNanAndShape) {
  Tensor const ref = floats("y", {2}, {0, NAN});
  EXPECT_TRUE(compareTensors(floats("y", {2}, {0, NAN}), ref, 0, 0).pass);  // NaN where the reference has NaN
  Comparison c = compareTensors(floats("y", {2}, {1e-6F, 0}), ref, 1e-5, 0);
  EXPECT_EQ(c.mismatches, 1u);  // a number where the reference is NaN
  EXPECT_EQ(c.maxRel, 0);       // no finite, nonzero reference element
  EXPECT_TRUE(std::isinf(c.maxAbs));
  Comparison shape = compareTensors(floats("y", {1, 2}, {0, 0}), ref, 1, 1);
  EXPECT_FALSE(shape.pass);
  EXPECT_NE(shape.problem.find("shape 1x2"), std::string::npos) << shape.problem;
  Comparison zeros = compareTensors(floats("z", {2}, {1, 0}), floats("z", {2}, {0, 0}), 0, 0);
  EXPECT_TRUE(std::isinf(zeros.normRel));
}

TEST(Check, FirstDivergingLayer) {
  std::vector<std::pair<std::string, std::string>> order = {{"a", "conv"}, {"b", "relu"}, {"c", "pool"}, {"d", "fc"}};
  std::vector<Tensor> ref = {floats("a", {1}, {1}), floats("b", {1}, {2}), floats("c", {1}, {3}),
                             floats("d", {1}, {4})};
  std::vector<Tensor> out = {floats("d", {1}, {5}), floats("c", {1}, {3.5F}), floats("b", {1}, {2}),
                             floats("a", {1}, {1})};
  LayerCheck lc = checkLayers(order, out, ref, 1e-3, 0);
  ASSERT_EQ(lc.tensors.size(), 4u);
  ASSERT_EQ(lc.firstFailure, 2);
  EXPECT_EQ(lc.tensors[2].first, "pool");
  EXPECT_EQ(lc.tensors[2].second.name, "c");
  EXPECT_EQ(checkLayers(order, ref, ref, 0, 0).firstFailure, -1);
}

}  // namespace
}  // namespace kilnexec
