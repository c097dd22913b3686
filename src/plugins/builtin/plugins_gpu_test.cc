// GPU tests of the built-in plugins (label gpu): every built-in with a CUDA path goes through
// kiln-plugin-check's checks with the cuda backend (GPU output vs the host path over random shapes and every
// format combination, CUDA-graph capture), and RPROI_TRT at Faster R-CNN's sizes; skipped without a usable device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <random>

#include "check.h"
#include "device.h"
#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"
#include "samples.h"

namespace kiln::plugin {
namespace {

class BuiltinGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(BuiltinGpu, MatchesHostAndCapturesInGraph) {
  std::string why;
  if (!plugincheck::device::available(why)) GTEST_SKIP() << why;
  std::string key = GetParam();
  auto creators = makeBuiltinCreators();
  IPluginCreator* creator = nullptr;
  for (auto& c : creators) {
    if (key == std::string(c->getPluginName()) + "/" + c->getPluginVersion()) creator = c.get();
  }
  ASSERT_NE(creator, nullptr) << key;
  plugincheck::Sample sample;
  ASSERT_TRUE(plugincheck::builtinSample(creator->getPluginName(), creator->getPluginVersion(), sample));
  plugincheck::FieldSet fields;
  sample.fields(fields);
  plugincheck::Options options;
  options.cuda = true;
  options.shapes = 8;
  plugincheck::Report r = plugincheck::checkCreator(*creator, fields.get(), sample, options);
  for (auto const& f : r.failures) ADD_FAILURE() << key << ": " << f;
  EXPECT_GT(r.combinations, 0);
}

std::vector<std::string> cudaBuiltins() {
  std::vector<std::string> v;
  for (auto& c : makeBuiltinCreators()) {
    plugincheck::Sample s;
    if (!plugincheck::builtinSample(c->getPluginName(), c->getPluginVersion(), s)) continue;
    plugincheck::FieldSet f;
    s.fields(f);
    IPluginV2* p = c->createPlugin("probe", f.get());
    auto* b = dynamic_cast<BuiltinPlugin*>(p);
    if (b && b->hasCuda()) v.push_back(std::string(c->getPluginName()) + "/" + c->getPluginVersion());
    if (p) p->destroy();
  }
  return v;
}

// RPROI_TRT at Faster R-CNN's sizes (9 anchors on a 38 x 50 grid, 6,000 proposals into NMS, 300 rois of
// 7 x 7): an image's proposals fill many sort tiles, NMS candidates far outnumber a block's threads, and big
// anchors clip at the image's edges. Both paths compute the same boxes bit for bit, so they keep the same rois.
TEST(RproiGpu, FasterRcnnSizesMatchHost) {
  std::string why;
  if (!plugincheck::device::available(why)) GTEST_SKIP() << why;
  auto creators = makeBuiltinCreators();
  IPluginCreator* creator = nullptr;
  for (auto& c : creators) {
    if (std::string(c->getPluginName()) == "RPROI_TRT") creator = c.get();
  }
  ASSERT_NE(creator, nullptr);
  plugincheck::Sample sample;
  sample.fields = [](plugincheck::FieldSet& f) {
    f.add("poolingH", int32_t{7}).add("poolingW", int32_t{7}).add("featureStride", int32_t{16});
    f.add("preNmsTop", int32_t{6000}).add("nmsMaxOut", int32_t{300}).add("iouThreshold", 0.7f);
    f.add("minBoxSize", 16.f).add("spatialScale", 0.0625f);
    f.add("anchorsRatios", std::vector<float>{0.5f, 1.f, 2.f})
        .add("anchorsScales", std::vector<float>{8.f, 16.f, 32.f});
  };
  sample.inputs = [](std::mt19937& rng) {
    int64_t n = 2, a = 9, h = 38, w = 50, c = 8;
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    auto fill = [&](int64_t count, float scale) {
      std::vector<float> v(static_cast<size_t>(count));
      for (auto& x : v) x = scale * u(rng);
      return v;
    };
    std::vector<float> scores(static_cast<size_t>(n * 2 * a * h * w));
    for (size_t i = 0; i < scores.size(); ++i)
      scores[i] = (static_cast<float>(i) + 0.5f) / static_cast<float>(scores.size());
    std::shuffle(scores.begin(), scores.end(), rng);
    std::vector<float> info{600.f, 800.f, 1.6f, 560.f, 750.f, 1.f};
    return std::vector<plugincheck::HostTensor>{
        plugin::testing::floats(plugin::testing::dims({n, 2 * a, h, w}), scores),
        plugin::testing::floats(plugin::testing::dims({n, 4 * a, h, w}), fill(n * 4 * a * h * w, 0.3f)),
        plugin::testing::floats(plugin::testing::dims({n, c, h, w}), fill(n * c * h * w, 2.f)),
        plugin::testing::floats(plugin::testing::dims({n, 3}), info)};
  };
  plugincheck::FieldSet fields;
  sample.fields(fields);
  plugincheck::Options options;
  options.cuda = true;
  options.shapes = 2;
  plugincheck::Report r = plugincheck::checkCreator(*creator, fields.get(), sample, options);
  for (auto const& f : r.failures) ADD_FAILURE() << "RPROI_TRT: " << f;
  EXPECT_EQ(r.combinations, 1);
}

INSTANTIATE_TEST_SUITE_P(Plugins, BuiltinGpu, ::testing::ValuesIn(cudaBuiltins()),
                         [](::testing::TestParamInfo<std::string> const& param) {
                           std::string n;
                           for (char ch : param.param) n += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return n;
                         });

}  // namespace
}  // namespace kiln::plugin
