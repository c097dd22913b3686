// If and Loop on the device ("if_cuda_subgraph", "loop_cuda_subgraph"): their subgraphs run node by node with the
// CUDA kernels on the launch's stream (subgraph.h); the reference kernels (reference/control_flow.cc) are the
// oracle whose semantics these follow. Host round trips remain only where a value decides control: an If's
// condition, a Loop's trip count and condition (each read once per decision, refused inside CUDA graph capture).
#include <algorithm>
#include <cstdlib>

#include "backends/cuda/control_flow_kernels.h"
#include "backends/cuda/copy_host.h"
#include "backends/cuda/subgraph.h"
#include "ir/loop_limits.h"

namespace kiln::cuda {
namespace {

// Tensors handed on as views into another tensor keep the pool's alignment (kernels may assume 64 bytes).
constexpr uintptr_t kViewAlignment = 256;

// The per-context state of an If/Loop kernel: one SubgraphState per subgraph.
struct ControlFlowState final : backends::KernelContextState {
  std::vector<std::unique_ptr<SubgraphState>> subgraphs;
};

Result<std::unique_ptr<ControlFlowState>> makeState(std::vector<std::unique_ptr<DeviceSubgraph>> const& graphs,
                                                    backends::ContextResources const& resources) {
  auto st = std::make_unique<ControlFlowState>();
  for (auto const& g : graphs) {
    KILN_ASSIGN_OR_RETURN(auto s, g->createState(resources));
    st->subgraphs.push_back(std::move(s));
  }
  return st;
}

// The context's state of the kernel, or one made for this launch (launches outside an execution context, such as
// the builder's timing runs, come without one).
Result<ControlFlowState*> stateFor(backends::LaunchContext const& ctx,
                                   std::vector<std::unique_ptr<DeviceSubgraph>> const& graphs,
                                   std::unique_ptr<ControlFlowState>& local) {
  if (ctx.state) return static_cast<ControlFlowState*>(ctx.state);
  KILN_ASSIGN_OR_RETURN(local, makeState(graphs, backends::ContextResources{}));
  return local.get();
}

DeviceValue viewOf(backends::TensorView const& t) {
  DeviceValue v;
  v.data = t.data;
  v.dtype = t.dtype;
  v.shape = t.shape;
  return v;
}

// The memory of kernel output `i` for a result of `shape`: the output as planned (shapes must agree) or, for a
// data-dependent output, memory from allocateOutput (the shape must fit the inferred one).
Result<void*> outputMemory(DeviceEnv const& env, backends::LaunchContext const& ctx, size_t i, DataType dtype,
                           Dims const& shape) {
  backends::TensorView const& o = ctx.outputs[i];
  if (dtype != o.dtype)
    return internalError(env.what, ": output ", i, " is ", dataTypeName(o.dtype), " but the subgraph made ",
                         dataTypeName(dtype));
  if (dimsKnown(o.shape)) {
    if (!dimsEqual(o.shape, shape))
      return invalidArgument(env.what, ": output ", i, " has shape ", dimsToString(shape), " but ",
                             dimsToString(o.shape), " was expected");
    return o.data;
  }
  bool fits = o.shape.nbDims == shape.nbDims;
  for (int32_t d = 0; fits && d < o.shape.nbDims; ++d) fits = o.shape.d[d] < 0 || o.shape.d[d] == shape.d[d];
  if (!fits)
    return invalidArgument(env.what, ": output ", i, " has shape ", dimsToString(shape),
                           ", which does not fit the inferred ", dimsToString(o.shape));
  if (!ctx.allocateOutput)
    return internalError(env.what, ": output ", i, " has a data-dependent shape but no allocateOutput");
  return ctx.allocateOutput(i, shape);
}

// Writes `v` into kernel output `i` (nothing to copy when the subgraph already wrote it there).
Status writeOutput(DeviceEnv const& env, backends::LaunchContext const& ctx, size_t i, DeviceValue const& v) {
  KILN_ASSIGN_OR_RETURN(void* dst, outputMemory(env, ctx, i, v.dtype, v.shape));
  size_t bytes = v.bytes();
  if (bytes == 0 || dst == v.data) return Status::ok();
  if (!dst || !v.data) return internalError(env.what, ": no memory for output ", i);
  return env.dev->copy(dst, v.data, bytes, backends::CopyKind::kDeviceToDevice, env.native);
}

Result<bool> readCondition(DeviceEnv const& env, DeviceValue const& c, char const* what) {
  if (volume(c.shape) != 1) return invalidArgument(env.what, ": ", what, " must hold one value");
  if (c.host) return c.host->intAt(0) != 0;
  KILN_ASSIGN_OR_RETURN(HostTensor h, env.download(c, what));
  return h.intAt(0) != 0;
}

// Outer and inner element counts of `s` around `axis`.
void splitAt(Dims const& s, int32_t axis, int64_t& outer, int64_t& inner) {
  outer = 1;
  inner = 1;
  for (int32_t d = 0; d < s.nbDims; ++d) {
    if (d < axis)
      outer *= s.d[d];
    else if (d > axis)
      inner *= s.d[d];
  }
}

// Slice `k` of `t` along `axis` (the axis removed): a view when it is contiguous and aligned, else a copy.
Result<DeviceValue> sliceAlong(DeviceEnv const& env, DeviceValue const& t, int32_t axis, int64_t k) {
  Dims r{};
  r.nbDims = t.shape.nbDims - 1;
  for (int32_t d = 0, j = 0; d < t.shape.nbDims; ++d)
    if (d != axis) r.d[j++] = t.shape.d[d];
  int64_t outer = 0, inner = 0;
  splitAt(t.shape, axis, outer, inner);
  int64_t len = t.shape.d[axis];
  size_t esz = dataTypeSize(t.dtype);
  uint8_t* first = outer * inner == 0 ? nullptr : static_cast<uint8_t*>(t.data) + static_cast<size_t>(k * inner) * esz;
  if (!first || (outer == 1 && reinterpret_cast<uintptr_t>(first) % kViewAlignment == 0)) {
    DeviceValue v;
    v.data = first;
    v.dtype = t.dtype;
    v.shape = r;
    v.owner = t.owner;
    return v;
  }
  KILN_ASSIGN_OR_RETURN(DeviceValue v, env.allocate(t.dtype, r, "loop slice"));
  CopyPlan p;
  p.rank = 2;
  p.dims[0] = outer;
  p.dims[1] = inner;
  p.inStrides[0] = len * inner;
  p.inStrides[1] = 1;
  p.outStrides[0] = inner;
  p.outStrides[1] = 1;
  p.inOffset = k * inner;
  KILN_RETURN_IF_ERROR(runCopyPlan(t.data, v.data, t.dtype, p, static_cast<cudaStream_t>(env.native),
                                   env.what + ": slicing a scanned input"));
  return v;
}

// Writes `item` as position `pos` along `axis` of the dense tensor `out` of shape `outShape`.
Status stackInto(DeviceEnv const& env, DeviceValue const& item, void* out, Dims const& outShape, int32_t axis,
                 int64_t pos) {
  int64_t outer = 0, inner = 0;
  splitAt(outShape, axis, outer, inner);
  if (outer * inner == 0) return Status::ok();
  CopyPlan p;
  p.rank = 2;
  p.dims[0] = outer;
  p.dims[1] = inner;
  p.inStrides[0] = inner;
  p.inStrides[1] = 1;
  p.outStrides[0] = outShape.d[axis] * inner;
  p.outStrides[1] = 1;
  p.outOffset = pos * inner;
  return runCopyPlan(item.data, out, item.dtype, p, static_cast<cudaStream_t>(env.native),
                     env.what + ": concatenating a loop output");
}

Dims dropAxis(Dims const& s, int32_t axis) {
  Dims r{};
  r.nbDims = s.nbDims - 1;
  for (int32_t d = 0, j = 0; d < s.nbDims; ++d)
    if (d != axis) r.d[j++] = s.d[d];
  return r;
}

// The node's constant input 0 when it holds one value (an If condition or a Loop trip count known at build time).
std::optional<int64_t> knownScalar(ir::Node const& n) {
  HostTensor const* c = constantInput(n, 0);
  if (!c || c->count() != 1) return std::nullopt;
  return c->intAt(0);
}

// ---- If ----

class IfKernel final : public backends::Kernel {
 public:
  IfKernel(std::string what, std::vector<std::unique_ptr<DeviceSubgraph>> branches, std::optional<int64_t> known)
      : what_(std::move(what)), branches_(std::move(branches)), known_(known) {}

  Result<std::unique_ptr<backends::KernelContextState>> createContextState(
      backends::ContextResources const& resources) const override {
    KILN_ASSIGN_OR_RETURN(auto st, makeState(branches_, resources));
    return std::unique_ptr<backends::KernelContextState>(std::move(st));
  }

  Status enqueue(backends::LaunchContext const& ctx) const override {
    KILN_ASSIGN_OR_RETURN(DeviceEnv env, DeviceEnv::of(ctx, what_));
    if (ctx.inputs.empty()) return internalError(what_, ": no condition input");
    backends::TensorView const& c = ctx.inputs[0];
    if (c.count() != 1 || !c.data) return invalidArgument(what_, ": the condition must hold one value");
    bool cond = false;
    if (known_) {
      cond = *known_ != 0;
    } else {
      KILN_ASSIGN_OR_RETURN(cond, readCondition(env, viewOf(c), "its condition"));
    }
    std::unique_ptr<ControlFlowState> local;
    KILN_ASSIGN_OR_RETURN(ControlFlowState * st, stateFor(ctx, branches_, local));
    size_t b = cond ? 0 : 1;
    std::vector<DeviceValue> in;
    for (size_t i = 1; i < ctx.inputs.size(); ++i) in.push_back(viewOf(ctx.inputs[i]));
    // Outputs whose memory is planned are written by the branch's producers directly.
    auto out = branches_[b]->run(env, st->subgraphs[b].get(), in, ctx.outputs);
    if (!out) return out.status().withContext(strCat(what_, ", ", cond ? "then" : "else", " branch"));
    if (out->size() != ctx.outputs.size())
      return internalError(what_, ": the branch gave ", out->size(), " outputs for ", ctx.outputs.size());
    for (size_t i = 0; i < out->size(); ++i) KILN_RETURN_IF_ERROR(writeOutput(env, ctx, i, (*out)[i]));
    return Status::ok();
  }

 private:
  std::string what_;
  std::vector<std::unique_ptr<DeviceSubgraph>> branches_;  // then, else
  std::optional<int64_t> known_;                           // the condition, when a constant
};

bool ifSupported(ir::Node const& n, std::vector<ir::TensorInfo> const& in) {
  if (n.subgraphs.size() != 2 || !n.subgraphs[0] || !n.subgraphs[1]) return false;
  if (in.empty() || in[0].dtype != DataType::kBOOL) return false;
  if (controlFlowDepth(n) > kMaxControlFlowDepth) return false;
  return DeviceSubgraph::check(*n.subgraphs[0], "then").isOk() && DeviceSubgraph::check(*n.subgraphs[1], "else").isOk();
}

backends::Tactic makeIf() {
  backends::Tactic t;
  t.name = "if_cuda_subgraph";
  t.op = ir::OpType::kIf;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& n, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const&) {
    return ifSupported(n, in);
  };
  t.create = [](ir::Node const& n) -> Result<std::unique_ptr<backends::Kernel>> {
    if (int depth = controlFlowDepth(n); depth > kMaxControlFlowDepth)
      return unsupported(n.describe(), ": control flow is nested ", depth, " levels deep; at most ",
                         kMaxControlFlowDepth, " are supported");
    if (n.subgraphs.size() != 2 || !n.subgraphs[0] || !n.subgraphs[1])
      return invalidGraph(n.describe(), ": needs two subgraphs (then, else)");
    std::vector<std::unique_ptr<DeviceSubgraph>> branches;
    KILN_ASSIGN_OR_RETURN(auto thenG, DeviceSubgraph::create(*n.subgraphs[0], n.describe() + ", then branch"));
    KILN_ASSIGN_OR_RETURN(auto elseG, DeviceSubgraph::create(*n.subgraphs[1], n.describe() + ", else branch"));
    size_t captured = n.inputs.empty() ? 0 : n.inputs.size() - 1;
    for (auto const* g : {thenG.get(), elseG.get()}) {
      if (g->numInputs() != captured)
        return invalidGraph(n.describe(), ": a branch has ", g->numInputs(), " inputs for ", captured,
                            " captured values");
      if (g->numOutputs() != n.outputs.size())
        return invalidGraph(n.describe(), ": a branch has ", g->numOutputs(), " outputs for ", n.outputs.size());
    }
    branches.push_back(std::move(thenG));
    branches.push_back(std::move(elseG));
    return std::unique_ptr<backends::Kernel>(new IfKernel(n.describe(), std::move(branches), knownScalar(n)));
  };
  return t;
}

// ---- Loop ----

struct LoopAttrs {
  int64_t numCarried = 0, numScanned = 0;
  std::vector<int64_t> scanAxes, scanReverse;
  bool hasCondition = false;
  std::vector<int64_t> sources, kinds, axes;  // kinds: LoopOutput (0 last value, 1 concatenate, 2 reverse)
};

Result<LoopAttrs> loopAttrs(ir::Node const& n) {
  LoopAttrs a;
  a.numCarried = n.attrs.getInt("num_carried", 0);
  a.numScanned = n.attrs.getInt("num_scanned", 0);
  a.scanAxes = n.attrs.getInts("scan_axes");
  a.scanReverse = n.attrs.getInts("scan_reverse");
  a.hasCondition = n.attrs.getInt("has_condition", 0) != 0;
  a.sources = n.attrs.getInts("output_sources");
  a.kinds = n.attrs.getInts("output_kinds");
  a.axes = n.attrs.getInts("output_axes");
  a.scanReverse.resize(a.scanAxes.size(), 0);
  size_t nOut = n.outputs.size();
  if (a.sources.size() != nOut || a.kinds.size() != nOut || a.axes.size() != nOut)
    return invalidGraph(n.describe(), ": output_sources/kinds/axes need one entry per output");
  if (a.numCarried < 0 || a.numScanned < 0 || static_cast<int64_t>(a.scanAxes.size()) != a.numScanned)
    return invalidGraph(n.describe(), ": scan_axes needs one entry per scanned tensor");
  if (1 + a.numCarried + a.numScanned > static_cast<int64_t>(n.inputs.size()))
    return invalidGraph(n.describe(), ": num_carried and num_scanned do not fit its ", n.inputs.size(), " inputs");
  for (int64_t k : a.kinds)
    if (k < 0 || k > 2) return invalidGraph(n.describe(), ": unknown loop output kind ", k);
  return a;
}

class LoopKernel final : public backends::Kernel {
 public:
  LoopKernel(std::string what, LoopAttrs a, std::unique_ptr<DeviceSubgraph> body, std::optional<int64_t> trip)
      : what_(std::move(what)), a_(std::move(a)), trip_(trip) {
    body_.push_back(std::move(body));
  }

  Result<std::unique_ptr<backends::KernelContextState>> createContextState(
      backends::ContextResources const& resources) const override {
    KILN_ASSIGN_OR_RETURN(auto st, makeState(body_, resources));
    return std::unique_ptr<backends::KernelContextState>(std::move(st));
  }

  Status enqueue(backends::LaunchContext const& ctx) const override;

 private:
  std::string what_;
  LoopAttrs a_;
  std::vector<std::unique_ptr<DeviceSubgraph>> body_;  // one
  std::optional<int64_t> trip_;                        // the trip count, when a constant
};

Status LoopKernel::enqueue(backends::LaunchContext const& ctx) const {
  KILN_ASSIGN_OR_RETURN(DeviceEnv env, DeviceEnv::of(ctx, what_));
  size_t const c0 = 1;
  size_t const s0 = c0 + static_cast<size_t>(a_.numCarried);
  size_t const x0 = s0 + static_cast<size_t>(a_.numScanned);
  if (ctx.inputs.size() < x0) return internalError(what_, ": too few inputs");
  int64_t const maxIterations = ir::maxLoopIterations();
  int64_t limit = maxIterations;
  bool bounded = false;
  if (ctx.inputs[0].data) {
    if (ctx.inputs[0].count() != 1) return invalidArgument(what_, ": the trip count must hold one value");
    int64_t trip = 0;
    if (trip_) {
      trip = *trip_;
    } else {
      KILN_ASSIGN_OR_RETURN(HostTensor h, env.download(viewOf(ctx.inputs[0]), "its trip count"));
      trip = h.intAt(0);
    }
    if (trip < 0) return invalidArgument(what_, ": the trip count is negative (", trip, ")");
    if (trip > maxIterations)
      return invalidArgument(what_, ": the trip count ", trip, " exceeds the limit of ", maxIterations,
                             " iterations (KILN_MAX_LOOP_ITERATIONS)");
    limit = trip;
    bounded = true;
  }
  std::vector<DeviceValue> scanned;
  std::vector<int32_t> scanAxis;
  for (size_t k = 0; k < static_cast<size_t>(a_.numScanned); ++k) {
    DeviceValue s = viewOf(ctx.inputs[s0 + k]);
    int64_t ax = a_.scanAxes[k] < 0 ? a_.scanAxes[k] + s.shape.nbDims : a_.scanAxes[k];
    if (ax < 0 || ax >= s.shape.nbDims) return invalidArgument(what_, ": scan axis out of range");
    limit = std::min(limit, s.shape.d[ax]);
    bounded = true;
    scanned.push_back(std::move(s));
    scanAxis.push_back(static_cast<int32_t>(ax));
  }
  if (!bounded && !a_.hasCondition) return invalidArgument(what_, ": the loop has no trip limit");
  std::vector<DeviceValue> carried;
  for (size_t i = c0; i < s0; ++i) carried.push_back(viewOf(ctx.inputs[i]));
  std::unique_ptr<ControlFlowState> local;
  KILN_ASSIGN_OR_RETURN(ControlFlowState * st, stateFor(ctx, body_, local));
  DeviceSubgraph const& body = *body_[0];
  size_t const condOut = a_.hasCondition ? 1 : 0;
  size_t const nOut = ctx.outputs.size();
  std::vector<std::optional<DeviceValue>> last(nOut);
  // Concatenated outputs whose shape is planned are written as the iterations go; the others keep every
  // iteration's value (by reference) until the count is known.
  std::vector<std::vector<DeviceValue>> items(nOut);
  std::vector<int64_t> written(nOut, 0);
  std::vector<int32_t> outAxis(nOut, 0);
  for (size_t o = 0; o < nOut; ++o) {
    if (a_.kinds[o] == 0) continue;
    int32_t rank = ctx.outputs[o].shape.nbDims;
    int64_t ax = a_.axes[o] < 0 ? a_.axes[o] + rank : a_.axes[o];
    if (ax < 0 || ax >= rank) return internalError(what_, ": output axis out of range");
    outAxis[o] = static_cast<int32_t>(ax);
  }
  int64_t it = 0;
  for (;; ++it) {
    if (it >= limit) {
      if (!bounded)
        return invalidArgument(what_, ": the loop ran ", maxIterations,
                               " iterations without its condition turning false; giving up (KILN_MAX_LOOP_ITERATIONS)");
      break;
    }
    std::vector<DeviceValue> in;
    // A fresh buffer per iteration: the body may pass the number on as a carried value or an output.
    KILN_ASSIGN_OR_RETURN(DeviceValue iter, env.allocate(DataType::kINT64, makeDims({}), "loop iteration number"));
    KILN_CUDA_RETURN_IF_ERROR(
        launchStoreInt64(static_cast<int64_t*>(iter.data), it, static_cast<cudaStream_t>(env.native)),
        what_ + ": storing the iteration number");
    iter.host = HostTensor::fromVector(DataType::kINT64, makeDims({}), std::vector<int64_t>{it});
    in.push_back(std::move(iter));
    for (DeviceValue const& c : carried) in.push_back(c);
    for (size_t k = 0; k < scanned.size(); ++k) {
      int64_t len = scanned[k].shape.d[scanAxis[k]];
      int64_t idx = a_.scanReverse[k] ? len - 1 - it : it;
      KILN_ASSIGN_OR_RETURN(DeviceValue sl, sliceAlong(env, scanned[k], scanAxis[k], idx));
      in.push_back(std::move(sl));
    }
    for (size_t i = x0; i < ctx.inputs.size(); ++i) in.push_back(viewOf(ctx.inputs[i]));
    auto run = body.run(env, st->subgraphs[0].get(), in, {});
    if (!run) return run.status().withContext(strCat(what_, ", iteration ", it));
    std::vector<DeviceValue>& out = *run;
    if (out.size() < condOut + carried.size()) return internalError(what_, ": the body gave too few outputs");
    if (a_.hasCondition) {
      KILN_ASSIGN_OR_RETURN(bool go, readCondition(env, out[0], "its condition"));
      if (!go) break;
    }
    for (size_t o = 0; o < nOut; ++o) {
      size_t src = static_cast<size_t>(a_.sources[o]);
      if (src >= out.size()) return internalError(what_, ": output source out of range");
      if (a_.kinds[o] == 0) {
        last[o] = out[src];
        continue;
      }
      backends::TensorView const& ov = ctx.outputs[o];
      if (!dimsKnown(ov.shape)) {
        items[o].push_back(out[src]);
        continue;
      }
      int64_t len = ov.shape.d[outAxis[o]];
      Dims elem = dropAxis(ov.shape, outAxis[o]);
      if (it >= len)
        return invalidArgument(what_, ": output ", o, " has shape ", dimsToString(ov.shape),
                               " but the loop ran more than ", len, " iterations");
      if (!dimsEqual(out[src].shape, elem) || out[src].dtype != ov.dtype)
        return invalidArgument(what_, ": iteration ", it, " made a value of shape ", dimsToString(out[src].shape),
                               " for output ", o, ", whose shape ", dimsToString(ov.shape), " needs ",
                               dimsToString(elem));
      int64_t pos = a_.kinds[o] == 2 ? len - 1 - it : it;
      KILN_RETURN_IF_ERROR(stackInto(env, out[src], ov.data, ov.shape, outAxis[o], pos));
      ++written[o];
    }
    for (size_t c = 0; c < carried.size(); ++c) {
      DeviceValue& next = out[condOut + c];
      if (next.dtype != carried[c].dtype || next.shape.nbDims != carried[c].shape.nbDims)
        return invalidArgument(what_, ": the body changed the type or rank of carried value ", c);
      carried[c] = std::move(next);  // the previous buffer goes back to the pool once nothing refers to it
    }
  }
  for (size_t o = 0; o < nOut; ++o) {
    size_t src = static_cast<size_t>(a_.sources[o]);
    backends::TensorView const& ov = ctx.outputs[o];
    if (a_.kinds[o] == 0) {
      if (last[o]) {
        KILN_RETURN_IF_ERROR(writeOutput(env, ctx, o, *last[o]));
      } else if (src >= condOut && src < condOut + carried.size()) {
        KILN_RETURN_IF_ERROR(writeOutput(env, ctx, o, carried[src - condOut]));  // no iteration ran
      } else {
        if (!dimsKnown(ov.shape)) return invalidArgument(what_, ": output ", o, " has no last value: no iteration ran");
        KILN_ASSIGN_OR_RETURN(void* dst, outputMemory(env, ctx, o, ov.dtype, ov.shape));
        size_t bytes = static_cast<size_t>(volume(ov.shape)) * dataTypeSize(ov.dtype);
        if (bytes) KILN_RETURN_IF_ERROR(env.dev->fill(dst, 0, bytes, env.native));
      }
      continue;
    }
    if (dimsKnown(ov.shape)) {
      if (written[o] != ov.shape.d[outAxis[o]])
        return invalidArgument(what_, ": output ", o, " has shape ", dimsToString(ov.shape), " but the loop ran ", it,
                               " iterations");
      continue;
    }
    std::vector<DeviceValue>& list = items[o];
    if (a_.kinds[o] == 2) std::reverse(list.begin(), list.end());
    int32_t ax = outAxis[o];
    Dims elem{};
    if (!list.empty()) {
      elem = list[0].shape;
    } else {
      elem = dropAxis(ov.shape, ax);
      for (int32_t d = 0; d < elem.nbDims; ++d) elem.d[d] = std::max<int64_t>(elem.d[d], 0);
    }
    Dims s{};
    s.nbDims = elem.nbDims + 1;
    for (int32_t d = 0, j = 0; d < s.nbDims; ++d) s.d[d] = d == ax ? static_cast<int64_t>(list.size()) : elem.d[j++];
    for (size_t t = 0; t < list.size(); ++t)
      if (!dimsEqual(list[t].shape, elem))
        return invalidArgument(what_, ": iteration ", t, " made a value of shape ", dimsToString(list[t].shape),
                               " but iteration 0 made ", dimsToString(elem), "; they cannot be concatenated");
    KILN_ASSIGN_OR_RETURN(void* dst, outputMemory(env, ctx, o, ov.dtype, s));
    for (size_t t = 0; t < list.size(); ++t)
      KILN_RETURN_IF_ERROR(stackInto(env, list[t], dst, s, ax, static_cast<int64_t>(t)));
  }
  return Status::ok();
}

bool loopSupported(ir::Node const& n, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
  if (n.subgraphs.size() != 1 || !n.subgraphs[0]) return false;
  auto a = loopAttrs(n);
  if (!a || controlFlowDepth(n) > kMaxControlFlowDepth) return false;
  size_t s0 = 1 + static_cast<size_t>(a->numCarried);
  if (in.size() < s0 + static_cast<size_t>(a->numScanned) || out.size() != n.outputs.size()) return false;
  if (in[0].shape.nbDims >= 0 && in[0].dtype != DataType::kINT32 && in[0].dtype != DataType::kINT64) return false;
  // Scanned inputs are sliced and concatenated outputs stacked by the strided copy, which moves whole elements.
  for (size_t k = 0; k < static_cast<size_t>(a->numScanned); ++k)
    if (!isByteCopyable(in[s0 + k].dtype)) return false;
  for (size_t o = 0; o < out.size(); ++o)
    if (a->kinds[o] != 0 && !isByteCopyable(out[o].dtype)) return false;
  return DeviceSubgraph::check(*n.subgraphs[0], "body").isOk();
}

backends::Tactic makeLoop() {
  backends::Tactic t;
  t.name = "loop_cuda_subgraph";
  t.op = ir::OpType::kLoop;
  t.source = TacticSource::kKILN;
  t.supports = loopSupported;
  t.create = [](ir::Node const& n) -> Result<std::unique_ptr<backends::Kernel>> {
    if (int depth = controlFlowDepth(n); depth > kMaxControlFlowDepth)
      return unsupported(n.describe(), ": control flow is nested ", depth, " levels deep; at most ",
                         kMaxControlFlowDepth, " are supported");
    if (n.subgraphs.size() != 1 || !n.subgraphs[0]) return invalidGraph(n.describe(), ": needs a body subgraph");
    KILN_ASSIGN_OR_RETURN(LoopAttrs a, loopAttrs(n));
    KILN_ASSIGN_OR_RETURN(auto body, DeviceSubgraph::create(*n.subgraphs[0], n.describe() + ", body"));
    // The body reads the iteration number, then the carried, scanned and captured values: one per node input.
    if (body->numInputs() != n.inputs.size())
      return invalidGraph(n.describe(), ": the body has ", body->numInputs(), " inputs; the loop gives it ",
                          n.inputs.size());
    return std::unique_ptr<backends::Kernel>(
        new LoopKernel(n.describe(), std::move(a), std::move(body), knownScalar(n)));
  };
  return t;
}

}  // namespace

KILN_REGISTER_CUDA_TACTIC(makeIf);
KILN_REGISTER_CUDA_TACTIC(makeLoop);

}  // namespace kiln::cuda
