// Indexing and quantization layer family: Scatter, Einsum, Squeeze, Unsqueeze, Quantize, Dequantize,
// DynamicQuantize (factories declared in network/layer_factories.h, and their layer classes).
#include "ir/infer/einsum_util.h"
#include "network/layer_factories.h"
#include "network/layers.h"

namespace kiln::network {

namespace {

bool isIndexType(DataType t) { return t == DataType::kINT32 || t == DataType::kINT64; }

// Reports `msg` for the next layer of `type` created by `api`; returns nullptr.
template <typename L>
L* reject(NetworkImpl& net, char const* api, LayerType type, std::string const& msg) {
  net.reporter().fail(invalidArgument(api, ": layer '", net.nextLayerName(type), "': ", msg));
  return nullptr;
}

// The error for types that Kiln cannot store yet.
bool subByte(DataType t) { return t == DataType::kINT4 || t == DataType::kFP4 || t == DataType::kE8M0; }

class ScatterLayer final : public LayerBase<IScatterLayer> {
 public:
  ScatterLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kSCATTER, node) {}
  void setMode(ScatterMode mode) noexcept override {
    if (!validEnum(mode)) return error(strCat("setMode: unknown mode ", static_cast<int32_t>(mode)));
    setInt("mode", static_cast<int64_t>(mode));
  }
  ScatterMode getMode() const noexcept override { return static_cast<ScatterMode>(node_->attrs.getInt("mode")); }
  void setAxis(int32_t axis) noexcept override {
    int32_t rank = inputDims(0).nbDims;
    if (rank >= 0 && (axis < -rank || axis >= rank))
      return error(strCat("setAxis: axis ", axis, " is out of range for data of rank ", rank));
    setInt("axis", axis);
  }
  int32_t getAxis() const noexcept override { return static_cast<int32_t>(node_->attrs.getInt("axis")); }
  void setReduction(ScatterReduction reduction) noexcept override {
    if (!validEnum(reduction))
      return error(strCat("setReduction: unknown reduction ", static_cast<int32_t>(reduction)));
    setInt("reduction", static_cast<int64_t>(reduction));
  }
  ScatterReduction getReduction() const noexcept override {
    return static_cast<ScatterReduction>(node_->attrs.getInt("reduction"));
  }

 protected:
  bool acceptsInput(int32_t index) const override { return index >= 0 && index < 3; }
};

class EinsumLayer final : public LayerBase<IEinsumLayer> {
 public:
  EinsumLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kEINSUM, node) {
    equation_ = node->attrs.getString("equation");
  }
  bool setEquation(char const* equation) noexcept override {
    if (equation == nullptr) return error("setEquation: the equation is null"), false;
    Status s = ir::checkEinsumEquation(equation);
    if (!s) return error(strCat("setEquation: ", s.message())), false;
    equation_ = equation;
    net_.markChanged(node_);
    node_->attrs.setString("equation", equation_);
    return true;
  }
  char const* getEquation() const noexcept override { return equation_.c_str(); }

 protected:
  bool acceptsInput(int32_t index) const override {
    return index >= 0 && index < static_cast<int32_t>(node_->inputs.size());
  }

 private:
  std::string equation_;
};

class SqueezeLayer final : public LayerBase<ISqueezeLayer> {
 public:
  SqueezeLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kSQUEEZE, node) {}

 protected:
  bool acceptsInput(int32_t index) const override { return index == 0 || index == 1; }
};

class UnsqueezeLayer final : public LayerBase<IUnsqueezeLayer> {
 public:
  UnsqueezeLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kUNSQUEEZE, node) {}

 protected:
  bool acceptsInput(int32_t index) const override { return index == 0 || index == 1; }
};

// Shared setters of Quantize and Dequantize.
template <typename I>
class QdqLayer : public LayerBase<I> {
 public:
  QdqLayer(NetworkImpl& net, LayerType type, ir::Node* node) : LayerBase<I>(net, type, node) {}
  int32_t getAxis() const noexcept override { return static_cast<int32_t>(this->node_->attrs.getInt("axis", -1)); }
  void setAxis(int32_t axis) noexcept override {
    int32_t rank = this->inputDims(0).nbDims;
    if (rank >= 0 && (axis < -rank || axis >= rank))
      return this->error(strCat("setAxis: axis ", axis, " is out of range for an input of rank ", rank));
    this->setInt("axis", axis);
  }
  bool setBlockShape(Dims const& blockShape) noexcept override {
    if (blockShape.nbDims < 0 || blockShape.nbDims > Dims::MAX_DIMS)
      return this->error("setBlockShape: malformed block shape"), false;
    for (int32_t i = 0; i < blockShape.nbDims; ++i)
      if (blockShape.d[i] < 1 && blockShape.d[i] != -1)
        return this->error(strCat("setBlockShape: extent ", blockShape.d[i], " must be >= 1 or -1")), false;
    if (blockShape.nbDims == 0)
      this->eraseAttr("block_shape");
    else
      this->setInts("block_shape", toInts(blockShape));
    return true;
  }
  Dims getBlockShape() const noexcept override {
    if (!this->node_->attrs.has("block_shape")) return Dims{};
    return toDims(this->node_->attrs.getInts("block_shape"));
  }
  DataType getToType() const noexcept override { return static_cast<DataType>(this->node_->attrs.getInt("to")); }

 protected:
  bool acceptsInput(int32_t index) const override { return index >= 0 && index < 3; }
};

bool validQuantizeType(DataType t) { return t == DataType::kINT8 || t == DataType::kUINT8 || t == DataType::kFP8; }
bool validDequantizeType(DataType t) {
  return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16 || t == DataType::kFLOAT64;
}

class QuantizeLayer final : public QdqLayer<IQuantizeLayer> {
 public:
  QuantizeLayer(NetworkImpl& net, ir::Node* node) : QdqLayer(net, LayerType::kQUANTIZE, node) {}
  void setToType(DataType toType) noexcept override {
    if (!validEnum(toType) || subByte(toType))
      return error(strCat("setToType: type ", static_cast<int32_t>(toType), " is not supported yet"));
    if (!validQuantizeType(toType))
      return error(strCat("setToType: output type must be int8, uint8 or fp8, not ", dataTypeName(toType)));
    setInt("to", static_cast<int64_t>(toType));
  }
};

class DequantizeLayer final : public QdqLayer<IDequantizeLayer> {
 public:
  DequantizeLayer(NetworkImpl& net, ir::Node* node) : QdqLayer(net, LayerType::kDEQUANTIZE, node) {}
  void setToType(DataType toType) noexcept override {
    if (!validEnum(toType) || !validDequantizeType(toType))
      return error(
          strCat("setToType: output type must be float32, float16 or bfloat16, not ", static_cast<int32_t>(toType)));
    setInt("to", static_cast<int64_t>(toType));
  }
};

class DynamicQuantizeLayer final : public LayerBase<IDynamicQuantizeLayer> {
 public:
  DynamicQuantizeLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kDYNAMIC_QUANTIZE, node) {}
  void setToType(DataType toType) noexcept override {
    if (!validEnum(toType) || subByte(toType))
      return error(strCat("setToType: type ", static_cast<int32_t>(toType), " is not supported yet"));
    if (toType != DataType::kFP8 && toType != DataType::kINT8)
      return error(strCat("setToType: output type must be fp8 or int8, not ", dataTypeName(toType)));
    setInt("to", static_cast<int64_t>(toType));
  }
  DataType getToType() const noexcept override { return static_cast<DataType>(node_->attrs.getInt("to")); }
  void setScaleType(DataType scaleType) noexcept override {
    if (!validEnum(scaleType) || subByte(scaleType))
      return error(strCat("setScaleType: type ", static_cast<int32_t>(scaleType), " is not supported yet"));
    if (scaleType != DataType::kFP8 && !validDequantizeType(scaleType))
      return error(strCat("setScaleType: scale type must be fp8 or a float type, not ", dataTypeName(scaleType)));
    setInt("scale_type", static_cast<int64_t>(scaleType));
  }
  DataType getScaleType() const noexcept override { return static_cast<DataType>(node_->attrs.getInt("scale_type")); }
  void setAxis(int32_t axis) noexcept override {
    eraseAttr("block_shape");
    setInt("axis", axis);
  }
  int32_t getAxis() const noexcept override { return static_cast<int32_t>(node_->attrs.getInt("axis", -1)); }
  void setBlockSize(int32_t size) noexcept override {
    if (size < 1) return error(strCat("setBlockSize: ", size, " must be >= 1"));
    eraseAttr("block_shape");
    setInt("block_size", size);
  }
  int32_t getBlockSize() const noexcept override { return static_cast<int32_t>(node_->attrs.getInt("block_size")); }
  void setBlockShape(Dims const& blockShape) noexcept override {
    if (blockShape.nbDims < 1 || blockShape.nbDims > Dims::MAX_DIMS)
      return error("setBlockShape: malformed block shape");
    for (int32_t i = 0; i < blockShape.nbDims; ++i)
      if (blockShape.d[i] < 1 && blockShape.d[i] != -1)
        return error(strCat("setBlockShape: extent ", blockShape.d[i], " must be >= 1 or -1"));
    setInts("block_shape", toInts(blockShape));
  }
  Dims getBlockShape() const noexcept override {
    if (node_->attrs.has("block_shape")) return toDims(node_->attrs.getInts("block_shape"));
    // 1-D blocks: the block shape equivalent to axis and block size, when the rank is known.
    Dims x = inputDims(0);
    if (x.nbDims < 1) return Dims{};
    Dims b{};
    b.nbDims = x.nbDims;
    for (int32_t i = 0; i < x.nbDims; ++i) b.d[i] = 1;
    int64_t axis = node_->attrs.getInt("axis", -1);
    if (axis < 0) axis += x.nbDims;
    if (axis >= 0 && axis < x.nbDims) b.d[axis] = node_->attrs.getInt("block_size", 1);
    return b;
  }

 protected:
  bool acceptsInput(int32_t index) const override { return index == 0 || index == 1; }
};

}  // namespace

IScatterLayer* addScatterLayer(NetworkImpl& net, ITensor& data, ITensor& indices, ITensor& updates, ScatterMode mode) {
  TensorImpl* d = net.own(data, "addScatter");
  TensorImpl* i = d ? net.own(indices, "addScatter") : nullptr;
  TensorImpl* u = i ? net.own(updates, "addScatter") : nullptr;
  if (!u) return nullptr;
  if (!validEnum(mode))
    return reject<IScatterLayer>(net, "addScatter", LayerType::kSCATTER,
                                 strCat("unknown scatter mode ", static_cast<int32_t>(mode)));
  if (!isIndexType(i->getType()))
    return reject<IScatterLayer>(net, "addScatter", LayerType::kSCATTER,
                                 strCat("indices must be int32 or int64, not ", dataTypeName(i->getType())));
  if (u->getType() != d->getType())
    return reject<IScatterLayer>(net, "addScatter", LayerType::kSCATTER,
                                 strCat("updates of type ", dataTypeName(u->getType()), " differ from data of type ",
                                        dataTypeName(d->getType())));
  ir::Node* n = net.addLayerNode(ir::OpType::kScatter, LayerType::kSCATTER, {d->value(), i->value(), u->value()});
  n->attrs.setInt("mode", static_cast<int64_t>(mode));
  n->attrs.setInt("axis", 0);
  n->attrs.setInt("reduction", static_cast<int64_t>(ScatterReduction::kNONE));
  return net.adoptLayer(std::make_unique<ScatterLayer>(net, n));
}

IEinsumLayer* addEinsumLayer(NetworkImpl& net, ITensor* const* inputs, int32_t nbInputs, char const* equation) {
  if (inputs == nullptr || nbInputs < 1)
    return reject<IEinsumLayer>(net, "addEinsum", LayerType::kEINSUM, "needs at least one input");
  if (equation == nullptr) return reject<IEinsumLayer>(net, "addEinsum", LayerType::kEINSUM, "the equation is null");
  std::vector<ir::Value*> vals;
  for (int32_t k = 0; k < nbInputs; ++k) {
    if (inputs[k] == nullptr)
      return reject<IEinsumLayer>(net, "addEinsum", LayerType::kEINSUM, strCat("input ", k, " is null"));
    TensorImpl* t = net.own(*inputs[k], "addEinsum");
    if (!t) return nullptr;
    vals.push_back(t->value());
  }
  Status s = ir::checkEinsumEquation(equation);
  if (!s) return reject<IEinsumLayer>(net, "addEinsum", LayerType::kEINSUM, s.message());
  ir::Node* n = net.addLayerNode(ir::OpType::kEinsum, LayerType::kEINSUM, vals);
  n->attrs.setString("equation", equation);
  return net.adoptLayer(std::make_unique<EinsumLayer>(net, n));
}

namespace {

template <typename Layer, typename I>
I* addAxesLayer(NetworkImpl& net, ITensor& input, ITensor& axes, ir::OpType op, LayerType type, char const* api) {
  TensorImpl* x = net.own(input, api);
  TensorImpl* a = x ? net.own(axes, api) : nullptr;
  if (!a) return nullptr;
  if (!isIndexType(a->getType()))
    return reject<I>(net, api, type, strCat("axes must be int32 or int64, not ", dataTypeName(a->getType())));
  Dims ad = a->getDimensions();
  if (ad.nbDims >= 0 && ad.nbDims != 1)
    return reject<I>(net, api, type, strCat("axes must be 1-D, not ", dimsToString(ad)));
  ir::Node* n = net.addLayerNode(op, type, {x->value(), a->value()});
  return net.adoptLayer(std::make_unique<Layer>(net, n));
}

}  // namespace

ISqueezeLayer* addSqueezeLayer(NetworkImpl& net, ITensor& input, ITensor& axes) {
  return addAxesLayer<SqueezeLayer, ISqueezeLayer>(net, input, axes, ir::OpType::kSqueeze, LayerType::kSQUEEZE,
                                                   "addSqueeze");
}

IUnsqueezeLayer* addUnsqueezeLayer(NetworkImpl& net, ITensor& input, ITensor& axes) {
  return addAxesLayer<UnsqueezeLayer, IUnsqueezeLayer>(net, input, axes, ir::OpType::kUnsqueeze, LayerType::kUNSQUEEZE,
                                                       "addUnsqueeze");
}

IQuantizeLayer* addQuantizeLayer(NetworkImpl& net, ITensor& input, ITensor& scale, DataType outputType) {
  TensorImpl* x = net.own(input, "addQuantize");
  TensorImpl* s = x ? net.own(scale, "addQuantize") : nullptr;
  if (!s) return nullptr;
  if (!validEnum(outputType) || subByte(outputType))
    return reject<IQuantizeLayer>(net, "addQuantize", LayerType::kQUANTIZE,
                                  strCat("output type ", static_cast<int32_t>(outputType), " is not supported yet"));
  if (!validQuantizeType(outputType))
    return reject<IQuantizeLayer>(net, "addQuantize", LayerType::kQUANTIZE,
                                  strCat("output type must be int8, uint8 or fp8, not ", dataTypeName(outputType)));
  ir::Node* n = net.addLayerNode(ir::OpType::kQuantize, LayerType::kQUANTIZE, {x->value(), s->value()});
  n->attrs.setInt("axis", -1);
  n->attrs.setInt("to", static_cast<int64_t>(outputType));
  return net.adoptLayer(std::make_unique<QuantizeLayer>(net, n));
}

IDequantizeLayer* addDequantizeLayer(NetworkImpl& net, ITensor& input, ITensor& scale, DataType outputType) {
  TensorImpl* x = net.own(input, "addDequantize");
  TensorImpl* s = x ? net.own(scale, "addDequantize") : nullptr;
  if (!s) return nullptr;
  if (!validEnum(outputType) || !validDequantizeType(outputType))
    return reject<IDequantizeLayer>(
        net, "addDequantize", LayerType::kDEQUANTIZE,
        strCat("output type must be float32, float16 or bfloat16, not ", static_cast<int32_t>(outputType)));
  ir::Node* n = net.addLayerNode(ir::OpType::kDequantize, LayerType::kDEQUANTIZE, {x->value(), s->value()});
  n->attrs.setInt("axis", -1);
  n->attrs.setInt("to", static_cast<int64_t>(outputType));
  return net.adoptLayer(std::make_unique<DequantizeLayer>(net, n));
}

namespace {

IDynamicQuantizeLayer* addDynamicQuantizeCommon(NetworkImpl& net, ITensor& input, DataType outputType,
                                                DataType scaleType, char const* api, ir::Node*& node) {
  TensorImpl* x = net.own(input, api);
  if (!x) return nullptr;
  LayerType lt = LayerType::kDYNAMIC_QUANTIZE;
  if (!validEnum(outputType) || !validEnum(scaleType) || subByte(outputType) || subByte(scaleType))
    return reject<IDynamicQuantizeLayer>(
        net, api, lt,
        strCat("output type ", static_cast<int32_t>(outputType), " / scale type ", static_cast<int32_t>(scaleType),
               ": int4/fp4/e8m0 are not "
               "supported yet"));
  if (outputType != DataType::kFP8 && outputType != DataType::kINT8)
    return reject<IDynamicQuantizeLayer>(net, api, lt,
                                         strCat("output type must be fp8 or int8, not ", dataTypeName(outputType)));
  if (scaleType != DataType::kFP8 && !validDequantizeType(scaleType))
    return reject<IDynamicQuantizeLayer>(
        net, api, lt, strCat("scale type must be fp8 or a float type, not ", dataTypeName(scaleType)));
  node = net.addLayerNode(ir::OpType::kDynamicQuantize, lt, {x->value()}, 2);
  node->attrs.setInt("to", static_cast<int64_t>(outputType));
  node->attrs.setInt("scale_type", static_cast<int64_t>(scaleType));
  return nullptr;
}

}  // namespace

IDynamicQuantizeLayer* addDynamicQuantizeLayer(NetworkImpl& net, ITensor& input, int32_t axis, int32_t blockSize,
                                               DataType outputType, DataType scaleType) {
  if (blockSize < 1)
    return reject<IDynamicQuantizeLayer>(net, "addDynamicQuantize", LayerType::kDYNAMIC_QUANTIZE,
                                         strCat("block size ", blockSize, " must be >= 1"));
  ir::Node* n = nullptr;
  addDynamicQuantizeCommon(net, input, outputType, scaleType, "addDynamicQuantize", n);
  if (!n) return nullptr;
  n->attrs.setInt("axis", axis);
  n->attrs.setInt("block_size", blockSize);
  return net.adoptLayer(std::make_unique<DynamicQuantizeLayer>(net, n));
}

IDynamicQuantizeLayer* addDynamicQuantizeV2Layer(NetworkImpl& net, ITensor& input, Dims const& blockShape,
                                                 DataType outputType, DataType scaleType) {
  if (blockShape.nbDims < 1 || blockShape.nbDims > Dims::MAX_DIMS)
    return reject<IDynamicQuantizeLayer>(net, "addDynamicQuantizeV2", LayerType::kDYNAMIC_QUANTIZE,
                                         "malformed block shape");
  ir::Node* n = nullptr;
  addDynamicQuantizeCommon(net, input, outputType, scaleType, "addDynamicQuantizeV2", n);
  if (!n) return nullptr;
  n->attrs.setInts("block_shape", toInts(blockShape));
  n->attrs.setInt("axis", -1);
  n->attrs.setInt("block_size", 1);
  return net.adoptLayer(std::make_unique<DynamicQuantizeLayer>(net, n));
}

}  // namespace kiln::network
