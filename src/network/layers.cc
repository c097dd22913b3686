// The layer objects: the ILayer methods shared by every layer (LayerState) and each layer type's setters,
// which validate their arguments (reporting errors naming the layer) and write the node's attributes.
#include "network/layers.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "core/dtype.h"

namespace kiln::network {

Dims toDims(std::vector<int64_t> const& v) { return makeDims(v); }

std::vector<int64_t> toInts(Dims const& d) { return dimsToVector(d); }

std::vector<int64_t> maskToAxes(uint32_t mask) {
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < 32; ++i)
    if (mask & (1U << i))
      axes.push_back(i);
  return axes;
}

uint32_t axesToMask(std::vector<int64_t> const& axes, int32_t rank) {
  uint32_t mask = 0;
  for (int64_t a : axes) {
    if (a < 0 && rank >= 0)
      a += rank;
    if (a >= 0 && a < 32)
      mask |= 1U << a;
  }
  return mask;
}

char const* layerTypeName(LayerType t) {
  switch (t) {
    case LayerType::kCONVOLUTION:
      return "Convolution";
    case LayerType::kCAST:
      return "Cast";
    case LayerType::kACTIVATION:
      return "Activation";
    case LayerType::kPOOLING:
      return "Pooling";
    case LayerType::kSCALE:
      return "Scale";
    case LayerType::kSOFTMAX:
      return "Softmax";
    case LayerType::kCONCATENATION:
      return "Concatenation";
    case LayerType::kELEMENTWISE:
      return "ElementWise";
    case LayerType::kUNARY:
      return "Unary";
    case LayerType::kSHUFFLE:
      return "Shuffle";
    case LayerType::kREDUCE:
      return "Reduce";
    case LayerType::kGATHER:
      return "Gather";
    case LayerType::kMATRIX_MULTIPLY:
      return "Matrix Multiply";
    case LayerType::kCONSTANT:
      return "Constant";
    case LayerType::kIDENTITY:
      return "Identity";
    case LayerType::kSLICE:
      return "Slice";
    case LayerType::kSHAPE:
      return "Shape";
    case LayerType::kNORMALIZATION:
      return "Normalization";
    case LayerType::kLRN:
      return "LRN";
    case LayerType::kDECONVOLUTION:
      return "Deconvolution";
    case LayerType::kPADDING:
      return "Padding";
    case LayerType::kTOPK:
      return "TopK";
    case LayerType::kRAGGED_SOFTMAX:
      return "Ragged SoftMax";
    case LayerType::kPARAMETRIC_RELU:
      return "ParametricReLU";
    case LayerType::kRESIZE:
      return "Resize";
    case LayerType::kTRIP_LIMIT:
      return "TripLimit";
    case LayerType::kRECURRENCE:
      return "Recurrence";
    case LayerType::kITERATOR:
      return "Iterator";
    case LayerType::kLOOP_OUTPUT:
      return "LoopOutput";
    case LayerType::kSELECT:
      return "Select";
    case LayerType::kFILL:
      return "Fill";
    case LayerType::kQUANTIZE:
      return "Quantize";
    case LayerType::kDEQUANTIZE:
      return "Dequantize";
    case LayerType::kCONDITION:
      return "Condition";
    case LayerType::kCONDITIONAL_INPUT:
      return "ConditionalInput";
    case LayerType::kCONDITIONAL_OUTPUT:
      return "ConditionalOutput";
    case LayerType::kSCATTER:
      return "Scatter";
    case LayerType::kEINSUM:
      return "Einsum";
    case LayerType::kASSERTION:
      return "Assertion";
    case LayerType::kONE_HOT:
      return "OneHot";
    case LayerType::kNON_ZERO:
      return "NonZero";
    case LayerType::kGRID_SAMPLE:
      return "GridSample";
    case LayerType::kNMS:
      return "NMS";
    case LayerType::kREVERSE_SEQUENCE:
      return "ReverseSequence";
    case LayerType::kSQUEEZE:
      return "Squeeze";
    case LayerType::kUNSQUEEZE:
      return "Unsqueeze";
    case LayerType::kCUMULATIVE:
      return "Cumulative";
    case LayerType::kDYNAMIC_QUANTIZE:
      return "DynamicQuantize";
    case LayerType::kTF_IDF_VECTORIZER:
      return "TfIdfVectorizer";
    case LayerType::kPLUGIN_V2:
      return "PluginV2";
    case LayerType::kPLUGIN_V3:
      return "PluginV3";
    // Layer kinds the network cannot create.
    case LayerType::kPLUGIN:
    case LayerType::kATTENTION_INPUT:
    case LayerType::kATTENTION_OUTPUT:
    case LayerType::kROTARY_EMBEDDING:
    case LayerType::kKVCACHE_UPDATE:
    case LayerType::kMOE:
    case LayerType::kDIST_COLLECTIVE:
      break;
  }
  return "Unknown";
}

Dims convKernelShape(int64_t count, int64_t nbOutputMaps, std::vector<int64_t> const& kernel, Dims const& x,
                     std::string* why) {
  Dims bad{};
  bad.nbDims = -1;
  int64_t kv = 1;
  for (int64_t k : kernel)
    kv *= k;
  int64_t per = nbOutputMaps * kv;
  if (per <= 0 || count % per != 0 || count == 0) {
    *why = strCat("kernel weights have ", count,
                  " values, which is not a multiple of K * kernel volume = ", nbOutputMaps, " * ", kv);
    return bad;
  }
  int64_t cg = count / per;
  int32_t channelAxis = x.nbDims - static_cast<int32_t>(kernel.size()) - 1;
  if (channelAxis >= 0 && x.nbDims <= Dims::MAX_DIMS) {
    int64_t c = x.d[channelAxis];
    if (c >= 0 && c % cg != 0) {
      *why = strCat("kernel weights have ", count, " values = K * ", cg, " * kernel volume, but the input has ", c,
                    " channels, which is not a multiple of ", cg, " (K * C / groups * kernel volume values needed)");
      return bad;
    }
  }
  std::vector<int64_t> shape{nbOutputMaps, cg};
  shape.insert(shape.end(), kernel.begin(), kernel.end());
  return makeDims(shape);
}

int64_t scaleCoefficientCount(ScaleMode mode, int32_t channelAxis, Dims const& x) {
  switch (mode) {
    case ScaleMode::kUNIFORM:
      return 1;
    case ScaleMode::kCHANNEL:
    case ScaleMode::kELEMENTWISE:
      break;
  }
  if (x.nbDims < 0)
    return -1;
  int32_t axis = channelAxis < 0 ? channelAxis + x.nbDims : channelAxis;
  if (axis < 0 || axis >= x.nbDims)
    return -1;
  int32_t last = mode == ScaleMode::kCHANNEL ? axis + 1 : x.nbDims;
  int64_t n = 1;
  for (int32_t i = axis; i < last; ++i) {
    if (x.d[i] < 0)
      return -1;
    n *= x.d[i];
  }
  return n;
}

namespace {
Dims unknownDims() {
  Dims d{};
  d.nbDims = -1;
  return d;
}
}  // namespace

//
// LayerState: the ILayer part.
//

void LayerState::error(std::string const& msg) const {
  net_.reporter().fail(invalidArgument(node_->describe(), ": ", msg));
}

void LayerState::doSetName(char const* name) {
  if (!name)
    return error("setName: name is null");
  std::string old = node_->name;
  node_->name = name;
  for (auto& [index, w] : weightNodes_) {
    if (w->name.compare(0, old.size(), old) == 0)
      w->name = std::string(name) + w->name.substr(old.size());
  }
}

ITensor* LayerState::doGetInput(int32_t index) const {
  if (index < 0 || index >= doGetNbInputs())
    return nullptr;
  return net_.tensorOf(node_->inputs[static_cast<size_t>(index)]);
}

ITensor* LayerState::doGetOutput(int32_t index) const {
  if (index < 0 || index >= doGetNbOutputs())
    return nullptr;
  return net_.tensorOf(node_->outputs[static_cast<size_t>(index)]);
}

void LayerState::doSetInput(int32_t index, ITensor& tensor) {
  TensorImpl* t = net_.own(tensor, strCat(node_->describe(), ": setInput"));
  if (!t)
    return;
  if (!acceptsInput(index))
    return error(strCat("setInput: this layer has no input ", index));
  // Reading one's own output (directly or through other layers) would make a cycle.
  std::vector<ir::Node const*> stack;
  std::unordered_set<ir::Node const*> seen;
  if (t->value()->producer)
    stack.push_back(t->value()->producer);
  while (!stack.empty()) {
    ir::Node const* n = stack.back();
    stack.pop_back();
    if (n == node_)
      return error(strCat("setInput: tensor '", t->value()->name, "' depends on this layer's output"));
    if (!seen.insert(n).second)
      continue;
    for (ir::Value* v : n->inputs)
      if (v && v->producer)
        stack.push_back(v->producer);
  }
  net_.setNodeInput(node_, index, t->value());
  auto it = weightNodes_.find(index);
  if (it != weightNodes_.end()) {
    net_.removeWeightConstant(it->second);
    weightNodes_.erase(it);
  }
  onInputSet(index);
  net_.markChanged(node_);
}

void LayerState::doSetPrecision(DataType type) {
  if (net_.stronglyTyped())
    return error("setPrecision is not allowed in a strongly typed network");
  if (!validEnum(type) || !isSupportedType(type))
    return error(strCat("setPrecision: unsupported data type ", static_cast<int32_t>(type)));
  node_->precision = type;
}

void LayerState::doResetPrecision() { node_->precision.reset(); }

void LayerState::doSetOutputType(int32_t index, DataType type) {
  if (net_.stronglyTyped())
    return error("setOutputType is not allowed in a strongly typed network");
  if (index < 0 || index >= doGetNbOutputs())
    return error(strCat("setOutputType: no output ", index));
  if (!validEnum(type) || !isSupportedType(type))
    return error(strCat("setOutputType: unsupported data type ", static_cast<int32_t>(type)));
  node_->outputs[static_cast<size_t>(index)]->requestedType = type;
  net_.markChanged(node_);
}

DataType LayerState::doGetOutputType(int32_t index) const {
  if (index < 0 || index >= doGetNbOutputs()) {
    error(strCat("getOutputType: no output ", index));
    return DataType::kFLOAT;
  }
  ir::Value const* v = node_->outputs[static_cast<size_t>(index)];
  if (v->requestedType)
    return *v->requestedType;
  net_.ensureInferred();
  return v->dtype;
}

bool LayerState::doOutputTypeIsSet(int32_t index) const {
  if (index < 0 || index >= doGetNbOutputs())
    return false;
  return node_->outputs[static_cast<size_t>(index)]->requestedType.has_value();
}

void LayerState::doResetOutputType(int32_t index) {
  if (index < 0 || index >= doGetNbOutputs())
    return error(strCat("resetOutputType: no output ", index));
  node_->outputs[static_cast<size_t>(index)]->requestedType.reset();
  net_.markChanged(node_);
}

void LayerState::doSetMetadata(char const* doc) { metadata_ = doc ? doc : ""; }

void LayerState::setWeightInput(int32_t index, Weights const& w, Dims const& shape, char const* suffix) {
  ir::Node* old = nullptr;
  auto it = weightNodes_.find(index);
  if (it != weightNodes_.end())
    old = it->second;
  if (w.count == 0) {
    net_.setNodeInput(node_, index, nullptr);
    weightNodes_.erase(index);
  } else {
    ir::Node* c = net_.addWeightConstant(strCat(node_->name, "_", suffix), w, shape, node_);
    net_.setNodeInput(node_, index, c->outputs[0]);
    weightNodes_[index] = c;
  }
  if (old)
    net_.removeWeightConstant(old);
  net_.markChanged(node_);
}

void LayerState::setInt(char const* name, int64_t v) {
  node_->attrs.setInt(name, v);
  net_.markChanged(node_);
}

void LayerState::setFloat(char const* name, double v) {
  node_->attrs.setFloat(name, v);
  net_.markChanged(node_);
}

void LayerState::setInts(char const* name, std::vector<int64_t> v) {
  node_->attrs.setInts(name, std::move(v));
  net_.markChanged(node_);
}

void LayerState::eraseAttr(char const* name) {
  node_->attrs.erase(name);
  net_.markChanged(node_);
}

Dims LayerState::inputDims(int32_t index) const {
  net_.ensureInferredBefore(node_);
  ir::Value const* v = node_->input(static_cast<size_t>(index));
  return v ? v->shape : unknownDims();
}

//
// Convolution
//

bool ConvolutionLayer::setSpatial(char const* attr, Dims const& d, int64_t minValue, char const* what) {
  if (d.nbDims != nbSpatial()) {
    error(strCat(what, " needs ", nbSpatial(), " values (one per spatial dimension), got ", dimsToString(d)));
    return false;
  }
  for (int32_t i = 0; i < d.nbDims; ++i) {
    if (d.d[i] < minValue) {
      error(strCat(what, " ", dimsToString(d), " has a value below ", minValue));
      return false;
    }
  }
  setInts(attr, toInts(d));
  return true;
}

bool ConvolutionLayer::reshapeKernel(int64_t nbOutputMaps, std::vector<int64_t> const& kernel) {
  auto it = weightNodes_.find(1);
  if (it == weightNodes_.end())
    return true;
  std::string why;
  Dims shape = convKernelShape(kernel_.count, nbOutputMaps, kernel, inputDims(0), &why);
  if (shape.nbDims < 0) {
    error(strCat(why, " (set matching kernel weights)"));
    return false;
  }
  ir::Node* c = it->second;
  c->constant = HostTensor::borrow(kernel_.type, shape, kernel_.values);
  net_.markChanged(c);
  return true;
}

void ConvolutionLayer::setNbOutputMaps(int64_t nbOutputMaps) noexcept {
  if (nbOutputMaps < 1)
    return error(strCat("setNbOutputMaps: ", nbOutputMaps, " must be >= 1"));
  // The kernel constant follows when its values fit the new count; otherwise new weights must follow.
  reshapeKernel(nbOutputMaps, node_->attrs.getInts("kernel_shape"));
  setInt("num_output_maps", nbOutputMaps);
}

void ConvolutionLayer::setNbGroups(int64_t nbGroups) noexcept {
  if (nbGroups < 1)
    return error(strCat("setNbGroups: ", nbGroups, " must be >= 1"));
  setInt("groups", nbGroups);
}

void ConvolutionLayer::setKernelWeights(Weights weights) noexcept {
  if (!net_.checkWeights(weights, node_->name, "kernel weights", -1))
    return;
  Dims shape{};
  if (weights.count > 0) {
    std::string why;
    shape = convKernelShape(weights.count, getNbOutputMaps(), node_->attrs.getInts("kernel_shape"), inputDims(0), &why);
    if (shape.nbDims < 0)
      return error(strCat("setKernelWeights: ", why));
  }
  kernel_ = weights;
  setWeightInput(1, weights, shape, "kernel");
}

void ConvolutionLayer::setBiasWeights(Weights weights) noexcept {
  if (!net_.checkWeights(weights, node_->name, "bias weights", weights.count == 0 ? 0 : getNbOutputMaps()))
    return;
  bias_ = weights;
  setWeightInput(2, weights, makeDims({weights.count}), "bias");
}

void ConvolutionLayer::setPrePadding(Dims const& padding) noexcept {
  setSpatial("pads_begin", padding, 0, "pre-padding");
}

void ConvolutionLayer::setPostPadding(Dims const& padding) noexcept {
  setSpatial("pads_end", padding, 0, "post-padding");
}

void ConvolutionLayer::setPaddingNd(Dims const& padding) noexcept {
  if (setSpatial("pads_begin", padding, 0, "padding"))
    setInts("pads_end", toInts(padding));
}

void ConvolutionLayer::setPaddingMode(PaddingMode paddingMode) noexcept {
  if (!validEnum(paddingMode))
    return error(strCat("setPaddingMode: unknown mode ", static_cast<int32_t>(paddingMode)));
  setInt("padding_mode", static_cast<int64_t>(paddingMode));
}

PaddingMode ConvolutionLayer::getPaddingMode() const noexcept {
  return static_cast<PaddingMode>(node_->attrs.getInt("padding_mode"));
}

void ConvolutionLayer::setKernelSizeNd(Dims const& kernelSize) noexcept {
  if (kernelSize.nbDims != 2 && kernelSize.nbDims != 3)
    return error(strCat("setKernelSizeNd: the kernel must have 2 or 3 dimensions, got ", dimsToString(kernelSize)));
  for (int32_t i = 0; i < kernelSize.nbDims; ++i)
    if (kernelSize.d[i] < 1)
      return error(strCat("setKernelSizeNd: ", dimsToString(kernelSize), " has a dim below 1"));
  if (kernelSize.nbDims != nbSpatial()) {
    // A new spatial rank: the other per-dimension settings go back to their defaults for that rank.
    size_t n = static_cast<size_t>(kernelSize.nbDims);
    node_->attrs.setInts("strides", std::vector<int64_t>(n, 1));
    node_->attrs.setInts("dilations", std::vector<int64_t>(n, 1));
    node_->attrs.setInts("pads_begin", std::vector<int64_t>(n, 0));
    node_->attrs.setInts("pads_end", std::vector<int64_t>(n, 0));
  }
  reshapeKernel(getNbOutputMaps(), toInts(kernelSize));
  setInts("kernel_shape", toInts(kernelSize));
}

void ConvolutionLayer::setStrideNd(Dims const& stride) noexcept { setSpatial("strides", stride, 1, "stride"); }

void ConvolutionLayer::setDilationNd(Dims const& dilation) noexcept {
  setSpatial("dilations", dilation, 1, "dilation");
}

void ConvolutionLayer::onInputSet(int32_t index) {
  if (index == 1)
    kernel_ = emptyWeights(kernel_.type);
  if (index == 2)
    bias_ = emptyWeights(bias_.type);
}

//
// Activation
//

void ActivationLayer::setActivationType(ActivationType type) noexcept {
  if (!validEnum(type))
    return error(strCat("setActivationType: unknown type ", static_cast<int32_t>(type)));
  setInt("type", static_cast<int64_t>(type));
}

ActivationType ActivationLayer::getActivationType() const noexcept {
  return static_cast<ActivationType>(node_->attrs.getInt("type"));
}

//
// Pooling
//

bool PoolingLayer::setSpatial(char const* attr, Dims const& d, int64_t minValue, char const* what) {
  int32_t n = static_cast<int32_t>(node_->attrs.getInts("window").size());
  if (d.nbDims != n) {
    error(strCat(what, " needs ", n, " values (one per spatial dimension), got ", dimsToString(d)));
    return false;
  }
  for (int32_t i = 0; i < d.nbDims; ++i) {
    if (d.d[i] < minValue) {
      error(strCat(what, " ", dimsToString(d), " has a value below ", minValue));
      return false;
    }
  }
  setInts(attr, toInts(d));
  return true;
}

void PoolingLayer::setPoolingType(PoolingType type) noexcept {
  if (!validEnum(type))
    return error(strCat("setPoolingType: unknown type ", static_cast<int32_t>(type)));
  setInt("type", static_cast<int64_t>(type));
}

PoolingType PoolingLayer::getPoolingType() const noexcept {
  return static_cast<PoolingType>(node_->attrs.getInt("type"));
}

void PoolingLayer::setBlendFactor(float blendFactor) noexcept {
  if (!(blendFactor >= 0.0F && blendFactor <= 1.0F))
    return error(strCat("setBlendFactor: ", blendFactor, " is not in [0, 1]"));
  setFloat("blend_factor", blendFactor);
}

float PoolingLayer::getBlendFactor() const noexcept {
  return static_cast<float>(node_->attrs.getFloat("blend_factor", 0.0));
}

bool PoolingLayer::getAverageCountExcludesPadding() const noexcept {
  return node_->attrs.getInt("exclude_padding", 1) != 0;
}

void PoolingLayer::setPrePadding(Dims const& padding) noexcept { setSpatial("pads_begin", padding, 0, "pre-padding"); }

void PoolingLayer::setPostPadding(Dims const& padding) noexcept { setSpatial("pads_end", padding, 0, "post-padding"); }

void PoolingLayer::setPaddingNd(Dims const& padding) noexcept {
  if (setSpatial("pads_begin", padding, 0, "padding"))
    setInts("pads_end", toInts(padding));
}

void PoolingLayer::setPaddingMode(PaddingMode paddingMode) noexcept {
  if (!validEnum(paddingMode))
    return error(strCat("setPaddingMode: unknown mode ", static_cast<int32_t>(paddingMode)));
  setInt("padding_mode", static_cast<int64_t>(paddingMode));
}

PaddingMode PoolingLayer::getPaddingMode() const noexcept {
  return static_cast<PaddingMode>(node_->attrs.getInt("padding_mode"));
}

void PoolingLayer::setWindowSizeNd(Dims const& windowSize) noexcept {
  if (windowSize.nbDims != 2 && windowSize.nbDims != 3)
    return error(strCat("setWindowSizeNd: the window must have 2 or 3 dimensions, got ", dimsToString(windowSize)));
  for (int32_t i = 0; i < windowSize.nbDims; ++i)
    if (windowSize.d[i] < 1)
      return error(strCat("setWindowSizeNd: ", dimsToString(windowSize), " has a dim below 1"));
  if (static_cast<size_t>(windowSize.nbDims) != node_->attrs.getInts("window").size()) {
    size_t n = static_cast<size_t>(windowSize.nbDims);
    node_->attrs.setInts("strides", std::vector<int64_t>(n, 1));
    node_->attrs.setInts("pads_begin", std::vector<int64_t>(n, 0));
    node_->attrs.setInts("pads_end", std::vector<int64_t>(n, 0));
  }
  setInts("window", toInts(windowSize));
}

void PoolingLayer::setStrideNd(Dims const& stride) noexcept { setSpatial("strides", stride, 1, "stride"); }

//
// ElementWise, Unary, MatrixMultiply
//

void ElementWiseLayer::setOperation(ElementWiseOperation op) noexcept {
  if (!validEnum(op))
    return error(strCat("setOperation: unknown operation ", static_cast<int32_t>(op)));
  setInt("op", static_cast<int64_t>(op));
}

ElementWiseOperation ElementWiseLayer::getOperation() const noexcept {
  return static_cast<ElementWiseOperation>(node_->attrs.getInt("op"));
}

void UnaryLayer::setOperation(UnaryOperation op) noexcept {
  if (!validEnum(op))
    return error(strCat("setOperation: unknown operation ", static_cast<int32_t>(op)));
  setInt("op", static_cast<int64_t>(op));
}

UnaryOperation UnaryLayer::getOperation() const noexcept {
  return static_cast<UnaryOperation>(node_->attrs.getInt("op"));
}

void MatrixMultiplyLayer::setOperation(int32_t index, MatrixOperation op) noexcept {
  if (index != 0 && index != 1)
    return error(strCat("setOperation: input index ", index, " is not 0 or 1"));
  if (!validEnum(op))
    return error(strCat("setOperation: unknown operation ", static_cast<int32_t>(op)));
  setInt(index == 0 ? "op_a" : "op_b", static_cast<int64_t>(op));
}

MatrixOperation MatrixMultiplyLayer::getOperation(int32_t index) const noexcept {
  if (index != 0 && index != 1) {
    error(strCat("getOperation: input index ", index, " is not 0 or 1"));
    return MatrixOperation::kNONE;
  }
  return static_cast<MatrixOperation>(node_->attrs.getInt(index == 0 ? "op_a" : "op_b"));
}

//
// Shuffle
//

namespace {
Permutation identityPermutation() {
  Permutation p{};
  for (int32_t i = 0; i < Dims::MAX_DIMS; ++i)
    p.order[i] = i;
  return p;
}

bool validPermutationEntries(Permutation const& p) {
  for (int32_t i = 0; i < Dims::MAX_DIMS; ++i)
    if (p.order[i] < 0 || p.order[i] >= Dims::MAX_DIMS)
      return false;
  return true;
}

// Writes the first `rank` entries of `p` as attribute `name`, or removes it for the identity (no transpose).
void writePermutation(ir::Node* node, char const* name, Permutation const& p, int32_t rank) {
  if (rank < 0)
    return;  // rank unknown: keep what is there until inference knows it
  std::vector<int64_t> v(p.order, p.order + rank);
  bool identity = true;
  for (int32_t i = 0; i < rank; ++i)
    identity = identity && v[static_cast<size_t>(i)] == i;
  if (identity)
    node->attrs.erase(name);
  else
    node->attrs.setInts(name, std::move(v));
}
}  // namespace

ShuffleLayer::ShuffleLayer(NetworkImpl& net, ir::Node* node)
    : LayerBase(net, LayerType::kSHUFFLE, node), first_(identityPermutation()), second_(identityPermutation()) {}

void ShuffleLayer::beforeInfer() {
  ir::Value const* in = node_->input(0);
  int32_t rank = in ? in->shape.nbDims : -1;
  writePermutation(node_, "first_perm", first_, rank);
  int32_t outRank = rank;
  if (ir::Value const* shape = node_->input(1)) {
    outRank = shape->shape.nbDims == 1 && shape->shape.d[0] >= 0 ? static_cast<int32_t>(shape->shape.d[0]) : -1;
  } else if (node_->attrs.has("reshape")) {
    outRank = static_cast<int32_t>(node_->attrs.getInts("reshape").size());
  }
  writePermutation(node_, "second_perm", second_, std::min(outRank, Dims::MAX_DIMS));
}

void ShuffleLayer::setFirstTranspose(Permutation permutation) noexcept {
  if (!validPermutationEntries(permutation))
    return error("setFirstTranspose: entries must be in [0, 8)");
  first_ = permutation;
  net_.ensureInferredBefore(node_);
  beforeInfer();
  net_.markChanged(node_);
}

void ShuffleLayer::setSecondTranspose(Permutation permutation) noexcept {
  if (!validPermutationEntries(permutation))
    return error("setSecondTranspose: entries must be in [0, 8)");
  second_ = permutation;
  net_.ensureInferredBefore(node_);
  beforeInfer();
  net_.markChanged(node_);
}

void ShuffleLayer::setReshapeDimensions(Dims const& dimensions) noexcept {
  if (dimensions.nbDims < 0 || dimensions.nbDims > Dims::MAX_DIMS)
    return error(strCat("setReshapeDimensions: rank ", dimensions.nbDims, " is not in [0, 8]"));
  int32_t minusOnes = 0;
  for (int32_t i = 0; i < dimensions.nbDims; ++i) {
    if (dimensions.d[i] < -1)
      return error(strCat("setReshapeDimensions: ", dimsToString(dimensions), " has a dim below -1"));
    if (dimensions.d[i] == -1)
      ++minusOnes;
  }
  if (minusOnes > 1)
    return error(strCat("setReshapeDimensions: ", dimsToString(dimensions), " has more than one -1"));
  // As in TensorRT, static reshape dimensions replace a reshape tensor given on input 1.
  if (node_->input(1))
    net_.setNodeInput(node_, 1, nullptr);
  setInts("reshape", toInts(dimensions));
  net_.ensureInferredBefore(node_);
  beforeInfer();
  net_.markChanged(node_);
}

Dims ShuffleLayer::getReshapeDimensions() const noexcept {
  if (node_->input(1) || !node_->attrs.has("reshape"))
    return unknownDims();
  return toDims(node_->attrs.getInts("reshape"));
}

void ShuffleLayer::onInputSet(int32_t index) {
  if (index == 1)
    node_->attrs.erase("reshape");
  net_.ensureInferredBefore(node_);
  beforeInfer();
}

//
// Concatenation
//

void ConcatenationLayer::setAxis(int32_t axis) noexcept {
  int32_t rank = inputDims(0).nbDims;
  if (rank >= 0 && (axis < -rank || axis >= rank))
    return error(strCat("setAxis: axis ", axis, " is out of range for inputs of rank ", rank));
  setInt("axis", axis);
}

//
// Slice
//

void SliceLayer::setParam(int32_t input, char const* attr, Dims const& d) {
  if (d.nbDims < 0 || d.nbDims > Dims::MAX_DIMS)
    return error(strCat("set ", attr, ": rank ", d.nbDims, " is not in [0, 8]"));
  if (input == 2) {
    for (int32_t i = 0; i < d.nbDims; ++i)
      if (d.d[i] < 0)
        return error(strCat("setSize: ", dimsToString(d), " has a negative size"));
  }
  // As in TensorRT, static values replace the tensor given on the matching input.
  if (node_->input(static_cast<size_t>(input)))
    net_.setNodeInput(node_, input, nullptr);
  setInts(attr, toInts(d));
}

Dims SliceLayer::getParam(int32_t input, char const* attr) const {
  if (node_->input(static_cast<size_t>(input)) || !node_->attrs.has(attr))
    return unknownDims();
  return toDims(node_->attrs.getInts(attr));
}

void SliceLayer::setMode(SampleMode mode) noexcept {
  if (!validEnum(mode))
    return error(strCat("setMode: unknown mode ", static_cast<int32_t>(mode)));
  setInt("mode", static_cast<int64_t>(mode));
}

SampleMode SliceLayer::getMode() const noexcept { return static_cast<SampleMode>(node_->attrs.getInt("mode")); }

void SliceLayer::onInputSet(int32_t index) {
  static char const* const kAttrs[] = {nullptr, "start", "size", "stride", nullptr, "axes"};
  if (index >= 0 && index <= 5 && kAttrs[index])
    node_->attrs.erase(kAttrs[index]);
}

//
// Reduce
//

void ReduceLayer::setOperation(ReduceOperation op) noexcept {
  if (!validEnum(op))
    return error(strCat("setOperation: unknown operation ", static_cast<int32_t>(op)));
  setInt("op", static_cast<int64_t>(op));
}

ReduceOperation ReduceLayer::getOperation() const noexcept {
  return static_cast<ReduceOperation>(node_->attrs.getInt("op"));
}

void ReduceLayer::setReduceAxes(uint32_t reduceAxes) noexcept {
  int32_t rank = inputDims(0).nbDims;
  if (rank >= 0 && rank < 32 && (reduceAxes >> rank) != 0)
    return error(strCat("setReduceAxes: mask ", reduceAxes, " names an axis beyond rank ", rank));
  setInts("axes", maskToAxes(reduceAxes));
}

uint32_t ReduceLayer::getReduceAxes() const noexcept {
  std::vector<int64_t> axes = node_->attrs.getInts("axes");
  bool negative = false;
  for (int64_t a : axes)
    negative = negative || a < 0;
  return axesToMask(axes, negative ? inputDims(0).nbDims : -1);
}

//
// SoftMax
//

void SoftMaxLayer::setAxes(uint32_t axes) noexcept {
  if (axes == 0 || (axes & (axes - 1)) != 0)
    return error(strCat("setAxes: mask ", axes, " must have exactly one bit set"));
  int32_t axis = 0;
  while (!(axes & (1U << axis)))
    ++axis;
  int32_t rank = inputDims(0).nbDims;
  if (rank >= 0 && axis >= rank)
    return error(strCat("setAxes: axis ", axis, " is out of range for rank ", rank));
  setInt("axis", axis);
}

uint32_t SoftMaxLayer::getAxes() const noexcept {
  int64_t axis = node_->attrs.getInt("axis");
  if (axis < 0)
    axis += inputDims(0).nbDims;
  return axis >= 0 && axis < 32 ? 1U << axis : 0U;
}

//
// Scale
//

void ScaleLayer::setMode(ScaleMode mode) noexcept {
  if (!validEnum(mode))
    return error(strCat("setMode: unknown mode ", static_cast<int32_t>(mode)));
  setInt("mode", static_cast<int64_t>(mode));
}

ScaleMode ScaleLayer::getMode() const noexcept { return static_cast<ScaleMode>(node_->attrs.getInt("mode")); }

void ScaleLayer::setChannelAxis(int32_t channelAxis) noexcept {
  int32_t rank = inputDims(0).nbDims;
  if (rank >= 0 && (channelAxis < -rank || channelAxis >= rank))
    return error(strCat("setChannelAxis: axis ", channelAxis, " is out of range for rank ", rank));
  setInt("channel_axis", channelAxis);
}

void ScaleLayer::setCoefficients(int32_t which, Weights const& w) {
  static char const* const kNames[] = {"shift", "scale", "power"};
  int64_t expected = w.count == 0 ? 0 : scaleCoefficientCount(getMode(), getChannelAxis(), inputDims(0));
  if (!net_.checkWeights(w, node_->name, kNames[which], expected))
    return;
  w_[which] = w;
  setWeightInput(which + 1, w, makeDims({w.count}), kNames[which]);
}

//
// Normalization
//

void NormalizationLayer::setEpsilon(float eps) noexcept {
  if (!(eps >= 0.0F))
    return error(strCat("setEpsilon: ", eps, " must be >= 0"));
  setFloat("epsilon", eps);
}

void NormalizationLayer::setAxes(uint32_t axesMask) noexcept {
  if (axesMask == 0)
    return error("setAxes: the mask names no axis");
  int32_t rank = inputDims(0).nbDims;
  if (rank >= 0 && rank < 32 && (axesMask >> rank) != 0)
    return error(strCat("setAxes: mask ", axesMask, " names an axis beyond rank ", rank));
  setInts("axes", maskToAxes(axesMask));
}

uint32_t NormalizationLayer::getAxes() const noexcept {
  return axesToMask(node_->attrs.getInts("axes"), inputDims(0).nbDims);
}

void NormalizationLayer::setNbGroups(int64_t nbGroups) noexcept {
  if (nbGroups < 1)
    return error(strCat("setNbGroups: ", nbGroups, " must be >= 1"));
  setInt("num_groups", nbGroups);
}

void NormalizationLayer::setComputePrecision(DataType type) noexcept {
  if (!validEnum(type) || !isFloatType(type))
    return error(strCat("setComputePrecision: ", static_cast<int32_t>(type), " is not a floating-point type"));
  computePrecision_ = type;
}

//
// Constant
//

void ConstantLayer::setWeights(Weights weights) noexcept {
  int64_t n = volume(getDimensions());
  if (!net_.checkWeights(weights, node_->name, "weights", n))
    return;
  w_ = weights;
  node_->constant = HostTensor::borrow(weights.type, getDimensions(), weights.values);
  net_.markChanged(node_);
}

void ConstantLayer::setDimensions(Dims const& dimensions) noexcept {
  if (!dimsKnown(dimensions))
    return error(strCat("setDimensions: ", dimsToString(dimensions), " is not a valid constant shape"));
  if (volume(dimensions) != w_.count)
    return error(strCat("setDimensions: ", dimsToString(dimensions), " has volume ", volume(dimensions),
                        " but the weights have ", w_.count, " values"));
  node_->constant = HostTensor::borrow(w_.type, dimensions, w_.values);
  net_.markChanged(node_);
}

//
// Cast, Gather
//

void CastLayer::setToType(DataType toType) noexcept {
  if (!validEnum(toType) || !isSupportedType(toType))
    return error(strCat("setToType: unsupported data type ", static_cast<int32_t>(toType)));
  setInt("to", static_cast<int64_t>(toType));
}

void GatherLayer::setGatherAxis(int32_t axis) noexcept {
  int32_t rank = inputDims(0).nbDims;
  if (rank >= 0 && (axis < -rank || axis >= rank))
    return error(strCat("setGatherAxis: axis ", axis, " is out of range for data of rank ", rank));
  setInt("axis", axis);
}

void GatherLayer::setNbElementWiseDims(int32_t k) noexcept {
  if (k < 0)
    return error(strCat("setNbElementWiseDims: ", k, " must be >= 0"));
  setInt("num_elementwise_dims", k);
}

int32_t GatherLayer::getNbElementWiseDims() const noexcept {
  return static_cast<int32_t>(node_->attrs.getInt("num_elementwise_dims"));
}

void GatherLayer::setMode(GatherMode mode) noexcept {
  if (!validEnum(mode))
    return error(strCat("setMode: unknown mode ", static_cast<int32_t>(mode)));
  setInt("mode", static_cast<int64_t>(mode));
}

GatherMode GatherLayer::getMode() const noexcept { return static_cast<GatherMode>(node_->attrs.getInt("mode")); }

}  // namespace kiln::network
