// GPU tests of the built-in plugins (label gpu): every built-in with a CUDA path goes through
// kiln-plugin-check's checks with the cuda backend (GPU output vs the host path over random shapes and every
// format combination, CUDA-graph capture); skipped without a usable device.
#include <gtest/gtest.h>

#include <cctype>

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

INSTANTIATE_TEST_SUITE_P(Plugins, BuiltinGpu, ::testing::ValuesIn(cudaBuiltins()),
                         [](::testing::TestParamInfo<std::string> const& param) {
                           std::string n;
                           for (char ch : param.param) n += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return n;
                         });

}  // namespace
}  // namespace kiln::plugin
