// Kiln public API, runtime layer: deserializing plans into engines (IRuntime), querying them (ICudaEngine,
// IEngineInspector) and running them (IExecutionContext). Mirrors TensorRT 10.16's NvInferRuntime.h.
#ifndef KILN_KILN_RUNTIME_H
#define KILN_KILN_RUNTIME_H

#include "kiln_base.h"
#include "kiln_plugin.h"

namespace kiln {

class ICudaEngine;
class IEngineInspector;
class IExecutionContext;

/// Where a tensor's data lives.
enum class TensorLocation : int32_t {
  kDEVICE = 0,  ///< Device memory of the engine's device (host memory for DeviceType::kCPU engines).
  kHOST = 1,    ///< Host memory.
};

namespace impl {
template <>
struct EnumMaxImpl<TensorLocation> {
  static constexpr int32_t kVALUE = 2;
};
}  // namespace impl

/// Application-implemented allocator for output tensors whose size is only known during inference
/// (data-dependent shapes), installed per output with IExecutionContext::setOutputAllocator(). Kiln asks it
/// for memory once the output's size is known and then reports the output's final shape.
class KILN_API IOutputAllocator : public IVersionedInterface {
 public:
  /// Returns {"IOutputAllocator", 1, 0}. Applications must not override it.
  InterfaceInfo getInterfaceInfo() const noexcept override { return {"IOutputAllocator", 1, 0}; }

  /// Returns memory of at least `size` bytes aligned to `alignment` for output `tensorName`: `currentMemory`
  /// if it is large enough, or new memory (the allocator owns both), or nullptr on failure. The default
  /// returns nullptr. Deprecated in TensorRT 10.0 in favor of reallocateOutputAsync().
  KILN_DEPRECATED virtual void* reallocateOutput(char const* tensorName, void* currentMemory, uint64_t size,
                                                 uint64_t alignment) noexcept {
    (void)tensorName;
    (void)currentMemory;
    (void)size;
    (void)alignment;
    return nullptr;
  }

  /// Stream-ordered reallocateOutput(): the memory is used in `stream` order. Default: reallocateOutput().
  virtual void* reallocateOutputAsync(char const* tensorName, void* currentMemory, uint64_t size,
                                      uint64_t alignment, cudaStream_t stream) {
    (void)stream;
    KILN_IGNORE_DEPRECATED_BEGIN
    return reallocateOutput(tensorName, currentMemory, size, alignment);
    KILN_IGNORE_DEPRECATED_END
  }

  /// Reports the final shape of output `tensorName` once it is computed.
  virtual void notifyShape(char const* tensorName, Dims const& dims) noexcept = 0;

  ~IOutputAllocator() override = default;
  IOutputAllocator() = default;

 protected:
  IOutputAllocator(IOutputAllocator const&) = default;
  IOutputAllocator(IOutputAllocator&&) = default;
  IOutputAllocator& operator=(IOutputAllocator const&) & = default;
  IOutputAllocator& operator=(IOutputAllocator&&) & = default;
};

/// Deserializes plans produced by IBuilder::buildSerializedNetwork into engines. Create it with
/// createInferRuntime(); the caller owns it and releases it with delete, after every engine it created.
class KILN_API IRuntime : public INoCopy {
 public:
  virtual ~IRuntime() noexcept = default;

  /// Builds an engine from the `size` bytes at `blob` (which only need to stay valid during the call).
  /// Returns an engine owned by the caller, or nullptr if the plan is corrupt, was built by an incompatible
  /// Kiln version, or targets an unavailable device; the reason goes to the error recorder/logger.
  virtual ICudaEngine* deserializeCudaEngine(void const* blob, std::size_t size) noexcept = 0;

  /// Device allocator for this runtime and the engines/contexts it creates; nullptr restores the default
  /// allocator (cudaMalloc/cudaFree). The allocator must outlive all of those objects.
  virtual void setGpuAllocator(IGpuAllocator* allocator) noexcept = 0;

  /// Attaches an error recorder (nullptr detaches it) that engines created afterwards inherit.
  /// Calls recorder->incRefCount(), and decRefCount() on the recorder it replaces.
  virtual void setErrorRecorder(IErrorRecorder* recorder) noexcept = 0;

  /// The attached error recorder, or nullptr.
  virtual IErrorRecorder* getErrorRecorder() const noexcept = 0;

  /// The logger this runtime was created with (not owned by the runtime).
  virtual ILogger* getLogger() const noexcept = 0;

  /// Maximum number of host threads (including the caller's) the runtime may use; default 1.
  /// Returns false, and reports kINVALID_ARGUMENT, for values below 1.
  virtual bool setMaxThreads(int32_t maxThreads) noexcept = 0;

  /// The value set by setMaxThreads().
  virtual int32_t getMaxThreads() const noexcept = 0;

  /// Kiln extension, not in TensorRT. Caps the memory, in bytes, that Kiln may allocate on behalf of this
  /// runtime and the engines and contexts created from it afterwards (weights, activations, scratch), on
  /// whatever device runs them. 0 removes the cap. An allocation that would exceed the cap fails with
  /// ErrorCode::kFAILED_ALLOCATION. Returns false, changing nothing, if `bytes` is negative.
  virtual bool setMemoryLimit(int64_t bytes) noexcept = 0;

  /// Kiln extension, not in TensorRT. The cap set by setMemoryLimit(); 0 when there is none.
  virtual int64_t getMemoryLimit() const noexcept = 0;

 protected:
  IRuntime() = default;
};

/// A deserialized, ready-to-run network. Created by IRuntime::deserializeCudaEngine(); the caller owns it and
/// releases it with delete, after every execution context and inspector created from it.
/// Tensor queries take I/O tensor names; for a name that is not an I/O tensor they return an invalid value
/// (Dims with nbDims == -1, nullptr, -1, or kNONE as documented) and report kINVALID_ARGUMENT.
class KILN_API ICudaEngine : public INoCopy {
 public:
  virtual ~ICudaEngine() noexcept = default;

  /// Shape of an I/O tensor, with -1 for dimensions only known at runtime.
  virtual Dims getTensorShape(char const* tensorName) const noexcept = 0;

  /// Element type of an I/O tensor.
  virtual DataType getTensorDataType(char const* tensorName) const noexcept = 0;

  /// Number of layers in the engine (after fusion, so not necessarily the network's layer count).
  virtual int32_t getNbLayers() const noexcept = 0;

  /// Serializes the engine to a plan. Returns a buffer owned by the caller, or nullptr on failure.
  virtual IHostMemory* serialize() const noexcept = 0;

  /// Creates an execution context that allocates its scratch memory as `strategy` says. Returns a context
  /// owned by the caller, or nullptr (e.g. allocation failure or exceeded memory limit).
  virtual IExecutionContext* createExecutionContext(
      ExecutionContextAllocationStrategy strategy = ExecutionContextAllocationStrategy::kSTATIC) noexcept = 0;

  /// Same as createExecutionContext(ExecutionContextAllocationStrategy::kUSER_MANAGED).
  /// Deprecated in TensorRT 10.0.
  KILN_DEPRECATED virtual IExecutionContext* createExecutionContextWithoutDeviceMemory() noexcept = 0;

  /// Scratch memory, in bytes, a context needs over all profiles. Deprecated in TensorRT 10.1 in favor of
  /// getDeviceMemorySizeV2().
  KILN_DEPRECATED virtual size_t getDeviceMemorySize() const noexcept = 0;

  /// Scratch memory, in bytes, a context needs for profile `profileIndex`; 0 for an invalid index.
  /// Deprecated in TensorRT 10.1 in favor of getDeviceMemorySizeForProfileV2().
  KILN_DEPRECATED virtual size_t getDeviceMemorySizeForProfile(int32_t profileIndex) const noexcept = 0;

  /// Scratch memory, in bytes, a context needs over all profiles (what setDeviceMemoryV2() must provide).
  virtual int64_t getDeviceMemorySizeV2() const noexcept = 0;

  /// Scratch memory, in bytes, a context needs for profile `profileIndex`; -1 for an invalid index.
  virtual int64_t getDeviceMemorySizeForProfileV2(int32_t profileIndex) const noexcept = 0;

  /// True if the tensor is an input whose values (not only its shape) are needed for shape inference, or an
  /// output computed during shape inference; such tensors live in host memory.
  virtual bool isShapeInferenceIO(char const* tensorName) const noexcept = 0;

  /// Whether the tensor is an input or output; kNONE if it is neither.
  virtual TensorIOMode getTensorIOMode(char const* tensorName) const noexcept = 0;

  /// Bytes per vector component in the tensor's format (the size of its data type); -1 for an unknown name.
  virtual int32_t getTensorBytesPerComponent(char const* tensorName) const noexcept = 0;

  /// As getTensorBytesPerComponent, for optimization profile `profileIndex` (-1 for an invalid index).
  virtual int32_t getTensorBytesPerComponent(char const* tensorName, int32_t profileIndex) const noexcept = 0;

  /// Components (scalars) per vector in the tensor's format (8 for kHWC8; 1 for scalar formats such as kLINEAR
  /// and kHWC); -1 for an unknown name.
  virtual int32_t getTensorComponentsPerElement(char const* tensorName) const noexcept = 0;

  /// As getTensorComponentsPerElement, for optimization profile `profileIndex` (-1 for an invalid index).
  virtual int32_t getTensorComponentsPerElement(char const* tensorName, int32_t profileIndex) const noexcept = 0;

  /// Memory layout of the tensor's binding (chosen by the builder from ITensor::setAllowedFormats); kLINEAR for
  /// an unknown name.
  virtual TensorFormat getTensorFormat(char const* tensorName) const noexcept = 0;

  /// As getTensorFormat, for optimization profile `profileIndex` (kLINEAR for an invalid index).
  virtual TensorFormat getTensorFormat(char const* tensorName, int32_t profileIndex) const noexcept = 0;

  /// Human-readable description of the tensor's format (order, vectorization, type), owned by the engine and
  /// valid until the next call; nullptr for an unknown name.
  virtual char const* getTensorFormatDesc(char const* tensorName) const noexcept = 0;

  /// As getTensorFormatDesc, for optimization profile `profileIndex` (nullptr for an invalid index).
  virtual char const* getTensorFormatDesc(char const* tensorName, int32_t profileIndex) const noexcept = 0;

  /// Index of the dimension the tensor's format vectorizes (1 for a 4-D kHWC8 or kCHW32 tensor); -1 when the
  /// format has one scalar per vector (kLINEAR, kHWC, kDHWC) or for an unknown name.
  virtual int32_t getTensorVectorizedDim(char const* tensorName) const noexcept = 0;

  /// As getTensorVectorizedDim, for optimization profile `profileIndex` (-1 for an invalid index).
  virtual int32_t getTensorVectorizedDim(char const* tensorName, int32_t profileIndex) const noexcept = 0;

  /// Whether the tensor's data must be in device or host memory.
  virtual TensorLocation getTensorLocation(char const* tensorName) const noexcept = 0;

  /// Number of optimization profiles (at least 1).
  virtual int32_t getNbOptimizationProfiles() const noexcept = 0;

  /// Min/opt/max shape of input `tensorName` in profile `profileIndex`; nbDims == -1 on a bad name or index.
  virtual Dims getProfileShape(char const* tensorName, int32_t profileIndex,
                               OptProfileSelector select) const noexcept = 0;

  /// The capability the engine was built for.
  virtual EngineCapability getEngineCapability() const noexcept = 0;

  /// Number of I/O tensors.
  virtual int32_t getNbIOTensors() const noexcept = 0;

  /// Name of I/O tensor `index` (0 <= index < getNbIOTensors()), owned by the engine; nullptr if out of
  /// range.
  virtual char const* getIOTensorName(int32_t index) const noexcept = 0;

  /// Verbosity of layer information kept in the engine.
  virtual ProfilingVerbosity getProfilingVerbosity() const noexcept = 0;

  /// Creates an inspector owned by the caller (delete it before the engine), or nullptr on failure.
  virtual IEngineInspector* createEngineInspector() const noexcept = 0;

  /// Engine name (the network's name at build time), owned by the engine.
  virtual char const* getName() const noexcept = 0;

  /// Tactic sources that were enabled when the engine was built.
  virtual TacticSources getTacticSources() const noexcept = 0;

  /// Hardware compatibility level the engine was built with.
  virtual HardwareCompatibilityLevel getHardwareCompatibilityLevel() const noexcept = 0;

  /// Attaches an error recorder (nullptr detaches it); see IRuntime::setErrorRecorder().
  virtual void setErrorRecorder(IErrorRecorder* recorder) noexcept = 0;

  /// The attached error recorder, or nullptr.
  virtual IErrorRecorder* getErrorRecorder() const noexcept = 0;

 protected:
  ICudaEngine() = default;
};

/// Per-inference state of an engine: selected profile, input shapes, tensor addresses and scratch memory.
/// Created by ICudaEngine::createExecutionContext(); the caller owns it and deletes it before the engine.
/// A context runs one inference at a time; use several contexts for concurrent inferences.
class KILN_API IExecutionContext : public INoCopy {
 public:
  virtual ~IExecutionContext() noexcept = default;

  /// When true, every execution waits for completion and reports errors synchronously.
  virtual void setDebugSync(bool sync) noexcept = 0;

  /// The value set by setDebugSync().
  virtual bool getDebugSync() const noexcept = 0;

  /// Installs a per-layer profiler (not owned; nullptr removes it). It must outlive its use by the context.
  virtual void setProfiler(IProfiler* profiler) noexcept = 0;

  /// The installed profiler, or nullptr.
  virtual IProfiler* getProfiler() const noexcept = 0;

  /// The engine this context was created from.
  virtual ICudaEngine const& getEngine() const noexcept = 0;

  /// Sets the context name (copied); used in log messages.
  virtual void setName(char const* name) noexcept = 0;

  /// The context name, owned by the context.
  virtual char const* getName() const noexcept = 0;

  /// Provides scratch memory for a kUSER_MANAGED context; at least ICudaEngine::getDeviceMemorySizeV2()
  /// bytes, 256-byte aligned, not owned by the context and not shared with a running context.
  /// Deprecated in TensorRT 10.1 in favor of setDeviceMemoryV2().
  KILN_DEPRECATED virtual void setDeviceMemory(void* memory) noexcept = 0;

  /// Provides `size` bytes of scratch memory at `memory` for a kUSER_MANAGED context (not owned by the
  /// context). Reports kINVALID_ARGUMENT and keeps the previous memory if `size` is too small.
  virtual void setDeviceMemoryV2(void* memory, int64_t size) noexcept = 0;

  /// Strides of an I/O tensor for the current input shapes, in elements of its format (for a vectorized format
  /// such as kHWC8 one element is a vector of 8 scalars, and the vectorized dim's stride steps one vector);
  /// nbDims == -1 if not computable yet.
  virtual Dims getTensorStrides(char const* tensorName) const noexcept = 0;

  /// Index of the selected optimization profile (0 by default).
  virtual int32_t getOptimizationProfile() const noexcept = 0;

  /// Sets the runtime shape of input `tensorName`; it must lie within the selected profile's min..max.
  /// Returns false, reporting the reason, otherwise.
  virtual bool setInputShape(char const* tensorName, Dims const& dims) noexcept = 0;

  /// Shape of an I/O tensor for the current input shapes; output dimensions that depend on data, or on
  /// inputs not set yet, are -1. nbDims == -1 for an unknown name.
  virtual Dims getTensorShape(char const* tensorName) const noexcept = 0;

  /// True once every input shape has been set (with setInputShape) where the engine needs one.
  virtual bool allInputDimensionsSpecified() const noexcept = 0;

  /// True once every shape-inference input has an address. Deprecated in TensorRT 10.0.
  KILN_DEPRECATED virtual bool allInputShapesSpecified() const noexcept = 0;

  /// Attaches an error recorder (nullptr detaches it); see IRuntime::setErrorRecorder().
  virtual void setErrorRecorder(IErrorRecorder* recorder) noexcept = 0;

  /// The attached error recorder, or nullptr.
  virtual IErrorRecorder* getErrorRecorder() const noexcept = 0;

  /// Runs synchronously. `bindings` holds one address per I/O tensor, indexed as getIOTensorName().
  /// Returns false if execution failed or could not start.
  virtual bool executeV2(void* const* bindings) noexcept = 0;

  /// Selects optimization profile `profileIndex`, doing any needed device work on `stream`. Input shapes
  /// must be set again afterwards. Returns false for an invalid index or a profile used by another context.
  virtual bool setOptimizationProfileAsync(int32_t profileIndex, cudaStream_t stream) noexcept = 0;

  /// When false, enqueueV3() does not report to the profiler; reportToProfiler() must be called instead.
  virtual void setEnqueueEmitsProfile(bool enqueueEmitsProfile) noexcept = 0;

  /// The value set by setEnqueueEmitsProfile() (true by default).
  virtual bool getEnqueueEmitsProfile() const noexcept = 0;

  /// Reports the last execution's layer timings to the profiler (waits for that execution).
  /// Returns false if there is no profiler or nothing to report.
  virtual bool reportToProfiler() const noexcept = 0;

  /// Sets the address of I/O tensor `tensorName` for enqueueV3(); the memory is not owned by the context
  /// and must stay valid until execution completes. Returns false for an unknown name or a misaligned
  /// address.
  virtual bool setTensorAddress(char const* tensorName, void* data) noexcept = 0;

  /// The address set for `tensorName`, or nullptr.
  virtual void const* getTensorAddress(char const* tensorName) const noexcept = 0;

  /// Sets the address of a read-only input tensor (same rules as setTensorAddress()).
  virtual bool setInputTensorAddress(char const* tensorName, void const* data) noexcept = 0;

  /// The address set for output `tensorName`; nullptr for inputs, unknown names, or no address.
  virtual void* getOutputTensorAddress(char const* tensorName) const noexcept = 0;

  /// Runs shape inference with the current shapes and addresses. Returns 0 on success; otherwise writes up
  /// to `nbMaxNames` names of inputs that are still missing into `tensorNames` and returns how many are
  /// missing, or returns -1 if inference failed for another reason (reported to the error recorder).
  virtual int32_t inferShapes(int32_t nbMaxNames, char const** tensorNames) noexcept = 0;

  /// Recomputes the scratch memory needed for the current input shapes and returns it in bytes.
  virtual size_t updateDeviceMemorySizeForShapes() noexcept = 0;

  /// Event recorded once all inputs of the next enqueueV3() have been consumed (nullptr: none).
  /// The event is not owned by the context. Returns false on failure.
  virtual bool setInputConsumedEvent(cudaEvent_t event) noexcept = 0;

  /// The event set by setInputConsumedEvent(), or nullptr.
  virtual cudaEvent_t getInputConsumedEvent() const noexcept = 0;

  /// Installs `outputAllocator` (not owned; nullptr removes it) for output `tensorName`. Returns false,
  /// reporting the error, if `tensorName` is not an output of the engine.
  virtual bool setOutputAllocator(char const* tensorName, IOutputAllocator* outputAllocator) noexcept = 0;

  /// The allocator installed for output `tensorName`, or nullptr.
  virtual IOutputAllocator* getOutputAllocator(char const* tensorName) const noexcept = 0;

  /// Upper bound, in bytes, of output `tensorName` for the current input shapes; -1 on error.
  virtual int64_t getMaxOutputSize(char const* tensorName) const noexcept = 0;

  /// Enqueues one inference on `stream` using the addresses and shapes set before. Returns false if the work
  /// could not be enqueued; execution errors may also surface later, at stream synchronization.
  virtual bool enqueueV3(cudaStream_t stream) noexcept = 0;

 protected:
  IExecutionContext() = default;
};

/// Prints information about an engine's layers. Created by ICudaEngine::createEngineInspector(); the caller
/// owns it and deletes it before the engine. The detail available depends on ProfilingVerbosity.
class KILN_API IEngineInspector : public INoCopy {
 public:
  virtual ~IEngineInspector() noexcept = default;

  /// Uses `context` (not owned; nullptr to clear) so that shape-dependent details reflect its shapes.
  /// Returns false if the context belongs to another engine.
  virtual bool setExecutionContext(IExecutionContext const* context) noexcept = 0;

  /// The context set by setExecutionContext(), or nullptr.
  virtual IExecutionContext const* getExecutionContext() const noexcept = 0;

  /// Description of layer `layerIndex`, owned by the inspector and valid until its next call; nullptr for a
  /// bad index.
  virtual char const* getLayerInformation(int32_t layerIndex,
                                          LayerInformationFormat format) const noexcept = 0;

  /// Description of the whole engine, owned by the inspector and valid until its next call.
  virtual char const* getEngineInformation(LayerInformationFormat format) const noexcept = 0;

  /// Attaches an error recorder (nullptr detaches it).
  virtual void setErrorRecorder(IErrorRecorder* recorder) noexcept = 0;

  /// The attached error recorder, or nullptr.
  virtual IErrorRecorder* getErrorRecorder() const noexcept = 0;

 protected:
  IEngineInspector() = default;
};

/// Kiln extension, not in TensorRT. How many leading bytes of a plan getPlanSummary() needs, judged from the
/// `size` bytes at `blob`: a value larger than `size` means "read at least that many and ask again" (at most
/// three rounds: fixed header, section table, graph section); a value no larger than `size` means the bytes
/// given suffice. Returns -1 if the bytes given are not the start of a Kiln plan.
KILN_API int64_t getPlanSummaryBytesNeeded(void const* blob, std::size_t size) noexcept;

/// Kiln extension, not in TensorRT. Describes a plan from its header and graph section alone, without
/// creating an engine, needing a device, or reading the weights: `blob` holds the plan's first `size` bytes,
/// which need only reach the end of the graph section (see getPlanSummaryBytesNeeded()). The description is
/// UTF-8 JSON text (not NUL-terminated) with the keys documented in docs/api-notes.md: format and Kiln
/// versions, target, flags, sections (kind, offset, size, XXH3-64 checksum, whether it was verified), name,
/// builder flags, precisions, tactic sources, optimization level, I/O tensors, profiles, layer counts per op and
/// precision, plugins, activation memory and weight bytes. Returns a buffer owned by the caller, or nullptr
/// when the header or graph section is missing, corrupt or fails verification; the reason goes to `logger`
/// (kERROR) when it is not null.
KILN_API IHostMemory* getPlanSummary(void const* blob, std::size_t size, ILogger* logger) noexcept;

/// The library's KILN_VERSION (from the kiln_version.h it was built with).
extern "C" KILN_API int32_t getInferLibVersion() noexcept;

/// Internal entry point behind createInferRuntime(); call that instead. `logger` is an ILogger*, `version`
/// the caller's KILN_VERSION. Returns an IRuntime*, or nullptr if the versions are incompatible (see
/// kiln_version.h) or creation failed.
extern "C" KILN_API void* createInferRuntime_INTERNAL(void* logger, int32_t version) noexcept;

/// Creates a runtime that logs to `logger`, which must outlive it and everything created from it.
/// Returns a runtime owned by the caller (release with delete), or nullptr if this header and the library
/// are incompatible versions or creation failed (the reason is logged).
inline IRuntime* createInferRuntime(ILogger& logger) noexcept {
  return static_cast<IRuntime*>(createInferRuntime_INTERNAL(&logger, KILN_VERSION));
}

}  // namespace kiln

#endif  // KILN_KILN_RUNTIME_H
