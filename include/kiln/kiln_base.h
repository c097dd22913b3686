// Kiln public API, foundation layer: export macros, CUDA handle typedefs, shapes, data types, weights, the
// enums shared by builder and runtime, and the application-implemented callback interfaces (logger, error
// recorder, GPU allocator, profiler, progress monitor). Mirrors TensorRT 10.16 in namespace kiln.
#ifndef KILN_KILN_BASE_H
#define KILN_KILN_BASE_H

#include <cstddef>
#include <cstdint>

#include "kiln_version.h"

//
// Export / deprecation macros.
//

#ifndef KILN_API
#if defined(__GNUC__) || defined(__clang__)
/// Marks a function or class whose symbol (or typeinfo/vtable) must be visible outside libkiln.
/// Library interfaces carry it so that typeinfo and dynamic_cast agree across the shared-object boundary.
#define KILN_API __attribute__((visibility("default")))
#else
#define KILN_API
#endif
#endif

/// Expands to [[deprecated]] when KILN_ENABLE_DEPRECATION_WARNINGS is defined, and to nothing otherwise.
/// Items TensorRT 10.16 marks deprecated carry it; warnings are opt-in so -Werror builds that implement
/// or test those items keep compiling.
#ifndef KILN_DEPRECATED
#if defined(KILN_ENABLE_DEPRECATION_WARNINGS)
#define KILN_DEPRECATED [[deprecated]]
#else
#define KILN_DEPRECATED
#endif
#endif

// Silences deprecation warnings inside the few header bodies that call deprecated members on purpose.
#if defined(__GNUC__) || defined(__clang__)
#define KILN_IGNORE_DEPRECATED_BEGIN \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
#define KILN_IGNORE_DEPRECATED_END _Pragma("GCC diagnostic pop")
#else
#define KILN_IGNORE_DEPRECATED_BEGIN
#define KILN_IGNORE_DEPRECATED_END
#endif

//
// CUDA handle types. The headers must compile without CUDA installed, so the two opaque handle typedefs
// are declared here unless CUDA's runtime headers were already seen or the user opts out with
// KILN_NO_CUDA_TYPES. CUDA declares exactly the same typedefs at global scope, and repeating an identical
// typedef is legal C++, so including CUDA's headers after this one is also fine.
//
#if !defined(KILN_NO_CUDA_TYPES) && !defined(__CUDA_RUNTIME_API_H__) && !defined(__DRIVER_TYPES_H__)
struct CUstream_st;
struct CUevent_st;
/// Opaque CUDA stream handle (nullptr is the legacy default stream).
typedef struct CUstream_st* cudaStream_t;
/// Opaque CUDA event handle.
typedef struct CUevent_st* cudaEvent_t;
#endif

/// The Kiln public API. Names, signatures and enum values follow TensorRT 10.16's nvinfer1 namespace;
/// items that do not exist in TensorRT are marked "Kiln extension" where they are declared.
namespace kiln {

/// Character type of every string that crosses the API.
using char_t = char;
/// Character type of log and error messages (plain ASCII text).
using AsciiChar = char_t;

//
// EnumMax
//

namespace impl {
/// Holds kVALUE, the number of enumerators of enum T. Specialized next to each public enum.
template <typename T>
struct EnumMaxImpl;
}  // namespace impl

/// Number of enumerators of enum T (one past its largest value for the contiguous enums of this API).
template <typename T>
constexpr int32_t EnumMax() noexcept {
  return impl::EnumMaxImpl<T>::kVALUE;
}

//
// Data types
//

/// Element type of a tensor or of Weights.
enum class DataType : int32_t {
  kFLOAT = 0,  ///< IEEE 754 binary32.
  kHALF = 1,   ///< IEEE 754 binary16.
  kINT8 = 2,   ///< Signed 8-bit integer; in quantized networks, a quantized value.
  kINT32 = 3,  ///< Signed 32-bit integer.
  kBOOL = 4,   ///< 8-bit boolean: 0 is false, 1 is true, other bit patterns are undefined.
  kUINT8 = 5,  ///< Unsigned 8-bit integer (plain integers, never a quantized encoding).
  kFP8 = 6,    ///< 8-bit float E4M3 (1 sign, 4 exponent, 3 mantissa bits, bias 7).
  kBF16 = 7,   ///< bfloat16 (8 exponent, 7 stored mantissa bits).
  kINT64 = 8,  ///< Signed 64-bit integer.
  kINT4 = 9,   ///< Signed 4-bit integer, two per byte.
  kFP4 = 10,   ///< 4-bit float E2M1, two per byte.
  kE8M0 = 11,  ///< Unsigned exponent-only 8-bit float, used for block quantization scales.
  // Kiln extensions, not in TensorRT: ONNX types that the reference backend computes (the GPU need not).
  // They lie outside EnumMax<DataType>(), which keeps TensorRT's value.
  kFLOAT64 = 100,  ///< IEEE 754 binary64. Kiln extension.
  kINT16 = 101,    ///< Signed 16-bit integer. Kiln extension.
  kUINT16 = 102,   ///< Unsigned 16-bit integer. Kiln extension.
  kUINT32 = 103,   ///< Unsigned 32-bit integer. Kiln extension.
  kUINT64 = 104,   ///< Unsigned 64-bit integer. Kiln extension.
};

namespace impl {
template <>
struct EnumMaxImpl<DataType> {
  static constexpr int32_t kVALUE = 12;
};
}  // namespace impl

//
// Shapes
//

/// Tensor shape of rank 0..MAX_DIMS. Only the first nbDims entries of d are meaningful.
/// A dimension of -1 means "unknown until runtime". nbDims == -1 marks an invalid shape (d all 0) or an
/// unknown rank (d all -1), as returned by queries that fail.
class Dims64 {
 public:
  /// Largest supported rank.
  static constexpr int32_t MAX_DIMS{8};
  /// Rank.
  int32_t nbDims;
  /// Extent of each dimension.
  int64_t d[MAX_DIMS];
};

/// The shape type used everywhere in the API.
using Dims = Dims64;

/// Rank-2 shape; unused trailing entries are zeroed.
class Dims2 : public Dims {
 public:
  /// {0, 0}.
  Dims2() : Dims2(0, 0) {}
  /// {d0, d1}.
  Dims2(int64_t d0, int64_t d1) : Dims64{2, {d0, d1}} {}
};

/// Rank-2 shape read as (height, width).
class DimsHW : public Dims2 {
 public:
  /// {0, 0}.
  DimsHW() : Dims2() {}
  /// {height, width}.
  DimsHW(int64_t height, int64_t width) : Dims2(height, width) {}
  /// Height (d[0]).
  int64_t& h() { return d[0]; }
  /// Height (d[0]).
  int64_t h() const { return d[0]; }
  /// Width (d[1]).
  int64_t& w() { return d[1]; }
  /// Width (d[1]).
  int64_t w() const { return d[1]; }
};

/// Rank-3 shape; unused trailing entries are zeroed.
class Dims3 : public Dims2 {
 public:
  /// {0, 0, 0}.
  Dims3() : Dims3(0, 0, 0) {}
  /// {d0, d1, d2}.
  Dims3(int64_t d0, int64_t d1, int64_t d2) : Dims2(d0, d1) {
    nbDims = 3;
    d[2] = d2;
  }
};

/// Rank-4 shape; unused trailing entries are zeroed.
class Dims4 : public Dims3 {
 public:
  /// {0, 0, 0, 0}.
  Dims4() : Dims4(0, 0, 0, 0) {}
  /// {d0, d1, d2, d3}.
  Dims4(int64_t d0, int64_t d1, int64_t d2, int64_t d3) : Dims3(d0, d1, d2) {
    nbDims = 4;
    d[3] = d3;
  }
};

/// Axis permutation for IShuffleLayer: output axis i takes input axis order[i]. Entries past the tensor's
/// rank are ignored.
struct Permutation {
  int32_t order[Dims::MAX_DIMS];
};

//
// Weights
//

/// A constant array used as a layer parameter. Kiln does not copy or own `values`: the caller keeps the
/// memory alive and unchanged until the network using it has been built (buildSerializedNetwork returned).
/// "Empty weights" means count == 0 and values == nullptr.
class Weights {
 public:
  DataType type;       ///< Element type of `values`.
  void const* values;  ///< Contiguous elements, host memory.
  int64_t count;       ///< Number of elements (not bytes).
};

//
// Tensor formats, IO modes, devices, tactics
//

/// Memory layout of an engine input/output tensor. Vector formats group V channels together: "vector-major"
/// formats add an inner axis of V elements after the last axis, "vector-minor" ones move the (padded)
/// channel axis to the innermost position.
enum class TensorFormat : int32_t {
  kLINEAR = 0,      ///< Row-major, unit stride on the last axis (default; available for every type).
  kCHW2 = 1,        ///< Vector-major, 2 channels per vector, vector axis third from last.
  kHWC8 = 2,        ///< Vector-minor, 8 channels per vector, vector axis third from last.
  kCHW4 = 3,        ///< Vector-major, 4 channels per vector, vector axis third from last.
  kCHW16 = 4,       ///< Vector-major, 16 channels per vector, vector axis third from last.
  kCHW32 = 5,       ///< Vector-major, 32 channels per vector, vector axis third from last.
  kDHWC8 = 6,       ///< Vector-minor, 8 channels per vector, vector axis fourth from last.
  kCDHW32 = 7,      ///< Vector-major, 32 channels per vector, vector axis fourth from last.
  kHWC = 8,         ///< Vector-minor, channels innermost and unpadded, channel axis third from last.
  kDLA_LINEAR = 9,  ///< DLA planar layout with 64-byte aligned rows.
  kDLA_HWC4 = 10,   ///< DLA image layout (C of 1, 3 or 4, padded to 4).
  kHWC16 = 11,      ///< Vector-minor, 16 channels per vector, vector axis third from last.
  kDHWC = 12,       ///< Vector-minor, channels innermost and unpadded, channel axis fourth from last.
};

namespace impl {
template <>
struct EnumMaxImpl<TensorFormat> {
  static constexpr int32_t kVALUE = 13;
};
}  // namespace impl

/// Bit set of TensorFormat values: bit (1U << static_cast<int32_t>(format)) allows `format`.
using TensorFormats = uint32_t;

/// Whether a named tensor is an engine input, an engine output, or neither.
enum class TensorIOMode : int32_t {
  kNONE = 0,    ///< Not an input or output (or the name is unknown).
  kINPUT = 1,   ///< Engine input.
  kOUTPUT = 2,  ///< Engine output.
};

namespace impl {
template <>
struct EnumMaxImpl<TensorIOMode> {
  static constexpr int32_t kVALUE = 3;
};
}  // namespace impl

/// Device that a layer (or a whole engine) runs on.
enum class DeviceType : int32_t {
  kGPU = 0,  ///< CUDA GPU.
  kDLA = 1,  ///< NVIDIA Deep Learning Accelerator.
  kCPU = 2,  ///< Host CPU. Kiln extension, not in TensorRT (TensorRT has only kGPU and kDLA).
};

namespace impl {
template <>
struct EnumMaxImpl<DeviceType> {
  static constexpr int32_t kVALUE = 3;  // TensorRT's value is 2; kCPU is Kiln's.
};
}  // namespace impl

/// Families of kernel implementations ("tactics") the builder may choose from. Values 0..4 match TensorRT;
/// values 5..7 are Kiln extensions, not in TensorRT.
enum class TacticSource : int32_t {
  kCUBLAS KILN_DEPRECATED = 0,     ///< cuBLAS kernels (deprecated in TensorRT 10.0).
  kCUBLAS_LT KILN_DEPRECATED = 1,  ///< cuBLASLt kernels (deprecated in TensorRT 9.0).
  kCUDNN KILN_DEPRECATED = 2,      ///< cuDNN kernels (deprecated in TensorRT 10.0).
  kEDGE_MASK_CONVOLUTIONS = 3,     ///< Convolutions using edge-mask tables (more memory, often faster).
  kJIT_CONVOLUTIONS = 4,           ///< Convolutions generated by JIT source fusion (longer builds).
  kKILN = 5,                       ///< Kiln extension: Kiln's own generated/hand-written kernels.
  kONEDNN = 6,                     ///< Kiln extension: oneDNN kernels (DeviceType::kCPU).
  kREFERENCE = 7,                  ///< Kiln extension: the slow, simple reference kernels.
};

namespace impl {
template <>
struct EnumMaxImpl<TacticSource> {
  static constexpr int32_t kVALUE = 8;  // TensorRT's value is 5; kKILN, kONEDNN, kREFERENCE are Kiln's.
};
}  // namespace impl

/// Bit set of TacticSource values: bit (1U << static_cast<int32_t>(source)) enables `source`.
using TacticSources = uint32_t;

//
// Versioned interfaces
//

/// Name of an interface kind, e.g. "IGpuAllocator".
using InterfaceKind = char const*;

/// Kind and version of an IVersionedInterface implementation.
class InterfaceInfo {
 public:
  InterfaceKind kind;  ///< Interface name.
  int32_t major;       ///< Interface major version.
  int32_t minor;       ///< Interface minor version.
};

/// Language an interface implementation is written in.
enum class APILanguage : int32_t {
  kCPP = 0,     ///< C++.
  kPYTHON = 1,  ///< Python (through bindings).
};

namespace impl {
template <>
struct EnumMaxImpl<APILanguage> {
  static constexpr int32_t kVALUE = 2;
};
}  // namespace impl

/// Base of application-implemented interfaces whose layout may evolve; lets Kiln check which version of
/// an interface an object implements before calling newer methods.
class KILN_API IVersionedInterface {
 public:
  /// Implementation language. Applications must not override it.
  virtual APILanguage getAPILanguage() const noexcept { return APILanguage::kCPP; }

  /// Interface kind and version. Each Kiln interface implements it; applications must not override it.
  virtual InterfaceInfo getInterfaceInfo() const noexcept = 0;

  virtual ~IVersionedInterface() noexcept = default;

 protected:
  IVersionedInterface() = default;
  IVersionedInterface(IVersionedInterface const&) = default;
  IVersionedInterface(IVersionedInterface&&) = default;
  IVersionedInterface& operator=(IVersionedInterface const&) & = default;
  IVersionedInterface& operator=(IVersionedInterface&&) & = default;
};

//
// Logging
//

/// Application-implemented sink for messages from the builder, runtime and everything they create.
/// The logger passed to createInferBuilder/createInferRuntime must outlive every object created from them.
/// Kiln may call log() from several threads at once and holds no lock while doing so: make it thread-safe.
class KILN_API ILogger {
 public:
  /// Message severity; lower values are more severe.
  enum class Severity : int32_t {
    kINTERNAL_ERROR = 0,  ///< Kiln hit an internal inconsistency; the object that reported it is unusable.
    kERROR = 1,           ///< An API misuse or failure; the call that reported it failed.
    kWARNING = 2,         ///< Something is suspicious but Kiln recovered or fell back to a default.
    kINFO = 3,            ///< Progress and summary information.
    kVERBOSE = 4,         ///< Detailed debugging output.
  };

  /// Receives one message. `msg` is null-terminated and only valid during the call.
  virtual void log(Severity severity, AsciiChar const* msg) noexcept = 0;

  ILogger() = default;
  virtual ~ILogger() noexcept = default;

 protected:
  ILogger(ILogger const&) = default;
  ILogger(ILogger&&) = default;
  ILogger& operator=(ILogger const&) & = default;
  ILogger& operator=(ILogger&&) & = default;
};

namespace impl {
template <>
struct EnumMaxImpl<ILogger::Severity> {
  static constexpr int32_t kVALUE = 5;
};
}  // namespace impl

//
// Error reporting
//

/// Category of an error reported through IErrorRecorder.
enum class ErrorCode : int32_t {
  kSUCCESS = 0,                ///< No error.
  kUNSPECIFIED_ERROR = 1,      ///< An error that fits no other category.
  kINTERNAL_ERROR = 2,         ///< Kiln's internal state is broken; further calls on the object are UB.
  kINVALID_ARGUMENT = 3,       ///< An argument is invalid on its own (API contract violation).
  kINVALID_CONFIG = 4,         ///< Arguments are individually valid but inconsistent with each other.
  kFAILED_ALLOCATION = 5,      ///< A host or device allocation failed (or exceeded a memory limit).
  kFAILED_INITIALIZATION = 6,  ///< A component Kiln depends on failed to initialize (setup problem).
  kFAILED_EXECUTION = 7,       ///< Execution stopped early (asynchronous error, cancellation, device error).
  kFAILED_COMPUTATION = 8,     ///< Execution finished but produced corrupt data (e.g. NaN, overflow).
  kINVALID_STATE = 9,          ///< Calls were made in an order that left the object in a bad state.
  kUNSUPPORTED_STATE = 10,     ///< The request is valid but not supported on this device or configuration.
};

namespace impl {
template <>
struct EnumMaxImpl<ErrorCode> {
  static constexpr int32_t kVALUE = 11;
};
}  // namespace impl

/// Application-implemented, reference-counted error store. Attach one with setErrorRecorder(); objects
/// created from an object with a recorder inherit it. Kiln calls incRefCount() when it keeps a pointer and
/// decRefCount() when it drops it; destroying a recorder whose count is not back to zero is undefined.
/// All methods may be called concurrently from several threads: make them thread-safe.
class KILN_API IErrorRecorder : public IVersionedInterface {
 public:
  /// Returns {"IErrorRecorder", 1, 0}. Applications must not override it.
  InterfaceInfo getInterfaceInfo() const noexcept override { return InterfaceInfo{"IErrorRecorder", 1, 0}; }

  /// Null-terminated error description.
  using ErrorDesc = char const*;
  /// Longest description Kiln passes to reportError, in bytes, not counting the terminator.
  static constexpr size_t kMAX_DESC_LENGTH{127U};
  /// Reference count type.
  using RefCount = int32_t;

  IErrorRecorder() = default;
  ~IErrorRecorder() noexcept override = default;

  /// Number of errors stored since the last clear(); once the store is full, its capacity.
  virtual int32_t getNbErrors() const noexcept = 0;

  /// Code of error `errorIdx` (0-based); ErrorCode::kUNSPECIFIED_ERROR if the index is out of range.
  virtual ErrorCode getErrorCode(int32_t errorIdx) const noexcept = 0;

  /// Description of error `errorIdx`, owned by the recorder; an empty string if the index is out of range.
  virtual ErrorDesc getErrorDesc(int32_t errorIdx) const noexcept = 0;

  /// True if errors were dropped because the store was full.
  virtual bool hasOverflowed() const noexcept = 0;

  /// Forgets all stored errors; afterwards getNbErrors() is 0 and hasOverflowed() is false.
  virtual void clear() noexcept = 0;

  /// Called by Kiln to record an error. `desc` is only valid during the call: copy it, do not keep the
  /// pointer. Returns true if the error should be treated as fatal for the current call.
  virtual bool reportError(ErrorCode val, ErrorDesc desc) noexcept = 0;

  /// Adds one reference; returns the new count.
  virtual RefCount incRefCount() noexcept = 0;

  /// Drops one reference; returns the new count.
  virtual RefCount decRefCount() noexcept = 0;

 protected:
  IErrorRecorder(IErrorRecorder const&) = default;
  IErrorRecorder(IErrorRecorder&&) = default;
  IErrorRecorder& operator=(IErrorRecorder const&) & = default;
  IErrorRecorder& operator=(IErrorRecorder&&) & = default;
};

//
// GPU memory allocation
//

/// Properties requested for an allocation.
enum class AllocatorFlag : int32_t {
  kRESIZABLE = 0,  ///< Kiln may later call reallocate() on the block.
};

namespace impl {
template <>
struct EnumMaxImpl<AllocatorFlag> {
  static constexpr int32_t kVALUE = 1;
};
}  // namespace impl

/// Bit set of AllocatorFlag values.
using AllocatorFlags = uint32_t;

/// Application-implemented device memory allocator, installed with IBuilder/IRuntime::setGpuAllocator().
/// It must outlive every object that uses it, and every method must be thread-safe.
/// Override allocate/deallocate (synchronous) and, for stream-ordered allocation, also allocateAsync and
/// deallocateAsync; the asynchronous defaults forward to the synchronous methods.
class KILN_API IGpuAllocator : public IVersionedInterface {
 public:
  /// Returns a block of at least `size` bytes aligned to `alignment` (0 or a power of two no larger than
  /// cudaMalloc's guarantee), or nullptr on failure or when size is 0. `flags` is a set of AllocatorFlag.
  /// Deprecated in TensorRT 10.0 in favor of allocateAsync(), but still required.
  KILN_DEPRECATED virtual void* allocate(uint64_t const size, uint64_t const alignment,
                                         AllocatorFlags const flags) noexcept = 0;

  ~IGpuAllocator() override = default;
  IGpuAllocator() = default;

  /// Resizes a block allocated with AllocatorFlag::kRESIZABLE, keeping min(old, new) bytes: returns the
  /// (possibly moved) block, or nullptr if resizing is not supported, in which case `baseAddr` stays valid.
  /// The default returns nullptr.
  virtual void* reallocate(void* const baseAddr, uint64_t alignment, uint64_t newSize) noexcept {
    (void)baseAddr;
    (void)alignment;
    (void)newSize;
    return nullptr;
  }

  /// Frees a block returned by allocate()/reallocate() of this allocator (nullptr must be accepted).
  /// Returns true on success. Deprecated in TensorRT 10.0 in favor of deallocateAsync(), but still required.
  KILN_DEPRECATED virtual bool deallocate(void* const memory) noexcept = 0;

  /// Stream-ordered allocate(): the block may only be used in `stream` order. Default: allocate().
  virtual void* allocateAsync(uint64_t const size, uint64_t const alignment, AllocatorFlags const flags,
                              cudaStream_t stream) noexcept {
    (void)stream;
    KILN_IGNORE_DEPRECATED_BEGIN
    return allocate(size, alignment, flags);
    KILN_IGNORE_DEPRECATED_END
  }

  /// Stream-ordered deallocate(): the memory must not be reused before work already queued on `stream`
  /// has finished. Returns true on success. Default: deallocate().
  virtual bool deallocateAsync(void* const memory, cudaStream_t stream) noexcept {
    (void)stream;
    KILN_IGNORE_DEPRECATED_BEGIN
    return deallocate(memory);
    KILN_IGNORE_DEPRECATED_END
  }

  /// Returns {"IGpuAllocator", 1, 0}. Applications must not override it.
  InterfaceInfo getInterfaceInfo() const noexcept override { return {"IGpuAllocator", 1, 0}; }

 protected:
  IGpuAllocator(IGpuAllocator const&) = default;
  IGpuAllocator(IGpuAllocator&&) = default;
  IGpuAllocator& operator=(IGpuAllocator const&) & = default;
  IGpuAllocator& operator=(IGpuAllocator&&) & = default;
};

//
// Profiling and build progress
//

/// Application-implemented per-layer timing sink, installed with IExecutionContext::setProfiler().
class KILN_API IProfiler {
 public:
  /// Called once per layer per profiled execution. `layerName` is only valid during the call (it is the
  /// decimal layer index when the engine was built with ProfilingVerbosity::kNONE).
  virtual void reportLayerTime(char const* layerName, float ms) noexcept = 0;

  virtual ~IProfiler() noexcept = default;
};

/// Application-implemented build progress sink, installed with IBuilderConfig::setProgressMonitor().
/// Build phases nest; a phase reports a fixed number of steps. Calls may come from several threads.
class KILN_API IProgressMonitor : public IVersionedInterface {
 public:
  IProgressMonitor() = default;
  ~IProgressMonitor() noexcept override = default;

  /// Returns {"IProgressMonitor", 1, 0}. Applications must not override it.
  InterfaceInfo getInterfaceInfo() const noexcept override { return InterfaceInfo{"IProgressMonitor", 1, 0}; }

  /// A phase named `phaseName` starts; `parentPhase` is the enclosing phase or nullptr, `nbSteps` the number
  /// of stepComplete() calls that will follow. Strings are only valid during the call.
  virtual void phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept = 0;

  /// Step `step` (0-based) of `phaseName` finished. Return false to cancel the build, which then fails.
  virtual bool stepComplete(char const* phaseName, int32_t step) noexcept = 0;

  /// Phase `phaseName` ended (also after cancellation).
  virtual void phaseFinish(char const* phaseName) noexcept = 0;

 protected:
  IProgressMonitor(IProgressMonitor const&) = default;
  IProgressMonitor(IProgressMonitor&&) = default;
  IProgressMonitor& operator=(IProgressMonitor const&) & = default;
  IProgressMonitor& operator=(IProgressMonitor&&) & = default;
};

//
// Library-implemented objects
//

/// Base of every interface implemented by libkiln. Such objects are neither copyable nor movable and are
/// only handled through pointers/references; the ones returned as owned pointers are released with delete.
class KILN_API INoCopy {
 public:
  virtual ~INoCopy() noexcept = default;

 protected:
  INoCopy() = default;
  INoCopy(INoCopy const& other) = delete;
  INoCopy& operator=(INoCopy const& other) = delete;
  INoCopy(INoCopy&& other) = delete;
  INoCopy& operator=(INoCopy&& other) = delete;
};

/// A buffer allocated by Kiln and handed to the caller (serialized engines, for example). The caller owns
/// the object and frees the buffer by deleting it.
class KILN_API IHostMemory : public INoCopy {
 public:
  virtual ~IHostMemory() noexcept = default;

  /// Start of the buffer (host memory); nullptr when size() is 0. Valid until this object is deleted.
  virtual void* data() const noexcept = 0;

  /// Size of the buffer in bytes.
  virtual std::size_t size() const noexcept = 0;

  /// Element type of the buffer; DataType::kUINT8 for serialized engines.
  virtual DataType type() const noexcept = 0;

 protected:
  IHostMemory() = default;
};

//
// Enums shared by the builder and the runtime
//

/// Which restrictions the builder applies and which runtime the engine targets.
enum class EngineCapability : int32_t {
  kSTANDARD = 0,        ///< No restrictions; runs on the standard runtime.
  kSAFETY = 1,          ///< Safety-certified subset (not supported by Kiln; building fails).
  kDLA_STANDALONE = 2,  ///< DLA-only subset for standalone DLA runtimes (not supported by Kiln).
};

namespace impl {
template <>
struct EnumMaxImpl<EngineCapability> {
  static constexpr int32_t kVALUE = 3;
};
}  // namespace impl

/// When an execution context allocates its device scratch memory.
enum class ExecutionContextAllocationStrategy : int32_t {
  kSTATIC = 0,             ///< Once, at creation, sized for the largest optimization profile.
  kON_PROFILE_CHANGE = 1,  ///< When the active optimization profile is selected, sized for that profile.
  kUSER_MANAGED = 2,       ///< Never; the user provides it with IExecutionContext::setDeviceMemoryV2().
};

namespace impl {
template <>
struct EnumMaxImpl<ExecutionContextAllocationStrategy> {
  static constexpr int32_t kVALUE = 3;
};
}  // namespace impl

/// How much per-layer information an engine keeps for profiling, NVTX ranges and IEngineInspector.
enum class ProfilingVerbosity : int32_t {
  kLAYER_NAMES_ONLY = 0,  ///< Layer names only (the default).
  kNONE = 1,              ///< Nothing; layers are identified by index.
  kDETAILED = 2,          ///< Names plus layer parameters, tactics and formats.
};

namespace impl {
template <>
struct EnumMaxImpl<ProfilingVerbosity> {
  static constexpr int32_t kVALUE = 3;
};
}  // namespace impl

/// Output format of IEngineInspector.
enum class LayerInformationFormat : int32_t {
  kONELINE = 0,  ///< One line of text per layer.
  kJSON = 1,     ///< JSON.
};

namespace impl {
template <>
struct EnumMaxImpl<LayerInformationFormat> {
  static constexpr int32_t kVALUE = 2;
};
}  // namespace impl

/// Which of the three shapes of an optimization profile entry is meant.
enum class OptProfileSelector : int32_t {
  kMIN = 0,  ///< Smallest shape the profile accepts.
  kOPT = 1,  ///< Shape the builder tunes for.
  kMAX = 2,  ///< Largest shape the profile accepts.
};

namespace impl {
template <>
struct EnumMaxImpl<OptProfileSelector> {
  static constexpr int32_t kVALUE = 3;
};
}  // namespace impl

/// Memory pools whose size the builder configuration can cap (IBuilderConfig::setMemoryPoolLimit).
enum class MemoryPoolType : int32_t {
  kWORKSPACE = 0,             ///< Scratch memory of a single layer (default: the device's total memory).
  kDLA_MANAGED_SRAM = 1,      ///< DLA on-chip SRAM.
  kDLA_LOCAL_DRAM = 2,        ///< DLA local DRAM for intermediate tensors.
  kDLA_GLOBAL_DRAM = 3,       ///< DLA global DRAM for weights and metadata.
  kTACTIC_DRAM = 4,           ///< Device memory used while timing tactics during the build.
  kTACTIC_SHARED_MEMORY = 5,  ///< Shared memory per block available to tactics.
};

namespace impl {
template <>
struct EnumMaxImpl<MemoryPoolType> {
  static constexpr int32_t kVALUE = 6;
};
}  // namespace impl

/// Builder options, combined into BuilderFlags as bits (1U << static_cast<int32_t>(flag)).
/// Values are TensorRT 10.16's.
enum class BuilderFlag : int32_t {
  kFP16 KILN_DEPRECATED = 0,                           ///< Allow FP16 kernels (weak typing; deprecated).
  kINT8 KILN_DEPRECATED = 1,                           ///< Allow INT8 kernels (weak typing; deprecated).
  kDEBUG = 2,                                          ///< Synchronize after every layer.
  kGPU_FALLBACK = 3,                                   ///< Run on the GPU what the chosen device cannot.
  kREFIT = 4,                                          ///< Build a refittable engine.
  kDISABLE_TIMING_CACHE = 5,                           ///< Do not reuse timings across identical layers.
  kTF32 = 6,                                           ///< Allow TF32 for kFLOAT tensors (on by default).
  kSPARSE_WEIGHTS = 7,                                 ///< Allow kernels using structured weight sparsity.
  kSAFETY_SCOPE = 8,                                   ///< Check the network against EngineCapability.
  kOBEY_PRECISION_CONSTRAINTS KILN_DEPRECATED = 9,     ///< Layer precisions are requirements (deprecated).
  kPREFER_PRECISION_CONSTRAINTS KILN_DEPRECATED = 10,  ///< Layer precisions are preferences (deprecated).
  kDIRECT_IO KILN_DEPRECATED = 11,                     ///< No reformatting at engine boundaries (deprecated).
  kREJECT_EMPTY_ALGORITHMS KILN_DEPRECATED = 12,       ///< Fail if no algorithm is selected (deprecated).
  kVERSION_COMPATIBLE = 13,                            ///< Engine runs on later library versions.
  kEXCLUDE_LEAN_RUNTIME = 14,                          ///< Do not embed the lean runtime in the plan.
  kFP8 KILN_DEPRECATED = 15,                           ///< Allow FP8 kernels (weak typing; deprecated).
  kERROR_ON_TIMING_CACHE_MISS = 16,                    ///< Fail instead of timing an uncached tactic.
  kBF16 KILN_DEPRECATED = 17,                          ///< Allow BF16 kernels (weak typing; deprecated).
  kDISABLE_COMPILATION_CACHE = 18,                     ///< Do not cache JIT-compiled kernels.
  kSTRIP_PLAN = 19,                                    ///< Leave refittable weights out of the plan.
  kREFIT_IDENTICAL = 20,                               ///< Refit only with the weights given at build time.
  kWEIGHT_STREAMING = 21,                              ///< Allow weights to stream from host at runtime.
  kINT4 KILN_DEPRECATED = 22,                          ///< Allow INT4 weight kernels (deprecated).
  kREFIT_INDIVIDUAL = 23,                              ///< Only weights marked refittable are refittable.
  kSTRICT_NANS = 24,                                   ///< Kernels must not create or suppress NaNs.
  kMONITOR_MEMORY = 25,                                ///< Track memory use during the build.
  kFP4 KILN_DEPRECATED = 26,                           ///< Allow FP4 plugin IO (weak typing; deprecated).
  kEDITABLE_TIMING_CACHE = 27,                         ///< Allow editing the timing cache.
  kDISTRIBUTIVE_INDEPENDENCE = 28,                     ///< Distributive axes are evaluated identically.
};

namespace impl {
template <>
struct EnumMaxImpl<BuilderFlag> {
  static constexpr int32_t kVALUE = 29;
};
}  // namespace impl

/// Bit set of BuilderFlag values.
using BuilderFlags = uint32_t;

/// Immutable network properties chosen at IBuilder::createNetworkV2(), combined as bits
/// (1U << static_cast<int32_t>(flag)) into NetworkDefinitionCreationFlags.
enum class NetworkDefinitionCreationFlag : int32_t {
  kEXPLICIT_BATCH KILN_DEPRECATED = 0,  ///< Ignored: every network has an explicit batch axis.
  kSTRONGLY_TYPED = 1,                  ///< Tensor types follow from input types and layer semantics only.
  kPREFER_AOT_PYTHON_PLUGINS = 2,       ///< Prefer ahead-of-time Python plugin implementations.
  kPREFER_JIT_PYTHON_PLUGINS = 3,       ///< Prefer JIT Python plugin implementations.
};

namespace impl {
template <>
struct EnumMaxImpl<NetworkDefinitionCreationFlag> {
  static constexpr int32_t kVALUE = 4;
};
}  // namespace impl

/// Bit set of NetworkDefinitionCreationFlag values.
using NetworkDefinitionCreationFlags = uint32_t;

/// Which GPU architectures other than the build GPU's an engine must run on.
enum class HardwareCompatibilityLevel : int32_t {
  kNONE = 0,                     ///< Only the build GPU's architecture.
  kAMPERE_PLUS = 1,              ///< Ampere and newer GPUs.
  kSAME_COMPUTE_CAPABILITY = 2,  ///< GPUs with the build GPU's compute capability.
};

namespace impl {
template <>
struct EnumMaxImpl<HardwareCompatibilityLevel> {
  static constexpr int32_t kVALUE = 3;
};
}  // namespace impl

}  // namespace kiln

#endif  // KILN_KILN_BASE_H
