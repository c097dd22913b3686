// IBuilderConfig / IOptimizationProfile implementations.
#include "builder/builder_config.h"

#include "core/dims.h"
#include "core/memory.h"

namespace kiln::builder {

bool OptimizationProfileImpl::setDimensions(char const* inputName, OptProfileSelector select, Dims const& dims) noexcept {
  if (!inputName || dims.nbDims < 0 || dims.nbDims > Dims::MAX_DIMS) return false;
  for (int32_t i = 0; i < dims.nbDims; ++i)
    if (dims.d[i] < 0) return false;
  auto s = static_cast<size_t>(select);
  if (s > 2) return false;
  Entry& e = entries_[inputName];
  // Consistent with what is already set: same rank, min <= opt <= max per dimension.
  for (size_t o = 0; o < 3; ++o) {
    if (o == s || !e.set[o]) continue;
    if (e.dims[o].nbDims != dims.nbDims) return false;
    for (int32_t i = 0; i < dims.nbDims; ++i) {
      int64_t lo = o < s ? e.dims[o].d[i] : dims.d[i];
      int64_t hi = o < s ? dims.d[i] : e.dims[o].d[i];
      if (lo > hi) return false;
    }
  }
  e.dims[s] = dims;
  e.set[s] = true;
  return true;
}

Dims OptimizationProfileImpl::getDimensions(char const* inputName, OptProfileSelector select) const noexcept {
  Dims none{};
  none.nbDims = -1;
  if (!inputName) return none;
  auto it = entries_.find(inputName);
  auto s = static_cast<size_t>(select);
  if (it == entries_.end() || s > 2 || !it->second.set[s]) return none;
  return it->second.dims[s];
}

bool OptimizationProfileImpl::setShapeValues(char const* inputName, OptProfileSelector select, int32_t const* values,
                                             int32_t nbValues) noexcept {
  if (!inputName || !values || nbValues < 0 || static_cast<size_t>(select) > 2) return false;
  Entry& e = entries_[inputName];
  e.values32[static_cast<size_t>(select)].assign(values, values + nbValues);
  e.values[static_cast<size_t>(select)].assign(values, values + nbValues);
  return true;
}

int32_t OptimizationProfileImpl::getNbShapeValues(char const* inputName) const noexcept {
  if (!inputName) return -1;
  auto it = entries_.find(inputName);
  if (it == entries_.end()) return -1;
  return static_cast<int32_t>(it->second.values[0].size());
}

int32_t const* OptimizationProfileImpl::getShapeValues(char const* inputName, OptProfileSelector select) const noexcept {
  if (!inputName || static_cast<size_t>(select) > 2) return nullptr;
  auto it = entries_.find(inputName);
  if (it == entries_.end() || it->second.values32[static_cast<size_t>(select)].empty()) return nullptr;
  return it->second.values32[static_cast<size_t>(select)].data();
}

bool OptimizationProfileImpl::setShapeValuesV2(char const* inputName, OptProfileSelector select, int64_t const* values,
                                               int32_t nbValues) noexcept {
  if (!inputName || !values || nbValues < 0 || static_cast<size_t>(select) > 2) return false;
  Entry& e = entries_[inputName];
  e.values[static_cast<size_t>(select)].assign(values, values + nbValues);
  e.values32[static_cast<size_t>(select)].assign(values, values + nbValues);
  return true;
}

int64_t const* OptimizationProfileImpl::getShapeValuesV2(char const* inputName, OptProfileSelector select) const noexcept {
  if (!inputName || static_cast<size_t>(select) > 2) return nullptr;
  auto it = entries_.find(inputName);
  if (it == entries_.end() || it->second.values[static_cast<size_t>(select)].empty()) return nullptr;
  return it->second.values[static_cast<size_t>(select)].data();
}

bool OptimizationProfileImpl::setExtraMemoryTarget(float target) noexcept {
  if (target < 0.0f) return false;
  extraMemoryTarget_ = target;
  return true;
}

bool OptimizationProfileImpl::isValid() const noexcept {
  if (entries_.empty()) return false;
  for (auto const& [name, e] : entries_) {
    bool hasDims = e.set[0] || e.set[1] || e.set[2];
    if (hasDims) {
      if (!(e.set[0] && e.set[1] && e.set[2])) return false;
      for (int s = 1; s < 3; ++s)
        if (e.dims[s].nbDims != e.dims[0].nbDims) return false;
      for (int32_t i = 0; i < e.dims[0].nbDims; ++i)
        if (!(e.dims[0].d[i] <= e.dims[1].d[i] && e.dims[1].d[i] <= e.dims[2].d[i])) return false;
    }
  }
  return true;
}

void BuilderConfigImpl::setDeviceType(ILayer const* layer, DeviceType deviceType) noexcept {
  if (layer) layerDevices_[layer] = deviceType;
}
DeviceType BuilderConfigImpl::getDeviceType(ILayer const* layer) const noexcept {
  auto it = layerDevices_.find(layer);
  return it == layerDevices_.end() ? defaultDevice_ : it->second;
}
bool BuilderConfigImpl::isDeviceTypeSet(ILayer const* layer) const noexcept { return layerDevices_.count(layer) != 0; }
void BuilderConfigImpl::resetDeviceType(ILayer const* layer) noexcept { layerDevices_.erase(layer); }

void BuilderConfigImpl::reset() noexcept {
  timingCache_ = nullptr;
  avgTiming_ = 1;
  capability_ = EngineCapability::kSTANDARD;
  flags_ = 1u << static_cast<uint32_t>(BuilderFlag::kTF32);  // on by default, as in TensorRT
  defaultDevice_ = DeviceType::kGPU;
  defaultDeviceSet_ = false;
  layerDevices_.clear();
  profileStream_ = nullptr;
  profiles_.clear();
  verbosity_ = ProfilingVerbosity::kLAYER_NAMES_ONLY;
  // Unlike TensorRT 10, every source is on by default (ARCHITECTURE.md).
  tacticSources_ = (1u << static_cast<uint32_t>(EnumMax<TacticSource>())) - 1;
  poolLimits_.clear();
  optLevel_ = 3;
  hwCompat_ = HardwareCompatibilityLevel::kNONE;
  monitor_ = nullptr;
  maxAuxStreams_ = 0;
}

int32_t BuilderConfigImpl::addOptimizationProfile(IOptimizationProfile const* profile) noexcept {
  auto const* p = dynamic_cast<OptimizationProfileImpl const*>(profile);
  if (!p) {
    if (reporter_) reporter_->fail(invalidArgument("addOptimizationProfile: not a profile from createOptimizationProfile()"));
    return -1;
  }
  if (!p->isValid()) {
    if (reporter_)
      reporter_->fail(invalidArgument("addOptimizationProfile: the profile is invalid (every input needs min <= opt <= max "
                                      "of one rank, all three set)"));
    return -1;
  }
  profiles_.push_back(p->entries());
  return static_cast<int32_t>(profiles_.size()) - 1;
}

bool BuilderConfigImpl::setTacticSources(TacticSources tacticSources) noexcept {
  TacticSources all = (1u << static_cast<uint32_t>(EnumMax<TacticSource>())) - 1;
  if (tacticSources & ~all) return false;
  tacticSources_ = tacticSources;
  return true;
}

void BuilderConfigImpl::setMemoryPoolLimit(MemoryPoolType pool, std::size_t poolSize) noexcept { poolLimits_[pool] = poolSize; }

std::size_t BuilderConfigImpl::getMemoryPoolLimit(MemoryPoolType pool) const noexcept {
  auto it = poolLimits_.find(pool);
  if (it != poolLimits_.end()) return it->second;
  if (pool == MemoryPoolType::kWORKSPACE) return static_cast<std::size_t>(MemoryBudget::defaultLimit());
  return 0;
}

void BuilderConfigImpl::setBuilderOptimizationLevel(int32_t level) noexcept {
  if (level < 0 || level > 5) {
    if (reporter_) reporter_->fail(invalidArgument("builder optimization level must be 0..5, got ", level));
    return;
  }
  optLevel_ = level;
}

bool BuilderConfigImpl::setMaxAuxStreams(int32_t nbStreams) noexcept {
  if (nbStreams < 0) return false;
  maxAuxStreams_ = nbStreams;
  return true;
}

ITimingCache* BuilderConfigImpl::createTimingCache(void const* blob, std::size_t size) const noexcept {
  auto c = TimingCacheImpl::parse(blob, size);
  if (!c) {
    if (reporter_) reporter_->fail(c.status().withContext("createTimingCache"));
    return nullptr;
  }
  return std::move(c).value().release();
}

bool BuilderConfigImpl::setTimingCache(ITimingCache const& cache, bool ignoreMismatch) noexcept {
  auto const* c = dynamic_cast<TimingCacheImpl const*>(&cache);
  if (!c) {
    if (reporter_) reporter_->fail(invalidArgument("setTimingCache: the cache was not created by createTimingCache"));
    return false;
  }
  timingCache_ = const_cast<TimingCacheImpl*>(c);  // builds update it, as TensorRT's do
  return true;
}

}  // namespace kiln::builder
