// Shape inference of If and Loop (ir/ops.def): their subgraphs are inferred with ir::inferShapes (recursively,
// since a subgraph may hold If/Loop nodes itself); shapes that depend on run-time data become -1.
#include <algorithm>

#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

// Deepest nesting of control-flow nodes accepted (a node whose subgraphs hold a node with subgraphs is 2 deep).
constexpr int kMaxControlFlowDepth = 16;

int nestingDepth(Node const& n) {
  int deepest = 0;
  for (auto const& g : n.subgraphs)
    for (auto const& inner : g->nodes())
      if (!inner->subgraphs.empty()) deepest = std::max(deepest, nestingDepth(*inner));
  return 1 + deepest;
}

bool isNumbered(Graph const& g) {
  for (size_t i = 0; i < g.values().size(); ++i)
    if (g.values()[i]->id != static_cast<int32_t>(i)) return false;
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (g.nodes()[i]->id != static_cast<int32_t>(i)) return false;
  return true;
}

// Infers `g` for the given input types/shapes; returns its outputs' types and shapes.
Result<std::vector<TensorInfo>> inferSubgraph(InferContext const& ctx, Graph const& sub, char const* what,
                                              std::vector<TensorInfo> const& ins) {
  if (ins.size() != sub.inputs().size())
    return ctx.error("the ", what, " subgraph has ", sub.inputs().size(), " inputs but the node gives it ",
                     ins.size());
  std::unique_ptr<Graph> copy;
  Graph const* g = &sub;
  if (!isNumbered(sub)) {
    copy = sub.clone();
    KILN_RETURN_IF_ERROR(copy->renumber().withContext(ctx.node.describe()));
    g = copy.get();
  }
  ShapeState state;
  state.resize(g->values().size());
  for (size_t i = 0; i < ins.size(); ++i) {
    Value const* v = g->inputs()[i];
    if (v->dtype != ins[i].dtype)
      return ctx.error("the ", what, " subgraph's input '", v->name, "' is ", dataTypeName(v->dtype), " but gets ",
                       dataTypeName(ins[i].dtype));
    state.info[v->id] = ins[i];
  }
  KILN_RETURN_IF_ERROR(
      inferShapes(*g, state, nullptr).withContext(strCat(ctx.node.describe(), ", ", what, " subgraph")));
  std::vector<TensorInfo> outs;
  for (Value const* v : g->outputs()) outs.push_back(state.info[v->id]);
  return outs;
}

Status checkDepth(InferContext const& ctx) {
  int depth = nestingDepth(ctx.node);
  if (depth > kMaxControlFlowDepth)
    return ctx.error("control flow is nested ", depth, " levels deep; at most ", kMaxControlFlowDepth,
                     " are supported");
  return Status::ok();
}

bool isScalar(TensorInfo const& t) { return t.shape.nbDims == 0; }

// Removes axis `axis` from `s`.
Dims dropAxis(Dims const& s, int32_t axis) {
  Dims r{};
  r.nbDims = s.nbDims - 1;
  for (int32_t d = 0, k = 0; d < s.nbDims; ++d)
    if (d != axis) r.d[k++] = s.d[d];
  return r;
}

// Flat-network boundary layers (network/layers_control.cc): If/Loop nodes without subgraphs whose string
// attribute "boundary" names their role; they exist only while a network is being defined.
Status inferBoundary(InferContext& ctx, std::string const& role) {
  auto needInputs = [&](size_t n) -> Status {
    for (size_t i = 0; i < n; ++i)
      if (!ctx.present(i)) return ctx.error("needs ", n, " input(s)");
    return Status::ok();
  };
  if (role == "condition") {
    KILN_RETURN_IF_ERROR(needInputs(1));
    if (ctx.in[0].dtype != DataType::kBOOL || !isScalar(ctx.in[0]))
      return ctx.error("the condition must be a 0-D kBOOL tensor, got ", dataTypeName(ctx.in[0].dtype), " ",
                       dimsToString(ctx.in[0].shape));
    return Status::ok();
  }
  if (role == "if_input" || role == "recurrence") {
    KILN_RETURN_IF_ERROR(needInputs(1));
    ctx.out[0] = ctx.in[0];
    return Status::ok();
  }
  if (role == "if_output") {
    KILN_RETURN_IF_ERROR(needInputs(2));
    TensorInfo const& a = ctx.in[0];
    TensorInfo const& b = ctx.in[1];
    if (a.dtype != b.dtype)
      return ctx.error("the true output is ", dataTypeName(a.dtype), " but the false output is ",
                       dataTypeName(b.dtype));
    if (a.shape.nbDims != b.shape.nbDims)
      return ctx.error("the true output has rank ", a.shape.nbDims, " but the false output has rank ", b.shape.nbDims);
    ctx.out[0] = a;
    for (int32_t d = 0; d < a.shape.nbDims; ++d)
      if (a.shape.d[d] != b.shape.d[d]) ctx.out[0].shape.d[d] = -1;
    return Status::ok();
  }
  if (role == "trip_limit") {
    KILN_RETURN_IF_ERROR(needInputs(1));
    TensorInfo const& t = ctx.in[0];
    bool count = ctx.node.attrs.getInt("limit", 0) == 0;
    bool ok = isScalar(t) && (count ? (t.dtype == DataType::kINT32 || t.dtype == DataType::kINT64)
                                    : t.dtype == DataType::kBOOL);
    if (!ok)
      return ctx.error(count ? "a kCOUNT trip limit must be a 0-D int32/int64 tensor"
                             : "a kWHILE trip limit must be a 0-D kBOOL tensor",
                       ", got ", dataTypeName(t.dtype), " ", dimsToString(t.shape));
    return Status::ok();
  }
  if (role == "iterator") {
    KILN_RETURN_IF_ERROR(needInputs(1));
    int64_t axis = ctx.node.attrs.getInt("axis", 0);
    int32_t rank = ctx.in[0].shape.nbDims;
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) return ctx.error("axis ", axis, " is out of range for ", dimsToString(ctx.in[0].shape));
    ctx.out[0] = {ctx.in[0].dtype, dropAxis(ctx.in[0].shape, static_cast<int32_t>(a))};
    return Status::ok();
  }
  if (role == "loop_output") {
    KILN_RETURN_IF_ERROR(needInputs(1));
    int64_t kind = ctx.node.attrs.getInt("kind", 0);
    if (kind == 0) {
      ctx.out[0] = ctx.in[0];
      return Status::ok();
    }
    Dims const& v = ctx.in[0].shape;
    int64_t axis = ctx.node.attrs.getInt("axis", 0);
    int64_t a = axis < 0 ? axis + v.nbDims + 1 : axis;
    if (a < 0 || a > v.nbDims) return ctx.error("axis ", axis, " is out of range for a rank-", v.nbDims, " value");
    if (v.nbDims + 1 > Dims::MAX_DIMS) return ctx.error("the output would exceed the maximum rank");
    int64_t len = -1;
    if (ctx.present(1)) {
      TensorInfo const& l = ctx.in[1];
      if (!isScalar(l) || (l.dtype != DataType::kINT32 && l.dtype != DataType::kINT64))
        return ctx.error("the length input must be a 0-D int32/int64 tensor");
      if (ctx.inValues[1] && ctx.inValues[1]->count() == 1) len = ctx.inValues[1]->intAt(0);
    }
    Dims s{};
    s.nbDims = v.nbDims + 1;
    for (int32_t d = 0, k = 0; d < s.nbDims; ++d) s.d[d] = d == a ? len : v.d[k++];
    ctx.out[0] = {ctx.in[0].dtype, s};
    return Status::ok();
  }
  return ctx.error("unknown control-flow boundary role '", role, "'");
}

Status inferIf(InferContext& ctx) {
  if (ctx.node.subgraphs.empty() && ctx.node.attrs.has("boundary"))
    return inferBoundary(ctx, ctx.node.attrs.getString("boundary"));
  KILN_RETURN_IF_ERROR(checkDepth(ctx));
  if (ctx.node.subgraphs.size() != 2 || !ctx.node.subgraphs[0] || !ctx.node.subgraphs[1])
    return ctx.error("needs two subgraphs (then, else), has ", ctx.node.subgraphs.size());
  if (!ctx.present(0)) return ctx.error("needs a condition input");
  if (ctx.in[0].dtype != DataType::kBOOL || !isScalar(ctx.in[0]))
    return ctx.error("the condition must be a 0-D kBOOL tensor, got ", dataTypeName(ctx.in[0].dtype), " ",
                     dimsToString(ctx.in[0].shape));
  std::vector<TensorInfo> captured;
  for (size_t i = 1; i < ctx.numInputs(); ++i) {
    if (!ctx.present(i)) return ctx.error("input ", i, " (a captured value) is absent");
    captured.push_back(ctx.in[i]);
  }
  KILN_ASSIGN_OR_RETURN(std::vector<TensorInfo> thenOut, inferSubgraph(ctx, *ctx.node.subgraphs[0], "then", captured));
  KILN_ASSIGN_OR_RETURN(std::vector<TensorInfo> elseOut, inferSubgraph(ctx, *ctx.node.subgraphs[1], "else", captured));
  if (thenOut.size() != ctx.out.size() || elseOut.size() != ctx.out.size())
    return ctx.error("has ", ctx.out.size(), " outputs but its branches give ", thenOut.size(), " and ",
                     elseOut.size());
  if (ctx.inValues[0] && ctx.inValues[0]->count() == 1) {
    bool cond = ctx.inValues[0]->intAt(0) != 0;
    ctx.out = cond ? thenOut : elseOut;
    return Status::ok();
  }
  for (size_t i = 0; i < ctx.out.size(); ++i) {
    TensorInfo const& a = thenOut[i];
    TensorInfo const& b = elseOut[i];
    if (a.dtype != b.dtype)
      return ctx.error("output ", i, " is ", dataTypeName(a.dtype), " in the then branch but ", dataTypeName(b.dtype),
                       " in the else branch");
    if (a.shape.nbDims != b.shape.nbDims)
      return ctx.error("output ", i, " has rank ", a.shape.nbDims, " in the then branch but ", b.shape.nbDims,
                       " in the else branch");
    TensorInfo o = a;
    for (int32_t d = 0; d < a.shape.nbDims; ++d)
      if (a.shape.d[d] != b.shape.d[d]) o.shape.d[d] = -1;
    ctx.out[i] = o;
  }
  return Status::ok();
}

Status inferLoop(InferContext& ctx) {
  if (ctx.node.subgraphs.empty() && ctx.node.attrs.has("boundary"))
    return inferBoundary(ctx, ctx.node.attrs.getString("boundary"));
  KILN_RETURN_IF_ERROR(checkDepth(ctx));
  Node const& n = ctx.node;
  if (n.subgraphs.size() != 1 || !n.subgraphs[0]) return ctx.error("needs one subgraph (the body)");
  int64_t numCarried = n.attrs.getInt("num_carried", 0);
  int64_t numScanned = n.attrs.getInt("num_scanned", 0);
  bool hasCondition = n.attrs.getInt("has_condition", 0) != 0;
  std::vector<int64_t> scanAxes = n.attrs.getInts("scan_axes");
  std::vector<int64_t> sources = n.attrs.getInts("output_sources");
  std::vector<int64_t> kinds = n.attrs.getInts("output_kinds");
  std::vector<int64_t> axes = n.attrs.getInts("output_axes");
  if (numCarried < 0 || numScanned < 0 || 1 + numCarried + numScanned > static_cast<int64_t>(ctx.numInputs()))
    return ctx.error("num_carried ", numCarried, " and num_scanned ", numScanned, " do not fit its ", ctx.numInputs(),
                     " inputs");
  if (static_cast<int64_t>(scanAxes.size()) != numScanned)
    return ctx.error("scan_axes has ", scanAxes.size(), " entries for ", numScanned, " scanned tensors");
  if (sources.size() != ctx.out.size() || kinds.size() != ctx.out.size() || axes.size() != ctx.out.size())
    return ctx.error("output_sources/output_kinds/output_axes need one entry per output (", ctx.out.size(), ")");
  int64_t trip = -1;
  if (ctx.present(0)) {
    TensorInfo const& t = ctx.in[0];
    if ((t.dtype != DataType::kINT32 && t.dtype != DataType::kINT64) || !isScalar(t))
      return ctx.error("the trip count must be a 0-D int32/int64 tensor, got ", dataTypeName(t.dtype), " ",
                       dimsToString(t.shape));
    if (ctx.inValues[0] && ctx.inValues[0]->count() == 1) {
      trip = ctx.inValues[0]->intAt(0);
      if (trip < 0) return ctx.error("the trip count is negative (", trip, ")");
    }
  } else if (!hasCondition && numScanned == 0) {
    return ctx.error("has no trip count, no condition and no scanned tensor: it would never stop");
  }
  size_t c0 = 1;
  size_t s0 = c0 + static_cast<size_t>(numCarried);
  size_t x0 = s0 + static_cast<size_t>(numScanned);
  for (size_t i = c0; i < ctx.numInputs(); ++i)
    if (!ctx.present(i)) return ctx.error("input ", i, " is absent");
  // Iteration count when known at build time: min(trip count, scanned lengths); unknown with a condition.
  int64_t scanLen = -2;  // -2: no scanned tensor
  std::vector<TensorInfo> bodyIn;
  bodyIn.push_back({DataType::kINT64, makeDims({})});
  for (size_t i = c0; i < s0; ++i) bodyIn.push_back(ctx.in[i]);
  for (size_t k = 0; k < static_cast<size_t>(numScanned); ++k) {
    TensorInfo const& s = ctx.in[s0 + k];
    int64_t axis = scanAxes[k];
    if (axis < 0) axis += s.shape.nbDims;
    if (axis < 0 || axis >= s.shape.nbDims)
      return ctx.error("scan axis ", scanAxes[k], " is out of range for scanned tensor ", k, " of shape ",
                       dimsToString(s.shape));
    int64_t len = s.shape.d[axis];
    if (len < 0) scanLen = -1;
    else if (scanLen == -2) scanLen = len;
    else if (scanLen >= 0) scanLen = std::min(scanLen, len);
    bodyIn.push_back({s.dtype, dropAxis(s.shape, static_cast<int32_t>(axis))});
  }
  for (size_t i = x0; i < ctx.numInputs(); ++i) bodyIn.push_back(ctx.in[i]);
  int64_t iterations = -1;
  bool tripKnown = !ctx.present(0) || trip >= 0;
  bool scanKnown = scanLen != -1;
  if (tripKnown && scanKnown && (!hasCondition || trip == 0)) {
    if (ctx.present(0) && scanLen >= 0) iterations = std::min(trip, scanLen);
    else if (ctx.present(0)) iterations = trip;
    else if (scanLen >= 0) iterations = scanLen;
  }
  if (iterations == 0 && hasCondition) iterations = 0;

  size_t condOut = hasCondition ? 1 : 0;
  std::vector<TensorInfo> bodyOut;
  // Carried values whose shape the body changes become -1 in the changing dims; repeat until stable.
  for (int round = 0;; ++round) {
    KILN_ASSIGN_OR_RETURN(bodyOut, inferSubgraph(ctx, *n.subgraphs[0], "body", bodyIn));
    if (bodyOut.size() < condOut + static_cast<size_t>(numCarried))
      return ctx.error("the body has ", bodyOut.size(), " outputs; it needs at least ",
                       condOut + static_cast<size_t>(numCarried));
    if (hasCondition && (bodyOut[0].dtype != DataType::kBOOL || !isScalar(bodyOut[0])))
      return ctx.error("the body's condition output must be 0-D kBOOL, got ", dataTypeName(bodyOut[0].dtype), " ",
                       dimsToString(bodyOut[0].shape));
    bool changed = false;
    for (size_t c = 0; c < static_cast<size_t>(numCarried); ++c) {
      TensorInfo& cur = bodyIn[1 + c];
      TensorInfo const& next = bodyOut[condOut + c];
      if (next.dtype != cur.dtype)
        return ctx.error("carried value ", c, " is ", dataTypeName(cur.dtype), " but the body makes it ",
                         dataTypeName(next.dtype));
      if (next.shape.nbDims != cur.shape.nbDims)
        return ctx.error("carried value ", c, " has rank ", cur.shape.nbDims, " but the body makes it rank ",
                         next.shape.nbDims);
      for (int32_t d = 0; d < cur.shape.nbDims; ++d) {
        if (cur.shape.d[d] != next.shape.d[d] && cur.shape.d[d] != -1) {
          cur.shape.d[d] = -1;
          changed = true;
        }
      }
    }
    if (!changed) break;
    if (round >= 2 * Dims::MAX_DIMS) return internalError(n.describe(), ": carried shapes do not settle");
  }
  for (size_t i = 0; i < ctx.out.size(); ++i) {
    int64_t src = sources[i];
    if (src < static_cast<int64_t>(condOut) || src >= static_cast<int64_t>(bodyOut.size()))
      return ctx.error("output ", i, " reads body output ", src, ", which is not a value output (the body has ",
                       bodyOut.size(), " outputs", hasCondition ? ", the first being the condition)" : ")");
    TensorInfo v = bodyOut[src];
    bool carried = src < static_cast<int64_t>(condOut) + numCarried;
    if (carried) v.shape = bodyIn[1 + (src - condOut)].shape;  // settled (merged with the initial shape)
    // output_kinds holds LoopOutput values: 0 kLAST_VALUE, 1 kCONCATENATE, 2 kREVERSE.
    if (kinds[i] == 0) {
      ctx.out[i] = v;
      continue;
    }
    if (kinds[i] != 1 && kinds[i] != 2) return ctx.error("output ", i, " has an unknown kind ", kinds[i]);
    int64_t axis = axes[i];
    if (axis < 0) axis += v.shape.nbDims + 1;
    if (axis < 0 || axis > v.shape.nbDims)
      return ctx.error("output ", i, " axis ", axes[i], " is out of range for a rank-", v.shape.nbDims, " value");
    if (v.shape.nbDims + 1 > Dims::MAX_DIMS) return ctx.error("output ", i, " would exceed the maximum rank");
    Dims s{};
    s.nbDims = v.shape.nbDims + 1;
    for (int32_t d = 0, k = 0; d < s.nbDims; ++d) s.d[d] = d == axis ? iterations : v.shape.d[k++];
    ctx.out[i] = {v.dtype, s};
  }
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kIf, inferIf);
KILN_REGISTER_INFER(kLoop, inferLoop);

}  // namespace kiln::ir
