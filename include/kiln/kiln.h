// Kiln public API, top level: network definition (tensors, layers), optimization profiles, builder
// configuration and the builder that turns a network into a serialized plan. Mirrors TensorRT 10.16's
// NvInfer.h; include this one header to get the whole API.
#ifndef KILN_KILN_H
#define KILN_KILN_H

#include "kiln_runtime.h"

namespace kiln {

class IBuilder;
class ILayer;
class ITensor;

//
// Layer types
//

/// Concrete type of an ILayer (see ILayer::getType()). Values are TensorRT 10.16's, including layer kinds
/// Kiln does not implement yet; a network can only contain the kinds INetworkDefinition can add.
enum class LayerType : int32_t {
  kCONVOLUTION = 0,          ///< IConvolutionLayer.
  kCAST = 1,                 ///< ICastLayer.
  kACTIVATION = 2,           ///< IActivationLayer.
  kPOOLING = 3,              ///< IPoolingLayer.
  kLRN = 4,                  ///< Local response normalization layer.
  kSCALE = 5,                ///< IScaleLayer.
  kSOFTMAX = 6,              ///< ISoftMaxLayer.
  kDECONVOLUTION = 7,        ///< Deconvolution layer.
  kCONCATENATION = 8,        ///< IConcatenationLayer.
  kELEMENTWISE = 9,          ///< IElementWiseLayer.
  kPLUGIN = 10,              ///< Legacy plugin layer.
  kUNARY = 11,               ///< IUnaryLayer.
  kPADDING = 12,             ///< Padding layer.
  kSHUFFLE = 13,             ///< IShuffleLayer.
  kREDUCE = 14,              ///< IReduceLayer.
  kTOPK = 15,                ///< TopK layer.
  kGATHER = 16,              ///< IGatherLayer.
  kMATRIX_MULTIPLY = 17,     ///< IMatrixMultiplyLayer.
  kRAGGED_SOFTMAX = 18,      ///< Ragged softmax layer.
  kCONSTANT = 19,            ///< IConstantLayer.
  kIDENTITY = 20,            ///< IIdentityLayer.
  kPLUGIN_V2 = 21,           ///< IPluginV2 layer.
  kSLICE = 22,               ///< ISliceLayer.
  kSHAPE = 23,               ///< IShapeLayer.
  kPARAMETRIC_RELU = 24,     ///< Parametric ReLU layer.
  kRESIZE = 25,              ///< Resize layer.
  kTRIP_LIMIT = 26,          ///< Loop trip-limit layer.
  kRECURRENCE = 27,          ///< Loop recurrence layer.
  kITERATOR = 28,            ///< Loop iterator layer.
  kLOOP_OUTPUT = 29,         ///< Loop output layer.
  kSELECT = 30,              ///< Select layer.
  kFILL = 31,                ///< Fill layer.
  kQUANTIZE = 32,            ///< Quantize layer.
  kDEQUANTIZE = 33,          ///< Dequantize layer.
  kCONDITION = 34,           ///< If-conditional condition layer.
  kCONDITIONAL_INPUT = 35,   ///< If-conditional input layer.
  kCONDITIONAL_OUTPUT = 36,  ///< If-conditional output layer.
  kSCATTER = 37,             ///< Scatter layer.
  kEINSUM = 38,              ///< Einsum layer.
  kASSERTION = 39,           ///< Assertion layer.
  kONE_HOT = 40,             ///< One-hot layer.
  kNON_ZERO = 41,            ///< Non-zero layer.
  kGRID_SAMPLE = 42,         ///< Grid-sample layer.
  kNMS = 43,                 ///< Non-maximum-suppression layer.
  kREVERSE_SEQUENCE = 44,    ///< Reverse-sequence layer.
  kNORMALIZATION = 45,       ///< INormalizationLayer.
  kPLUGIN_V3 = 46,           ///< IPluginV3 layer.
  kSQUEEZE = 47,             ///< Squeeze layer.
  kUNSQUEEZE = 48,           ///< Unsqueeze layer.
  kCUMULATIVE = 49,          ///< Cumulative (scan) layer.
  kDYNAMIC_QUANTIZE = 50,    ///< Dynamic quantize layer.
  kATTENTION_INPUT = 51,     ///< Attention input boundary layer.
  kATTENTION_OUTPUT = 52,    ///< Attention output boundary layer.
  kROTARY_EMBEDDING = 53,    ///< Rotary embedding layer.
  kKVCACHE_UPDATE = 54,      ///< KV-cache update layer.
  kMOE = 55,                 ///< Mixture-of-experts layer.
  kDIST_COLLECTIVE = 56,     ///< Distributed collective layer.
};

namespace impl {
template <>
struct EnumMaxImpl<LayerType> {
  static constexpr int32_t kVALUE = 57;
};
}  // namespace impl

//
// Tensors and layers
//

/// A tensor of a network definition: a network input or a layer output. Owned by the network; pointers stay
/// valid until the tensor is removed or the network is deleted.
class KILN_API ITensor : public INoCopy {
 public:
  virtual ~ITensor() noexcept = default;

  /// Sets the name (copied; at most 4096 bytes with the terminator). Input and output names must be unique.
  /// Layer outputs start with a generated name.
  virtual void setName(char const* name) noexcept = 0;

  /// The name, owned by the tensor.
  virtual char const* getName() const noexcept = 0;

  /// Sets the shape of a network input (-1 marks a runtime dimension). Ignored, with an error reported,
  /// for other tensors, whose shapes are inferred.
  virtual void setDimensions(Dims const& dimensions) noexcept = 0;

  /// The shape; -1 for dimensions derived from runtime dimensions.
  virtual Dims getDimensions() const noexcept = 0;

  /// Sets the type of a network input or output. For other tensors the call has no effect.
  virtual void setType(DataType type) noexcept = 0;

  /// The (declared or inferred) element type.
  virtual DataType getType() const noexcept = 0;

  /// True for network inputs.
  virtual bool isNetworkInput() const noexcept = 0;

  /// True for network outputs.
  virtual bool isNetworkOutput() const noexcept = 0;

  /// Restricts the formats an input or output may have in the engine (bit set of TensorFormat; all by
  /// default). Shape tensors only support kLINEAR.
  virtual void setAllowedFormats(TensorFormats formats) noexcept = 0;

  /// The allowed formats.
  virtual TensorFormats getAllowedFormats() const noexcept = 0;

  /// True if the tensor's values feed shape computations (reliable once the network is complete).
  virtual bool isShapeTensor() const noexcept = 0;

  /// True if the tensor's values are needed to compute outputs (reliable once the network is complete).
  virtual bool isExecutionTensor() const noexcept = 0;

  /// Names dimension `index` of a network input (name copied). Dimensions with the same name must have
  /// equal runtime values, which helps the builder.
  virtual void setDimensionName(int32_t index, char const* name) noexcept = 0;

  /// Name of dimension `index`, owned by the tensor; nullptr if unnamed or out of range.
  virtual char const* getDimensionName(int32_t index) const noexcept = 0;

 protected:
  ITensor() = default;
};

/// Common part of every layer of a network definition. Layers are owned by the network. The concrete
/// interface follows from getType(); static_cast to it (e.g. kCONVOLUTION -> IConvolutionLayer).
class KILN_API ILayer : public INoCopy {
 public:
  virtual ~ILayer() noexcept = default;

  /// The concrete layer type.
  virtual LayerType getType() const noexcept = 0;

  /// Sets the name (copied). Layers start with a generated unique name.
  virtual void setName(char const* name) noexcept = 0;

  /// The name, owned by the layer.
  virtual char const* getName() const noexcept = 0;

  /// Number of inputs, including unset optional ones.
  virtual int32_t getNbInputs() const noexcept = 0;

  /// Input `index`; nullptr for an unset optional input or an out-of-range index.
  virtual ITensor* getInput(int32_t index) const noexcept = 0;

  /// Number of outputs.
  virtual int32_t getNbOutputs() const noexcept = 0;

  /// Output `index`, owned by the network; nullptr if out of range.
  virtual ITensor* getOutput(int32_t index) const noexcept = 0;

  /// Replaces input `index` with `tensor`, or sets an optional input; reports kINVALID_ARGUMENT for an
  /// index the layer type does not have.
  virtual void setInput(int32_t index, ITensor& tensor) noexcept = 0;

  /// Requests the compute precision of this layer (weakly typed networks only).
  virtual void setPrecision(DataType dataType) noexcept = 0;

  /// The requested compute precision (kFLOAT when none was requested).
  virtual DataType getPrecision() const noexcept = 0;

  /// True if setPrecision() was called and not undone.
  virtual bool precisionIsSet() const noexcept = 0;

  /// Undoes setPrecision().
  virtual void resetPrecision() noexcept = 0;

  /// Requests the type of output `index` (weakly typed networks only).
  virtual void setOutputType(int32_t index, DataType dataType) noexcept = 0;

  /// Type of output `index`: the requested type, or the inferred one.
  virtual DataType getOutputType(int32_t index) const noexcept = 0;

  /// True if setOutputType() was called for output `index` and not undone.
  virtual bool outputTypeIsSet(int32_t index) const noexcept = 0;

  /// Undoes setOutputType() for output `index`.
  virtual void resetOutputType(int32_t index) noexcept = 0;

  /// Attaches a free-form string (copied), e.g. the source model's node name, shown by IEngineInspector.
  virtual void setMetadata(char const* docString) noexcept = 0;

  /// The metadata string, owned by the layer (empty if none).
  virtual char const* getMetadata() const noexcept = 0;

 protected:
  ILayer() = default;
};

//
// Convolution
//

/// How convolution and pooling padding is computed.
enum class PaddingMode : int32_t {
  kEXPLICIT_ROUND_DOWN = 0,  ///< Use the given pre/post padding; round the output size down.
  kEXPLICIT_ROUND_UP = 1,    ///< Use the given pre/post padding; round the output size up.
  kSAME_UPPER = 2,           ///< Output size is ceil(input / stride); any odd padding goes at the end.
  kSAME_LOWER = 3,           ///< Output size is ceil(input / stride); any odd padding goes at the start.
};

namespace impl {
template <>
struct EnumMaxImpl<PaddingMode> {
  static constexpr int32_t kVALUE = 4;
};
}  // namespace impl

/// N-dimensional (2D or 3D) convolution with optional groups, dilation and bias. Input 0 is the data; the
/// kernel and bias may also be given as tensors through setInput(1) and setInput(2).
class KILN_API IConvolutionLayer : public ILayer {
 public:
  virtual ~IConvolutionLayer() noexcept = default;

  /// Number of output channels.
  virtual void setNbOutputMaps(int64_t nbOutputMaps) noexcept = 0;
  /// Number of output channels.
  virtual int64_t getNbOutputMaps() const noexcept = 0;

  /// Number of groups (input and output channels must divide evenly by it); default 1.
  virtual void setNbGroups(int64_t nbGroups) noexcept = 0;
  /// Number of groups.
  virtual int64_t getNbGroups() const noexcept = 0;

  /// Kernel weights, laid out [outputMaps][inputChannels / groups][spatial...]. Not copied until build.
  virtual void setKernelWeights(Weights weights) noexcept = 0;
  /// Kernel weights.
  virtual Weights getKernelWeights() const noexcept = 0;

  /// Bias, one per output channel, or empty weights for no bias.
  virtual void setBiasWeights(Weights weights) noexcept = 0;
  /// Bias weights.
  virtual Weights getBiasWeights() const noexcept = 0;

  /// Padding before each spatial dimension; default zeros.
  virtual void setPrePadding(Dims const& padding) noexcept = 0;
  /// Padding before each spatial dimension.
  virtual Dims getPrePadding() const noexcept = 0;

  /// Padding after each spatial dimension; default zeros.
  virtual void setPostPadding(Dims const& padding) noexcept = 0;
  /// Padding after each spatial dimension.
  virtual Dims getPostPadding() const noexcept = 0;

  /// Padding mode; default kEXPLICIT_ROUND_DOWN. The kSAME_* modes override explicit padding.
  virtual void setPaddingMode(PaddingMode paddingMode) noexcept = 0;
  /// Padding mode.
  virtual PaddingMode getPaddingMode() const noexcept = 0;

  /// Kernel spatial size (rank 2 or 3).
  virtual void setKernelSizeNd(Dims const& kernelSize) noexcept = 0;
  /// Kernel spatial size.
  virtual Dims getKernelSizeNd() const noexcept = 0;

  /// Stride per spatial dimension; default ones.
  virtual void setStrideNd(Dims const& stride) noexcept = 0;
  /// Stride per spatial dimension.
  virtual Dims getStrideNd() const noexcept = 0;

  /// Symmetric padding: sets both pre- and post-padding.
  virtual void setPaddingNd(Dims const& padding) noexcept = 0;
  /// The padding; when pre- and post-padding differ, the pre-padding.
  virtual Dims getPaddingNd() const noexcept = 0;

  /// Dilation per spatial dimension; default ones.
  virtual void setDilationNd(Dims const& dilation) noexcept = 0;
  /// Dilation per spatial dimension.
  virtual Dims getDilationNd() const noexcept = 0;

 protected:
  IConvolutionLayer() = default;
};

//
// Activation
//

/// Element-wise activation functions. alpha and beta are set with IActivationLayer::setAlpha/setBeta.
enum class ActivationType : int32_t {
  kRELU = 0,               ///< max(x, 0).
  kSIGMOID = 1,            ///< 1 / (1 + exp(-x)).
  kTANH = 2,               ///< tanh(x).
  kLEAKY_RELU = 3,         ///< x >= 0 ? x : alpha * x.
  kELU = 4,                ///< x >= 0 ? x : alpha * (exp(x) - 1).
  kSELU = 5,               ///< x > 0 ? beta * x : beta * alpha * (exp(x) - 1).
  kSOFTSIGN = 6,           ///< x / (1 + |x|).
  kSOFTPLUS = 7,           ///< alpha * log(exp(beta * x) + 1).
  kCLIP = 8,               ///< max(alpha, min(beta, x)).
  kHARD_SIGMOID = 9,       ///< max(0, min(1, alpha * x + beta)).
  kSCALED_TANH = 10,       ///< alpha * tanh(beta * x).
  kTHRESHOLDED_RELU = 11,  ///< x > alpha ? x : 0.
  kGELU_ERF = 12,          ///< 0.5 * x * (1 + erf(x / sqrt(2))).
  kGELU_TANH = 13,         ///< 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
};

namespace impl {
template <>
struct EnumMaxImpl<ActivationType> {
  static constexpr int32_t kVALUE = 14;
};
}  // namespace impl

/// Applies an ActivationType element-wise.
class KILN_API IActivationLayer : public ILayer {
 public:
  virtual ~IActivationLayer() noexcept = default;

  /// The activation function.
  virtual void setActivationType(ActivationType type) noexcept = 0;
  /// The activation function.
  virtual ActivationType getActivationType() const noexcept = 0;

  /// First parameter of parametric activations (ignored by the others); default 0.
  virtual void setAlpha(float alpha) noexcept = 0;
  /// Second parameter of parametric activations (ignored by the others); default 0.
  virtual void setBeta(float beta) noexcept = 0;
  /// The alpha parameter.
  virtual float getAlpha() const noexcept = 0;
  /// The beta parameter.
  virtual float getBeta() const noexcept = 0;

 protected:
  IActivationLayer() = default;
};

//
// Pooling
//

/// Pooling reductions.
enum class PoolingType : int32_t {
  kMAX = 0,                ///< Maximum over the window.
  kAVERAGE = 1,            ///< Average over the window.
  kMAX_AVERAGE_BLEND = 2,  ///< (1 - blendFactor) * max + blendFactor * average.
};

namespace impl {
template <>
struct EnumMaxImpl<PoolingType> {
  static constexpr int32_t kVALUE = 3;
};
}  // namespace impl

/// N-dimensional (2D or 3D) pooling over the trailing spatial dimensions.
class KILN_API IPoolingLayer : public ILayer {
 public:
  virtual ~IPoolingLayer() noexcept = default;

  /// The pooling reduction.
  virtual void setPoolingType(PoolingType type) noexcept = 0;
  /// The pooling reduction.
  virtual PoolingType getPoolingType() const noexcept = 0;

  /// Weight of max in kMAX_AVERAGE_BLEND, in [0, 1].
  virtual void setBlendFactor(float blendFactor) noexcept = 0;
  /// Weight of max in kMAX_AVERAGE_BLEND.
  virtual float getBlendFactor() const noexcept = 0;

  /// For average pooling: true (default) divides by the number of non-padding elements only.
  virtual void setAverageCountExcludesPadding(bool exclusive) noexcept = 0;
  /// Whether average pooling excludes padding from the count.
  virtual bool getAverageCountExcludesPadding() const noexcept = 0;

  /// Padding before each spatial dimension; default zeros.
  virtual void setPrePadding(Dims const& padding) noexcept = 0;
  /// Padding before each spatial dimension.
  virtual Dims getPrePadding() const noexcept = 0;

  /// Padding after each spatial dimension; default zeros.
  virtual void setPostPadding(Dims const& padding) noexcept = 0;
  /// Padding after each spatial dimension.
  virtual Dims getPostPadding() const noexcept = 0;

  /// Padding mode; default kEXPLICIT_ROUND_DOWN.
  virtual void setPaddingMode(PaddingMode paddingMode) noexcept = 0;
  /// Padding mode.
  virtual PaddingMode getPaddingMode() const noexcept = 0;

  /// Window spatial size (rank 2 or 3).
  virtual void setWindowSizeNd(Dims const& windowSize) noexcept = 0;
  /// Window spatial size.
  virtual Dims getWindowSizeNd() const noexcept = 0;

  /// Stride per spatial dimension; default ones.
  virtual void setStrideNd(Dims const& stride) noexcept = 0;
  /// Stride per spatial dimension.
  virtual Dims getStrideNd() const noexcept = 0;

  /// Symmetric padding: sets both pre- and post-padding.
  virtual void setPaddingNd(Dims const& padding) noexcept = 0;
  /// The padding; when pre- and post-padding differ, the pre-padding.
  virtual Dims getPaddingNd() const noexcept = 0;

 protected:
  IPoolingLayer() = default;
};

//
// Element-wise binary operations
//

/// Binary operations with broadcasting. Comparison and logical operations produce kBOOL.
enum class ElementWiseOperation : int32_t {
  kSUM = 0,        ///< a + b.
  kPROD = 1,       ///< a * b.
  kMAX = 2,        ///< max(a, b).
  kMIN = 3,        ///< min(a, b).
  kSUB = 4,        ///< a - b.
  kDIV = 5,        ///< a / b (integer division truncates toward zero).
  kPOW = 6,        ///< a raised to the power b.
  kFLOOR_DIV = 7,  ///< floor(a / b).
  kAND = 8,        ///< Logical and of kBOOL inputs.
  kOR = 9,         ///< Logical or of kBOOL inputs.
  kXOR = 10,       ///< Logical exclusive or of kBOOL inputs.
  kEQUAL = 11,     ///< a == b.
  kGREATER = 12,   ///< a > b.
  kLESS = 13,      ///< a < b.
};

namespace impl {
template <>
struct EnumMaxImpl<ElementWiseOperation> {
  static constexpr int32_t kVALUE = 14;
};
}  // namespace impl

/// Applies an ElementWiseOperation to two inputs of equal rank, broadcasting dimensions of extent 1.
class KILN_API IElementWiseLayer : public ILayer {
 public:
  virtual ~IElementWiseLayer() noexcept = default;

  /// The operation.
  virtual void setOperation(ElementWiseOperation op) noexcept = 0;
  /// The operation.
  virtual ElementWiseOperation getOperation() const noexcept = 0;

 protected:
  IElementWiseLayer() = default;
};

//
// Unary operations
//

/// Element-wise unary operations.
enum class UnaryOperation : int32_t {
  kEXP = 0,     ///< exp(x).
  kLOG = 1,     ///< Natural logarithm.
  kSQRT = 2,    ///< Square root.
  kRECIP = 3,   ///< 1 / x.
  kABS = 4,     ///< |x|.
  kNEG = 5,     ///< -x.
  kSIN = 6,     ///< sin(x).
  kCOS = 7,     ///< cos(x).
  kTAN = 8,     ///< tan(x).
  kSINH = 9,    ///< sinh(x).
  kCOSH = 10,   ///< cosh(x).
  kASIN = 11,   ///< asin(x).
  kACOS = 12,   ///< acos(x).
  kATAN = 13,   ///< atan(x).
  kASINH = 14,  ///< asinh(x).
  kACOSH = 15,  ///< acosh(x).
  kATANH = 16,  ///< atanh(x).
  kCEIL = 17,   ///< Round up.
  kFLOOR = 18,  ///< Round down.
  kERF = 19,    ///< Gauss error function.
  kNOT = 20,    ///< Logical not of a kBOOL input.
  kSIGN = 21,   ///< -1, 0 or 1 by the sign of x.
  kROUND = 22,  ///< Round to nearest, ties to even.
  kISINF = 23,  ///< True where x is +/-infinity.
  kISNAN = 24,  ///< True where x is NaN.
};

namespace impl {
template <>
struct EnumMaxImpl<UnaryOperation> {
  static constexpr int32_t kVALUE = 25;
};
}  // namespace impl

/// Applies a UnaryOperation element-wise.
class KILN_API IUnaryLayer : public ILayer {
 public:
  virtual ~IUnaryLayer() noexcept = default;

  /// The operation.
  virtual void setOperation(UnaryOperation op) noexcept = 0;
  /// The operation.
  virtual UnaryOperation getOperation() const noexcept = 0;

 protected:
  IUnaryLayer() = default;
};

//
// Matrix multiplication
//

/// How a matrix-multiply operand is read.
enum class MatrixOperation : int32_t {
  kNONE = 0,       ///< As a (batch of) matrices over the last two dimensions.
  kTRANSPOSE = 1,  ///< Like kNONE, transposing the last two dimensions.
  kVECTOR = 2,     ///< As a (batch of) vectors over the last dimension.
};

namespace impl {
template <>
struct EnumMaxImpl<MatrixOperation> {
  static constexpr int32_t kVALUE = 3;
};
}  // namespace impl

/// Batched matrix product op(input0) x op(input1), broadcasting the batch dimensions.
class KILN_API IMatrixMultiplyLayer : public ILayer {
 public:
  virtual ~IMatrixMultiplyLayer() noexcept = default;

  /// How input `index` (0 or 1) is read.
  virtual void setOperation(int32_t index, MatrixOperation op) noexcept = 0;
  /// How input `index` (0 or 1) is read.
  virtual MatrixOperation getOperation(int32_t index) const noexcept = 0;

 protected:
  IMatrixMultiplyLayer() = default;
};

//
// Shuffle
//

/// Transpose, reshape, transpose. The reshape dimensions may also come from a shape tensor on input 1.
class KILN_API IShuffleLayer : public ILayer {
 public:
  virtual ~IShuffleLayer() noexcept = default;

  /// Permutation applied before the reshape; default identity.
  virtual void setFirstTranspose(Permutation permutation) noexcept = 0;
  /// Permutation applied before the reshape.
  virtual Permutation getFirstTranspose() const noexcept = 0;

  /// Reshape target. 0 copies the input extent (unless zero is not a placeholder) and one -1 is inferred.
  /// Not setting it (or nbDims == -1) means no reshape.
  virtual void setReshapeDimensions(Dims const& dimensions) noexcept = 0;
  /// Reshape target; nbDims == -1 if there is none or it comes from input 1.
  virtual Dims getReshapeDimensions() const noexcept = 0;

  /// Permutation applied after the reshape; default identity.
  virtual void setSecondTranspose(Permutation permutation) noexcept = 0;
  /// Permutation applied after the reshape.
  virtual Permutation getSecondTranspose() const noexcept = 0;

  /// Whether 0 in the reshape dimensions copies the input extent (true, default) or means a zero extent.
  virtual void setZeroIsPlaceholder(bool zeroIsPlaceholder) noexcept = 0;
  /// Whether 0 in the reshape dimensions is a placeholder.
  virtual bool getZeroIsPlaceholder() const noexcept = 0;

 protected:
  IShuffleLayer() = default;
};

//
// Concatenation
//

/// Concatenates its inputs along one axis; all other extents must match.
class KILN_API IConcatenationLayer : public ILayer {
 public:
  virtual ~IConcatenationLayer() noexcept = default;

  /// Concatenation axis (negative counts from the end); default: the third-from-last axis (C of NCHW), or 0
  /// for inputs of rank below 3.
  virtual void setAxis(int32_t axis) noexcept = 0;
  /// Concatenation axis.
  virtual int32_t getAxis() const noexcept = 0;

 protected:
  IConcatenationLayer() = default;
};

//
// Slice
//

/// How ISliceLayer treats coordinates outside the input.
enum class SampleMode : int32_t {
  kSTRICT_BOUNDS = 0,  ///< Out-of-bounds coordinates are an error.
  kWRAP = 1,           ///< Coordinates wrap around periodically.
  kCLAMP = 2,          ///< Coordinates are clamped to the nearest edge.
  kFILL = 3,           ///< Out-of-bounds elements take the fill value (input 4; default 0).
  kREFLECT = 4,        ///< Coordinates reflect about the middle of the edge element, repeatedly.
};

namespace impl {
template <>
struct EnumMaxImpl<SampleMode> {
  static constexpr int32_t kVALUE = 5;
};
}  // namespace impl

/// Strided slice. start/size/stride may also come from shape tensors on inputs 1..3 (and axes on input 5).
class KILN_API ISliceLayer : public ILayer {
 public:
  virtual ~ISliceLayer() noexcept = default;

  /// Start coordinate per (sliced) axis.
  virtual void setStart(Dims const& start) noexcept = 0;
  /// Start coordinate; nbDims == -1 if it comes from an input tensor.
  virtual Dims getStart() const noexcept = 0;

  /// Output extent per (sliced) axis.
  virtual void setSize(Dims const& size) noexcept = 0;
  /// Output extent; nbDims == -1 if it comes from an input tensor.
  virtual Dims getSize() const noexcept = 0;

  /// Step per (sliced) axis; may be negative.
  virtual void setStride(Dims const& stride) noexcept = 0;
  /// Step; nbDims == -1 if it comes from an input tensor.
  virtual Dims getStride() const noexcept = 0;

  /// Out-of-bounds handling; default kSTRICT_BOUNDS.
  virtual void setMode(SampleMode mode) noexcept = 0;
  /// Out-of-bounds handling.
  virtual SampleMode getMode() const noexcept = 0;

  /// Axes that start/size/stride refer to; unset means all axes in order.
  virtual void setAxes(Dims const& axes) noexcept = 0;
  /// The axes; nbDims == -1 if unset or from an input tensor.
  virtual Dims getAxes() const noexcept = 0;

 protected:
  ISliceLayer() = default;
};

//
// Reduce
//

/// Reductions.
enum class ReduceOperation : int32_t {
  kSUM = 0,   ///< Sum.
  kPROD = 1,  ///< Product.
  kMAX = 2,   ///< Maximum.
  kMIN = 3,   ///< Minimum.
  kAVG = 4,   ///< Mean.
};

namespace impl {
template <>
struct EnumMaxImpl<ReduceOperation> {
  static constexpr int32_t kVALUE = 5;
};
}  // namespace impl

/// Reduces over a set of axes.
class KILN_API IReduceLayer : public ILayer {
 public:
  virtual ~IReduceLayer() noexcept = default;

  /// The reduction.
  virtual void setOperation(ReduceOperation op) noexcept = 0;
  /// The reduction.
  virtual ReduceOperation getOperation() const noexcept = 0;

  /// Axes to reduce, as a bit mask (bit i set reduces axis i).
  virtual void setReduceAxes(uint32_t reduceAxes) noexcept = 0;
  /// Axes to reduce, as a bit mask.
  virtual uint32_t getReduceAxes() const noexcept = 0;

  /// Whether reduced axes stay in the output with extent 1.
  virtual void setKeepDimensions(bool keepDimensions) noexcept = 0;
  /// Whether reduced axes are kept.
  virtual bool getKeepDimensions() const noexcept = 0;

 protected:
  IReduceLayer() = default;
};

//
// SoftMax
//

/// Softmax along one axis.
class KILN_API ISoftMaxLayer : public ILayer {
 public:
  virtual ~ISoftMaxLayer() noexcept = default;

  /// The axis, as a bit mask with exactly one bit set; default: the third-from-last axis for rank >= 3,
  /// otherwise axis 0 (as TensorRT).
  virtual void setAxes(uint32_t axes) noexcept = 0;
  /// The axis bit mask.
  virtual uint32_t getAxes() const noexcept = 0;

 protected:
  ISoftMaxLayer() = default;
};

//
// Scale
//

/// Granularity of IScaleLayer's weights.
enum class ScaleMode : int32_t {
  kUNIFORM = 0,      ///< One value for the whole tensor.
  kCHANNEL = 1,      ///< One value per channel (the channel axis).
  kELEMENTWISE = 2,  ///< One value per element of a (channel, spatial...) block.
};

namespace impl {
template <>
struct EnumMaxImpl<ScaleMode> {
  static constexpr int32_t kVALUE = 3;
};
}  // namespace impl

/// Computes (x * scale + shift) ^ power. Empty weights mean scale 1, shift 0, power 1.
class KILN_API IScaleLayer : public ILayer {
 public:
  virtual ~IScaleLayer() noexcept = default;

  /// Weight granularity.
  virtual void setMode(ScaleMode mode) noexcept = 0;
  /// Weight granularity.
  virtual ScaleMode getMode() const noexcept = 0;

  /// Shift weights (held by reference until build).
  virtual void setShift(Weights shift) noexcept = 0;
  /// Shift weights.
  virtual Weights getShift() const noexcept = 0;

  /// Scale weights (held by reference until build).
  virtual void setScale(Weights scale) noexcept = 0;
  /// Scale weights.
  virtual Weights getScale() const noexcept = 0;

  /// Power weights (held by reference until build).
  virtual void setPower(Weights power) noexcept = 0;
  /// Power weights.
  virtual Weights getPower() const noexcept = 0;

  /// The channel axis used by kCHANNEL and kELEMENTWISE.
  virtual int32_t getChannelAxis() const noexcept = 0;
  /// Sets the channel axis; default 1 when the layer was created by addScale().
  virtual void setChannelAxis(int32_t channelAxis) noexcept = 0;

 protected:
  IScaleLayer() = default;
};

//
// Normalization
//

/// Computes (x - mean(x)) / sqrt(var(x) + epsilon) * scale + bias over the selected axes (layer, instance
/// or group normalization depending on the axes and group count). Inputs: data, scale, bias.
class KILN_API INormalizationLayer : public ILayer {
 public:
  virtual ~INormalizationLayer() noexcept = default;

  /// Epsilon added to the variance; default 1e-5.
  virtual void setEpsilon(float eps) noexcept = 0;
  /// Epsilon added to the variance.
  virtual float getEpsilon() const noexcept = 0;

  /// Normalized axes as a bit mask (bit i set normalizes over axis i).
  virtual void setAxes(uint32_t axesMask) noexcept = 0;
  /// Normalized axes as a bit mask.
  virtual uint32_t getAxes() const noexcept = 0;

  /// Number of channel groups (group normalization); default 1.
  virtual void setNbGroups(int64_t nbGroups) noexcept = 0;
  /// Number of channel groups.
  virtual int64_t getNbGroups() const noexcept = 0;

  /// Precision of the internal computation (weakly typed networks); default kFLOAT.
  virtual void setComputePrecision(DataType type) noexcept = 0;
  /// Precision of the internal computation.
  virtual DataType getComputePrecision() const noexcept = 0;

  /// True if the layer was created with INetworkDefinition::addNormalizationV2().
  virtual bool isV2() const noexcept = 0;

 protected:
  INormalizationLayer() = default;
};

//
// Constant, identity, cast, shape
//

/// Produces a constant tensor.
class KILN_API IConstantLayer : public ILayer {
 public:
  virtual ~IConstantLayer() noexcept = default;

  /// The values (held by reference until build); count must equal the volume of the dimensions.
  virtual void setWeights(Weights weights) noexcept = 0;
  /// The values.
  virtual Weights getWeights() const noexcept = 0;

  /// Output shape (no runtime dimensions).
  virtual void setDimensions(Dims const& dimensions) noexcept = 0;
  /// Output shape.
  virtual Dims getDimensions() const noexcept = 0;

 protected:
  IConstantLayer() = default;
};

/// Copies its input unchanged.
class KILN_API IIdentityLayer : public ILayer {
 public:
  virtual ~IIdentityLayer() noexcept = default;

 protected:
  IIdentityLayer() = default;
};

/// Converts its input to another DataType.
class KILN_API ICastLayer : public ILayer {
 public:
  virtual ~ICastLayer() noexcept = default;

  /// Output type.
  virtual void setToType(DataType toType) noexcept = 0;
  /// Output type.
  virtual DataType getToType() const noexcept = 0;

 protected:
  ICastLayer() = default;
};

/// Outputs the shape of its input as a 1D kINT64 tensor.
class KILN_API IShapeLayer : public ILayer {
 public:
  virtual ~IShapeLayer() noexcept = default;

 protected:
  IShapeLayer() = default;
};

//
// Gather
//

/// Indexing semantics of IGatherLayer.
enum class GatherMode : int32_t {
  kDEFAULT = 0,  ///< Select slices along one axis (ONNX Gather).
  kELEMENT = 1,  ///< Select single elements along one axis (ONNX GatherElements).
  kND = 2,       ///< Index with coordinate tuples (ONNX GatherND).
};

namespace impl {
template <>
struct EnumMaxImpl<GatherMode> {
  static constexpr int32_t kVALUE = 3;
};
}  // namespace impl

/// Gathers elements of input 0 (data) selected by input 1 (indices).
class KILN_API IGatherLayer : public ILayer {
 public:
  virtual ~IGatherLayer() noexcept = default;

  /// Gather axis (kDEFAULT and kELEMENT modes).
  virtual void setGatherAxis(int32_t axis) noexcept = 0;
  /// Gather axis.
  virtual int32_t getGatherAxis() const noexcept = 0;

  /// Number of leading axes treated as batch axes; must be 0 (kDEFAULT, kELEMENT) or at most the index rank
  /// minus 1 (kND).
  virtual void setNbElementWiseDims(int32_t k) noexcept = 0;
  /// Number of leading batch axes.
  virtual int32_t getNbElementWiseDims() const noexcept = 0;

  /// Gather semantics.
  virtual void setMode(GatherMode mode) noexcept = 0;
  /// Gather semantics.
  virtual GatherMode getMode() const noexcept = 0;

 protected:
  IGatherLayer() = default;
};

//
// Network definition
//

/// A network under construction: inputs, layers and outputs. Created by IBuilder::createNetworkV2(); the
/// caller owns it and releases it with delete. Tensors and layers it creates belong to it. add*() methods
/// return nullptr, reporting the reason to the error recorder, when their arguments are invalid.
class KILN_API INetworkDefinition : public INoCopy {
 public:
  virtual ~INetworkDefinition() noexcept = default;

  /// Adds a network input named `name` (copied, unique) of type `type` and shape `dimensions` (-1 for runtime
  /// dimensions, which then need an optimization profile).
  virtual ITensor* addInput(char const* name, DataType type, Dims const& dimensions) noexcept = 0;

  /// Marks `tensor` as a network output.
  virtual void markOutput(ITensor& tensor) noexcept = 0;

  /// Turns network output `tensor` back into an ordinary tensor.
  virtual void unmarkOutput(ITensor& tensor) noexcept = 0;

  /// Adds a convolution with `nbOutputMaps` output channels and a `kernelSize` (rank 2 or 3) kernel.
  /// `kernelWeights` may be empty if the kernel is later given as input 1; `biasWeights` may be empty.
  virtual IConvolutionLayer* addConvolutionNd(ITensor& input, int64_t nbOutputMaps, Dims const& kernelSize,
                                              Weights kernelWeights, Weights biasWeights) noexcept = 0;

  /// Adds an activation.
  virtual IActivationLayer* addActivation(ITensor& input, ActivationType type) noexcept = 0;

  /// Adds a pooling layer with a `windowSize` (rank 2 or 3) window.
  virtual IPoolingLayer* addPoolingNd(ITensor& input, PoolingType type, Dims const& windowSize) noexcept = 0;

  /// Adds a binary element-wise operation; the inputs must have equal rank.
  virtual IElementWiseLayer* addElementWise(ITensor& input1, ITensor& input2,
                                            ElementWiseOperation op) noexcept = 0;

  /// Adds a unary element-wise operation.
  virtual IUnaryLayer* addUnary(ITensor& input, UnaryOperation operation) noexcept = 0;

  /// Adds a matrix product op0(input0) x op1(input1).
  virtual IMatrixMultiplyLayer* addMatrixMultiply(ITensor& input0, MatrixOperation op0, ITensor& input1,
                                                  MatrixOperation op1) noexcept = 0;

  /// Adds a shuffle (transpose/reshape/transpose) layer, initially an identity.
  virtual IShuffleLayer* addShuffle(ITensor& input) noexcept = 0;

  /// Adds a concatenation of `nbInputs` tensors (array not retained).
  virtual IConcatenationLayer* addConcatenation(ITensor* const* inputs, int32_t nbInputs) noexcept = 0;

  /// Adds a slice; all three shapes have the input's rank (or are later replaced by input tensors).
  virtual ISliceLayer* addSlice(ITensor& input, Dims const& start, Dims const& size,
                                Dims const& stride) noexcept = 0;

  /// Adds a reduction over the axes in bit mask `reduceAxes`.
  virtual IReduceLayer* addReduce(ITensor& input, ReduceOperation operation, uint32_t reduceAxes,
                                  bool keepDimensions) noexcept = 0;

  /// Adds a softmax (default axis: see ISoftMaxLayer::setAxes()).
  virtual ISoftMaxLayer* addSoftMax(ITensor& input) noexcept = 0;

  /// Adds a scale layer with channel axis 1 (weights held by reference until build).
  virtual IScaleLayer* addScale(ITensor& input, ScaleMode mode, Weights shift, Weights scale,
                                Weights power) noexcept = 0;

  /// Adds a scale layer with an explicit channel axis.
  virtual IScaleLayer* addScaleNd(ITensor& input, ScaleMode mode, Weights shift, Weights scale, Weights power,
                                  int32_t channelAxis) noexcept = 0;

  /// Adds a normalization over the axes in bit mask `axesMask`; scale and bias broadcast against the input.
  virtual INormalizationLayer* addNormalization(ITensor& input, ITensor& scale, ITensor& bias,
                                                uint32_t axesMask) noexcept = 0;

  /// Like addNormalization(), except that for group normalization (nbGroups > 1) scale and bias hold one
  /// value per channel, shape [1, C, 1, ...], instead of one per group, [1, G, 1, ...] (ONNX opset-21
  /// GroupNormalization). The layer reports isV2() == true.
  virtual INormalizationLayer* addNormalizationV2(ITensor& input, ITensor& scale, ITensor& bias,
                                                  uint32_t axesMask) noexcept = 0;

  /// Adds a constant of shape `dimensions` (values held by reference until build).
  virtual IConstantLayer* addConstant(Dims const& dimensions, Weights weights) noexcept = 0;

  /// Adds an identity layer.
  virtual IIdentityLayer* addIdentity(ITensor& input) noexcept = 0;

  /// Adds a conversion to `toType`.
  virtual ICastLayer* addCast(ITensor& input, DataType toType) noexcept = 0;

  /// Adds a kDEFAULT-mode gather along `axis`.
  virtual IGatherLayer* addGather(ITensor& data, ITensor& indices, int32_t axis) noexcept = 0;

  /// Adds a gather with mode `mode` (axis 0, no batch axes; adjust on the layer).
  virtual IGatherLayer* addGatherV2(ITensor& data, ITensor& indices, GatherMode mode) noexcept = 0;

  /// Adds a layer that outputs the shape of `input`.
  virtual IShapeLayer* addShape(ITensor& input) noexcept = 0;

  /// Number of layers.
  virtual int32_t getNbLayers() const noexcept = 0;

  /// Layer `index` in insertion order; nullptr if out of range.
  virtual ILayer* getLayer(int32_t index) const noexcept = 0;

  /// Number of network inputs.
  virtual int32_t getNbInputs() const noexcept = 0;

  /// Network input `index`; nullptr if out of range.
  virtual ITensor* getInput(int32_t index) const noexcept = 0;

  /// Number of network outputs.
  virtual int32_t getNbOutputs() const noexcept = 0;

  /// Network output `index`; nullptr if out of range.
  virtual ITensor* getOutput(int32_t index) const noexcept = 0;

  /// Removes `tensor` (which no layer may still use) from the network; the reference becomes invalid.
  virtual void removeTensor(ITensor& tensor) noexcept = 0;

  /// Sets the network name (copied); it becomes the engine name.
  virtual void setName(char const* name) noexcept = 0;

  /// The network name, owned by the network.
  virtual char const* getName() const noexcept = 0;

  /// The builder that created this network.
  virtual IBuilder& getBuilder() const noexcept = 0;

  /// The flags the network was created with.
  virtual NetworkDefinitionCreationFlags getFlags() const noexcept = 0;

  /// True if the network was created with `networkDefinitionCreationFlag`.
  virtual bool getFlag(NetworkDefinitionCreationFlag networkDefinitionCreationFlag) const noexcept = 0;

  /// Attaches an error recorder (nullptr detaches it); layers and tensors report to it.
  virtual void setErrorRecorder(IErrorRecorder* recorder) noexcept = 0;

  /// The attached error recorder, or nullptr.
  virtual IErrorRecorder* getErrorRecorder() const noexcept = 0;

 protected:
  INetworkDefinition() = default;
};

//
// Optimization profiles
//

/// Ranges of input shapes (and shape-tensor input values) an engine must accept, plus the values to tune
/// for. Created by IBuilder::createOptimizationProfile(), which keeps ownership: do not delete it.
class KILN_API IOptimizationProfile : public INoCopy {
 public:
  virtual ~IOptimizationProfile() noexcept = default;

  /// Sets the min, opt or max shape of input `inputName`. Returns false if the shape is malformed or
  /// inconsistent with shapes already set (min <= opt <= max must hold per dimension).
  virtual bool setDimensions(char const* inputName, OptProfileSelector select, Dims const& dims) noexcept = 0;

  /// The shape set for input `inputName`; nbDims == -1 if none.
  virtual Dims getDimensions(char const* inputName, OptProfileSelector select) const noexcept = 0;

  /// Sets min, opt or max values of shape-tensor input `inputName` (`nbValues` values, copied).
  /// Deprecated in TensorRT 10.11 in favor of setShapeValuesV2().
  KILN_DEPRECATED virtual bool setShapeValues(char const* inputName, OptProfileSelector select,
                                              int32_t const* values, int32_t nbValues) noexcept = 0;

  /// Number of values set for shape-tensor input `inputName`; -1 if none.
  virtual int32_t getNbShapeValues(char const* inputName) const noexcept = 0;

  /// Values set with setShapeValues(), owned by the profile; nullptr if none.
  /// Deprecated in TensorRT 10.11 in favor of getShapeValuesV2().
  KILN_DEPRECATED virtual int32_t const* getShapeValues(char const* inputName,
                                                        OptProfileSelector select) const noexcept = 0;

  /// 64-bit version of setShapeValues().
  virtual bool setShapeValuesV2(char const* inputName, OptProfileSelector select, int64_t const* values,
                                int32_t nbValues) noexcept = 0;

  /// 64-bit version of getShapeValues(); nullptr if none were set with setShapeValuesV2().
  virtual int64_t const* getShapeValuesV2(char const* inputName,
                                          OptProfileSelector select) const noexcept = 0;

  /// Extra scratch memory the builder may use for this profile, as a fraction of the default (>= 0).
  /// Returns false for negative values.
  virtual bool setExtraMemoryTarget(float target) noexcept = 0;

  /// The extra memory target; default 1.0.
  virtual float getExtraMemoryTarget() const noexcept = 0;

  /// True if every shape set so far has all of min, opt and max and they are consistent. It does not check
  /// the profile against a network.
  virtual bool isValid() const noexcept = 0;

 protected:
  IOptimizationProfile() = default;
};

//
// Builder configuration
//

/// Options for IBuilder::buildSerializedNetwork(). Created by IBuilder::createBuilderConfig(); the caller
/// owns it and releases it with delete.
class KILN_API IBuilderConfig : public INoCopy {
 public:
  virtual ~IBuilderConfig() noexcept = default;

  /// Number of timed runs averaged per tactic; default 1.
  virtual void setAvgTimingIterations(int32_t avgTiming) noexcept = 0;
  /// Number of timed runs averaged per tactic.
  virtual int32_t getAvgTimingIterations() const noexcept = 0;

  /// Target capability; default kSTANDARD.
  virtual void setEngineCapability(EngineCapability capability) noexcept = 0;
  /// Target capability.
  virtual EngineCapability getEngineCapability() const noexcept = 0;

  /// Replaces all builder flags with the bit set `builderFlags`.
  virtual void setFlags(BuilderFlags builderFlags) noexcept = 0;
  /// The builder flag bit set (kTF32 is set by default).
  virtual BuilderFlags getFlags() const noexcept = 0;

  /// Clears one flag.
  virtual void clearFlag(BuilderFlag builderFlag) noexcept = 0;
  /// Sets one flag.
  virtual void setFlag(BuilderFlag builderFlag) noexcept = 0;
  /// True if `builderFlag` is set.
  virtual bool getFlag(BuilderFlag builderFlag) const noexcept = 0;

  /// Requests that `layer` run on `deviceType` (overrides the default device type for it).
  virtual void setDeviceType(ILayer const* layer, DeviceType deviceType) noexcept = 0;
  /// Device requested for `layer`, or the default device type.
  virtual DeviceType getDeviceType(ILayer const* layer) const noexcept = 0;
  /// True if setDeviceType() was called for `layer` and not undone.
  virtual bool isDeviceTypeSet(ILayer const* layer) const noexcept = 0;
  /// Undoes setDeviceType() for `layer`.
  virtual void resetDeviceType(ILayer const* layer) noexcept = 0;

  /// Device for layers without an explicit device type; default kGPU.
  virtual void setDefaultDeviceType(DeviceType deviceType) noexcept = 0;
  /// Device for layers without an explicit device type.
  virtual DeviceType getDefaultDeviceType() const noexcept = 0;

  /// Restores every option to its default.
  virtual void reset() noexcept = 0;

  /// CUDA stream used for timing during the build (not owned); default: the legacy default stream.
  virtual void setProfileStream(const cudaStream_t stream) noexcept = 0;
  /// CUDA stream used for timing.
  virtual cudaStream_t getProfileStream() const noexcept = 0;

  /// Adds a copy of a valid profile; returns its index, or -1 if the profile is invalid.
  virtual int32_t addOptimizationProfile(IOptimizationProfile const* profile) noexcept = 0;
  /// Number of profiles added.
  virtual int32_t getNbOptimizationProfiles() const noexcept = 0;

  /// Layer information kept in the engine; default kLAYER_NAMES_ONLY.
  virtual void setProfilingVerbosity(ProfilingVerbosity verbosity) noexcept = 0;
  /// Layer information kept in the engine.
  virtual ProfilingVerbosity getProfilingVerbosity() const noexcept = 0;

  /// Enables exactly the tactic sources in bit set `tacticSources`. Returns false if it names a source
  /// unknown to this library.
  virtual bool setTacticSources(TacticSources tacticSources) noexcept = 0;
  /// Enabled tactic sources.
  virtual TacticSources getTacticSources() const noexcept = 0;

  /// Caps memory pool `pool` at `poolSize` bytes (rounded down to the pool's granularity).
  virtual void setMemoryPoolLimit(MemoryPoolType pool, std::size_t poolSize) noexcept = 0;
  /// Cap of memory pool `pool`, in bytes.
  virtual std::size_t getMemoryPoolLimit(MemoryPoolType pool) const noexcept = 0;

  /// Effort level from 0 (fastest build) to 5 (most optimization); default 3.
  virtual void setBuilderOptimizationLevel(int32_t level) noexcept = 0;
  /// Effort level. (Non-const, as in TensorRT.)
  virtual int32_t getBuilderOptimizationLevel() noexcept = 0;

  /// Required hardware compatibility; default kNONE.
  virtual void setHardwareCompatibilityLevel(
      HardwareCompatibilityLevel hardwareCompatibilityLevel) noexcept = 0;
  /// Required hardware compatibility.
  virtual HardwareCompatibilityLevel getHardwareCompatibilityLevel() const noexcept = 0;

  /// Build progress sink (not owned; nullptr removes it).
  virtual void setProgressMonitor(IProgressMonitor* monitor) noexcept = 0;
  /// Build progress sink, or nullptr.
  virtual IProgressMonitor* getProgressMonitor() const noexcept = 0;

  /// Maximum number of auxiliary streams an engine may use for parallel layers; -1 (default) lets the
  /// builder choose. Returns false for values below -1.
  virtual bool setMaxAuxStreams(int32_t nbStreams) noexcept = 0;
  /// Maximum number of auxiliary streams.
  virtual int32_t getMaxAuxStreams() const noexcept = 0;

 protected:
  IBuilderConfig() = default;
};

//
// Builder
//

/// Creates networks, configurations and profiles, and builds networks into serialized plans. Create it with
/// createInferBuilder(); the caller owns it and releases it with delete, after the networks and configs it
/// created.
class KILN_API IBuilder : public INoCopy {
 public:
  virtual ~IBuilder() noexcept = default;

  /// True if the device has fast native FP16. Deprecated in TensorRT 10.5 (query the device instead).
  KILN_DEPRECATED virtual bool platformHasFastFp16() const noexcept = 0;

  /// True if the device has fast native INT8. Deprecated in TensorRT 10.5 (query the device instead).
  KILN_DEPRECATED virtual bool platformHasFastInt8() const noexcept = 0;

  /// Device allocator used while building and by engines built here; nullptr restores the default. It must
  /// outlive the builder and those engines.
  virtual void setGpuAllocator(IGpuAllocator* allocator) noexcept = 0;

  /// Creates a configuration with default options, owned by the caller; nullptr on failure.
  virtual IBuilderConfig* createBuilderConfig() noexcept = 0;

  /// Creates an empty network, owned by the caller, with the bit set of NetworkDefinitionCreationFlag
  /// `flags`; nullptr on failure (e.g. unknown flag bits).
  virtual INetworkDefinition* createNetworkV2(NetworkDefinitionCreationFlags flags) noexcept = 0;

  /// Creates an empty optimization profile owned by the builder (do not delete it).
  virtual IOptimizationProfile* createOptimizationProfile() noexcept = 0;

  /// Attaches an error recorder (nullptr detaches it); networks created afterwards inherit it.
  virtual void setErrorRecorder(IErrorRecorder* recorder) noexcept = 0;

  /// The attached error recorder, or nullptr.
  virtual IErrorRecorder* getErrorRecorder() const noexcept = 0;

  /// Restores the builder's own settings to their defaults.
  virtual void reset() noexcept = 0;

  /// Builds `network` with `config` and returns the serialized plan, owned by the caller, or nullptr if the
  /// build failed (the reason goes to the error recorder/logger). Synchronizes config.getProfileStream().
  virtual IHostMemory* buildSerializedNetwork(INetworkDefinition& network,
                                              IBuilderConfig& config) noexcept = 0;

  /// True if `network` stays within what `config` allows (capability, flags, device types); violations go
  /// to the error recorder. It does not build anything.
  virtual bool isNetworkSupported(INetworkDefinition const& network,
                                  IBuilderConfig const& config) const noexcept = 0;

  /// The logger this builder was created with (not owned by the builder).
  virtual ILogger* getLogger() const noexcept = 0;

  /// Maximum number of host threads (including the caller's) the builder may use; default 1.
  /// Returns false, and reports kINVALID_ARGUMENT, for values below 1.
  virtual bool setMaxThreads(int32_t maxThreads) noexcept = 0;

  /// The value set by setMaxThreads().
  virtual int32_t getMaxThreads() const noexcept = 0;

  /// Kiln extension, not in TensorRT. Caps the memory, in bytes, that Kiln may allocate while building
  /// networks with this builder (host and device, including tactic timing). 0 removes the cap. A build that
  /// would exceed it fails with ErrorCode::kFAILED_ALLOCATION. Returns false, changing nothing, if `bytes`
  /// is negative.
  virtual bool setMemoryLimit(int64_t bytes) noexcept = 0;

  /// Kiln extension, not in TensorRT. The cap set by setMemoryLimit(); 0 when there is none.
  virtual int64_t getMemoryLimit() const noexcept = 0;

 protected:
  IBuilder() = default;
};

/// Internal entry point behind createInferBuilder(); call that instead. `logger` is an ILogger*, `version`
/// the caller's KILN_VERSION. Returns an IBuilder*, or nullptr if the versions are incompatible (see
/// kiln_version.h) or creation failed.
extern "C" KILN_API void* createInferBuilder_INTERNAL(void* logger, int32_t version) noexcept;

/// Creates a builder that logs to `logger`, which must outlive it and everything created from it.
/// Returns a builder owned by the caller (release with delete), or nullptr if this header and the library
/// are incompatible versions or creation failed (the reason is logged).
inline IBuilder* createInferBuilder(ILogger& logger) noexcept {
  return static_cast<IBuilder*>(createInferBuilder_INTERNAL(&logger, KILN_VERSION));
}

}  // namespace kiln

#endif  // KILN_KILN_H
