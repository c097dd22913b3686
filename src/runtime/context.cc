// IExecutionContext: input shapes and profile, tensor addresses, activation arena, and the step loop that
// runs each node's kernel (synchronously on the CPU target).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <unordered_map>

#include "core/thread_pool.h"
#include "ir/contiguous_views.h"
#include "runtime/engine_core.h"

namespace kiln::runtime {
namespace {

using ir::Node;
using ir::Value;

// Largest tensor whose size is decided while running (data-dependent extents, shapes read from tensors): 8 GiB
// (as the ONNX parser's largest constant), far above what the CPU target runs, far below what a corrupt or
// hostile shape value asks for.
constexpr size_t kMaxRunTimeSizedBytes = size_t{1} << 33;

class ContextImpl final : public IExecutionContext {
 public:
  ContextImpl(std::shared_ptr<EngineCore> core, ExecutionContextAllocationStrategy strategy, Reporter const& reporter)
      : core_(std::move(core)), strategy_(strategy), reporter_(reporter), shadow_(core_, false) {
    core_->liveContexts.fetch_add(1);
    ir::Graph const& g = *core_->plan.graph;
    inputShapes_.resize(g.inputs().size());
    inputSet_.assign(g.inputs().size(), false);
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      inputShapes_[i] = g.inputs()[i]->shape;
      inputSet_[i] = dimsKnown(inputShapes_[i]);
    }
    addresses_.assign(core_->io.size(), nullptr);
  }
  ~ContextImpl() noexcept override {
    // Work this context queued may still run on its stream: it must finish before the memory it reads and
    // writes (arena, data-dependent buffers, workspace) goes back, to the pool or to the user's allocator.
    waitForQueuedWork();
    releaseDeviceArena();
    if (core_->device) {
      for (void* e : events_) core_->device->destroyEvent(e);
      core_->device->destroyEvent(doneEvent_);
      if (prefetchFork_) core_->device->destroyEvent(prefetchFork_);
      if (prefetchJoin_) core_->device->destroyEvent(prefetchJoin_);
      if (prefetchStream_) core_->device->destroyStream(prefetchStream_);
    }
    core_->liveContexts.fetch_sub(1);
  }

  Status init() {
    // Per-context kernel state (plugin layers: this context's own plugin copy).
    backends::ContextResources res;
    res.allocator = core_->allocator;
    res.recorder = reporter_.recorder();
    states_.resize(core_->kernels.size());
    for (int32_t id : core_->layerNodes) {
      if (!core_->kernels[id]) continue;
      auto st = core_->kernels[id]->createContextState(res);
      if (!st) return st.status().withContext(core_->plan.graph->nodes()[id]->describe());
      states_[id] = std::move(st).value();
    }
    if (strategy_ == ExecutionContextAllocationStrategy::kSTATIC) return allocateArena();
    return Status::ok();
  }

  void setDebugSync(bool sync) noexcept override { debugSync_ = sync; }
  bool getDebugSync() const noexcept override { return debugSync_; }
  void setProfiler(IProfiler* profiler) noexcept override { profiler_ = profiler; }
  IProfiler* getProfiler() const noexcept override { return profiler_; }
  ICudaEngine const& getEngine() const noexcept override {
    EngineImpl* owner = core_->owner.load();
    return owner ? *static_cast<ICudaEngine const*>(owner) : shadow_;
  }
  void setName(char const* name) noexcept override { name_ = name ? name : ""; }
  char const* getName() const noexcept override { return name_.c_str(); }

  void setDeviceMemory(void* memory) noexcept override { setDeviceMemoryV2(memory, core_->plan.arenaSize); }
  void setDeviceMemoryV2(void* memory, int64_t size) noexcept override {
    if (size < core_->plan.arenaSize) {
      reporter_.fail(invalidArgument("setDeviceMemoryV2: ", size, " bytes given, the engine needs ", core_->plan.arenaSize));
      return;
    }
    if (!memory && core_->plan.arenaSize > 0) {
      reporter_.fail(invalidArgument("setDeviceMemoryV2: null memory"));
      return;
    }
    ownedArena_ = HostBuffer();
    waitForQueuedWork();
    releaseDeviceArena();
    arena_ = static_cast<uint8_t*>(memory);
  }
  Dims getTensorStrides(char const* tensorName) const noexcept override {
    Dims s = getTensorShape(tensorName);
    if (s.nbDims < 0 || !dimsKnown(s)) {
      s.nbDims = -1;
      return s;
    }
    return formatStrides(s, core_->findIO(tensorName)->layout);
  }
  int32_t getOptimizationProfile() const noexcept override { return profile_; }

  bool setInputShape(char const* tensorName, Dims const& dims) noexcept override {
    IOTensor const* t = core_->findIO(tensorName);
    if (!t || t->mode != TensorIOMode::kINPUT)
      return reporter_.fail(invalidArgument("setInputShape: '", tensorName ? tensorName : "(null)",
                                            "' is not an input tensor of the engine"));
    if (dims.nbDims != t->dims.nbDims)
      return reporter_.fail(invalidArgument("setInputShape: '", t->name, "' has rank ", t->dims.nbDims, ", got ",
                                            dimsToString(dims)));
    auto const& ps = core_->plan.profiles[profile_].inputs[t->inputIndex];
    for (int32_t i = 0; i < dims.nbDims; ++i) {
      if (dims.d[i] < ps.min.d[i] || dims.d[i] > ps.max.d[i])
        return reporter_.fail(invalidArgument("setInputShape: '", t->name, "' shape ", dimsToString(dims),
                                              " is outside optimization profile ", profile_, " (min ",
                                              dimsToString(ps.min), ", max ", dimsToString(ps.max), ")"));
    }
    inputShapes_[t->inputIndex] = dims;
    inputSet_[t->inputIndex] = true;
    shapesValid_ = false;
    return true;
  }

  Dims getTensorShape(char const* tensorName) const noexcept override {
    Dims none{};
    none.nbDims = -1;
    IOTensor const* t = core_->findIO(tensorName);
    if (!t) return none;
    if (t->mode == TensorIOMode::kINPUT) return inputShapes_[t->inputIndex];
    if (!allInputDimensionsSpecified()) return t->dims;
    Status s = const_cast<ContextImpl*>(this)->ensureShapes();
    if (!s.isOk()) {
      reporter_.fail(s);
      return none;
    }
    return state_.info[t->valueId].shape;
  }

  bool allInputDimensionsSpecified() const noexcept override {
    for (bool b : inputSet_)
      if (!b) return false;
    return true;
  }
  // Kiln has no shape-tensor inputs yet, so every shape input is specified.
  bool allInputShapesSpecified() const noexcept override { return true; }
  void setErrorRecorder(IErrorRecorder* recorder) noexcept override { reporter_.setRecorder(recorder); }
  IErrorRecorder* getErrorRecorder() const noexcept override { return reporter_.recorder(); }

  bool executeV2(void* const* bindings) noexcept override {
    if (!bindings) return reporter_.fail(invalidArgument("executeV2: null bindings"));
    for (size_t i = 0; i < core_->io.size(); ++i) addresses_[i] = bindings[i];
    // Synchronous: on the GPU, the legacy default stream, waited for.
    if (!run("executeV2", nullptr)) return false;
    if (core_->device) {
      Status s = core_->device->synchronize(nullptr);
      if (!s.isOk()) return reporter_.fail(s.withContext("executeV2"));
    }
    return true;
  }

  bool setOptimizationProfileAsync(int32_t profileIndex, cudaStream_t stream) noexcept override {
    if (profileIndex < 0 || profileIndex >= static_cast<int32_t>(core_->plan.profiles.size()))
      return reporter_.fail(invalidArgument("setOptimizationProfileAsync: profile ", profileIndex, " does not exist (the engine has ",
                                            core_->plan.profiles.size(), ")"));
    profile_ = profileIndex;
    ir::Graph const& g = *core_->plan.graph;
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      inputShapes_[i] = g.inputs()[i]->shape;
      inputSet_[i] = dimsKnown(inputShapes_[i]);
    }
    shapesValid_ = false;
    return true;
  }
  void setEnqueueEmitsProfile(bool v) noexcept override { enqueueEmitsProfile_ = v; }
  bool getEnqueueEmitsProfile() const noexcept override { return enqueueEmitsProfile_; }
  bool reportToProfiler() const noexcept override {
    if (!profiler_) return reporter_.fail(errorStatus(StatusCode::kInvalidState, "reportToProfiler: no profiler set"));
    for (auto const& [name, ms] : lastTimes_) profiler_->reportLayerTime(name.c_str(), ms);
    return true;
  }

  bool setTensorAddress(char const* tensorName, void* data) noexcept override {
    IOTensor const* t = core_->findIO(tensorName);
    if (!t)
      return reporter_.fail(invalidArgument("setTensorAddress: '", tensorName ? tensorName : "(null)",
                                            "' is not an input or output tensor of the engine"));
    size_t align = dataTypeSize(t->dtype);
    if (align > 1 && reinterpret_cast<uintptr_t>(data) % align != 0)
      return reporter_.fail(invalidArgument("setTensorAddress: the address of '", t->name, "' is not aligned to its ",
                                            dataTypeName(t->dtype), " elements (", align, " bytes)"));
    addresses_[core_->ioByName.at(t->name)] = data;
    return true;
  }
  void const* getTensorAddress(char const* tensorName) const noexcept override {
    IOTensor const* t = core_->findIO(tensorName);
    return t ? addresses_[core_->ioByName.at(t->name)] : nullptr;
  }
  bool setInputTensorAddress(char const* tensorName, void const* data) noexcept override {
    IOTensor const* t = core_->findIO(tensorName);
    if (!t || t->mode != TensorIOMode::kINPUT)
      return reporter_.fail(invalidArgument("setInputTensorAddress: '", tensorName ? tensorName : "(null)",
                                            "' is not an input tensor"));
    return setTensorAddress(tensorName, const_cast<void*>(data));
  }
  void* getOutputTensorAddress(char const* tensorName) const noexcept override {
    IOTensor const* t = core_->findIO(tensorName);
    return t && t->mode == TensorIOMode::kOUTPUT ? addresses_[core_->ioByName.at(t->name)] : nullptr;
  }

  int32_t inferShapes(int32_t nbMaxNames, char const** tensorNames) noexcept override {
    int32_t missing = 0;
    for (auto const& t : core_->io) {
      if (t.mode != TensorIOMode::kINPUT || inputSet_[t.inputIndex]) continue;
      if (tensorNames && missing < nbMaxNames) tensorNames[missing] = t.name.c_str();
      ++missing;
    }
    if (missing) return missing;
    Status s = ensureShapes();
    if (!s.isOk()) {
      reporter_.fail(s.withContext("inferShapes"));
      return -1;
    }
    return 0;
  }
  size_t updateDeviceMemorySizeForShapes() noexcept override { return static_cast<size_t>(core_->plan.arenaSize); }
  bool setInputConsumedEvent(cudaEvent_t event) noexcept override {
    inputConsumed_ = event;
    return true;
  }
  cudaEvent_t getInputConsumedEvent() const noexcept override { return inputConsumed_; }
  bool setOutputAllocator(char const* tensorName, IOutputAllocator* outputAllocator) noexcept override {
    IOTensor const* t = core_->findIO(tensorName);
    if (!t || t->mode != TensorIOMode::kOUTPUT) {
      reporter_.fail(invalidArgument("setOutputAllocator: '", tensorName ? tensorName : "(null)",
                                     "' is not an output tensor of the engine"));
      return false;
    }
    outputAllocators_[t->name] = outputAllocator;
    return true;
  }
  IOutputAllocator* getOutputAllocator(char const* tensorName) const noexcept override {
    if (!tensorName) return nullptr;
    auto it = outputAllocators_.find(tensorName);
    return it == outputAllocators_.end() ? nullptr : it->second;
  }
  int64_t getMaxOutputSize(char const* tensorName) const noexcept override {
    IOTensor const* t = core_->findIO(tensorName);
    if (!t || t->mode != TensorIOMode::kOUTPUT) return -1;
    return core_->plan.placements[t->valueId].size;
  }

  bool enqueueV3(cudaStream_t stream) noexcept override { return run("enqueueV3", stream); }

 private:
  Status allocateArena() {
    if (arena_ || core_->plan.arenaSize == 0) return Status::ok();
    if (core_->device) {
      size_t bytes = static_cast<size_t>(core_->plan.arenaSize);
      void* p = nullptr;
      if (IGpuAllocator* a = core_->allocator) {
        // Counted by the device fault hook like the backend's own allocations.
        KILN_RETURN_IF_ERROR(core_->device->admitAllocation(bytes, "the execution context's activation memory"));
        KILN_IGNORE_DEPRECATED_BEGIN
        p = a->allocate(bytes, 256, 0);
        KILN_IGNORE_DEPRECATED_END
        if (!p) return errorStatus(StatusCode::kOutOfMemory, "the IGpuAllocator returned no memory for the ", bytes,
                                   " bytes of activation memory");
      } else {
        auto r = core_->device->allocate(bytes, nullptr);
        if (!r) return r.status().withContext("the execution context's activation memory");
        p = *r;
      }
      deviceArena_ = p;
      arena_ = static_cast<uint8_t*>(p);
      return Status::ok();
    }
    KILN_ASSIGN_OR_RETURN(ownedArena_, HostBuffer::allocate(static_cast<size_t>(core_->plan.arenaSize),
                                                             "execution context activation memory", core_->budget.get()));
    arena_ = static_cast<uint8_t*>(ownedArena_.data());
    return Status::ok();
  }

  Status ensureShapes() {
    if (shapesValid_) return Status::ok();
    ir::Graph const& g = *core_->plan.graph;
    state_.resize(g.values().size());
    for (size_t i = 0; i < g.inputs().size(); ++i) state_.info[g.inputs()[i]->id] = {g.inputs()[i]->dtype, inputShapes_[i]};
    KILN_RETURN_IF_ERROR(inferAndCheck());
    // Once set, stays set until the next full inference: shapes pinned while running belong to one run.
    hasDynamic_ = false;
    for (auto const& v : g.values())
      if (!dimsKnown(state_.info[v->id].shape)) hasDynamic_ = true;
    KILN_RETURN_IF_ERROR(computeInPlaceOffsets());
    shapesValid_ = true;
    return Status::ok();
  }

  // Infers shapes (pinned data-dependent ones kept) and checks that planned tensors fit their memory.
  Status inferAndCheck() {
    ir::Graph const& g = *core_->plan.graph;
    ir::HostEvaluator eval = backends::referenceEvaluator();
    KILN_RETURN_IF_ERROR(ir::inferShapes(g, state_, &eval));
    // The engine reports each output's type from the plan; the kernels write the type inference gives. A plan in
    // which they differ (corrupt) would have a kernel write past the user's buffer.
    for (Value const* v : g.outputs())
      if (state_.info[v->id].dtype != v->dtype)
        return invalidArgument("output '", v->name, "' is ", dataTypeName(v->dtype), " in the plan but its layer gives ",
                               dataTypeName(state_.info[v->id].dtype), " (a corrupt plan)");
    for (auto const& v : g.values()) {
      if (!dimsKnown(state_.info[v->id].shape)) continue;  // data-dependent: known once its producer has run
      // Shapes must fit the memory planned at build time.
      auto const& pl = core_->plan.placements[v->id];
      if (pl.offset < 0 && !(v->producer && v->producer->op == ir::OpType::kConstant)) {
        // Sized only now (by data or by shape tensors read while running): absurd sizes fail here, before any
        // allocation or output-allocator call.
        Result<int64_t> n = checkedVolume(state_.info[v->id].shape);
        Result<size_t> bytes = n.isOk() ? checkedBytes(*n, dataTypeSize(state_.info[v->id].dtype)) : n.status();
        if (!bytes.isOk() || *bytes > kMaxRunTimeSizedBytes)
          return invalidArgument("tensor '", v->name, "' would have shape ", dimsToString(state_.info[v->id].shape),
                                 ": more than the ", kMaxRunTimeSizedBytes,
                                 " bytes a tensor sized while running may take");
      }
      if (pl.offset >= 0) {
        int64_t const count = volume(state_.info[v->id].shape);
        int64_t const esize = static_cast<int64_t>(dataTypeSize(state_.info[v->id].dtype));
        int64_t need = count > pl.size / std::max<int64_t>(esize, 1) ? pl.size + 1 : count * esize;  // no overflow
        if (need > pl.size)
          return invalidArgument("tensor '", v->name, "' needs ", need, " bytes at shape ",
                                 dimsToString(state_.info[v->id].shape), ", more than the ", pl.size,
                                 " planned for the optimization profile");
      }
    }
    return Status::ok();
  }

  void releaseDeviceArena() {
    if (!deviceArena_) return;
    if (arena_ == deviceArena_) arena_ = nullptr;
    if (IGpuAllocator* a = core_->allocator) {
      KILN_IGNORE_DEPRECATED_BEGIN
      a->deallocate(deviceArena_);
      KILN_IGNORE_DEPRECATED_END
    } else {
      core_->device->release(deviceArena_, nullptr);
    }
    deviceArena_ = nullptr;
  }

  // Bytes of a value at its current shape.
  Result<size_t> bytesOf(Value const* v) const {
    KILN_ASSIGN_OR_RETURN(int64_t n, checkedVolume(state_.info[v->id].shape));
    return checkedBytes(n, dataTypeSize(state_.info[v->id].dtype));
  }

  // A layer whose output shape hangs on the contents of small integer tensors that only exist while running
  // (shape arithmetic fed by network inputs, e.g. a reshape to a shape given as an input): those contents are
  // in host memory on the CPU target, so read them, pin them, and infer again.
  Status readShapeInputs(Node const& n) {
    bool added = false;
    for (Value const* v : n.inputs) {
      if (!v || state_.values[v->id]) continue;
      auto const& info = state_.info[v->id];
      // Float scales of a Resize give its output shape too (out = floor(in * scale)).
      bool floatScales = n.op == ir::OpType::kResize && v == n.input(1) && isFloatType(info.dtype);
      if ((info.dtype != DataType::kINT32 && info.dtype != DataType::kINT64 && !floatScales) || !dimsKnown(info.shape) ||
          volume(info.shape) > ir::kMaxHostEvalElements)
        continue;
      void const* src = addressOf(v);
      if (!src && volume(info.shape) > 0) continue;
      KILN_ASSIGN_OR_RETURN(HostTensor t, HostTensor::allocate(info.dtype, info.shape, "shape tensor contents"));
      if (t.bytes() && core_->device) {
        // Off the steady path: a shape known only from device data (the stream waits here).
        KILN_RETURN_IF_ERROR(core_->device->copy(t.mutableData(), src, t.bytes(), backends::CopyKind::kDeviceToHost, stream_));
        KILN_RETURN_IF_ERROR(core_->device->synchronize(stream_));
      } else if (t.bytes()) {
        std::memcpy(t.mutableData(), src, t.bytes());
      }
      state_.values[v->id] = std::move(t);
      state_.pinned[v->id] |= ir::kPinnedContents;
      added = true;
    }
    if (added) KILN_RETURN_IF_ERROR(inferAndCheck().withContext("after reading the shape inputs of " + n.describe()));
    return Status::ok();
  }

  bool isDynamicMemory(Value const* v) const {
    return core_->plan.placements[v->id].offset < 0 && !(v->producer && v->producer->op == ir::OpType::kConstant) &&
           !core_->findIO(v->name.c_str());
  }

  IOutputAllocator* allocatorOf(Value const* v) const {
    if (!v->isOutput) return nullptr;
    auto it = outputAllocators_.find(v->name);
    return it == outputAllocators_.end() ? nullptr : it->second;
  }

  // Gives a value with a now-known shape its memory: the user's output allocator, or a buffer of this context
  // for intermediate tensors placed outside the arena (data-dependent ones).
  Status provideMemory(Value const* v) {
    KILN_ASSIGN_OR_RETURN(size_t bytes, bytesOf(v));
    if (IOutputAllocator* a = allocatorOf(v)) {
      // A vectorized output's buffer is padded to whole vectors.
      int32_t io = core_->ioByName.at(v->name);
      KILN_ASSIGN_OR_RETURN(int64_t padded, formatBytes(state_.info[v->id].shape, state_.info[v->id].dtype,
                                                        core_->io[static_cast<size_t>(io)].format));
      bytes = static_cast<size_t>(padded);
      void* p = a->reallocateOutputAsync(v->name.c_str(), addresses_[io], bytes, 256, stream_);
      if (!p && bytes > 0)
        return errorStatus(StatusCode::kOutOfMemory, "the output allocator of '", v->name, "' returned no memory for ",
                           bytes, " bytes");
      addresses_[io] = p;
      return Status::ok();
    }
    if (!isDynamicMemory(v)) return Status::ok();
    if (core_->device) {
      backends::DeviceBuffer& d = dynDeviceBuffers_[v->id];
      if (d.data() && d.size() >= bytes) return Status::ok();
      if (d.data()) KILN_RETURN_IF_ERROR(waitBeforeReplacing("data-dependent tensor '" + v->name + "'"));
      KILN_ASSIGN_OR_RETURN(d, backends::DeviceBuffer::allocate(core_->device, bytes, "data-dependent tensor"));
      return Status::ok();
    }
    HostBuffer& b = dynBuffers_[v->id];
    if (b.data() && b.size() >= bytes) return Status::ok();
    KILN_ASSIGN_OR_RETURN(b, HostBuffer::allocate(bytes, "data-dependent tensor", core_->budget.get()));
    return Status::ok();
  }

  void* addressOf(Value const* v) const {
    auto const& pl = core_->plan.placements[v->id];
    if (pl.offset >= 0) return arena_ + pl.offset;
    if (v->producer && v->producer->op == ir::OpType::kConstant)
      return core_->device ? core_->constantAddress[v->id] : const_cast<void*>(v->producer->constant->data());
    auto it = core_->ioByName.find(v->name);
    if (it != core_->ioByName.end() && core_->io[it->second].valueId == v->id) return addresses_[it->second];
    if (core_->device) {
      auto dd = dynDeviceBuffers_.find(v->id);
      return dd == dynDeviceBuffers_.end() ? nullptr : dd->second.data();
    }
    auto d = dynBuffers_.find(v->id);
    return d == dynBuffers_.end() ? nullptr : const_cast<void*>(d->second.data());
  }

  bool run(char const* what, cudaStream_t stream) {
    Status s = orderAfterPreviousRun(stream);
    if (s.isOk()) {
      stream_ = stream;
      s = runSteps();
      // Whatever was queued, a failed run included, is waited for before this context's memory goes.
      Status marked = markQueuedWork();
      if (s.isOk()) s = marked;
    }
    if (!s.isOk()) return reporter_.fail(s.withContext(strCat(what, name_.empty() ? "" : " in context '" + name_ + "'")));
    return true;
  }

  // GPU: one event marks the end of this context's last run (doneEvent_, recorded on its stream). A run on another
  // stream than the last waits for it first (both use the same activation memory), and destruction waits for it.
  // Not while the stream captures a CUDA graph (a capture may not wait on work outside it): ordering the replays
  // is the user's, as is waiting for them before destroying the context.
  Status orderAfterPreviousRun(cudaStream_t stream) {
    if (!core_->device || !doneRecorded_ || stream == doneStream_ || core_->device->isCapturing(stream))
      return Status::ok();
    return core_->device->streamWaitEvent(stream, doneEvent_).withContext("ordering after the context's previous run");
  }

  Status markQueuedWork() {
    if (!core_->device || core_->device->isCapturing(stream_)) return Status::ok();
    if (!doneEvent_) {
      auto e = core_->device->createEvent();
      if (!e) {
        // Without the event, wait for the stream now: destruction must still find the work finished.
        Status sy = core_->device->synchronize(stream_);
        return e.status().withContext(sy.isOk() ? "the context's completion event (the stream was waited for instead)"
                                                : "the context's completion event");
      }
      doneEvent_ = *e;
    }
    KILN_RETURN_IF_ERROR(core_->device->recordEvent(doneEvent_, stream_).withContext("the context's completion event"));
    doneRecorded_ = true;
    doneStream_ = stream_;
    return Status::ok();
  }

  // A device buffer sized while running is about to be replaced by a larger one: the layers queued before this
  // one on the stream (this run's, and earlier runs') may still use it, so the stream is waited for before the
  // old buffer goes back. Under a graph capture that cannot be done: the growth must happen in a run before.
  Status waitBeforeReplacing(std::string const& what) {
    if (core_->device->isCapturing(stream_))
      return unsupported("the ", what, " needs a larger device buffer during a CUDA graph capture: run the context ",
                         "once outside the capture with these shapes first");
    return core_->device->synchronize(stream_).withContext(strCat("growing the ", what));
  }

  void waitForQueuedWork() noexcept {
    if (core_->device && doneRecorded_) (void)core_->device->synchronizeEvent(doneEvent_);
  }

  // Where the tensors of each layer the builder planned in place (ir::kInPlaceAttr) lie inside one another at the
  // current shapes, computed once per shape change rather than on every run. The plan's placements must agree:
  // a corrupt plan, or a shape the plan did not foresee, would otherwise have the layer skip its work or copy
  // between overlapping tensors. The builder plans in place only tensors of the arena, so their addresses at run
  // time are the arena plus these placements.
  Status computeInPlaceOffsets() {
    ir::Graph const& g = *core_->plan.graph;
    inPlaceOffsets_.resize(g.nodes().size());
    std::vector<ir::TensorInfo> ins, outs;
    for (int32_t nodeId : core_->layerNodes) {
      Node const& n = *g.nodes()[nodeId];
      auto& slot = inPlaceOffsets_[static_cast<size_t>(nodeId)];
      slot.reset();
      if (!n.attrs.has(ir::kInPlaceAttr)) continue;
      ins.clear();
      outs.clear();
      for (Value const* v : n.inputs) {
        ir::TensorInfo t;
        if (v)
          t = state_.info[v->id];
        else
          t.shape.nbDims = -1;
        ins.push_back(t);
      }
      for (Value const* v : n.outputs) outs.push_back(state_.info[v->id]);
      std::optional<std::vector<int64_t>> off = ir::contiguousViewOffsets(n, ins, outs);
      if (!off)
        return invalidArgument(n.describe(), " was planned in place, but at input shape ",
                               ins.empty() ? std::string("?") : dimsToString(ins[0].shape),
                               " its tensors are not contiguous blocks of one another (rebuild the engine)");
      // The flags' count and values were checked when the engine was loaded (loadEngine).
      std::vector<int64_t> const flags = n.attrs.getInts(ir::kInPlaceAttr);
      bool const concat = n.op == ir::OpType::kConcatenation;
      int64_t const y = core_->plan.placements[n.outputs[0]->id].offset;
      auto misplaced = [&](size_t j) {
        return invalidArgument(n.describe(), ": ",
                               concat ? strCat("input ", j, " is not at byte ", (*off)[j], " of the output")
                                      : strCat("the output is not at byte ", (*off)[j], " of input 0"),
                               ", where the plan puts it (a corrupt plan)");
      };
      if (!concat) {
        int64_t const x = core_->plan.placements[n.inputs[0]->id].offset;
        if (x < 0 || y != x + (*off)[0]) return misplaced(0);
      } else {
        for (size_t j = 0; j < flags.size(); ++j)
          if (flags[j] == 1 && (y < 0 || core_->plan.placements[n.inputs[j]->id].offset != y + (*off)[j]))
            return misplaced(j);
      }
      // What runInPlace needs: per input, the byte offset to copy it to, or -1 where it is already there.
      std::vector<int64_t> copyAt(concat ? flags.size() : 1, -1);
      for (size_t j = 0; concat && j < flags.size(); ++j)
        if (flags[j] == 0) copyAt[j] = (*off)[j];
      slot = std::move(copyAt);
    }
    return Status::ok();
  }

  // Runs a layer planned in place: its tensors already share memory (computeInPlaceOffsets checked where), so only
  // the inputs of a Concatenation that are not in place are copied into the output (contiguous blocks: one copy
  // each, which a CUDA graph capture records as memcpy nodes).
  Status runInPlace(Node const& n, backends::LaunchContext const& ctx) {
    auto const& copyAt = inPlaceOffsets_[static_cast<size_t>(n.id)];
    if (!copyAt || copyAt->size() > ctx.inputs.size())
      return internalError(n.describe(), ": no in-place offsets at these shapes");
    auto* y = static_cast<unsigned char*>(ctx.outputs[0].data);
    for (size_t j = 0; j < copyAt->size(); ++j) {
      int64_t const at = (*copyAt)[j];
      if (at < 0) continue;
      size_t bytes = static_cast<size_t>(volume(ctx.inputs[j].shape)) * dataTypeSize(ctx.inputs[j].dtype);
      if (bytes == 0) continue;
      if (!ctx.inputs[j].data || !y) return internalError(n.describe(), ": no memory for input ", j, " or the output");
      if (core_->device)
        KILN_RETURN_IF_ERROR(
            core_->device->copy(y + at, ctx.inputs[j].data, bytes, backends::CopyKind::kDeviceToDevice, stream_));
      else
        std::memcpy(y + at, ctx.inputs[j].data, bytes);
    }
    return Status::ok();
  }

  Status runSteps() {
    if (!allInputDimensionsSpecified()) {
      for (auto const& t : core_->io)
        if (t.mode == TensorIOMode::kINPUT && !inputSet_[t.inputIndex])
          return errorStatus(StatusCode::kInvalidState, "the shape of input '", t.name,
                             "' is not set (call setInputShape)");
    }
    if (hasDynamic_) shapesValid_ = false;  // data-dependent shapes are observed anew on every run
    KILN_RETURN_IF_ERROR(ensureShapes());
    if (!arena_ && core_->plan.arenaSize > 0) {
      if (strategy_ == ExecutionContextAllocationStrategy::kUSER_MANAGED)
        return errorStatus(StatusCode::kInvalidState, "no device memory: this context was created with kUSER_MANAGED; call "
                                                      "setDeviceMemoryV2 first");
      KILN_RETURN_IF_ERROR(allocateArena());
    }
    ir::Graph const& g = *core_->plan.graph;
    for (size_t i = 0; i < core_->io.size(); ++i) {
      auto const& t = core_->io[i];
      Value const* v = g.values()[t.valueId].get();
      bool known = dimsKnown(state_.info[t.valueId].shape);
      if (t.mode == TensorIOMode::kOUTPUT && allocatorOf(v)) continue;  // asked when its producer runs
      if (!known)
        return errorStatus(StatusCode::kInvalidState, "output '", t.name,
                           "' has a data-dependent shape: give it an IOutputAllocator (setOutputAllocator)");
      if (!addresses_[i] && volume(state_.info[t.valueId].shape) > 0)
        return errorStatus(StatusCode::kInvalidState, "no address for ", t.mode == TensorIOMode::kINPUT ? "input" : "output",
                           " tensor '", t.name, "' (call setTensorAddress)");
    }
    if (!pool_ && core_->maxThreads > 1) pool_ = std::make_unique<ThreadPool>(core_->maxThreads);
    backends::CpuStream cpuStream;
    backends::DeviceStream devStream(core_->device, stream_);
    bool profile = profiler_ && enqueueEmitsProfile_;
    lastTimes_.clear();
    backends::LaunchContext ctx;
    ctx.stream = core_->device ? static_cast<backends::Stream*>(&devStream) : &cpuStream;
    // GPU per-layer times come from events around each layer, read once the stream has finished (profiling
    // waits for the stream; a graph capture records no events).
    bool gpuTiming = core_->device && profiler_ && !core_->device->isCapturing(stream_);
    if (gpuTiming) KILN_RETURN_IF_ERROR(ensureEvents(core_->layerNodes.size() + 1));
    if (gpuTiming) KILN_RETURN_IF_ERROR(core_->device->recordEvent(events_[0], stream_));
    size_t layerIndex = 0;
    ctx.pool = pool_.get();
    KILN_ASSIGN_OR_RETURN(bool const prefetching, preparePrefetch());
    // Set once a prefetch forked off: the side stream then joins the run's stream however the run ends (a failed
    // run's prefetch still reads the engine's constants, and a capture must end with no branch left open).
    struct PrefetchJoin {
      ContextImpl* self;
      bool forked = false;
      ~PrefetchJoin() {
        if (forked) (void)self->joinPrefetch();
      }
    } prefetchJoin{this};
    for (int32_t nodeId : core_->layerNodes) {
      Node const& n = *g.nodes()[nodeId];
      ctx.inputs.clear();
      ctx.outputs.clear();
      for (Value const* v : n.inputs) {
        if (!v) {
          Dims none{};
          none.nbDims = -1;
          ctx.inputs.push_back({nullptr, DataType::kFLOAT, none});
          continue;
        }
        ctx.inputs.push_back({addressOf(v), state_.info[v->id].dtype, state_.info[v->id].shape});
      }
      bool unknownOutput = false;
      for (Value const* v : n.outputs) unknownOutput = unknownOutput || !dimsKnown(state_.info[v->id].shape);
      if (unknownOutput) KILN_RETURN_IF_ERROR(readShapeInputs(n));
      bool dataDependent = false;
      for (Value const* v : n.outputs) {
        if (!dimsKnown(state_.info[v->id].shape)) {
          dataDependent = true;
          ctx.outputs.push_back({nullptr, state_.info[v->id].dtype, state_.info[v->id].shape});
          continue;
        }
        if (isDynamicMemory(v) || allocatorOf(v)) KILN_RETURN_IF_ERROR(provideMemory(v));
        ctx.outputs.push_back({addressOf(v), state_.info[v->id].dtype, state_.info[v->id].shape});
      }
      ctx.allocateOutput = nullptr;
      if (dataDependent) {
        ctx.allocateOutput = [&](size_t i, Dims const& dims) -> Result<void*> {
          if (i >= n.outputs.size()) return internalError(n.describe(), ": no output ", i);
          Value const* v = n.outputs[i];
          Dims const& inferred = state_.info[v->id].shape;
          if (!dimsKnown(dims) || (inferred.nbDims >= 0 && dims.nbDims != inferred.nbDims))
            return internalError(n.describe(), ": output ", i, " got shape ", dimsToString(dims), ", expected rank ",
                                 inferred.nbDims);
          state_.info[v->id].shape = dims;
          state_.pinned[v->id] |= ir::kPinnedShape;
          KILN_RETURN_IF_ERROR(provideMemory(v));
          ctx.outputs[i].shape = dims;
          ctx.outputs[i].data = addressOf(v);
          return ctx.outputs[i].data;
        };
      }
      int64_t wsOff = core_->plan.workspaceOffsets[nodeId];
      ctx.workspace = wsOff >= 0 ? arena_ + wsOff : nullptr;
      ctx.workspaceSize = wsOff >= 0 ? static_cast<size_t>(core_->plan.workspaceSizes[nodeId]) : 0;
      if (wsOff < 0 && hasDynamic_ && core_->device) {
        std::vector<ir::TensorInfo> ins, outs;
        for (auto const& t : ctx.inputs) ins.push_back({t.dtype, t.shape});
        for (auto const& t : ctx.outputs) outs.push_back({t.dtype, t.shape});
        size_t ws = dataDependent ? 0 : core_->kernels[nodeId]->workspaceSize(ins, outs);
        if (ws > dynDeviceWorkspace_.size()) {
          if (dynDeviceWorkspace_.data()) KILN_RETURN_IF_ERROR(waitBeforeReplacing("layer workspace"));
          KILN_ASSIGN_OR_RETURN(dynDeviceWorkspace_, backends::DeviceBuffer::allocate(core_->device, ws, "layer workspace"));
        }
        ctx.workspace = ws ? dynDeviceWorkspace_.data() : nullptr;
        ctx.workspaceSize = ws;
      } else if (wsOff < 0 && hasDynamic_) {
        // Shapes unknown at build time: size the scratch memory now.
        std::vector<ir::TensorInfo> ins, outs;
        for (auto const& t : ctx.inputs) ins.push_back({t.dtype, t.shape});
        for (auto const& t : ctx.outputs) outs.push_back({t.dtype, t.shape});
        size_t ws = dataDependent ? 0 : core_->kernels[nodeId]->workspaceSize(ins, outs);
        if (ws > dynWorkspace_.size()) {
          KILN_ASSIGN_OR_RETURN(dynWorkspace_, HostBuffer::allocate(ws, "layer workspace", core_->budget.get()));
        }
        ctx.workspace = ws ? dynWorkspace_.data() : nullptr;
        ctx.workspaceSize = ws;
      }
      auto t0 = std::chrono::steady_clock::now();
      if (core_->device) core_->device->rangePush(n.name.c_str());
      ctx.state = states_[nodeId].get();
      // In place: given offsets by ensureShapes (which every run passes first) exactly when the node has the flag.
      bool const inPlace = inPlaceOffsets_[static_cast<size_t>(nodeId)].has_value();
      Status s = inPlace ? runInPlace(n, ctx) : core_->kernels[nodeId]->enqueue(ctx);
      if (core_->device) core_->device->rangePop();
      if (!s.isOk()) return s.withContext(n.describe());
      // The prefetch forks off after this layer: it runs beside the next ones (mostly small kernels: attention,
      // normalizations, pointwise passes), not beside this layer's GEMM, whose grid may fill every SM.
      if (prefetching && !core_->l2Prefetch[layerIndex].empty()) {
        prefetchJoin.forked = true;
        KILN_RETURN_IF_ERROR(
            forkPrefetch(core_->l2Prefetch[layerIndex]).withContext("the L2 prefetch after " + n.describe()));
      }
      ++layerIndex;
      if (gpuTiming) {
        KILN_RETURN_IF_ERROR(core_->device->recordEvent(events_[layerIndex], stream_));
      } else if (!core_->device && (profile || profiler_)) {
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        lastTimes_.push_back({n.name, static_cast<float>(ms)});
      }
      if (dataDependent) {
        for (size_t i = 0; i < n.outputs.size(); ++i)
          if (!dimsKnown(state_.info[n.outputs[i]->id].shape))
            return internalError(n.describe(), ": the kernel did not give output ", i, " its shape");
        KILN_RETURN_IF_ERROR(inferAndCheck().withContext("after " + n.describe()));
      }
    }
    if (prefetchJoin.forked) {
      // The side stream joins the run's stream: a capture ends with no branch left open, and the next run (or the
      // context's completion event) orders after every prefetch.
      prefetchJoin.forked = false;
      KILN_RETURN_IF_ERROR(joinPrefetch().withContext("the L2 prefetch"));
    }
    if (gpuTiming) {
      for (size_t i = 0; i < core_->layerNodes.size(); ++i) {
        KILN_ASSIGN_OR_RETURN(float ms, core_->device->elapsedMs(events_[i], events_[i + 1]));
        lastTimes_.push_back({g.nodes()[core_->layerNodes[i]]->name, ms});
      }
    }
    if (core_->device && inputConsumed_)
      KILN_RETURN_IF_ERROR(core_->device->recordEvent(inputConsumed_, stream_));
    for (Value const* v : g.outputs())
      if (IOutputAllocator* a = allocatorOf(v)) a->notifyShape(v->name.c_str(), state_.info[v->id].shape);
    if (profile)
      for (auto const& [name, ms] : lastTimes_) profiler_->reportLayerTime(name.c_str(), ms);
    return Status::ok();
  }

  // The L2 prefetch of weights (EngineCore::l2Prefetch): whether this run issues it, creating the side stream and
  // its two events on the first run that is not captured. By default only captured runs prefetch: there the fork
  // and the prefetch cost the GPU nothing, where each is a few microseconds of host time in a plain enqueue (which
  // at small batches is what the GPU waits for). KILN_L2_PREFETCH=0 turns it off, =2 on for every run.
  Result<bool> preparePrefetch() {
    static int const mode = [] {
      char const* env = std::getenv("KILN_L2_PREFETCH");
      return env && *env ? std::atoi(env) : 1;
    }();
    if (!core_->device || core_->l2Prefetch.empty() || mode <= 0) return false;
    bool const capturing = core_->device->isCapturing(stream_);
    if (!prefetchStream_ && !capturing) {
      // Each made once: after a failure here the next run makes only what is still missing.
      if (!prefetchFork_) {
        KILN_ASSIGN_OR_RETURN(prefetchFork_, core_->device->createEvent());
      }
      if (!prefetchJoin_) {
        KILN_ASSIGN_OR_RETURN(prefetchJoin_, core_->device->createEvent());
      }
      KILN_ASSIGN_OR_RETURN(prefetchStream_, core_->device->createStream());
    }
    return prefetchStream_ != nullptr && (capturing || mode >= 2);
  }

  // Forks the side stream off the run's stream at this point and queues the prefetch of `ranges` on it.
  Status forkPrefetch(std::vector<backends::DeviceRange> const& ranges) {
    KILN_RETURN_IF_ERROR(core_->device->recordEvent(prefetchFork_, stream_));
    KILN_RETURN_IF_ERROR(core_->device->streamWaitEvent(prefetchStream_, prefetchFork_));
    return core_->device->prefetchToL2(ranges.data(), ranges.size(), prefetchStream_);
  }

  // Makes the run's stream wait for everything queued on the side stream so far.
  Status joinPrefetch() {
    KILN_RETURN_IF_ERROR(core_->device->recordEvent(prefetchJoin_, prefetchStream_));
    return core_->device->streamWaitEvent(stream_, prefetchJoin_);
  }

  Status ensureEvents(size_t n) {
    while (events_.size() < n) {
      KILN_ASSIGN_OR_RETURN(void* e, core_->device->createEvent());
      events_.push_back(e);
    }
    return Status::ok();
  }

  std::shared_ptr<EngineCore> core_;
  ExecutionContextAllocationStrategy strategy_;
  Reporter reporter_;
  EngineImpl shadow_;  // what getEngine() returns after the user destroyed the engine
  std::string name_;
  bool debugSync_ = false;
  IProfiler* profiler_ = nullptr;
  bool enqueueEmitsProfile_ = true;
  std::vector<std::pair<std::string, float>> lastTimes_;
  int32_t profile_ = 0;
  std::vector<Dims> inputShapes_;
  std::vector<bool> inputSet_;
  std::vector<void*> addresses_;
  ir::ShapeState state_;
  bool shapesValid_ = false;
  HostBuffer ownedArena_;
  uint8_t* arena_ = nullptr;
  std::unique_ptr<ThreadPool> pool_;
  cudaEvent_t inputConsumed_ = nullptr;
  std::unordered_map<std::string, IOutputAllocator*> outputAllocators_;  // by output name (not owned)
  bool hasDynamic_ = false;                                 // some shape is only known while running
  // By node id, for each in-place layer at the current shapes (computeInPlaceOffsets): per input, the byte offset
  // inside the output a Concatenation copies it to, -1 where it already lies there (Slice, Gather: {-1}).
  std::vector<std::optional<std::vector<int64_t>>> inPlaceOffsets_;
  std::unordered_map<int32_t, HostBuffer> dynBuffers_;      // tensors placed outside the arena, by value id
  HostBuffer dynWorkspace_;                                 // scratch for layers with run-time shapes
  // GPU targets.
  cudaStream_t stream_ = nullptr;                           // of the run in progress
  void* deviceArena_ = nullptr;                             // activation memory this context allocated
  std::unordered_map<int32_t, backends::DeviceBuffer> dynDeviceBuffers_;
  backends::DeviceBuffer dynDeviceWorkspace_;
  std::vector<void*> events_;                               // per-layer timing events
  void* prefetchStream_ = nullptr;                          // the L2 prefetch's side stream (preparePrefetch)
  void* prefetchFork_ = nullptr;                            // recorded on stream_ where a prefetch forks off
  void* prefetchJoin_ = nullptr;                            // recorded on the side stream at the run's end
  void* doneEvent_ = nullptr;                               // recorded after each run (orderAfterPreviousRun)
  bool doneRecorded_ = false;
  cudaStream_t doneStream_ = nullptr;                       // the stream it was last recorded on
  // Per-context kernel state by node id (plugin copies); declared last so that it goes first.
  std::vector<std::unique_ptr<backends::KernelContextState>> states_;
};

}  // namespace

IExecutionContext* createContext(std::shared_ptr<EngineCore> core, ExecutionContextAllocationStrategy strategy,
                                 Reporter const& reporter) {
  auto ctx = std::unique_ptr<ContextImpl>(new (std::nothrow) ContextImpl(std::move(core), strategy, reporter));
  if (!ctx) {
    reporter.fail(errorStatus(StatusCode::kOutOfMemory, "createExecutionContext: out of memory"));
    return nullptr;
  }
  Status s = ctx->init();
  if (!s.isOk()) {
    reporter.fail(s.withContext("createExecutionContext"));
    return nullptr;
  }
  return ctx.release();
}

}  // namespace kiln::runtime
