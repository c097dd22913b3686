// Reference kernels of If and Loop ("if_reference", "loop_reference"): they run their subgraphs on the host with
// the reference kernels, node by node, asking LaunchContext::allocateOutput for outputs whose shapes are known
// only once the subgraph ran. CPU only: the views are host pointers.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "backends/reference/reference_util.h"
#include "ir/loop_limits.h"
#include "ir/shape_inference.h"

namespace kiln::backends::reference {
namespace {

// Deepest nesting of control-flow nodes (as in shape inference).
constexpr int kMaxControlFlowDepth = 16;

int nestingDepth(ir::Node const& n) {
  int deepest = 0;
  for (auto const& g : n.subgraphs)
    for (auto const& inner : g->nodes())
      if (!inner->subgraphs.empty()) deepest = std::max(deepest, nestingDepth(*inner));
  return 1 + deepest;
}

Status checkDepth(ir::Node const& n) {
  int depth = nestingDepth(n);
  if (depth > kMaxControlFlowDepth)
    return unsupported(n.describe(), ": control flow is nested ", depth, " levels deep; at most ", kMaxControlFlowDepth,
                       " are supported");
  return Status::ok();
}

// `r`, with `where` prepended to its error.
template <typename T>
Result<T> withContext(Result<T> r, std::string const& where) {
  if (!r.isOk()) return r.status().withContext(where);
  return r;
}

// Runs one node on host tensors; outputs of unknown shape are allocated when the kernel asks for them.
Result<std::vector<HostTensor>> runNode(ir::Node const& n, std::vector<HostTensor const*> const& in,
                                        std::vector<TensorInfo> const& outInfo) {
  std::vector<TensorInfo> inInfo;
  LaunchContext ctx;
  for (HostTensor const* t : in) {
    if (t) {
      inInfo.push_back({t->dtype(), t->shape()});
      ctx.inputs.push_back({const_cast<void*>(t->data()), t->dtype(), t->shape()});
    } else {
      Dims none{};
      none.nbDims = -1;
      inInfo.push_back({DataType::kFLOAT, none});
      ctx.inputs.push_back({nullptr, DataType::kFLOAT, none});
    }
  }
  std::vector<std::optional<HostTensor>> out(outInfo.size());
  bool dataDependent = false;
  for (size_t i = 0; i < outInfo.size(); ++i) {
    if (dimsKnown(outInfo[i].shape)) {
      KILN_ASSIGN_OR_RETURN(out[i], HostTensor::allocate(outInfo[i].dtype, outInfo[i].shape, "subgraph tensor"));
      ctx.outputs.push_back({out[i]->mutableData(), outInfo[i].dtype, outInfo[i].shape});
    } else {
      dataDependent = true;
      ctx.outputs.push_back({nullptr, outInfo[i].dtype, outInfo[i].shape});
    }
  }
  if (dataDependent) {
    ctx.allocateOutput = [&](size_t i, Dims const& shape) -> Result<void*> {
      if (i >= out.size()) return internalError(n.describe(), ": allocateOutput(", i, ") is out of range");
      if (!dimsKnown(shape)) return internalError(n.describe(), ": allocateOutput with shape ", dimsToString(shape));
      KILN_ASSIGN_OR_RETURN(out[i], HostTensor::allocate(outInfo[i].dtype, shape, "subgraph tensor"));
      return out[i]->mutableData();
    };
  }
  auto cands = TacticRegistry::instance().candidates(n, inInfo, outInfo, DeviceType::kCPU,
                                                     1u << static_cast<uint32_t>(TacticSource::kREFERENCE));
  if (cands.empty()) return unsupported(n.describe(), ": no reference kernel supports these input types");
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k, cands.front()->create(n));
  size_t ws = k->workspaceSize(inInfo, outInfo);
  HostBuffer wsBuf;
  if (ws) {
    KILN_ASSIGN_OR_RETURN(wsBuf, HostBuffer::allocate(ws, "reference kernel workspace"));
    ctx.workspace = wsBuf.data();
    ctx.workspaceSize = ws;
  }
  CpuStream stream;
  ctx.stream = &stream;
  KILN_RETURN_IF_ERROR(k->enqueue(ctx));
  std::vector<HostTensor> result;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i]) return internalError(n.describe(), ": the kernel did not allocate data-dependent output ", i);
    result.push_back(std::move(*out[i]));
  }
  return result;
}

// Runs a renumbered subgraph on host tensors (inputs in g.inputs() order); returns its outputs.
Result<std::vector<HostTensor>> runSubgraph(ir::Graph const& g, std::vector<HostTensor> const& inputs) {
  if (inputs.size() != g.inputs().size())
    return internalError("the subgraph has ", g.inputs().size(), " inputs but ", inputs.size(), " were given");
  ir::ShapeState state;
  state.resize(g.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    ir::Value const* v = g.inputs()[i];
    if (inputs[i].dtype() != v->dtype)
      return internalError("subgraph input '", v->name, "' is ", dataTypeName(v->dtype), " but got ",
                           dataTypeName(inputs[i].dtype()));
    state.info[v->id] = {inputs[i].dtype(), inputs[i].shape()};
    // Small inputs are known contents, so that shape tensors and conditions computed from them are too.
    if (inputs[i].count() <= ir::kMaxHostEvalElements) state.values[v->id] = inputs[i];
  }
  ir::HostEvaluator eval = referenceEvaluator();
  KILN_RETURN_IF_ERROR(ir::inferShapes(g, state, &eval));
  std::vector<std::optional<HostTensor>> vals(g.values().size());
  for (size_t i = 0; i < inputs.size(); ++i) vals[g.inputs()[i]->id] = inputs[i];
  for (auto const& np : g.nodes()) {
    ir::Node const& n = *np;
    bool allKnown = true;
    for (ir::Value const* v : n.outputs)
      if (!state.values[v->id]) allKnown = false;
    if (allKnown) {
      for (ir::Value const* v : n.outputs) vals[v->id] = *state.values[v->id];
      continue;
    }
    std::vector<HostTensor const*> in;
    for (ir::Value const* v : n.inputs) {
      if (!v) {
        in.push_back(nullptr);
        continue;
      }
      if (!vals[v->id]) return internalError(n.describe(), ": input '", v->name, "' was not computed");
      in.push_back(&*vals[v->id]);
    }
    std::vector<TensorInfo> outInfo;
    for (ir::Value const* v : n.outputs) outInfo.push_back(state.info[v->id]);
    KILN_ASSIGN_OR_RETURN(std::vector<HostTensor> out, withContext(runNode(n, in, outInfo), n.describe()));
    for (size_t i = 0; i < n.outputs.size(); ++i) vals[n.outputs[i]->id] = std::move(out[i]);
  }
  std::vector<HostTensor> result;
  for (ir::Value const* v : g.outputs()) {
    if (!vals[v->id]) return internalError("subgraph output '", v->name, "' was not computed");
    result.push_back(*vals[v->id]);
  }
  return result;
}

// Writes `t` into kernel output `i`: into the preallocated view (shapes must agree) or memory from allocateOutput.
Status writeOutput(std::string const& name, LaunchContext const& ctx, size_t i, HostTensor const& t) {
  TensorView const& o = ctx.outputs[i];
  if (t.dtype() != o.dtype)
    return internalError(name, ": output ", i, " is ", dataTypeName(o.dtype), " but the subgraph made ",
                         dataTypeName(t.dtype()));
  void* dst = o.data;
  if (!dst) {
    bool fits = o.shape.nbDims == t.shape().nbDims;
    for (int32_t d = 0; fits && d < o.shape.nbDims; ++d) fits = o.shape.d[d] < 0 || o.shape.d[d] == t.shape().d[d];
    if (!fits)
      return invalidArgument(name, ": output ", i, " has shape ", dimsToString(t.shape()),
                             ", which does not fit the inferred ", dimsToString(o.shape));
    if (!ctx.allocateOutput)
      return internalError(name, ": output ", i, " has a data-dependent shape but no allocateOutput");
    KILN_ASSIGN_OR_RETURN(dst, ctx.allocateOutput(i, t.shape()));
  } else if (!dimsEqual(o.shape, t.shape())) {
    return invalidArgument(name, ": output ", i, " has shape ", dimsToString(t.shape()), " but ", dimsToString(o.shape),
                           " was expected");
  }
  if (t.bytes()) {
    if (!dst) return internalError(name, ": no memory for output ", i);
    std::memcpy(dst, t.data(), t.bytes());
  }
  return Status::ok();
}

HostTensor borrowInput(TensorView const& v) { return HostTensor::borrow(v.dtype, v.shape, v.data); }

// A renumbered private copy of a subgraph (the node's own may not be numbered).
Result<std::unique_ptr<ir::Graph>> prepared(ir::Graph const& g) {
  std::unique_ptr<ir::Graph> c = g.clone();
  KILN_RETURN_IF_ERROR(c->renumber());
  return c;
}

class IfKernel final : public Kernel {
 public:
  IfKernel(ir::Node const& n, std::unique_ptr<ir::Graph> thenG, std::unique_ptr<ir::Graph> elseG)
      : name_(n.describe()), thenG_(std::move(thenG)), elseG_(std::move(elseG)) {}

  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& c = ctx.inputs[0];
    if (c.count() != 1 || !c.data) return invalidArgument(name_, ": the condition must hold one value");
    bool cond = loadAsInt(c, 0) != 0;
    std::vector<HostTensor> in;
    for (size_t i = 1; i < ctx.inputs.size(); ++i) in.push_back(borrowInput(ctx.inputs[i]));
    ir::Graph const& g = cond ? *thenG_ : *elseG_;
    KILN_ASSIGN_OR_RETURN(std::vector<HostTensor> out,
                          withContext(runSubgraph(g, in), strCat(name_, ", ", cond ? "then" : "else", " branch")));
    if (out.size() != ctx.outputs.size())
      return internalError(name_, ": the branch gave ", out.size(), " outputs for ", ctx.outputs.size());
    for (size_t i = 0; i < out.size(); ++i) KILN_RETURN_IF_ERROR(writeOutput(name_, ctx, i, out[i]));
    return Status::ok();
  }

 private:
  std::string name_;
  std::unique_ptr<ir::Graph> thenG_, elseG_;
};

// Slice `k` of `t` along `axis` (the axis removed).
Result<HostTensor> sliceAlong(HostTensor const& t, int32_t axis, int64_t k) {
  Dims const& s = t.shape();
  Dims r{};
  r.nbDims = s.nbDims - 1;
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0, j = 0; d < s.nbDims; ++d) {
    if (d == axis) continue;
    r.d[j++] = s.d[d];
    if (d < axis)
      outer *= s.d[d];
    else
      inner *= s.d[d];
  }
  KILN_ASSIGN_OR_RETURN(HostTensor out, HostTensor::allocate(t.dtype(), r, "loop slice"));
  size_t esz = dataTypeSize(t.dtype());
  size_t chunk = static_cast<size_t>(inner) * esz;
  auto const* src = static_cast<uint8_t const*>(t.data());
  auto* dst = static_cast<uint8_t*>(out.mutableData());
  int64_t len = s.d[axis];
  for (int64_t o = 0; o < outer && chunk; ++o)
    std::memcpy(dst + o * chunk, src + (o * len + k) * static_cast<int64_t>(chunk), chunk);
  return out;
}

// Stacks equally shaped tensors on a new axis `axis` (`elem` gives the element shape when `items` is empty).
Result<HostTensor> stackAlong(std::vector<HostTensor> const& items, Dims const& elem, DataType dtype, int32_t axis) {
  Dims s{};
  s.nbDims = elem.nbDims + 1;
  int64_t n = static_cast<int64_t>(items.size());
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0, j = 0; d < s.nbDims; ++d) {
    if (d == axis) {
      s.d[d] = n;
      continue;
    }
    s.d[d] = elem.d[j];
    if (d < axis)
      outer *= elem.d[j];
    else
      inner *= elem.d[j];
    ++j;
  }
  KILN_ASSIGN_OR_RETURN(HostTensor out, HostTensor::allocate(dtype, s, "loop output"));
  size_t chunk = static_cast<size_t>(inner) * dataTypeSize(dtype);
  auto* dst = static_cast<uint8_t*>(out.mutableData());
  for (int64_t t = 0; t < n && chunk; ++t) {
    if (!dimsEqual(items[t].shape(), elem))
      return invalidArgument("iteration ", t, " made a value of shape ", dimsToString(items[t].shape()),
                             " but iteration 0 made ", dimsToString(elem), "; they cannot be concatenated");
    auto const* src = static_cast<uint8_t const*>(items[t].data());
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(dst + (o * n + t) * static_cast<int64_t>(chunk), src + o * static_cast<int64_t>(chunk), chunk);
  }
  return out;
}

class LoopKernel final : public Kernel {
 public:
  LoopKernel(ir::Node const& n, std::unique_ptr<ir::Graph> body) : name_(n.describe()), body_(std::move(body)) {
    numCarried_ = n.attrs.getInt("num_carried", 0);
    numScanned_ = n.attrs.getInt("num_scanned", 0);
    scanAxes_ = n.attrs.getInts("scan_axes");
    scanReverse_ = n.attrs.getInts("scan_reverse");
    hasCondition_ = n.attrs.getInt("has_condition", 0) != 0;
    sources_ = n.attrs.getInts("output_sources");
    kinds_ = n.attrs.getInts("output_kinds");
    axes_ = n.attrs.getInts("output_axes");
    scanReverse_.resize(scanAxes_.size(), 0);
  }

  Status enqueue(LaunchContext const& ctx) const override {
    size_t c0 = 1;
    size_t s0 = c0 + static_cast<size_t>(numCarried_);
    size_t x0 = s0 + static_cast<size_t>(numScanned_);
    if (ctx.inputs.size() < x0) return internalError(name_, ": too few inputs");
    int64_t const maxIterations = ir::maxLoopIterations();
    int64_t limit = maxIterations;
    bool bounded = false;
    if (ctx.inputs[0].data) {
      if (ctx.inputs[0].count() != 1) return invalidArgument(name_, ": the trip count must hold one value");
      int64_t trip = loadAsInt(ctx.inputs[0], 0);
      if (trip < 0) return invalidArgument(name_, ": the trip count is negative (", trip, ")");
      if (trip > maxIterations)
        return invalidArgument(name_, ": the trip count ", trip, " exceeds the limit of ", maxIterations,
                               " iterations (KILN_MAX_LOOP_ITERATIONS)");
      limit = trip;
      bounded = true;
    }
    std::vector<HostTensor> scanned;
    std::vector<int32_t> scanAxis;
    for (size_t k = 0; k < static_cast<size_t>(numScanned_); ++k) {
      HostTensor s = borrowInput(ctx.inputs[s0 + k]);
      int64_t a = scanAxes_[k] < 0 ? scanAxes_[k] + s.shape().nbDims : scanAxes_[k];
      if (a < 0 || a >= s.shape().nbDims) return invalidArgument(name_, ": scan axis out of range");
      limit = std::min(limit, s.shape().d[a]);
      bounded = true;
      scanned.push_back(std::move(s));
      scanAxis.push_back(static_cast<int32_t>(a));
    }
    if (!bounded && !hasCondition_) return invalidArgument(name_, ": the loop has no trip limit");
    std::vector<HostTensor> carried;
    for (size_t i = c0; i < s0; ++i) {
      KILN_ASSIGN_OR_RETURN(HostTensor t, borrowInput(ctx.inputs[i]).clone("loop carried value"));
      carried.push_back(std::move(t));
    }
    size_t condOut = hasCondition_ ? 1 : 0;
    size_t nOut = ctx.outputs.size();
    std::vector<std::optional<HostTensor>> last(nOut);
    std::vector<std::vector<HostTensor>> stacked(nOut);
    int64_t it = 0;
    for (;; ++it) {
      if (it >= limit) {
        if (!bounded)
          return invalidArgument(
              name_, ": the loop ran ", maxIterations,
              " iterations without its condition turning false; giving up (KILN_MAX_LOOP_ITERATIONS)");
        break;
      }
      std::vector<HostTensor> in;
      in.push_back(HostTensor::fromVector(DataType::kINT64, makeDims({}), std::vector<int64_t>{it}));
      for (HostTensor const& c : carried) in.push_back(c);
      for (size_t k = 0; k < scanned.size(); ++k) {
        int64_t len = scanned[k].shape().d[scanAxis[k]];
        int64_t idx = scanReverse_[k] ? len - 1 - it : it;
        KILN_ASSIGN_OR_RETURN(HostTensor sl, sliceAlong(scanned[k], scanAxis[k], idx));
        in.push_back(std::move(sl));
      }
      for (size_t i = x0; i < ctx.inputs.size(); ++i) in.push_back(borrowInput(ctx.inputs[i]));
      KILN_ASSIGN_OR_RETURN(std::vector<HostTensor> out,
                            withContext(runSubgraph(*body_, in), strCat(name_, ", iteration ", it)));
      if (out.size() < condOut + carried.size()) return internalError(name_, ": the body gave too few outputs");
      if (hasCondition_) {
        if (out[0].count() != 1) return invalidArgument(name_, ": the body's condition must hold one value");
        if (out[0].intAt(0) == 0) break;
      }
      for (size_t o = 0; o < nOut; ++o) {
        size_t src = static_cast<size_t>(sources_[o]);
        if (src >= out.size()) return internalError(name_, ": output source out of range");
        if (kinds_[o] == 0)
          last[o] = out[src];
        else
          stacked[o].push_back(out[src]);
      }
      for (size_t c = 0; c < carried.size(); ++c) {
        HostTensor const& next = out[condOut + c];
        if (next.dtype() != carried[c].dtype() || next.shape().nbDims != carried[c].shape().nbDims)
          return invalidArgument(name_, ": the body changed the type or rank of carried value ", c);
        carried[c] = next;
      }
    }
    for (size_t o = 0; o < nOut; ++o) {
      size_t src = static_cast<size_t>(sources_[o]);
      TensorView const& ov = ctx.outputs[o];
      if (kinds_[o] == 0) {
        if (last[o]) {
          KILN_RETURN_IF_ERROR(writeOutput(name_, ctx, o, *last[o]));
        } else if (src >= condOut && src < condOut + carried.size()) {
          KILN_RETURN_IF_ERROR(writeOutput(name_, ctx, o, carried[src - condOut]));  // no iteration ran
        } else {
          if (!dimsKnown(ov.shape))
            return invalidArgument(name_, ": output ", o, " has no last value: no iteration ran");
          KILN_ASSIGN_OR_RETURN(HostTensor z, HostTensor::allocate(ov.dtype, ov.shape, "loop output"));
          std::memset(z.mutableData(), 0, z.bytes());
          KILN_RETURN_IF_ERROR(writeOutput(name_, ctx, o, z));
        }
        continue;
      }
      std::vector<HostTensor>& items = stacked[o];
      if (kinds_[o] == 2) std::reverse(items.begin(), items.end());
      int32_t rank = ov.shape.nbDims;
      int64_t a = axes_[o] < 0 ? axes_[o] + rank : axes_[o];
      if (a < 0 || a >= rank) return internalError(name_, ": output axis out of range");
      Dims elem{};
      if (!items.empty()) {
        elem = items[0].shape();
      } else {
        elem.nbDims = rank - 1;
        for (int32_t d = 0, j = 0; d < rank; ++d)
          if (d != a) elem.d[j++] = std::max<int64_t>(ov.shape.d[d], 0);
      }
      KILN_ASSIGN_OR_RETURN(HostTensor t,
                            withContext(stackAlong(items, elem, ov.dtype, static_cast<int32_t>(a)), name_));
      KILN_RETURN_IF_ERROR(writeOutput(name_, ctx, o, t));
    }
    return Status::ok();
  }

 private:
  std::string name_;
  std::unique_ptr<ir::Graph> body_;
  int64_t numCarried_ = 0, numScanned_ = 0;
  std::vector<int64_t> scanAxes_, scanReverse_;
  bool hasCondition_ = false;
  std::vector<int64_t> sources_, kinds_, axes_;
};

Tactic ifTactic() {
  return makeTactic(
      "if_reference", ir::OpType::kIf,
      [](ir::Node const& n) -> Result<std::unique_ptr<Kernel>> {
        KILN_RETURN_IF_ERROR(checkDepth(n));
        if (n.subgraphs.size() != 2 || !n.subgraphs[0] || !n.subgraphs[1])
          return invalidGraph(n.describe(), ": needs two subgraphs (then, else)");
        KILN_ASSIGN_OR_RETURN(auto thenG, prepared(*n.subgraphs[0]));
        KILN_ASSIGN_OR_RETURN(auto elseG, prepared(*n.subgraphs[1]));
        return std::unique_ptr<Kernel>(std::make_unique<IfKernel>(n, std::move(thenG), std::move(elseG)));
      },
      [](ir::Node const& n, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const&) {
        return n.subgraphs.size() == 2 && !in.empty() && in[0].dtype == DataType::kBOOL;
      });
}

Tactic loopTactic() {
  return makeTactic(
      "loop_reference", ir::OpType::kLoop,
      [](ir::Node const& n) -> Result<std::unique_ptr<Kernel>> {
        KILN_RETURN_IF_ERROR(checkDepth(n));
        if (n.subgraphs.size() != 1 || !n.subgraphs[0]) return invalidGraph(n.describe(), ": needs a body subgraph");
        size_t nOut = n.outputs.size();
        if (n.attrs.getInts("output_sources").size() != nOut || n.attrs.getInts("output_kinds").size() != nOut ||
            n.attrs.getInts("output_axes").size() != nOut)
          return invalidGraph(n.describe(), ": output_sources/kinds/axes need one entry per output");
        if (static_cast<int64_t>(n.attrs.getInts("scan_axes").size()) != n.attrs.getInt("num_scanned", 0))
          return invalidGraph(n.describe(), ": scan_axes needs one entry per scanned tensor");
        KILN_ASSIGN_OR_RETURN(auto body, prepared(*n.subgraphs[0]));
        return std::unique_ptr<Kernel>(std::make_unique<LoopKernel>(n, std::move(body)));
      },
      [](ir::Node const& n, std::vector<TensorInfo> const&, std::vector<TensorInfo> const&) {
        return n.subgraphs.size() == 1;
      });
}

}  // namespace

KILN_REGISTER_TACTIC(ifTactic);
KILN_REGISTER_TACTIC(loopTactic);

}  // namespace kiln::backends::reference
