// Graph construction, editing, topological order and cloning.
#include "ir/graph.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace kiln::ir {

std::string Node::describe() const { return strCat("layer '", name, "' (", opName(op), ")"); }

Value* Graph::newValue(std::string const& name) {
  auto v = std::make_unique<Value>();
  v->id = static_cast<int32_t>(values_.size());
  v->name = uniqueValueName(name);
  Value* raw = v.get();
  valueByName_[raw->name] = raw;
  values_.push_back(std::move(v));
  return raw;
}

Result<Value*> Graph::addInput(std::string const& name, DataType dtype, Dims const& shape) {
  if (name.empty()) return invalidArgument("a network input needs a name");
  if (findValue(name)) return invalidArgument("tensor name '", name, "' is already used");
  Value* v = newValue(name);
  v->dtype = dtype;
  v->shape = shape;
  v->isInput = true;
  inputs_.push_back(v);
  return v;
}

Node* Graph::addNode(OpType op, std::string const& name, std::vector<Value*> const& inputs, int numOutputs) {
  auto n = std::make_unique<Node>();
  n->id = static_cast<int32_t>(nodes_.size());
  n->op = op;
  n->name = name;
  n->inputs = inputs;
  for (int i = 0; i < numOutputs; ++i) {
    Value* v = newValue(numOutputs == 1 ? name + "_output" : strCat(name, "_output_", i));
    v->producer = n.get();
    v->producerOutput = i;
    n->outputs.push_back(v);
  }
  Node* raw = n.get();
  nodes_.push_back(std::move(n));
  return raw;
}

Node* Graph::addConstant(std::string const& name, HostTensor data) {
  Node* n = addNode(OpType::kConstant, name, {}, 1);
  n->outputs[0]->dtype = data.dtype();
  n->outputs[0]->shape = data.shape();
  n->constant = std::move(data);
  return n;
}

void Graph::markOutput(Value* v) {
  if (v->isOutput) return;
  v->isOutput = true;
  outputs_.push_back(v);
}

void Graph::unmarkOutput(Value* v) {
  v->isOutput = false;
  outputs_.erase(std::remove(outputs_.begin(), outputs_.end(), v), outputs_.end());
}

Value* Graph::findValue(std::string const& name) const {
  auto it = valueByName_.find(name);
  return it == valueByName_.end() ? nullptr : it->second;
}

Node* Graph::findNode(std::string const& name) const {
  for (auto const& n : nodes_)
    if (n->name == name) return n.get();
  return nullptr;
}

std::vector<Node*> Graph::users(Value const* v) const {
  std::vector<Node*> r;
  for (auto const& n : nodes_)
    if (std::find(n->inputs.begin(), n->inputs.end(), v) != n->inputs.end()) r.push_back(n.get());
  return r;
}

void Graph::replaceAllUses(Value* from, Value* to) {
  if (from == to) return;
  for (auto const& n : nodes_)
    for (auto& in : n->inputs)
      if (in == from) in = to;
  if (from->isOutput) {
    // The graph output keeps its user-visible name: move the name (and the mark) to `to`, unless `to` is
    // itself an input or output, in which case the caller must insert an Identity instead.
    std::string name = from->name;
    auto pos = std::find(outputs_.begin(), outputs_.end(), from);
    from->isOutput = false;
    valueByName_.erase(from->name);
    from->name = uniqueValueName(name + "_replaced");
    valueByName_[from->name] = from;
    valueByName_.erase(to->name);
    to->name = name;
    valueByName_[name] = to;
    to->isOutput = true;
    *pos = to;
  }
}

void Graph::removeNode(Node* n) {
  for (Value* v : n->outputs)
    if (v->producer == n) v->producer = nullptr;
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(), [&](auto const& p) { return p.get() == n; }),
               nodes_.end());
}

void Graph::removeUnusedValues() {
  std::unordered_set<Value const*> used;
  for (auto const& n : nodes_) {
    for (Value* v : n->inputs)
      if (v) used.insert(v);
    for (Value* v : n->outputs) used.insert(v);
  }
  values_.erase(std::remove_if(values_.begin(), values_.end(),
                               [&](auto const& v) {
                                 bool drop = !v->isInput && !v->isOutput && !used.count(v.get());
                                 if (drop) valueByName_.erase(v->name);
                                 return drop;
                               }),
                values_.end());
}

Status Graph::renameValue(Value* v, std::string const& name) {
  if (v->name == name) return Status::ok();
  if (findValue(name)) return invalidArgument("tensor name '", name, "' is already used");
  valueByName_.erase(v->name);
  v->name = name;
  valueByName_[name] = v;
  return Status::ok();
}

std::string Graph::uniqueValueName(std::string const& base) const {
  if (!findValue(base)) return base;
  for (int i = 1;; ++i) {
    std::string n = strCat(base, "_", i);
    if (!findValue(n)) return n;
  }
}

std::string Graph::uniqueNodeName(std::string const& base) const {
  std::unordered_set<std::string> names;
  for (auto const& n : nodes_) names.insert(n->name);
  if (!names.count(base)) return base;
  for (int i = 1;; ++i) {
    std::string n = strCat(base, "_", i);
    if (!names.count(n)) return n;
  }
}

Result<std::vector<Node*>> Graph::topoOrder() const {
  std::unordered_set<Value const*> present;
  for (auto const& v : values_) present.insert(v.get());
  std::unordered_map<Node const*, int> state;  // 0 new, 1 on stack, 2 done
  std::vector<Node*> order;
  order.reserve(nodes_.size());
  std::unordered_set<Node const*> inGraph;
  for (auto const& n : nodes_) inGraph.insert(n.get());
  // Iterative DFS so deep graphs cannot overflow the stack.
  for (auto const& root : nodes_) {
    if (state[root.get()] == 2) continue;
    std::vector<std::pair<Node*, size_t>> stack{{root.get(), 0}};
    state[root.get()] = 1;
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (i < n->inputs.size()) {
        Value* in = n->inputs[i++];
        if (!in) continue;
        if (!present.count(in)) return invalidGraph(n->describe(), " reads a tensor that is not in the graph");
        Node* p = in->producer;
        if (!p) {
          if (!in->isInput) return invalidGraph(n->describe(), " reads tensor '", in->name, "', which nothing produces");
          continue;
        }
        if (!inGraph.count(p)) return invalidGraph(n->describe(), " reads '", in->name, "' from a removed layer");
        int s = state[p];
        if (s == 1) return invalidGraph("the graph has a cycle through ", p->describe());
        if (s == 0) {
          state[p] = 1;
          stack.push_back({p, 0});
        }
      } else {
        state[n] = 2;
        order.push_back(n);
        stack.pop_back();
      }
    }
  }
  return order;
}

Status Graph::renumber() {
  KILN_ASSIGN_OR_RETURN(std::vector<Node*> order, topoOrder());
  std::unordered_map<Node*, size_t> pos;
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  std::sort(nodes_.begin(), nodes_.end(), [&](auto const& a, auto const& b) { return pos[a.get()] < pos[b.get()]; });
  for (size_t i = 0; i < nodes_.size(); ++i) nodes_[i]->id = static_cast<int32_t>(i);
  for (size_t i = 0; i < values_.size(); ++i) values_[i]->id = static_cast<int32_t>(i);
  return Status::ok();
}

Node::Node() = default;
Node::~Node() = default;

std::unique_ptr<Graph> Graph::clone() const {
  auto g = std::make_unique<Graph>();
  std::unordered_map<Value const*, Value*> vmap;
  std::unordered_map<Node const*, Node*> nmap;
  for (auto const& v : values_) {
    auto nv = std::make_unique<Value>(*v);
    nv->producer = nullptr;
    vmap[v.get()] = nv.get();
    g->valueByName_[nv->name] = nv.get();
    g->values_.push_back(std::move(nv));
  }
  for (auto const& n : nodes_) {
    auto nn = std::make_unique<Node>();
    nn->id = n->id;
    nn->op = n->op;
    nn->name = n->name;
    nn->inputs = n->inputs;
    nn->outputs = n->outputs;
    nn->attrs = n->attrs;
    nn->constant = n->constant;
    nn->precision = n->precision;
    nn->fusedFrom = n->fusedFrom;
    nn->tactic = n->tactic;
    nn->plugin = n->plugin;
    for (auto const& sub : n->subgraphs) nn->subgraphs.push_back(sub ? sub->clone() : nullptr);
    for (auto& in : nn->inputs) in = in ? vmap.at(in) : nullptr;
    for (auto& out : nn->outputs) {
      out = vmap.at(out);
      out->producer = nn.get();
    }
    nmap[n.get()] = nn.get();
    g->nodes_.push_back(std::move(nn));
  }
  for (Value* v : inputs_) g->inputs_.push_back(vmap.at(v));
  for (Value* v : outputs_) g->outputs_.push_back(vmap.at(v));
  return g;
}

}  // namespace kiln::ir
