// NetworkImpl: the add* methods (validating arguments and building IR nodes), network inputs and outputs,
// tensors, and lazy incremental shape inference (no host evaluator: the network layer does not depend on
// backends, so dims that depend on shape-tensor contents stay -1).
#include "network/network.h"

#include <algorithm>
#include <cstring>

#include "core/dtype.h"
#include "ir/shape_inference.h"
#include "network/layer_factories.h"
#include "network/layers.h"

namespace kiln::network {

namespace {

constexpr size_t kMaxNameLength = 4095;

Dims unknownRank() {
  Dims d{};
  d.nbDims = -1;
  for (int64_t& x : d.d)
    x = -1;
  return d;
}

bool isIntType(DataType t) { return t == DataType::kINT32 || t == DataType::kINT64; }

// Inputs whose contents give an op's output shape (shape tensors by position).
bool isShapeSlot(ir::Node const& n, size_t i) {
  if (n.op == ir::OpType::kShuffle)
    return i == 1;
  if (n.op == ir::OpType::kSlice)
    return i == 1 || i == 2 || i == 3 || i == 5;
  if (n.op == ir::OpType::kTopK || n.op == ir::OpType::kSqueeze || n.op == ir::OpType::kUnsqueeze ||
      n.op == ir::OpType::kCumulative || n.op == ir::OpType::kReduce)
    return i == 1;
  if (n.op == ir::OpType::kResize)  // sizes (int) are a shape tensor; float scales are not
    return i == 1 && n.input(1) && isIntType(n.input(1)->dtype);
  if (n.op == ir::OpType::kFill)
    return i == 0;
  if (n.op == ir::OpType::kOneHot || n.op == ir::OpType::kNMS)
    return i == 2;
  return false;
}

// Ops through which shape-tensor arithmetic flows (their int inputs are shape tensors when the output is).
bool propagatesShape(ir::OpType op) {
  using ir::OpType;
  return op == OpType::kElementWise || op == OpType::kUnary || op == OpType::kGather || op == OpType::kConcatenation ||
         op == OpType::kSlice || op == OpType::kReduce || op == OpType::kCast || op == OpType::kIdentity ||
         op == OpType::kShuffle || op == OpType::kSelect || op == OpType::kSqueeze || op == OpType::kUnsqueeze;
}

// Checks a name given through the API.
Status checkName(char const* name, char const* what) {
  if (!name || !*name)
    return invalidArgument(what, ": the name is empty");
  if (std::strlen(name) > kMaxNameLength)
    return invalidArgument(what, ": the name is longer than ", kMaxNameLength, " bytes");
  return Status::ok();
}

// Checks the declared shape of a network input.
Status checkInputDims(Dims const& d, std::string const& name) {
  if (d.nbDims < 0 || d.nbDims > Dims::MAX_DIMS)
    return invalidArgument("network input '", name, "': rank ", d.nbDims, " is not in [0, ", Dims::MAX_DIMS, "]");
  for (int32_t i = 0; i < d.nbDims; ++i)
    if (d.d[i] < -1)
      return invalidArgument("network input '", name, "': dimension ", i, " of ", dimsToString(d),
                             " is negative (only -1, a runtime dimension, is allowed)");
  return Status::ok();
}

Status checkTensorType(DataType t, std::string const& what) {
  if (!validEnum(t))
    return invalidArgument(what, ": unknown data type ", static_cast<int32_t>(t));
  if (!isSupportedType(t))
    return unsupported(what, ": data type ", dataTypeName(t), " is not supported");
  return Status::ok();
}

}  // namespace

//
// TensorImpl
//

void TensorImpl::setName(char const* name) noexcept {
  Status s = checkName(name, strCat("tensor '", value_->name, "' setName").c_str());
  if (!s) {
    net_.reporter().fail(s);
    return;
  }
  net_.renameTensor(value_, name);
}

void TensorImpl::setDimensions(Dims const& dimensions) noexcept {
  if (!value_->isInput) {
    net_.reporter().fail(invalidArgument(
        "tensor '", value_->name, "': setDimensions is only allowed on network inputs (other shapes are inferred)"));
    return;
  }
  Status s = checkInputDims(dimensions, value_->name);
  if (!s) {
    net_.reporter().fail(s);
    return;
  }
  value_->shape = dimensions;
  net_.markAllChanged();
}

Dims TensorImpl::getDimensions() const noexcept {
  net_.ensureInferred();
  return value_->shape;
}

void TensorImpl::setType(DataType type) noexcept {
  Status s = checkTensorType(type, strCat("tensor '", value_->name, "' setType"));
  if (!s) {
    net_.reporter().fail(s);
    return;
  }
  if (value_->isInput) {
    value_->dtype = type;
    net_.markAllChanged();
  } else if (value_->isOutput) {
    if (net_.stronglyTyped()) {
      net_.reporter().fail(invalidArgument("tensor '", value_->name,
                                           "': setType on an output is not allowed in a strongly typed network"));
      return;
    }
    value_->requestedType = type;
    if (value_->producer)
      net_.markChanged(value_->producer);
  } else {
    net_.reporter().warning(strCat("tensor '", value_->name,
                                   "': setType has no effect on a tensor that is neither a network input nor output"));
  }
}

DataType TensorImpl::getType() const noexcept {
  net_.ensureInferred();
  if (!value_->isInput && value_->requestedType)
    return *value_->requestedType;
  return value_->dtype;
}

void TensorImpl::setAllowedFormats(TensorFormats formats) noexcept {
  if (formats >> EnumMax<TensorFormat>()) {
    net_.reporter().fail(
        invalidArgument("tensor '", value_->name, "': setAllowedFormats: unknown format bits in ", formats));
    return;
  }
  formats_ = formats;
}

bool TensorImpl::isShapeTensor() const noexcept { return net_.isShapeTensor(value_); }

bool TensorImpl::isExecutionTensor() const noexcept { return net_.isExecutionTensor(value_); }

void TensorImpl::setDimensionName(int32_t index, char const* name) noexcept {
  if (!value_->isInput) {
    net_.reporter().fail(
        invalidArgument("tensor '", value_->name, "': setDimensionName is only allowed on network inputs"));
    return;
  }
  if (index < 0 || index >= value_->shape.nbDims) {
    net_.reporter().fail(invalidArgument("tensor '", value_->name, "': setDimensionName: no dimension ", index));
    return;
  }
  if (name)
    dimNames_[index] = name;
  else
    dimNames_.erase(index);
}

char const* TensorImpl::getDimensionName(int32_t index) const noexcept {
  auto it = dimNames_.find(index);
  return it == dimNames_.end() ? nullptr : it->second.c_str();
}

//
// NetworkImpl: bookkeeping
//

NetworkImpl::NetworkImpl(IBuilder* builder, NetworkDefinitionCreationFlags flags, ILogger* logger)
    : builder_(builder), flags_(flags), reporter_(logger), graph_(std::make_unique<ir::Graph>()) {}

NetworkImpl::~NetworkImpl() noexcept { reporter_.setRecorder(nullptr); }

std::unique_ptr<NetworkImpl> createNetwork(IBuilder* builder, NetworkDefinitionCreationFlags flags, ILogger* logger) {
  if (flags >> EnumMax<NetworkDefinitionCreationFlag>()) {
    Reporter(logger).fail(invalidArgument("createNetworkV2: unknown NetworkDefinitionCreationFlag bits in ", flags));
    return nullptr;
  }
  return std::make_unique<NetworkImpl>(builder, flags, logger);
}

TensorImpl* NetworkImpl::wrap(ir::Value* v) {
  auto t = std::make_unique<TensorImpl>(*this, v);
  TensorImpl* raw = t.get();
  tensors_.push_back(std::move(t));
  tensorOfValue_[v] = raw;
  ownTensors_.insert(raw);
  return raw;
}

TensorImpl* NetworkImpl::tensorOf(ir::Value const* v) const {
  if (!v)
    return nullptr;
  auto it = tensorOfValue_.find(v);
  return it == tensorOfValue_.end() ? nullptr : it->second;
}

TensorImpl* NetworkImpl::own(ITensor const& t, std::string const& what) const {
  if (!ownTensors_.count(&t)) {
    reporter_.fail(invalidArgument(what, ": the tensor does not belong to this network (or was removed)"));
    return nullptr;
  }
  return static_cast<TensorImpl*>(const_cast<ITensor*>(&t));
}

std::string NetworkImpl::defaultLayerName(LayerType type) const {
  return strCat("(Unnamed Layer* ", layers_.size(), ") [", layerTypeName(type), "]");
}

size_t NetworkImpl::positionOf(ir::Node const* n) const {
  for (size_t i = order_.size(); i-- > 0;)
    if (order_[i] == n)
      return i;
  return order_.size();
}

void NetworkImpl::markChanged(ir::Node const* n) { dirtyFrom_ = std::min(dirtyFrom_, positionOf(n)); }

ir::Node* NetworkImpl::newNode(ir::OpType op, LayerType type, std::vector<ir::Value*> inputs, int numOutputs) {
  while (!inputs.empty() && !inputs.back())
    inputs.pop_back();
  ir::Node* n = graph_->addNode(op, defaultLayerName(type), inputs, numOutputs);
  for (ir::Value* v : n->outputs) {
    v->shape = unknownRank();
    wrap(v);
  }
  order_.push_back(n);
  dirtyFrom_ = std::min(dirtyFrom_, order_.size() - 1);
  return n;
}

void NetworkImpl::setNodeInput(ir::Node* n, int32_t index, ir::Value* v) {
  size_t i = static_cast<size_t>(index);
  if (i >= n->inputs.size())
    n->inputs.resize(i + 1, nullptr);
  n->inputs[i] = v;
  while (!n->inputs.empty() && !n->inputs.back())
    n->inputs.pop_back();
  if (v && v->producer && positionOf(v->producer) > positionOf(n))
    forwardRefs_ = true;
  markChanged(n);
}

ir::Node* NetworkImpl::addWeightConstant(std::string const& name, Weights const& w, Dims const& shape,
                                         ir::Node const* user) {
  ir::Node* c = graph_->addConstant(name, HostTensor::borrow(w.type, shape, w.values));
  size_t pos = user ? positionOf(user) : order_.size();
  order_.insert(order_.begin() + static_cast<std::ptrdiff_t>(pos), c);
  dirtyFrom_ = std::min(dirtyFrom_, pos);
  return c;
}

void NetworkImpl::removeWeightConstant(ir::Node* n) {
  size_t pos = positionOf(n);
  if (pos < order_.size())
    order_.erase(order_.begin() + static_cast<std::ptrdiff_t>(pos));
  dirtyFrom_ = std::min(dirtyFrom_, pos);
  for (ir::Value* v : n->outputs)
    contents_.erase(v);
  graph_->removeNode(n);
  graph_->removeUnusedValues();
}

bool NetworkImpl::renameTensor(ir::Value* v, std::string const& name) {
  Status s = graph_->renameValue(v, name);
  if (!s)
    return reporter_.fail(s.withContext(strCat("tensor '", v->name, "' setName")));
  return true;
}

bool NetworkImpl::checkWeights(Weights const& w, std::string const& layer, char const* what, int64_t expected) const {
  std::string where = strCat("layer '", layer, "': ", what);
  if (w.count < 0)
    return reporter_.fail(invalidArgument(where, " have a negative count ", w.count));
  if (w.count > 0 && !w.values)
    return reporter_.fail(invalidArgument(where, " have ", w.count, " values but no data"));
  if (w.count > 0) {
    Status s = checkTensorType(w.type, where);
    if (!s)
      return reporter_.fail(s);
    if (dataTypeSize(w.type) == 0)
      return reporter_.fail(unsupported(where, ": type ", dataTypeName(w.type), " cannot be stored"));
  }
  if (expected >= 0 && w.count != expected)
    return reporter_.fail(invalidArgument(where, " have ", w.count, " values; the layer needs ", expected));
  return true;
}

//
// Shape inference
//

void NetworkImpl::logOnce(Status const& s) const {
  if (logged_.insert(s.message()).second)
    reporter_.fail(s);
}

void NetworkImpl::inferNode(ir::Node* n) const {
  if (n->op == ir::OpType::kConstant) {
    if (!n->constant)
      return logOnce(invalidGraph(n->describe(), " has no data"));
    ir::Value* out = n->outputs[0];
    out->dtype = n->constant->dtype();
    out->shape = n->constant->shape();
    contents_[out] = *n->constant;
    return;
  }
  auto layer = layerOfNode_.find(n);
  if (layer != layerOfNode_.end())
    layer->second->beforeInfer();
  ir::InferFn fn = ir::findInferFn(n->op);
  if (!fn)
    return logOnce(unsupported(n->describe(), ": no shape inference for op ", ir::opName(n->op)));
  ir::InferContext ctx{*n, {}, {}, {}, {}};
  ctx.in.resize(n->inputs.size());
  ctx.inValues.resize(n->inputs.size(), nullptr);
  for (size_t i = 0; i < n->inputs.size(); ++i) {
    ir::Value const* v = n->inputs[i];
    if (!v) {
      ctx.in[i].shape.nbDims = -1;
      continue;
    }
    // An input whose rank is not known yet (its producer failed): keep the outputs' last known state; the
    // cause was reported where it happened.
    if (v->shape.nbDims < 0 || v->shape.nbDims > Dims::MAX_DIMS)
      return;
    ctx.in[i] = {v->dtype, v->shape};
    auto c = contents_.find(v);
    if (c != contents_.end())
      ctx.inValues[i] = &c->second;
  }
  ctx.out.resize(n->outputs.size());
  ctx.outValues.resize(n->outputs.size());
  Status s = fn(ctx);
  if (!s)
    return logOnce(s);
  for (size_t i = 0; i < n->outputs.size(); ++i) {
    if (ctx.out[i].shape.nbDims < 0 || ctx.out[i].shape.nbDims > Dims::MAX_DIMS)
      return logOnce(internalError(n->describe(), ": inferred an invalid rank ", ctx.out[i].shape.nbDims));
  }
  evaluateOnHost(*n, ctx);
  for (size_t i = 0; i < n->outputs.size(); ++i) {
    ir::Value* v = n->outputs[i];
    v->dtype = ctx.out[i].dtype;
    // Only converting ops take a requested output type here; the builder inserts casts for the others.
    if (v->requestedType && (n->op == ir::OpType::kIdentity || n->op == ir::OpType::kCast))
      v->dtype = *v->requestedType;
    v->shape = ctx.out[i].shape;
    if (ctx.outValues[i])
      contents_[v] = std::move(*ctx.outValues[i]);
    else
      contents_.erase(v);
  }
}

// Small outputs of a node whose present inputs all have known contents, computed by the host evaluator (as the
// builder's inference does): a failure leaves the contents unknown; the builder reports it when it infers again.
void NetworkImpl::evaluateOnHost(ir::Node const& n, ir::InferContext& ctx) const {
  if (!hostEval_ || n.op == ir::OpType::kIf || n.op == ir::OpType::kLoop || n.op == ir::OpType::kAssertion ||
      n.op == ir::OpType::kPluginV2 || n.op == ir::OpType::kPluginV3)
    return;
  // Checked: inferred shapes come from the user's (or a model's) numbers and may be absurd (a padding of 2^62).
  int64_t elems = 0;
  for (size_t i = 0; i < ctx.out.size(); ++i) {
    if (ctx.outValues[i] || !dimsKnown(ctx.out[i].shape))
      return;
    Result<int64_t> count = checkedVolume(ctx.out[i].shape);
    if (!count || *count > ir::kMaxHostEvalElements)
      return;
    elems += *count;
  }
  if (ctx.out.empty() || elems > ir::kMaxHostEvalElements)
    return;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (n.inputs[i] && !ctx.inValues[i])
      return;
  std::vector<HostTensor> outs;
  for (auto const& o : ctx.out) {
    Result<HostTensor> t = HostTensor::allocate(o.dtype, o.shape, "network shape tensor evaluation");
    if (!t)
      return;
    outs.push_back(std::move(*t));
  }
  if (!hostEval_(n, ctx.inValues, outs))
    return;
  for (size_t i = 0; i < outs.size(); ++i)
    ctx.outValues[i] = std::move(outs[i]);
}

void NetworkImpl::ensureInferred() const {
  if (dirtyFrom_ >= order_.size())
    return;
  if (forwardRefs_) {
    Result<std::vector<ir::Node*>> topo = graph_->topoOrder();
    if (!topo) {
      logOnce(topo.status());
    } else {
      for (ir::Node* n : *topo)
        inferNode(n);
    }
  } else {
    for (size_t i = dirtyFrom_; i < order_.size(); ++i)
      inferNode(order_[i]);
  }
  dirtyFrom_ = order_.size();
}

void NetworkImpl::ensureInferredBefore(ir::Node const* n) const {
  size_t end = positionOf(n);
  if (forwardRefs_ || end >= order_.size())
    return ensureInferred();
  for (size_t i = dirtyFrom_; i < end; ++i)
    inferNode(order_[i]);
  dirtyFrom_ = std::max(dirtyFrom_, end);
}

ir::Graph const& NetworkImpl::graph() const {
  ensureInferred();
  return lowerControlFlow(*this, *graph_);  // network/layers_control.cc: bodies -> If/Loop subgraphs
}

NetworkImpl::TensorRoles NetworkImpl::tensorRoles() const {
  ensureInferred();
  TensorRoles r;
  Result<std::vector<ir::Node*>> topo = graph_->topoOrder();
  if (!topo)
    return r;
  r.ok = true;
  for (ir::Value const* v : graph_->outputs())
    r.execution.insert(v);
  // Users come after producers in topological order, so one backward sweep settles every value.
  for (auto it = topo->rbegin(); it != topo->rend(); ++it) {
    ir::Node const& n = **it;
    if (n.op == ir::OpType::kShape) {
      r.shape.insert(n.outputs[0]);
      continue;  // reads only its input's dims
    }
    bool outShape = false;
    bool outExec = false;
    for (ir::Value const* o : n.outputs) {
      outShape = outShape || r.shape.count(o);
      outExec = outExec || r.execution.count(o);
    }
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      ir::Value const* v = n.inputs[i];
      if (!v)
        continue;
      if (isShapeSlot(n, i)) {
        r.shape.insert(v);
        continue;
      }
      if (outExec)
        r.execution.insert(v);
      if (outShape && propagatesShape(n.op) && isIntType(v->dtype) && v->shape.nbDims <= 1)
        r.shape.insert(v);
    }
  }
  return r;
}

bool NetworkImpl::isShapeTensor(ir::Value const* v) const {
  TensorRoles r = tensorRoles();
  return isIntType(v->dtype) && r.shape.count(v);
}

bool NetworkImpl::isExecutionTensor(ir::Value const* v) const {
  TensorRoles r = tensorRoles();
  return !r.ok || r.execution.count(v);
}

//
// NetworkImpl: inputs, outputs, queries
//

ITensor* NetworkImpl::addInput(char const* name, DataType type, Dims const& dimensions) noexcept {
  Status s = checkName(name, "addInput");
  if (s)
    s = checkTensorType(type, strCat("addInput '", name, "'"));
  if (s)
    s = checkInputDims(dimensions, name);
  if (s && graph_->findValue(name))
    s = invalidArgument("addInput: tensor name '", name, "' is already used");
  if (!s) {
    reporter_.fail(s);
    return nullptr;
  }
  Result<ir::Value*> v = graph_->addInput(name, type, dimensions);
  if (!v) {
    reporter_.fail(v.status());
    return nullptr;
  }
  return wrap(*v);
}

void NetworkImpl::markOutput(ITensor& tensor) noexcept {
  TensorImpl* t = own(tensor, "markOutput");
  if (!t)
    return;
  graph_->markOutput(t->value());
}

void NetworkImpl::unmarkOutput(ITensor& tensor) noexcept {
  TensorImpl* t = own(tensor, "unmarkOutput");
  if (!t)
    return;
  if (!t->value()->isOutput) {
    reporter_.fail(invalidArgument("unmarkOutput: tensor '", t->value()->name, "' is not a network output"));
    return;
  }
  graph_->unmarkOutput(t->value());
}

ILayer* NetworkImpl::getLayer(int32_t index) const noexcept {
  if (index < 0 || index >= getNbLayers())
    return nullptr;
  return layers_[static_cast<size_t>(index)]->asLayer();
}

ITensor* NetworkImpl::getInput(int32_t index) const noexcept {
  if (index < 0 || index >= getNbInputs())
    return nullptr;
  return tensorOf(graph_->inputs()[static_cast<size_t>(index)]);
}

ITensor* NetworkImpl::getOutput(int32_t index) const noexcept {
  if (index < 0 || index >= getNbOutputs())
    return nullptr;
  return tensorOf(graph_->outputs()[static_cast<size_t>(index)]);
}

void NetworkImpl::removeTensor(ITensor& tensor) noexcept {
  TensorImpl* t = own(tensor, "removeTensor");
  if (!t)
    return;
  ir::Value* v = t->value();
  if (v->producer) {
    reporter_.fail(invalidArgument("removeTensor: tensor '", v->name, "' is the output of ", v->producer->describe(),
                                   "; only unused network inputs can be removed"));
    return;
  }
  if (!graph_->users(v).empty()) {
    reporter_.fail(
        invalidArgument("removeTensor: tensor '", v->name, "' is still used by ", graph_->users(v)[0]->describe()));
    return;
  }
  // ir::Graph has no way to drop a graph input yet.
  reporter_.fail(unsupported("removeTensor: removing network input '", v->name, "' is not supported yet"));
}

void NetworkImpl::setName(char const* name) noexcept {
  if (!name) {
    reporter_.fail(invalidArgument("INetworkDefinition::setName: the name is null"));
    return;
  }
  name_ = name;
}

bool NetworkImpl::getFlag(NetworkDefinitionCreationFlag flag) const noexcept {
  if (!validEnum(flag))
    return false;
  return (flags_ & (1U << static_cast<int32_t>(flag))) != 0;
}

//
// NetworkImpl: layers
//

IConvolutionLayer* NetworkImpl::addConvolutionNd(ITensor& input, int64_t nbOutputMaps, Dims const& kernelSize,
                                                 Weights kernelWeights, Weights biasWeights) noexcept {
  TensorImpl* x = own(input, "addConvolutionNd");
  if (!x)
    return nullptr;
  std::string name = defaultLayerName(LayerType::kCONVOLUTION);
  auto fail = [&](std::string const& msg) -> IConvolutionLayer* {
    reporter_.fail(invalidArgument("addConvolutionNd: layer '", name, "': ", msg));
    return nullptr;
  };
  if (nbOutputMaps < 1)
    return fail(strCat("nbOutputMaps = ", nbOutputMaps, " must be >= 1"));
  if (kernelSize.nbDims != 2 && kernelSize.nbDims != 3)
    return fail(strCat("the kernel size must have 2 or 3 dimensions, got ", dimsToString(kernelSize)));
  for (int32_t i = 0; i < kernelSize.nbDims; ++i)
    if (kernelSize.d[i] < 1)
      return fail(strCat("kernel size ", dimsToString(kernelSize), " has a dim below 1"));
  if (!checkWeights(kernelWeights, name, "kernel weights", -1))
    return nullptr;
  if (!checkWeights(biasWeights, name, "bias weights", biasWeights.count == 0 ? 0 : nbOutputMaps))
    return nullptr;
  std::vector<int64_t> kernel = toInts(kernelSize);
  Dims kshape{};
  if (kernelWeights.count > 0) {
    std::string why;
    kshape = convKernelShape(kernelWeights.count, nbOutputMaps, kernel, x->getDimensions(), &why);
    if (kshape.nbDims < 0)
      return fail(why);
  }
  ir::Node* kc =
      kernelWeights.count > 0 ? addWeightConstant(name + "_kernel", kernelWeights, kshape, nullptr) : nullptr;
  ir::Node* bc = biasWeights.count > 0
                     ? addWeightConstant(name + "_bias", biasWeights, makeDims({biasWeights.count}), nullptr)
                     : nullptr;
  ir::Node* n = newNode(ir::OpType::kConvolution, LayerType::kCONVOLUTION,
                        {x->value(), kc ? kc->outputs[0] : nullptr, bc ? bc->outputs[0] : nullptr});
  size_t ns = kernel.size();
  n->attrs.setInt("num_output_maps", nbOutputMaps);
  n->attrs.setInts("kernel_shape", kernel);
  n->attrs.setInts("strides", std::vector<int64_t>(ns, 1));
  n->attrs.setInts("pads_begin", std::vector<int64_t>(ns, 0));
  n->attrs.setInts("pads_end", std::vector<int64_t>(ns, 0));
  n->attrs.setInt("padding_mode", static_cast<int64_t>(PaddingMode::kEXPLICIT_ROUND_DOWN));
  n->attrs.setInts("dilations", std::vector<int64_t>(ns, 1));
  n->attrs.setInt("groups", 1);
  n->attrs.setInt("activation", -1);
  auto layer = std::make_unique<ConvolutionLayer>(*this, n, kernelWeights, biasWeights);
  if (kc)
    layer->weightNodes_[1] = kc;
  if (bc)
    layer->weightNodes_[2] = bc;
  return adopt(std::move(layer));
}

IActivationLayer* NetworkImpl::addActivation(ITensor& input, ActivationType type) noexcept {
  TensorImpl* x = own(input, "addActivation");
  if (!x)
    return nullptr;
  if (!validEnum(type)) {
    reporter_.fail(invalidArgument("addActivation: unknown activation type ", static_cast<int32_t>(type)));
    return nullptr;
  }
  ir::Node* n = newNode(ir::OpType::kActivation, LayerType::kACTIVATION, {x->value()});
  n->attrs.setInt("type", static_cast<int64_t>(type));
  n->attrs.setFloat("alpha", 0.0);
  n->attrs.setFloat("beta", 0.0);
  return adopt(std::make_unique<ActivationLayer>(*this, n));
}

IPoolingLayer* NetworkImpl::addPoolingNd(ITensor& input, PoolingType type, Dims const& windowSize) noexcept {
  TensorImpl* x = own(input, "addPoolingNd");
  if (!x)
    return nullptr;
  std::string name = defaultLayerName(LayerType::kPOOLING);
  Status s;
  if (!validEnum(type))
    s = invalidArgument("unknown pooling type ", static_cast<int32_t>(type));
  else if (windowSize.nbDims != 2 && windowSize.nbDims != 3)
    s = invalidArgument("the window must have 2 or 3 dimensions, got ", dimsToString(windowSize));
  for (int32_t i = 0; s && i < windowSize.nbDims; ++i)
    if (windowSize.d[i] < 1)
      s = invalidArgument("window ", dimsToString(windowSize), " has a dim below 1");
  if (!s) {
    reporter_.fail(s.withContext(strCat("addPoolingNd: layer '", name, "'")));
    return nullptr;
  }
  size_t ns = static_cast<size_t>(windowSize.nbDims);
  ir::Node* n = newNode(ir::OpType::kPooling, LayerType::kPOOLING, {x->value()});
  n->attrs.setInt("type", static_cast<int64_t>(type));
  n->attrs.setInts("window", toInts(windowSize));
  n->attrs.setInts("strides", std::vector<int64_t>(ns, 1));
  n->attrs.setInts("pads_begin", std::vector<int64_t>(ns, 0));
  n->attrs.setInts("pads_end", std::vector<int64_t>(ns, 0));
  n->attrs.setInt("padding_mode", static_cast<int64_t>(PaddingMode::kEXPLICIT_ROUND_DOWN));
  n->attrs.setFloat("blend_factor", 0.0);
  n->attrs.setInt("exclude_padding", 1);
  return adopt(std::make_unique<PoolingLayer>(*this, n));
}

IElementWiseLayer* NetworkImpl::addElementWise(ITensor& input1, ITensor& input2, ElementWiseOperation op) noexcept {
  TensorImpl* a = own(input1, "addElementWise");
  TensorImpl* b = a ? own(input2, "addElementWise") : nullptr;
  if (!b)
    return nullptr;
  std::string name = defaultLayerName(LayerType::kELEMENTWISE);
  if (!validEnum(op)) {
    reporter_.fail(invalidArgument("addElementWise: layer '", name, "': unknown operation ", static_cast<int32_t>(op)));
    return nullptr;
  }
  Dims da = a->getDimensions();
  Dims db = b->getDimensions();
  if (da.nbDims >= 0 && db.nbDims >= 0 && da.nbDims != db.nbDims) {
    reporter_.fail(invalidArgument("addElementWise: layer '", name, "': the inputs must have equal rank, got ",
                                   dimsToString(da), " and ", dimsToString(db)));
    return nullptr;
  }
  ir::Node* n = newNode(ir::OpType::kElementWise, LayerType::kELEMENTWISE, {a->value(), b->value()});
  n->attrs.setInt("op", static_cast<int64_t>(op));
  return adopt(std::make_unique<ElementWiseLayer>(*this, n));
}

IUnaryLayer* NetworkImpl::addUnary(ITensor& input, UnaryOperation operation) noexcept {
  TensorImpl* x = own(input, "addUnary");
  if (!x)
    return nullptr;
  if (!validEnum(operation)) {
    reporter_.fail(invalidArgument("addUnary: unknown operation ", static_cast<int32_t>(operation)));
    return nullptr;
  }
  ir::Node* n = newNode(ir::OpType::kUnary, LayerType::kUNARY, {x->value()});
  n->attrs.setInt("op", static_cast<int64_t>(operation));
  return adopt(std::make_unique<UnaryLayer>(*this, n));
}

IMatrixMultiplyLayer* NetworkImpl::addMatrixMultiply(ITensor& input0, MatrixOperation op0, ITensor& input1,
                                                     MatrixOperation op1) noexcept {
  TensorImpl* a = own(input0, "addMatrixMultiply");
  TensorImpl* b = a ? own(input1, "addMatrixMultiply") : nullptr;
  if (!b)
    return nullptr;
  if (!validEnum(op0) || !validEnum(op1)) {
    reporter_.fail(invalidArgument("addMatrixMultiply: unknown matrix operation"));
    return nullptr;
  }
  ir::Node* n = newNode(ir::OpType::kMatrixMultiply, LayerType::kMATRIX_MULTIPLY, {a->value(), b->value()});
  n->attrs.setInt("op_a", static_cast<int64_t>(op0));
  n->attrs.setInt("op_b", static_cast<int64_t>(op1));
  n->attrs.setInt("activation", -1);
  return adopt(std::make_unique<MatrixMultiplyLayer>(*this, n));
}

IShuffleLayer* NetworkImpl::addShuffle(ITensor& input) noexcept {
  TensorImpl* x = own(input, "addShuffle");
  if (!x)
    return nullptr;
  ir::Node* n = newNode(ir::OpType::kShuffle, LayerType::kSHUFFLE, {x->value()});
  n->attrs.setInt("zero_is_placeholder", 1);
  return adopt(std::make_unique<ShuffleLayer>(*this, n));
}

IConcatenationLayer* NetworkImpl::addConcatenation(ITensor* const* inputs, int32_t nbInputs) noexcept {
  std::string name = defaultLayerName(LayerType::kCONCATENATION);
  if (!inputs || nbInputs < 1) {
    reporter_.fail(invalidArgument("addConcatenation: layer '", name, "': needs at least one input, got ", nbInputs));
    return nullptr;
  }
  std::vector<ir::Value*> vs;
  for (int32_t i = 0; i < nbInputs; ++i) {
    if (!inputs[i]) {
      reporter_.fail(invalidArgument("addConcatenation: layer '", name, "': input ", i, " is null"));
      return nullptr;
    }
    TensorImpl* t = own(*inputs[i], strCat("addConcatenation: layer '", name, "': input ", i));
    if (!t)
      return nullptr;
    vs.push_back(t->value());
  }
  int32_t rank = tensorOf(vs[0])->getDimensions().nbDims;
  ir::Node* n = newNode(ir::OpType::kConcatenation, LayerType::kCONCATENATION, vs);
  // TensorRT's default: the third-from-last axis (C of NCHW), or 0 below rank 3.
  n->attrs.setInt("axis", rank >= 3 ? rank - 3 : 0);
  return adopt(std::make_unique<ConcatenationLayer>(*this, n));
}

ISliceLayer* NetworkImpl::addSlice(ITensor& input, Dims const& start, Dims const& size, Dims const& stride) noexcept {
  TensorImpl* x = own(input, "addSlice");
  if (!x)
    return nullptr;
  std::string name = defaultLayerName(LayerType::kSLICE);
  Status s;
  for (Dims const* d : {&start, &size, &stride})
    if (s && (d->nbDims < 0 || d->nbDims > Dims::MAX_DIMS))
      s = invalidArgument("rank ", d->nbDims, " is not in [0, 8]");
  if (s && (start.nbDims != size.nbDims || start.nbDims != stride.nbDims))
    s = invalidArgument("start ", dimsToString(start), ", size ", dimsToString(size), " and stride ",
                        dimsToString(stride), " must have the same rank");
  int32_t rank = x->getDimensions().nbDims;
  if (s && rank >= 0 && start.nbDims != rank)
    s = invalidArgument("start/size/stride have ", start.nbDims, " entries for an input of rank ", rank);
  for (int32_t i = 0; s && i < size.nbDims; ++i)
    if (size.d[i] < 0)
      s = invalidArgument("size ", dimsToString(size), " has a negative extent");
  if (!s) {
    reporter_.fail(s.withContext(strCat("addSlice: layer '", name, "'")));
    return nullptr;
  }
  ir::Node* n = newNode(ir::OpType::kSlice, LayerType::kSLICE, {x->value()});
  n->attrs.setInts("start", toInts(start));
  n->attrs.setInts("size", toInts(size));
  n->attrs.setInts("stride", toInts(stride));
  n->attrs.setInt("mode", static_cast<int64_t>(SampleMode::kSTRICT_BOUNDS));
  return adopt(std::make_unique<SliceLayer>(*this, n));
}

IReduceLayer* NetworkImpl::addReduce(ITensor& input, ReduceOperation operation, uint32_t reduceAxes,
                                     bool keepDimensions) noexcept {
  TensorImpl* x = own(input, "addReduce");
  if (!x)
    return nullptr;
  std::string name = defaultLayerName(LayerType::kREDUCE);
  int32_t rank = x->getDimensions().nbDims;
  Status s;
  if (!validEnum(operation))
    s = invalidArgument("unknown reduce operation ", static_cast<int32_t>(operation));
  else if (rank >= 0 && rank < 32 && (reduceAxes >> rank) != 0)
    s = invalidArgument("reduce axes mask ", reduceAxes, " names an axis beyond rank ", rank);
  if (!s) {
    reporter_.fail(s.withContext(strCat("addReduce: layer '", name, "'")));
    return nullptr;
  }
  ir::Node* n = newNode(ir::OpType::kReduce, LayerType::kREDUCE, {x->value()});
  n->attrs.setInt("op", static_cast<int64_t>(operation));
  n->attrs.setInts("axes", maskToAxes(reduceAxes));
  n->attrs.setInt("keep_dims", keepDimensions ? 1 : 0);
  return adopt(std::make_unique<ReduceLayer>(*this, n));
}

ISoftMaxLayer* NetworkImpl::addSoftMax(ITensor& input) noexcept {
  TensorImpl* x = own(input, "addSoftMax");
  if (!x)
    return nullptr;
  int32_t rank = x->getDimensions().nbDims;
  ir::Node* n = newNode(ir::OpType::kSoftMax, LayerType::kSOFTMAX, {x->value()});
  // TensorRT's default: the third-from-last axis (C of NCHW), or 0 below rank 3.
  n->attrs.setInt("axis", rank >= 3 ? rank - 3 : 0);
  return adopt(std::make_unique<SoftMaxLayer>(*this, n));
}

IScaleLayer* NetworkImpl::addScale(ITensor& input, ScaleMode mode, Weights shift, Weights scale,
                                   Weights power) noexcept {
  return addScaleNd(input, mode, shift, scale, power, 1);
}

IScaleLayer* NetworkImpl::addScaleNd(ITensor& input, ScaleMode mode, Weights shift, Weights scale, Weights power,
                                     int32_t channelAxis) noexcept {
  TensorImpl* x = own(input, "addScale");
  if (!x)
    return nullptr;
  std::string name = defaultLayerName(LayerType::kSCALE);
  if (!validEnum(mode)) {
    reporter_.fail(invalidArgument("addScale: layer '", name, "': unknown scale mode ", static_cast<int32_t>(mode)));
    return nullptr;
  }
  Dims xd = x->getDimensions();
  if (mode != ScaleMode::kUNIFORM && xd.nbDims >= 0 && (channelAxis < -xd.nbDims || channelAxis >= xd.nbDims)) {
    reporter_.fail(invalidArgument("addScale: layer '", name, "': channel axis ", channelAxis,
                                   " is out of range for input ", dimsToString(xd)));
    return nullptr;
  }
  int64_t need = scaleCoefficientCount(mode, channelAxis, xd);
  Weights const* ws[] = {&shift, &scale, &power};
  char const* names[] = {"shift", "scale", "power"};
  for (int i = 0; i < 3; ++i)
    if (!checkWeights(*ws[i], name, names[i], ws[i]->count == 0 ? 0 : need))
      return nullptr;
  std::vector<ir::Value*> inputs{x->value(), nullptr, nullptr, nullptr};
  ir::Node* consts[3] = {nullptr, nullptr, nullptr};
  for (int i = 0; i < 3; ++i) {
    if (ws[i]->count == 0)
      continue;
    consts[i] = addWeightConstant(strCat(name, "_", names[i]), *ws[i], makeDims({ws[i]->count}), nullptr);
    inputs[static_cast<size_t>(i) + 1] = consts[i]->outputs[0];
  }
  ir::Node* n = newNode(ir::OpType::kScale, LayerType::kSCALE, inputs);
  n->attrs.setInt("mode", static_cast<int64_t>(mode));
  n->attrs.setInt("channel_axis", channelAxis);
  auto layer = std::make_unique<ScaleLayer>(*this, n, shift, scale, power);
  for (int i = 0; i < 3; ++i)
    if (consts[i])
      layer->weightNodes_[i + 1] = consts[i];
  return adopt(std::move(layer));
}

INormalizationLayer* NetworkImpl::addNormalization(ITensor& input, ITensor& scale, ITensor& bias,
                                                   uint32_t axesMask) noexcept {
  return addNormalizationImpl(input, scale, bias, axesMask, false);
}

INormalizationLayer* NetworkImpl::addNormalizationV2(ITensor& input, ITensor& scale, ITensor& bias,
                                                     uint32_t axesMask) noexcept {
  return addNormalizationImpl(input, scale, bias, axesMask, true);
}

INormalizationLayer* NetworkImpl::addNormalizationImpl(ITensor& input, ITensor& scale, ITensor& bias, uint32_t axesMask,
                                                       bool v2) {
  char const* api = v2 ? "addNormalizationV2" : "addNormalization";
  TensorImpl* x = own(input, api);
  TensorImpl* s = x ? own(scale, api) : nullptr;
  TensorImpl* b = s ? own(bias, api) : nullptr;
  if (!b)
    return nullptr;
  std::string name = defaultLayerName(LayerType::kNORMALIZATION);
  int32_t rank = x->getDimensions().nbDims;
  Status st;
  if (axesMask == 0)
    st = invalidArgument("the axes mask names no axis");
  else if (rank >= 0 && rank < 32 && (axesMask >> rank) != 0)
    st = invalidArgument("axes mask ", axesMask, " names an axis beyond rank ", rank);
  if (!st) {
    reporter_.fail(st.withContext(strCat(api, ": layer '", name, "'")));
    return nullptr;
  }
  ir::Node* n = newNode(ir::OpType::kNormalization, LayerType::kNORMALIZATION, {x->value(), s->value(), b->value()});
  n->attrs.setInts("axes", maskToAxes(axesMask));
  n->attrs.setFloat("epsilon", 1e-5);
  n->attrs.setInt("num_groups", 1);
  n->attrs.setInt("v2", v2 ? 1 : 0);
  return adopt(std::make_unique<NormalizationLayer>(*this, n));
}

IConstantLayer* NetworkImpl::addConstant(Dims const& dimensions, Weights weights) noexcept {
  std::string name = defaultLayerName(LayerType::kCONSTANT);
  if (!dimsKnown(dimensions)) {
    reporter_.fail(invalidArgument("addConstant: layer '", name, "': ", dimsToString(dimensions),
                                   " is not a valid constant shape (rank 0..8, no negative dims)"));
    return nullptr;
  }
  Result<int64_t> n = checkedVolume(dimensions);
  if (!n) {
    reporter_.fail(n.status().withContext(strCat("addConstant: layer '", name, "'")));
    return nullptr;
  }
  if (!checkWeights(weights, name, "weights", *n))
    return nullptr;
  if (weights.count == 0 && !validEnum(weights.type)) {
    reporter_.fail(invalidArgument("addConstant: layer '", name, "': unknown data type"));
    return nullptr;
  }
  ir::Node* node = newNode(ir::OpType::kConstant, LayerType::kCONSTANT, {});
  node->constant = HostTensor::borrow(weights.type, dimensions, weights.values);
  return adopt(std::make_unique<ConstantLayer>(*this, node, weights));
}

IIdentityLayer* NetworkImpl::addIdentity(ITensor& input) noexcept {
  TensorImpl* x = own(input, "addIdentity");
  if (!x)
    return nullptr;
  ir::Node* n = newNode(ir::OpType::kIdentity, LayerType::kIDENTITY, {x->value()});
  return adopt(std::make_unique<IdentityLayer>(*this, n));
}

ICastLayer* NetworkImpl::addCast(ITensor& input, DataType toType) noexcept {
  TensorImpl* x = own(input, "addCast");
  if (!x)
    return nullptr;
  Status s = checkTensorType(toType, strCat("addCast: layer '", defaultLayerName(LayerType::kCAST), "'"));
  if (!s) {
    reporter_.fail(s);
    return nullptr;
  }
  ir::Node* n = newNode(ir::OpType::kCast, LayerType::kCAST, {x->value()});
  n->attrs.setInt("to", static_cast<int64_t>(toType));
  return adopt(std::make_unique<CastLayer>(*this, n));
}

IGatherLayer* NetworkImpl::addGather(ITensor& data, ITensor& indices, int32_t axis) noexcept {
  return addGatherImpl(data, indices, axis, GatherMode::kDEFAULT, "addGather");
}

IGatherLayer* NetworkImpl::addGatherV2(ITensor& data, ITensor& indices, GatherMode mode) noexcept {
  return addGatherImpl(data, indices, 0, mode, "addGatherV2");
}

IGatherLayer* NetworkImpl::addGatherImpl(ITensor& data, ITensor& indices, int32_t axis, GatherMode mode,
                                         char const* api) {
  TensorImpl* d = own(data, api);
  TensorImpl* i = d ? own(indices, api) : nullptr;
  if (!i)
    return nullptr;
  std::string name = defaultLayerName(LayerType::kGATHER);
  int32_t rank = d->getDimensions().nbDims;
  DataType it = i->getType();
  Status s;
  if (!validEnum(mode))
    s = invalidArgument("unknown gather mode ", static_cast<int32_t>(mode));
  else if (rank >= 0 && (axis < -rank || axis >= rank))
    s = invalidArgument("axis ", axis, " is out of range for data of rank ", rank);
  else if (!isIntType(it))
    s = invalidArgument("indices must be int32 or int64, not ", dataTypeName(it));
  if (!s) {
    reporter_.fail(s.withContext(strCat(api, ": layer '", name, "'")));
    return nullptr;
  }
  ir::Node* n = newNode(ir::OpType::kGather, LayerType::kGATHER, {d->value(), i->value()});
  n->attrs.setInt("axis", axis);
  n->attrs.setInt("num_elementwise_dims", 0);
  n->attrs.setInt("mode", static_cast<int64_t>(mode));
  return adopt(std::make_unique<GatherLayer>(*this, n));
}

IShapeLayer* NetworkImpl::addShape(ITensor& input) noexcept {
  TensorImpl* x = own(input, "addShape");
  if (!x)
    return nullptr;
  ir::Node* n = newNode(ir::OpType::kShape, LayerType::kSHAPE, {x->value()});
  return adopt(std::make_unique<ShapeLayer>(*this, n));
}

}  // namespace kiln::network

//
// NetworkImpl: layer breadth (implemented by the family files; see network/layer_factories.h)
//

namespace kiln::network {

IDeconvolutionLayer* NetworkImpl::addDeconvolutionNd(ITensor& input, int64_t nbOutputMaps, Dims kernelSize,
                                                     Weights kernelWeights, Weights biasWeights) noexcept {
  return addDeconvolutionNdLayer(*this, input, nbOutputMaps, kernelSize, kernelWeights, biasWeights);
}

IResizeLayer* NetworkImpl::addResize(ITensor& input) noexcept { return addResizeLayer(*this, input); }

ITopKLayer* NetworkImpl::addTopK(ITensor& input, TopKOperation op, int32_t k, uint32_t reduceAxes) noexcept {
  return addTopKLayer(*this, input, op, k, reduceAxes, DataType::kINT32);
}

ITopKLayer* NetworkImpl::addTopK(ITensor& input, TopKOperation op, int32_t k, uint32_t reduceAxes,
                                 DataType indicesType) noexcept {
  return addTopKLayer(*this, input, op, k, reduceAxes, indicesType);
}

IPaddingLayer* NetworkImpl::addPaddingNd(ITensor& input, Dims const& prePadding, Dims const& postPadding) noexcept {
  return addPaddingNdLayer(*this, input, prePadding, postPadding);
}

IFillLayer* NetworkImpl::addFill(Dims const& dimensions, FillOperation op) noexcept {
  return addFillLayer(*this, dimensions, op, DataType::kFLOAT);
}

IFillLayer* NetworkImpl::addFill(Dims const& dimensions, FillOperation op, DataType outputType) noexcept {
  return addFillLayer(*this, dimensions, op, outputType);
}

ISelectLayer* NetworkImpl::addSelect(ITensor& condition, ITensor& thenInput, ITensor& elseInput) noexcept {
  return addSelectLayer(*this, condition, thenInput, elseInput);
}

IScatterLayer* NetworkImpl::addScatter(ITensor& data, ITensor& indices, ITensor& updates, ScatterMode mode) noexcept {
  return addScatterLayer(*this, data, indices, updates, mode);
}

IEinsumLayer* NetworkImpl::addEinsum(ITensor* const* inputs, int32_t nbInputs, char const* equation) noexcept {
  return addEinsumLayer(*this, inputs, nbInputs, equation);
}

ICumulativeLayer* NetworkImpl::addCumulative(ITensor& input, ITensor& axis, CumulativeOperation operation,
                                             bool exclusive, bool reverse) noexcept {
  return addCumulativeLayer(*this, input, axis, operation, exclusive, reverse);
}

IOneHotLayer* NetworkImpl::addOneHot(ITensor& indices, ITensor& values, ITensor& depth, int32_t axis) noexcept {
  return addOneHotLayer(*this, indices, values, depth, axis);
}

IParametricReLULayer* NetworkImpl::addParametricReLU(ITensor& input, ITensor& slope) noexcept {
  return addParametricReLULayer(*this, input, slope);
}

ILRNLayer* NetworkImpl::addLRN(ITensor& input, int64_t window, float alpha, float beta, float k) noexcept {
  return addLRNLayer(*this, input, window, alpha, beta, k);
}

ISqueezeLayer* NetworkImpl::addSqueeze(ITensor& input, ITensor& axes) noexcept {
  return addSqueezeLayer(*this, input, axes);
}

IUnsqueezeLayer* NetworkImpl::addUnsqueeze(ITensor& input, ITensor& axes) noexcept {
  return addUnsqueezeLayer(*this, input, axes);
}

IGridSampleLayer* NetworkImpl::addGridSample(ITensor& input, ITensor& grid) noexcept {
  return addGridSampleLayer(*this, input, grid);
}

IReverseSequenceLayer* NetworkImpl::addReverseSequence(ITensor& input, ITensor& sequenceLens) noexcept {
  return addReverseSequenceLayer(*this, input, sequenceLens);
}

IAssertionLayer* NetworkImpl::addAssertion(ITensor& condition, char const* message) noexcept {
  return addAssertionLayer(*this, condition, message);
}

ITfIdfVectorizerLayer* NetworkImpl::addTfIdfVectorizer(ITensor& input, TfIdfVectorizerMode mode,
                                                       int32_t minGramLength, int32_t maxGramLength,
                                                       int32_t maxSkipCount, Weights pool, Weights ngramCounts,
                                                       Weights ngramIndexes, Weights weights) noexcept {
  return addTfIdfVectorizerLayer(*this, input, mode, minGramLength, maxGramLength, maxSkipCount, pool, ngramCounts,
                                 ngramIndexes, weights);
}

INMSLayer* NetworkImpl::addNMS(ITensor& boxes, ITensor& scores, ITensor& maxOutputBoxesPerClass) noexcept {
  return addNMSLayer(*this, boxes, scores, maxOutputBoxesPerClass, DataType::kINT32);
}

INMSLayer* NetworkImpl::addNMS(ITensor& boxes, ITensor& scores, ITensor& maxOutputBoxesPerClass,
                               DataType indicesType) noexcept {
  return addNMSLayer(*this, boxes, scores, maxOutputBoxesPerClass, indicesType);
}

IRaggedSoftMaxLayer* NetworkImpl::addRaggedSoftMax(ITensor& input, ITensor& bounds) noexcept {
  return addRaggedSoftMaxLayer(*this, input, bounds);
}

IQuantizeLayer* NetworkImpl::addQuantize(ITensor& input, ITensor& scale) noexcept {
  return addQuantizeLayer(*this, input, scale, DataType::kINT8);
}

IQuantizeLayer* NetworkImpl::addQuantize(ITensor& input, ITensor& scale, DataType outputType) noexcept {
  return addQuantizeLayer(*this, input, scale, outputType);
}

IDequantizeLayer* NetworkImpl::addDequantize(ITensor& input, ITensor& scale) noexcept {
  return addDequantizeLayer(*this, input, scale, DataType::kFLOAT);
}

IDequantizeLayer* NetworkImpl::addDequantize(ITensor& input, ITensor& scale, DataType outputType) noexcept {
  return addDequantizeLayer(*this, input, scale, outputType);
}

IDynamicQuantizeLayer* NetworkImpl::addDynamicQuantize(ITensor& input, int32_t axis, int32_t blockSize,
                                                       DataType outputType, DataType scaleType) noexcept {
  return addDynamicQuantizeLayer(*this, input, axis, blockSize, outputType, scaleType);
}

IDynamicQuantizeLayer* NetworkImpl::addDynamicQuantizeV2(ITensor& input, Dims const& blockShape, DataType outputType,
                                                         DataType scaleType) noexcept {
  return addDynamicQuantizeV2Layer(*this, input, blockShape, outputType, scaleType);
}

INonZeroLayer* NetworkImpl::addNonZero(ITensor& input) noexcept {
  return addNonZeroLayer(*this, input, DataType::kINT32);
}

INonZeroLayer* NetworkImpl::addNonZero(ITensor& input, DataType indicesType) noexcept {
  return addNonZeroLayer(*this, input, indicesType);
}

IPluginV2Layer* NetworkImpl::addPluginV2(ITensor* const* inputs, int32_t nbInputs, IPluginV2& plugin) noexcept {
  return addPluginV2Layer(*this, inputs, nbInputs, plugin);
}

IPluginV3Layer* NetworkImpl::addPluginV3(ITensor* const* inputs, int32_t nbInputs, ITensor* const* shapeInputs,
                                         int32_t nbShapeInputs, IPluginV3& plugin) noexcept {
  return addPluginV3Layer(*this, inputs, nbInputs, shapeInputs, nbShapeInputs, plugin);
}

IIfConditional* NetworkImpl::addIfConditional() noexcept { return addIfConditionalLayer(*this); }

ILoop* NetworkImpl::addLoop() noexcept { return addLoopLayer(*this); }

}  // namespace kiln::network
