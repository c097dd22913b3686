// IBuilder implementation and createInferBuilder_INTERNAL.
#include <limits>
#include <memory>

#include "backends/backend.h"
#include "builder/build_engine.h"
#include "builder/builder_config.h"
#include "core/host_memory.h"
#include "core/logging.h"
#include "core/thread_pool.h"
#include "kiln/kiln.h"
#include "kiln/kiln_version.h"
#include "network/network.h"
#include "plan/plan.h"

namespace kiln::builder {
namespace {

class BuilderImpl final : public IBuilder {
 public:
  explicit BuilderImpl(ILogger* logger) : reporter_(logger), maxThreads_(ThreadPool::hardwareThreads()) {}

  bool platformHasFastFp16() const noexcept override { return false; }
  bool platformHasFastInt8() const noexcept override { return false; }
  void setGpuAllocator(IGpuAllocator* allocator) noexcept override { allocator_ = allocator; }
  IBuilderConfig* createBuilderConfig() noexcept override {
    auto* c = new (std::nothrow) BuilderConfigImpl();
    if (c) c->setReporter(&reporter_);
    return c;
  }
  INetworkDefinition* createNetworkV2(NetworkDefinitionCreationFlags flags) noexcept override {
    std::unique_ptr<network::NetworkImpl> net = network::createNetwork(this, flags, reporter_.logger());
    // Shape arithmetic on constants gets known contents while the network is defined, as in the build.
    if (net) net->setHostEvaluator(backends::referenceEvaluator());
    return net.release();
  }
  IOptimizationProfile* createOptimizationProfile() noexcept override {
    auto p = std::make_unique<OptimizationProfileImpl>();
    profiles_.push_back(std::move(p));
    return profiles_.back().get();
  }
  void setErrorRecorder(IErrorRecorder* recorder) noexcept override { reporter_.setRecorder(recorder); }
  IErrorRecorder* getErrorRecorder() const noexcept override { return reporter_.recorder(); }
  void reset() noexcept override { profiles_.clear(); }

  IHostMemory* buildSerializedNetwork(INetworkDefinition& network, IBuilderConfig& config) noexcept override {
    auto info = build(network, config);
    if (!info) {
      reporter_.fail(info.status().withContext("buildSerializedNetwork"));
      return nullptr;
    }
    // The plan outlives the builder (the caller owns it), so it is checked against the budget, not charged to it.
    auto bytes = plan::writePlan(*info, nullptr);
    if (bytes) {
      Status fits = budget_.reserve(bytes->size(), "the serialized plan");
      if (fits.isOk()) budget_.release(bytes->size());
      else bytes = fits;
    }
    if (!bytes) {
      reporter_.fail(bytes.status().withContext("buildSerializedNetwork"));
      return nullptr;
    }
    reporter_.info(strCat("built engine '", info->name, "': ", info->graph->nodes().size(), " layers, ",
                          bytes->size(), " bytes, ", info->arenaSize, " bytes of activation memory"));
    return new (std::nothrow) HostMemoryImpl(std::move(bytes).value());
  }

  bool isNetworkSupported(INetworkDefinition const& network, IBuilderConfig const& config) const noexcept override {
    auto info = build(const_cast<INetworkDefinition&>(network), const_cast<IBuilderConfig&>(config));
    return info.isOk();
  }

  ILogger* getLogger() const noexcept override { return reporter_.logger(); }
  bool setMaxThreads(int32_t maxThreads) noexcept override {
    if (maxThreads < 1) return reporter_.fail(invalidArgument("setMaxThreads: must be >= 1, got ", maxThreads));
    maxThreads_ = maxThreads;
    return true;
  }
  int32_t getMaxThreads() const noexcept override { return maxThreads_; }
  bool setMemoryLimit(int64_t bytes) noexcept override {
    if (bytes < 0) return reporter_.fail(invalidArgument("setMemoryLimit: must be >= 0 (0: no cap), got ", bytes));
    budget_.setLimit(bytes == 0 ? std::numeric_limits<int64_t>::max() : bytes);
    return true;
  }
  int64_t getMemoryLimit() const noexcept override {
    int64_t l = budget_.limit();
    return l == std::numeric_limits<int64_t>::max() ? 0 : l;
  }

 private:
  Result<plan::PlanInfo> build(INetworkDefinition& network, IBuilderConfig& config) const {
    auto* net = dynamic_cast<network::NetworkImpl*>(&network);
    auto* cfg = dynamic_cast<BuilderConfigImpl*>(&config);
    if (!net) return invalidArgument("the network was not created by a Kiln builder");
    if (!cfg) return invalidArgument("the config was not created by a Kiln builder");
    NetworkView view{&net->graph(), net->name(), net->stronglyTyped(), {}};
    // From the network's tensor objects: graph() hands out a lowered copy when there is control flow (and lowers
    // anew on each call, so it is called once above).
    for (int32_t i = 0; i < network.getNbInputs(); ++i)
      if (ITensor const* t = network.getInput(i)) view.allowedFormats[t->getName()] = t->getAllowedFormats();
    for (int32_t i = 0; i < network.getNbOutputs(); ++i)
      if (ITensor const* t = network.getOutput(i)) view.allowedFormats[t->getName()] = t->getAllowedFormats();
    BuildEnv env{&reporter_, &budget_, maxThreads_};
    return buildPlanInfo(view, *cfg, env);
  }

  Reporter reporter_;
  mutable MemoryBudget budget_;
  int32_t maxThreads_;
  IGpuAllocator* allocator_ = nullptr;
  std::vector<std::unique_ptr<OptimizationProfileImpl>> profiles_;
};

}  // namespace
}  // namespace kiln::builder

namespace kiln {
extern "C" KILN_API void* createInferBuilder_INTERNAL(void* logger, int32_t version) noexcept {
  auto* l = static_cast<ILogger*>(logger);
  if (version / 100 != KILN_VERSION / 100) {
    if (l)
      l->log(ILogger::Severity::kERROR,
             strCat("createInferBuilder: header version ", version, " does not match library version ", KILN_VERSION)
                 .c_str());
    return nullptr;
  }
  return static_cast<IBuilder*>(new (std::nothrow) builder::BuilderImpl(l));
}
}  // namespace kiln
