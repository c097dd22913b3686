// Pointwise fusion (GPU builds): maximal connected groups of ElementWise / Unary / Activation / Cast / Select layers
// with one sink, whose other values are read only inside the group, become one PointwiseFused node (one generated
// kernel on the GPU; TensorRT's "PWN(...)" layers).
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "builder/passes/pass.h"
#include "ir/pointwise_program.h"

namespace kiln::builder {
namespace {

using ir::Node;
using ir::Value;

bool isFloat(DataType t) { return ir::isPointwiseFloatType(t); }
bool isFloatOrBool(DataType t) { return isFloat(t) || t == DataType::kBOOL; }

// True when `n` can be one instruction of a program: an admitted op on float (fp32/fp16/bf16) or bool values,
// in the plain layout.
bool isFusable(Node const& n) {
  if (n.outputs.size() != 1 || !n.outputs[0]) return false;
  for (Value const* v : n.inputs)
    if (!v || !isFloatOrBool(v->dtype)) return false;
  if (n.attrs.getInt("format", static_cast<int64_t>(TensorFormat::kLINEAR)) !=
      static_cast<int64_t>(TensorFormat::kLINEAR))
    return false;
  DataType const out = n.outputs[0]->dtype;
  bool resultBool = false;
  if (n.op == ir::OpType::kElementWise) {
    if (n.inputs.size() != 2 || n.inputs[0]->dtype != n.inputs[1]->dtype) return false;
    int64_t op = n.attrs.getInt("op", -1);
    if (op < 0 || op > static_cast<int64_t>(ElementWiseOperation::kLESS)) return false;
    bool const inBool = n.inputs[0]->dtype == DataType::kBOOL;
    if (!ir::pointwiseElementWiseAdmits(static_cast<ElementWiseOperation>(op), inBool, &resultBool)) return false;
    return resultBool ? out == DataType::kBOOL : (isFloat(out) && out == n.inputs[0]->dtype);
  }
  if (n.op == ir::OpType::kUnary) {
    if (n.inputs.size() != 1) return false;
    int64_t op = n.attrs.getInt("op", -1);
    if (op < 0 || op > static_cast<int64_t>(UnaryOperation::kISNAN)) return false;
    bool const inBool = n.inputs[0]->dtype == DataType::kBOOL;
    if (!ir::pointwiseUnaryAdmits(static_cast<UnaryOperation>(op), inBool, &resultBool)) return false;
    return resultBool ? out == DataType::kBOOL : (isFloat(out) && out == n.inputs[0]->dtype);
  }
  if (n.op == ir::OpType::kActivation) {
    int64_t type = n.attrs.getInt("type", -1);
    return n.inputs.size() == 1 && isFloat(n.inputs[0]->dtype) && out == n.inputs[0]->dtype && type >= 0 &&
           type <= static_cast<int64_t>(ActivationType::kGELU_TANH);
  }
  if (n.op == ir::OpType::kCast) return n.inputs.size() == 1 && n.attrs.getInt("to", -1) == static_cast<int64_t>(out);
  if (n.op == ir::OpType::kSelect)
    return n.inputs.size() == 3 && n.inputs[0]->dtype == DataType::kBOOL && n.inputs[1]->dtype == n.inputs[2]->dtype &&
           out == n.inputs[1]->dtype;
  return false;
}

// The one float value of a one-element float constant, or nullptr.
HostTensor const* scalarConstant(Value const* v) {
  HostTensor const* c = passutil::constantData(v);
  if (!c || !isFloat(c->dtype()) || c->count() != 1) return nullptr;
  return c;
}

class FusePointwise final : public Pass {
 public:
  char const* name() const override { return "fuse_pointwise"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    if (ctx.cpuTarget || ctx.optimizationLevel <= 0) return false;
    KILN_ASSIGN_OR_RETURN(std::vector<Node*> order, g.topoOrder());
    // Readers of each value, once per read.
    std::unordered_map<Value const*, std::vector<Node*>> readers;
    for (Node* n : order)
      for (Value const* v : n->inputs)
        if (v) readers[v].push_back(n);
    std::set<Node*> taken;
    std::vector<std::vector<Node*>> groups;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Node* sink = *it;
      if (taken.count(sink) || !isFusable(*sink)) continue;
      std::set<Node*> group{sink};
      for (bool grew = true; grew;) {
        grew = false;
        for (Node* m : std::vector<Node*>(group.begin(), group.end()))
          for (Value* v : m->inputs) {
            Node* p = v->producer;
            if (!p || group.count(p) || taken.count(p) || v->isOutput || !isFusable(*p)) continue;
            if (group.size() >= static_cast<size_t>(ir::kPointwiseMaxInstructions)) continue;
            bool inside = true;
            for (Node* r : readers[v]) inside = inside && group.count(r) != 0;
            if (!inside) continue;
            group.insert(p);
            grew = true;
          }
      }
      if (group.size() < 2) continue;
      std::vector<Node*> members;  // topological order
      for (Node* n : order)
        if (group.count(n)) members.push_back(n);
      for (Node* n : members) taken.insert(n);
      groups.push_back(std::move(members));
    }
    bool changed = false;
    for (auto const& members : groups) {
      changed |= fuse(g, members, ctx);
    }
    if (changed) g.removeUnusedValues();
    return changed;
  }

 private:
  // Builds the program of `members` (topological order, the sink last); constants of one element become
  // immediates when `immediates`. Returns the external inputs in program order.
  static ir::PointwiseProgram build(std::vector<Node*> const& members, bool immediates, std::vector<Value*>* inputs) {
    ir::PointwiseProgram p;
    std::map<Value const*, int32_t> produced, immediateOf;
    auto operand = [&](Value* v) -> ir::PwOperand {
      auto it = produced.find(v);
      if (it != produced.end()) return {ir::PwSource::kInstruction, it->second};
      if (HostTensor const* c = immediates ? scalarConstant(v) : nullptr) {
        auto [pos, fresh] = immediateOf.emplace(v, static_cast<int32_t>(p.immediates.size()));
        if (fresh) p.immediates.push_back(static_cast<float>(c->doubleAt(0)));
        return {ir::PwSource::kImmediate, pos->second};
      }
      auto pos = std::find(inputs->begin(), inputs->end(), v);
      if (pos == inputs->end()) {
        inputs->push_back(v);
        pos = inputs->end() - 1;
      }
      return {ir::PwSource::kInput, static_cast<int32_t>(pos - inputs->begin())};
    };
    for (Node* n : members) {
      ir::PwInstruction in;
      // isFusable admitted only these five ops.
      if (n->op == ir::OpType::kElementWise) {
        in.opcode = ir::PwOpcode::kElementWise;
        in.param = static_cast<int32_t>(n->attrs.getInt("op", 0));
      } else if (n->op == ir::OpType::kUnary) {
        in.opcode = ir::PwOpcode::kUnary;
        in.param = static_cast<int32_t>(n->attrs.getInt("op", 0));
      } else if (n->op == ir::OpType::kActivation) {
        in.opcode = ir::PwOpcode::kActivation;
        in.param = static_cast<int32_t>(n->attrs.getInt("type", 0));
        in.alpha = static_cast<float>(n->attrs.getFloat("alpha", 0.0));
        in.beta = static_cast<float>(n->attrs.getFloat("beta", 0.0));
      } else if (n->op == ir::OpType::kCast) {
        in.opcode = ir::PwOpcode::kCast;
        in.param = static_cast<int32_t>(n->attrs.getInt("to", 0));
      } else {
        in.opcode = ir::PwOpcode::kSelect;
      }
      in.numOperands = static_cast<int32_t>(n->inputs.size());
      for (size_t k = 0; k < n->inputs.size(); ++k) in.operands[k] = operand(n->inputs[k]);
      produced[n->outputs[0]] = static_cast<int32_t>(p.instructions.size());
      p.instructions.push_back(in);
    }
    p.numInputs = static_cast<int32_t>(inputs->size());
    return p;
  }

  // The broadcast of the inputs' shapes has the sink's rank and its known dims (a constant dropped as an
  // immediate may have carried leading 1s that made the sink's rank).
  static bool shapeMatches(std::vector<Value*> const& inputs, Dims const& sink) {
    if (inputs.empty()) return false;
    Dims s = inputs[0]->shape;
    for (size_t i = 1; i < inputs.size(); ++i) {
      Result<Dims> b = broadcastShapes(s, inputs[i]->shape);
      if (!b.isOk()) return false;
      s = *b;
    }
    if (s.nbDims != sink.nbDims) return false;
    for (int32_t d = 0; d < s.nbDims; ++d)
      if (s.d[d] >= 0 && sink.d[d] >= 0 && s.d[d] != sink.d[d]) return false;
    return true;
  }

  bool fuse(ir::Graph& g, std::vector<Node*> const& members, PassContext const& ctx) {
    Value* y = members.back()->outputs[0];  // the sink's
    std::vector<Value*> inputs;
    ir::PointwiseProgram p = build(members, true, &inputs);
    if (!shapeMatches(inputs, y->shape)) {
      inputs.clear();
      p = build(members, false, &inputs);
      if (!shapeMatches(inputs, y->shape)) return false;
    }
    if (inputs.size() > static_cast<size_t>(ir::kPointwiseMaxInputs)) return false;
    std::vector<std::string> names;
    for (Node* n : members) {
      if (n->fusedFrom.empty()) names.push_back(n->name);
      for (auto const& f : n->fusedFrom) names.push_back(f);
    }
    std::string label = "PWN(";
    for (size_t i = 0; i < names.size(); ++i) label += (i ? ", " : "") + names[i];
    label += ")";
    ir::Attributes attrs;
    ir::encodePointwiseProgram(p, attrs);
    attrs.setInt("to", static_cast<int64_t>(y->dtype));
    // Validate what would be written, as a plan reader will; a program the decoder refuses (a bug here, not bad
    // input) keeps the layers rather than failing the build.
    std::vector<DataType> types;
    for (Value const* v : inputs) types.push_back(v->dtype);
    Result<ir::PointwiseProgram> check = ir::decodePointwiseProgram(attrs, types, y->dtype, label);
    if (!check.isOk()) {
      passutil::log(ctx, strCat(name(), ": kept ", members.size(), " layers: ", check.status().message()));
      return false;
    }
    Node* fused = g.addNode(ir::OpType::kPointwiseFused, g.uniqueNodeName(label), inputs);
    fused->attrs = std::move(attrs);
    fused->outputs[0]->dtype = y->dtype;
    fused->outputs[0]->shape = y->shape;
    fused->fusedFrom = names;
    passutil::log(ctx, strCat(name(), ": ", members.size(), " layers into ", fused->describe(), ": ",
                              ir::pointwiseProgramToString(p)));
    passutil::replaceValue(g, y, fused->outputs[0]);
    for (Node* n : members) g.removeNode(n);
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> createFusePointwisePass() { return std::make_unique<FusePointwise>(); }

}  // namespace kiln::builder
