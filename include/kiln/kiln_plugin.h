// Kiln public API, plugin layer: the interfaces user-written layers implement (IPluginV2DynamicExt, IPluginV3
// and its capabilities), their creators, the process-wide plugin registry and REGISTER_KILN_PLUGIN. Mirrors the
// plugin parts of TensorRT 10.16 (NvInferRuntimePlugin.h, NvInferPluginBase.h, NvInferRuntime.h).
#ifndef KILN_KILN_PLUGIN_H
#define KILN_KILN_PLUGIN_H

#include "kiln_base.h"

// Opaque cuDNN / cuBLAS handles handed to IPluginV2Ext::attachToContext(). Declared here so that this header
// needs neither library; the real headers declare the same incomplete structs.
struct cudnnContext;
struct cublasContext;

namespace kiln {

//
// Plugin fields: the attributes a creator builds a plugin from
//

/// Element type of a PluginField's data.
enum class PluginFieldType : int32_t {
  kFLOAT16 = 0,  ///< 16-bit IEEE floats.
  kFLOAT32 = 1,  ///< 32-bit IEEE floats.
  kFLOAT64 = 2,  ///< 64-bit IEEE floats.
  kINT8 = 3,     ///< Signed 8-bit integers.
  kINT16 = 4,    ///< Signed 16-bit integers.
  kINT32 = 5,    ///< Signed 32-bit integers.
  kCHAR = 6,     ///< Characters (a string; length counts the characters).
  kDIMS = 7,     ///< kiln::Dims values.
  kUNKNOWN = 8,  ///< Opaque bytes (length counts bytes).
  kBF16 = 9,     ///< bfloat16 values.
  kINT64 = 10,   ///< Signed 64-bit integers.
  kFP8 = 11,     ///< 8-bit floats (E4M3).
  kINT4 = 12,    ///< Signed 4-bit integers, two per byte.
};

namespace impl {
template <>
struct EnumMaxImpl<PluginFieldType> {
  static constexpr int32_t kVALUE = 13;
};
}  // namespace impl

/// One named attribute passed to a plugin creator. Nothing is owned: `name` and `data` point at memory that
/// the caller keeps alive for the duration of the call that receives the field.
class PluginField {
 public:
  AsciiChar const* name;  ///< Attribute name (NUL-terminated).
  void const* data;       ///< First element; `length` elements of `type` follow.
  PluginFieldType type;   ///< Element type of `data`.
  int32_t length;         ///< Number of elements (bytes for kUNKNOWN).

  /// A field; every argument defaults to "empty" (nullptr, kUNKNOWN, 0).
  PluginField(AsciiChar const* const name_ = nullptr, void const* const data_ = nullptr,
              PluginFieldType const type_ = PluginFieldType::kUNKNOWN, int32_t const length_ = 0) noexcept
      : name(name_), data(data_), type(type_), length(length_) {}
};

/// A counted array of PluginFields (not owned).
struct PluginFieldCollection {
  int32_t nbFields{};           ///< Number of entries at `fields`.
  PluginField const* fields{};  ///< The entries.
};

/// The phase in which a V3 plugin is created (IPluginCreatorV3One::createPlugin).
enum class TensorRTPhase : int32_t {
  kBUILD = 0,    ///< While an engine is built.
  kRUNTIME = 1,  ///< While a plan is deserialized / an engine runs.
};

namespace impl {
template <>
struct EnumMaxImpl<TensorRTPhase> {
  static constexpr int32_t kVALUE = 2;
};
}  // namespace impl

/// The capability interfaces an IPluginV3 object can hand out.
enum class PluginCapabilityType : int32_t {
  kCORE = 0,     ///< IPluginV3OneCore; every V3 plugin has it.
  kBUILD = 1,    ///< IPluginV3OneBuild; needed by plugins added to a network.
  kRUNTIME = 2,  ///< IPluginV3OneRuntime; needed by plugins that run.
};

namespace impl {
template <>
struct EnumMaxImpl<PluginCapabilityType> {
  static constexpr int32_t kVALUE = 3;
};
}  // namespace impl

//
// Tensor descriptions seen by plugins
//

/// Tensor format as named by the older plugin interfaces.
using PluginFormat = TensorFormat;

/// Bit set in the upper byte of a plugin's version tag by Python-implemented plugins.
static constexpr int32_t kPLUGIN_VERSION_PYTHON_BIT = 0x40;

/// Shape, type and layout of one plugin input or output.
struct PluginTensorDesc {
  Dims dims;            ///< Dimensions (-1 for a dimension known only at run time, where that applies).
  DataType type;        ///< Element type.
  TensorFormat format;  ///< Memory layout.
  float scale;          ///< Quantization scale for kINT8 data; -1 where it does not apply.
};

/// Which generation of IPluginV2 an object implements (upper byte of IPluginV2::getTensorRTVersion()).
enum class PluginVersion : uint8_t {
  kV2 = 0,                                                 ///< IPluginV2.
  kV2_EXT = 1,                                             ///< IPluginV2Ext.
  kV2_IOEXT = 2,                                           ///< IPluginV2IOExt.
  kV2_DYNAMICEXT = 3,                                      ///< IPluginV2DynamicExt.
  kV2_DYNAMICEXT_PYTHON = kPLUGIN_VERSION_PYTHON_BIT | 3,  ///< IPluginV2DynamicExt written in Python.
};

/// Which generation of plugin creator an object implements.
enum class PluginCreatorVersion : int32_t {
  kV1 = 0,                                  ///< IPluginCreator.
  kV1_PYTHON = kPLUGIN_VERSION_PYTHON_BIT,  ///< IPluginCreator written in Python.
};

//
// Shape expressions (IPluginV2DynamicExt::getOutputDimensions, IPluginV3OneBuild::getOutputShapes)
//

/// Binary operations an IExprBuilder can build.
enum class DimensionOperation : int32_t {
  kSUM = 0,        ///< first + second.
  kPROD = 1,       ///< first * second.
  kMAX = 2,        ///< max(first, second).
  kMIN = 3,        ///< min(first, second).
  kSUB = 4,        ///< first - second.
  kEQUAL = 5,      ///< 1 when first == second, else 0.
  kLESS = 6,       ///< 1 when first < second, else 0.
  kFLOOR_DIV = 7,  ///< first / second rounded toward negative infinity.
  kCEIL_DIV = 8,   ///< first / second rounded toward positive infinity.
};

namespace impl {
template <>
struct EnumMaxImpl<DimensionOperation> {
  static constexpr int32_t kVALUE = 9;
};
}  // namespace impl

/// An integer expression over input dimensions, constants and DimensionOperations. Created only by Kiln
/// (through IExprBuilder) and owned by it; valid until the plugin method that received it returns.
class KILN_API IDimensionExpr : public INoCopy {
 public:
  /// True when the expression's value is known while building.
  virtual bool isConstant() const noexcept = 0;
  /// The value when isConstant(); otherwise the smallest int64_t.
  virtual int64_t getConstantValue() const noexcept = 0;
  /// True when the expression stands for the value of a size tensor (IExprBuilder::declareSizeTensor).
  virtual bool isSizeTensor() const noexcept = 0;
};

/// Builds IDimensionExprs inside getOutputDimensions / getOutputShapes. Implemented by Kiln only; the
/// expressions it returns are owned by Kiln and live until that plugin method returns.
class KILN_API IExprBuilder : public INoCopy {
 public:
  /// An expression with the constant `value`.
  virtual IDimensionExpr const* constant(int64_t value) noexcept = 0;
  /// `op` applied to `first` and `second`; nullptr when `op` is not a DimensionOperation.
  virtual IDimensionExpr const* operation(DimensionOperation op, IDimensionExpr const& first,
                                          IDimensionExpr const& second) noexcept = 0;
  /// Declares output `outputIndex` a size tensor (a 0-D int32 output whose value is a dimension of other
  /// outputs) with tuning value `opt` and upper bound `upper`; returns the expression for its value.
  /// Not noexcept, as in TensorRT.
  virtual IDimensionExpr const* declareSizeTensor(int32_t outputIndex, IDimensionExpr const& opt,
                                                  IDimensionExpr const& upper) = 0;
};

/// Dims with an expression per dimension.
class DimsExprs {
 public:
  int32_t nbDims;                           ///< Rank.
  IDimensionExpr const* d[Dims::MAX_DIMS];  ///< Extent of each dimension (the first nbDims are used).
};

/// A plugin input or output while building: the description plus the bounds of its dimensions in the
/// optimization profile being configured.
struct DynamicPluginTensorDesc {
  PluginTensorDesc desc;  ///< Type, format and dims (-1 where a dimension is known only at run time).
  Dims min;               ///< Smallest dimensions of the profile.
  Dims max;               ///< Largest dimensions of the profile.
  Dims opt;               ///< Dimensions the profile is tuned for.
};

//
// IPluginV2 family (deprecated in TensorRT 10 in favour of IPluginV3, still widely used)
//

/// Oldest plugin interface (implicit batch). Deprecated in TensorRT; kept because IPluginV2DynamicExt
/// derives from it. Plugins release themselves with destroy().
class KILN_API IPluginV2 {
 public:
  /// Version tag of the API the plugin was compiled against; do not override.
  virtual int32_t getTensorRTVersion() const noexcept { return KILN_TRT_API_VERSION; }
  /// Plugin type; matches the creator's getPluginName(). NUL-terminated, at most 1024 bytes.
  virtual AsciiChar const* getPluginType() const noexcept = 0;
  /// Plugin version; matches the creator's getPluginVersion().
  virtual AsciiChar const* getPluginVersion() const noexcept = 0;
  /// Number of outputs (positive).
  virtual int32_t getNbOutputs() const noexcept = 0;
  /// Implicit-batch output dimensions (not used by IPluginV2DynamicExt).
  virtual Dims getOutputDimensions(int32_t index, Dims const* inputs, int32_t nbInputDims) noexcept = 0;
  /// Implicit-batch format check (not used by IPluginV2DynamicExt).
  virtual bool supportsFormat(DataType type, PluginFormat format) const noexcept = 0;
  /// Implicit-batch configuration (not used by IPluginV2Ext and later).
  virtual void configureWithFormat(Dims const* inputDims, int32_t nbInputs, Dims const* outputDims, int32_t nbOutputs,
                                   DataType type, PluginFormat format, int32_t maxBatchSize) noexcept = 0;
  /// Prepares the plugin to run; 0 on success. Kiln calls it on the engine's plugin and on each context's copy.
  virtual int32_t initialize() noexcept = 0;
  /// Releases what initialize() acquired (called before destroy() on objects Kiln initialized).
  virtual void terminate() noexcept = 0;
  /// Implicit-batch workspace size (not used by IPluginV2DynamicExt).
  virtual size_t getWorkspaceSize(int32_t maxBatchSize) const noexcept = 0;
  /// Implicit-batch execution (not used by IPluginV2DynamicExt).
  virtual int32_t enqueue(int32_t batchSize, void const* const* inputs, void* const* outputs, void* workspace,
                          cudaStream_t stream) noexcept = 0;
  /// Bytes serialize() writes.
  virtual size_t getSerializationSize() const noexcept = 0;
  /// Writes getSerializationSize() bytes to `buffer`; the creator's deserializePlugin reads them back.
  virtual void serialize(void* buffer) const noexcept = 0;
  /// Releases this object (usually `delete this`). Kiln calls it on every plugin object it owns.
  virtual void destroy() noexcept = 0;
  /// A new, independent copy with the same parameters (nullptr on failure); the caller owns it.
  virtual IPluginV2* clone() const noexcept = 0;
  /// Sets the namespace the plugin object belongs to.
  virtual void setPluginNamespace(AsciiChar const* pluginNamespace) noexcept = 0;
  /// The namespace set with setPluginNamespace(); "" by default.
  virtual AsciiChar const* getPluginNamespace() const noexcept = 0;

  IPluginV2() = default;
  virtual ~IPluginV2() noexcept = default;

 protected:
  IPluginV2(IPluginV2 const&) = default;
  IPluginV2(IPluginV2&&) = default;
  IPluginV2& operator=(IPluginV2 const&) & = default;
  IPluginV2& operator=(IPluginV2&&) & = default;
};

/// IPluginV2 plus output types and execution-context attachment. Deprecated in TensorRT.
class KILN_API IPluginV2Ext : public IPluginV2 {
 public:
  /// Type of output `index` given the input types.
  virtual DataType getOutputDataType(int32_t index, DataType const* inputTypes, int32_t nbInputs) const noexcept = 0;
  /// Implicit-batch broadcasting (removed in TensorRT 10; not used).
  virtual bool isOutputBroadcastAcrossBatch(int32_t outputIndex, bool const* inputIsBroadcasted,
                                            int32_t nbInputs) const noexcept = 0;
  /// Implicit-batch broadcasting (removed in TensorRT 10; not used).
  virtual bool canBroadcastInputAcrossBatch(int32_t inputIndex) const noexcept = 0;
  /// Implicit-batch configuration (not used by IPluginV2IOExt / IPluginV2DynamicExt).
  virtual void configurePlugin(Dims const* inputDims, int32_t nbInputs, Dims const* outputDims, int32_t nbOutputs,
                               DataType const* inputTypes, DataType const* outputTypes, bool const* inputIsBroadcast,
                               bool const* outputIsBroadcast, PluginFormat floatFormat,
                               int32_t maxBatchSize) noexcept = 0;

  IPluginV2Ext() = default;
  ~IPluginV2Ext() override = default;

  /// Gives the plugin the execution context's cuDNN / cuBLAS handles (nullptr where unavailable) and allocator.
  /// Kiln calls it on each execution context's copy (null handles on CPU targets).
  virtual void attachToContext(cudnnContext* /*cudnn*/, cublasContext* /*cublas*/,
                               IGpuAllocator* /*allocator*/) noexcept {}
  /// Undoes attachToContext() (called before the context's copy is destroyed).
  virtual void detachFromContext() noexcept {}
  /// A copy carrying the same parameters and configuration; the caller owns it.
  IPluginV2Ext* clone() const noexcept override = 0;

 protected:
  IPluginV2Ext(IPluginV2Ext const&) = default;
  IPluginV2Ext(IPluginV2Ext&&) = default;
  IPluginV2Ext& operator=(IPluginV2Ext const&) & = default;
  IPluginV2Ext& operator=(IPluginV2Ext&&) & = default;

  /// kV2_EXT in the upper byte, the API version below; do not override.
  int32_t getTensorRTVersion() const noexcept override {
    return static_cast<int32_t>((static_cast<uint32_t>(PluginVersion::kV2_EXT) << 24U) |
                                (static_cast<uint32_t>(KILN_TRT_API_VERSION) & 0xFFFFFFU));
  }
  /// Unused by IPluginV2Ext and its subclasses.
  void configureWithFormat(Dims const* /*inputDims*/, int32_t /*nbInputs*/, Dims const* /*outputDims*/,
                           int32_t /*nbOutputs*/, DataType /*type*/, PluginFormat /*format*/,
                           int32_t /*maxBatchSize*/) noexcept override {}
};

/// IPluginV2Ext with per-tensor format negotiation (implicit batch). Deprecated in TensorRT.
class KILN_API IPluginV2IOExt : public IPluginV2Ext {
 public:
  /// Configures the plugin for the given input/output descriptions.
  virtual void configurePlugin(PluginTensorDesc const* in, int32_t nbInput, PluginTensorDesc const* out,
                               int32_t nbOutput) noexcept = 0;
  /// True when inOut[pos] (type, format) is supported given inOut[0..pos-1].
  virtual bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                         int32_t nbOutputs) const noexcept = 0;

  IPluginV2IOExt() = default;
  ~IPluginV2IOExt() override = default;

 protected:
  IPluginV2IOExt(IPluginV2IOExt const&) = default;
  IPluginV2IOExt(IPluginV2IOExt&&) = default;
  IPluginV2IOExt& operator=(IPluginV2IOExt const&) & = default;
  IPluginV2IOExt& operator=(IPluginV2IOExt&&) & = default;

  /// kV2_IOEXT in the upper byte; do not override.
  int32_t getTensorRTVersion() const noexcept override {
    return static_cast<int32_t>((static_cast<uint32_t>(PluginVersion::kV2_IOEXT) << 24U) |
                                (static_cast<uint32_t>(KILN_TRT_API_VERSION) & 0xFFFFFFU));
  }

 private:
  // The older entry points are closed off; the PluginTensorDesc forms above replace them.
  void configurePlugin(Dims const*, int32_t, Dims const*, int32_t, DataType const*, DataType const*, bool const*,
                       bool const*, PluginFormat, int32_t) noexcept final {}
  bool supportsFormat(DataType, PluginFormat) const noexcept final { return false; }
};

/// The dynamic-shape V2 plugin: output shapes as expressions over input shapes, per-tensor format negotiation,
/// configuration with profile bounds, descriptor-driven enqueue. Deprecated in TensorRT 10 (use IPluginV3),
/// still the interface most existing plugins implement. Besides the methods here, implement getNbOutputs,
/// getOutputDataType, initialize/terminate, getSerializationSize/serialize, destroy, clone,
/// set/getPluginNamespace and getPluginType/getPluginVersion.
/// Kiln builds and runs them (INetworkDefinition::addPluginV2; CPU targets through IPluginHostExecution).
class KILN_API IPluginV2DynamicExt : public IPluginV2Ext {
 public:
  /// A copy with the same parameters and configuration; the caller owns it.
  IPluginV2DynamicExt* clone() const noexcept override = 0;

  /// Dimensions of output `outputIndex` as expressions over `inputs` (nbInputs entries), built with
  /// `exprBuilder`.
  virtual DimsExprs getOutputDimensions(int32_t outputIndex, DimsExprs const* inputs, int32_t nbInputs,
                                        IExprBuilder& exprBuilder) noexcept = 0;

  /// At most this many format combinations are tried.
  static constexpr int32_t kFORMAT_COMBINATION_LIMIT = 100;

  /// True when inOut[pos] (inputs first, then outputs) is supported in its type and format, given the
  /// choices already made for inOut[0..pos-1]; entries after pos are undefined.
  virtual bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                         int32_t nbOutputs) noexcept = 0;

  /// Configures the plugin for the chosen formats and the profile's dimension bounds (build), or for concrete
  /// dimensions (run).
  virtual void configurePlugin(DynamicPluginTensorDesc const* in, int32_t nbInputs, DynamicPluginTensorDesc const* out,
                               int32_t nbOutputs) noexcept = 0;

  /// Scratch bytes enqueue() needs for these (or smaller) shapes.
  virtual size_t getWorkspaceSize(PluginTensorDesc const* inputs, int32_t nbInputs, PluginTensorDesc const* outputs,
                                  int32_t nbOutputs) const noexcept = 0;

  /// Runs the plugin on `stream`; 0 on success, non-zero fails the inference.
  virtual int32_t enqueue(PluginTensorDesc const* inputDesc, PluginTensorDesc const* outputDesc,
                          void const* const* inputs, void* const* outputs, void* workspace,
                          cudaStream_t stream) noexcept = 0;

 protected:
  /// kV2_DYNAMICEXT in the upper byte; do not override.
  int32_t getTensorRTVersion() const noexcept override {
    return static_cast<int32_t>((static_cast<uint32_t>(PluginVersion::kV2_DYNAMICEXT) << 24U) |
                                (static_cast<uint32_t>(KILN_TRT_API_VERSION) & 0xFFFFFFU));
  }

  virtual ~IPluginV2DynamicExt() noexcept {}

 private:
  // Implicit-batch entry points of the base classes, closed off so that dynamic plugins need not (and
  // cannot) implement them.
  void configurePlugin(Dims const*, int32_t, Dims const*, int32_t, DataType const*, DataType const*, bool const*,
                       bool const*, PluginFormat, int32_t) noexcept final {}
  bool supportsFormat(DataType, PluginFormat) const noexcept final { return false; }
  Dims getOutputDimensions(int32_t, Dims const*, int32_t) noexcept final { return Dims{-1, {}}; }
  bool isOutputBroadcastAcrossBatch(int32_t, bool const*, int32_t) const noexcept final { return false; }
  bool canBroadcastInputAcrossBatch(int32_t) const noexcept final { return true; }
  size_t getWorkspaceSize(int32_t) const noexcept final { return 0; }
  int32_t enqueue(int32_t, void const* const*, void* const*, void*, cudaStream_t) noexcept final { return 1; }
};

//
// Host execution (Kiln extension)
//

/// Kiln extension, not in TensorRT: host (CPU) execution of a plugin, so that engines holding the plugin run
/// on DeviceType::kCPU targets (and in CI without a GPU). A V2 plugin offers it by also deriving from this class
/// (Kiln finds it with dynamic_cast on the IPluginV2DynamicExt); a V3 plugin by having its kRUNTIME capability
/// object (IPluginV3OneRuntime) also derive from it. A plugin without it builds only for the GPU: a CPU build
/// fails naming the plugin. Shapes, types and formats are those negotiated while building, as for enqueue().
class KILN_API IPluginHostExecution {
 public:
  /// Runs the plugin on the calling thread: `inputs`/`outputs` are host pointers laid out as the descriptors
  /// say, `workspace` host memory of the getWorkspaceSize() bytes (nullptr when that is 0). The same plugin
  /// object is never run from two threads at once. Returns 0 on success; non-zero fails the inference.
  virtual int32_t enqueueHost(PluginTensorDesc const* inputDesc, PluginTensorDesc const* outputDesc,
                              void const* const* inputs, void* const* outputs, void* workspace) noexcept = 0;

  IPluginHostExecution() = default;
  virtual ~IPluginHostExecution() noexcept = default;

 protected:
  IPluginHostExecution(IPluginHostExecution const&) = default;
  IPluginHostExecution(IPluginHostExecution&&) = default;
  IPluginHostExecution& operator=(IPluginHostExecution const&) & = default;
  IPluginHostExecution& operator=(IPluginHostExecution&&) & = default;
};

//
// Creators
//

/// Base of every plugin creator generation; tell them apart with getInterfaceInfo().kind
/// ("PLUGIN CREATOR_V1" for IPluginCreator, "PLUGIN CREATOR_V3ONE" for IPluginCreatorV3One).
class KILN_API IPluginCreatorInterface : public IVersionedInterface {
 public:
  ~IPluginCreatorInterface() noexcept override = default;

 protected:
  IPluginCreatorInterface() = default;
  IPluginCreatorInterface(IPluginCreatorInterface const&) = default;
  IPluginCreatorInterface(IPluginCreatorInterface&&) = default;
  IPluginCreatorInterface& operator=(IPluginCreatorInterface const&) & = default;
  IPluginCreatorInterface& operator=(IPluginCreatorInterface&&) & = default;
};

/// Creates IPluginV2-family plugins from fields or from serialized bytes. Deprecated in TensorRT 10 (use
/// IPluginCreatorV3One). Strings it returns must be NUL-terminated and at most 1024 bytes.
class KILN_API IPluginCreator : public IPluginCreatorInterface {
 public:
  /// Name of the plugins it creates (their getPluginType()).
  virtual AsciiChar const* getPluginName() const noexcept = 0;
  /// Version of the plugins it creates.
  virtual AsciiChar const* getPluginVersion() const noexcept = 0;
  /// The fields createPlugin() understands (names, types, lengths; data may be null). Owned by the creator.
  virtual PluginFieldCollection const* getFieldNames() noexcept = 0;
  /// A new plugin named `name` built from `fc`; nullptr on error. The caller owns it (release with destroy()).
  virtual IPluginV2* createPlugin(AsciiChar const* name, PluginFieldCollection const* fc) noexcept = 0;
  /// A new plugin rebuilt from the bytes its serialize() wrote; nullptr on error. The caller owns it.
  virtual IPluginV2* deserializePlugin(AsciiChar const* name, void const* serialData, size_t serialLength) noexcept = 0;
  /// Sets the creator's namespace (the registry does this on registration).
  virtual void setPluginNamespace(AsciiChar const* pluginNamespace) noexcept = 0;
  /// The creator's namespace.
  virtual AsciiChar const* getPluginNamespace() const noexcept = 0;

  IPluginCreator() = default;
  ~IPluginCreator() override = default;

  /// {"PLUGIN CREATOR_V1", 1, 0}; do not override.
  InterfaceInfo getInterfaceInfo() const noexcept override { return InterfaceInfo{"PLUGIN CREATOR_V1", 1, 0}; }

 protected:
  IPluginCreator(IPluginCreator const&) = default;
  IPluginCreator(IPluginCreator&&) = default;
  IPluginCreator& operator=(IPluginCreator const&) & = default;
  IPluginCreator& operator=(IPluginCreator&&) & = default;
};

//
// IPluginV3: a plugin as a set of capability interfaces
//

/// Base of the capability interfaces an IPluginV3 hands out (IPluginV3OneCore, ...Build, ...Runtime).
class KILN_API IPluginCapability : public IVersionedInterface {};

/// A V3 plugin. Kiln owns the plugin objects it receives and releases them with delete.
class KILN_API IPluginV3 : public IVersionedInterface {
 public:
  /// {"PLUGIN", 1, 0}; do not override.
  InterfaceInfo getInterfaceInfo() const noexcept override { return InterfaceInfo{"PLUGIN", 1, 0}; }
  /// The object implementing capability `type`, or nullptr when the plugin lacks it. Plugins added to a
  /// network need kCORE, kBUILD and kRUNTIME; plugins created at run time kCORE and kRUNTIME.
  virtual IPluginCapability* getCapabilityInterface(PluginCapabilityType type) noexcept = 0;
  /// A fully initialized copy with the same parameters and at least the same capabilities; nullptr on failure.
  virtual IPluginV3* clone() noexcept = 0;
};

/// Per-execution-context resources offered to IPluginV3OneRuntime::attachToContext(). Implemented by Kiln.
/// Kiln passes one to attachToContext(): the runtime's allocator and the context's error recorder.
class KILN_API IPluginResourceContext {
 public:
  /// The context's GPU allocator.
  virtual IGpuAllocator* getGpuAllocator() const noexcept = 0;
  /// The context's error recorder.
  virtual IErrorRecorder* getErrorRecorder() const noexcept = 0;
  virtual ~IPluginResourceContext() noexcept = default;

 protected:
  IPluginResourceContext() = default;
  IPluginResourceContext(IPluginResourceContext const&) = default;
  IPluginResourceContext(IPluginResourceContext&&) = default;
  IPluginResourceContext& operator=(IPluginResourceContext const&) & = default;
  IPluginResourceContext& operator=(IPluginResourceContext&&) & = default;
};

/// Core capability: identity of a V3 plugin.
class KILN_API IPluginV3OneCore : public IPluginCapability {
 public:
  /// {"PLUGIN_V3ONE_CORE", 1, 0}; do not override.
  InterfaceInfo getInterfaceInfo() const noexcept override { return InterfaceInfo{"PLUGIN_V3ONE_CORE", 1, 0}; }
  /// Plugin name; matches the creator's.
  virtual AsciiChar const* getPluginName() const noexcept = 0;
  /// Plugin version; matches the creator's.
  virtual AsciiChar const* getPluginVersion() const noexcept = 0;
  /// Plugin namespace; matches the creator's.
  virtual AsciiChar const* getPluginNamespace() const noexcept = 0;
};

/// Build capability: shapes, types, formats, workspace and tactics of a V3 plugin.
/// Tactics: the builder takes the first of getValidTactics() at level 0 and on the GPU, and times each one on the
/// CPU above level 0 (the fastest is given to every context copy through setTactic()). With a timing cache set on
/// the config, a non-null getTimingCacheID() keeps that choice under it (after the I/O types and shapes), and a
/// later build takes it without timing; nullptr times the plugin on every build.
class KILN_API IPluginV3OneBuild : public IPluginCapability {
 public:
  /// Default of getFormatCombinationLimit().
  static constexpr int32_t kDEFAULT_FORMAT_COMBINATION_LIMIT = 100;

  /// {"PLUGIN_V3ONE_BUILD", 1, 0}; do not override.
  InterfaceInfo getInterfaceInfo() const noexcept override { return InterfaceInfo{"PLUGIN_V3ONE_BUILD", 1, 0}; }
  /// Configures the plugin for the chosen formats and the profile's bounds; 0 on success.
  virtual int32_t configurePlugin(DynamicPluginTensorDesc const* in, int32_t nbInputs,
                                  DynamicPluginTensorDesc const* out, int32_t nbOutputs) noexcept = 0;
  /// Writes the output types for these input types; 0 on success.
  virtual int32_t getOutputDataTypes(DataType* outputTypes, int32_t nbOutputs, DataType const* inputTypes,
                                     int32_t nbInputs) const noexcept = 0;
  /// Writes the output dimensions as expressions over input dimensions and shape-input values; 0 on success.
  virtual int32_t getOutputShapes(DimsExprs const* inputs, int32_t nbInputs, DimsExprs const* shapeInputs,
                                  int32_t nbShapeInputs, DimsExprs* outputs, int32_t nbOutputs,
                                  IExprBuilder& exprBuilder) noexcept = 0;
  /// True when inOut[pos] is supported given inOut[0..pos-1].
  virtual bool supportsFormatCombination(int32_t pos, DynamicPluginTensorDesc const* inOut, int32_t nbInputs,
                                         int32_t nbOutputs) noexcept = 0;
  /// Number of outputs (positive).
  virtual int32_t getNbOutputs() const noexcept = 0;
  /// Scratch bytes enqueue() needs within these bounds; 0 by default.
  virtual size_t getWorkspaceSize(DynamicPluginTensorDesc const* inputs, int32_t nbInputs,
                                  DynamicPluginTensorDesc const* outputs, int32_t nbOutputs) const noexcept {
    return 0;
  }
  /// Writes getNbTactics() distinct non-zero tactic ids to `tactics`; 0 on success.
  virtual int32_t getValidTactics(int32_t* tactics, int32_t nbTactics) noexcept { return 0; }
  /// Number of custom tactics (0: only the default tactic 0).
  virtual int32_t getNbTactics() noexcept { return 0; }
  /// Suffix of the plugin's timing-cache key; nullptr disables timing caching for it.
  virtual char const* getTimingCacheID() noexcept { return nullptr; }
  /// At most this many format combinations are timed.
  virtual int32_t getFormatCombinationLimit() noexcept { return kDEFAULT_FORMAT_COMBINATION_LIMIT; }
  /// Free-form description of the plugin's parameters (for inspection); nullptr for none.
  virtual char const* getMetadataString() noexcept { return nullptr; }
};

/// Build capability, version 2: adds input/output aliasing. Not acted on yet.
class KILN_API IPluginV3OneBuildV2 : public IPluginV3OneBuild {
 public:
  /// {"PLUGIN_V3ONE_BUILD", 2, 0}; do not override.
  InterfaceInfo getInterfaceInfo() const noexcept override { return InterfaceInfo{"PLUGIN_V3ONE_BUILD", 2, 0}; }
  /// Index of the input that output `outputIndex` aliases (read-modify-write), or -1 for none.
  virtual int32_t getAliasedInput(int32_t outputIndex) noexcept { return -1; }
};

/// Runtime capability: execution of a V3 plugin (onShapeChange before a run whose shapes changed).
class KILN_API IPluginV3OneRuntime : public IPluginCapability {
 public:
  /// {"PLUGIN_V3ONE_RUNTIME", 1, 0}; do not override.
  InterfaceInfo getInterfaceInfo() const noexcept override { return InterfaceInfo{"PLUGIN_V3ONE_RUNTIME", 1, 0}; }
  /// Selects the tactic the next enqueue() uses (0: the default); 0 on success.
  virtual int32_t setTactic(int32_t tactic) noexcept { return 0; }
  /// Tells the plugin the concrete shapes of the next enqueue(); 0 on success.
  virtual int32_t onShapeChange(PluginTensorDesc const* in, int32_t nbInputs, PluginTensorDesc const* out,
                                int32_t nbOutputs) noexcept = 0;
  /// Runs the plugin on `stream`; 0 on success.
  virtual int32_t enqueue(PluginTensorDesc const* inputDesc, PluginTensorDesc const* outputDesc,
                          void const* const* inputs, void* const* outputs, void* workspace,
                          cudaStream_t stream) noexcept = 0;
  /// A clone of the whole plugin attached to the execution context behind `context`; the caller owns it.
  virtual IPluginV3* attachToContext(IPluginResourceContext* context) noexcept = 0;
  /// The fields that, passed to the creator's createPlugin(..., kRUNTIME), rebuild this plugin.
  virtual PluginFieldCollection const* getFieldsToSerialize() noexcept = 0;
};

/// Creates IPluginV3 plugins from fields (at build time from the network's attributes, at run time from
/// getFieldsToSerialize()).
class KILN_API IPluginCreatorV3One : public IPluginCreatorInterface {
 public:
  /// {"PLUGIN CREATOR_V3ONE", 1, 0}; do not override.
  InterfaceInfo getInterfaceInfo() const noexcept override { return InterfaceInfo{"PLUGIN CREATOR_V3ONE", 1, 0}; }
  /// A new, initialized plugin named `name` built from `fc` for `phase`; nullptr on error. The caller owns it.
  virtual IPluginV3* createPlugin(AsciiChar const* name, PluginFieldCollection const* fc,
                                  TensorRTPhase phase) noexcept = 0;
  /// The fields createPlugin() understands at build time. Owned by the creator.
  virtual PluginFieldCollection const* getFieldNames() noexcept = 0;
  /// Name of the plugins it creates.
  virtual AsciiChar const* getPluginName() const noexcept = 0;
  /// Version of the plugins it creates.
  virtual AsciiChar const* getPluginVersion() const noexcept = 0;
  /// Namespace of the plugins it creates (the registry files the creator under it).
  virtual AsciiChar const* getPluginNamespace() const noexcept = 0;

  IPluginCreatorV3One() = default;
  ~IPluginCreatorV3One() override = default;

 protected:
  IPluginCreatorV3One(IPluginCreatorV3One const&) = default;
  IPluginCreatorV3One(IPluginCreatorV3One&&) = default;
  IPluginCreatorV3One& operator=(IPluginCreatorV3One const&) & = default;
  IPluginCreatorV3One& operator=(IPluginCreatorV3One&&) & = default;
};

//
// Shared resources, logger finder, registry
//

/// A resource plugins share through IPluginRegistry::acquirePluginResource (one per key per process).
class KILN_API IPluginResource : public IVersionedInterface {
 public:
  /// {"IPluginResource", 1, 0}; do not override.
  InterfaceInfo getInterfaceInfo() const noexcept override { return InterfaceInfo{"IPluginResource", 1, 0}; }
  /// Frees what the resource holds; called only on clones made by the registry. 0 on success.
  virtual int32_t release() noexcept = 0;
  /// A copy the registry keeps (and later releases and deletes); nullptr on failure.
  virtual IPluginResource* clone() noexcept = 0;

  ~IPluginResource() noexcept override = default;
  IPluginResource() = default;
  IPluginResource(IPluginResource const&) = default;
  IPluginResource(IPluginResource&&) = default;
  IPluginResource& operator=(IPluginResource const&) & = default;
  IPluginResource& operator=(IPluginResource&&) & = default;
};

/// Handed to a plugin library's exported `setLoggerFinder` when the registry loads it, so the library's
/// plugins can log. Implemented by Kiln.
class KILN_API ILoggerFinder {
 public:
  /// The logger plugins should use now. Kiln returns a logger that writes warnings and errors to stderr
  /// (per-engine loggers are not routed to plugins yet).
  virtual ILogger* findLogger() = 0;

 protected:
  virtual ~ILoggerFinder() = default;
};

/// The process-wide registry of plugin creators, keyed by (name, version, namespace); get it with
/// getPluginRegistry(). Creators are not owned: each must stay alive until it is deregistered (or the process
/// ends). Every method is safe to call from several threads at once. Failures are reported to the error
/// recorder set with setErrorRecorder(), or else written to stderr.
class KILN_API IPluginRegistry {
 public:
  /// Handle of a library opened by loadLibrary().
  using PluginLibraryHandle = void*;

  /// Registers a V2 creator under `pluginNamespace` (also set on the creator with setPluginNamespace).
  /// False, with a reported error, when a creator with the same name, version and namespace is registered.
  /// Deprecated in TensorRT: use the IPluginCreatorInterface overload.
  KILN_DEPRECATED virtual bool registerCreator(IPluginCreator& creator,
                                               AsciiChar const* const pluginNamespace) noexcept = 0;
  /// The registered V2 creators (count in *numCreators); valid until the registry next changes.
  KILN_DEPRECATED virtual IPluginCreator* const* getPluginCreatorList(int32_t* const numCreators) const noexcept = 0;
  /// The V2 creator registered under (name, version, namespace), or nullptr.
  KILN_DEPRECATED virtual IPluginCreator* getPluginCreator(AsciiChar const* const pluginName,
                                                           AsciiChar const* const pluginVersion,
                                                           AsciiChar const* const pluginNamespace = "") noexcept = 0;
  /// Sets the recorder that registry errors go to (nullptr: stderr); the registry holds a reference.
  virtual void setErrorRecorder(IErrorRecorder* const recorder) noexcept = 0;
  /// The recorder set with setErrorRecorder(), or nullptr.
  virtual IErrorRecorder* getErrorRecorder() const noexcept = 0;
  /// Removes a V2 creator; false when it is not registered. Deprecated in TensorRT.
  KILN_DEPRECATED virtual bool deregisterCreator(IPluginCreator const& creator) noexcept = 0;
  /// Whether lookups fall back to a parent registry. Kiln has a single registry: the flag is kept but has no
  /// effect.
  virtual bool isParentSearchEnabled() const = 0;
  /// Sets the flag isParentSearchEnabled() reports (no effect, see there).
  virtual void setParentSearchEnabled(bool const enabled) = 0;
  /// Opens the shared library at `pluginPath`, hands it a logger finder through its exported
  /// `setLoggerFinder` (when present) and registers the creators its exported `getCreators` (V3 and V2) or,
  /// failing that, `getPluginCreators` (V2) returns, each under its own namespace. Returns the library's
  /// handle, or nullptr (error reported, library closed, nothing registered) when it cannot be opened, exports
  /// neither function, or one of its creators cannot be registered.
  virtual PluginLibraryHandle loadLibrary(AsciiChar const* pluginPath) noexcept = 0;
  /// Deregisters the creators loadLibrary() registered from `handle` and closes the library.
  virtual void deregisterLibrary(PluginLibraryHandle handle) noexcept = 0;
  /// Registers a creator of any generation. A V2 creator is filed under `pluginNamespace` (set on it); a V3
  /// creator, which has no namespace setter, under its own getPluginNamespace() (a different non-empty
  /// `pluginNamespace` is refused). False, with a reported error, for a duplicate (name, version, namespace),
  /// an unknown creator kind, or a missing name/version.
  virtual bool registerCreator(IPluginCreatorInterface& creator, AsciiChar const* const pluginNamespace) noexcept = 0;
  /// Every registered creator (count in *numCreators), in registration order; nullptr when there are none.
  /// Valid until the registry next changes or this is called again.
  virtual IPluginCreatorInterface* const* getAllCreators(int32_t* const numCreators) const noexcept = 0;
  /// The creator of any generation registered under (name, version, namespace), or nullptr.
  virtual IPluginCreatorInterface* getCreator(AsciiChar const* const pluginName, AsciiChar const* const pluginVersion,
                                              AsciiChar const* const pluginNamespace = "") noexcept = 0;
  /// Removes a creator of any generation; false when it is not registered.
  virtual bool deregisterCreator(IPluginCreatorInterface const& creator) noexcept = 0;
  /// The resource registered under `key`: the first call stores a clone of `resource`, later calls return it
  /// and count a reference. nullptr on failure.
  virtual IPluginResource* acquirePluginResource(AsciiChar const* key, IPluginResource* resource) noexcept = 0;
  /// Drops one reference to `key`'s resource; the last one releases and deletes the clone. 0 on success,
  /// -1 for an unknown key.
  virtual int32_t releasePluginResource(AsciiChar const* key) noexcept = 0;
  /// Same as getAllCreators() (Kiln has no parent registries).
  virtual IPluginCreatorInterface* const* getAllCreatorsRecursive(int32_t* const numCreators) noexcept = 0;

  IPluginRegistry() = default;
  IPluginRegistry(IPluginRegistry const&) = delete;
  IPluginRegistry(IPluginRegistry&&) = delete;
  IPluginRegistry& operator=(IPluginRegistry const&) & = delete;
  IPluginRegistry& operator=(IPluginRegistry&&) & = delete;

 protected:
  virtual ~IPluginRegistry() noexcept = default;
};

/// The process-wide plugin registry (never nullptr; owned by libkiln, alive until the process ends).
extern "C" KILN_API IPluginRegistry* getPluginRegistry() noexcept;

/// Registers one default-constructed T (a creator) with the process-wide registry when constructed; used by
/// REGISTER_KILN_PLUGIN. The creator lives as long as the registrar.
template <typename T>
class PluginRegistrar {
 public:
  PluginRegistrar() {
    KILN_IGNORE_DEPRECATED_BEGIN
    getPluginRegistry()->registerCreator(instance_, "");
    KILN_IGNORE_DEPRECATED_END
  }

 private:
  T instance_{};
};

}  // namespace kiln

/// Registers creator class `name` with the process-wide registry during static initialization (of the program,
/// or of a library when it is loaded), in the empty namespace for V2 creators.
#define REGISTER_KILN_PLUGIN(name) \
  static kiln::PluginRegistrar<name> pluginRegistrar##name {}

#endif  // KILN_KILN_PLUGIN_H
