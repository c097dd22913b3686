// The IR: a Graph owns Nodes (ops with attributes) and Values (tensors). Graph inputs are Values with no
// producer; weights are the outputs of Constant nodes. Node order is insertion order; topoOrder() sorts.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tensor.h"
#include "ir/attributes.h"
#include "ir/op.h"
#include "ir/plugin.h"

namespace kiln::ir {

struct Node;
class Graph;

/// A tensor of the graph. `shape` holds -1 for dims unknown until run time.
struct Value {
  int32_t id = -1;  // dense index after Graph::renumber(); used to index per-run shape state
  std::string name;
  DataType dtype = DataType::kFLOAT;
  Dims shape{};
  Node* producer = nullptr;  // null for graph inputs
  int32_t producerOutput = 0;
  bool isInput = false;
  bool isOutput = false;
  std::optional<DataType> requestedType;  // ILayer::setOutputType on the producer
};

/// An op with its inputs (nullptr = absent optional input), outputs and attributes.
struct Node {
  int32_t id = -1;
  OpType op = OpType::kIdentity;
  std::string name;
  std::vector<Value*> inputs;
  std::vector<Value*> outputs;
  Attributes attrs;
  std::optional<HostTensor> constant;     // the data of a Constant node
  std::optional<DataType> precision;      // ILayer::setPrecision
  std::vector<std::string> fusedFrom;     // names of the layers merged into this node by passes
  std::string tactic;                     // chosen by the builder
  // Subgraphs owned by control-flow nodes (If: {then, else}; Loop: {body}; see ir/ops.def). Their graph
  // inputs/outputs are the node's block parameters; other ops leave this empty. Graph::clone() deep-copies
  // them (and copies every other member: update it when adding one).
  std::vector<std::unique_ptr<Graph>> subgraphs;
  // The plugin object of a PluginV2/PluginV3 node (ir/plugin.h); null for other ops. Graph::clone() shares it
  // (the builder gives its graph clones of its own).
  std::shared_ptr<PluginInstance> plugin;

  Node();
  ~Node();
  Node(Node const&) = delete;
  Node& operator=(Node const&) = delete;

  Value* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  Value* output(size_t i = 0) const { return i < outputs.size() ? outputs[i] : nullptr; }
  /// "layer 'conv1' (Convolution)" for messages.
  std::string describe() const;
};

class Graph {
 public:
  Graph() = default;
  Graph(Graph const&) = delete;
  Graph& operator=(Graph const&) = delete;

  /// Adds a graph input (error if the name is taken).
  Result<Value*> addInput(std::string const& name, DataType dtype, Dims const& shape);
  /// Adds a node with `numOutputs` fresh output values named "<name>_out<i>" (or `name` when 1 output and
  /// outputName is given). Inputs may contain nullptr for absent optional inputs.
  Node* addNode(OpType op, std::string const& name, std::vector<Value*> const& inputs, int numOutputs = 1);
  /// Adds a Constant node holding `data`; its output is named `valueName`.
  Node* addConstant(std::string const& name, HostTensor data);
  void markOutput(Value* v);
  void unmarkOutput(Value* v);

  std::vector<std::unique_ptr<Node>> const& nodes() const { return nodes_; }
  std::vector<std::unique_ptr<Value>> const& values() const { return values_; }
  std::vector<Value*> const& inputs() const { return inputs_; }
  std::vector<Value*> const& outputs() const { return outputs_; }
  Value* findValue(std::string const& name) const;
  Node* findNode(std::string const& name) const;

  /// Nodes that read `v` (in node order).
  std::vector<Node*> users(Value const* v) const;
  /// Replaces every read of `from` (and its graph-output mark, keeping from's name on the output) by `to`.
  void replaceAllUses(Value* from, Value* to);
  /// Removes a node; its outputs stay until removeUnusedValues().
  void removeNode(Node* n);
  /// Drops values with no producer-node and no users that are not graph inputs/outputs.
  void removeUnusedValues();
  /// Renames a value, keeping names unique; error if taken.
  Status renameValue(Value* v, std::string const& name);
  /// A fresh value name built from `base`.
  std::string uniqueValueName(std::string const& base) const;
  std::string uniqueNodeName(std::string const& base) const;
  /// Nodes in an order where producers come before users; error naming a node on a cycle or on a
  /// value read but never produced.
  Result<std::vector<Node*>> topoOrder() const;
  /// Sorts nodes_ topologically and gives nodes and values dense ids 0..n-1.
  Status renumber();
  /// Deep copy (constants share their bytes).
  std::unique_ptr<Graph> clone() const;

 private:
  Value* newValue(std::string const& name);
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::unordered_map<std::string, Value*> valueByName_;
};

}  // namespace kiln::ir
