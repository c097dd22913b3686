// Tests of NMS_TRT and NMSDynamic_TRT against reference math written in the test (and the checks every built-in gets:
// round trips, bad fields refused).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

// NMS_TRT: center-size decoding against the priors and variances, then per-class NMS and [N, 1, K, 7] rows.
TEST(DetectionOutputPlugin, DecodesAndSuppresses) {
  for (char const* name : {"NMS_TRT", "NMSDynamic_TRT"}) {
    IPluginCreator& cr = builtinCreator(name);
    FieldSet f;
    f.add("numClasses", int32_t{2}).add("topK", int32_t{5}).add("keepTopK", int32_t{3}).add("backgroundLabelId", int32_t{0});
    f.add("confidenceThreshold", 0.1f).add("nmsThreshold", 0.5f).add("codeType", int32_t{1});
    f.add("inputOrder", std::vector<int32_t>{0, 2, 1});  // loc, priors, conf
    PluginPtr p = createPlugin(cr, f.get());
    ASSERT_TRUE(p) << name;
    // Three priors: two overlapping, one apart. loc shifts prior 2 right by 0.1 * 0.1 * width.
    std::vector<float> priors{0.1f, 0.1f, 0.3f, 0.3f, 0.12f, 0.1f, 0.32f, 0.3f, 0.6f, 0.6f, 0.9f, 0.9f};
    for (int i = 0; i < 3; ++i) priors.insert(priors.end(), {0.1f, 0.1f, 0.2f, 0.2f});
    std::vector<float> loc(12, 0.f);
    loc[8] = 0.1f;              // x centre of prior 2: + 0.1 * 0.1 * 0.3
    loc[10] = std::log(2.f) / 0.2f;  // width of prior 2 doubled
    std::vector<float> conf{0.9f, 0.8f, 0.2f, 0.7f, 0.3f, 0.05f};  // per prior: background, class 1
    std::vector<HostTensor> in{floats(dims({1, 12, 1, 1}), loc), floats(dims({1, 2, 12, 1}), priors),
                               floats(dims({1, 6, 1, 1}), conf)};
    auto out = expectRoundTrips(cr, *p, in);
    ASSERT_TRUE(sameDims(out[0].desc.dims, dims({1, 1, 3, 7})));
    ASSERT_EQ(out[1].as<int32_t>()[0], 1);  // prior 1 suppressed by prior 0; prior 2's 0.05 is below 0.1
    expectNear(out[0].as<float>(), {0, 1, 0.8f, 0.1f, 0.1f, 0.3f, 0.3f, 0, -1, 0, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0}, 1e-6f);
    // With class 1 of prior 2 above the threshold, its decoded (moved, widened, clipped) box appears.
    conf[5] = 0.5f;
    in[2] = floats(dims({1, 6, 1, 1}), conf);
    std::vector<HostTensor> o2;
    ASSERT_EQ(runHost(*p, in, o2), 0);
    ASSERT_EQ(o2[1].as<int32_t>()[0], 2);
    float ccx = 0.75f + 0.1f * 0.1f * 0.3f, ww = 0.3f * 2.f;
    expectNear(o2[0].as<float>() + 7, {0, 1, 0.5f, ccx - ww / 2, 0.6f, std::min(ccx + ww / 2, 1.f), 0.9f}, 1e-5f);
  }
}

TEST(DetectionOutputPlugin, RefusesBadFieldsAndShapes) {
  IPluginCreator& cr = builtinCreator("NMS_TRT");
  FieldSet none;
  expectRefused(cr, none);
  FieldSet order;
  order.add("numClasses", int32_t{2}).add("topK", int32_t{5}).add("keepTopK", int32_t{3}).add("inputOrder", std::vector<int32_t>{0, 0, 1});
  expectRefused(cr, order);
  FieldSet code;
  code.add("numClasses", int32_t{2}).add("topK", int32_t{5}).add("keepTopK", int32_t{3}).add("codeType", int32_t{4});
  expectRefused(cr, code);
  FieldSet ok;
  ok.add("numClasses", int32_t{2}).add("topK", int32_t{5}).add("keepTopK", int32_t{3});
  PluginPtr p = createPlugin(cr, ok.get());
  ASSERT_TRUE(p);
  std::vector<HostTensor> out;  // conf holds 3 classes per prior, not 2
  EXPECT_NE(runHost(*p, {floats(dims({1, 4, 1, 1}), std::vector<float>(4)), floats(dims({1, 3, 1, 1}), std::vector<float>(3)),
                         floats(dims({1, 2, 4, 1}), std::vector<float>(8))},
                    out),
            0);
}

}  // namespace
}  // namespace kiln::plugin::testing
