// Graph-level import steps shared by the main graph and the bodies of If/Loop/Scan: outer-scope references,
// node ordering, importing one node, and importing a subgraph into its own name scope.
#include <algorithm>

#include <onnx/defs/schema.h>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

void collectOuterReferences(::onnx::GraphProto const& graph, std::set<std::string>& out) {
  std::set<std::string> defined;
  for (auto const& in : graph.input()) {
    defined.insert(in.name());
  }
  for (auto const& init : graph.initializer()) {
    defined.insert(init.name());
  }
  for (auto const& n : graph.node()) {
    for (auto const& o : n.output()) {
      defined.insert(o);
    }
  }
  auto use = [&](std::string const& name) {
    if (!name.empty() && defined.count(name) == 0) {
      out.insert(name);
    }
  };
  for (auto const& n : graph.node()) {
    for (auto const& in : n.input()) {
      use(in);
    }
    for (auto const& name : subgraphReferences(n)) {
      use(name);
    }
  }
}

}  // namespace

std::set<std::string> outerReferences(::onnx::GraphProto const& graph) {
  std::set<std::string> r;
  collectOuterReferences(graph, r);
  return r;
}

std::set<std::string> subgraphReferences(::onnx::NodeProto const& node) {
  std::set<std::string> r;
  for (auto const& a : node.attribute()) {
    if (a.has_g()) {
      collectOuterReferences(a.g(), r);
    }
    for (auto const& g : a.graphs()) {
      collectOuterReferences(g, r);
    }
  }
  return r;
}

Status sortNodes(ImportContext const& ctx, ::onnx::GraphProto const& graph, std::vector<int>& order, int& badNode) {
  order.clear();
  badNode = -1;
  int const n = graph.node_size();
  std::unordered_map<std::string, int> producer;
  std::set<std::string> local;  // names the graph itself defines (they shadow outer ones)
  for (auto const& in : graph.input()) {
    local.insert(in.name());
  }
  for (auto const& init : graph.initializer()) {
    local.insert(init.name());
  }
  for (int i = 0; i < n; ++i) {
    for (auto const& out : graph.node(i).output()) {
      if (out.empty()) {
        continue;
      }
      if (local.count(out) != 0 || producer.count(out) != 0 || (ctx.scopeDepth() == 0 && ctx.defined(out))) {
        badNode = i;
        return ImportContext::nodeError(ErrorCode::kINVALID_GRAPH, graph.node(i), "output '", out,
                                        "' is already produced by another node, initializer or input");
      }
      producer[out] = i;
    }
  }
  std::vector<int> pending(static_cast<size_t>(n), 0);
  std::vector<std::vector<int>> users(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto const& node = graph.node(i);
    std::set<std::string> needs(node.input().begin(), node.input().end());
    std::set<std::string> implicit = subgraphReferences(node);
    needs.insert(implicit.begin(), implicit.end());
    for (auto const& in : needs) {
      if (in.empty()) {
        continue;
      }
      auto it = producer.find(in);
      if (it == producer.end()) {
        if (local.count(in) != 0 || ctx.defined(in)) {
          continue;
        }
        badNode = i;
        return ImportContext::nodeError(ErrorCode::kINVALID_GRAPH, node, "input '", in, "' ",
                                        implicit.count(in) != 0 ? "(read by a subgraph) " : "",
                                        "is not a graph input, initializer or output of any node");
      }
      if (it->second == i) {
        badNode = i;
        return ImportContext::nodeError(ErrorCode::kINVALID_GRAPH, node, "the node reads its own output '", in, "'");
      }
      ++pending[static_cast<size_t>(i)];
      users[static_cast<size_t>(it->second)].push_back(i);
    }
  }
  std::vector<int> ready;
  for (int i = n - 1; i >= 0; --i) {
    if (pending[static_cast<size_t>(i)] == 0) {
      ready.push_back(i);
    }
  }
  while (!ready.empty()) {
    // Keep the model's order among ready nodes: take the smallest index.
    auto it = std::min_element(ready.begin(), ready.end());
    int i = *it;
    ready.erase(it);
    order.push_back(i);
    for (int u : users[static_cast<size_t>(i)]) {
      if (--pending[static_cast<size_t>(u)] == 0) {
        ready.push_back(u);
      }
    }
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i) {
      if (pending[static_cast<size_t>(i)] > 0) {
        badNode = i;
        return ImportContext::nodeError(ErrorCode::kINVALID_GRAPH, graph.node(i),
                                        "the graph has a cycle through this node");
      }
    }
  }
  return Status::success();
}

namespace {

/// Empty when `node` may be imported at the model's opset; else why not. The importers know the definitions of
/// opsets kMinOpset to kMaxOpset. An op in an older model is the same op as at kMinOpset when ONNX's schema
/// registry gives it the same defining version at both (Relu at opset 6 is Relu-6 either way); one whose
/// definition changed in between (Add-6 lost its `broadcast` attribute at Add-7) is refused.
std::string legacyOpsetError(ImportContext const& ctx, ::onnx::NodeProto const& node) {
  bool const defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
  int64_t const opset = ctx.opset("");
  if (!defaultDomain || opset <= 0 || opset >= kMinOpset) {
    return {};
  }
  auto const* old = ::onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), "");
  auto const* known = ::onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(kMinOpset), "");
  if (known == nullptr) {
    return {};  // not an op of opset kMinOpset: the importer lookup names it
  }
  if (old == nullptr) {
    return cat("op '", node.op_type(), "' does not exist at the model's opset ", opset);
  }
  if (old->since_version() != known->since_version()) {
    return cat("op '", node.op_type(), "' at the model's opset ", opset, " is ", node.op_type(), "-",
               old->since_version(), ", which changed at ", node.op_type(), "-", known->since_version(),
               "; Kiln imports opsets ", kMinOpset, " to ", kMaxOpset, " (re-export the model with opset >= ",
               kMinOpset, ")");
  }
  return {};
}

}  // namespace

Status importNode(ImportContext& ctx, ::onnx::NodeProto const& node) {
  bool const defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
  if (defaultDomain && ctx.opset() == 0) {
    return fail(ErrorCode::kUNSUPPORTED_GRAPH, "node '", node.name(), "': op '", node.op_type(),
                "' is of the default domain, but the model imports no default-domain opset");
  }
  if (std::string why = legacyOpsetError(ctx, node); !why.empty()) {
    return fail(ErrorCode::kUNSUPPORTED_NODE, "node '", node.name(), "': ", why);
  }
  ImportFn fn = findImporter(node.domain(), node.op_type());
  if (fn == nullptr) {
    return fail(ErrorCode::kUNSUPPORTED_NODE, "node '", node.name(), "': no importer for op '", node.op_type(),
                "' of domain '", node.domain().empty() ? "ai.onnx" : node.domain(), "'");
  }
  KO_RETURN_IF_ERROR(fn(ctx, node));
  for (auto const& o : node.output()) {
    auto it = ctx.values().find(o);
    ITensor* t = it == ctx.values().end() ? nullptr : it->second.tensor;
    // The network infers shapes as layers are added; an unknown rank means it refused the input shapes.
    if (t != nullptr && t->getDimensions().nbDims < 0) {
      std::string shapes;
      for (auto const& in : node.input()) {
        auto v = ctx.values().find(in);
        if (v != ctx.values().end()) {
          Dims d = v->second.tensor ? v->second.tensor->getDimensions() : v->second.constant->dims;
          shapes += (shapes.empty() ? "" : ", ") + in + dimsString(d);
        }
      }
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the input shapes (", shapes,
                                      ") are incompatible: output '", o, "' has no valid shape (see the log)");
    }
  }
  return Status::success();
}

Result<::onnx::GraphProto const*> attrGraph(::onnx::NodeProto const& node, char const* name) {
  auto const* a = findAttr(node, name);
  if (a == nullptr) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the graph attribute '", name, "' is missing");
  }
  if (a->type() != ::onnx::AttributeProto::GRAPH || !a->has_g()) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "attribute '", name, "' must be of type GRAPH");
  }
  return &a->g();
}

namespace {

Status importSubgraphNodes(ImportContext& ctx, ::onnx::NodeProto const& owner, ::onnx::GraphProto const& graph,
                           std::vector<ITensor*> const& inputs, std::vector<ITensor*>& outputs) {
  for (auto const& init : graph.initializer()) {
    auto c = constantFromTensorProto(init, ctx.externalLoader(), ctx.constantBytesLeft());
    if (!c.ok()) {
      return c.status;
    }
    KO_RETURN_IF_ERROR(ctx.define(init.name(), Value{nullptr, ctx.keep(std::move(c.value))}));
  }
  for (int i = 0; i < graph.input_size(); ++i) {
    ITensor* t = i < static_cast<int>(inputs.size()) ? inputs[static_cast<size_t>(i)] : nullptr;
    if (t != nullptr) {
      KO_RETURN_IF_ERROR(ctx.define(graph.input(i).name(), Value{t, nullptr}));
    }
  }
  std::vector<int> order;
  int bad = -1;
  KO_RETURN_IF_ERROR(sortNodes(ctx, graph, order, bad));
  for (int i : order) {
    KO_RETURN_IF_ERROR(importNode(ctx, graph.node(i)));
  }
  outputs.clear();
  for (auto const& out : graph.output()) {
    auto it = ctx.values().find(out.name());
    if (it == ctx.values().end()) {
      return ImportContext::nodeError(ErrorCode::kINVALID_GRAPH, owner, "output '", out.name(), "' of subgraph '",
                                      graph.name(), "' is not produced by it");
    }
    Value& v = it->second;
    if (v.tensor == nullptr) {
      KO_ASSIGN_OR_RETURN(v.tensor, ctx.constantTensor(v.constant, out.name()));
    }
    outputs.push_back(v.tensor);
  }
  return Status::success();
}

}  // namespace

Status importSubgraph(ImportContext& ctx, ::onnx::NodeProto const& owner, ::onnx::GraphProto const& graph,
                      std::vector<ITensor*> const& inputs, std::vector<ITensor*>& outputs) {
  if (ctx.scopeDepth() >= kMaxSubgraphDepth) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_GRAPH, owner, "subgraphs are nested more than ",
                                    kMaxSubgraphDepth, " levels deep");
  }
  if (static_cast<int>(inputs.size()) != graph.input_size()) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, owner, "subgraph '", graph.name(), "' has ",
                                    graph.input_size(), " inputs; the op binds ", inputs.size());
  }
  std::string const ownerName = owner.name().empty() ? owner.op_type() : owner.name();
  ctx.pushScope(cat(ownerName, "/", graph.name(), "_", ctx.newId(), "/"));
  Status s = importSubgraphNodes(ctx, owner, graph, inputs, outputs);
  ctx.popScope();
  if (!s.ok()) {
    return fail(s.code, "in subgraph '", graph.name(), "' of node '", ownerName, "': ", s.message);
  }
  return s;
}

}  // namespace kiln::onnx
