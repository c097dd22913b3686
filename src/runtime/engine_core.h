// The shared, immutable state of a loaded engine: plan, kernels and I/O table. Engines, contexts and
// inspectors hold it by shared_ptr, so destroying them in any order is safe.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/backend.h"
#include "backends/device.h"
#include "core/logging.h"
#include "core/memory.h"
#include "core/tensor_format.h"
#include "kiln/kiln_runtime.h"
#include "plan/plan.h"

namespace kiln::runtime {

struct IOTensor {
  std::string name;
  int32_t valueId = -1;
  int32_t inputIndex = -1;  // index among graph inputs, -1 for outputs
  TensorIOMode mode = TensorIOMode::kNONE;
  DataType dtype = DataType::kFLOAT;
  Dims dims{};  // declared, -1 where dynamic
  TensorFormat format = TensorFormat::kLINEAR;  // the binding's memory layout (the same for every profile)
  FormatLayout layout;                          // format's layout at this rank
};

class EngineImpl;

struct EngineCore {
  // Declared first so that it is destroyed last: the plan's buffers are charged to it.
  std::shared_ptr<MemoryBudget> budget;
  plan::PlanInfo plan;
  std::vector<std::unique_ptr<backends::Kernel>> kernels;  // by node id; null for Constant nodes
  std::vector<int32_t> layerNodes;                         // node ids of the engine's layers (not Constant)
  std::vector<IOTensor> io;                                // inputs, then outputs
  std::unordered_map<std::string, int32_t> ioByName;
  Reporter reporter;                                       // the runtime's logger
  int32_t maxThreads = 1;
  std::atomic<EngineImpl*> owner{nullptr};                 // the live ICudaEngine, if any
  std::atomic<int32_t> liveContexts{0};
  // GPU targets: the device backend, the constants the layers read, uploaded once (by value id), and the
  // runtime's allocator for activation memory (null: the backend's stream-ordered pool).
  backends::DeviceBackend* device = nullptr;
  std::vector<backends::DeviceBuffer> deviceConstants;
  std::vector<void*> constantAddress;
  IGpuAllocator* allocator = nullptr;
  // The weights to ask into L2 ahead of their layers, by layer position (parallel to layerNodes; empty when nothing
  // is prefetched): the run forks a side stream after that layer and prefetches them there (planL2Prefetch).
  std::vector<std::vector<backends::DeviceRange>> l2Prefetch;
  bool hasHostFallback = false;  // some layer runs on the host (no CUDA graph capture)

  IOTensor const* findIO(char const* name) const {
    if (!name) return nullptr;
    auto it = ioByName.find(name);
    return it == ioByName.end() ? nullptr : &io[it->second];
  }
};

/// The L2 prefetch of weights (engine.cc): layers that read constants whole (MatrixMultiply, Convolution,
/// Deconvolution) with kL2PrefetchMinBytes to kL2PrefetchMaxBytes of them have those constants prefetched from a
/// side stream forked after the kL2PrefetchAhead-th such layer before them (or after the run's first layer).
inline constexpr size_t kL2PrefetchAhead = 3;
inline constexpr size_t kL2PrefetchMinBytes = size_t{64} << 10;
inline constexpr size_t kL2PrefetchMaxBytes = size_t{8} << 20;

/// The ranges to prefetch after each layer position of `layerNodes` (node ids in run order), reading constants at
/// `constantAddress` (by value id; null: not on the device); empty when nothing is prefetched.
std::vector<std::vector<backends::DeviceRange>> planL2Prefetch(ir::Graph const& g,
                                                               std::vector<int32_t> const& layerNodes,
                                                               std::vector<void*> const& constantAddress);

/// Builds an engine core from plan bytes: reads and verifies the plan, creates every kernel by tactic name.
Result<std::shared_ptr<EngineCore>> loadEngine(void const* blob, size_t size, Reporter const& reporter,
                                               std::shared_ptr<MemoryBudget> budget, int32_t maxThreads,
                                               IGpuAllocator* allocator = nullptr);

class EngineImpl final : public ICudaEngine {
 public:
  explicit EngineImpl(std::shared_ptr<EngineCore> core, bool owning);
  ~EngineImpl() noexcept override;

  Dims getTensorShape(char const* tensorName) const noexcept override;
  DataType getTensorDataType(char const* tensorName) const noexcept override;
  int32_t getNbLayers() const noexcept override { return static_cast<int32_t>(core_->layerNodes.size()); }
  IHostMemory* serialize() const noexcept override;
  IExecutionContext* createExecutionContext(ExecutionContextAllocationStrategy strategy) noexcept override;
  IExecutionContext* createExecutionContextWithoutDeviceMemory() noexcept override;
  size_t getDeviceMemorySize() const noexcept override { return static_cast<size_t>(core_->plan.arenaSize); }
  size_t getDeviceMemorySizeForProfile(int32_t profileIndex) const noexcept override;
  int64_t getDeviceMemorySizeV2() const noexcept override { return core_->plan.arenaSize; }
  int64_t getDeviceMemorySizeForProfileV2(int32_t profileIndex) const noexcept override;
  bool isShapeInferenceIO(char const* tensorName) const noexcept override { return false; }
  TensorIOMode getTensorIOMode(char const* tensorName) const noexcept override;
  int32_t getTensorBytesPerComponent(char const* tensorName) const noexcept override;
  int32_t getTensorBytesPerComponent(char const* tensorName, int32_t profileIndex) const noexcept override;
  int32_t getTensorComponentsPerElement(char const* tensorName) const noexcept override;
  int32_t getTensorComponentsPerElement(char const* tensorName, int32_t profileIndex) const noexcept override;
  TensorFormat getTensorFormat(char const* tensorName) const noexcept override;
  TensorFormat getTensorFormat(char const* tensorName, int32_t profileIndex) const noexcept override;
  char const* getTensorFormatDesc(char const* tensorName) const noexcept override;
  char const* getTensorFormatDesc(char const* tensorName, int32_t profileIndex) const noexcept override;
  int32_t getTensorVectorizedDim(char const* tensorName) const noexcept override;
  int32_t getTensorVectorizedDim(char const* tensorName, int32_t profileIndex) const noexcept override;
  TensorLocation getTensorLocation(char const* tensorName) const noexcept override;
  int32_t getNbOptimizationProfiles() const noexcept override {
    return static_cast<int32_t>(core_->plan.profiles.size());
  }
  Dims getProfileShape(char const* tensorName, int32_t profileIndex, OptProfileSelector select) const noexcept override;
  EngineCapability getEngineCapability() const noexcept override { return EngineCapability::kSTANDARD; }
  int32_t getNbIOTensors() const noexcept override { return static_cast<int32_t>(core_->io.size()); }
  char const* getIOTensorName(int32_t index) const noexcept override;
  ProfilingVerbosity getProfilingVerbosity() const noexcept override {
    return static_cast<ProfilingVerbosity>(core_->plan.profilingVerbosity);
  }
  IEngineInspector* createEngineInspector() const noexcept override;
  char const* getName() const noexcept override { return core_->plan.name.c_str(); }
  TacticSources getTacticSources() const noexcept override { return core_->plan.tacticSources; }
  HardwareCompatibilityLevel getHardwareCompatibilityLevel() const noexcept override {
    return HardwareCompatibilityLevel::kNONE;
  }
  void setErrorRecorder(IErrorRecorder* recorder) noexcept override { reporter_.setRecorder(recorder); }
  IErrorRecorder* getErrorRecorder() const noexcept override { return reporter_.recorder(); }

  std::shared_ptr<EngineCore> const& core() const { return core_; }

 private:
  // Every profile of an engine binds its I/O in one format: the per-profile queries check the index only.
  bool validProfile(int32_t profileIndex) const {
    return profileIndex >= 0 && profileIndex < static_cast<int32_t>(core_->plan.profiles.size());
  }

  std::shared_ptr<EngineCore> core_;
  bool owning_;
  Reporter reporter_;
  mutable std::string formatDesc_;
};

/// Creates an inspector over an engine core.
IEngineInspector* createInspector(std::shared_ptr<EngineCore> core, Reporter const& reporter);

/// Creates a context; null with the reason reported on failure.
IExecutionContext* createContext(std::shared_ptr<EngineCore> core, ExecutionContextAllocationStrategy strategy,
                                 Reporter const& reporter);

}  // namespace kiln::runtime
