// A plugin library as users write them, for the loadLibrary tests: one V2 and one V3 creator, exported through
// getCreators (or, built with KILN_TEST_V2_ONLY, one V2 creator through getPluginCreators), and
// setLoggerFinder. It links nothing of Kiln.
#include <kiln/kiln_plugin.h>

#include <cstdint>

namespace {

#ifdef KILN_TEST_V2_ONLY
constexpr char const* kV2Name = "KilnTestLibOnlyV2";
#else
constexpr char const* kV2Name = "KilnTestLibV2";
#endif

kiln::ILoggerFinder* gFinder = nullptr;

// Creators only: the tests check registration, not plugin behaviour, so createPlugin refuses.
class LibV2Creator final : public kiln::IPluginCreator {
 public:
  char const* getPluginName() const noexcept override { return kV2Name; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  kiln::PluginFieldCollection const* getFieldNames() noexcept override { return &fields_; }
  kiln::IPluginV2* createPlugin(char const*, kiln::PluginFieldCollection const*) noexcept override { return nullptr; }
  kiln::IPluginV2* deserializePlugin(char const*, void const*, size_t) noexcept override { return nullptr; }
  void setPluginNamespace(char const* ns) noexcept override { ns_ = ns; }
  char const* getPluginNamespace() const noexcept override { return ns_; }

 private:
  kiln::PluginFieldCollection fields_{};
  char const* ns_ = "kiln_test";  // static strings only: the registry passes back what it was given
};

class LibV3Creator final : public kiln::IPluginCreatorV3One {
 public:
  kiln::IPluginV3* createPlugin(char const*, kiln::PluginFieldCollection const*,
                                kiln::TensorRTPhase) noexcept override {
    return nullptr;
  }
  kiln::PluginFieldCollection const* getFieldNames() noexcept override { return &fields_; }
  char const* getPluginName() const noexcept override { return "KilnTestLibV3"; }
  char const* getPluginVersion() const noexcept override { return "2"; }
  char const* getPluginNamespace() const noexcept override { return "kiln_test"; }

 private:
  kiln::PluginFieldCollection fields_{};
};

LibV2Creator gV2;
[[maybe_unused]] LibV3Creator gV3;  // unused in the KILN_TEST_V2_ONLY build

}  // namespace

extern "C" {

KILN_API void setLoggerFinder(kiln::ILoggerFinder* finder) { gFinder = finder; }

/// Lets the tests see that the registry called setLoggerFinder with a finder that yields a logger.
KILN_API int32_t kilnTestLoggerFinderSeen() { return gFinder != nullptr && gFinder->findLogger() != nullptr; }

#ifdef KILN_TEST_V2_ONLY
KILN_API kiln::IPluginCreator* const* getPluginCreators(int32_t& nbCreators) {
  static kiln::IPluginCreator* const list[] = {&gV2};
  nbCreators = 1;
  return list;
}
#else
KILN_API kiln::IPluginCreatorInterface* const* getCreators(int32_t& nbCreators) {
  static kiln::IPluginCreatorInterface* const list[] = {&gV2, &gV3};
  nbCreators = 2;
  return list;
}
#endif
}
