// PluginShapeProgram: encoding, validation and evaluation of a plugin's stored output-shape expressions, and the
// symbolic IExprBuilder that captures them from getOutputShapes at build time.
#include "ir/plugin_shapes.h"

#include <algorithm>
#include <limits>

namespace kiln::ir {

Result<int64_t> applyDimensionOperation(DimensionOperation op, int64_t x, int64_t y) {
  int64_t r = 0;
  switch (op) {
    case DimensionOperation::kSUM:
      if (__builtin_add_overflow(x, y, &r)) break;
      return r;
    case DimensionOperation::kPROD:
      if (__builtin_mul_overflow(x, y, &r)) break;
      return r;
    case DimensionOperation::kMAX:
      return std::max(x, y);
    case DimensionOperation::kMIN:
      return std::min(x, y);
    case DimensionOperation::kSUB:
      if (__builtin_sub_overflow(x, y, &r)) break;
      return r;
    case DimensionOperation::kEQUAL:
      return x == y ? 1 : 0;
    case DimensionOperation::kLESS:
      return x < y ? 1 : 0;
    case DimensionOperation::kFLOOR_DIV:
    case DimensionOperation::kCEIL_DIV: {
      if (y == 0) return invalidArgument("divides a dimension expression by zero");
      if (x == std::numeric_limits<int64_t>::min() && y == -1) break;
      int64_t q = x / y, rem = x % y;
      bool inexact = rem != 0;
      bool negative = (rem < 0) != (y < 0);
      if (inexact && op == DimensionOperation::kFLOOR_DIV && negative) --q;
      if (inexact && op == DimensionOperation::kCEIL_DIV && !negative) ++q;
      return q;
    }
  }
  if (static_cast<int32_t>(op) < 0 || static_cast<int32_t>(op) >= EnumMax<DimensionOperation>())
    return invalidArgument("unknown DimensionOperation ", static_cast<int32_t>(op));
  return invalidArgument("computes a dimension expression that overflows int64");
}

namespace {

constexpr int64_t kTag = 0x3145534B;  // "KSE1"
constexpr size_t kHeader = 5;         // tag, inputs, shape inputs, outputs, nodes

using Kind = ShapeExprNode::Kind;

bool isOperand(int64_t id, size_t self) { return id >= 0 && static_cast<uint64_t>(id) < self; }

}  // namespace

std::vector<int64_t> PluginShapeProgram::encode() const {
  std::vector<int64_t> d{kTag, nbInputs, nbShapeInputs, static_cast<int64_t>(outputs.size()),
                         static_cast<int64_t>(nodes.size())};
  for (auto const& n : nodes) d.insert(d.end(), {static_cast<int64_t>(n.kind), n.a, n.b, n.c});
  for (auto const& o : outputs) {
    d.push_back(static_cast<int64_t>(o.size()));
    d.insert(d.end(), o.begin(), o.end());
  }
  return d;
}

Result<PluginShapeProgram> PluginShapeProgram::decode(std::vector<int64_t> const& data, int32_t nbInputs,
                                                      int32_t nbShapeInputs, int32_t nbOutputs) {
  if (data.size() < kHeader || data[0] != kTag)
    return invalidPlan("plugin_shapes: not a stored shape program (", data.size(), " values, tag ",
                       data.empty() ? 0 : data[0], ")");
  if (data[1] != nbInputs || data[2] != nbShapeInputs || data[3] != nbOutputs)
    return invalidPlan("plugin_shapes: written for ", data[1], " inputs, ", data[2], " shape inputs and ", data[3],
                       " outputs; the layer has ", nbInputs, ", ", nbShapeInputs, " and ", nbOutputs);
  int64_t count = data[4];
  if (count < 0 || count > kMaxShapeExprNodes)
    return invalidPlan("plugin_shapes: ", count, " expression nodes (at most ", kMaxShapeExprNodes, ")");
  size_t pos = kHeader;
  if ((data.size() - pos) / 4 < static_cast<size_t>(count))
    return invalidPlan("plugin_shapes: truncated node table (", count, " nodes in ", data.size(), " values)");
  PluginShapeProgram p;
  p.nbInputs = nbInputs;
  p.nbShapeInputs = nbShapeInputs;
  for (int64_t i = 0; i < count; ++i, pos += 4) {
    int64_t kind = data[pos];
    if (kind < 0 || kind > static_cast<int64_t>(Kind::kSizeTensor))
      return invalidPlan("plugin_shapes: node ", i, " has unknown kind ", kind);
    p.nodes.push_back({static_cast<Kind>(kind), data[pos + 1], data[pos + 2], data[pos + 3]});
  }
  for (int32_t o = 0; o < nbOutputs; ++o) {
    if (pos >= data.size()) return invalidPlan("plugin_shapes: output ", o, " is missing");
    int64_t rank = data[pos++];
    if (rank < 0 || rank > Dims::MAX_DIMS) return invalidPlan("plugin_shapes: output ", o, " has rank ", rank);
    if (data.size() - pos < static_cast<size_t>(rank)) return invalidPlan("plugin_shapes: output ", o, " is truncated");
    std::vector<int32_t> dims;
    for (int64_t k = 0; k < rank; ++k, ++pos) {
      if (!isOperand(data[pos], p.nodes.size()))
        return invalidPlan("plugin_shapes: output ", o, " dimension ", k, " refers to node ", data[pos], " of ",
                           p.nodes.size());
      dims.push_back(static_cast<int32_t>(data[pos]));
    }
    p.outputs.push_back(std::move(dims));
  }
  if (pos != data.size()) return invalidPlan("plugin_shapes: ", data.size() - pos, " values left over");
  Status s = p.validate();
  if (!s.isOk()) return invalidPlan("plugin_shapes: ", s.message());
  return p;
}

Status PluginShapeProgram::validate() const {
  if (nodes.size() > static_cast<size_t>(kMaxShapeExprNodes))
    return invalidArgument(nodes.size(), " expression nodes (at most ", kMaxShapeExprNodes, ")");
  std::vector<bool> sizeDep(nodes.size(), false);
  std::vector<bool> declared(outputs.size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    ShapeExprNode const& n = nodes[i];
    switch (n.kind) {
      case Kind::kConstant:
        break;
      case Kind::kInputDim:
        if (n.a < 0 || n.a >= nbInputs || n.b < 0 || n.b >= Dims::MAX_DIMS)
          return invalidArgument("node ", i, " reads dimension ", n.b, " of input ", n.a, " (", nbInputs, " inputs)");
        break;
      case Kind::kShapeValue:
        if (n.a < 0 || n.a >= nbShapeInputs || n.b < 0 || n.b >= Dims::MAX_DIMS)
          return invalidArgument("node ", i, " reads element ", n.b, " of shape input ", n.a, " (", nbShapeInputs,
                                 " shape inputs)");
        break;
      case Kind::kOperation:
        if (n.a < 0 || n.a >= EnumMax<DimensionOperation>())
          return invalidArgument("node ", i, " has unknown operation ", n.a);
        if (!isOperand(n.b, i) || !isOperand(n.c, i))
          return invalidArgument("node ", i, " has operands ", n.b, " and ", n.c, " (earlier nodes expected)");
        sizeDep[i] = sizeDep[n.b] || sizeDep[n.c];
        break;
      case Kind::kSizeTensor:
        if (n.a < 0 || static_cast<size_t>(n.a) >= outputs.size())
          return invalidArgument("node ", i, " declares output ", n.a, " a size tensor (", outputs.size(), " outputs)");
        if (declared[n.a]) return invalidArgument("output ", n.a, " is declared a size tensor twice");
        declared[n.a] = true;
        if (!outputs[n.a].empty()) return invalidArgument("size tensor output ", n.a, " is not 0-D");
        if (!isOperand(n.b, i) || !isOperand(n.c, i))
          return invalidArgument("node ", i, " has opt/upper ", n.b, " and ", n.c, " (earlier nodes expected)");
        if (sizeDep[n.b] || sizeDep[n.c])
          return invalidArgument("the opt or upper bound of size tensor output ", n.a, " depends on a size tensor");
        sizeDep[i] = true;
        break;
    }
  }
  return Status::ok();
}

std::vector<SizeTensorDecl> PluginShapeProgram::sizeTensors() const {
  std::vector<SizeTensorDecl> r;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].kind == Kind::kSizeTensor) r.push_back({static_cast<int32_t>(nodes[i].a), static_cast<int32_t>(i)});
  std::sort(r.begin(), r.end(), [](SizeTensorDecl const& x, SizeTensorDecl const& y) { return x.output < y.output; });
  return r;
}

bool PluginShapeProgram::hasDataDependentOutputs() const {
  std::vector<bool> dep(nodes.size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto const& n = nodes[i];
    dep[i] = n.kind == Kind::kSizeTensor || (n.kind == Kind::kOperation && (dep[n.b] || dep[n.c]));
  }
  for (auto const& o : outputs)
    for (int32_t id : o)
      if (dep[id]) return true;
  return false;
}

Result<std::vector<std::optional<int64_t>>> PluginShapeProgram::evaluateNodes(EvalInputs const& in) const {
  std::vector<std::optional<int64_t>> v(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    ShapeExprNode const& n = nodes[i];
    switch (n.kind) {
      case Kind::kConstant:
        v[i] = n.a;
        break;
      case Kind::kInputDim: {
        if (static_cast<size_t>(n.a) >= in.inputs.size()) return invalidArgument("input ", n.a, " is missing");
        Dims const& d = in.inputs[n.a];
        if (d.nbDims < 0) break;  // rank unknown
        if (n.b >= d.nbDims)
          return invalidArgument("the shape expressions read dimension ", n.b, " of input ", n.a, ", which has rank ",
                                 d.nbDims);
        if (d.d[n.b] >= 0) v[i] = d.d[n.b];
        break;
      }
      case Kind::kShapeValue: {
        if (static_cast<size_t>(n.a) >= in.shapeValues.size() || !in.shapeValues[n.a]) break;
        auto const& vals = *in.shapeValues[n.a];
        if (static_cast<size_t>(n.b) >= vals.size())
          return invalidArgument("the shape expressions read element ", n.b, " of shape input ", n.a, ", which has ",
                                 vals.size());
        v[i] = vals[n.b];
        break;
      }
      case Kind::kOperation: {
        auto op = static_cast<DimensionOperation>(n.a);
        auto const& x = v[n.b];
        auto const& y = v[n.c];
        if (op == DimensionOperation::kPROD && ((x && *x == 0) || (y && *y == 0))) {
          v[i] = 0;
          break;
        }
        if (!x || !y) break;
        KILN_ASSIGN_OR_RETURN(v[i], applyDimensionOperation(op, *x, *y));
        break;
      }
      case Kind::kSizeTensor:
        switch (in.sizeMode) {
          case SizeTensorMode::kUnknown:
            break;
          case SizeTensorMode::kZero:
            v[i] = 0;
            break;
          case SizeTensorMode::kOpt:
            v[i] = v[n.b];
            break;
          case SizeTensorMode::kUpper:
            v[i] = v[n.c];
            break;
          case SizeTensorMode::kValue:
            if (static_cast<size_t>(n.a) < in.sizes.size()) v[i] = in.sizes[n.a];
            break;
        }
        break;
    }
  }
  return v;
}

Result<std::vector<Dims>> PluginShapeProgram::evaluate(EvalInputs const& in) const {
  KILN_ASSIGN_OR_RETURN(std::vector<std::optional<int64_t>> v, evaluateNodes(in));
  std::vector<Dims> out;
  for (size_t o = 0; o < outputs.size(); ++o) {
    Dims d{};
    d.nbDims = static_cast<int32_t>(outputs[o].size());
    for (int32_t k = 0; k < d.nbDims; ++k) {
      auto const& x = v[outputs[o][k]];
      if (x && *x < 0) return invalidArgument("output ", o, " dimension ", k, " is negative (", *x, ")");
      d.d[k] = x ? *x : -1;
    }
    out.push_back(d);
  }
  return out;
}

//
// SymbolicExprBuilder
//

class SymbolicExprBuilder::Node final : public IDimensionExpr {
 public:
  Node(int32_t id, std::optional<int64_t> value, bool size, bool sizeDependent)
      : id_(id), value_(value), size_(size), sizeDependent_(sizeDependent) {}
  bool isConstant() const noexcept override { return value_.has_value(); }
  int64_t getConstantValue() const noexcept override { return value_ ? *value_ : std::numeric_limits<int64_t>::min(); }
  bool isSizeTensor() const noexcept override { return size_; }
  int32_t id() const { return id_; }
  std::optional<int64_t> value() const { return value_; }
  bool sizeDependent() const { return sizeDependent_; }

 private:
  int32_t id_;
  std::optional<int64_t> value_;
  bool size_;
  bool sizeDependent_;
};

SymbolicExprBuilder::SymbolicExprBuilder(int32_t nbInputs, int32_t nbShapeInputs)
    : nbInputs_(nbInputs), nbShapeInputs_(nbShapeInputs) {}
SymbolicExprBuilder::~SymbolicExprBuilder() = default;

void SymbolicExprBuilder::fail(std::string m) {
  if (error_.empty()) error_ = std::move(m);
}

SymbolicExprBuilder::Node const* SymbolicExprBuilder::mine(IDimensionExpr const* e) const {
  auto it = index_.find(e);
  return it == index_.end() ? nullptr : it->second;
}

SymbolicExprBuilder::Node const* SymbolicExprBuilder::add(ShapeExprNode n, std::optional<int64_t> value,
                                                          bool sizeDependent) {
  auto id = static_cast<int32_t>(nodes_.size());
  table_.push_back(n);
  nodes_.push_back(std::make_unique<Node>(id, value, n.kind == Kind::kSizeTensor, sizeDependent));
  index_[nodes_.back().get()] = nodes_.back().get();
  return nodes_.back().get();
}

IDimensionExpr const* SymbolicExprBuilder::constant(int64_t value) noexcept {
  return add({Kind::kConstant, value, 0, 0}, value, false);
}

IDimensionExpr const* SymbolicExprBuilder::inputDim(int32_t input, int32_t dim, int64_t known) {
  if (known >= 0) return constant(known);
  return add({Kind::kInputDim, input, dim, 0}, std::nullopt, false);
}

IDimensionExpr const* SymbolicExprBuilder::shapeValue(int32_t input, int32_t element, std::optional<int64_t> known) {
  if (known) return constant(*known);
  return add({Kind::kShapeValue, input, element, 0}, std::nullopt, false);
}

IDimensionExpr const* SymbolicExprBuilder::operation(DimensionOperation op, IDimensionExpr const& first,
                                                     IDimensionExpr const& second) noexcept {
  if (static_cast<int32_t>(op) < 0 || static_cast<int32_t>(op) >= EnumMax<DimensionOperation>()) return nullptr;
  Node const* a = mine(&first);
  Node const* b = mine(&second);
  if (!a || !b) {
    fail("passed IExprBuilder::operation an expression Kiln did not create");
    return constant(0);
  }
  if (op == DimensionOperation::kPROD && ((a->value() && *a->value() == 0) || (b->value() && *b->value() == 0)))
    return constant(0);
  if (a->value() && b->value()) {
    Result<int64_t> r = applyDimensionOperation(op, *a->value(), *b->value());
    if (!r) {
      fail(r.status().message());
      return constant(0);
    }
    return constant(*r);
  }
  return add({Kind::kOperation, static_cast<int64_t>(op), a->id(), b->id()}, std::nullopt,
             a->sizeDependent() || b->sizeDependent());
}

IDimensionExpr const* SymbolicExprBuilder::declareSizeTensor(int32_t outputIndex, IDimensionExpr const& opt,
                                                             IDimensionExpr const& upper) {
  Node const* o = mine(&opt);
  Node const* u = mine(&upper);
  if (!o || !u) {
    fail("passed IExprBuilder::declareSizeTensor an expression Kiln did not create");
    return constant(0);
  }
  if (o->sizeDependent() || u->sizeDependent())
    fail(strCat("declares size tensor output ", outputIndex,
                " with an opt or upper bound that depends on a size tensor"));
  return add({Kind::kSizeTensor, outputIndex, o->id(), u->id()}, std::nullopt, true);
}

Result<PluginShapeProgram> SymbolicExprBuilder::finish(DimsExprs const* outputs, int32_t nbOutputs) {
  if (!error_.empty()) return invalidGraph(error_);
  // Keep what the outputs reach (size tensors always: they declare outputs), renumbered in table order.
  std::vector<bool> keep(table_.size(), false);
  for (int32_t o = 0; o < nbOutputs; ++o) {
    if (outputs[o].nbDims < 0 || outputs[o].nbDims > Dims::MAX_DIMS)
      return invalidGraph("output ", o, " has rank ", outputs[o].nbDims);
    for (int32_t k = 0; k < outputs[o].nbDims; ++k) {
      Node const* n = mine(outputs[o].d[k]);
      if (!n) return invalidGraph("output ", o, " dimension ", k, " is not an expression from the IExprBuilder");
      keep[n->id()] = true;
    }
  }
  for (size_t i = 0; i < table_.size(); ++i)
    if (table_[i].kind == Kind::kSizeTensor) keep[i] = true;
  for (size_t i = table_.size(); i-- > 0;) {
    if (!keep[i]) continue;
    ShapeExprNode const& n = table_[i];
    if (n.kind == Kind::kOperation || n.kind == Kind::kSizeTensor) keep[n.b] = keep[n.c] = true;
  }
  std::vector<int32_t> renum(table_.size(), -1);
  PluginShapeProgram p;
  p.nbInputs = nbInputs_;
  p.nbShapeInputs = nbShapeInputs_;
  for (size_t i = 0; i < table_.size(); ++i) {
    if (!keep[i]) continue;
    ShapeExprNode n = table_[i];
    if (n.kind == Kind::kOperation || n.kind == Kind::kSizeTensor) {
      n.b = renum[n.b];
      n.c = renum[n.c];
    }
    renum[i] = static_cast<int32_t>(p.nodes.size());
    p.nodes.push_back(n);
  }
  for (int32_t o = 0; o < nbOutputs; ++o) {
    std::vector<int32_t> dims;
    for (int32_t k = 0; k < outputs[o].nbDims; ++k) dims.push_back(renum[mine(outputs[o].d[k])->id()]);
    p.outputs.push_back(std::move(dims));
  }
  KILN_RETURN_IF_ERROR(p.validate());
  return p;
}

}  // namespace kiln::ir
