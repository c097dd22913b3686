// Engine loading (plan -> kernels) and the ICudaEngine implementation.
#include <algorithm>
#include <limits>
#include <new>
#include <utility>

#include "core/host_memory.h"
#include "ir/contiguous_views.h"
#include "runtime/engine_core.h"
#include "runtime/plugins.h"

namespace kiln::runtime {

namespace {

// A GPU engine's layers read constants from device memory: each constant a layer reads is uploaded once, all of
// them into one allocation, each at a 256-byte boundary: loading makes one allocation (one fault point) instead of
// one per constant, and the weights lie together in the order the plan lists them.
Status uploadConstants(EngineCore& core) {
  constexpr size_t kAlign = 256;
  ir::Graph const& g = *core.plan.graph;
  core.constantAddress.assign(g.values().size(), nullptr);
  std::vector<bool> used(g.values().size(), false);
  for (auto const& n : g.nodes())
    if (n->op != ir::OpType::kConstant)
      for (ir::Value const* v : n->inputs)
        if (v) used[v->id] = true;
  std::vector<std::pair<ir::Node const*, size_t>> placed;  // constant node, offset in the block
  size_t total = 0;
  for (auto const& n : g.nodes()) {
    if (n->op != ir::OpType::kConstant || !n->constant || !used[n->output(0)->id]) continue;
    size_t const bytes = std::max<size_t>(n->constant->bytes(), 1);
    if (bytes > std::numeric_limits<size_t>::max() - total - kAlign)
      return invalidPlan("the engine's constants exceed the address space");
    placed.emplace_back(n.get(), total);
    total += (bytes + kAlign - 1) / kAlign * kAlign;
  }
  if (placed.empty()) return Status::ok();
  KILN_ASSIGN_OR_RETURN(auto buf, backends::DeviceBuffer::allocate(core.device, total, "engine constants"));
  auto* base = static_cast<char*>(buf.data());
  for (auto const& [n, offset] : placed) {
    HostTensor const& c = *n->constant;
    KILN_RETURN_IF_ERROR(
        core.device->copy(base + offset, c.data(), c.bytes(), backends::CopyKind::kHostToDevice, nullptr));
    core.constantAddress[n->output(0)->id] = base + offset;
  }
  core.deviceConstants.push_back(std::move(buf));
  return core.device->synchronize(nullptr).withContext("uploading the engine's constants");
}

}  // namespace

Result<std::shared_ptr<EngineCore>> loadEngine(void const* blob, size_t size, Reporter const& reporter,
                                               std::shared_ptr<MemoryBudget> budget, int32_t maxThreads,
                                               IGpuAllocator* allocator) {
  if (!blob || size == 0) return invalidArgument("empty plan (null or 0 bytes)");
  auto core = std::make_shared<EngineCore>();
  core->reporter = reporter;
  core->budget = std::move(budget);
  core->maxThreads = maxThreads;
  KILN_ASSIGN_OR_RETURN(core->plan, plan::readPlan(blob, size, core->budget.get()));
  plan::PlanInfo& p = core->plan;
  core->allocator = allocator;
  if (p.target != "cpu") {
    auto dev = backends::gpuBackend();
    if (!dev) return dev.status().withContext(strCat("the plan targets '", p.target, "'"));
    if ((*dev)->target() != p.target)
      return unsupported("the plan was built for ", p.target, " but this GPU is ", (*dev)->target(), " (",
                         (*dev)->deviceDescription(), "): rebuild the engine on this GPU");
    core->device = *dev;
  }
  KILN_RETURN_IF_ERROR(resolvePlugins(*p.graph));
  ir::Graph const& g = *p.graph;
  if (p.placements.size() != g.values().size() || p.workspaceOffsets.size() != g.nodes().size() ||
      p.workspaceSizes.size() != g.nodes().size())
    return invalidPlan("the memory plan does not match the graph");
  if (p.arenaSize < 0) return invalidPlan("negative arena size");
  // offset + size may overflow int64 for hostile values: compare without adding.
  auto outside = [&](int64_t offset, int64_t bytes) {
    return bytes < 0 || offset > p.arenaSize || bytes > p.arenaSize - offset;
  };
  // Kernels may assume their tensors are aligned to 64 bytes (the builder places them at multiples of 256).
  constexpr int64_t kArenaOffsetAlign = 64;
  for (size_t v = 0; v < p.placements.size(); ++v) {
    auto const& pl = p.placements[v];
    if (pl.offset >= 0 && outside(pl.offset, pl.size))
      return invalidPlan("a tensor placement lies outside the activation arena");
    if (pl.offset >= 0 && pl.offset % kArenaOffsetAlign != 0)
      return invalidPlan("value ", v, " is placed at arena offset ", pl.offset, ", not aligned to ", kArenaOffsetAlign,
                         " bytes");
  }
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (p.workspaceOffsets[i] >= 0 && outside(p.workspaceOffsets[i], p.workspaceSizes[i]))
      return invalidPlan("a workspace lies outside the activation arena");
    if (p.workspaceOffsets[i] >= 0 && p.workspaceOffsets[i] % kArenaOffsetAlign != 0)
      return invalidPlan("the workspace of node ", i, " is at arena offset ", p.workspaceOffsets[i],
                         ", not aligned to ", kArenaOffsetAlign, " bytes");
  }
  if (p.profiles.empty()) return invalidPlan("the plan has no optimization profile");
  for (auto const& prof : p.profiles)
    if (prof.inputs.size() != g.inputs().size()) return invalidPlan("an optimization profile does not cover every input");

  core->kernels.resize(g.nodes().size());
  for (auto const& np : g.nodes()) {
    ir::Node const& n = *np;
    if (n.op == ir::OpType::kConstant) continue;
    core->layerNodes.push_back(n.id);
    backends::Tactic const* t = backends::TacticRegistry::instance().find(n.tactic);
    if (!t) return errorStatus(StatusCode::kNotFound, n.describe(), ": the plan asks for tactic '", n.tactic,
                               "', which this build of Kiln does not have");
    if (t->op != n.op) return invalidPlan(n.describe(), ": tactic '", n.tactic, "' is for another op");
    if ((t->device == DeviceType::kGPU) != (core->device != nullptr))
      return invalidPlan(n.describe(), ": tactic '", n.tactic, "' is for another device than the plan's target ", p.target);
    if (n.attrs.has(ir::kInPlaceAttr) && n.op != ir::OpType::kConcatenation && n.op != ir::OpType::kSlice &&
        n.op != ir::OpType::kGather)
      return invalidPlan(n.describe(), ": only a Concatenation, Slice or Gather can be planned in place");
    if (n.attrs.has(ir::kInPlaceAttr)) {
      // One flag per input of a Concatenation, 0 (copied) or 1 (in place); {1} for a Slice or Gather view. Where
      // the tensors lie is checked against the placements whenever the context's shapes change.
      std::vector<int64_t> const flags = n.attrs.getInts(ir::kInPlaceAttr);
      bool const concat = n.op == ir::OpType::kConcatenation;
      bool good = flags.size() == (concat ? n.inputs.size() : 1) && !n.outputs.empty();
      for (int64_t f : flags) good = good && (f == 1 || (concat && f == 0));
      for (size_t j = 0; concat && good && j < n.inputs.size(); ++j) good = flags[j] == 0 || n.inputs[j] != nullptr;
      if (!good || (!concat && !n.input(0)))
        return invalidPlan(n.describe(),
                           ": its in_place flags must be one 0 or 1 per input of a Concatenation, or "
                           "{1} for a Slice or Gather with an input");
    }
    core->hasHostFallback = core->hasHostFallback || backends::isHostFallback(*t);
    auto k = t->create(n);
    if (!k) return k.status();
    core->kernels[n.id] = std::move(k).value();
  }
  if (core->device) {
    KILN_RETURN_IF_ERROR(uploadConstants(*core));
    core->l2Prefetch = planL2Prefetch(g, core->layerNodes, core->constantAddress);
  }
  // Padded (vectorized) layouts exist only at bindings: a Reformat reading or writing one must be at the binding
  // that has that format, so that the user's buffer is the padded size the engine reports (a corrupt plan could
  // otherwise make it read or write past the buffer).
  auto ioFormatOf = [&](ir::Value const* v) {
    auto it = p.ioFormats.find(v->id);
    return it == p.ioFormats.end() ? TensorFormat::kLINEAR : it->second;
  };
  for (auto const& n : g.nodes()) {
    if (n->op != ir::OpType::kReformat || n->inputs.size() != 1 || n->outputs.size() != 1 || !n->inputs[0]) continue;
    for (bool in : {true, false}) {
      auto f = static_cast<TensorFormat>(n->attrs.getInt(in ? "from" : "to", 0));
      ir::Value const* v = in ? n->inputs[0] : n->outputs[0];
      auto l = formatLayout(f, v->shape.nbDims);
      if (l && l->components > 1 && ((in ? !v->isInput : !v->isOutput) || ioFormatOf(v) != f))
        return invalidPlan(n->describe(), ": reformats ", in ? "from " : "to ", formatName(f), " at '", v->name,
                           "', which is not ", in ? "an input" : "an output", " bound in that format");
    }
  }
  auto addIO = [&](ir::Value const* v, int32_t inputIndex, TensorIOMode mode) -> Status {
    TensorFormat f = ioFormatOf(v);
    Status ok = checkIOFormat(f, v->dtype, v->shape.nbDims);
    if (!ok.isOk()) return invalidPlan("I/O tensor '", v->name, "': ", ok.message());
    IOTensor t{v->name, v->id, inputIndex, mode, v->dtype, v->shape, f, {}};
    KILN_ASSIGN_OR_RETURN(t.layout, formatLayout(f, v->shape.nbDims));
    core->io.push_back(std::move(t));
    return Status::ok();
  };
  for (size_t i = 0; i < g.inputs().size(); ++i)
    KILN_RETURN_IF_ERROR(addIO(g.inputs()[i], static_cast<int32_t>(i), TensorIOMode::kINPUT));
  for (ir::Value const* v : g.outputs()) {
    if (v->isInput) return invalidPlan("output '", v->name, "' is also an input");
    KILN_RETURN_IF_ERROR(addIO(v, -1, TensorIOMode::kOUTPUT));
  }
  for (size_t i = 0; i < core->io.size(); ++i) {
    if (!core->ioByName.emplace(core->io[i].name, static_cast<int32_t>(i)).second)
      return invalidPlan("I/O tensor name '", core->io[i].name, "' appears twice");
  }
  return core;
}

EngineImpl::EngineImpl(std::shared_ptr<EngineCore> core, bool owning)
    : core_(std::move(core)), owning_(owning), reporter_(core_->reporter) {
  if (owning_) core_->owner.store(this);
}

EngineImpl::~EngineImpl() noexcept {
  if (!owning_) return;
  core_->owner.store(nullptr);
  int32_t live = core_->liveContexts.load();
  if (live > 0)
    core_->reporter.warning(strCat("engine '", core_->plan.name, "' destroyed while ", live,
                                   " execution context(s) still use it; they keep its state alive"));
}

Dims EngineImpl::getTensorShape(char const* tensorName) const noexcept {
  IOTensor const* t = core_->findIO(tensorName);
  if (!t) {
    reporter_.fail(invalidArgument("getTensorShape: '", tensorName ? tensorName : "(null)",
                                   "' is not an input or output tensor of the engine"));
    Dims none{};
    none.nbDims = -1;
    return none;
  }
  return t->dims;
}

DataType EngineImpl::getTensorDataType(char const* tensorName) const noexcept {
  IOTensor const* t = core_->findIO(tensorName);
  if (!t)
    reporter_.fail(invalidArgument("getTensorDataType: '", tensorName ? tensorName : "(null)",
                                   "' is not an input or output tensor of the engine"));
  return t ? t->dtype : DataType::kFLOAT;
}

IHostMemory* EngineImpl::serialize() const noexcept {
  // Not charged to the budget: the caller owns the bytes and may keep them after the engine is gone.
  auto bytes = plan::writePlan(core_->plan, nullptr);
  if (!bytes) {
    reporter_.fail(bytes.status().withContext("serialize"));
    return nullptr;
  }
  return new (std::nothrow) HostMemoryImpl(std::move(bytes).value());
}

IExecutionContext* EngineImpl::createExecutionContext(ExecutionContextAllocationStrategy strategy) noexcept {
  return createContext(core_, strategy, reporter_);
}

IExecutionContext* EngineImpl::createExecutionContextWithoutDeviceMemory() noexcept {
  return createContext(core_, ExecutionContextAllocationStrategy::kUSER_MANAGED, reporter_);
}

size_t EngineImpl::getDeviceMemorySizeForProfile(int32_t profileIndex) const noexcept {
  int64_t s = getDeviceMemorySizeForProfileV2(profileIndex);
  return s < 0 ? 0 : static_cast<size_t>(s);
}

int64_t EngineImpl::getDeviceMemorySizeForProfileV2(int32_t profileIndex) const noexcept {
  if (profileIndex < 0 || profileIndex >= getNbOptimizationProfiles()) return -1;
  return core_->plan.arenaSize;
}

TensorIOMode EngineImpl::getTensorIOMode(char const* tensorName) const noexcept {
  IOTensor const* t = core_->findIO(tensorName);
  return t ? t->mode : TensorIOMode::kNONE;
}

int32_t EngineImpl::getTensorBytesPerComponent(char const* tensorName) const noexcept {
  IOTensor const* t = core_->findIO(tensorName);
  return t ? static_cast<int32_t>(dataTypeSize(t->dtype)) : -1;
}

int32_t EngineImpl::getTensorBytesPerComponent(char const* tensorName, int32_t profileIndex) const noexcept {
  return validProfile(profileIndex) ? getTensorBytesPerComponent(tensorName) : -1;
}

int32_t EngineImpl::getTensorComponentsPerElement(char const* tensorName) const noexcept {
  IOTensor const* t = core_->findIO(tensorName);
  return t ? t->layout.components : -1;
}

int32_t EngineImpl::getTensorComponentsPerElement(char const* tensorName, int32_t profileIndex) const noexcept {
  return validProfile(profileIndex) ? getTensorComponentsPerElement(tensorName) : -1;
}

TensorFormat EngineImpl::getTensorFormat(char const* tensorName) const noexcept {
  IOTensor const* t = core_->findIO(tensorName);
  return t ? t->format : TensorFormat::kLINEAR;
}

TensorFormat EngineImpl::getTensorFormat(char const* tensorName, int32_t profileIndex) const noexcept {
  return validProfile(profileIndex) ? getTensorFormat(tensorName) : TensorFormat::kLINEAR;
}

char const* EngineImpl::getTensorFormatDesc(char const* tensorName) const noexcept {
  IOTensor const* t = core_->findIO(tensorName);
  if (!t) return nullptr;
  formatDesc_ = formatDescription(t->format, t->dtype);
  return formatDesc_.c_str();
}

char const* EngineImpl::getTensorFormatDesc(char const* tensorName, int32_t profileIndex) const noexcept {
  return validProfile(profileIndex) ? getTensorFormatDesc(tensorName) : nullptr;
}

int32_t EngineImpl::getTensorVectorizedDim(char const* tensorName) const noexcept {
  IOTensor const* t = core_->findIO(tensorName);
  return t && t->layout.components > 1 ? t->layout.vecDim : -1;
}

int32_t EngineImpl::getTensorVectorizedDim(char const* tensorName, int32_t profileIndex) const noexcept {
  return validProfile(profileIndex) ? getTensorVectorizedDim(tensorName) : -1;
}

TensorLocation EngineImpl::getTensorLocation(char const* tensorName) const noexcept {
  // On the CPU target "device" memory is host memory; TensorRT reports kDEVICE for execution tensors.
  return TensorLocation::kDEVICE;
}

Dims EngineImpl::getProfileShape(char const* tensorName, int32_t profileIndex, OptProfileSelector select) const noexcept {
  Dims none{};
  none.nbDims = -1;
  IOTensor const* t = core_->findIO(tensorName);
  if (!t || t->inputIndex < 0 || profileIndex < 0 || profileIndex >= getNbOptimizationProfiles()) return none;
  auto const& ps = core_->plan.profiles[profileIndex].inputs[t->inputIndex];
  switch (select) {
    case OptProfileSelector::kMIN: return ps.min;
    case OptProfileSelector::kOPT: return ps.opt;
    case OptProfileSelector::kMAX: return ps.max;
  }
  return none;
}

char const* EngineImpl::getIOTensorName(int32_t index) const noexcept {
  if (index < 0 || index >= getNbIOTensors()) return nullptr;
  return core_->io[index].name.c_str();
}

IEngineInspector* EngineImpl::createEngineInspector() const noexcept { return createInspector(core_, reporter_); }

// Weights stream from device memory on every run when the model's are larger than L2 (BERT-base's and ViT-B's are
// 170 MB in fp16, the H200's L2 50 MB): at small batches each GEMM then waits for its weights (a b1 BERT layer's
// four cuBLASLt GEMMs take 30 us with their weights in device memory, 23 us with them in L2). The weights of each
// layer that reads its constants whole are asked into L2 from a side stream forked after the layer kL2PrefetchAhead
// such layers before it, so the prefetch overlaps the layers in between. Bounds: at least kL2PrefetchMinBytes
// (less is not worth a launch) and at most kL2PrefetchMaxBytes a layer (more is compute-bound work that the
// prefetch would not speed up, and the prefetches in flight must leave L2 to the layers between).
std::vector<std::vector<backends::DeviceRange>> planL2Prefetch(ir::Graph const& g,
                                                               std::vector<int32_t> const& layerNodes,
                                                               std::vector<void*> const& constantAddress) {
  std::vector<std::vector<backends::DeviceRange>> plan(layerNodes.size());
  bool any = false;
  std::vector<size_t> previous;  // positions of the layers so far that read weights whole
  for (size_t pos = 0; pos < layerNodes.size(); ++pos) {
    ir::Node const& n = *g.nodes()[static_cast<size_t>(layerNodes[pos])];
    if (n.op != ir::OpType::kMatrixMultiply && n.op != ir::OpType::kConvolution && n.op != ir::OpType::kDeconvolution)
      continue;
    std::vector<backends::DeviceRange> ranges;
    size_t total = 0;
    for (ir::Value const* v : n.inputs) {
      if (!v || !v->producer || v->producer->op != ir::OpType::kConstant || !v->producer->constant ||
          static_cast<size_t>(v->id) >= constantAddress.size() || !constantAddress[static_cast<size_t>(v->id)])
        continue;
      ranges.push_back({constantAddress[static_cast<size_t>(v->id)], v->producer->constant->bytes()});
      total += ranges.back().bytes;
    }
    if (ranges.empty()) continue;
    size_t const at = previous.size() >= kL2PrefetchAhead ? previous[previous.size() - kL2PrefetchAhead] : 0;
    previous.push_back(pos);
    if (total < kL2PrefetchMinBytes || total > kL2PrefetchMaxBytes || at == pos) continue;
    plan[at].insert(plan[at].end(), ranges.begin(), ranges.end());
    any = true;
  }
  if (!any) plan.clear();
  return plan;
}

}  // namespace kiln::runtime
