// Network I/O formats (see assign_io_formats.h): the choice per binding from its allowed set, and the Reformat
// between the binding and the network, merged with a Reformat the layout assignment put there.
#include "builder/assign_io_formats.h"

#include <cctype>

#include "core/tensor_format.h"

namespace kiln::builder {
namespace {

using ir::Graph;
using ir::Node;
using ir::OpType;
using ir::Value;

constexpr TensorFormat kPreference[] = {
    TensorFormat::kHWC8, TensorFormat::kHWC16, TensorFormat::kDHWC8,  TensorFormat::kCHW32, TensorFormat::kCHW16,
    TensorFormat::kCHW4, TensorFormat::kCHW2,  TensorFormat::kCDHW32, TensorFormat::kHWC,   TensorFormat::kDHWC};

int64_t formatAttr(Node const& n, char const* key) { return n.attrs.getInt(key, 0); }

Value* newReformat(Graph& g, Value* in, TensorFormat from, TensorFormat to, std::string const& base) {
  Node* r = g.addNode(OpType::kReformat, g.uniqueNodeName(base), {in}, 1);
  r->attrs.setInt("from", static_cast<int64_t>(from));
  r->attrs.setInt("to", static_cast<int64_t>(to));
  Value* out = r->outputs[0];
  (void)g.renameValue(out, g.uniqueValueName(base));
  out->dtype = in->dtype;
  out->shape = in->shape;
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// An input's users read it in `f`: Reformats from kLINEAR read the binding directly, the others (converting
// Reformats too: they convert between kLINEAR and kHWC only) through one new Reformat into kLINEAR.
void convertInput(Graph& g, Value* x, TensorFormat f) {
  Value* linear = nullptr;
  for (Node* u : g.users(x)) {
    if (u->op == OpType::kReformat && u->inputs.size() == 1 && !u->attrs.has("dtype") &&
        formatAttr(*u, "from") == static_cast<int64_t>(TensorFormat::kLINEAR)) {
      u->attrs.setInt("from", static_cast<int64_t>(f));
      continue;
    }
    if (!linear)
      linear = newReformat(g, x, f, TensorFormat::kLINEAR, x->name + "_from_" + lower(formatName(f).substr(1)));
    for (Value*& in : u->inputs)
      if (in == x) in = linear;
  }
}

// An output written in `f`: by the Reformat that makes it kLINEAR (unless it converts), else by a new one after it.
void convertOutput(Graph& g, Value* y, TensorFormat f) {
  Node* p = y->producer;
  std::vector<Node*> users = g.users(y);
  if (p && p->op == OpType::kReformat && p->outputs.size() == 1 && users.empty() && !p->attrs.has("dtype") &&
      formatAttr(*p, "to") == static_cast<int64_t>(TensorFormat::kLINEAR)) {
    p->attrs.setInt("to", static_cast<int64_t>(f));
    return;
  }
  Value* out = newReformat(g, y, TensorFormat::kLINEAR, f, y->name + "_to_" + lower(formatName(f).substr(1)));
  users = g.users(y);
  // The new value takes the output's name, mark and place; y keeps its users (the new Reformat among them).
  g.replaceAllUses(y, out);
  for (Node* u : users)
    for (Value*& in : u->inputs)
      if (in == out) in = y;
}

}  // namespace

Result<TensorFormat> chooseIOFormat(std::string const& tensor, TensorFormats allowed, DataType dtype, int32_t rank) {
  if (allowed & (1U << static_cast<int32_t>(TensorFormat::kLINEAR))) return TensorFormat::kLINEAR;
  std::string why;
  for (TensorFormat f : kPreference) {
    if (!(allowed & (1U << static_cast<int32_t>(f)))) continue;
    Status s = checkIOFormat(f, dtype, rank);
    if (s.isOk()) return f;
    why += strCat("; ", s.message());
  }
  for (TensorFormat f : {TensorFormat::kDLA_LINEAR, TensorFormat::kDLA_HWC4})
    if (allowed & (1U << static_cast<int32_t>(f))) why += strCat("; ", checkIOFormat(f, dtype, rank).message());
  return invalidArgument("network I/O tensor '", tensor, "' (", dataTypeName(dtype), ", rank ", rank,
                         "): no allowed format can be used (ITensor::setAllowedFormats: ", formatSetToString(allowed),
                         ")", why);
}

Result<std::map<Value*, TensorFormat>> assignIOFormats(Graph& g, std::map<std::string, TensorFormats> const& allowed) {
  std::map<Value*, TensorFormat> chosen;
  auto allowedOf = [&](Value const* v) -> TensorFormats {
    auto it = allowed.find(v->name);
    return it == allowed.end() ? ~TensorFormats{0} : it->second;
  };
  for (Value* x : std::vector<Value*>(g.inputs())) {
    KILN_ASSIGN_OR_RETURN(TensorFormat f, chooseIOFormat(x->name, allowedOf(x), x->dtype, x->shape.nbDims));
    if (f == TensorFormat::kLINEAR) continue;
    convertInput(g, x, f);
    chosen[x] = f;
  }
  for (Value* y : std::vector<Value*>(g.outputs())) {
    KILN_ASSIGN_OR_RETURN(TensorFormat f, chooseIOFormat(y->name, allowedOf(y), y->dtype, y->shape.nbDims));
    if (f == TensorFormat::kLINEAR) continue;
    std::string name = y->name;
    convertOutput(g, y, f);
    chosen[g.findValue(name)] = f;  // the value now bearing the output's name (a new Reformat's output)
  }
  return chosen;
}

}  // namespace kiln::builder
