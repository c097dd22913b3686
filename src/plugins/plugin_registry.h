// PluginRegistry: the process-wide IPluginRegistry behind getPluginRegistry(): creators keyed by
// (name, version, namespace), plugin libraries opened with dlopen, shared plugin resources.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/status.h"
#include "kiln/kiln_plugin.h"

namespace kiln {

/// Logger for code without a user logger (the registry, plugin libraries through ILoggerFinder): warnings and
/// errors go to stderr prefixed "kiln: ", the rest is dropped.
ILogger& stderrLogger() noexcept;

/// IPluginRegistry implementation. getPluginRegistry() returns the one process-wide instance; tests may also
/// construct private ones. Thread-safe: one mutex guards all state, and no creator or library code runs while
/// it is held except the creators' name/namespace queries during registration.
class PluginRegistry final : public IPluginRegistry {
 public:
  PluginRegistry();
  ~PluginRegistry() noexcept override;

  bool registerCreator(IPluginCreator& creator, AsciiChar const* const pluginNamespace) noexcept override;
  IPluginCreator* const* getPluginCreatorList(int32_t* const numCreators) const noexcept override;
  IPluginCreator* getPluginCreator(AsciiChar const* const pluginName, AsciiChar const* const pluginVersion,
                                   AsciiChar const* const pluginNamespace = "") noexcept override;
  void setErrorRecorder(IErrorRecorder* const recorder) noexcept override;
  IErrorRecorder* getErrorRecorder() const noexcept override;
  bool deregisterCreator(IPluginCreator const& creator) noexcept override;
  bool isParentSearchEnabled() const override;
  void setParentSearchEnabled(bool const enabled) override;
  PluginLibraryHandle loadLibrary(AsciiChar const* pluginPath) noexcept override;
  void deregisterLibrary(PluginLibraryHandle handle) noexcept override;
  bool registerCreator(IPluginCreatorInterface& creator, AsciiChar const* const pluginNamespace) noexcept override;
  IPluginCreatorInterface* const* getAllCreators(int32_t* const numCreators) const noexcept override;
  IPluginCreatorInterface* getCreator(AsciiChar const* const pluginName, AsciiChar const* const pluginVersion,
                                      AsciiChar const* const pluginNamespace = "") noexcept override;
  bool deregisterCreator(IPluginCreatorInterface const& creator) noexcept override;
  IPluginResource* acquirePluginResource(AsciiChar const* key, IPluginResource* resource) noexcept override;
  int32_t releasePluginResource(AsciiChar const* key) noexcept override;
  IPluginCreatorInterface* const* getAllCreatorsRecursive(int32_t* const numCreators) noexcept override;

  /// Registers `creator` (of any generation) and returns the reason when it is refused; the public overloads
  /// report that reason and return false.
  Status add(IPluginCreatorInterface& creator, char const* pluginNamespace);

 private:
  struct Entry {
    IPluginCreatorInterface* creator;
    bool v2;  // an IPluginCreator (kind "PLUGIN CREATOR_V1"), else an IPluginCreatorV3One
    std::string name;
    std::string version;
    std::string ns;
  };
  struct Library {
    std::string path;
    std::vector<IPluginCreatorInterface*> creators;
  };
  struct Resource {
    IPluginResource* clone;  // owned: released and deleted with the last reference
    int64_t refs;
  };

  void report(ErrorCode code, std::string const& message) const;
  bool remove(IPluginCreatorInterface const* creator);
  Entry const* find(char const* name, char const* version, char const* ns) const;  // mutex_ held
  Status loadCreators(void* handle, std::string const& path, std::vector<IPluginCreatorInterface*>& added);

  mutable std::mutex mutex_;
  std::vector<Entry> entries_;  // registration order
  std::map<void*, Library> libraries_;
  std::map<std::string, Resource> resources_;
  // Every namespace handed to a V2 creator's setPluginNamespace: node-based, never shrinks, so the pointers
  // stay valid for creators that keep them instead of copying.
  std::set<std::string> namespaces_;
  IErrorRecorder* recorder_ = nullptr;
  bool parentSearch_ = true;
  // Arrays handed out by the list queries; rebuilt on each call (TensorRT: valid until the registry changes).
  mutable std::vector<IPluginCreatorInterface*> allList_;
  mutable std::vector<IPluginCreator*> v2List_;
};

}  // namespace kiln
