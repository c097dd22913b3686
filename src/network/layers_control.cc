// Control-flow family: IIfConditional and ILoop with their boundary layers (factories declared in
// network/layer_factories.h). Bodies become ir::Node::subgraphs of If/Loop nodes (see ir/ops.def).
//
// How it works. While the user builds the network, the flat network graph holds every layer, those between the
// boundary layers included, so that tensors, shapes and getters behave as for any other layer. A boundary layer
// is a node of op If (conditional) or Loop (loop) with no subgraphs and a string attribute "boundary" naming its
// role (condition, if_input, if_output, trip_limit, recurrence, iterator, loop_output); the If/Loop shape
// inference (ir/infer/control_flow_infer.cc) gives such nodes their flat shapes. A recurrence's next value
// (IRecurrenceLayer::setInput(1)) is kept by the layer object, not as a graph edge, so the flat graph stays
// acyclic.
//
// The bodies are extracted when the builder asks for the graph (NetworkImpl::graph() calls
// lowerControlFlow()): on a copy of the flat graph, innermost construct first, the layers that depend on a
// construct's recurrences/iterators (loop) or conditional inputs (if) move into the subgraph of one new
// Loop/If node; outer tensors they read become captured inputs (Constants are copied in instead, so that
// kernels still see constant weights). The network itself is never changed. kCONCATENATE/kREVERSE outputs'
// length input (setInput(1)) is checked against the trip count when both are build-time constants and
// otherwise ignored (the output length is the number of iterations run).
#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "ir/shape_inference.h"
#include "network/layer_factories.h"
#include "network/layers.h"

namespace kiln::network {

namespace {

// Deepest nesting of ILoop/IIfConditional accepted (as in shape inference and the kernels).
constexpr int kMaxControlFlowDepth = 16;

class IfConditionalImpl;
class LoopImpl;

// Every construct of one network, and the lowered graph handed to the builder.
struct ControlFlowState {
  NetworkImpl const* net = nullptr;
  std::vector<IfConditionalImpl*> conditionals;
  std::vector<LoopImpl*> loops;
  std::unique_ptr<ir::Graph> lowered;
  ~ControlFlowState();
};

std::mutex& registryMutex() {
  static std::mutex m;
  return m;
}
std::unordered_map<NetworkImpl const*, ControlFlowState*>& registry() {
  static std::unordered_map<NetworkImpl const*, ControlFlowState*> r;
  return r;
}

ControlFlowState::~ControlFlowState() {
  std::lock_guard<std::mutex> lock(registryMutex());
  auto it = registry().find(net);
  if (it != registry().end() && it->second == this) registry().erase(it);
}

ControlFlowState* findState(NetworkImpl const& net) {
  std::lock_guard<std::mutex> lock(registryMutex());
  auto it = registry().find(&net);
  return it == registry().end() ? nullptr : it->second;
}

ControlFlowState& stateOf(NetworkImpl& net) {
  if (ControlFlowState* s = findState(net)) return *s;
  auto s = std::make_unique<ControlFlowState>();
  s->net = &net;
  ControlFlowState* raw = net.keepAlive(std::move(s));
  std::lock_guard<std::mutex> lock(registryMutex());
  registry()[&net] = raw;
  return *raw;
}

//
// Boundary layers
//

template <typename I, typename Owner>
class BoundaryLayer : public LayerBase<I> {
 public:
  BoundaryLayer(NetworkImpl& net, LayerType type, ir::Node* node, Owner* owner)
      : LayerBase<I>(net, type, node), owner_(owner) {}

 protected:
  Owner* owner_;
};

class ConditionLayer final : public BoundaryLayer<IConditionLayer, IIfConditional> {
 public:
  using BoundaryLayer::BoundaryLayer;
  IIfConditional* getConditional() const noexcept override { return owner_; }
};

class IfInputLayer final : public BoundaryLayer<IIfConditionalInputLayer, IIfConditional> {
 public:
  using BoundaryLayer::BoundaryLayer;
  IIfConditional* getConditional() const noexcept override { return owner_; }
};

class IfOutputLayer final : public BoundaryLayer<IIfConditionalOutputLayer, IIfConditional> {
 public:
  using BoundaryLayer::BoundaryLayer;
  IIfConditional* getConditional() const noexcept override { return owner_; }

 protected:
  bool acceptsInput(int32_t index) const override { return index == 0 || index == 1; }
};

class RecurrenceLayer final : public BoundaryLayer<IRecurrenceLayer, ILoop> {
 public:
  using BoundaryLayer::BoundaryLayer;
  ILoop* getLoop() const noexcept override { return owner_; }
  int32_t getNbInputs() const noexcept override { return next_ ? 2 : 1; }
  ITensor* getInput(int32_t index) const noexcept override {
    if (index == 1) return net_.tensorOf(next_);
    return doGetInput(index);
  }
  void setInput(int32_t index, ITensor& tensor) noexcept override {
    if (index != 1) return doSetInput(index, tensor);
    TensorImpl* t = net_.own(tensor, strCat("layer '", node_->name, "' setInput"));
    if (!t) return;
    next_ = t->value();  // not a graph edge: it would close a cycle (see the file comment)
  }
  ir::Value* next() const { return next_; }

 private:
  ir::Value* next_ = nullptr;
};

class TripLimitLayer final : public BoundaryLayer<ITripLimitLayer, ILoop> {
 public:
  TripLimitLayer(NetworkImpl& net, ir::Node* node, ILoop* owner, TripLimit kind)
      : BoundaryLayer(net, LayerType::kTRIP_LIMIT, node, owner), kind_(kind) {}
  ILoop* getLoop() const noexcept override { return owner_; }
  TripLimit getTripLimit() const noexcept override { return kind_; }

 private:
  TripLimit kind_;
};

class IteratorLayer final : public BoundaryLayer<IIteratorLayer, ILoop> {
 public:
  using BoundaryLayer::BoundaryLayer;
  ILoop* getLoop() const noexcept override { return owner_; }
  void setAxis(int32_t axis) noexcept override { setInt("axis", axis); }
  int32_t getAxis() const noexcept override { return static_cast<int32_t>(node_->attrs.getInt("axis", 0)); }
  void setReverse(bool reverse) noexcept override { setInt("reverse", reverse ? 1 : 0); }
  bool getReverse() const noexcept override { return node_->attrs.getInt("reverse", 0) != 0; }
};

class LoopOutputLayer final : public BoundaryLayer<ILoopOutputLayer, ILoop> {
 public:
  using BoundaryLayer::BoundaryLayer;
  ILoop* getLoop() const noexcept override { return owner_; }
  LoopOutput getLoopOutput() const noexcept override {
    return static_cast<LoopOutput>(node_->attrs.getInt("kind", 0));
  }
  void setAxis(int32_t axis) noexcept override { setInt("axis", axis); }
  int32_t getAxis() const noexcept override { return static_cast<int32_t>(node_->attrs.getInt("axis", 0)); }

 protected:
  bool acceptsInput(int32_t index) const override {
    return index == 0 || (index == 1 && getLoopOutput() != LoopOutput::kLAST_VALUE);
  }
};

//
// IIfConditional / ILoop
//

class IfConditionalImpl final : public IIfConditional {
 public:
  IfConditionalImpl(NetworkImpl& net, std::string name) : net_(net), name_(std::move(name)) {}

  IConditionLayer* setCondition(ITensor& condition) noexcept override {
    TensorImpl* c = net_.own(condition, strCat("IIfConditional '", name_, "' setCondition"));
    if (!c) return nullptr;
    if (condition_) {
      net_.reporter().fail(invalidArgument("IIfConditional '", name_, "': setCondition was already called"));
      return nullptr;
    }
    ir::Node* n = net_.addLayerNode(ir::OpType::kIf, LayerType::kCONDITION, {c->value()}, 0);
    n->attrs.setString("boundary", "condition");
    condition_ = net_.adoptLayer(std::make_unique<ConditionLayer>(net_, LayerType::kCONDITION, n, this));
    return condition_;
  }

  IIfConditionalOutputLayer* addOutput(ITensor& trueOut, ITensor& falseOut) noexcept override {
    std::string api = strCat("IIfConditional '", name_, "' addOutput");
    TensorImpl* t = net_.own(trueOut, api);
    TensorImpl* f = t ? net_.own(falseOut, api) : nullptr;
    if (!f) return nullptr;
    ir::Node* n = net_.addLayerNode(ir::OpType::kIf, LayerType::kCONDITIONAL_OUTPUT, {t->value(), f->value()});
    n->attrs.setString("boundary", "if_output");
    auto* l = net_.adoptLayer(std::make_unique<IfOutputLayer>(net_, LayerType::kCONDITIONAL_OUTPUT, n, this));
    outputs_.push_back(l);
    return l;
  }

  IIfConditionalInputLayer* addInput(ITensor& input) noexcept override {
    TensorImpl* x = net_.own(input, strCat("IIfConditional '", name_, "' addInput"));
    if (!x) return nullptr;
    ir::Node* n = net_.addLayerNode(ir::OpType::kIf, LayerType::kCONDITIONAL_INPUT, {x->value()});
    n->attrs.setString("boundary", "if_input");
    auto* l = net_.adoptLayer(std::make_unique<IfInputLayer>(net_, LayerType::kCONDITIONAL_INPUT, n, this));
    inputs_.push_back(l);
    return l;
  }

  void setName(char const* name) noexcept override {
    if (!name || !*name) {
      net_.reporter().fail(invalidArgument("IIfConditional '", name_, "' setName: the name is empty"));
      return;
    }
    name_ = name;
  }
  char const* getName() const noexcept override { return name_.c_str(); }

  std::string const& name() const { return name_; }
  ConditionLayer* condition() const { return condition_; }
  std::vector<IfInputLayer*> const& inputs() const { return inputs_; }
  std::vector<IfOutputLayer*> const& outputs() const { return outputs_; }

 private:
  NetworkImpl& net_;
  std::string name_;
  ConditionLayer* condition_ = nullptr;
  std::vector<IfInputLayer*> inputs_;
  std::vector<IfOutputLayer*> outputs_;
};

class LoopImpl final : public ILoop {
 public:
  LoopImpl(NetworkImpl& net, std::string name) : net_(net), name_(std::move(name)) {}

  IRecurrenceLayer* addRecurrence(ITensor& initialValue) noexcept override {
    TensorImpl* x = net_.own(initialValue, strCat("ILoop '", name_, "' addRecurrence"));
    if (!x) return nullptr;
    ir::Node* n = net_.addLayerNode(ir::OpType::kLoop, LayerType::kRECURRENCE, {x->value()});
    n->attrs.setString("boundary", "recurrence");
    auto* l = net_.adoptLayer(std::make_unique<RecurrenceLayer>(net_, LayerType::kRECURRENCE, n, this));
    recurrences_.push_back(l);
    return l;
  }

  ITripLimitLayer* addTripLimit(ITensor& tensor, TripLimit limit) noexcept override {
    std::string api = strCat("ILoop '", name_, "' addTripLimit");
    TensorImpl* x = net_.own(tensor, api);
    if (!x) return nullptr;
    if (!validEnum(limit)) {
      net_.reporter().fail(invalidArgument(api, ": unknown TripLimit ", static_cast<int32_t>(limit)));
      return nullptr;
    }
    TripLimitLayer*& slot = limit == TripLimit::kCOUNT ? count_ : while_;
    if (slot) {
      net_.reporter().fail(invalidArgument(api, ": the loop already has a ",
                                           limit == TripLimit::kCOUNT ? "kCOUNT" : "kWHILE", " trip limit"));
      return nullptr;
    }
    ir::Node* n = net_.addLayerNode(ir::OpType::kLoop, LayerType::kTRIP_LIMIT, {x->value()}, 0);
    n->attrs.setString("boundary", "trip_limit");
    n->attrs.setInt("limit", static_cast<int64_t>(limit));
    slot = net_.adoptLayer(std::make_unique<TripLimitLayer>(net_, n, this, limit));
    return slot;
  }

  IIteratorLayer* addIterator(ITensor& tensor, int32_t axis, bool reverse) noexcept override {
    TensorImpl* x = net_.own(tensor, strCat("ILoop '", name_, "' addIterator"));
    if (!x) return nullptr;
    ir::Node* n = net_.addLayerNode(ir::OpType::kLoop, LayerType::kITERATOR, {x->value()});
    n->attrs.setString("boundary", "iterator");
    n->attrs.setInt("axis", axis);
    n->attrs.setInt("reverse", reverse ? 1 : 0);
    auto* l = net_.adoptLayer(std::make_unique<IteratorLayer>(net_, LayerType::kITERATOR, n, this));
    iterators_.push_back(l);
    return l;
  }

  ILoopOutputLayer* addLoopOutput(ITensor& tensor, LoopOutput kind, int32_t axis) noexcept override {
    std::string api = strCat("ILoop '", name_, "' addLoopOutput");
    TensorImpl* x = net_.own(tensor, api);
    if (!x) return nullptr;
    if (!validEnum(kind)) {
      net_.reporter().fail(invalidArgument(api, ": unknown LoopOutput ", static_cast<int32_t>(kind)));
      return nullptr;
    }
    ir::Node* n = net_.addLayerNode(ir::OpType::kLoop, LayerType::kLOOP_OUTPUT, {x->value()});
    n->attrs.setString("boundary", "loop_output");
    n->attrs.setInt("kind", static_cast<int64_t>(kind));
    n->attrs.setInt("axis", axis);
    auto* l = net_.adoptLayer(std::make_unique<LoopOutputLayer>(net_, LayerType::kLOOP_OUTPUT, n, this));
    outputs_.push_back(l);
    return l;
  }

  void setName(char const* name) noexcept override {
    if (!name || !*name) {
      net_.reporter().fail(invalidArgument("ILoop '", name_, "' setName: the name is empty"));
      return;
    }
    name_ = name;
  }
  char const* getName() const noexcept override { return name_.c_str(); }

  std::string const& name() const { return name_; }
  std::vector<RecurrenceLayer*> const& recurrences() const { return recurrences_; }
  std::vector<IteratorLayer*> const& iterators() const { return iterators_; }
  std::vector<LoopOutputLayer*> const& outputs() const { return outputs_; }
  TripLimitLayer* countLimit() const { return count_; }
  TripLimitLayer* whileLimit() const { return while_; }

 private:
  NetworkImpl& net_;
  std::string name_;
  std::vector<RecurrenceLayer*> recurrences_;
  std::vector<IteratorLayer*> iterators_;
  std::vector<LoopOutputLayer*> outputs_;
  TripLimitLayer* count_ = nullptr;
  TripLimitLayer* while_ = nullptr;
};

//
// Lowering: flat graph -> If/Loop nodes with subgraphs
//

// One construct, in terms of the working copy of the graph.
struct Construct {
  bool isLoop = false;
  std::string what;  // "loop 'name'" / "conditional 'name'"
  std::unordered_set<ir::Node*> boundary;
  // Loop.
  std::vector<std::pair<ir::Node*, ir::Value*>> recurrences;  // node, next value
  std::vector<ir::Node*> iterators;
  std::vector<ir::Node*> outputs;  // loop or conditional outputs
  ir::Value* tripCount = nullptr;
  ir::Value* whileCond = nullptr;
  // Conditional.
  ir::Value* condition = nullptr;
  std::vector<ir::Node*> inputs;
};

class Lowering {
 public:
  explicit Lowering(ir::Graph& g) : g_(g) {}

  Status run(std::vector<Construct> constructs) {
    all_ = &constructs;
    std::vector<bool> done(constructs.size(), false);
    for (size_t remaining = constructs.size(); remaining > 0;) {
      bool progress = false;
      for (size_t i = 0; i < constructs.size(); ++i) {
        if (done[i]) continue;
        KILN_ASSIGN_OR_RETURN(std::vector<ir::Node*> inside, insideNodes(constructs[i]));
        bool innermost = true;
        for (ir::Node* n : inside)
          for (size_t j = 0; j < constructs.size() && innermost; ++j)
            if (j != i && !done[j] && constructs[j].boundary.count(n)) innermost = false;
        if (!innermost) continue;
        KILN_RETURN_IF_ERROR(constructs[i].isLoop ? lowerLoop(constructs[i], inside)
                                                  : lowerIf(constructs[i], inside));
        done[i] = true;
        --remaining;
        progress = true;
      }
      if (!progress) {
        for (size_t i = 0; i < constructs.size(); ++i)
          if (!done[i])
            return invalidArgument(constructs[i].what, ": its layers are interleaved with another loop or conditional "
                                   "(a tensor computed inside it is used outside without a loop/conditional output?)");
      }
    }
    return g_.renumber();
  }

 private:
  // Nodes that depend on the construct's seeds, stopping at its own outputs (topological order).
  Result<std::vector<ir::Node*>> insideNodes(Construct const& c) {
    std::unordered_set<ir::Value const*> reached;
    if (c.isLoop) {
      for (auto const& r : c.recurrences) reached.insert(r.first->outputs[0]);
      for (ir::Node* it : c.iterators) reached.insert(it->outputs[0]);
    } else {
      for (ir::Node* in : c.inputs) reached.insert(in->outputs[0]);
    }
    KILN_ASSIGN_OR_RETURN(std::vector<ir::Node*> topo, g_.topoOrder());
    std::vector<ir::Node*> inside;
    for (ir::Node* n : topo) {
      if (c.boundary.count(n)) continue;
      bool dep = false;
      for (ir::Value* v : n->inputs) dep = dep || (v && reached.count(v));
      if (!dep) continue;
      inside.push_back(n);
      for (ir::Value* v : n->outputs) reached.insert(v);
    }
    return inside;
  }

  // Copies `n` into `b` reading mapped inputs (capturing or copying outer values as needed).
  struct Body {
    ir::Graph* g = nullptr;
    std::unordered_map<ir::Value const*, ir::Value*> map;  // working graph value -> body value
    std::vector<ir::Value*> captured;                       // outer values, in body input order
  };

  Result<ir::Value*> mapped(Body& b, ir::Value* v) {
    auto it = b.map.find(v);
    if (it != b.map.end()) return it->second;
    ir::Value* r = nullptr;
    if (v->producer && v->producer->op == ir::OpType::kConstant && v->producer->constant) {
      ir::Node* c = b.g->addConstant(b.g->uniqueNodeName(v->producer->name), *v->producer->constant);
      r = c->outputs[0];
    } else {
      KILN_ASSIGN_OR_RETURN(r, b.g->addInput(b.g->uniqueValueName(v->name), v->dtype, v->shape));
      b.captured.push_back(v);
    }
    b.map[v] = r;
    return r;
  }

  Status copyNodes(Body& b, std::vector<ir::Node*> const& nodes) {
    for (ir::Node* n : nodes) {
      std::vector<ir::Value*> ins;
      for (ir::Value* v : n->inputs) {
        if (!v) {
          ins.push_back(nullptr);
          continue;
        }
        KILN_ASSIGN_OR_RETURN(ir::Value* m, mapped(b, v));
        ins.push_back(m);
      }
      ir::Node* c = b.g->addNode(n->op, n->name, ins, static_cast<int>(n->outputs.size()));
      c->attrs = n->attrs;
      c->constant = n->constant;
      c->precision = n->precision;
      c->fusedFrom = n->fusedFrom;
      for (auto const& s : n->subgraphs) c->subgraphs.push_back(s ? s->clone() : nullptr);
      for (size_t i = 0; i < n->outputs.size(); ++i) {
        ir::Value* o = c->outputs[i];
        ir::Value* src = n->outputs[i];
        o->dtype = src->dtype;
        o->shape = src->shape;
        o->requestedType = src->requestedType;
        if (!b.g->findValue(src->name)) KILN_RETURN_IF_ERROR(b.g->renameValue(o, src->name));
        b.map[src] = o;
      }
    }
    return Status::ok();
  }

  // Marks `v` as the next output of body `b` (through an Identity when it is already an output).
  void addBodyOutput(Body& b, ir::Value* v) {
    if (v->isOutput) {
      ir::Node* id = b.g->addNode(ir::OpType::kIdentity, b.g->uniqueNodeName(v->name + "_copy"), {v});
      id->outputs[0]->dtype = v->dtype;
      id->outputs[0]->shape = v->shape;
      v = id->outputs[0];
    }
    b.g->markOutput(v);
  }

  // Values produced inside (or seeds) must not be read by nodes outside the construct.
  Status checkNoLeak(Construct const& c, std::vector<ir::Node*> const& inside,
                     std::unordered_set<ir::Value const*> const& innerValues) {
    std::unordered_set<ir::Node const*> in(inside.begin(), inside.end());
    for (auto const& np : g_.nodes()) {
      ir::Node const* n = np.get();
      if (in.count(n) || c.boundary.count(const_cast<ir::Node*>(n))) continue;
      for (ir::Value const* v : n->inputs)
        if (v && innerValues.count(v))
          return invalidArgument(c.what, ": tensor '", v->name, "' is computed inside it but read by ", n->describe(),
                                 " outside it; pass it through ", c.isLoop ? "addLoopOutput" : "addOutput");
    }
    for (ir::Value const* v : g_.outputs())
      if (innerValues.count(v))
        return invalidArgument(c.what, ": tensor '", v->name, "' is computed inside it but marked as a network "
                               "output; pass it through ", c.isLoop ? "addLoopOutput" : "addOutput");
    return Status::ok();
  }

  int depthOf(std::vector<ir::Node*> const& inside) const {
    int d = 0;
    for (ir::Node* n : inside) {
      auto it = depth_.find(n);
      if (it != depth_.end()) d = std::max(d, it->second);
    }
    return d + 1;
  }

  // Replaces output node `o` by `value` and drops it.
  void replaceOutput(ir::Node* o, ir::Value* value) {
    ir::Value* old = o->outputs[0];
    std::string name = old->name;
    bool wasOutput = old->isOutput;
    g_.replaceAllUses(old, value);
    // Values the other constructs hold outside the graph (next values, limits, conditions) follow too.
    for (Construct& c : *all_) {
      for (auto& r : c.recurrences)
        if (r.second == old) r.second = value;
      if (c.tripCount == old) c.tripCount = value;
      if (c.whileCond == old) c.whileCond = value;
      if (c.condition == old) c.condition = value;
    }
    if (!wasOutput) {
      Status s = g_.renameValue(old, g_.uniqueValueName(name + "_replaced"));
      if (s) (void)g_.renameValue(value, name);
    }
  }

  void removeNodes(std::vector<ir::Node*> const& nodes) {
    for (ir::Node* n : nodes) g_.removeNode(n);
    g_.removeUnusedValues();
  }

  Status lowerLoop(Construct& c, std::vector<ir::Node*> const& inside) {
    int depth = depthOf(inside);
    if (depth > kMaxControlFlowDepth)
      return unsupported(c.what, ": loops and conditionals are nested ", depth, " levels deep; at most ",
                         kMaxControlFlowDepth, " are supported");
    if (!c.tripCount && !c.whileCond && c.iterators.empty())
      return invalidArgument(c.what, ": it has no trip limit (addTripLimit) and no iterator");
    std::unordered_set<ir::Value const*> innerValues;
    for (auto const& r : c.recurrences) innerValues.insert(r.first->outputs[0]);
    for (ir::Node* it : c.iterators) innerValues.insert(it->outputs[0]);
    for (ir::Node* n : inside)
      for (ir::Value* v : n->outputs) innerValues.insert(v);
    if (c.tripCount && innerValues.count(c.tripCount))
      return invalidArgument(c.what, ": its kCOUNT trip limit is computed inside the loop; use kWHILE");
    for (auto const& r : c.recurrences)
      if (!r.second)
        return invalidArgument(c.what, ": recurrence ", r.first->describe(), " has no next value (setInput(1))");
    KILN_RETURN_IF_ERROR(checkNoLeak(c, inside, innerValues));

    auto body = std::make_unique<ir::Graph>();
    Body b{body.get(), {}, {}};
    KILN_RETURN_IF_ERROR(body->addInput("iteration", DataType::kINT64, makeDims({})).status());
    for (auto const& r : c.recurrences) {
      ir::Value* v = r.first->outputs[0];
      KILN_ASSIGN_OR_RETURN(b.map[v], body->addInput(body->uniqueValueName(v->name), v->dtype, v->shape));
    }
    std::vector<int64_t> scanAxes, scanReverse;
    for (ir::Node* it : c.iterators) {
      ir::Value* v = it->outputs[0];
      KILN_ASSIGN_OR_RETURN(b.map[v], body->addInput(body->uniqueValueName(v->name), v->dtype, v->shape));
      scanAxes.push_back(it->attrs.getInt("axis", 0));
      scanReverse.push_back(it->attrs.getInt("reverse", 0));
    }
    KILN_RETURN_IF_ERROR(copyNodes(b, inside));
    if (c.whileCond) {
      KILN_ASSIGN_OR_RETURN(ir::Value* cond, mapped(b, c.whileCond));
      addBodyOutput(b, cond);
    }
    size_t condOut = c.whileCond ? 1 : 0;
    std::unordered_map<ir::Value const*, size_t> carriedIndex;
    for (size_t i = 0; i < c.recurrences.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(ir::Value* next, mapped(b, c.recurrences[i].second));
      addBodyOutput(b, next);
      carriedIndex[c.recurrences[i].first->outputs[0]] = condOut + i;
    }
    std::vector<int64_t> sources, kinds, axes;
    for (ir::Node* o : c.outputs) {
      ir::Value* v = o->inputs[0];
      int64_t kind = o->attrs.getInt("kind", 0);
      auto ci = carriedIndex.find(v);
      if (kind == 0 && ci != carriedIndex.end()) {
        sources.push_back(static_cast<int64_t>(ci->second));  // the final value of a recurrence
      } else {
        KILN_ASSIGN_OR_RETURN(ir::Value* m, mapped(b, v));
        sources.push_back(static_cast<int64_t>(body->outputs().size()));
        addBodyOutput(b, m);
      }
      kinds.push_back(kind);
      axes.push_back(o->attrs.getInt("axis", 0));
    }
    std::vector<ir::Value*> ins{c.tripCount};
    for (auto const& r : c.recurrences) ins.push_back(r.first->inputs[0]);
    for (ir::Node* it : c.iterators) ins.push_back(it->inputs[0]);
    for (ir::Value* v : b.captured) ins.push_back(v);
    ir::Node* loop = g_.addNode(ir::OpType::kLoop, g_.uniqueNodeName(c.what), ins, static_cast<int>(c.outputs.size()));
    loop->attrs.setInt("num_carried", static_cast<int64_t>(c.recurrences.size()));
    loop->attrs.setInt("num_scanned", static_cast<int64_t>(c.iterators.size()));
    loop->attrs.setInts("scan_axes", scanAxes);
    loop->attrs.setInts("scan_reverse", scanReverse);
    loop->attrs.setInt("has_condition", c.whileCond ? 1 : 0);
    loop->attrs.setInts("output_sources", sources);
    loop->attrs.setInts("output_kinds", kinds);
    loop->attrs.setInts("output_axes", axes);
    loop->subgraphs.push_back(std::move(body));
    for (size_t i = 0; i < c.outputs.size(); ++i) {
      loop->outputs[i]->dtype = c.outputs[i]->outputs[0]->dtype;
      loop->outputs[i]->shape = c.outputs[i]->outputs[0]->shape;
      replaceOutput(c.outputs[i], loop->outputs[i]);
    }
    depth_[loop] = depth;
    std::vector<ir::Node*> drop(inside);
    for (ir::Node* n : c.boundary) drop.push_back(n);
    removeNodes(drop);
    return Status::ok();
  }

  Status lowerIf(Construct& c, std::vector<ir::Node*> const& inside) {
    int depth = depthOf(inside);
    if (depth > kMaxControlFlowDepth)
      return unsupported(c.what, ": loops and conditionals are nested ", depth, " levels deep; at most ",
                         kMaxControlFlowDepth, " are supported");
    if (!c.condition) return invalidArgument(c.what, ": it has no condition (setCondition)");
    if (c.outputs.empty()) return invalidArgument(c.what, ": it has no output (addOutput)");
    std::unordered_set<ir::Value const*> innerValues;
    for (ir::Node* in : c.inputs) innerValues.insert(in->outputs[0]);
    for (ir::Node* n : inside)
      for (ir::Value* v : n->outputs) innerValues.insert(v);
    if (innerValues.count(c.condition))
      return invalidArgument(c.what, ": its condition is computed inside the conditional");
    KILN_RETURN_IF_ERROR(checkNoLeak(c, inside, innerValues));
    // The nodes each branch needs: inside nodes that its output values depend on.
    auto branchNodes = [&](int side) {
      std::unordered_set<ir::Value const*> need;
      for (ir::Node* o : c.outputs) need.insert(o->inputs[side]);
      std::vector<ir::Node*> r;
      for (auto it = inside.rbegin(); it != inside.rend(); ++it) {
        bool needed = false;
        for (ir::Value* v : (*it)->outputs) needed = needed || need.count(v);
        if (!needed) continue;
        r.push_back(*it);
        for (ir::Value* v : (*it)->inputs)
          if (v) need.insert(v);
      }
      std::reverse(r.begin(), r.end());
      return r;
    };
    // Both branches take the same inputs: the conditional inputs, then every outer value either captures.
    std::vector<ir::Value*> shared;
    for (ir::Node* in : c.inputs) shared.push_back(in->outputs[0]);
    std::vector<std::unique_ptr<ir::Graph>> graphs;
    for (int pass = 0; pass < 2; ++pass) {
      graphs.clear();
      size_t before = shared.size();
      for (int side = 0; side < 2; ++side) {
        auto g = std::make_unique<ir::Graph>();
        Body b{g.get(), {}, {}};
        for (ir::Value* v : shared) {
          KILN_ASSIGN_OR_RETURN(b.map[v], g->addInput(g->uniqueValueName(v->name), v->dtype, v->shape));
        }
        KILN_RETURN_IF_ERROR(copyNodes(b, branchNodes(side)));
        for (ir::Node* o : c.outputs) {
          KILN_ASSIGN_OR_RETURN(ir::Value* m, mapped(b, o->inputs[side]));
          addBodyOutput(b, m);
        }
        for (ir::Value* v : b.captured)
          if (std::find(shared.begin(), shared.end(), v) == shared.end()) shared.push_back(v);
        graphs.push_back(std::move(g));
      }
      if (shared.size() == before) break;  // no new captured value: both graphs have every input
    }
    std::vector<ir::Value*> ins{c.condition};
    for (ir::Node* in : c.inputs) ins.push_back(in->inputs[0]);
    for (size_t i = c.inputs.size(); i < shared.size(); ++i) ins.push_back(shared[i]);
    ir::Node* node = g_.addNode(ir::OpType::kIf, g_.uniqueNodeName(c.what), ins, static_cast<int>(c.outputs.size()));
    for (auto& g : graphs) node->subgraphs.push_back(std::move(g));
    for (size_t i = 0; i < c.outputs.size(); ++i) {
      node->outputs[i]->dtype = c.outputs[i]->outputs[0]->dtype;
      node->outputs[i]->shape = c.outputs[i]->outputs[0]->shape;
      replaceOutput(c.outputs[i], node->outputs[i]);
    }
    depth_[node] = depth;
    std::vector<ir::Node*> drop(inside);
    for (ir::Node* n : c.boundary) drop.push_back(n);
    removeNodes(drop);
    return Status::ok();
  }

  ir::Graph& g_;
  std::vector<Construct>* all_ = nullptr;
  std::unordered_map<ir::Node const*, int> depth_;
};

Result<std::unique_ptr<ir::Graph>> lower(ControlFlowState const& st, ir::Graph const& flat) {
  std::unique_ptr<ir::Graph> g = flat.clone();
  std::unordered_map<ir::Node const*, ir::Node*> nmap;
  std::unordered_map<ir::Value const*, ir::Value*> vmap;
  for (size_t i = 0; i < flat.nodes().size(); ++i) nmap[flat.nodes()[i].get()] = g->nodes()[i].get();
  for (size_t i = 0; i < flat.values().size(); ++i) vmap[flat.values()[i].get()] = g->values()[i].get();
  auto node = [&](LayerState const* l) { return nmap.at(l->node()); };
  std::vector<Construct> cs;
  for (LoopImpl const* l : st.loops) {
    Construct c;
    c.isLoop = true;
    c.what = strCat("loop '", l->name(), "'");
    for (RecurrenceLayer const* r : l->recurrences()) {
      ir::Value* next = r->next() ? vmap.at(r->next()) : nullptr;
      c.recurrences.push_back({node(r), next});
      c.boundary.insert(node(r));
    }
    for (IteratorLayer const* it : l->iterators()) {
      c.iterators.push_back(node(it));
      c.boundary.insert(node(it));
    }
    for (LoopOutputLayer const* o : l->outputs()) {
      c.outputs.push_back(node(o));
      c.boundary.insert(node(o));
    }
    if (l->countLimit()) {
      c.tripCount = node(l->countLimit())->inputs[0];
      c.boundary.insert(node(l->countLimit()));
    }
    if (l->whileLimit()) {
      c.whileCond = node(l->whileLimit())->inputs[0];
      c.boundary.insert(node(l->whileLimit()));
    }
    if (c.boundary.empty()) continue;  // an empty loop: nothing to lower
    cs.push_back(std::move(c));
  }
  for (IfConditionalImpl const* f : st.conditionals) {
    Construct c;
    c.what = strCat("conditional '", f->name(), "'");
    if (f->condition()) {
      c.condition = node(f->condition())->inputs[0];
      c.boundary.insert(node(f->condition()));
    }
    for (IfInputLayer const* in : f->inputs()) {
      c.inputs.push_back(node(in));
      c.boundary.insert(node(in));
    }
    for (IfOutputLayer const* o : f->outputs()) {
      c.outputs.push_back(node(o));
      c.boundary.insert(node(o));
    }
    if (c.boundary.empty()) continue;
    cs.push_back(std::move(c));
  }
  Lowering lowering(*g);
  KILN_RETURN_IF_ERROR(lowering.run(std::move(cs)));
  return g;
}

}  // namespace

IIfConditional* addIfConditionalLayer(NetworkImpl& net) {
  ControlFlowState& st = stateOf(net);
  auto c = std::make_unique<IfConditionalImpl>(net, strCat("(Unnamed IfConditional ", st.conditionals.size(), ")"));
  IfConditionalImpl* raw = net.keepAlive(std::move(c));
  st.conditionals.push_back(raw);
  return raw;
}

ILoop* addLoopLayer(NetworkImpl& net) {
  ControlFlowState& st = stateOf(net);
  auto l = std::make_unique<LoopImpl>(net, strCat("(Unnamed Loop ", st.loops.size(), ")"));
  LoopImpl* raw = net.keepAlive(std::move(l));
  st.loops.push_back(raw);
  return raw;
}

ir::Graph const& lowerControlFlow(NetworkImpl const& net, ir::Graph const& flat) {
  ControlFlowState* st = findState(net);
  if (!st || (st->loops.empty() && st->conditionals.empty())) return flat;
  Result<std::unique_ptr<ir::Graph>> r = lower(*st, flat);
  if (!r) {
    net.reporter().fail(r.status());
    return flat;  // its boundary nodes have no kernel: the build fails too
  }
  st->lowered = std::move(r).value();
  return *st->lowered;
}

}  // namespace kiln::network
