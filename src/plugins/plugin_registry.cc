// The process-wide plugin registry: registration and lookup of creators, plugin libraries (dlopen +
// getCreators/getPluginCreators/setLoggerFinder), shared plugin resources.
#include "plugins/plugin_registry.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

#include "core/logging.h"

namespace kiln {
namespace {

// TensorRT's limit for plugin names, versions and namespaces, terminator included.
constexpr std::size_t kMaxNameBytes = 1024;

constexpr char const* kV1CreatorKind = "PLUGIN CREATOR_V1";
constexpr char const* kV3OneCreatorKind = "PLUGIN CREATOR_V3ONE";

class StderrLogger final : public ILogger {
 public:
  void log(Severity severity, AsciiChar const* msg) noexcept override {
    if (severity > Severity::kWARNING || msg == nullptr) return;
    std::fprintf(stderr, "kiln: %s\n", msg);
  }
};

// What plugin libraries get through setLoggerFinder: one stderr logger, since per-engine loggers are not
// routed to plugins yet.
class StderrLoggerFinder final : public ILoggerFinder {
 public:
  ILogger* findLogger() override { return &stderrLogger(); }
};

StderrLoggerFinder& loggerFinder() {
  static StderrLoggerFinder finder;
  return finder;
}

std::string str(char const* s) { return s == nullptr ? std::string() : std::string(s); }

// "'name' version 'v'" plus the namespace when there is one, for messages.
std::string describe(std::string const& name, std::string const& version, std::string const& ns) {
  std::string out = strCat("plugin creator '", name, "' version '", version, "'");
  if (!ns.empty()) out += strCat(" in namespace '", ns, "'");
  return out;
}

Status checkName(char const* what, char const* value) {
  if (value == nullptr || value[0] == '\0') {
    return Status(StatusCode::kInvalidArgument, strCat("plugin creator has no ", what));
  }
  if (std::strlen(value) >= kMaxNameBytes) {
    return Status(StatusCode::kInvalidArgument,
                  strCat("plugin creator ", what, " is longer than ", kMaxNameBytes - 1, " bytes"));
  }
  return Status::ok();
}

template <typename F>
F symbol(void* handle, char const* name) {
  return reinterpret_cast<F>(dlsym(handle, name));
}

}  // namespace

ILogger& stderrLogger() noexcept {
  static StderrLogger logger;
  return logger;
}

PluginRegistry::PluginRegistry() = default;

PluginRegistry::~PluginRegistry() noexcept {
  // Libraries stay open: their creators may still be referenced by objects destroyed after the registry.
  for (auto& [key, resource] : resources_) {
    resource.clone->release();
    delete resource.clone;
  }
  if (recorder_ != nullptr) recorder_->decRefCount();
}

void PluginRegistry::report(ErrorCode code, std::string const& message) const {
  IErrorRecorder* recorder = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    recorder = recorder_;
  }
  if (recorder != nullptr) {
    recorder->reportError(code, message.c_str());
  } else {
    stderrLogger().log(ILogger::Severity::kERROR, ("plugin registry: " + message).c_str());
  }
}

PluginRegistry::Entry const* PluginRegistry::find(char const* name, char const* version, char const* ns) const {
  if (name == nullptr || version == nullptr) return nullptr;
  char const* space = ns == nullptr ? "" : ns;
  for (Entry const& e : entries_) {
    if (e.name == name && e.version == version && e.ns == space) return &e;
  }
  return nullptr;
}

Status PluginRegistry::add(IPluginCreatorInterface& creator, char const* pluginNamespace) {
  InterfaceInfo const info = creator.getInterfaceInfo();
  Entry entry{&creator, false, {}, {}, {}};
  std::string const requested = str(pluginNamespace);
  KILN_RETURN_IF_ERROR(checkName("namespace", requested.empty() ? "-" : requested.c_str()));
  if (info.kind != nullptr && std::strcmp(info.kind, kV1CreatorKind) == 0) {
    auto& v2 = static_cast<IPluginCreator&>(creator);
    KILN_RETURN_IF_ERROR(checkName("name", v2.getPluginName()));
    KILN_RETURN_IF_ERROR(checkName("version", v2.getPluginVersion()));
    entry = Entry{&creator, true, v2.getPluginName(), v2.getPluginVersion(), requested};
  } else if (info.kind != nullptr && std::strcmp(info.kind, kV3OneCreatorKind) == 0) {
    auto& v3 = static_cast<IPluginCreatorV3One&>(creator);
    KILN_RETURN_IF_ERROR(checkName("name", v3.getPluginName()));
    KILN_RETURN_IF_ERROR(checkName("version", v3.getPluginVersion()));
    std::string const own = str(v3.getPluginNamespace());
    KILN_RETURN_IF_ERROR(checkName("namespace", own.empty() ? "-" : own.c_str()));
    entry = Entry{&creator, false, v3.getPluginName(), v3.getPluginVersion(), own};
    // A V3 creator cannot be moved into another namespace: it reports its own to the plugins it creates.
    if (!requested.empty() && requested != own) {
      return Status(StatusCode::kInvalidArgument,
                    strCat(describe(entry.name, entry.version, own), " cannot be registered in namespace '", requested,
                           "': a V3 creator is filed under its own getPluginNamespace()"));
    }
  } else {
    return Status(StatusCode::kUnsupported, strCat("plugin creator of unknown kind '", str(info.kind),
                                                   "' (expected IPluginCreator or IPluginCreatorV3One)"));
  }

  std::lock_guard<std::mutex> lock(mutex_);
  for (Entry const& e : entries_) {
    if (e.creator == &creator) {
      return Status(StatusCode::kInvalidArgument,
                    strCat(describe(e.name, e.version, e.ns), ": this creator object is already registered"));
    }
  }
  if (find(entry.name.c_str(), entry.version.c_str(), entry.ns.c_str()) != nullptr) {
    return Status(StatusCode::kInvalidArgument, strCat(describe(entry.name, entry.version, entry.ns),
                                                       " is already registered; deregister it first to replace it"));
  }
  if (entry.v2) {
    static_cast<IPluginCreator&>(creator).setPluginNamespace(namespaces_.insert(entry.ns).first->c_str());
  }
  entries_.push_back(std::move(entry));
  return Status::ok();
}

bool PluginRegistry::registerCreator(IPluginCreatorInterface& creator,
                                     AsciiChar const* const pluginNamespace) noexcept {
  Status s = add(creator, pluginNamespace);
  if (!s.isOk()) report(toErrorCode(s.code()), s.message());
  return s.isOk();
}

bool PluginRegistry::registerCreator(IPluginCreator& creator, AsciiChar const* const pluginNamespace) noexcept {
  return registerCreator(static_cast<IPluginCreatorInterface&>(creator), pluginNamespace);
}

bool PluginRegistry::remove(IPluginCreatorInterface const* creator) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](Entry const& e) { return e.creator == creator; });
  if (it == entries_.end()) return false;
  entries_.erase(it);
  return true;
}

bool PluginRegistry::deregisterCreator(IPluginCreatorInterface const& creator) noexcept {
  if (remove(&creator)) return true;
  report(ErrorCode::kINVALID_ARGUMENT, "deregisterCreator: the plugin creator is not registered");
  return false;
}

bool PluginRegistry::deregisterCreator(IPluginCreator const& creator) noexcept {
  return deregisterCreator(static_cast<IPluginCreatorInterface const&>(creator));
}

IPluginCreatorInterface* PluginRegistry::getCreator(AsciiChar const* const pluginName,
                                                    AsciiChar const* const pluginVersion,
                                                    AsciiChar const* const pluginNamespace) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  Entry const* e = find(pluginName, pluginVersion, pluginNamespace);
  return e == nullptr ? nullptr : e->creator;
}

IPluginCreator* PluginRegistry::getPluginCreator(AsciiChar const* const pluginName,
                                                 AsciiChar const* const pluginVersion,
                                                 AsciiChar const* const pluginNamespace) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  Entry const* e = find(pluginName, pluginVersion, pluginNamespace);
  return e == nullptr || !e->v2 ? nullptr : static_cast<IPluginCreator*>(e->creator);
}

IPluginCreatorInterface* const* PluginRegistry::getAllCreators(int32_t* const numCreators) const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  allList_.clear();
  for (Entry const& e : entries_) allList_.push_back(e.creator);
  if (numCreators != nullptr) *numCreators = static_cast<int32_t>(allList_.size());
  return allList_.empty() ? nullptr : allList_.data();
}

IPluginCreatorInterface* const* PluginRegistry::getAllCreatorsRecursive(int32_t* const numCreators) noexcept {
  return getAllCreators(numCreators);
}

IPluginCreator* const* PluginRegistry::getPluginCreatorList(int32_t* const numCreators) const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  v2List_.clear();
  for (Entry const& e : entries_) {
    if (e.v2) v2List_.push_back(static_cast<IPluginCreator*>(e.creator));
  }
  if (numCreators != nullptr) *numCreators = static_cast<int32_t>(v2List_.size());
  return v2List_.empty() ? nullptr : v2List_.data();
}

void PluginRegistry::setErrorRecorder(IErrorRecorder* const recorder) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (recorder == recorder_) return;
  if (recorder != nullptr) recorder->incRefCount();
  if (recorder_ != nullptr) recorder_->decRefCount();
  recorder_ = recorder;
}

IErrorRecorder* PluginRegistry::getErrorRecorder() const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorder_;
}

bool PluginRegistry::isParentSearchEnabled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return parentSearch_;
}

void PluginRegistry::setParentSearchEnabled(bool const enabled) {
  std::lock_guard<std::mutex> lock(mutex_);
  parentSearch_ = enabled;
}

Status PluginRegistry::loadCreators(void* handle, std::string const& path,
                                    std::vector<IPluginCreatorInterface*>& added) {
  using SetLoggerFinderFn = void (*)(ILoggerFinder*);
  using GetCreatorsFn = IPluginCreatorInterface* const* (*)(int32_t&);
  using GetPluginCreatorsFn = IPluginCreator* const* (*)(int32_t&);

  if (auto setFinder = symbol<SetLoggerFinderFn>(handle, "setLoggerFinder")) setFinder(&loggerFinder());

  std::vector<IPluginCreatorInterface*> creators;
  int32_t count = 0;
  if (auto getCreators = symbol<GetCreatorsFn>(handle, "getCreators")) {
    IPluginCreatorInterface* const* list = getCreators(count);
    if (count > 0 && list == nullptr) {
      return Status(StatusCode::kInvalidArgument, strCat("'", path, "': getCreators returned no list"));
    }
    for (int32_t i = 0; i < count; ++i) creators.push_back(list[i]);
  } else if (auto getPluginCreators = symbol<GetPluginCreatorsFn>(handle, "getPluginCreators")) {
    IPluginCreator* const* list = getPluginCreators(count);
    if (count > 0 && list == nullptr) {
      return Status(StatusCode::kInvalidArgument, strCat("'", path, "': getPluginCreators returned no list"));
    }
    for (int32_t i = 0; i < count; ++i) creators.push_back(list[i]);
  } else {
    return Status(StatusCode::kNotFound,
                  strCat("'", path, "' is not a plugin library: it exports neither getCreators nor getPluginCreators"));
  }
  if (count < 0) {
    return Status(StatusCode::kInvalidArgument, strCat("'", path, "' reported ", count, " plugin creators"));
  }

  for (IPluginCreatorInterface* c : creators) {
    if (c == nullptr) return Status(StatusCode::kInvalidArgument, strCat("'", path, "' listed a null creator"));
    // Each creator keeps the namespace it declares (V2: getPluginNamespace() before registration).
    std::string ns;
    InterfaceInfo const info = c->getInterfaceInfo();
    if (info.kind != nullptr && std::strcmp(info.kind, kV1CreatorKind) == 0) {
      ns = str(static_cast<IPluginCreator*>(c)->getPluginNamespace());
    }
    Status s = add(*c, ns.c_str());
    if (!s.isOk()) return Status(s.code(), strCat("loading '", path, "': ", s.message()));
    added.push_back(c);
  }
  return Status::ok();
}

IPluginRegistry::PluginLibraryHandle PluginRegistry::loadLibrary(AsciiChar const* pluginPath) noexcept {
  if (pluginPath == nullptr || pluginPath[0] == '\0') {
    report(ErrorCode::kINVALID_ARGUMENT, "loadLibrary: no path given");
    return nullptr;
  }
  std::string const path = pluginPath;
  // Not under mutex_: the library's static initializers may register creators themselves.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    char const* why = dlerror();
    report(ErrorCode::kINVALID_ARGUMENT,
           strCat("loadLibrary: cannot open '", path, "': ", why == nullptr ? "unknown error" : why));
    return nullptr;
  }
  std::string loadedAs;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = libraries_.find(handle);
    if (it != libraries_.end()) loadedAs = it->second.path;
  }
  if (!loadedAs.empty()) {
    dlclose(handle);  // drops only the reference this dlopen added
    report(ErrorCode::kINVALID_STATE, strCat("loadLibrary: '", path, "' is already loaded (as '", loadedAs,
                                             "'); deregisterLibrary it first to load it again"));
    return nullptr;
  }
  std::vector<IPluginCreatorInterface*> added;
  Status s = loadCreators(handle, path, added);
  if (!s.isOk()) {
    for (IPluginCreatorInterface* c : added) remove(c);
    dlclose(handle);
    report(toErrorCode(s.code()), "loadLibrary: " + s.message());
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  libraries_[handle] = Library{path, std::move(added)};
  return handle;
}

void PluginRegistry::deregisterLibrary(PluginLibraryHandle handle) noexcept {
  Library library;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = libraries_.find(handle);
    if (it != libraries_.end()) {
      library = std::move(it->second);
      libraries_.erase(it);
    }
  }
  if (library.path.empty()) {
    report(ErrorCode::kINVALID_ARGUMENT, "deregisterLibrary: the handle does not come from loadLibrary");
    return;
  }
  // Creators the application deregistered itself are simply gone already.
  for (IPluginCreatorInterface* c : library.creators) remove(c);
  dlclose(handle);
}

IPluginResource* PluginRegistry::acquirePluginResource(AsciiChar const* key, IPluginResource* resource) noexcept {
  if (key == nullptr || resource == nullptr) {
    report(ErrorCode::kINVALID_ARGUMENT, "acquirePluginResource: key and resource must not be null");
    return nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = resources_.find(key);
    if (it != resources_.end()) {
      ++it->second.refs;
      return it->second.clone;
    }
  }
  // Cloned outside the lock (plugin code); if another thread won the race, its clone is kept and ours dropped.
  IPluginResource* clone = resource->clone();
  if (clone == nullptr) {
    report(ErrorCode::kFAILED_ALLOCATION, strCat("acquirePluginResource: cloning resource '", key, "' failed"));
    return nullptr;
  }
  IPluginResource* kept = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, inserted] = resources_.try_emplace(key, Resource{clone, 0});
    ++it->second.refs;
    kept = it->second.clone;
  }
  if (kept != clone) {
    clone->release();
    delete clone;
  }
  return kept;
}

int32_t PluginRegistry::releasePluginResource(AsciiChar const* key) noexcept {
  IPluginResource* last = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = key == nullptr ? resources_.end() : resources_.find(key);
    if (it == resources_.end()) {
      last = nullptr;
    } else {
      if (--it->second.refs == 0) {
        last = it->second.clone;
        resources_.erase(it);
      }
      if (last == nullptr) return 0;
    }
  }
  if (last == nullptr) {
    report(ErrorCode::kINVALID_ARGUMENT, strCat("releasePluginResource: no resource '", str(key), "'"));
    return -1;
  }
  int32_t const rc = last->release();
  delete last;
  return rc;
}

extern "C" KILN_API IPluginRegistry* getPluginRegistry() noexcept {
  // Never destroyed: static registrars of other translation units and libraries may use it during exit.
  static PluginRegistry* registry = new PluginRegistry();
  return registry;
}

}  // namespace kiln
