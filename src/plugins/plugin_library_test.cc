// Tests of IPluginRegistry::loadLibrary / deregisterLibrary with plugin libraries built by this folder's
// CMakeLists (testdata/test_plugin_library.cc), and of the clean failures for paths that are no plugin library.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kiln/kiln_plugin.h"
#include "plugins/plugin_registry.h"

namespace kiln {
namespace {

class ErrorList : public IErrorRecorder {
 public:
  int32_t getNbErrors() const noexcept override { return static_cast<int32_t>(errors.size()); }
  ErrorCode getErrorCode(int32_t i) const noexcept override { return errors.at(static_cast<size_t>(i)).first; }
  ErrorDesc getErrorDesc(int32_t i) const noexcept override { return errors.at(static_cast<size_t>(i)).second.c_str(); }
  bool hasOverflowed() const noexcept override { return false; }
  void clear() noexcept override { errors.clear(); }
  bool reportError(ErrorCode code, ErrorDesc desc) noexcept override {
    errors.emplace_back(code, desc);
    return false;
  }
  RefCount incRefCount() noexcept override { return ++refs; }
  RefCount decRefCount() noexcept override { return --refs; }
  std::vector<std::pair<ErrorCode, std::string>> errors;
  RefCount refs = 0;
};

// A registry that reports into an ErrorList for the duration of a test.
class PluginLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override { registry_.setErrorRecorder(&errors_); }
  void TearDown() override { registry_.setErrorRecorder(nullptr); }
  PluginRegistry registry_;
  ErrorList errors_;
};

int32_t count(IPluginRegistry& registry) {
  int32_t n = 0;
  registry.getAllCreators(&n);
  return n;
}

TEST_F(PluginLibraryTest, LoadRegistersTheLibraryCreatorsAndDeregisterRemovesThem) {
  IPluginRegistry::PluginLibraryHandle handle = registry_.loadLibrary(KILN_TEST_PLUGIN_LIBRARY);
  ASSERT_NE(handle, nullptr) << (errors_.errors.empty() ? "" : errors_.errors[0].second);
  EXPECT_TRUE(errors_.errors.empty());
  EXPECT_EQ(count(registry_), 2);
  // Each creator sits in the namespace it declares.
  IPluginCreatorInterface* v2 = registry_.getCreator("KilnTestLibV2", "1", "kiln_test");
  IPluginCreatorInterface* v3 = registry_.getCreator("KilnTestLibV3", "2", "kiln_test");
  ASSERT_NE(v2, nullptr);
  ASSERT_NE(v3, nullptr);
  EXPECT_STREQ(v2->getInterfaceInfo().kind, "PLUGIN CREATOR_V1");
  EXPECT_STREQ(v3->getInterfaceInfo().kind, "PLUGIN CREATOR_V3ONE");
  EXPECT_EQ(static_cast<IPluginCreatorInterface*>(registry_.getPluginCreator("KilnTestLibV2", "1", "kiln_test")), v2);
  EXPECT_EQ(registry_.getCreator("KilnTestLibV2", "1", ""), nullptr);
  // The namespace the registry set on the V2 creator (which keeps the pointer) is still readable.
  EXPECT_STREQ(static_cast<IPluginCreator*>(v2)->getPluginNamespace(), "kiln_test");

  // The library got a logger finder that yields a logger.
  void* self = dlopen(KILN_TEST_PLUGIN_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(self, nullptr);
  auto seen = reinterpret_cast<int32_t (*)()>(dlsym(self, "kilnTestLoggerFinderSeen"));
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(seen(), 1);
  dlclose(self);

  // Loading it again while it is loaded is refused and changes nothing.
  EXPECT_EQ(registry_.loadLibrary(KILN_TEST_PLUGIN_LIBRARY), nullptr);
  ASSERT_EQ(errors_.errors.size(), 1U);
  EXPECT_NE(errors_.errors[0].second.find("already loaded"), std::string::npos);
  EXPECT_EQ(count(registry_), 2);

  registry_.deregisterLibrary(handle);
  EXPECT_EQ(count(registry_), 0);
  EXPECT_EQ(registry_.getCreator("KilnTestLibV3", "2", "kiln_test"), nullptr);
  // An unknown (or already deregistered) handle is reported, not a crash.
  registry_.deregisterLibrary(handle);
  EXPECT_EQ(errors_.errors.size(), 2U);

  // And it can be loaded again afterwards.
  handle = registry_.loadLibrary(KILN_TEST_PLUGIN_LIBRARY);
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(count(registry_), 2);
  registry_.deregisterLibrary(handle);
}

TEST_F(PluginLibraryTest, V2OnlyLibraryThroughGetPluginCreators) {
  IPluginRegistry::PluginLibraryHandle handle = registry_.loadLibrary(KILN_TEST_PLUGIN_LIBRARY_V2);
  ASSERT_NE(handle, nullptr) << (errors_.errors.empty() ? "" : errors_.errors[0].second);
  EXPECT_EQ(count(registry_), 1);
  EXPECT_NE(registry_.getPluginCreator("KilnTestLibOnlyV2", "1", "kiln_test"), nullptr);
  registry_.deregisterLibrary(handle);
  EXPECT_EQ(count(registry_), 0);
}

// A V3 creator like the library's, registered first, so that loading the library hits a duplicate.
class ClashingCreator : public IPluginCreatorV3One {
 public:
  IPluginV3* createPlugin(char const*, PluginFieldCollection const*, TensorRTPhase) noexcept override {
    return nullptr;
  }
  PluginFieldCollection const* getFieldNames() noexcept override { return &fc_; }
  char const* getPluginName() const noexcept override { return "KilnTestLibV3"; }
  char const* getPluginVersion() const noexcept override { return "2"; }
  char const* getPluginNamespace() const noexcept override { return "kiln_test"; }

 private:
  PluginFieldCollection fc_{};
};

TEST_F(PluginLibraryTest, DuplicateInLibraryRollsBackTheWholeLoad) {
  ClashingCreator clash;
  ASSERT_TRUE(registry_.registerCreator(clash, ""));
  EXPECT_EQ(registry_.loadLibrary(KILN_TEST_PLUGIN_LIBRARY), nullptr);
  ASSERT_EQ(errors_.errors.size(), 1U);
  EXPECT_NE(errors_.errors[0].second.find("KilnTestLibV3"), std::string::npos) << errors_.errors[0].second;
  // The library's V2 creator, registered before the clash, is gone again; ours stays.
  EXPECT_EQ(registry_.getCreator("KilnTestLibV2", "1", "kiln_test"), nullptr);
  EXPECT_EQ(registry_.getCreator("KilnTestLibV3", "2", "kiln_test"), &clash);
  EXPECT_EQ(count(registry_), 1);
}

TEST_F(PluginLibraryTest, MissingPathFailsCleanly) {
  EXPECT_EQ(registry_.loadLibrary("/nonexistent/libno_such_plugins.so"), nullptr);
  ASSERT_EQ(errors_.errors.size(), 1U);
  EXPECT_NE(errors_.errors[0].second.find("/nonexistent/libno_such_plugins.so"), std::string::npos);
  EXPECT_EQ(registry_.loadLibrary(nullptr), nullptr);
  EXPECT_EQ(registry_.loadLibrary(""), nullptr);
  EXPECT_EQ(errors_.errors.size(), 3U);
  EXPECT_EQ(count(registry_), 0);
}

TEST_F(PluginLibraryTest, FileThatIsNoLibraryFailsCleanly) {
  std::string const path = ::testing::TempDir() + "kiln_not_a_library.so";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("this is not an ELF file\n", f);
  std::fclose(f);
  EXPECT_EQ(registry_.loadLibrary(path.c_str()), nullptr);
  EXPECT_EQ(errors_.errors.size(), 1U);
  std::remove(path.c_str());
}

TEST_F(PluginLibraryTest, LibraryWithoutPluginEntryPointsIsRefused) {
  // libc is a shared library that exports neither getCreators nor getPluginCreators.
  EXPECT_EQ(registry_.loadLibrary("libc.so.6"), nullptr);
  ASSERT_EQ(errors_.errors.size(), 1U);
  EXPECT_NE(errors_.errors[0].second.find("not a plugin library"), std::string::npos) << errors_.errors[0].second;
}

}  // namespace
}  // namespace kiln
