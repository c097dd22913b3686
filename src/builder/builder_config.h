// IBuilderConfig and IOptimizationProfile implementations: plain settings the build reads.
#pragma once

#include "builder/timing_cache.h"

#include <array>
#include <map>
#include <string>
#include <vector>

#include "core/logging.h"
#include "kiln/kiln.h"

namespace kiln::builder {

class OptimizationProfileImpl final : public IOptimizationProfile {
 public:
  struct Entry {
    std::array<Dims, 3> dims{};
    std::array<bool, 3> set{};
    std::array<std::vector<int64_t>, 3> values;
    std::array<std::vector<int32_t>, 3> values32;
  };

  bool setDimensions(char const* inputName, OptProfileSelector select, Dims const& dims) noexcept override;
  Dims getDimensions(char const* inputName, OptProfileSelector select) const noexcept override;
  bool setShapeValues(char const* inputName, OptProfileSelector select, int32_t const* values,
                      int32_t nbValues) noexcept override;
  int32_t getNbShapeValues(char const* inputName) const noexcept override;
  int32_t const* getShapeValues(char const* inputName, OptProfileSelector select) const noexcept override;
  bool setShapeValuesV2(char const* inputName, OptProfileSelector select, int64_t const* values,
                        int32_t nbValues) noexcept override;
  int64_t const* getShapeValuesV2(char const* inputName, OptProfileSelector select) const noexcept override;
  bool setExtraMemoryTarget(float target) noexcept override;
  float getExtraMemoryTarget() const noexcept override { return extraMemoryTarget_; }
  bool isValid() const noexcept override;

  std::map<std::string, Entry> const& entries() const { return entries_; }

 private:
  std::map<std::string, Entry> entries_;
  float extraMemoryTarget_ = 1.0f;
};

class BuilderConfigImpl final : public IBuilderConfig {
 public:
  BuilderConfigImpl() { reset(); }
  void setAvgTimingIterations(int32_t avgTiming) noexcept override { avgTiming_ = std::max(1, avgTiming); }
  int32_t getAvgTimingIterations() const noexcept override { return avgTiming_; }
  void setEngineCapability(EngineCapability capability) noexcept override { capability_ = capability; }
  EngineCapability getEngineCapability() const noexcept override { return capability_; }
  void setFlags(BuilderFlags builderFlags) noexcept override { flags_ = builderFlags; }
  BuilderFlags getFlags() const noexcept override { return flags_; }
  void clearFlag(BuilderFlag f) noexcept override { flags_ &= ~(1u << static_cast<uint32_t>(f)); }
  void setFlag(BuilderFlag f) noexcept override { flags_ |= 1u << static_cast<uint32_t>(f); }
  bool getFlag(BuilderFlag f) const noexcept override { return flags_ & (1u << static_cast<uint32_t>(f)); }
  void setDeviceType(ILayer const* layer, DeviceType deviceType) noexcept override;
  DeviceType getDeviceType(ILayer const* layer) const noexcept override;
  bool isDeviceTypeSet(ILayer const* layer) const noexcept override;
  void resetDeviceType(ILayer const* layer) noexcept override;
  void setDefaultDeviceType(DeviceType deviceType) noexcept override {
    defaultDevice_ = deviceType;
    defaultDeviceSet_ = true;
  }
  DeviceType getDefaultDeviceType() const noexcept override { return defaultDevice_; }
  void reset() noexcept override;
  void setProfileStream(cudaStream_t const stream) noexcept override { profileStream_ = stream; }
  cudaStream_t getProfileStream() const noexcept override { return profileStream_; }
  int32_t addOptimizationProfile(IOptimizationProfile const* profile) noexcept override;
  int32_t getNbOptimizationProfiles() const noexcept override { return static_cast<int32_t>(profiles_.size()); }
  void setProfilingVerbosity(ProfilingVerbosity verbosity) noexcept override { verbosity_ = verbosity; }
  ProfilingVerbosity getProfilingVerbosity() const noexcept override { return verbosity_; }
  bool setTacticSources(TacticSources tacticSources) noexcept override;
  TacticSources getTacticSources() const noexcept override { return tacticSources_; }
  void setMemoryPoolLimit(MemoryPoolType pool, std::size_t poolSize) noexcept override;
  std::size_t getMemoryPoolLimit(MemoryPoolType pool) const noexcept override;
  void setBuilderOptimizationLevel(int32_t level) noexcept override;
  int32_t getBuilderOptimizationLevel() noexcept override { return optLevel_; }
  void setHardwareCompatibilityLevel(HardwareCompatibilityLevel level) noexcept override { hwCompat_ = level; }
  HardwareCompatibilityLevel getHardwareCompatibilityLevel() const noexcept override { return hwCompat_; }
  void setProgressMonitor(IProgressMonitor* monitor) noexcept override { monitor_ = monitor; }
  IProgressMonitor* getProgressMonitor() const noexcept override { return monitor_; }
  bool setMaxAuxStreams(int32_t nbStreams) noexcept override;
  int32_t getMaxAuxStreams() const noexcept override { return maxAuxStreams_; }

  ITimingCache* createTimingCache(void const* blob, std::size_t size) const noexcept override;
  bool setTimingCache(ITimingCache const& cache, bool ignoreMismatch) noexcept override;
  ITimingCache const* getTimingCache() const noexcept override { return timingCache_; }
  /// The cache builds read and update (null: none set).
  TimingCacheImpl* timingCache() const { return timingCache_; }

  void setReporter(Reporter const* r) { reporter_ = r; }
  /// Copies of the profiles added (TensorRT copies them too).
  using ProfileEntries = std::map<std::string, OptimizationProfileImpl::Entry>;
  std::vector<ProfileEntries> const& profiles() const { return profiles_; }
  /// True when setDefaultDeviceType was called (else the builder picks: GPU when present, else CPU).
  bool defaultDeviceSet() const { return defaultDeviceSet_; }
  int32_t optimizationLevel() const { return optLevel_; }

 private:
  Reporter const* reporter_ = nullptr;
  int32_t avgTiming_ = 1;
  EngineCapability capability_ = EngineCapability::kSTANDARD;
  BuilderFlags flags_ = 0;
  DeviceType defaultDevice_ = DeviceType::kGPU;
  bool defaultDeviceSet_ = false;
  std::map<ILayer const*, DeviceType> layerDevices_;
  cudaStream_t profileStream_ = nullptr;
  std::vector<std::map<std::string, OptimizationProfileImpl::Entry>> profiles_;
  ProfilingVerbosity verbosity_ = ProfilingVerbosity::kLAYER_NAMES_ONLY;
  TacticSources tacticSources_ = 0;
  std::map<MemoryPoolType, std::size_t> poolLimits_;
  int32_t optLevel_ = 3;
  HardwareCompatibilityLevel hwCompat_ = HardwareCompatibilityLevel::kNONE;
  IProgressMonitor* monitor_ = nullptr;
  int32_t maxAuxStreams_ = 0;
  TimingCacheImpl* timingCache_ = nullptr;  // not owned
};

}  // namespace kiln::builder
