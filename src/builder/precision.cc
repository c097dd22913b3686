// Precision assignment (see precision.h).
#include "builder/precision.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/shape_inference.h"

namespace kiln::builder {
namespace {

using ir::Node;
using ir::OpType;
using ir::Value;

bool isFloat3(DataType t) { return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16; }

// Ops whose arithmetic runs in the chosen precision.
bool isComputeOp(OpType op) {
  switch (op) {
    case OpType::kConvolution:
    case OpType::kMatrixMultiply:
    case OpType::kActivation:
    case OpType::kPooling:
    case OpType::kElementWise:
    case OpType::kUnary:
    case OpType::kSoftMax:
    case OpType::kReduce:
    case OpType::kScale:
    case OpType::kNormalization:
    case OpType::kDeconvolution:
    case OpType::kResize:
    case OpType::kLRN:
    case OpType::kParametricReLU:
    case OpType::kGridSample:
    case OpType::kRaggedSoftMax:
    case OpType::kEinsum:
    case OpType::kCumulative:
    case OpType::kQuantize:
    case OpType::kDequantize:
    case OpType::kDynamicQuantize:
    case OpType::kAttention: return true;
    // Made after precision assignment (fuse_pointwise), with the types its layers had.
    case OpType::kPointwiseFused:
    case OpType::kConstant:
    case OpType::kIdentity:
    case OpType::kReformat:
    case OpType::kCast:
    case OpType::kShuffle:
    case OpType::kConcatenation:
    case OpType::kSlice:
    case OpType::kGather:
    case OpType::kShape:
    case OpType::kTopK:
    case OpType::kPadding:
    case OpType::kFill:
    case OpType::kSelect:
    case OpType::kScatter:
    case OpType::kOneHot:
    case OpType::kSqueeze:
    case OpType::kUnsqueeze:
    case OpType::kReverseSequence:
    case OpType::kAssertion:
    case OpType::kNMS:
    case OpType::kNonZero:
    case OpType::kIf:
    case OpType::kLoop:
    // Plugins: the builder negotiates their types with the plugin (builder/plugins.cc).
    case OpType::kPluginV2:
    case OpType::kPluginV3:
    case OpType::kTfIdfVectorizer: return false;
  }
  return false;
}

// Inputs that are data (not shape tensors or indices) and so follow the compute precision.
bool isDataInput(Node const& n, size_t i) {
  switch (n.op) {
    case OpType::kShuffle: return i == 0;
    case OpType::kSlice: return i == 0 || i == 4;
    case OpType::kGather: return i == 0;
    // Scales, zero points, bounds, axes and grids keep their types; only the data input follows.
    case OpType::kResize: return i == 0;
    case OpType::kRaggedSoftMax: return i == 0;
    case OpType::kCumulative: return i == 0;
    case OpType::kReduce: return i == 0;
    case OpType::kQuantize: return i == 0;
    case OpType::kDequantize: return i == 0;
    case OpType::kDynamicQuantize: return i == 0;
    case OpType::kGridSample: return i == 0;
    // Token ids are not data: TfIdfVectorizer counts them exactly, whatever the compute precision.
    case OpType::kTfIdfVectorizer: return false;
    case OpType::kConstant:
    case OpType::kIdentity:
    case OpType::kReformat:
    case OpType::kCast:
    case OpType::kConvolution:
    case OpType::kActivation:
    case OpType::kPooling:
    case OpType::kElementWise:
    case OpType::kUnary:
    case OpType::kMatrixMultiply:
    case OpType::kConcatenation:
    case OpType::kSoftMax:
    case OpType::kScale:
    case OpType::kNormalization:
    case OpType::kShape:
    case OpType::kDeconvolution:
    case OpType::kTopK:
    case OpType::kPadding:
    case OpType::kFill:
    case OpType::kSelect:
    case OpType::kScatter:
    case OpType::kEinsum:
    case OpType::kOneHot:
    case OpType::kParametricReLU:
    case OpType::kLRN:
    case OpType::kSqueeze:
    case OpType::kUnsqueeze:
    case OpType::kReverseSequence:
    case OpType::kAssertion:
    case OpType::kNMS:
    case OpType::kNonZero:
    case OpType::kIf:
    case OpType::kPluginV2:
    case OpType::kPluginV3:
    // q, k, v and the additive mask, as the MatrixMultiply/ElementWise layers it replaces read them.
    case OpType::kAttention:
    case OpType::kPointwiseFused:
    case OpType::kLoop: return true;
  }
  return true;
}

// Layout and selection ops whose float outputs take the type of their float data inputs (which must agree).
bool followsDataType(OpType op) {
  switch (op) {
    case OpType::kIdentity:
    case OpType::kReformat:
    case OpType::kShuffle:
    case OpType::kConcatenation:
    case OpType::kSlice:
    case OpType::kGather:
    case OpType::kTopK:
    case OpType::kPadding:
    case OpType::kSelect:
    case OpType::kScatter:
    case OpType::kOneHot:
    case OpType::kSqueeze:
    case OpType::kUnsqueeze:
    case OpType::kReverseSequence: return true;
    // Compute ops (handled apart), and ops whose output types are their own.
    case OpType::kConstant:
    case OpType::kCast:
    case OpType::kConvolution:
    case OpType::kActivation:
    case OpType::kPooling:
    case OpType::kElementWise:
    case OpType::kUnary:
    case OpType::kMatrixMultiply:
    case OpType::kSoftMax:
    case OpType::kReduce:
    case OpType::kScale:
    case OpType::kNormalization:
    case OpType::kShape:
    case OpType::kDeconvolution:
    case OpType::kResize:
    case OpType::kFill:
    case OpType::kEinsum:
    case OpType::kCumulative:
    case OpType::kParametricReLU:
    case OpType::kLRN:
    case OpType::kGridSample:
    case OpType::kAssertion:
    case OpType::kNMS:
    case OpType::kNonZero:
    case OpType::kRaggedSoftMax:
    case OpType::kQuantize:
    case OpType::kDequantize:
    case OpType::kDynamicQuantize:
    case OpType::kAttention:
    case OpType::kPointwiseFused:
    case OpType::kIf:
    case OpType::kLoop:
    // Plugins: the builder negotiates their types with the plugin (builder/plugins.cc).
    case OpType::kPluginV2:
    case OpType::kPluginV3:
    case OpType::kTfIdfVectorizer: return false;
  }
  return false;
}

// Compute layers that keep float32 in a reduced-precision build (no library tactic in the reduced type).
using NodeSet = std::set<Node const*>;

// True when `v` is read only in `reduced`: by float compute layers that run in it (no per-layer precision of
// another type, not kept in float32) as data, or by Casts to it; neither a network output nor given an output type.
bool readOnlyIn(ir::Graph const& g, Value const* v, DataType reduced, NodeSet const& keepFloat) {
  if (v->isOutput || v->requestedType) return false;
  std::vector<Node*> const users = g.users(v);
  if (users.empty()) return false;
  for (Node const* u : users) {
    if (u->op == OpType::kCast) {
      if (u->attrs.getInt("to", -1) != static_cast<int64_t>(reduced) || u->outputs.size() != 1 ||
          u->outputs[0]->isOutput || u->outputs[0]->requestedType)
        return false;
      continue;
    }
    if (!isComputeOp(u->op) || (u->precision && *u->precision != reduced) || keepFloat.count(u)) return false;
    for (size_t i = 0; i < u->inputs.size(); ++i)
      if (u->inputs[i] == v && !isDataInput(*u, i)) return false;
  }
  return true;
}

// A Gather from a float32 Constant (an embedding table) with no precision of its own whose rows are read only in
// the reduced type: gathering from the table converted to that type gives the same values as converting the
// gathered rows, so the table is converted once at build time (its Cast folds with the other constant weights,
// as TensorRT stores constant weights under FP16) instead of gathering float32 and casting on every run.
bool gathersForReducedReaders(ir::Graph const& g, Node const& n, DataType reduced, NodeSet const& keepFloat) {
  if (n.op != OpType::kGather || n.precision || n.outputs.size() != 1 || n.inputs.empty()) return false;
  Value const* table = n.inputs[0];
  if (!table || table->dtype != DataType::kFLOAT || !table->producer || table->producer->op != OpType::kConstant)
    return false;
  return readOnlyIn(g, n.outputs[0], reduced, keepFloat);
}

// The types `n` would run with in `type`: its float data inputs and float outputs in `type`, the rest as they are.
void trialInfos(Node const& n, DataType type, std::vector<ir::TensorInfo>& in, std::vector<ir::TensorInfo>& out) {
  in.clear();
  out.clear();
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    ir::TensorInfo t;
    t.shape.nbDims = -1;
    if (Value const* v = n.inputs[i]) {
      t.shape = v->shape;
      t.dtype = isDataInput(n, i) && isFloat3(v->dtype) ? type : v->dtype;
    }
    in.push_back(t);
  }
  for (Value const* v : n.outputs) {
    ir::TensorInfo t;
    t.shape.nbDims = -1;
    if (v) {
      t.shape = v->shape;
      t.dtype = isFloat3(v->dtype) ? type : v->dtype;
    }
    out.push_back(t);
  }
}

class Rewriter {
 public:
  explicit Rewriter(ir::Graph& g) : g_(g) {}

  Value* castTo(Value* v, DataType t) {
    if (v->dtype == t) return v;
    auto key = std::make_pair(v, t);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    Node* c = g_.addNode(OpType::kCast, g_.uniqueNodeName(strCat(v->name, "_to_", dataTypeShortName(t))), {v}, 1);
    c->attrs.setInt("to", static_cast<int64_t>(t));
    c->outputs[0]->dtype = t;
    c->outputs[0]->shape = v->shape;
    cache_[key] = c->outputs[0];
    return c->outputs[0];
  }

 private:
  ir::Graph& g_;
  std::map<std::pair<Value*, DataType>, Value*> cache_;
};

}  // namespace

Status assignPrecision(ir::Graph& g, PrecisionOptions const& opt) {
  if (opt.stronglyTyped) return Status::ok();
  bool fp16 = opt.flags & (1u << static_cast<uint32_t>(BuilderFlag::kFP16));
  bool bf16 = opt.flags & (1u << static_cast<uint32_t>(BuilderFlag::kBF16));
  bool anyLayerPrecision = false;
  for (auto const& n : g.nodes()) {
    if (n->precision) anyLayerPrecision = true;
    for (Value* v : n->outputs)
      if (v->requestedType && *v->requestedType != v->dtype) anyLayerPrecision = true;
  }
  if (!fp16 && !bf16 && !anyLayerPrecision) return Status::ok();
  DataType reduced = fp16 ? DataType::kHALF : DataType::kBF16;

  // Remember the network's output types: they must not change.
  std::map<Value*, DataType> outputTypes;
  for (Value* v : g.outputs()) outputTypes[v] = v->dtype;

  KILN_ASSIGN_OR_RETURN(std::vector<Node*> order, g.topoOrder());
  Rewriter rw(g);
  // Control-flow subgraphs stay as built (float32): each float input of an If/Loop is pinned to the type its
  // subgraphs declare with a Cast, which converts once a producer moves to a reduced precision.
  for (Node* n : order) {
    if (n->op != OpType::kIf && n->op != OpType::kLoop) continue;
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      Value* in = n->inputs[i];
      if (!in || !isFloat3(in->dtype)) continue;
      Node* c = g.addNode(OpType::kCast, g.uniqueNodeName(strCat(in->name, "_pinned")), {in}, 1);
      c->attrs.setInt("to", static_cast<int64_t>(in->dtype));
      c->outputs[0]->dtype = in->dtype;
      c->outputs[0]->shape = in->shape;
      n->inputs[i] = c->outputs[0];
    }
  }
  // Layers the reduced type would leave to reference tactics while float32 has a library one keep float32 (as
  // if given that precision, so readers such as the embedding Gather's see it). Decided up front: a layer's
  // choice does not depend on its neighbours', since every layer's inputs are cast to what it runs in.
  NodeSet keepFloat;
  if ((fp16 || bf16) && opt.hasLibraryTactic) {
    std::vector<ir::TensorInfo> in, out;
    for (Node* n : order) {
      if (!isComputeOp(n->op) || n->precision) continue;
      bool floatOp = false;
      for (size_t i = 0; i < n->inputs.size(); ++i)
        if (n->inputs[i] && isDataInput(*n, i) && isFloat3(n->inputs[i]->dtype)) floatOp = true;
      if (!floatOp) continue;
      trialInfos(*n, reduced, in, out);
      if (opt.hasLibraryTactic(*n, in, out)) continue;
      trialInfos(*n, DataType::kFLOAT, in, out);
      if (opt.hasLibraryTactic(*n, in, out)) keepFloat.insert(n);
    }
  }
  std::vector<Node*> unusedCasts;
  for (Node* n : order) {
    if (!isComputeOp(n->op)) {
      // Types are tracked as the walk goes (a layout op after a reduced-precision layer carries the reduced
      // type), and a layout op joining float data of different types (a float32 constant concatenated with
      // reduced activations, a select between them) gets its inputs cast to one type: the layer's precision,
      // else the build's reduced type.
      if (!followsDataType(n->op)) continue;
      if ((fp16 || bf16) && gathersForReducedReaders(g, *n, reduced, keepFloat)) {
        n->inputs[0] = rw.castTo(n->inputs[0], reduced);
        // Casts of the gathered rows to the reduced type now convert nothing: their readers read the rows.
        for (Node* u : g.users(n->outputs[0]))
          if (u->op == OpType::kCast) {
            g.replaceAllUses(u->outputs[0], n->outputs[0]);
            unusedCasts.push_back(u);  // removed after the walk, which still holds it
          }
      }
      std::vector<DataType> types;
      for (size_t i = 0; i < n->inputs.size(); ++i) {
        Value* in = n->inputs[i];
        if (in && isDataInput(*n, i) && isFloat3(in->dtype) &&
            std::find(types.begin(), types.end(), in->dtype) == types.end())
          types.push_back(in->dtype);
      }
      if (types.empty()) continue;
      DataType target = types.front();
      if (types.size() > 1 || (n->precision && isFloat3(*n->precision))) {
        target = n->precision && isFloat3(*n->precision) ? *n->precision : (fp16 || bf16) ? reduced : DataType::kFLOAT;
        for (size_t i = 0; i < n->inputs.size(); ++i) {
          Value* in = n->inputs[i];
          if (in && isDataInput(*n, i) && isFloat3(in->dtype) && in->dtype != target) n->inputs[i] = rw.castTo(in, target);
        }
      }
      for (Value* out : n->outputs)
        if (isFloat3(out->dtype)) out->dtype = target;
      continue;
    }
    // Only float computations change; an op reading ints or bools keeps its types.
    bool floatOp = false;
    for (size_t i = 0; i < n->inputs.size(); ++i)
      if (n->inputs[i] && isDataInput(*n, i) && isFloat3(n->inputs[i]->dtype)) floatOp = true;
    if (!floatOp) continue;
    DataType target = n->precision ? *n->precision : ((fp16 || bf16) ? reduced : DataType::kFLOAT);
    if (!n->precision && keepFloat.count(n)) target = DataType::kFLOAT;
    if (!isFloat3(target)) continue;
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      Value* in = n->inputs[i];
      if (in && isDataInput(*n, i) && isFloat3(in->dtype) && in->dtype != target) n->inputs[i] = rw.castTo(in, target);
    }
    for (Value* out : n->outputs)
      if (isFloat3(out->dtype)) out->dtype = target;
  }
  for (Node* c : unusedCasts) {
    order.erase(std::remove(order.begin(), order.end(), c), order.end());
    g.removeNode(c);
  }
  if (!unusedCasts.empty()) g.removeUnusedValues();
  // Re-derive types (layout ops follow their inputs), then restore the network's output types.
  KILN_RETURN_IF_ERROR(ir::inferGraphInPlace(g, nullptr));
  for (auto [v, t] : outputTypes) {
    if (v->dtype == t) continue;
    Node* c = g.addNode(OpType::kCast, g.uniqueNodeName(v->name + "_output_cast"), {}, 1);
    c->attrs.setInt("to", static_cast<int64_t>(t));
    Value* out = c->outputs[0];
    // Only the output mark and name move to `out`: layers inside the network that read `v` keep reading it in
    // its computed type (an intermediate tensor marked as an output, e.g. by kilnexec --check-layers).
    std::vector<std::pair<Node*, size_t>> uses;
    for (auto const& node : g.nodes())
      for (size_t i = 0; i < node->inputs.size(); ++i)
        if (node->inputs[i] == v) uses.emplace_back(node.get(), i);
    g.replaceAllUses(v, out);
    for (auto [node, i] : uses) node->inputs[i] = v;
    c->inputs = {v};
    out->dtype = t;
    out->shape = v->shape;
  }
  // Outputs with a requested type (ILayer::setOutputType) get a cast unless their op already converts.
  for (auto const& np : std::vector<Node*>(order)) {
    for (Value* v : np->outputs) {
      if (!v->requestedType || *v->requestedType == v->dtype || np->op == OpType::kCast || np->op == OpType::kIdentity)
        continue;
      DataType t = *v->requestedType;
      v->requestedType.reset();
      Node* c = g.addNode(OpType::kCast, g.uniqueNodeName(v->name + "_typed"), {}, 1);
      c->attrs.setInt("to", static_cast<int64_t>(t));
      g.replaceAllUses(v, c->outputs[0]);
      c->inputs = {v};
    }
  }
  return ir::inferGraphInPlace(g, nullptr);
}

}  // namespace kiln::builder
