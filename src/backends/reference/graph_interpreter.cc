// The host graph interpreter: shape inference for the given inputs, then the reference kernel of every node.
#include "backends/reference/graph_interpreter.h"

#include "backends/backend.h"
#include "ir/shape_inference.h"

namespace kiln::backends {
namespace {

// True when the values are numbered 0..n-1 in order and the nodes are in a topological order.
bool isNumbered(ir::Graph const& g) {
  for (size_t i = 0; i < g.values().size(); ++i)
    if (g.values()[i]->id != static_cast<int32_t>(i)) return false;
  auto order = g.topoOrder();
  if (!order.isOk() || order->size() != g.nodes().size()) return false;
  for (size_t i = 0; i < order->size(); ++i)
    if ((*order)[i] != g.nodes()[i].get()) return false;
  return true;
}

Result<std::vector<HostTensor>> run(ir::Graph const& g, std::vector<HostTensor> const& inputs) {
  if (inputs.size() != g.inputs().size())
    return invalidArgument("the graph has ", g.inputs().size(), " inputs but ", inputs.size(), " tensors were given");
  ir::ShapeState state;
  state.resize(g.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    ir::Value const* v = g.inputs()[i];
    HostTensor const& t = inputs[i];
    if (t.dtype() != v->dtype)
      return invalidArgument("input '", v->name, "' is ", dataTypeName(v->dtype), " but a ", dataTypeName(t.dtype()),
                             " tensor was given");
    bool fits = t.shape().nbDims == v->shape.nbDims;
    for (int32_t d = 0; fits && d < v->shape.nbDims; ++d) fits = v->shape.d[d] < 0 || v->shape.d[d] == t.shape().d[d];
    if (!fits)
      return invalidArgument("input '", v->name, "' has shape ", dimsToString(v->shape), "; a tensor of shape ",
                             dimsToString(t.shape()), " does not fit it");
    if (t.count() > 0 && !t.data()) return invalidArgument("input '", v->name, "' has no data");
    state.info[v->id] = {t.dtype(), t.shape()};
  }
  ir::HostEvaluator eval = referenceEvaluator();
  KILN_RETURN_IF_ERROR(ir::inferShapes(g, state, &eval));

  std::vector<std::optional<HostTensor>> vals(g.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) vals[g.inputs()[i]->id] = inputs[i];
  for (auto const& np : g.nodes()) {
    ir::Node const& n = *np;
    std::vector<HostTensor const*> in;
    for (ir::Value const* v : n.inputs) {
      if (!v) {
        in.push_back(nullptr);
        continue;
      }
      if (!vals[v->id]) return internalError(n.describe(), ": input '", v->name, "' was not computed");
      in.push_back(&*vals[v->id]);
    }
    std::vector<HostTensor> out;
    bool allKnown = true;
    for (ir::Value const* v : n.outputs) {
      // Shape inference may already have the contents (constants, small host-evaluated tensors).
      if (!state.values[v->id]) allKnown = false;
    }
    // Nodes without outputs (Assertion) still run: they check something.
    if (allKnown && !n.outputs.empty()) {
      for (ir::Value const* v : n.outputs) vals[v->id] = *state.values[v->id];
      continue;
    }
    bool dataDependent = false;
    for (ir::Value const* v : n.outputs)
      if (!dimsKnown(state.info[v->id].shape)) dataDependent = true;
    if (dataDependent) {
      // Data-dependent output shapes (NonZero, NMS): run, pin the observed shapes and infer the rest again.
      std::vector<ir::TensorInfo> outInfo;
      for (ir::Value const* v : n.outputs) outInfo.push_back(state.info[v->id]);
      Result<std::vector<HostTensor>> r = evaluateOnHostDynamic(n, in, outInfo);
      if (!r.isOk()) return r.status().withContext(n.describe());
      for (size_t i = 0; i < n.outputs.size(); ++i) {
        int32_t id = n.outputs[i]->id;
        state.info[id] = {(*r)[i].dtype(), (*r)[i].shape()};
        state.pinned[id] = 1;
        vals[id] = std::move((*r)[i]);
      }
      KILN_RETURN_IF_ERROR(ir::inferShapes(g, state, &eval));
      continue;
    }
    for (ir::Value const* v : n.outputs) {
      ir::TensorInfo const& info = state.info[v->id];
      if (!dimsKnown(info.shape))
        return invalidGraph(n.describe(), ": output '", v->name, "' has unknown shape ", dimsToString(info.shape));
      KILN_ASSIGN_OR_RETURN(HostTensor t, HostTensor::allocate(info.dtype, info.shape, "graph interpreter tensor"));
      out.push_back(std::move(t));
    }
    KILN_RETURN_IF_ERROR(evaluateOnHost(n, in, out).withContext(n.describe()));
    for (size_t i = 0; i < n.outputs.size(); ++i) vals[n.outputs[i]->id] = std::move(out[i]);
  }
  std::vector<HostTensor> result;
  for (ir::Value const* v : g.outputs()) {
    if (!vals[v->id]) return internalError("graph output '", v->name, "' was not computed");
    // A copy, so that the caller owns its outputs even when they alias an input or a constant.
    KILN_ASSIGN_OR_RETURN(HostTensor t, vals[v->id]->clone("graph output"));
    result.push_back(std::move(t));
  }
  return result;
}

}  // namespace

Result<std::vector<HostTensor>> runGraphOnHost(ir::Graph const& g, std::vector<HostTensor> const& inputs) {
  if (isNumbered(g)) return run(g, inputs);
  std::unique_ptr<ir::Graph> c = g.clone();
  KILN_RETURN_IF_ERROR(c->renumber());
  return run(*c, inputs);
}

}  // namespace kiln::backends
