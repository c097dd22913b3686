// NetworkImpl: Kiln's INetworkDefinition. It owns an ir::Graph, the ITensor objects wrapping its Values and the
// ILayer objects wrapping its Nodes; shapes and types are inferred lazily (incrementally) for the getters.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/logging.h"
#include "ir/graph.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::network {

class NetworkImpl;

/// ITensor over one ir::Value of the network's graph.
class TensorImpl final : public ITensor {
 public:
  TensorImpl(NetworkImpl& net, ir::Value* value) : net_(net), value_(value) {}

  void setName(char const* name) noexcept override;
  char const* getName() const noexcept override { return value_->name.c_str(); }
  void setDimensions(Dims const& dimensions) noexcept override;
  Dims getDimensions() const noexcept override;
  void setType(DataType type) noexcept override;
  DataType getType() const noexcept override;
  bool isNetworkInput() const noexcept override { return value_->isInput; }
  bool isNetworkOutput() const noexcept override { return value_->isOutput; }
  void setAllowedFormats(TensorFormats formats) noexcept override;
  TensorFormats getAllowedFormats() const noexcept override { return formats_; }
  bool isShapeTensor() const noexcept override;
  bool isExecutionTensor() const noexcept override;
  void setDimensionName(int32_t index, char const* name) noexcept override;
  char const* getDimensionName(int32_t index) const noexcept override;

  /// The wrapped graph value.
  ir::Value* value() const { return value_; }
  /// Names given with setDimensionName, by dimension index.
  std::map<int32_t, std::string> const& dimensionNames() const { return dimNames_; }

 private:
  NetworkImpl& net_;
  ir::Value* value_;
  TensorFormats formats_ = (1U << impl::EnumMaxImpl<TensorFormat>::kVALUE) - 1U;
  std::map<int32_t, std::string> dimNames_;
};

/// State common to every layer object (the part the network handles without knowing the layer type).
class LayerState {
 public:
  LayerState(NetworkImpl& net, LayerType type, ir::Node* node) : net_(net), type_(type), node_(node) {}
  virtual ~LayerState() = default;
  LayerState(LayerState const&) = delete;
  LayerState& operator=(LayerState const&) = delete;

  /// The public interface of this layer.
  virtual ILayer* asLayer() = 0;
  /// The IR node of the layer.
  ir::Node* node() const { return node_; }
  LayerType layerType() const { return type_; }
  /// Hidden Constant nodes created for this layer's Weights, by node input index.
  std::map<int32_t, ir::Node*> const& weightNodes() const { return weightNodes_; }
  std::string const& metadata() const { return metadata_; }
  /// Called by shape inference just before the node is inferred, once its inputs' shapes are up to date
  /// (attributes that depend on input ranks are written here).
  virtual void beforeInfer() {}

 protected:
  friend class NetworkImpl;
  // Implementations of the ILayer methods shared by every layer type.
  void doSetName(char const* name);
  int32_t doGetNbInputs() const { return static_cast<int32_t>(node_->inputs.size()); }
  ITensor* doGetInput(int32_t index) const;
  int32_t doGetNbOutputs() const { return static_cast<int32_t>(node_->outputs.size()); }
  ITensor* doGetOutput(int32_t index) const;
  void doSetInput(int32_t index, ITensor& tensor);
  void doSetPrecision(DataType type);
  DataType doGetPrecision() const { return node_->precision.value_or(DataType::kFLOAT); }
  bool doPrecisionIsSet() const { return node_->precision.has_value(); }
  void doResetPrecision();
  void doSetOutputType(int32_t index, DataType type);
  DataType doGetOutputType(int32_t index) const;
  bool doOutputTypeIsSet(int32_t index) const;
  void doResetOutputType(int32_t index);
  void doSetMetadata(char const* doc);

  /// Whether setInput(index) is allowed for this layer type (default: input 0 only).
  virtual bool acceptsInput(int32_t index) const { return index == 0; }
  /// Called after setInput(index) replaced an input (e.g. to drop the attribute it supersedes).
  virtual void onInputSet(int32_t index) {}

  /// Replaces the hidden Constant feeding input `index` with one holding `w` (shape `shape`), or removes it
  /// (input becomes absent) when w.count == 0.
  void setWeightInput(int32_t index, Weights const& w, Dims const& shape, char const* suffix);
  /// Writes attributes and marks the layer changed for shape inference.
  void setInt(char const* name, int64_t v);
  void setFloat(char const* name, double v);
  void setInts(char const* name, std::vector<int64_t> v);
  void eraseAttr(char const* name);
  /// Dims of input `index` (inferred); nbDims == -1 when unknown.
  Dims inputDims(int32_t index) const;
  /// Reports an error naming this layer.
  void error(std::string const& msg) const;

  NetworkImpl& net_;
  LayerType type_;
  ir::Node* node_;
  std::map<int32_t, ir::Node*> weightNodes_;
  std::string metadata_;
};

/// Adapts LayerState to a public layer interface `I` (IConvolutionLayer, ...).
template <typename I>
class LayerBase : public I, public LayerState {
 public:
  LayerBase(NetworkImpl& net, LayerType type, ir::Node* node) : LayerState(net, type, node) {}
  ILayer* asLayer() override { return this; }

  LayerType getType() const noexcept override { return type_; }
  void setName(char const* name) noexcept override { doSetName(name); }
  char const* getName() const noexcept override { return node_->name.c_str(); }
  int32_t getNbInputs() const noexcept override { return doGetNbInputs(); }
  ITensor* getInput(int32_t index) const noexcept override { return doGetInput(index); }
  int32_t getNbOutputs() const noexcept override { return doGetNbOutputs(); }
  ITensor* getOutput(int32_t index) const noexcept override { return doGetOutput(index); }
  void setInput(int32_t index, ITensor& tensor) noexcept override { doSetInput(index, tensor); }
  void setPrecision(DataType dataType) noexcept override { doSetPrecision(dataType); }
  DataType getPrecision() const noexcept override { return doGetPrecision(); }
  bool precisionIsSet() const noexcept override { return doPrecisionIsSet(); }
  void resetPrecision() noexcept override { doResetPrecision(); }
  void setOutputType(int32_t index, DataType dataType) noexcept override { doSetOutputType(index, dataType); }
  DataType getOutputType(int32_t index) const noexcept override { return doGetOutputType(index); }
  bool outputTypeIsSet(int32_t index) const noexcept override { return doOutputTypeIsSet(index); }
  void resetOutputType(int32_t index) noexcept override { doResetOutputType(index); }
  void setMetadata(char const* docString) noexcept override { doSetMetadata(docString); }
  char const* getMetadata() const noexcept override { return metadata_.c_str(); }
};

/// Kiln's INetworkDefinition. Created by the builder through createNetwork().
class NetworkImpl final : public INetworkDefinition {
 public:
  NetworkImpl(IBuilder* builder, NetworkDefinitionCreationFlags flags, ILogger* logger);
  ~NetworkImpl() noexcept override;

  // INetworkDefinition.
  ITensor* addInput(char const* name, DataType type, Dims const& dimensions) noexcept override;
  void markOutput(ITensor& tensor) noexcept override;
  void unmarkOutput(ITensor& tensor) noexcept override;
  IConvolutionLayer* addConvolutionNd(ITensor& input, int64_t nbOutputMaps, Dims const& kernelSize,
                                      Weights kernelWeights, Weights biasWeights) noexcept override;
  IActivationLayer* addActivation(ITensor& input, ActivationType type) noexcept override;
  IPoolingLayer* addPoolingNd(ITensor& input, PoolingType type, Dims const& windowSize) noexcept override;
  IElementWiseLayer* addElementWise(ITensor& input1, ITensor& input2, ElementWiseOperation op) noexcept override;
  IUnaryLayer* addUnary(ITensor& input, UnaryOperation operation) noexcept override;
  IMatrixMultiplyLayer* addMatrixMultiply(ITensor& input0, MatrixOperation op0, ITensor& input1,
                                          MatrixOperation op1) noexcept override;
  IShuffleLayer* addShuffle(ITensor& input) noexcept override;
  IConcatenationLayer* addConcatenation(ITensor* const* inputs, int32_t nbInputs) noexcept override;
  ISliceLayer* addSlice(ITensor& input, Dims const& start, Dims const& size, Dims const& stride) noexcept override;
  IReduceLayer* addReduce(ITensor& input, ReduceOperation operation, uint32_t reduceAxes,
                          bool keepDimensions) noexcept override;
  ISoftMaxLayer* addSoftMax(ITensor& input) noexcept override;
  IScaleLayer* addScale(ITensor& input, ScaleMode mode, Weights shift, Weights scale, Weights power) noexcept override;
  IScaleLayer* addScaleNd(ITensor& input, ScaleMode mode, Weights shift, Weights scale, Weights power,
                          int32_t channelAxis) noexcept override;
  INormalizationLayer* addNormalization(ITensor& input, ITensor& scale, ITensor& bias,
                                        uint32_t axesMask) noexcept override;
  INormalizationLayer* addNormalizationV2(ITensor& input, ITensor& scale, ITensor& bias,
                                          uint32_t axesMask) noexcept override;
  IConstantLayer* addConstant(Dims const& dimensions, Weights weights) noexcept override;
  IIdentityLayer* addIdentity(ITensor& input) noexcept override;
  ICastLayer* addCast(ITensor& input, DataType toType) noexcept override;
  IGatherLayer* addGather(ITensor& data, ITensor& indices, int32_t axis) noexcept override;
  IGatherLayer* addGatherV2(ITensor& data, ITensor& indices, GatherMode mode) noexcept override;
  IShapeLayer* addShape(ITensor& input) noexcept override;
  // Layer breadth: each delegates to the factory of the same name in network/layer_factories.h.
  IDeconvolutionLayer* addDeconvolutionNd(ITensor& input, int64_t nbOutputMaps, Dims kernelSize, Weights kernelWeights,
                                          Weights biasWeights) noexcept override;
  IResizeLayer* addResize(ITensor& input) noexcept override;
  ITopKLayer* addTopK(ITensor& input, TopKOperation op, int32_t k, uint32_t reduceAxes) noexcept override;
  ITopKLayer* addTopK(ITensor& input, TopKOperation op, int32_t k, uint32_t reduceAxes,
                      DataType indicesType) noexcept override;
  IPaddingLayer* addPaddingNd(ITensor& input, Dims const& prePadding, Dims const& postPadding) noexcept override;
  IFillLayer* addFill(Dims const& dimensions, FillOperation op) noexcept override;
  IFillLayer* addFill(Dims const& dimensions, FillOperation op, DataType outputType) noexcept override;
  ISelectLayer* addSelect(ITensor& condition, ITensor& thenInput, ITensor& elseInput) noexcept override;
  IScatterLayer* addScatter(ITensor& data, ITensor& indices, ITensor& updates, ScatterMode mode) noexcept override;
  IEinsumLayer* addEinsum(ITensor* const* inputs, int32_t nbInputs, char const* equation) noexcept override;
  ICumulativeLayer* addCumulative(ITensor& input, ITensor& axis, CumulativeOperation operation, bool exclusive,
                                  bool reverse) noexcept override;
  IOneHotLayer* addOneHot(ITensor& indices, ITensor& values, ITensor& depth, int32_t axis) noexcept override;
  IParametricReLULayer* addParametricReLU(ITensor& input, ITensor& slope) noexcept override;
  ILRNLayer* addLRN(ITensor& input, int64_t window, float alpha, float beta, float k) noexcept override;
  ISqueezeLayer* addSqueeze(ITensor& input, ITensor& axes) noexcept override;
  IUnsqueezeLayer* addUnsqueeze(ITensor& input, ITensor& axes) noexcept override;
  IGridSampleLayer* addGridSample(ITensor& input, ITensor& grid) noexcept override;
  IReverseSequenceLayer* addReverseSequence(ITensor& input, ITensor& sequenceLens) noexcept override;
  IAssertionLayer* addAssertion(ITensor& condition, char const* message) noexcept override;
  ITfIdfVectorizerLayer* addTfIdfVectorizer(ITensor& input, TfIdfVectorizerMode mode, int32_t minGramLength,
                                            int32_t maxGramLength, int32_t maxSkipCount, Weights pool,
                                            Weights ngramCounts, Weights ngramIndexes,
                                            Weights weights) noexcept override;
  INMSLayer* addNMS(ITensor& boxes, ITensor& scores, ITensor& maxOutputBoxesPerClass) noexcept override;
  INMSLayer* addNMS(ITensor& boxes, ITensor& scores, ITensor& maxOutputBoxesPerClass,
                    DataType indicesType) noexcept override;
  IRaggedSoftMaxLayer* addRaggedSoftMax(ITensor& input, ITensor& bounds) noexcept override;
  IQuantizeLayer* addQuantize(ITensor& input, ITensor& scale) noexcept override;
  IQuantizeLayer* addQuantize(ITensor& input, ITensor& scale, DataType outputType) noexcept override;
  IDequantizeLayer* addDequantize(ITensor& input, ITensor& scale) noexcept override;
  IDequantizeLayer* addDequantize(ITensor& input, ITensor& scale, DataType outputType) noexcept override;
  IDynamicQuantizeLayer* addDynamicQuantize(ITensor& input, int32_t axis, int32_t blockSize, DataType outputType,
                                            DataType scaleType) noexcept override;
  IDynamicQuantizeLayer* addDynamicQuantizeV2(ITensor& input, Dims const& blockShape, DataType outputType,
                                              DataType scaleType) noexcept override;
  INonZeroLayer* addNonZero(ITensor& input) noexcept override;
  INonZeroLayer* addNonZero(ITensor& input, DataType indicesType) noexcept override;
  IPluginV2Layer* addPluginV2(ITensor* const* inputs, int32_t nbInputs, IPluginV2& plugin) noexcept override;
  IPluginV3Layer* addPluginV3(ITensor* const* inputs, int32_t nbInputs, ITensor* const* shapeInputs,
                              int32_t nbShapeInputs, IPluginV3& plugin) noexcept override;
  IIfConditional* addIfConditional() noexcept override;
  ILoop* addLoop() noexcept override;
  int32_t getNbLayers() const noexcept override { return static_cast<int32_t>(layers_.size()); }
  ILayer* getLayer(int32_t index) const noexcept override;
  int32_t getNbInputs() const noexcept override { return static_cast<int32_t>(graph_->inputs().size()); }
  ITensor* getInput(int32_t index) const noexcept override;
  int32_t getNbOutputs() const noexcept override { return static_cast<int32_t>(graph_->outputs().size()); }
  ITensor* getOutput(int32_t index) const noexcept override;
  void removeTensor(ITensor& tensor) noexcept override;
  void setName(char const* name) noexcept override;
  char const* getName() const noexcept override { return name_.c_str(); }
  IBuilder& getBuilder() const noexcept override { return *builder_; }
  NetworkDefinitionCreationFlags getFlags() const noexcept override { return flags_; }
  bool getFlag(NetworkDefinitionCreationFlag flag) const noexcept override;
  void setErrorRecorder(IErrorRecorder* recorder) noexcept override { reporter_.setRecorder(recorder); }
  IErrorRecorder* getErrorRecorder() const noexcept override { return reporter_.recorder(); }

  // For the builder.
  /// The graph, with every value's dtype and shape inferred as far as possible.
  ir::Graph const& graph() const;
  bool stronglyTyped() const {
    return (flags_ & (1U << static_cast<int32_t>(NetworkDefinitionCreationFlag::kSTRONGLY_TYPED))) != 0;
  }
  std::string const& name() const { return name_; }
  /// The layer objects in creation order.
  std::vector<std::unique_ptr<LayerState>> const& layers() const { return layers_; }
  /// The tensor object of a value (network input or layer output), or nullptr (hidden weights).
  TensorImpl* tensorOf(ir::Value const* v) const;

  // For the layer and tensor objects.
  Reporter const& reporter() const { return reporter_; }
  /// The TensorImpl behind `t` if it belongs to this network; otherwise reports an error and returns null.
  TensorImpl* own(ITensor const& t, std::string const& what) const;
  /// Records that `n` (and therefore everything after it) needs shape inference again.
  void markChanged(ir::Node const* n);
  /// Records that a network input's declaration changed (everything needs inference again).
  void markAllChanged() { dirtyFrom_ = 0; }
  /// Runs pending shape inference.
  void ensureInferred() const;
  /// Runs pending shape inference of the nodes evaluated before `n` (its inputs), leaving `n` itself and
  /// what follows for later, so that a setter half-way through reconfiguring `n` reports nothing about it.
  void ensureInferredBefore(ir::Node const* n) const;
  /// Sets node input `index` (growing the input list with absent inputs, trimming trailing absent ones).
  void setNodeInput(ir::Node* n, int32_t index, ir::Value* v);
  /// Adds a hidden Constant (borrowing w.values) placed before `user` in evaluation order.
  ir::Node* addWeightConstant(std::string const& name, Weights const& w, Dims const& shape, ir::Node const* user);
  /// Removes a hidden Constant node and its output value.
  void removeWeightConstant(ir::Node* n);
  /// Renames a tensor (unique names), reporting errors.
  bool renameTensor(ir::Value* v, std::string const& name);
  /// Checks Weights given to layer `layer`: a supported type, values for a non-zero count, and `expected`
  /// values when expected >= 0. Reports the error and returns false otherwise.
  bool checkWeights(Weights const& w, std::string const& layer, char const* what, int64_t expected) const;
  /// True for int32/int64 values that feed shape computations (see ITensor::isShapeTensor).
  bool isShapeTensor(ir::Value const* v) const;
  /// True if `v`'s contents are needed to compute a network output.
  bool isExecutionTensor(ir::Value const* v) const;

  // For the layer factories (network/layer_factories.h; see "How to add a layer" there).
  /// The name the next layer of type `type` gets: "(Unnamed Layer* N) [Type]". Use it in error messages
  /// before the node exists.
  std::string nextLayerName(LayerType type) const { return defaultLayerName(type); }
  /// Appends a node of op `op` named nextLayerName(type) reading `inputs` (nullptr: absent optional input;
  /// trailing ones are dropped), with `numOutputs` fresh outputs wrapped as ITensors (unknown shapes until
  /// inferred). Write the node's attributes (ir/ops.def) right after, then wrap it with adoptLayer().
  ir::Node* addLayerNode(ir::OpType op, LayerType type, std::vector<ir::Value*> inputs, int numOutputs = 1) {
    return newNode(op, type, std::move(inputs), numOutputs);
  }
  /// Takes ownership of a layer object (a LayerBase<I> subclass) over a node from addLayerNode(), making it
  /// visible through getLayer() and to shape inference (beforeInfer()). Returns it.
  template <typename L>
  L* adoptLayer(std::unique_ptr<L> layer) {
    return adopt(std::move(layer));
  }
  /// Keeps `object` (e.g. an ILoop or IIfConditional implementation) alive as long as the network; returns it.
  template <typename T>
  T* keepAlive(std::unique_ptr<T> object) {
    T* raw = object.get();
    extras_.push_back(std::shared_ptr<void>(std::move(object)));
    return raw;
  }
  /// The graph itself, without running pending inference (for factories that build subgraphs).
  ir::Graph& mutableGraph() { return *graph_; }
  /// Evaluator of small tensors whose inputs' contents are known (the builder gives the reference kernels'):
  /// shape arithmetic on constants then has known contents, and tensors shaped by it known dimensions, while
  /// the network is defined. Without one, only constants and Shape outputs have known contents.
  void setHostEvaluator(ir::HostEvaluator eval) { hostEval_ = std::move(eval); }
  /// The layer object of node `n`, or nullptr (hidden constants).
  LayerState* layerOf(ir::Node const* n) const {
    auto it = layerOfNode_.find(n);
    return it == layerOfNode_.end() ? nullptr : it->second;
  }

 private:
  template <typename L>
  L* adopt(std::unique_ptr<L> layer) {
    L* raw = layer.get();
    layerOfNode_[raw->node()] = raw;
    layers_.push_back(std::move(layer));
    return raw;
  }
  INormalizationLayer* addNormalizationImpl(ITensor& input, ITensor& scale, ITensor& bias, uint32_t axesMask, bool v2);
  IGatherLayer* addGatherImpl(ITensor& data, ITensor& indices, int32_t axis, GatherMode mode, char const* api);
  ir::Node* newNode(ir::OpType op, LayerType type, std::vector<ir::Value*> inputs, int numOutputs = 1);
  /// "(Unnamed Layer* N) [Type]" for the next layer.
  std::string defaultLayerName(LayerType type) const;
  size_t positionOf(ir::Node const* n) const;
  struct TensorRoles {
    std::unordered_set<ir::Value const*> shape;
    std::unordered_set<ir::Value const*> execution;
    bool ok = false;
  };
  TensorRoles tensorRoles() const;
  void inferNode(ir::Node* n) const;
  void evaluateOnHost(ir::Node const& n, ir::InferContext& ctx) const;
  void logOnce(Status const& s) const;
  TensorImpl* wrap(ir::Value* v);

  IBuilder* builder_;
  NetworkDefinitionCreationFlags flags_;
  Reporter reporter_;
  std::string name_ = "Unnamed Network 0";
  std::unique_ptr<ir::Graph> graph_;
  std::vector<std::unique_ptr<LayerState>> layers_;
  std::vector<std::unique_ptr<TensorImpl>> tensors_;
  std::unordered_map<ir::Value const*, TensorImpl*> tensorOfValue_;
  std::unordered_set<ITensor const*> ownTensors_;
  std::unordered_map<ir::Node const*, LayerState*> layerOfNode_;
  // Evaluation order of every node (hidden constants included): creation order, which is topological
  // unless setInput() made a node read a later node's output (forwardRefs_), in which case inference
  // sorts the graph. dirtyFrom_ is the first position whose inference is out of date.
  std::vector<ir::Node*> order_;
  mutable size_t dirtyFrom_ = 0;
  bool forwardRefs_ = false;
  mutable std::unordered_map<ir::Value const*, HostTensor> contents_;  // known contents (constants, Shape, evaluated)
  ir::HostEvaluator hostEval_;
  mutable std::set<std::string> logged_;
  std::vector<std::shared_ptr<void>> extras_;  // keepAlive() objects (destroyed first)
};

/// Creates an empty network. Reports (to `logger`) and returns nullptr for unknown flag bits.
std::unique_ptr<NetworkImpl> createNetwork(IBuilder* builder, NetworkDefinitionCreationFlags flags, ILogger* logger);

}  // namespace kiln::network
