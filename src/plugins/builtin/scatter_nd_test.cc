// Tests of ScatterND against reference math written in the test (and the checks every built-in gets:
// round trips, bad fields refused).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

TEST(ScatterNdPlugin, ScattersSlices) {
  IPluginCreator& cr = builtinCreator("ScatterND");
  PluginPtr p = createPlugin(cr, nullptr);
  ASSERT_TRUE(p);
  // data [4, 3], indices [2, 1] (rows 3 and 0), updates [2, 3]
  std::vector<float> data = randomFloats(12, 20), upd{1, 2, 3, 4, 5, 6};
  auto out = expectRoundTrips(cr, *p, {floats(dims({4, 3}), data), ints(dims({2, 1}), {3, 0}), floats(dims({2, 3}), upd)});
  std::vector<float> ref = data;
  for (int i = 0; i < 3; ++i) {
    ref[9 + i] = upd[i];
    ref[i] = upd[3 + i];
  }
  expectNear(out[0].as<float>(), ref, 0.f);
}

TEST(ScatterNdPlugin, ElementIndicesInt32AndNegative) {
  IPluginCreator& cr = builtinCreator("ScatterND");
  PluginPtr p = createPlugin(cr, nullptr);
  ASSERT_TRUE(p);
  HostTensor data = ints(dims({2, 2}), {1, 2, 3, 4});
  std::vector<HostTensor> out;
  ASSERT_EQ(runHost(*p, {data, ints(dims({2, 2}), {0, 1, -1, 0}), ints(dims({2}), {9, 8})}, out), 0);
  EXPECT_EQ(std::vector<int32_t>(out[0].as<int32_t>(), out[0].as<int32_t>() + 4), (std::vector<int32_t>{1, 9, 8, 4}));
  PluginTensorDesc d[4] = {data.desc, data.desc, data.desc, data.desc};
  EXPECT_TRUE(p->supportsFormatCombination(1, d, 3, 1));
  d[1].type = DataType::kFLOAT;
  EXPECT_FALSE(p->supportsFormatCombination(1, d, 3, 1));
}

TEST(ScatterNdPlugin, RefusesOutOfRangeIndexAndBadUpdates) {
  PluginPtr p = createPlugin(builtinCreator("ScatterND"), nullptr);
  ASSERT_TRUE(p);
  std::vector<HostTensor> out;
  EXPECT_NE(runHost(*p, {floats(dims({2, 2}), {0, 0, 0, 0}), ints(dims({1, 1}), {2}), floats(dims({1, 2}), {1, 1})}, out),
            0);
  std::vector<HostTensor> out2;
  EXPECT_NE(runHost(*p, {floats(dims({2, 2}), {0, 0, 0, 0}), ints(dims({1, 1}), {1}), floats(dims({1, 3}), {1, 1, 1})},
                    out2),
            0);
}

}  // namespace
}  // namespace kiln::plugin::testing
