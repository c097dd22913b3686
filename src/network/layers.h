// The layer objects of a NetworkImpl: one class per public layer interface, each a view of its ir::Node whose
// setters write the node's attributes (names and meanings as ir/ops.def documents them).
#pragma once

#include "core/dtype.h"

#include <cstdint>
#include <vector>

#include "ir/extension_enums.h"
#include "network/network.h"

namespace kiln::network {

/// Weights with no values (TensorRT's "empty weights").
inline Weights emptyWeights(DataType t = DataType::kFLOAT) { return Weights{t, nullptr, 0}; }
/// Attribute list -> Dims (at most MAX_DIMS entries).
Dims toDims(std::vector<int64_t> const& v);
/// Dims -> attribute list (empty for nbDims <= 0).
std::vector<int64_t> toInts(Dims const& d);
/// Bit mask -> sorted axis list; bit mask <- axis list (negative axes normalized against `rank` when >= 0).
std::vector<int64_t> maskToAxes(uint32_t mask);
uint32_t axesToMask(std::vector<int64_t> const& axes, int32_t rank);
/// TensorRT's name of a layer type in default layer names ("Convolution", "Matrix Multiply", ...).
char const* layerTypeName(LayerType t);
/// True if `e` is one of the enumerators of its public enum.
template <typename E>
bool validEnum(E e) {
  auto v = static_cast<int32_t>(e);
  return v >= 0 && v < EnumMax<E>();
}
/// DataType also has Kiln's extension values (kFLOAT64, ...), which lie past EnumMax<DataType>().
inline bool validEnum(DataType t) {
  auto v = static_cast<int32_t>(t);
  return (v >= 0 && v < EnumMax<DataType>()) || isSupportedType(t);
}
/// ElementWiseOperation and UnaryOperation also have Kiln's bitwise extension values (past EnumMax).
inline bool validEnum(ElementWiseOperation op) { return ir::isValidElementWiseOperation(static_cast<int64_t>(op)); }
inline bool validEnum(UnaryOperation op) { return ir::isValidUnaryOperation(static_cast<int64_t>(op)); }
/// Shape of a convolution kernel constant of `count` values: [K, count / (K * kernel volume), k...], given the
/// data input's shape `x` (channels at x.d[x.nbDims - kernel.size() - 1] when known). nbDims == -1, with
/// `why` set, when the count cannot be such a kernel (not a multiple of K * kernel volume, or C / groups
/// would not divide the input's channels for any group count).
Dims convKernelShape(int64_t count, int64_t nbOutputMaps, std::vector<int64_t> const& kernel, Dims const& x,
                     std::string* why);
/// Number of coefficients a Scale layer of `mode` needs on input shape `x`; -1 when unknown.
int64_t scaleCoefficientCount(ScaleMode mode, int32_t channelAxis, Dims const& x);

class ConvolutionLayer final : public LayerBase<IConvolutionLayer> {
 public:
  ConvolutionLayer(NetworkImpl& net, ir::Node* node, Weights kernel, Weights bias)
      : LayerBase(net, LayerType::kCONVOLUTION, node), kernel_(kernel), bias_(bias) {}
  void setNbOutputMaps(int64_t nbOutputMaps) noexcept override;
  int64_t getNbOutputMaps() const noexcept override { return node_->attrs.getInt("num_output_maps"); }
  void setNbGroups(int64_t nbGroups) noexcept override;
  int64_t getNbGroups() const noexcept override { return node_->attrs.getInt("groups", 1); }
  void setKernelWeights(Weights weights) noexcept override;
  Weights getKernelWeights() const noexcept override { return kernel_; }
  void setBiasWeights(Weights weights) noexcept override;
  Weights getBiasWeights() const noexcept override { return bias_; }
  void setPrePadding(Dims const& padding) noexcept override;
  Dims getPrePadding() const noexcept override { return toDims(node_->attrs.getInts("pads_begin")); }
  void setPostPadding(Dims const& padding) noexcept override;
  Dims getPostPadding() const noexcept override { return toDims(node_->attrs.getInts("pads_end")); }
  void setPaddingMode(PaddingMode paddingMode) noexcept override;
  PaddingMode getPaddingMode() const noexcept override;
  void setKernelSizeNd(Dims const& kernelSize) noexcept override;
  Dims getKernelSizeNd() const noexcept override { return toDims(node_->attrs.getInts("kernel_shape")); }
  void setStrideNd(Dims const& stride) noexcept override;
  Dims getStrideNd() const noexcept override { return toDims(node_->attrs.getInts("strides")); }
  void setPaddingNd(Dims const& padding) noexcept override;
  Dims getPaddingNd() const noexcept override { return getPrePadding(); }
  void setDilationNd(Dims const& dilation) noexcept override;
  Dims getDilationNd() const noexcept override { return toDims(node_->attrs.getInts("dilations")); }

 protected:
  bool acceptsInput(int32_t index) const override { return index >= 0 && index <= 2; }
  void onInputSet(int32_t index) override;

 private:
  int32_t nbSpatial() const { return static_cast<int32_t>(node_->attrs.getInts("kernel_shape").size()); }
  bool setSpatial(char const* attr, Dims const& d, int64_t minValue, char const* what);
  /// Reshapes the hidden kernel constant for K = nbOutputMaps and `kernel`; reports and returns false if the
  /// weights' count does not fit.
  bool reshapeKernel(int64_t nbOutputMaps, std::vector<int64_t> const& kernel);
  Weights kernel_;
  Weights bias_;
};

class ActivationLayer final : public LayerBase<IActivationLayer> {
 public:
  ActivationLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kACTIVATION, node) {}
  void setActivationType(ActivationType type) noexcept override;
  ActivationType getActivationType() const noexcept override;
  void setAlpha(float alpha) noexcept override { setFloat("alpha", alpha); }
  void setBeta(float beta) noexcept override { setFloat("beta", beta); }
  float getAlpha() const noexcept override { return static_cast<float>(node_->attrs.getFloat("alpha")); }
  float getBeta() const noexcept override { return static_cast<float>(node_->attrs.getFloat("beta")); }
};

class PoolingLayer final : public LayerBase<IPoolingLayer> {
 public:
  PoolingLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kPOOLING, node) {}
  void setPoolingType(PoolingType type) noexcept override;
  PoolingType getPoolingType() const noexcept override;
  void setBlendFactor(float blendFactor) noexcept override;
  float getBlendFactor() const noexcept override;
  void setAverageCountExcludesPadding(bool exclusive) noexcept override { setInt("exclude_padding", exclusive); }
  bool getAverageCountExcludesPadding() const noexcept override;
  void setPrePadding(Dims const& padding) noexcept override;
  Dims getPrePadding() const noexcept override { return toDims(node_->attrs.getInts("pads_begin")); }
  void setPostPadding(Dims const& padding) noexcept override;
  Dims getPostPadding() const noexcept override { return toDims(node_->attrs.getInts("pads_end")); }
  void setPaddingMode(PaddingMode paddingMode) noexcept override;
  PaddingMode getPaddingMode() const noexcept override;
  void setWindowSizeNd(Dims const& windowSize) noexcept override;
  Dims getWindowSizeNd() const noexcept override { return toDims(node_->attrs.getInts("window")); }
  void setStrideNd(Dims const& stride) noexcept override;
  Dims getStrideNd() const noexcept override { return toDims(node_->attrs.getInts("strides")); }
  void setPaddingNd(Dims const& padding) noexcept override;
  Dims getPaddingNd() const noexcept override { return getPrePadding(); }

 private:
  bool setSpatial(char const* attr, Dims const& d, int64_t minValue, char const* what);
};

class ElementWiseLayer final : public LayerBase<IElementWiseLayer> {
 public:
  ElementWiseLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kELEMENTWISE, node) {}
  void setOperation(ElementWiseOperation op) noexcept override;
  ElementWiseOperation getOperation() const noexcept override;

 protected:
  bool acceptsInput(int32_t index) const override { return index == 0 || index == 1; }
};

class UnaryLayer final : public LayerBase<IUnaryLayer> {
 public:
  UnaryLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kUNARY, node) {}
  void setOperation(UnaryOperation op) noexcept override;
  UnaryOperation getOperation() const noexcept override;
};

class MatrixMultiplyLayer final : public LayerBase<IMatrixMultiplyLayer> {
 public:
  MatrixMultiplyLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kMATRIX_MULTIPLY, node) {}
  void setOperation(int32_t index, MatrixOperation op) noexcept override;
  MatrixOperation getOperation(int32_t index) const noexcept override;

 protected:
  bool acceptsInput(int32_t index) const override { return index == 0 || index == 1; }
};

class ShuffleLayer final : public LayerBase<IShuffleLayer> {
 public:
  ShuffleLayer(NetworkImpl& net, ir::Node* node);
  void setFirstTranspose(Permutation permutation) noexcept override;
  Permutation getFirstTranspose() const noexcept override { return first_; }
  void setReshapeDimensions(Dims const& dimensions) noexcept override;
  Dims getReshapeDimensions() const noexcept override;
  void setSecondTranspose(Permutation permutation) noexcept override;
  Permutation getSecondTranspose() const noexcept override { return second_; }
  void setZeroIsPlaceholder(bool zeroIsPlaceholder) noexcept override {
    setInt("zero_is_placeholder", zeroIsPlaceholder);
  }
  bool getZeroIsPlaceholder() const noexcept override { return node_->attrs.getInt("zero_is_placeholder", 1) != 0; }
  /// Writes first_perm/second_perm truncated to the ranks they apply to (known once the input is inferred).
  void beforeInfer() override;

 protected:
  bool acceptsInput(int32_t index) const override { return index == 0 || index == 1; }
  void onInputSet(int32_t index) override;

 private:
  Permutation first_;
  Permutation second_;
};

class ConcatenationLayer final : public LayerBase<IConcatenationLayer> {
 public:
  ConcatenationLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kCONCATENATION, node) {}
  void setAxis(int32_t axis) noexcept override;
  int32_t getAxis() const noexcept override { return static_cast<int32_t>(node_->attrs.getInt("axis")); }

 protected:
  bool acceptsInput(int32_t index) const override { return index >= 0 && index < doGetNbInputs(); }
};

class SliceLayer final : public LayerBase<ISliceLayer> {
 public:
  SliceLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kSLICE, node) {}
  void setStart(Dims const& start) noexcept override { setParam(1, "start", start); }
  Dims getStart() const noexcept override { return getParam(1, "start"); }
  void setSize(Dims const& size) noexcept override { setParam(2, "size", size); }
  Dims getSize() const noexcept override { return getParam(2, "size"); }
  void setStride(Dims const& stride) noexcept override { setParam(3, "stride", stride); }
  Dims getStride() const noexcept override { return getParam(3, "stride"); }
  void setMode(SampleMode mode) noexcept override;
  SampleMode getMode() const noexcept override;
  void setAxes(Dims const& axes) noexcept override { setParam(5, "axes", axes); }
  Dims getAxes() const noexcept override { return getParam(5, "axes"); }

 protected:
  bool acceptsInput(int32_t index) const override { return index >= 0 && index <= 5; }
  void onInputSet(int32_t index) override;

 private:
  void setParam(int32_t input, char const* attr, Dims const& d);
  Dims getParam(int32_t input, char const* attr) const;
};

class ReduceLayer final : public LayerBase<IReduceLayer> {
 public:
  ReduceLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kREDUCE, node) {}
  void setOperation(ReduceOperation op) noexcept override;
  ReduceOperation getOperation() const noexcept override;
  void setReduceAxes(uint32_t reduceAxes) noexcept override;
  uint32_t getReduceAxes() const noexcept override;
  void setKeepDimensions(bool keepDimensions) noexcept override { setInt("keep_dims", keepDimensions); }
  bool getKeepDimensions() const noexcept override { return node_->attrs.getInt("keep_dims") != 0; }
  // Input 1 (Kiln extension): a 1-D int32/int64 axes tensor that replaces the axes mask; it may be known only
  // at run time (ONNX Reduce* with an axes input).
  bool acceptsInput(int32_t index) const override { return index == 0 || index == 1; }
};

class SoftMaxLayer final : public LayerBase<ISoftMaxLayer> {
 public:
  SoftMaxLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kSOFTMAX, node) {}
  void setAxes(uint32_t axes) noexcept override;
  uint32_t getAxes() const noexcept override;
};

class ScaleLayer final : public LayerBase<IScaleLayer> {
 public:
  ScaleLayer(NetworkImpl& net, ir::Node* node, Weights shift, Weights scale, Weights power)
      : LayerBase(net, LayerType::kSCALE, node), w_{shift, scale, power} {}
  void setMode(ScaleMode mode) noexcept override;
  ScaleMode getMode() const noexcept override;
  void setShift(Weights shift) noexcept override { setCoefficients(0, shift); }
  Weights getShift() const noexcept override { return w_[0]; }
  void setScale(Weights scale) noexcept override { setCoefficients(1, scale); }
  Weights getScale() const noexcept override { return w_[1]; }
  void setPower(Weights power) noexcept override { setCoefficients(2, power); }
  Weights getPower() const noexcept override { return w_[2]; }
  int32_t getChannelAxis() const noexcept override {
    return static_cast<int32_t>(node_->attrs.getInt("channel_axis", 1));
  }
  void setChannelAxis(int32_t channelAxis) noexcept override;

 private:
  void setCoefficients(int32_t which, Weights const& w);
  Weights w_[3];
};

class NormalizationLayer final : public LayerBase<INormalizationLayer> {
 public:
  NormalizationLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kNORMALIZATION, node) {}
  void setEpsilon(float eps) noexcept override;
  float getEpsilon() const noexcept override { return static_cast<float>(node_->attrs.getFloat("epsilon", 1e-5)); }
  void setAxes(uint32_t axesMask) noexcept override;
  uint32_t getAxes() const noexcept override;
  void setNbGroups(int64_t nbGroups) noexcept override;
  int64_t getNbGroups() const noexcept override { return node_->attrs.getInt("num_groups", 1); }
  void setComputePrecision(DataType type) noexcept override;
  DataType getComputePrecision() const noexcept override { return computePrecision_; }
  bool isV2() const noexcept override { return node_->attrs.getInt("v2") != 0; }

 protected:
  bool acceptsInput(int32_t index) const override { return index >= 0 && index <= 2; }

 private:
  DataType computePrecision_ = DataType::kFLOAT;
};

class ConstantLayer final : public LayerBase<IConstantLayer> {
 public:
  ConstantLayer(NetworkImpl& net, ir::Node* node, Weights w) : LayerBase(net, LayerType::kCONSTANT, node), w_(w) {}
  void setWeights(Weights weights) noexcept override;
  Weights getWeights() const noexcept override { return w_; }
  void setDimensions(Dims const& dimensions) noexcept override;
  Dims getDimensions() const noexcept override { return node_->constant->shape(); }

 protected:
  bool acceptsInput(int32_t index) const override { return false; }

 private:
  Weights w_;
};

class IdentityLayer final : public LayerBase<IIdentityLayer> {
 public:
  IdentityLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kIDENTITY, node) {}
};

class CastLayer final : public LayerBase<ICastLayer> {
 public:
  CastLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kCAST, node) {}
  void setToType(DataType toType) noexcept override;
  DataType getToType() const noexcept override { return static_cast<DataType>(node_->attrs.getInt("to")); }
};

class ShapeLayer final : public LayerBase<IShapeLayer> {
 public:
  ShapeLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kSHAPE, node) {}
};

class GatherLayer final : public LayerBase<IGatherLayer> {
 public:
  GatherLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kGATHER, node) {}
  void setGatherAxis(int32_t axis) noexcept override;
  int32_t getGatherAxis() const noexcept override { return static_cast<int32_t>(node_->attrs.getInt("axis")); }
  void setNbElementWiseDims(int32_t k) noexcept override;
  int32_t getNbElementWiseDims() const noexcept override;
  void setMode(GatherMode mode) noexcept override;
  GatherMode getMode() const noexcept override;

 protected:
  bool acceptsInput(int32_t index) const override { return index == 0 || index == 1; }
};

}  // namespace kiln::network
