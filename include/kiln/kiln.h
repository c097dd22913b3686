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
  // Kiln extensions, not in TensorRT (outside EnumMax<LayerType>()).
  kTF_IDF_VECTORIZER = 1000,  ///< ITfIdfVectorizerLayer. Kiln extension.
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
  // Kiln extensions, not in TensorRT: bitwise operations on integer inputs of one type (ONNX BitwiseAnd/Or/Xor).
  // They lie outside EnumMax<ElementWiseOperation>(), which keeps TensorRT's value.
  kBITWISE_AND = 100,  ///< a & b on the two's-complement bits. Kiln extension.
  kBITWISE_OR = 101,   ///< a | b. Kiln extension.
  kBITWISE_XOR = 102,  ///< a ^ b. Kiln extension.
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
  // Kiln extension, not in TensorRT (outside EnumMax<UnaryOperation>(), which keeps TensorRT's value).
  kBITWISE_NOT = 100,  ///< ~x on the bits of an integer input (ONNX BitwiseNot). Kiln extension.
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

/// A layer running an IPluginV2DynamicExt (INetworkDefinition::addPluginV2). Its inputs are the plugin's, its
/// outputs the plugin's getNbOutputs().
class KILN_API IPluginV2Layer : public ILayer {
 public:
  /// The plugin the layer runs: the network's clone of the plugin given to addPluginV2 (owned by the network).
  virtual IPluginV2& getPlugin() noexcept = 0;
  virtual ~IPluginV2Layer() noexcept = default;

 protected:
  IPluginV2Layer() = default;
};

/// A layer running an IPluginV3 (INetworkDefinition::addPluginV3). Its inputs are the plugin's inputs followed
/// by its shape inputs.
class KILN_API IPluginV3Layer : public ILayer {
 public:
  /// The plugin the layer runs: the network's clone of the plugin given to addPluginV3 (owned by the network).
  virtual IPluginV3& getPlugin() noexcept = 0;
  virtual ~IPluginV3Layer() noexcept = default;

 protected:
  IPluginV3Layer() = default;
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
// Deconvolution
//

/// N-dimensional (2D or 3D) transposed convolution with optional groups, dilation and bias. Input 0 is the
/// data; the kernel and bias may also be given as tensors through setInput(1) and setInput(2).
class KILN_API IDeconvolutionLayer : public ILayer {
 public:
  virtual ~IDeconvolutionLayer() noexcept = default;

  /// Number of output channels.
  virtual void setNbOutputMaps(int64_t nbOutputMaps) noexcept = 0;
  /// Number of output channels.
  virtual int64_t getNbOutputMaps() const noexcept = 0;

  /// Number of groups (input and output channels must divide evenly by it); default 1.
  virtual void setNbGroups(int64_t nbGroups) noexcept = 0;
  /// Number of groups.
  virtual int64_t getNbGroups() const noexcept = 0;

  /// Kernel weights, laid out [inputChannels][outputMaps / groups][spatial...]. Not copied until build.
  virtual void setKernelWeights(Weights weights) noexcept = 0;
  /// Kernel weights.
  virtual Weights getKernelWeights() const noexcept = 0;

  /// Bias, one per output channel, or empty weights for no bias.
  virtual void setBiasWeights(Weights weights) noexcept = 0;
  /// Bias weights.
  virtual Weights getBiasWeights() const noexcept = 0;

  /// Padding (cropped from the output) before each spatial dimension; default zeros.
  virtual void setPrePadding(Dims const& padding) noexcept = 0;
  /// Padding before each spatial dimension.
  virtual Dims getPrePadding() const noexcept = 0;

  /// Padding (cropped from the output) after each spatial dimension; default zeros.
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
  IDeconvolutionLayer() = default;
};

//
// Resize
//

/// Interpolation used by IResizeLayer and IGridSampleLayer.
enum class InterpolationMode : int32_t {
  kNEAREST = 0,  ///< Nearest neighbor.
  kLINEAR = 1,   ///< Linear (bilinear, trilinear) over the resized dimensions.
  kCUBIC = 2,    ///< Cubic (bicubic) over the two innermost dimensions.
};

namespace impl {
template <>
struct EnumMaxImpl<InterpolationMode> {
  static constexpr int32_t kVALUE = 3;
};
}  // namespace impl

/// How IResizeLayer maps an output coordinate to an input coordinate.
enum class ResizeCoordinateTransformation : int32_t {
  kALIGN_CORNERS = 0,  ///< The corner pixels of input and output line up: x_in = x_out * (in - 1) / (out - 1).
  kASYMMETRIC = 1,     ///< x_in = x_out / scale.
  kHALF_PIXEL = 2,     ///< Pixel centers line up: x_in = (x_out + 0.5) / scale - 0.5.
};

namespace impl {
template <>
struct EnumMaxImpl<ResizeCoordinateTransformation> {
  static constexpr int32_t kVALUE = 3;
};
}  // namespace impl

/// Coordinate mapping IResizeLayer uses when an output dimension has extent 1.
enum class ResizeSelector : int32_t {
  kFORMULA = 0,  ///< Use the coordinate transformation as for other extents.
  kUPPER = 1,    ///< Map the single pixel to input coordinate 0.
};

namespace impl {
template <>
struct EnumMaxImpl<ResizeSelector> {
  static constexpr int32_t kVALUE = 2;
};
}  // namespace impl

/// Rounding of the input coordinate in kNEAREST resize.
enum class ResizeRoundMode : int32_t {
  kHALF_UP = 0,    ///< Round to nearest, halves up.
  kHALF_DOWN = 1,  ///< Round to nearest, halves down.
  kFLOOR = 2,      ///< Round down.
  kCEIL = 3,       ///< Round up.
};

namespace impl {
template <>
struct EnumMaxImpl<ResizeRoundMode> {
  static constexpr int32_t kVALUE = 4;
};
}  // namespace impl

/// Resizes the innermost dimensions of input 0. The output shape comes from setOutputDimensions(), from
/// setScales(), or from a shape tensor given as input 1 (which overrides both).
class KILN_API IResizeLayer : public ILayer {
 public:
  virtual ~IResizeLayer() noexcept = default;

  /// Output shape (same rank as the input). Clears any scales.
  virtual void setOutputDimensions(Dims const& dimensions) noexcept = 0;
  /// Output shape; nbDims == -1 when scales or input 1 decide it.
  virtual Dims getOutputDimensions() const noexcept = 0;

  /// Per-dimension scale factors (`nbScales` == input rank; copied). Clears any output dimensions.
  virtual void setScales(float const* scales, int32_t nbScales) noexcept = 0;
  /// Copies up to `size` scales into `scales`; returns the number of scales, or -1 if none are set. With
  /// size 0 and scales nullptr it only returns the count.
  virtual int32_t getScales(int32_t size, float* scales) const noexcept = 0;

  /// Interpolation; default kNEAREST.
  virtual void setResizeMode(InterpolationMode interpolationMode) noexcept = 0;
  /// Interpolation.
  virtual InterpolationMode getResizeMode() const noexcept = 0;

  /// Coordinate transformation; default kASYMMETRIC.
  virtual void setCoordinateTransformation(ResizeCoordinateTransformation coordTransform) noexcept = 0;
  /// Coordinate transformation.
  virtual ResizeCoordinateTransformation getCoordinateTransformation() const noexcept = 0;

  /// Mapping for output extents of 1; default kFORMULA.
  virtual void setSelectorForSinglePixel(ResizeSelector selector) noexcept = 0;
  /// Mapping for output extents of 1.
  virtual ResizeSelector getSelectorForSinglePixel() const noexcept = 0;

  /// Rounding in kNEAREST mode; default kFLOOR.
  virtual void setNearestRounding(ResizeRoundMode value) noexcept = 0;
  /// Rounding in kNEAREST mode.
  virtual ResizeRoundMode getNearestRounding() const noexcept = 0;

  /// Coefficient A of cubic interpolation; default -0.75.
  virtual void setCubicCoeff(float A) noexcept = 0;
  /// Coefficient A of cubic interpolation.
  virtual float getCubicCoeff() const noexcept = 0;

  /// Whether samples outside the input get weight 0 (weights renormalized); default false.
  virtual void setExcludeOutside(bool excludeFlag) noexcept = 0;
  /// Whether samples outside the input are excluded.
  virtual bool getExcludeOutside() const noexcept = 0;

 protected:
  IResizeLayer() = default;
};

//
// TopK
//

/// Whether ITopKLayer keeps the largest or the smallest values.
enum class TopKOperation : int32_t {
  kMAX = 0,  ///< The k largest values, largest first.
  kMIN = 1,  ///< The k smallest values, smallest first.
};

namespace impl {
template <>
struct EnumMaxImpl<TopKOperation> {
  static constexpr int32_t kVALUE = 2;
};
}  // namespace impl

/// The k largest or smallest values along one axis (output 0) and their indices (output 1). k may also come
/// from a 0-D shape tensor on input 1, which overrides the static k.
class KILN_API ITopKLayer : public ILayer {
 public:
  virtual ~ITopKLayer() noexcept = default;

  /// kMAX or kMIN.
  virtual void setOperation(TopKOperation op) noexcept = 0;
  /// kMAX or kMIN.
  virtual TopKOperation getOperation() const noexcept = 0;

  /// Static k. Removes a k tensor set on input 1.
  virtual void setK(int32_t k) noexcept = 0;
  /// Static k; -1 when input 1 provides k.
  virtual int32_t getK() const noexcept = 0;

  /// The reduced axis, as a bit mask with exactly one bit set.
  virtual void setReduceAxes(uint32_t reduceAxes) noexcept = 0;
  /// The reduced axis bit mask.
  virtual uint32_t getReduceAxes() const noexcept = 0;

  /// Type of the indices output, kINT32 (default) or kINT64. Returns false for other types.
  virtual bool setIndicesType(DataType type) noexcept = 0;
  /// Type of the indices output.
  virtual DataType getIndicesType() const noexcept = 0;

 protected:
  ITopKLayer() = default;
};

//
// Padding
//

/// Pads (or, with negative values, crops) the two innermost dimensions with zeros.
class KILN_API IPaddingLayer : public ILayer {
 public:
  virtual ~IPaddingLayer() noexcept = default;

  /// Padding before each of the innermost dimensions.
  virtual void setPrePaddingNd(Dims const& padding) noexcept = 0;
  /// Padding before each of the innermost dimensions.
  virtual Dims getPrePaddingNd() const noexcept = 0;

  /// Padding after each of the innermost dimensions.
  virtual void setPostPaddingNd(Dims const& padding) noexcept = 0;
  /// Padding after each of the innermost dimensions.
  virtual Dims getPostPaddingNd() const noexcept = 0;

 protected:
  IPaddingLayer() = default;
};

//
// Fill
//

/// What IFillLayer generates.
enum class FillOperation : int32_t {
  kLINSPACE = 0,        ///< alpha + sum over axes of index[i] * beta[i] (beta: one step per axis).
  kRANDOM_UNIFORM = 1,  ///< Uniform random values in [alpha, beta].
  kRANDOM_NORMAL = 2,   ///< Normal random values with mean alpha and standard deviation beta.
};

namespace impl {
template <>
struct EnumMaxImpl<FillOperation> {
  static constexpr int32_t kVALUE = 3;
};
}  // namespace impl

/// Generates a tensor. Optional inputs: 0 the shape (1-D shape tensor), 1 alpha (scalar), 2 beta (scalar, or
/// 1-D with one step per output axis for kLINSPACE); given inputs override the static parameters.
class KILN_API IFillLayer : public ILayer {
 public:
  virtual ~IFillLayer() noexcept = default;

  /// Output shape, used when input 0 is absent.
  virtual void setDimensions(Dims const& dimensions) noexcept = 0;
  /// Output shape; nbDims == -1 when input 0 gives it.
  virtual Dims getDimensions() const noexcept = 0;

  /// What to generate.
  virtual void setOperation(FillOperation op) noexcept = 0;
  /// What to generate.
  virtual FillOperation getOperation() const noexcept = 0;

  /// Static alpha (start, minimum or mean) as a double.
  virtual void setAlpha(double alpha) noexcept = 0;
  /// Static alpha as a double.
  virtual double getAlpha() const noexcept = 0;

  /// Static beta (step, maximum or standard deviation) as a double.
  virtual void setBeta(double beta) noexcept = 0;
  /// Static beta as a double.
  virtual double getBeta() const noexcept = 0;

  /// Static alpha as an exact 64-bit integer (for integer outputs).
  virtual void setAlphaInt64(int64_t alpha) noexcept = 0;
  /// Static alpha as a 64-bit integer.
  virtual int64_t getAlphaInt64() const noexcept = 0;

  /// Static beta as an exact 64-bit integer (for integer outputs).
  virtual void setBetaInt64(int64_t beta) noexcept = 0;
  /// Static beta as a 64-bit integer.
  virtual int64_t getBetaInt64() const noexcept = 0;

  /// True if alpha and beta were last set as 64-bit integers.
  virtual bool isAlphaBetaInt64() const noexcept = 0;

  /// Output type (kFLOAT, kHALF, kINT32 or kINT64).
  virtual void setToType(DataType toType) noexcept = 0;
  /// Output type.
  virtual DataType getToType() const noexcept = 0;

 protected:
  IFillLayer() = default;
};

//
// Select
//

/// Element-wise condition ? then : else with broadcasting. Inputs: condition (kBOOL), then, else.
class KILN_API ISelectLayer : public ILayer {
 public:
  virtual ~ISelectLayer() noexcept = default;

 protected:
  ISelectLayer() = default;
};

//
// Scatter
//

/// Indexing semantics of IScatterLayer.
enum class ScatterMode : int32_t {
  kELEMENT = 0,  ///< Single elements along one axis (ONNX ScatterElements).
  kND = 1,       ///< Coordinate tuples (ONNX ScatterND).
};

namespace impl {
template <>
struct EnumMaxImpl<ScatterMode> {
  static constexpr int32_t kVALUE = 2;
};
}  // namespace impl

/// Kiln extension, not in TensorRT: how IScatterLayer combines an update with the existing element (ONNX's
/// `reduction` attribute).
enum class ScatterReduction : int32_t {
  kNONE = 0,  ///< Replace the element. Kiln extension.
  kADD = 1,   ///< Add the update. Kiln extension.
  kMUL = 2,   ///< Multiply by the update. Kiln extension.
  kMAX = 3,   ///< Keep the larger value. Kiln extension.
  kMIN = 4,   ///< Keep the smaller value. Kiln extension.
};

namespace impl {
template <>
struct EnumMaxImpl<ScatterReduction> {
  static constexpr int32_t kVALUE = 5;
};
}  // namespace impl

/// Copies input 0 (data) and writes input 2 (updates) at the positions given by input 1 (indices).
class KILN_API IScatterLayer : public ILayer {
 public:
  virtual ~IScatterLayer() noexcept = default;

  /// Scatter semantics.
  virtual void setMode(ScatterMode mode) noexcept = 0;
  /// Scatter semantics.
  virtual ScatterMode getMode() const noexcept = 0;

  /// Axis of kELEMENT mode; default 0.
  virtual void setAxis(int32_t axis) noexcept = 0;
  /// Axis of kELEMENT mode.
  virtual int32_t getAxis() const noexcept = 0;

  /// Kiln extension, not in TensorRT. How updates combine with existing elements; default kNONE.
  virtual void setReduction(ScatterReduction reduction) noexcept = 0;
  /// Kiln extension, not in TensorRT. The reduction.
  virtual ScatterReduction getReduction() const noexcept = 0;

 protected:
  IScatterLayer() = default;
};

//
// Einsum
//

/// Einstein summation over its inputs, described by an equation such as "ij,jk->ik".
class KILN_API IEinsumLayer : public ILayer {
 public:
  virtual ~IEinsumLayer() noexcept = default;

  /// Sets the equation (copied). Returns false if it is malformed.
  virtual bool setEquation(char const* equation) noexcept = 0;
  /// The equation, owned by the layer.
  virtual char const* getEquation() const noexcept = 0;

 protected:
  IEinsumLayer() = default;
};

//
// Cumulative
//

/// Scan operations of ICumulativeLayer.
enum class CumulativeOperation : int32_t {
  kSUM = 0,  ///< Running sum.
};

namespace impl {
template <>
struct EnumMaxImpl<CumulativeOperation> {
  static constexpr int32_t kVALUE = 1;
};
}  // namespace impl

/// Running reduction of input 0 along the axis given by input 1 (a 0-D int32/int64 build-time constant).
class KILN_API ICumulativeLayer : public ILayer {
 public:
  virtual ~ICumulativeLayer() noexcept = default;

  /// The operation. Returns false for an unknown one.
  virtual bool setOperation(CumulativeOperation op) noexcept = 0;
  /// The operation.
  virtual CumulativeOperation getOperation() const noexcept = 0;

  /// Whether element i excludes itself (reduces elements before i only).
  virtual void setExclusive(bool exclusive) noexcept = 0;
  /// Whether the scan is exclusive.
  virtual bool getExclusive() const noexcept = 0;

  /// Whether the scan runs from the last element to the first.
  virtual void setReverse(bool reverse) noexcept = 0;
  /// Whether the scan runs backwards.
  virtual bool getReverse() const noexcept = 0;

 protected:
  ICumulativeLayer() = default;
};

//
// OneHot
//

/// One-hot encoding: inputs indices, values ([off, on]) and depth (0-D shape tensor); a new axis of extent
/// depth is inserted at the layer's axis.
class KILN_API IOneHotLayer : public ILayer {
 public:
  virtual ~IOneHotLayer() noexcept = default;

  /// Position of the new axis in the output (negative counts from the end).
  virtual void setAxis(int32_t axis) noexcept = 0;
  /// Position of the new axis.
  virtual int32_t getAxis() const noexcept = 0;

 protected:
  IOneHotLayer() = default;
};

//
// Parametric ReLU
//

/// x >= 0 ? x : slope * x, with the slope (input 1) broadcast to the input.
class KILN_API IParametricReLULayer : public ILayer {
 public:
  virtual ~IParametricReLULayer() noexcept = default;

 protected:
  IParametricReLULayer() = default;
};

//
// LRN
//

/// Local response normalization across channels:
/// y = x / (k + alpha / window * sum of x^2 over the window) ^ beta.
class KILN_API ILRNLayer : public ILayer {
 public:
  virtual ~ILRNLayer() noexcept = default;

  /// Number of channels in the window (odd, 1..15).
  virtual void setWindowSize(int64_t windowSize) noexcept = 0;
  /// Number of channels in the window.
  virtual int64_t getWindowSize() const noexcept = 0;

  /// The alpha parameter.
  virtual void setAlpha(float alpha) noexcept = 0;
  /// The alpha parameter.
  virtual float getAlpha() const noexcept = 0;

  /// The beta parameter.
  virtual void setBeta(float beta) noexcept = 0;
  /// The beta parameter.
  virtual float getBeta() const noexcept = 0;

  /// The k parameter.
  virtual void setK(float k) noexcept = 0;
  /// The k parameter.
  virtual float getK() const noexcept = 0;

 protected:
  ILRNLayer() = default;
};

//
// Squeeze, unsqueeze
//

/// Removes extent-1 axes listed by input 1 (a 1-D int32/int64 build-time constant).
class KILN_API ISqueezeLayer : public ILayer {
 public:
  virtual ~ISqueezeLayer() noexcept = default;

 protected:
  ISqueezeLayer() = default;
};

/// Inserts extent-1 axes at the output positions listed by input 1 (a 1-D int32/int64 build-time constant).
class KILN_API IUnsqueezeLayer : public ILayer {
 public:
  virtual ~IUnsqueezeLayer() noexcept = default;

 protected:
  IUnsqueezeLayer() = default;
};

//
// GridSample
//

/// Samples input 0 ([N, C, H, W]) at the normalized coordinates of input 1 (grid, [N, H_out, W_out, 2]).
class KILN_API IGridSampleLayer : public ILayer {
 public:
  virtual ~IGridSampleLayer() noexcept = default;

  /// Interpolation; default kLINEAR.
  virtual void setInterpolationMode(InterpolationMode mode) noexcept = 0;
  /// Interpolation.
  virtual InterpolationMode getInterpolationMode() const noexcept = 0;

  /// Whether -1 and 1 address the centers (true) or the outer edges (false, default) of the corner pixels.
  virtual void setAlignCorners(bool alignCorners) noexcept = 0;
  /// Whether corners are aligned.
  virtual bool getAlignCorners() const noexcept = 0;

  /// Handling of coordinates outside the input: kFILL (zeros, default), kCLAMP or kREFLECT. Returns false
  /// for the other modes.
  virtual bool setSampleMode(SampleMode mode) noexcept = 0;
  /// Handling of out-of-bounds coordinates.
  virtual SampleMode getSampleMode() const noexcept = 0;

 protected:
  IGridSampleLayer() = default;
};

//
// ReverseSequence
//

/// For each index b along the batch axis, reverses the first sequenceLens[b] elements along the sequence
/// axis. Inputs: data, sequenceLens (1-D int32/int64).
class KILN_API IReverseSequenceLayer : public ILayer {
 public:
  virtual ~IReverseSequenceLayer() noexcept = default;

  /// The batch axis; default 1.
  virtual void setBatchAxis(int32_t batchAxis) noexcept = 0;
  /// The batch axis.
  virtual int32_t getBatchAxis() const noexcept = 0;

  /// The sequence axis; default 0.
  virtual void setSequenceAxis(int32_t sequenceAxis) noexcept = 0;
  /// The sequence axis.
  virtual int32_t getSequenceAxis() const noexcept = 0;

 protected:
  IReverseSequenceLayer() = default;
};

//
// TfIdfVectorizer (Kiln extension)
//

/// Kiln extension, not in TensorRT: how ITfIdfVectorizerLayer weighs the n-gram counts (ONNX TfIdfVectorizer's
/// `mode`). Column j's weight is weights[j], or 1 without weights.
enum class TfIdfVectorizerMode : int32_t {
  kTF = 0,     ///< The count of each column. Kiln extension.
  kIDF = 1,    ///< The column's weight where its count is > 0, else 0. Kiln extension.
  kTFIDF = 2,  ///< The count times the column's weight. Kiln extension.
};

namespace impl {
template <>
struct EnumMaxImpl<TfIdfVectorizerMode> {
  static constexpr int32_t kVALUE = 3;
};
}  // namespace impl

/// Kiln extension, not in TensorRT (ONNX TfIdfVectorizer). Counts, in each row of a kINT32/kINT64 input of
/// shape [C] or [N, C], the occurrences of the n-grams of a pool: every k-gram with minGramLength <= k <=
/// maxGramLength whose items lie d apart, 1 <= d <= maxSkipCount + 1 (1-grams counted once). N-gram i of the
/// pool adds to output column ngramIndexes[i]; the output is kFLOAT [columns] or [N, columns], columns =
/// max(ngramIndexes) + 1, weighed by the mode. Every setter copies its arguments and returns false, reporting
/// why and leaving the layer unchanged, when the result would be inconsistent.
class KILN_API ITfIdfVectorizerLayer : public ILayer {
 public:
  virtual ~ITfIdfVectorizerLayer() noexcept = default;

  /// How counts are weighed.
  virtual bool setMode(TfIdfVectorizerMode mode) noexcept = 0;
  /// How counts are weighed.
  virtual TfIdfVectorizerMode getMode() const noexcept = 0;

  /// The n-gram lengths counted: 1 <= minGramLength <= maxGramLength.
  virtual bool setGramLengths(int32_t minGramLength, int32_t maxGramLength) noexcept = 0;
  /// The shortest n-gram length counted.
  virtual int32_t getMinGramLength() const noexcept = 0;
  /// The longest n-gram length counted.
  virtual int32_t getMaxGramLength() const noexcept = 0;

  /// The most items skipped between two items of an n-gram (>= 0).
  virtual bool setMaxSkipCount(int32_t maxSkipCount) noexcept = 0;
  /// The most items skipped between two items of an n-gram.
  virtual int32_t getMaxSkipCount() const noexcept = 0;

  /// The pool: `pool` holds the 1-grams, then the 2-grams, ... (kINT32 or kINT64 values); `ngramCounts` (kINT32
  /// or kINT64) the index in `pool` where the k-grams start, for k = 1, 2, ...; `ngramIndexes` (kINT32 or
  /// kINT64) the output column of each n-gram, in pool order. Pool n-grams listed twice are refused.
  virtual bool setPool(Weights pool, Weights ngramCounts, Weights ngramIndexes) noexcept = 0;
  /// Number of output columns: max(ngramIndexes) + 1.
  virtual int64_t getNbColumns() const noexcept = 0;

  /// Column weights (kFLOAT), one per entry of ngramIndexes, at least one per column: column j is weighed by
  /// weights[j] (as ONNX Runtime does). Empty weights: all ones.
  virtual bool setWeights(Weights weights) noexcept = 0;

 protected:
  ITfIdfVectorizerLayer() = default;
};

//
// Assertion
//

/// Fails the build (or the inference) when any element of its kBOOL input is false. No outputs.
class KILN_API IAssertionLayer : public ILayer {
 public:
  virtual ~IAssertionLayer() noexcept = default;

  /// The message reported on failure (copied).
  virtual void setMessage(char const* message) noexcept = 0;
  /// The message, owned by the layer.
  virtual char const* getMessage() const noexcept = 0;

 protected:
  IAssertionLayer() = default;
};

//
// Non-maximum suppression
//

/// Layout of the boxes of INMSLayer.
enum class BoundingBoxFormat : int32_t {
  kCORNER_PAIRS = 0,  ///< (x1, y1, x2, y2): two opposite corners.
  kCENTER_SIZES = 1,  ///< (x_center, y_center, width, height).
};

namespace impl {
template <>
struct EnumMaxImpl<BoundingBoxFormat> {
  static constexpr int32_t kVALUE = 2;
};
}  // namespace impl

/// Non-maximum suppression per batch item and class. Inputs: boxes [B, N, 4] (or [B, N, C, 4]), scores
/// [B, N, C], maxOutputBoxesPerClass (0-D shape tensor), optional IoU threshold (3) and score threshold (4).
/// Outputs: selected indices [K, 3] (batch, class, box) and the number of valid rows K (0-D).
class KILN_API INMSLayer : public ILayer {
 public:
  virtual ~INMSLayer() noexcept = default;

  /// Box layout; default kCORNER_PAIRS.
  virtual void setBoundingBoxFormat(BoundingBoxFormat fmt) noexcept = 0;
  /// Box layout.
  virtual BoundingBoxFormat getBoundingBoxFormat() const noexcept = 0;

  /// Maximum number of boxes considered per batch item and class, taken by score; default 5000.
  virtual void setTopKBoxLimit(int32_t limit) noexcept = 0;
  /// The box limit.
  virtual int32_t getTopKBoxLimit() const noexcept = 0;

  /// Type of the indices outputs, kINT32 (default) or kINT64. Returns false for other types.
  virtual bool setIndicesType(DataType type) noexcept = 0;
  /// Type of the indices outputs.
  virtual DataType getIndicesType() const noexcept = 0;

 protected:
  INMSLayer() = default;
};

//
// Ragged softmax
//

/// Softmax over the first bounds[z] elements of each row z of a [1, Z, S] input; inputs: data, bounds
/// ([1, Z, 1] int32). Elements past the bound are set to 0.
class KILN_API IRaggedSoftMaxLayer : public ILayer {
 public:
  virtual ~IRaggedSoftMaxLayer() noexcept = default;

 protected:
  IRaggedSoftMaxLayer() = default;
};

//
// Quantization
//

/// Quantizes input 0 with the scale on input 1 (and optional zero point on input 2): y = saturate(round(x /
/// scale) + zeroPoint). Per-tensor (scalar scale), per-axis or per-block.
class KILN_API IQuantizeLayer : public ILayer {
 public:
  virtual ~IQuantizeLayer() noexcept = default;

  /// The quantization axis (per-axis and per-block scales).
  virtual int32_t getAxis() const noexcept = 0;
  /// The quantization axis (per-axis and per-block scales).
  virtual void setAxis(int32_t axis) noexcept = 0;

  /// Block shape of block quantization (same rank as the input; -1 means the whole extent). Returns false
  /// if it is malformed.
  virtual bool setBlockShape(Dims const& blockShape) noexcept = 0;
  /// Block shape; nbDims == 0 when not block quantized.
  virtual Dims getBlockShape() const noexcept = 0;

  /// Output type (kINT8, kFP8, kINT4, kFP4).
  virtual void setToType(DataType toType) noexcept = 0;
  /// Output type.
  virtual DataType getToType() const noexcept = 0;

 protected:
  IQuantizeLayer() = default;
};

/// Dequantizes input 0 with the scale on input 1 (and optional zero point on input 2): y = (x - zeroPoint) *
/// scale.
class KILN_API IDequantizeLayer : public ILayer {
 public:
  virtual ~IDequantizeLayer() noexcept = default;

  /// The quantization axis (per-axis and per-block scales).
  virtual int32_t getAxis() const noexcept = 0;
  /// The quantization axis (per-axis and per-block scales).
  virtual void setAxis(int32_t axis) noexcept = 0;

  /// Block shape of block quantization (same rank as the input; -1 means the whole extent). Returns false
  /// if it is malformed.
  virtual bool setBlockShape(Dims const& blockShape) noexcept = 0;
  /// Block shape; nbDims == 0 when not block quantized.
  virtual Dims getBlockShape() const noexcept = 0;

  /// Output type (kFLOAT, kHALF, kBF16).
  virtual void setToType(DataType toType) noexcept = 0;
  /// Output type.
  virtual DataType getToType() const noexcept = 0;

 protected:
  IDequantizeLayer() = default;
};

/// Block-quantizes input 0, computing the block scales at run time. Optional input 1: a scalar
/// double-quantization scale for the scales. Outputs: the quantized data and the block scales.
class KILN_API IDynamicQuantizeLayer : public ILayer {
 public:
  virtual ~IDynamicQuantizeLayer() noexcept = default;

  /// Quantized output type (kFP4 or kFP8).
  virtual void setToType(DataType toType) noexcept = 0;
  /// Quantized output type.
  virtual DataType getToType() const noexcept = 0;

  /// Type of the scales output (kFP8 or kE8M0).
  virtual void setScaleType(DataType scaleType) noexcept = 0;
  /// Type of the scales output.
  virtual DataType getScaleType() const noexcept = 0;

  /// The blocked axis of 1-D blocks. Deprecated in favor of setBlockShape().
  KILN_DEPRECATED virtual void setAxis(int32_t axis) noexcept = 0;
  /// The blocked axis. Deprecated in favor of getBlockShape().
  KILN_DEPRECATED virtual int32_t getAxis() const noexcept = 0;

  /// Elements per 1-D block. Deprecated in favor of setBlockShape().
  KILN_DEPRECATED virtual void setBlockSize(int32_t size) noexcept = 0;
  /// Elements per 1-D block. Deprecated in favor of getBlockShape().
  KILN_DEPRECATED virtual int32_t getBlockSize() const noexcept = 0;

  /// Block shape (same rank as the input; -1 means the whole extent).
  virtual void setBlockShape(Dims const& blockShape) noexcept = 0;
  /// Block shape.
  virtual Dims getBlockShape() const noexcept = 0;

 protected:
  IDynamicQuantizeLayer() = default;
};

//
// NonZero
//

/// Coordinates of the non-zero elements of its input, as a [rank, count] tensor (count known at run time).
class KILN_API INonZeroLayer : public ILayer {
 public:
  virtual ~INonZeroLayer() noexcept = default;

  /// Type of the output, kINT32 (default) or kINT64. Returns false for other types.
  virtual bool setIndicesType(DataType type) noexcept = 0;
  /// Type of the output.
  virtual DataType getIndicesType() const noexcept = 0;

 protected:
  INonZeroLayer() = default;
};

//
// Control flow: if-conditional
//

class IIfConditional;

/// Common base of the layers that delimit an IIfConditional.
class KILN_API IIfConditionalBoundaryLayer : public ILayer {
 public:
  virtual ~IIfConditionalBoundaryLayer() noexcept = default;

  /// The conditional this layer belongs to.
  virtual IIfConditional* getConditional() const noexcept = 0;

 protected:
  IIfConditionalBoundaryLayer() = default;
};

/// The condition of an IIfConditional: a 0-D kBOOL tensor.
class KILN_API IConditionLayer : public IIfConditionalBoundaryLayer {
 public:
  virtual ~IConditionLayer() noexcept = default;

 protected:
  IConditionLayer() = default;
};

/// An output of an IIfConditional: input 0 in the true branch, input 1 in the false branch.
class KILN_API IIfConditionalOutputLayer : public IIfConditionalBoundaryLayer {
 public:
  virtual ~IIfConditionalOutputLayer() noexcept = default;

 protected:
  IIfConditionalOutputLayer() = default;
};

/// Brings a tensor from outside into both branches of an IIfConditional.
class KILN_API IIfConditionalInputLayer : public IIfConditionalBoundaryLayer {
 public:
  virtual ~IIfConditionalInputLayer() noexcept = default;

 protected:
  IIfConditionalInputLayer() = default;
};

/// If-then-else: layers added after setCondition() and fed (through addInput()) by tensors of the conditional
/// belong to its branches; only the selected branch runs. Owned by the network.
class KILN_API IIfConditional : public INoCopy {
 public:
  virtual ~IIfConditional() noexcept = default;

  /// Sets the condition (a 0-D kBOOL tensor, evaluated once per inference).
  virtual IConditionLayer* setCondition(ITensor& condition) noexcept = 0;

  /// Adds an output taking `trueSubgraphOutput` when the condition holds and `falseSubgraphOutput` otherwise.
  virtual IIfConditionalOutputLayer* addOutput(ITensor& trueSubgraphOutput,
                                               ITensor& falseSubgraphOutput) noexcept = 0;

  /// Makes `input`, a tensor from outside, available in the branches.
  virtual IIfConditionalInputLayer* addInput(ITensor& input) noexcept = 0;

  /// Sets the name (copied).
  virtual void setName(char const* name) noexcept = 0;
  /// The name, owned by the conditional.
  virtual char const* getName() const noexcept = 0;

 protected:
  IIfConditional() = default;
};

//
// Control flow: loops
//

class ILoop;

/// Common base of the layers that delimit an ILoop.
class KILN_API ILoopBoundaryLayer : public ILayer {
 public:
  virtual ~ILoopBoundaryLayer() noexcept = default;

  /// The loop this layer belongs to.
  virtual ILoop* getLoop() const noexcept = 0;

 protected:
  ILoopBoundaryLayer() = default;
};

/// A loop-carried value: output = input 0 (initial value) on the first iteration, then input 1 (set with
/// setInput(1, ...)) of the previous iteration.
class KILN_API IRecurrenceLayer : public ILoopBoundaryLayer {
 public:
  virtual ~IRecurrenceLayer() noexcept = default;

 protected:
  IRecurrenceLayer() = default;
};

/// What an ILoopOutputLayer produces.
enum class LoopOutput : int32_t {
  kLAST_VALUE = 0,   ///< The value of the last iteration.
  kCONCATENATE = 1,  ///< The values of all iterations, concatenated along a new axis (length on input 1).
  kREVERSE = 2,      ///< Like kCONCATENATE, last iteration first.
};

namespace impl {
template <>
struct EnumMaxImpl<LoopOutput> {
  static constexpr int32_t kVALUE = 3;
};
}  // namespace impl

/// A tensor leaving an ILoop.
class KILN_API ILoopOutputLayer : public ILoopBoundaryLayer {
 public:
  virtual ~ILoopOutputLayer() noexcept = default;

  /// What the output holds.
  virtual LoopOutput getLoopOutput() const noexcept = 0;

  /// Position of the new axis for kCONCATENATE and kREVERSE.
  virtual void setAxis(int32_t axis) noexcept = 0;
  /// Position of the new axis.
  virtual int32_t getAxis() const noexcept = 0;

 protected:
  ILoopOutputLayer() = default;
};

/// How an ITripLimitLayer's input bounds the iterations.
enum class TripLimit : int32_t {
  kCOUNT = 0,  ///< A 0-D int32/int64 iteration count (fixed before the first iteration).
  kWHILE = 1,  ///< A 0-D kBOOL computed in the loop; iterations continue while it is true.
};

namespace impl {
template <>
struct EnumMaxImpl<TripLimit> {
  static constexpr int32_t kVALUE = 2;
};
}  // namespace impl

/// Bounds the number of iterations of an ILoop.
class KILN_API ITripLimitLayer : public ILoopBoundaryLayer {
 public:
  virtual ~ITripLimitLayer() noexcept = default;

  /// The kind of limit.
  virtual TripLimit getTripLimit() const noexcept = 0;

 protected:
  ITripLimitLayer() = default;
};

/// Yields successive slices of a tensor along an axis, one per iteration.
class KILN_API IIteratorLayer : public ILoopBoundaryLayer {
 public:
  virtual ~IIteratorLayer() noexcept = default;

  /// The sliced axis.
  virtual void setAxis(int32_t axis) noexcept = 0;
  /// The sliced axis.
  virtual int32_t getAxis() const noexcept = 0;

  /// Whether slices come last first.
  virtual void setReverse(bool reverse) noexcept = 0;
  /// Whether slices come last first.
  virtual bool getReverse() const noexcept = 0;

 protected:
  IIteratorLayer() = default;
};

/// A loop: layers fed by its recurrences and iterators form the body, run until a trip limit stops it.
/// Owned by the network.
class KILN_API ILoop : public INoCopy {
 public:
  virtual ~ILoop() noexcept = default;

  /// Adds a loop-carried value starting at `initialValue`; set its input 1 to the next-iteration value.
  virtual IRecurrenceLayer* addRecurrence(ITensor& initialValue) noexcept = 0;

  /// Adds a trip limit (at most one of each kind).
  virtual ITripLimitLayer* addTripLimit(ITensor& tensor, TripLimit limit) noexcept = 0;

  /// Adds an iterator over `tensor` along `axis`.
  virtual IIteratorLayer* addIterator(ITensor& tensor, int32_t axis = 0, bool reverse = false) noexcept = 0;

  /// Adds an output of kind `outputKind` for the body tensor `tensor`.
  virtual ILoopOutputLayer* addLoopOutput(ITensor& tensor, LoopOutput outputKind, int32_t axis = 0) noexcept = 0;

  /// Sets the name (copied).
  virtual void setName(char const* name) noexcept = 0;
  /// The name, owned by the loop.
  virtual char const* getName() const noexcept = 0;

 protected:
  ILoop() = default;
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

  /// Adds a transposed convolution with `nbOutputMaps` output channels and a `kernelSize` (rank 2 or 3)
  /// kernel. `kernelWeights` may be empty if the kernel is later given as input 1; `biasWeights` may be empty.
  virtual IDeconvolutionLayer* addDeconvolutionNd(ITensor& input, int64_t nbOutputMaps, Dims kernelSize,
                                                  Weights kernelWeights, Weights biasWeights) noexcept = 0;

  /// Adds a resize layer (nearest, output shape equal to the input's until configured).
  virtual IResizeLayer* addResize(ITensor& input) noexcept = 0;

  /// Adds a TopK layer over the single axis in bit mask `reduceAxes`, with kINT32 indices.
  virtual ITopKLayer* addTopK(ITensor& input, TopKOperation op, int32_t k, uint32_t reduceAxes) noexcept = 0;

  /// Adds a TopK layer whose indices output has type `indicesType` (kINT32 or kINT64).
  virtual ITopKLayer* addTopK(ITensor& input, TopKOperation op, int32_t k, uint32_t reduceAxes,
                              DataType indicesType) noexcept = 0;

  /// Adds a zero padding of the two innermost dimensions.
  virtual IPaddingLayer* addPaddingNd(ITensor& input, Dims const& prePadding, Dims const& postPadding) noexcept = 0;

  /// Adds a fill layer producing kFLOAT. Deprecated in TensorRT 9.0 in favor of the overload with a type.
  KILN_DEPRECATED virtual IFillLayer* addFill(Dims const& dimensions, FillOperation op) noexcept = 0;

  /// Adds a fill layer producing `outputType` (kFLOAT, kHALF, kINT32 or kINT64).
  virtual IFillLayer* addFill(Dims const& dimensions, FillOperation op, DataType outputType) noexcept = 0;

  /// Adds an element-wise select; the three inputs must have equal rank.
  virtual ISelectLayer* addSelect(ITensor& condition, ITensor& thenInput, ITensor& elseInput) noexcept = 0;

  /// Adds a scatter with mode `mode` (axis 0; adjust on the layer).
  virtual IScatterLayer* addScatter(ITensor& data, ITensor& indices, ITensor& updates,
                                    ScatterMode mode) noexcept = 0;

  /// Adds an einsum over `nbInputs` tensors (array not retained; equation copied).
  virtual IEinsumLayer* addEinsum(ITensor* const* inputs, int32_t nbInputs, char const* equation) noexcept = 0;

  /// Adds a cumulative operation along the axis held by the 0-D tensor `axis`.
  virtual ICumulativeLayer* addCumulative(ITensor& input, ITensor& axis, CumulativeOperation operation,
                                          bool exclusive, bool reverse) noexcept = 0;

  /// Adds a one-hot encoding inserting the new axis at `axis`.
  virtual IOneHotLayer* addOneHot(ITensor& indices, ITensor& values, ITensor& depth, int32_t axis) noexcept = 0;

  /// Adds a parametric ReLU; `slope` broadcasts to `input`.
  virtual IParametricReLULayer* addParametricReLU(ITensor& input, ITensor& slope) noexcept = 0;

  /// Adds a local response normalization over `window` channels.
  virtual ILRNLayer* addLRN(ITensor& input, int64_t window, float alpha, float beta, float k) noexcept = 0;

  /// Adds a squeeze of the axes listed by `axes`.
  virtual ISqueezeLayer* addSqueeze(ITensor& input, ITensor& axes) noexcept = 0;

  /// Adds an unsqueeze inserting the axes listed by `axes`.
  virtual IUnsqueezeLayer* addUnsqueeze(ITensor& input, ITensor& axes) noexcept = 0;

  /// Adds a grid sample (kLINEAR, unaligned corners, kFILL): input [N, C, H, W], grid [N, H_out, W_out, 2]. Kiln
  /// extension: a volumetric input [N, C, D, H, W] with grid [N, D_out, H_out, W_out, 3] (kLINEAR or kNEAREST).
  virtual IGridSampleLayer* addGridSample(ITensor& input, ITensor& grid) noexcept = 0;

  /// Adds a reverse-sequence layer (batch axis 1, sequence axis 0).
  virtual IReverseSequenceLayer* addReverseSequence(ITensor& input, ITensor& sequenceLens) noexcept = 0;

  /// Kiln extension, not in TensorRT. Adds an n-gram counting layer (ONNX TfIdfVectorizer) over the kINT32/kINT64
  /// `input` ([C] or [N, C]); the arguments are those of ITfIdfVectorizerLayer's setters (copied; empty
  /// `weights`: all ones). Returns nullptr, reporting why, when they are inconsistent.
  virtual ITfIdfVectorizerLayer* addTfIdfVectorizer(ITensor& input, TfIdfVectorizerMode mode, int32_t minGramLength,
                                                    int32_t maxGramLength, int32_t maxSkipCount, Weights pool,
                                                    Weights ngramCounts, Weights ngramIndexes,
                                                    Weights weights) noexcept = 0;

  /// Adds an assertion that every element of the kBOOL `condition` is true; `message` (copied) is reported
  /// otherwise.
  virtual IAssertionLayer* addAssertion(ITensor& condition, char const* message) noexcept = 0;

  /// Adds a non-maximum suppression with kINT32 indices.
  virtual INMSLayer* addNMS(ITensor& boxes, ITensor& scores, ITensor& maxOutputBoxesPerClass) noexcept = 0;

  /// Adds a non-maximum suppression whose indices outputs have type `indicesType` (kINT32 or kINT64).
  virtual INMSLayer* addNMS(ITensor& boxes, ITensor& scores, ITensor& maxOutputBoxesPerClass,
                            DataType indicesType) noexcept = 0;

  /// Adds a ragged softmax.
  virtual IRaggedSoftMaxLayer* addRaggedSoftMax(ITensor& input, ITensor& bounds) noexcept = 0;

  /// Adds a quantization to kINT8. Deprecated in TensorRT 9.0 in favor of the overload with a type.
  KILN_DEPRECATED virtual IQuantizeLayer* addQuantize(ITensor& input, ITensor& scale) noexcept = 0;

  /// Adds a quantization to `outputType` (kINT8, kFP8, kINT4 or kFP4).
  virtual IQuantizeLayer* addQuantize(ITensor& input, ITensor& scale, DataType outputType) noexcept = 0;

  /// Adds a dequantization to kFLOAT. Deprecated in TensorRT 9.0 in favor of the overload with a type.
  KILN_DEPRECATED virtual IDequantizeLayer* addDequantize(ITensor& input, ITensor& scale) noexcept = 0;

  /// Adds a dequantization to `outputType` (kFLOAT, kHALF or kBF16).
  virtual IDequantizeLayer* addDequantize(ITensor& input, ITensor& scale, DataType outputType) noexcept = 0;

  /// Adds a dynamic block quantization with 1-D blocks of `blockSize` elements along `axis`. Deprecated in
  /// favor of addDynamicQuantizeV2().
  KILN_DEPRECATED virtual IDynamicQuantizeLayer* addDynamicQuantize(ITensor& input, int32_t axis, int32_t blockSize,
                                                                    DataType outputType,
                                                                    DataType scaleType) noexcept = 0;

  /// Adds a dynamic block quantization with blocks of shape `blockShape` (rank of the input; -1 means the
  /// whole extent).
  virtual IDynamicQuantizeLayer* addDynamicQuantizeV2(ITensor& input, Dims const& blockShape, DataType outputType,
                                                      DataType scaleType) noexcept = 0;

  /// Adds a layer giving the coordinates of the non-zero elements, as kINT32.
  virtual INonZeroLayer* addNonZero(ITensor& input) noexcept = 0;

  /// Adds a non-zero layer whose output has type `indicesType` (kINT32 or kINT64).
  virtual INonZeroLayer* addNonZero(ITensor& input, DataType indicesType) noexcept = 0;

  /// Adds a layer running `plugin` (an IPluginV2DynamicExt) on `nbInputs` tensors. The network keeps a clone
  /// (plugin.clone()); the caller keeps ownership of `plugin`. nullptr, with the reason reported, for a null
  /// input, a plugin of an older generation, or a failed clone.
  virtual IPluginV2Layer* addPluginV2(ITensor* const* inputs, int32_t nbInputs, IPluginV2& plugin) noexcept = 0;

  /// Adds a layer running a V3 plugin on `nbInputs` tensors, with `nbShapeInputs` shape inputs (0-D or 1-D
  /// int32/int64 tensors whose values getOutputShapes sees). The network keeps a clone (plugin.clone()); the
  /// caller keeps ownership of `plugin`, which needs the core, build and runtime capabilities.
  virtual IPluginV3Layer* addPluginV3(ITensor* const* inputs, int32_t nbInputs, ITensor* const* shapeInputs,
                                      int32_t nbShapeInputs, IPluginV3& plugin) noexcept = 0;

  /// Adds an if-then-else construct, owned by the network.
  virtual IIfConditional* addIfConditional() noexcept = 0;

  /// Adds a loop construct, owned by the network.
  virtual ILoop* addLoop() noexcept = 0;

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

/// The tactic choices of earlier builds, keyed by layer signature (target, op, attributes, types and shapes, and
/// the candidate tactics): a build that finds its layer here skips timing it. Created by
/// IBuilderConfig::createTimingCache(); the caller owns it and releases it with delete.
class KILN_API ITimingCache : public INoCopy {
 public:
  virtual ~ITimingCache() noexcept = default;
  /// The cache as bytes (for a file), owned by the caller; nullptr when out of memory.
  virtual IHostMemory* serialize() const noexcept = 0;
  /// Adds the entries of `inputCache` that this cache lacks (entries already here win). Returns false when
  /// `inputCache` is not a Kiln timing cache.
  virtual bool combine(ITimingCache const& inputCache, bool ignoreMismatch) noexcept = 0;
  /// Removes every entry.
  virtual bool reset() noexcept = 0;

 protected:
  ITimingCache() = default;
};

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

  /// A timing cache from bytes written by ITimingCache::serialize() (size 0: an empty cache), owned by the
  /// caller; nullptr, with the reason reported, when the bytes are not a valid cache.
  virtual ITimingCache* createTimingCache(void const* blob, std::size_t size) const noexcept = 0;
  /// Builds with this config read and update `cache` (which must outlive them); returns false for a cache not
  /// created by createTimingCache().
  virtual bool setTimingCache(ITimingCache const& cache, bool ignoreMismatch) noexcept = 0;
  /// The cache set with setTimingCache(), or nullptr (each build then uses a cache of its own).
  virtual ITimingCache const* getTimingCache() const noexcept = 0;

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
