// Entry points of libkiln_plugins.so: initLibKilnPlugins (registration with the process-wide registry, once
// per namespace) and the plugin-library exports getCreators / getPluginCreators / setLoggerFinder through
// which IPluginRegistry::loadLibrary registers the same creators.
#include <map>
#include <mutex>
#include <string>

#include "kiln/compat/NvInferPlugin.h"
#include "kiln/kiln_builtin_plugins.h"
#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"

namespace kiln::plugin {

std::vector<std::unique_ptr<IPluginCreator>> makeBuiltinCreators() {
  std::vector<std::unique_ptr<IPluginCreator>> v;
  v.push_back(makeEfficientNmsCreator());
  v.push_back(makeBatchedNmsDynamicCreator());
  v.push_back(makeBatchedNmsCreator());
  v.push_back(makeNmsCreator());
  v.push_back(makeNmsDynamicCreator());
  v.push_back(makeInstanceNormCreator());
  v.push_back(makeInstanceNormV2Creator());
  v.push_back(makeGroupNormCreator());
  v.push_back(makeSkipLayerNormCreator());
  v.push_back(makeGeluCreator());
  v.push_back(makeLReluCreator());
  v.push_back(makeClipCreator());
  v.push_back(makeScatterNdCreator());
  v.push_back(makeRoiAlignCreator());
  v.push_back(makeResizeNearestCreator());
  v.push_back(makePriorBoxCreator());
  v.push_back(makeGridAnchorCreator());
  v.push_back(makeGridAnchorRectCreator());
  v.push_back(makeNormalizeCreator());
  v.push_back(makeReorgCreator());
  v.push_back(makeReorgV1Creator());
  v.push_back(makeRegionCreator());
  v.push_back(makeDeformConvCreator());
  v.push_back(makeRproiCreator());
  return v;
}

namespace {

std::mutex gMutex;
// Creators registered by initLibKilnPlugins, per namespace; they live until the process ends (the registry
// does not own creators).
std::map<std::string, std::vector<std::unique_ptr<IPluginCreator>>>& registered() {
  static auto* m = new std::map<std::string, std::vector<std::unique_ptr<IPluginCreator>>>();
  return *m;
}

// The creators loadLibrary registers (namespace ""), made on first use; destroyed when the library is unloaded
// (deregisterLibrary removes them from the registry first).
std::vector<std::unique_ptr<IPluginCreator>>& libraryCreators() {
  static std::vector<std::unique_ptr<IPluginCreator>> v = makeBuiltinCreators();
  return v;
}

}  // namespace
}  // namespace kiln::plugin

extern "C" {

KILN_API bool initLibKilnPlugins(void* logger, char const* libNamespace) noexcept {
  using namespace kiln::plugin;
  try {
    std::lock_guard<std::mutex> lock(gMutex);
    if (logger) setLibraryLogger(static_cast<kiln::ILogger*>(logger));
    std::string ns = libNamespace ? libNamespace : "";
    if (registered().count(ns)) return true;
    auto creators = makeBuiltinCreators();
    kiln::IPluginRegistry* registry = kiln::getPluginRegistry();
    for (size_t i = 0; i < creators.size(); ++i) {
      if (!registry->registerCreator(static_cast<kiln::IPluginCreatorInterface&>(*creators[i]), ns.c_str())) {
        logError("initLibKilnPlugins", std::string("could not register ") + creators[i]->getPluginName() +
                                           " version " + creators[i]->getPluginVersion() + " in namespace '" + ns +
                                           "'; no built-in plugin was registered");
        for (size_t j = 0; j < i; ++j) {
          registry->deregisterCreator(static_cast<kiln::IPluginCreatorInterface const&>(*creators[j]));
        }
        return false;
      }
    }
    registered()[ns] = std::move(creators);
    return true;
  } catch (...) {
    logError("initLibKilnPlugins", "out of memory");
    return false;
  }
}

/// TensorRT's name for initLibKilnPlugins (declared in include/kiln/compat/NvInferPlugin.h).
KILN_API bool initLibNvInferPlugins(void* logger, char const* libNamespace) noexcept {
  return initLibKilnPlugins(logger, libNamespace);
}

/// Plugin-library entry point: hands IPluginRegistry::loadLibrary a logger finder.
KILN_API void setLoggerFinder(kiln::ILoggerFinder* finder) { kiln::plugin::setLibraryLoggerFinder(finder); }

/// Plugin-library entry point (V2 and V3 creators): every built-in creator.
KILN_API kiln::IPluginCreatorInterface* const* getCreators(int32_t& nbCreators) {
  static std::vector<kiln::IPluginCreatorInterface*> list = [] {
    std::vector<kiln::IPluginCreatorInterface*> v;
    for (auto& c : kiln::plugin::libraryCreators()) v.push_back(c.get());
    return v;
  }();
  nbCreators = static_cast<int32_t>(list.size());
  return list.data();
}

/// Plugin-library entry point (V2 creators only), as exported by TensorRT's plugin libraries.
KILN_API kiln::IPluginCreator* const* getPluginCreators(int32_t& nbCreators) {
  static std::vector<kiln::IPluginCreator*> list = [] {
    std::vector<kiln::IPluginCreator*> v;
    for (auto& c : kiln::plugin::libraryCreators()) v.push_back(c.get());
    return v;
  }();
  nbCreators = static_cast<int32_t>(list.size());
  return list.data();
}
}
