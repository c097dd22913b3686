// Tests of the library entry points: initLibKilnPlugins (every built-in registered, once per namespace) and
// loading libkiln_plugins.so through IPluginRegistry::loadLibrary.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kiln/kiln_builtin_plugins.h"
#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"

namespace kiln::plugin {
namespace {

int32_t countInNamespace(char const* ns) {
  int32_t n = 0;
  IPluginCreatorInterface* const* all = getPluginRegistry()->getAllCreators(&n);
  int32_t found = 0;
  for (int32_t i = 0; i < n; ++i) {
    auto* c = dynamic_cast<IPluginCreator*>(all[i]);
    if (c && std::string(c->getPluginNamespace()) == ns) ++found;
  }
  return found;
}

TEST(KilnPluginsLibrary, BuiltinNamesAreUnique) {
  auto creators = makeBuiltinCreators();
  std::set<std::string> keys;
  for (auto& c : creators) keys.insert(std::string(c->getPluginName()) + "/" + c->getPluginVersion());
  EXPECT_EQ(keys.size(), creators.size());
  EXPECT_GE(creators.size(), 10u);
}

TEST(KilnPluginsLibrary, InitRegistersEveryCreatorOncePerNamespace) {
  size_t expected = makeBuiltinCreators().size();
  ASSERT_TRUE(initLibKilnPlugins(nullptr, "kiln_init_test"));
  EXPECT_EQ(countInNamespace("kiln_init_test"), static_cast<int32_t>(expected));
  EXPECT_TRUE(initLibKilnPlugins(nullptr, "kiln_init_test"));  // idempotent
  EXPECT_EQ(countInNamespace("kiln_init_test"), static_cast<int32_t>(expected));
  IPluginCreatorInterface* c = getPluginRegistry()->getCreator("EfficientNMS_TRT", "1", "kiln_init_test");
  ASSERT_NE(c, nullptr);
  EXPECT_STREQ(static_cast<IPluginCreator*>(c)->getPluginNamespace(), "kiln_init_test");
  ASSERT_TRUE(initLibKilnPlugins(nullptr, "kiln_init_test_2"));
  EXPECT_EQ(countInNamespace("kiln_init_test_2"), static_cast<int32_t>(expected));
}

TEST(KilnPluginsLibrary, LoadLibraryRegistersTheSameCreators) {
  IPluginRegistry* r = getPluginRegistry();
  if (r->getCreator("LReLU_TRT", "1", "")) GTEST_SKIP() << "namespace \"\" already holds the built-ins";
  IPluginRegistry::PluginLibraryHandle h = r->loadLibrary(KILN_PLUGINS_LIBRARY);
  ASSERT_NE(h, nullptr);
  size_t expected = makeBuiltinCreators().size();
  EXPECT_EQ(countInNamespace(""), static_cast<int32_t>(expected));
  auto* c = dynamic_cast<IPluginCreator*>(r->getCreator("CustomSkipLayerNormPluginDynamic", "1", ""));
  ASSERT_NE(c, nullptr);
  EXPECT_GT(c->getFieldNames()->nbFields, 0);
  r->deregisterLibrary(h);
  EXPECT_EQ(r->getCreator("LReLU_TRT", "1", ""), nullptr);
}

}  // namespace
}  // namespace kiln::plugin

namespace kiln::plugin {
namespace {

// A plugin without a CUDA path (the NMS plugins; every plugin in a build without CUDA) fails enqueue instead of
// computing nothing; with one, hasCuda() says so. No device memory is touched: the call fails first.
TEST(KilnPluginsLibrary, EnqueueWithoutCudaPathFails) {
  for (auto& c : makeBuiltinCreators()) {
    if (std::string(c->getPluginName()) != "EfficientNMS_TRT" && std::string(c->getPluginName()) != "BatchedNMS_TRT" &&
        KILN_PLUGINS_HAVE_CUDA) {
      continue;
    }
    IPluginV2* p = c->createPlugin("x", nullptr);
    if (!p) continue;  // plugins with required fields are covered by their own tests
    auto* d = dynamic_cast<IPluginV2DynamicExt*>(p);
    auto* b = dynamic_cast<BuiltinPlugin*>(p);
    ASSERT_NE(d, nullptr);
    ASSERT_NE(b, nullptr);
    if (!b->hasCuda()) {
      PluginTensorDesc desc[8]{};
      void const* in[4]{};
      void* out[4]{};
      EXPECT_NE(d->enqueue(desc, desc + 4, in, out, nullptr, nullptr), 0) << c->getPluginName();
    }
    p->destroy();
  }
}

}  // namespace
}  // namespace kiln::plugin
