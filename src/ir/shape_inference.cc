// The inference driver and the per-op registry.
#include "ir/shape_inference.h"

#include <array>

namespace kiln::ir {
namespace {
std::array<InferFn, kNumOps>& registry() {
  static std::array<InferFn, kNumOps> r{};
  return r;
}
}  // namespace

InferRegistrar::InferRegistrar(OpType op, InferFn fn) { registry()[static_cast<size_t>(op)] = fn; }

InferFn findInferFn(OpType op) { return registry()[static_cast<size_t>(op)]; }

static Status checkRequestedType(Node const& n, size_t i, TensorInfo& out) {
  Value const* v = n.outputs[i];
  if (v->requestedType && *v->requestedType != out.dtype) {
    // Only ops that convert may change their output type; the rest keep theirs (precision passes insert
    // casts for the others).
    if (n.op == OpType::kIdentity || n.op == OpType::kCast) out.dtype = *v->requestedType;
  }
  return Status::ok();
}

// How many outputs a node of `op` has, or -1 where the node says (If, Loop and plugins, whose InferFns check
// theirs). Checked before the InferFn runs, so that none of them indexes an output a malformed graph (a corrupt
// plan) lacks.
static int32_t fixedOutputCount(OpType op) {
  switch (op) {
    case OpType::kAssertion:
      return 0;
    case OpType::kTopK:
    case OpType::kNMS:
    case OpType::kDynamicQuantize:
      return 2;
    case OpType::kIf:
    case OpType::kLoop:
    case OpType::kPluginV2:
    case OpType::kPluginV3:
      return -1;
    default:
      return 1;
  }
}

Status inferShapes(Graph const& g, ShapeState& state, HostEvaluator const* eval) {
  size_t nv = g.values().size();
  if (state.info.size() != nv) return internalError("shape state has ", state.info.size(), " entries for ", nv, " values");
  for (auto const& v : g.values()) {
    if (v->id < 0 || static_cast<size_t>(v->id) >= nv || g.values()[v->id].get() != v.get())
      return internalError("graph values are not numbered; call renumber()");
  }
  for (auto const& np : g.nodes()) {
    Node const& n = *np;
    InferFn fn = findInferFn(n.op);
    if (!fn) return unsupported(n.describe(), ": no shape inference for op ", opName(n.op));
    int32_t const nOut = fixedOutputCount(n.op);
    if (nOut >= 0 && n.outputs.size() != static_cast<size_t>(nOut))
      return invalidGraph(n.describe(), ": has ", n.outputs.size(), " outputs; ", opName(n.op), " has ", nOut);
    InferContext ctx{n, {}, {}, {}, {}};
    ctx.in.resize(n.inputs.size());
    ctx.inValues.resize(n.inputs.size(), nullptr);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      Value const* v = n.inputs[i];
      if (!v) {
        ctx.in[i].shape.nbDims = -1;
        continue;
      }
      ctx.in[i] = state.info[v->id];
      if (state.values[v->id]) ctx.inValues[i] = &*state.values[v->id];
    }
    ctx.out.resize(n.outputs.size());
    ctx.outValues.resize(n.outputs.size());
    if (n.op == OpType::kConstant) {
      if (!n.constant) return invalidGraph(n.describe(), " has no data");
      ctx.out[0] = {n.constant->dtype(), n.constant->shape()};
      ctx.outValues[0] = *n.constant;
    } else {
      KILN_RETURN_IF_ERROR(fn(ctx));
    }
    bool allKnown = true;
    int64_t elems = 0;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      KILN_RETURN_IF_ERROR(checkRequestedType(n, i, ctx.out[i]));
      int32_t id = n.outputs[i]->id;
      if (id < static_cast<int32_t>(state.pinned.size()) && (state.pinned[id] & kPinnedShape)) ctx.out[i] = state.info[id];
      Dims const& s = ctx.out[i].shape;
      if (s.nbDims < 0 || s.nbDims > Dims::MAX_DIMS) return internalError(n.describe(), ": inferred an invalid rank");
      if (!dimsKnown(s)) {
        allKnown = false;
      } else {
        int64_t const v = volume(s);  // saturates: no sum past the limit
        elems = v > kMaxHostEvalElements || elems > kMaxHostEvalElements ? kMaxHostEvalElements + 1 : elems + v;
      }
    }
    // Host evaluation of small tensors whose inputs are all known.
    // Plugins are never run while shapes are inferred (only by the engine's contexts).
    bool canEval = eval && allKnown && elems <= kMaxHostEvalElements && n.op != OpType::kConstant &&
                   n.op != OpType::kPluginV2 && n.op != OpType::kPluginV3;
    for (size_t i = 0; canEval && i < n.outputs.size(); ++i)
      if (ctx.outValues[i]) canEval = false;
    for (size_t i = 0; canEval && i < n.inputs.size(); ++i)
      if (n.inputs[i] && !ctx.inValues[i]) canEval = false;
    if (canEval) {
      std::vector<HostTensor> outs;
      for (auto const& o : ctx.out) {
        KILN_ASSIGN_OR_RETURN(HostTensor t, HostTensor::allocate(o.dtype, o.shape, "shape tensor evaluation"));
        outs.push_back(std::move(t));
      }
      KILN_RETURN_IF_ERROR((*eval)(n, ctx.inValues, outs).withContext(n.describe()));
      for (size_t i = 0; i < outs.size(); ++i) ctx.outValues[i] = std::move(outs[i]);
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      int32_t id = n.outputs[i]->id;
      state.info[id] = ctx.out[i];
      bool keepContents = id < static_cast<int32_t>(state.pinned.size()) && (state.pinned[id] & kPinnedContents);
      if (!keepContents) state.values[id] = std::move(ctx.outValues[i]);
    }
  }
  return Status::ok();
}

Status inferGraphInPlace(Graph& g, HostEvaluator const* eval) {
  KILN_RETURN_IF_ERROR(g.renumber());
  ShapeState state;
  state.resize(g.values().size());
  for (Value* v : g.inputs()) state.info[v->id] = {v->dtype, v->shape};
  KILN_RETURN_IF_ERROR(inferShapes(g, state, eval));
  for (auto const& v : g.values()) {
    if (v->isInput) continue;
    v->dtype = state.info[v->id].dtype;
    v->shape = state.info[v->id].shape;
  }
  return Status::ok();
}

}  // namespace kiln::ir
