// Compiled as C++17 (see tests/CMakeLists.txt): kiln_plugin.h must compile on its own, without CUDA and
// without C++20, as TensorRT plugin code often is. headers_tests calls the function below.
#include <kiln/kiln_plugin.h>

#if __cplusplus >= 202002L
#error "this file must be compiled as C++17"
#endif

namespace {

// A minimal V2 creator written against the header alone.
class Cxx17Creator : public kiln::IPluginCreator {
 public:
  char const* getPluginName() const noexcept override { return "Cxx17"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  kiln::PluginFieldCollection const* getFieldNames() noexcept override { return &fc_; }
  kiln::IPluginV2* createPlugin(char const*, kiln::PluginFieldCollection const*) noexcept override { return nullptr; }
  kiln::IPluginV2* deserializePlugin(char const*, void const*, size_t) noexcept override { return nullptr; }
  void setPluginNamespace(char const* ns) noexcept override { ns_ = ns; }
  char const* getPluginNamespace() const noexcept override { return ns_; }

 private:
  kiln::PluginFieldCollection fc_{};
  char const* ns_ = "";
};

}  // namespace

/// Interface kind of a V2 creator compiled as C++17 ("PLUGIN CREATOR_V1").
char const* kilnPluginHeaderCxx17Kind() {
  Cxx17Creator creator;
  return creator.getInterfaceInfo().kind;
}
