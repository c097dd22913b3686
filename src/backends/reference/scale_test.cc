// Tests of Scale: coefficient counts per mode and their errors, and the reference kernel y = (x * scale + shift) ^
// power for kUNIFORM / kCHANNEL / kELEMENTWISE with absent coefficients, in float32/float16/bfloat16.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "backends/backend.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"
#include "backends/reference/spatial_test_util.h"

namespace kiln {
namespace {

using ir::OpType;
using namespace spatialtest;  // NOLINT: test helpers

// Runs a Scale; empty coefficient vectors are absent inputs; coefficient shapes are 1-D.
Result<HostTensor> runScale(DataType dt, std::vector<int64_t> const& xs, std::vector<double> const& xv, ScaleMode mode,
                            int64_t channelAxis, std::vector<double> const& shift, std::vector<double> const& scale,
                            std::vector<double> const& power) {
  ir::Graph g;
  auto coef = [&](char const* name, std::vector<double> const& v) -> ir::Value* {
    return v.empty() ? nullptr : constant(g, name, DataType::kFLOAT, {static_cast<int64_t>(v.size())}, v);
  };
  ir::Node* n =
      g.addNode(OpType::kScale, "sc",
                {constant(g, "x", dt, xs, xv), coef("shift", shift), coef("scale", scale), coef("power", power)});
  n->attrs.setInt("mode", static_cast<int64_t>(mode));
  n->attrs.setInt("channel_axis", channelAxis);
  return run(g, n);
}

class ScaleTypes : public ::testing::TestWithParam<DataType> {};

TEST_P(ScaleTypes, EveryMode) {
  DataType dt = GetParam();
  std::vector<int64_t> xs{2, 3, 2};
  auto xv = randomValues(12, 1);
  // Uniform with all three coefficients.
  auto u = runScale(dt, xs, xv, ScaleMode::kUNIFORM, 1, {0.5}, {2}, {2});
  ASSERT_TRUE(u.isOk()) << u.status().toString();
  std::vector<double> ref;
  for (double v : xv)
    ref.push_back((v * 2 + 0.5) * (v * 2 + 0.5));
  expectClose(*u, ref, dt);
  // Per channel along axis 1, no power.
  std::vector<double> sh{1, 2, 3}, sc{-1, 0.5, 2};
  auto c = runScale(dt, xs, xv, ScaleMode::kCHANNEL, 1, sh, sc, {});
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  ref.clear();
  for (size_t i = 0; i < xv.size(); ++i)
    ref.push_back(xv[i] * sc[(i / 2) % 3] + sh[(i / 2) % 3]);
  expectClose(*c, ref, dt);
  // Per channel along the last axis, scale only.
  auto c2 = runScale(dt, xs, xv, ScaleMode::kCHANNEL, -1, {}, {3, -2}, {});
  ASSERT_TRUE(c2.isOk()) << c2.status().toString();
  ref.clear();
  for (size_t i = 0; i < xv.size(); ++i)
    ref.push_back(xv[i] * (i % 2 == 0 ? 3 : -2));
  expectClose(*c2, ref, dt);
  // Elementwise over the [3, 2] block from axis 1, shift and power 1/1 mix.
  std::vector<double> esh{1, 2, 3, 4, 5, 6}, epw{1, 2, 1, 2, 1, 2};
  auto e = runScale(dt, xs, xv, ScaleMode::kELEMENTWISE, 1, esh, {}, epw);
  ASSERT_TRUE(e.isOk()) << e.status().toString();
  ref.clear();
  for (size_t i = 0; i < xv.size(); ++i)
    ref.push_back(std::pow(xv[i] + esh[i % 6], epw[i % 6]));
  expectClose(*e, ref, dt);
  // Nothing given: identity.
  auto id = runScale(dt, xs, xv, ScaleMode::kUNIFORM, 1, {}, {}, {});
  ASSERT_TRUE(id.isOk());
  expectClose(*id, xv, dt);
}

INSTANTIATE_TEST_SUITE_P(AllFloat, ScaleTypes, ::testing::Values(DataType::kFLOAT, DataType::kHALF, DataType::kBF16),
                         [](auto const& pi) { return std::string(dataTypeShortName(pi.param)); });

TEST(Scale, HandComputedChannelOnNCHW) {
  // x [1, 2, 1, 2]: channel 0 -> (x * 2 + 1)^2, channel 1 -> (x * 3 - 1)^1.
  auto out = runScale(DataType::kFLOAT, {1, 2, 1, 2}, {1, 2, 3, 4}, ScaleMode::kCHANNEL, 1, {1, -1}, {2, 3}, {2, 1});
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  expectClose(*out, {9, 25, 8, 11}, DataType::kFLOAT);
}

TEST(Scale, Errors) {
  auto xv = randomValues(12, 1);
  EXPECT_FALSE(runScale(DataType::kFLOAT, {2, 3, 2}, xv, ScaleMode::kUNIFORM, 1, {1, 2}, {}, {}).isOk());
  EXPECT_FALSE(runScale(DataType::kFLOAT, {2, 3, 2}, xv, ScaleMode::kCHANNEL, 1, {}, {1, 2}, {}).isOk());
  EXPECT_FALSE(runScale(DataType::kFLOAT, {2, 3, 2}, xv, ScaleMode::kELEMENTWISE, 1, {}, {}, {1, 2, 3}).isOk());
  EXPECT_FALSE(runScale(DataType::kFLOAT, {2, 3, 2}, xv, ScaleMode::kCHANNEL, 3, {}, {1, 2}, {}).isOk());
  EXPECT_FALSE(runScale(DataType::kFLOAT, {2, 3, 2}, xv, static_cast<ScaleMode>(3), 1, {}, {}, {}).isOk());
  ir::Graph g;
  auto x = g.addInput("x", DataType::kFLOAT, makeDims({-1, 3, -1}));
  ASSERT_TRUE(x.isOk());
  ir::Node* n = g.addNode(OpType::kScale, "sc", {*x, nullptr, constant(g, "s", DataType::kFLOAT, {3}, {1, 2, 3})});
  n->attrs.setInt("mode", static_cast<int64_t>(ScaleMode::kCHANNEL));
  n->attrs.setInt("channel_axis", 1);
  ASSERT_TRUE(ir::inferGraphInPlace(g, nullptr).isOk());
  EXPECT_EQ(dimsToString(n->output(0)->shape), "[-1,3,-1]");
}

}  // namespace
}  // namespace kiln
