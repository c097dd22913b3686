// Selection layer family: TopK, NMS, NonZero, Cumulative, OneHot, ReverseSequence, Assertion, Select, Fill
// (factories declared in network/layer_factories.h, and their layer classes).
#include <bit>

#include "network/layer_factories.h"
#include "network/layers.h"

namespace kiln::network {

namespace {

// Reports `msg` for the layer about to be created by `api` and returns nullptr.
template <typename L>
L* failAdd(NetworkImpl& net, char const* api, LayerType type, std::string const& msg) {
  net.reporter().fail(invalidArgument(api, ": layer '", net.nextLayerName(type), "': ", msg));
  return nullptr;
}

bool isIndexType(DataType t) { return t == DataType::kINT32 || t == DataType::kINT64; }

//
// TopK
//

class TopKLayer final : public LayerBase<ITopKLayer> {
 public:
  TopKLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kTOPK, node) {}
  void setOperation(TopKOperation op) noexcept override {
    if (!validEnum(op)) return error(strCat("setOperation: unknown TopK operation ", static_cast<int32_t>(op)));
    setInt("op", static_cast<int64_t>(op));
  }
  TopKOperation getOperation() const noexcept override {
    return static_cast<TopKOperation>(node_->attrs.getInt("op"));
  }
  void setK(int32_t k) noexcept override {
    if (k < 0) return error(strCat("setK: k must be >= 0, not ", k));
    if (node_->inputs.size() > 1) net_.setNodeInput(node_, 1, nullptr);
    setInt("k", k);
  }
  int32_t getK() const noexcept override {
    return node_->input(1) ? -1 : static_cast<int32_t>(node_->attrs.getInt("k", 1));
  }
  void setReduceAxes(uint32_t reduceAxes) noexcept override {
    if (std::popcount(reduceAxes) != 1)
      return error(strCat("setReduceAxes: exactly one axis bit must be set, not 0x", reduceAxes));
    setInt("axis", std::countr_zero(reduceAxes));
  }
  uint32_t getReduceAxes() const noexcept override { return 1U << node_->attrs.getInt("axis"); }
  bool setIndicesType(DataType type) noexcept override {
    if (!isIndexType(type)) {
      error(strCat("setIndicesType: indices must be int32 or int64, not ", dataTypeName(type)));
      return false;
    }
    setInt("indices_type", static_cast<int64_t>(type));
    return true;
  }
  DataType getIndicesType() const noexcept override {
    return static_cast<DataType>(node_->attrs.getInt("indices_type", static_cast<int64_t>(DataType::kINT32)));
  }

 protected:
  bool acceptsInput(int32_t index) const override { return index == 0 || index == 1; }
  void onInputSet(int32_t index) override {
    if (index == 1) net_.markChanged(node_);
  }
};

//
// NMS
//

class NMSLayer final : public LayerBase<INMSLayer> {
 public:
  NMSLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kNMS, node) {}
  void setBoundingBoxFormat(BoundingBoxFormat fmt) noexcept override {
    if (!validEnum(fmt)) return error(strCat("setBoundingBoxFormat: unknown format ", static_cast<int32_t>(fmt)));
    setInt("box_format", static_cast<int64_t>(fmt));
  }
  BoundingBoxFormat getBoundingBoxFormat() const noexcept override {
    return static_cast<BoundingBoxFormat>(node_->attrs.getInt("box_format"));
  }
  void setTopKBoxLimit(int32_t limit) noexcept override {
    if (limit < 0) return error(strCat("setTopKBoxLimit: the limit must be >= 0, not ", limit));
    setInt("topk_box_limit", limit);
  }
  int32_t getTopKBoxLimit() const noexcept override {
    return static_cast<int32_t>(node_->attrs.getInt("topk_box_limit", 5000));
  }
  bool setIndicesType(DataType type) noexcept override {
    if (!isIndexType(type)) {
      error(strCat("setIndicesType: indices must be int32 or int64, not ", dataTypeName(type)));
      return false;
    }
    setInt("indices_type", static_cast<int64_t>(type));
    return true;
  }
  DataType getIndicesType() const noexcept override {
    return static_cast<DataType>(node_->attrs.getInt("indices_type", static_cast<int64_t>(DataType::kINT32)));
  }

 protected:
  bool acceptsInput(int32_t index) const override { return index >= 0 && index <= 4; }
};

//
// NonZero
//

class NonZeroLayer final : public LayerBase<INonZeroLayer> {
 public:
  NonZeroLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kNON_ZERO, node) {}
  bool setIndicesType(DataType type) noexcept override {
    if (!isIndexType(type)) {
      error(strCat("setIndicesType: indices must be int32 or int64, not ", dataTypeName(type)));
      return false;
    }
    setInt("indices_type", static_cast<int64_t>(type));
    return true;
  }
  DataType getIndicesType() const noexcept override {
    return static_cast<DataType>(node_->attrs.getInt("indices_type", static_cast<int64_t>(DataType::kINT32)));
  }
};

//
// Cumulative
//

class CumulativeLayer final : public LayerBase<ICumulativeLayer> {
 public:
  CumulativeLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kCUMULATIVE, node) {}
  bool setOperation(CumulativeOperation op) noexcept override {
    if (!validEnum(op)) {
      error(strCat("setOperation: unknown cumulative operation ", static_cast<int32_t>(op)));
      return false;
    }
    setInt("op", static_cast<int64_t>(op));
    return true;
  }
  CumulativeOperation getOperation() const noexcept override {
    return static_cast<CumulativeOperation>(node_->attrs.getInt("op"));
  }
  void setExclusive(bool exclusive) noexcept override { setInt("exclusive", exclusive); }
  bool getExclusive() const noexcept override { return node_->attrs.getInt("exclusive") != 0; }
  void setReverse(bool reverse) noexcept override { setInt("reverse", reverse); }
  bool getReverse() const noexcept override { return node_->attrs.getInt("reverse") != 0; }

 protected:
  bool acceptsInput(int32_t index) const override { return index == 0 || index == 1; }
};

//
// OneHot
//

class OneHotLayer final : public LayerBase<IOneHotLayer> {
 public:
  OneHotLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kONE_HOT, node) {}
  void setAxis(int32_t axis) noexcept override { setInt("axis", axis); }
  int32_t getAxis() const noexcept override { return static_cast<int32_t>(node_->attrs.getInt("axis", -1)); }

 protected:
  bool acceptsInput(int32_t index) const override { return index >= 0 && index <= 2; }
};

//
// ReverseSequence
//

class ReverseSequenceLayer final : public LayerBase<IReverseSequenceLayer> {
 public:
  ReverseSequenceLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kREVERSE_SEQUENCE, node) {}
  void setBatchAxis(int32_t batchAxis) noexcept override { setInt("batch_axis", batchAxis); }
  int32_t getBatchAxis() const noexcept override {
    return static_cast<int32_t>(node_->attrs.getInt("batch_axis", 1));
  }
  void setSequenceAxis(int32_t sequenceAxis) noexcept override { setInt("sequence_axis", sequenceAxis); }
  int32_t getSequenceAxis() const noexcept override {
    return static_cast<int32_t>(node_->attrs.getInt("sequence_axis", 0));
  }

 protected:
  bool acceptsInput(int32_t index) const override { return index == 0 || index == 1; }
};

//
// Assertion
//

class AssertionLayer final : public LayerBase<IAssertionLayer> {
 public:
  AssertionLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kASSERTION, node) {
    message_ = node->attrs.getString("message");
  }
  void setMessage(char const* message) noexcept override {
    if (!message) return error("setMessage: message is null");
    message_ = message;
    node_->attrs.setString("message", message_);
    net_.markChanged(node_);
  }
  char const* getMessage() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

//
// Select
//

class SelectLayer final : public LayerBase<ISelectLayer> {
 public:
  SelectLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kSELECT, node) {}

 protected:
  bool acceptsInput(int32_t index) const override { return index >= 0 && index <= 2; }
};

//
// Fill
//

class FillLayer final : public LayerBase<IFillLayer> {
 public:
  FillLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kFILL, node) {}
  void setDimensions(Dims const& dimensions) noexcept override {
    if (dimensions.nbDims < 0 || dimensions.nbDims > Dims::MAX_DIMS)
      return error(strCat("setDimensions: invalid rank ", dimensions.nbDims));
    for (int32_t i = 0; i < dimensions.nbDims; ++i)
      if (dimensions.d[i] < 0) return error(strCat("setDimensions: negative extent in ", dimsToString(dimensions)));
    if (node_->input(0)) net_.setNodeInput(node_, 0, nullptr);
    setInts("dims", toInts(dimensions));
  }
  Dims getDimensions() const noexcept override {
    if (node_->input(0)) {
      Dims d{};
      d.nbDims = -1;
      return d;
    }
    Dims d = toDims(node_->attrs.getInts("dims"));
    d.nbDims = static_cast<int32_t>(node_->attrs.getInts("dims").size());
    return d;
  }
  void setOperation(FillOperation op) noexcept override {
    if (!validEnum(op)) return error(strCat("setOperation: unknown fill operation ", static_cast<int32_t>(op)));
    setInt("op", static_cast<int64_t>(op));
  }
  FillOperation getOperation() const noexcept override { return static_cast<FillOperation>(node_->attrs.getInt("op")); }
  void setAlpha(double alpha) noexcept override {
    setFloat("alpha", alpha);
    setInt("alpha_beta_int64", 0);
  }
  double getAlpha() const noexcept override { return node_->attrs.getFloat("alpha", 0.0); }
  void setBeta(double beta) noexcept override {
    setFloat("beta", beta);
    setInt("alpha_beta_int64", 0);
  }
  double getBeta() const noexcept override { return node_->attrs.getFloat("beta", 1.0); }
  void setAlphaInt64(int64_t alpha) noexcept override {
    setInt("alpha_int", alpha);
    setInt("alpha_beta_int64", 1);
  }
  int64_t getAlphaInt64() const noexcept override { return node_->attrs.getInt("alpha_int", 0); }
  void setBetaInt64(int64_t beta) noexcept override {
    setInt("beta_int", beta);
    setInt("alpha_beta_int64", 1);
  }
  int64_t getBetaInt64() const noexcept override { return node_->attrs.getInt("beta_int", 1); }
  bool isAlphaBetaInt64() const noexcept override { return node_->attrs.getInt("alpha_beta_int64") != 0; }
  void setToType(DataType toType) noexcept override {
    if (toType == DataType::kBOOL || !isSupportedType(toType))
      return error(strCat("setToType: cannot fill ", dataTypeName(toType), " tensors"));
    setInt("to", static_cast<int64_t>(toType));
  }
  DataType getToType() const noexcept override {
    return static_cast<DataType>(node_->attrs.getInt("to", static_cast<int64_t>(DataType::kFLOAT)));
  }

 protected:
  bool acceptsInput(int32_t index) const override { return index >= 0 && index <= 2; }
  void onInputSet(int32_t index) override {
    if (index == 0) eraseAttr("dims");
  }
};

}  // namespace

ITopKLayer* addTopKLayer(NetworkImpl& net, ITensor& input, TopKOperation op, int32_t k, uint32_t reduceAxes,
                         DataType indicesType) {
  TensorImpl* x = net.own(input, "addTopK");
  if (!x) return nullptr;
  auto fail = [&](std::string const& m) { return failAdd<ITopKLayer>(net, "addTopK", LayerType::kTOPK, m); };
  if (!validEnum(op)) return fail(strCat("unknown TopK operation ", static_cast<int32_t>(op)));
  if (k < 0) return fail(strCat("k must be >= 0, not ", k));
  if (std::popcount(reduceAxes) != 1) return fail("reduceAxes must have exactly one bit set");
  int32_t axis = std::countr_zero(reduceAxes);
  int32_t rank = x->getDimensions().nbDims;
  if (rank >= 0 && axis >= rank) return fail(strCat("axis ", axis, " is out of range for rank ", rank));
  if (!isIndexType(indicesType)) return fail(strCat("indices must be int32 or int64, not ", dataTypeName(indicesType)));
  ir::Node* n = net.addLayerNode(ir::OpType::kTopK, LayerType::kTOPK, {x->value()}, 2);
  n->attrs.setInt("op", static_cast<int64_t>(op));
  n->attrs.setInt("k", k);
  n->attrs.setInt("axis", axis);
  n->attrs.setInt("indices_type", static_cast<int64_t>(indicesType));
  return net.adoptLayer(std::make_unique<TopKLayer>(net, n));
}

INMSLayer* addNMSLayer(NetworkImpl& net, ITensor& boxes, ITensor& scores, ITensor& maxOutputBoxesPerClass,
                       DataType indicesType) {
  TensorImpl* b = net.own(boxes, "addNMS");
  TensorImpl* s = b ? net.own(scores, "addNMS") : nullptr;
  TensorImpl* m = s ? net.own(maxOutputBoxesPerClass, "addNMS") : nullptr;
  if (!m) return nullptr;
  if (!isIndexType(indicesType))
    return failAdd<INMSLayer>(net, "addNMS", LayerType::kNMS,
                              strCat("indices must be int32 or int64, not ", dataTypeName(indicesType)));
  ir::Node* n = net.addLayerNode(ir::OpType::kNMS, LayerType::kNMS, {b->value(), s->value(), m->value()}, 2);
  n->attrs.setInt("box_format", static_cast<int64_t>(BoundingBoxFormat::kCORNER_PAIRS));
  n->attrs.setInt("topk_box_limit", 5000);
  n->attrs.setInt("indices_type", static_cast<int64_t>(indicesType));
  return net.adoptLayer(std::make_unique<NMSLayer>(net, n));
}

INonZeroLayer* addNonZeroLayer(NetworkImpl& net, ITensor& input, DataType indicesType) {
  TensorImpl* x = net.own(input, "addNonZero");
  if (!x) return nullptr;
  if (!isIndexType(indicesType))
    return failAdd<INonZeroLayer>(net, "addNonZero", LayerType::kNON_ZERO,
                                  strCat("indices must be int32 or int64, not ", dataTypeName(indicesType)));
  ir::Node* n = net.addLayerNode(ir::OpType::kNonZero, LayerType::kNON_ZERO, {x->value()});
  n->attrs.setInt("indices_type", static_cast<int64_t>(indicesType));
  return net.adoptLayer(std::make_unique<NonZeroLayer>(net, n));
}

ICumulativeLayer* addCumulativeLayer(NetworkImpl& net, ITensor& input, ITensor& axis, CumulativeOperation operation,
                                     bool exclusive, bool reverse) {
  TensorImpl* x = net.own(input, "addCumulative");
  TensorImpl* a = x ? net.own(axis, "addCumulative") : nullptr;
  if (!a) return nullptr;
  if (!validEnum(operation))
    return failAdd<ICumulativeLayer>(net, "addCumulative", LayerType::kCUMULATIVE,
                                     strCat("unknown cumulative operation ", static_cast<int32_t>(operation)));
  ir::Node* n = net.addLayerNode(ir::OpType::kCumulative, LayerType::kCUMULATIVE, {x->value(), a->value()});
  n->attrs.setInt("op", static_cast<int64_t>(operation));
  n->attrs.setInt("exclusive", exclusive);
  n->attrs.setInt("reverse", reverse);
  return net.adoptLayer(std::make_unique<CumulativeLayer>(net, n));
}

IOneHotLayer* addOneHotLayer(NetworkImpl& net, ITensor& indices, ITensor& values, ITensor& depth, int32_t axis) {
  TensorImpl* i = net.own(indices, "addOneHot");
  TensorImpl* v = i ? net.own(values, "addOneHot") : nullptr;
  TensorImpl* d = v ? net.own(depth, "addOneHot") : nullptr;
  if (!d) return nullptr;
  ir::Node* n = net.addLayerNode(ir::OpType::kOneHot, LayerType::kONE_HOT, {i->value(), v->value(), d->value()});
  n->attrs.setInt("axis", axis);
  return net.adoptLayer(std::make_unique<OneHotLayer>(net, n));
}

IReverseSequenceLayer* addReverseSequenceLayer(NetworkImpl& net, ITensor& input, ITensor& sequenceLens) {
  TensorImpl* x = net.own(input, "addReverseSequence");
  TensorImpl* l = x ? net.own(sequenceLens, "addReverseSequence") : nullptr;
  if (!l) return nullptr;
  ir::Node* n = net.addLayerNode(ir::OpType::kReverseSequence, LayerType::kREVERSE_SEQUENCE, {x->value(), l->value()});
  n->attrs.setInt("batch_axis", 1);
  n->attrs.setInt("sequence_axis", 0);
  return net.adoptLayer(std::make_unique<ReverseSequenceLayer>(net, n));
}

IAssertionLayer* addAssertionLayer(NetworkImpl& net, ITensor& condition, char const* message) {
  TensorImpl* c = net.own(condition, "addAssertion");
  if (!c) return nullptr;
  if (!message) return failAdd<IAssertionLayer>(net, "addAssertion", LayerType::kASSERTION, "message is null");
  ir::Node* n = net.addLayerNode(ir::OpType::kAssertion, LayerType::kASSERTION, {c->value()}, 0);
  n->attrs.setString("message", message);
  return net.adoptLayer(std::make_unique<AssertionLayer>(net, n));
}

ISelectLayer* addSelectLayer(NetworkImpl& net, ITensor& condition, ITensor& thenInput, ITensor& elseInput) {
  TensorImpl* c = net.own(condition, "addSelect");
  TensorImpl* t = c ? net.own(thenInput, "addSelect") : nullptr;
  TensorImpl* e = t ? net.own(elseInput, "addSelect") : nullptr;
  if (!e) return nullptr;
  ir::Node* n = net.addLayerNode(ir::OpType::kSelect, LayerType::kSELECT, {c->value(), t->value(), e->value()});
  return net.adoptLayer(std::make_unique<SelectLayer>(net, n));
}

IFillLayer* addFillLayer(NetworkImpl& net, Dims const& dimensions, FillOperation op, DataType outputType) {
  auto fail = [&](std::string const& m) { return failAdd<IFillLayer>(net, "addFill", LayerType::kFILL, m); };
  if (!validEnum(op)) return fail(strCat("unknown fill operation ", static_cast<int32_t>(op)));
  if (outputType == DataType::kBOOL || !isSupportedType(outputType))
    return fail(strCat("cannot fill ", dataTypeName(outputType), " tensors"));
  if (dimensions.nbDims < 0 || dimensions.nbDims > Dims::MAX_DIMS)
    return fail(strCat("invalid rank ", dimensions.nbDims));
  for (int32_t i = 0; i < dimensions.nbDims; ++i)
    if (dimensions.d[i] < 0) return fail(strCat("negative extent in ", dimsToString(dimensions)));
  ir::Node* n = net.addLayerNode(ir::OpType::kFill, LayerType::kFILL, {});
  n->attrs.setInt("op", static_cast<int64_t>(op));
  n->attrs.setInts("dims", toInts(dimensions));
  n->attrs.setFloat("alpha", 0.0);
  n->attrs.setFloat("beta", 1.0);
  n->attrs.setInt("alpha_int", 0);
  n->attrs.setInt("beta_int", 1);
  n->attrs.setInt("alpha_beta_int64", 0);
  n->attrs.setInt("to", static_cast<int64_t>(outputType));
  n->attrs.setInt("seed", 0);
  return net.adoptLayer(std::make_unique<FillLayer>(net, n));
}

}  // namespace kiln::network
