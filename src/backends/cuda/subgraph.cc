// The device executor of If/Loop subgraphs (subgraph.h): tactic choice and kernel creation once per engine, then
// per run shape inference, pool buffers released after their last reader, and the nodes enqueued in order.
#include "backends/cuda/subgraph.h"

#include <algorithm>
#include <climits>

#include "ir/shape_inference.h"

namespace kiln::cuda {
namespace {

// Largest tensor a subgraph may size while running: the runtime's limit (runtime/context.cc) for tensors sized by
// data, far above real models and far below what a hostile shape value asks for.
constexpr size_t kMaxRunTimeSizedBytes = size_t{1} << 33;

// The library's tactics, highest priority first (stable): the level-0 heuristic's order.
std::vector<backends::Tactic const*> const& tacticsByPriority() {
  static std::vector<backends::Tactic const*> const list = [] {
    std::vector<backends::Tactic const*> r;
    for (backends::Tactic const& t : CudaTactics::instance().all()) r.push_back(&t);
    std::stable_sort(r.begin(), r.end(),
                     [](backends::Tactic const* a, backends::Tactic const* b) { return a->priority > b->priority; });
    return r;
  }();
  return list;
}

backends::Tactic const* chooseTactic(ir::Node const& n, std::vector<ir::TensorInfo> const& in,
                                     std::vector<ir::TensorInfo> const& out) {
  for (backends::Tactic const* t : tacticsByPriority()) {
    if (t->op != n.op) continue;
    if (!t->formatAware && backends::nodeFormat(n) != TensorFormat::kLINEAR) continue;
    if (t->supports && !t->supports(n, in, out)) continue;
    return t;
  }
  return nullptr;
}

std::vector<ir::TensorInfo> infosOf(std::vector<ir::Value*> const& vs, ir::ShapeState const& st) {
  std::vector<ir::TensorInfo> r;
  for (ir::Value const* v : vs) {
    if (v) {
      r.push_back(st.info[v->id]);
    } else {
      ir::TensorInfo none;
      none.shape.nbDims = -1;
      r.push_back(none);
    }
  }
  return r;
}

struct Planned {
  std::unique_ptr<ir::Graph> graph;
  std::vector<backends::Tactic const*> tactics;  // by node id; null for constants
};

// A renumbered copy of `src` and a CUDA tactic for each of its nodes. The choice depends on types, ranks,
// attributes and constants only (every input dim is taken as unknown), so supports() and create() agree and the
// kernels, like those of a dynamic-shape build, serve every shape the subgraph meets while running.
Result<Planned> plan(ir::Graph const& src, std::string const& where) {
  Planned p;
  p.graph = src.clone();
  KILN_RETURN_IF_ERROR(p.graph->renumber().withContext(where));
  ir::Graph const& g = *p.graph;
  ir::ShapeState st;
  st.resize(g.values().size());
  for (ir::Value const* v : g.inputs()) {
    if (v->shape.nbDims < 0) return unsupported(where, ": subgraph input '", v->name, "' has no known rank");
    Dims s = v->shape;
    for (int32_t d = 0; d < s.nbDims; ++d) s.d[d] = -1;
    st.info[v->id] = {v->dtype, s};
  }
  KILN_RETURN_IF_ERROR(ir::inferShapes(g, st, nullptr).withContext(where));
  p.tactics.assign(g.nodes().size(), nullptr);
  for (auto const& np : g.nodes()) {
    ir::Node const& n = *np;
    if (n.op == ir::OpType::kConstant) continue;
    backends::Tactic const* t = chooseTactic(n, infosOf(n.inputs, st), infosOf(n.outputs, st));
    if (!t) {
      std::string types;
      for (ir::Value const* v : n.inputs)
        if (v) types += strCat(types.empty() ? "" : ", ", dataTypeName(st.info[v->id].dtype));
      return unsupported(where, ": no CUDA kernel supports ", n.describe(), " with input types (", types, ")");
    }
    p.tactics[n.id] = t;
  }
  return p;
}

}  // namespace

int controlFlowDepth(ir::Node const& n) {
  int deepest = 0;
  for (auto const& g : n.subgraphs)
    if (g)
      for (auto const& inner : g->nodes())
        if (!inner->subgraphs.empty()) deepest = std::max(deepest, controlFlowDepth(*inner));
  return 1 + deepest;
}

Result<DeviceEnv> DeviceEnv::of(backends::LaunchContext const& ctx, std::string const& what) {
  if (!ctx.stream || ctx.stream->device() != DeviceType::kGPU)
    return internalError(what, ": the CUDA control-flow kernel runs on a device stream only");
  // The one Stream of a GPU device (backends/device.h); a static_cast, since type identity does not cross the
  // boundary between libkiln and this library.
  auto* ds = static_cast<backends::DeviceStream*>(ctx.stream);
  DeviceEnv env;
  env.dev = ds->backend();
  if (!env.dev) return internalError(what, ": the device stream has no backend");
  env.stream = ctx.stream;
  env.native = ds->native();
  env.pool = ctx.pool;
  env.eval = env.dev->hostEvaluator() ? &env.dev->hostEvaluator() : nullptr;
  env.what = what;
  return env;
}

Status DeviceEnv::refuseCapture(std::string const& why) const {
  if (dev->isCapturing(native))
    return unsupported(what, ": ", why, ", which a CUDA graph cannot capture (run this engine without graph capture)");
  return Status::ok();
}

Result<DeviceValue> DeviceEnv::allocate(DataType dtype, Dims const& shape, char const* purpose) const {
  KILN_ASSIGN_OR_RETURN(int64_t n, checkedVolume(shape));
  KILN_ASSIGN_OR_RETURN(size_t bytes, checkedBytes(n, dataTypeSize(dtype)));
  if (bytes > kMaxRunTimeSizedBytes)
    return invalidArgument(what, ": a ", purpose, " of shape ", dimsToString(shape), " would take more than the ",
                           kMaxRunTimeSizedBytes, " bytes a tensor sized while running may take");
  DeviceValue v;
  v.dtype = dtype;
  v.shape = shape;
  if (bytes == 0) return v;
  auto p = dev->allocate(bytes, native);
  if (!p)
    return errorStatus(StatusCode::kOutOfMemory, what, ": out of device memory for a ", purpose, " (", bytes,
                       " bytes): ", p.status().message());
  v.data = *p;
  v.owner = std::make_shared<PoolBuffer>(dev, native, *p);
  return v;
}

Result<HostTensor> DeviceEnv::download(DeviceValue const& v, std::string const& why) const {
  KILN_RETURN_IF_ERROR(refuseCapture("reading " + why + " needs a synchronizing copy to the host"));
  KILN_ASSIGN_OR_RETURN(HostTensor t, HostTensor::allocate(v.dtype, v.shape, "device value read on the host"));
  if (t.bytes()) {
    if (!v.data) return internalError(what, ": ", why, " has no memory");
    KILN_RETURN_IF_ERROR(dev->copy(t.mutableData(), v.data, t.bytes(), backends::CopyKind::kDeviceToHost, native));
    KILN_RETURN_IF_ERROR(dev->synchronize(native).withContext(strCat(what, ": reading ", why)));
  }
  return t;
}

struct DeviceSubgraph::Impl {
  std::string where;
  std::unique_ptr<ir::Graph> graph;                        // declared before the kernels, which may refer to its nodes
  std::vector<backends::Tactic const*> tactics;            // by node id
  std::vector<std::unique_ptr<backends::Kernel>> kernels;  // by node id; null for constants
  std::vector<DeviceMemory> constants;
  std::vector<void*> constantAddress;  // by value id
  std::vector<int32_t> lastUse;        // by value id: the last node reading it (-1 none, INT32_MAX a graph output)

  Status readShapeInputs(DeviceEnv const& env, ir::Node const& n, ir::ShapeState& st,
                         std::vector<DeviceValue> const& vals) const;
};

DeviceSubgraph::~DeviceSubgraph() = default;

Status DeviceSubgraph::check(ir::Graph const& g, std::string const& where) { return plan(g, where).status(); }

Result<std::unique_ptr<DeviceSubgraph>> DeviceSubgraph::create(ir::Graph const& g, std::string where) {
  KILN_ASSIGN_OR_RETURN(Planned p, plan(g, where));
  std::unique_ptr<DeviceSubgraph> s(new DeviceSubgraph);
  s->impl_ = std::make_unique<Impl>();
  Impl& m = *s->impl_;
  m.where = std::move(where);
  m.graph = std::move(p.graph);
  m.tactics = std::move(p.tactics);
  ir::Graph const& gr = *m.graph;
  m.constantAddress.assign(gr.values().size(), nullptr);
  m.lastUse.assign(gr.values().size(), -1);
  for (auto const& n : gr.nodes())
    for (ir::Value const* v : n->inputs)
      if (v) m.lastUse[v->id] = n->id;
  for (ir::Value const* v : gr.outputs()) m.lastUse[v->id] = INT32_MAX;
  m.kernels.resize(gr.nodes().size());
  for (auto const& np : gr.nodes()) {
    ir::Node const& n = *np;
    if (n.op == ir::OpType::kConstant) {
      ir::Value const* o = n.output(0);
      if (!o || m.lastUse[o->id] < 0) continue;
      if (!n.constant) return invalidGraph(m.where, ": ", n.describe(), " has no data");
      // Uploaded once per engine; at least one byte, so that every constant has an address.
      HostTensor const& c = *n.constant;
      KILN_ASSIGN_OR_RETURN(DeviceMemory d, DeviceMemory::upload(c.bytes() ? c.data() : nullptr,
                                                                 std::max<size_t>(c.bytes(), 1), "subgraph constants"));
      m.constantAddress[o->id] = d.data();
      m.constants.push_back(std::move(d));
      continue;
    }
    auto k = m.tactics[n.id]->create(n);
    if (!k) return k.status().withContext(m.where);
    m.kernels[n.id] = std::move(k).value();
  }
  return s;
}

size_t DeviceSubgraph::numInputs() const { return impl_->graph->inputs().size(); }
size_t DeviceSubgraph::numOutputs() const { return impl_->graph->outputs().size(); }

Result<std::unique_ptr<SubgraphState>> DeviceSubgraph::createState(backends::ContextResources const& resources) const {
  auto st = std::make_unique<SubgraphState>();
  st->nodes.resize(impl_->kernels.size());
  for (size_t i = 0; i < impl_->kernels.size(); ++i) {
    if (!impl_->kernels[i]) continue;
    auto r = impl_->kernels[i]->createContextState(resources);
    if (!r) return r.status().withContext(strCat(impl_->where, ", ", impl_->graph->nodes()[i]->describe()));
    st->nodes[i] = std::move(r).value();
  }
  return st;
}

// A layer whose output shape hangs on the contents of small integer tensors made on the device inside the subgraph:
// read them (a synchronizing copy), pin them, and infer again -- what the runtime does for the whole network.
Status DeviceSubgraph::Impl::readShapeInputs(DeviceEnv const& env, ir::Node const& n, ir::ShapeState& st,
                                             std::vector<DeviceValue> const& vals) const {
  bool added = false;
  for (ir::Value const* v : n.inputs) {
    if (!v || st.values[v->id]) continue;
    ir::TensorInfo const& info = st.info[v->id];
    bool floatScales = n.op == ir::OpType::kResize && v == n.input(1) && isFloatType(info.dtype);
    if ((info.dtype != DataType::kINT32 && info.dtype != DataType::kINT64 && !floatScales) || !dimsKnown(info.shape) ||
        volume(info.shape) > ir::kMaxHostEvalElements)
      continue;
    DeviceValue dv = vals[v->id];
    if (!dv.data && volume(info.shape) > 0) continue;
    dv.dtype = info.dtype;
    dv.shape = info.shape;
    KILN_ASSIGN_OR_RETURN(HostTensor t, env.download(dv, strCat("the shape input '", v->name, "' of ", n.describe())));
    st.values[v->id] = std::move(t);
    st.pinned[v->id] |= ir::kPinnedContents;
    added = true;
  }
  if (added)
    KILN_RETURN_IF_ERROR(ir::inferShapes(*graph, st, env.eval)
                             .withContext(strCat(where, ", after reading the shape inputs of ", n.describe())));
  return Status::ok();
}

Result<std::vector<DeviceValue>> DeviceSubgraph::run(DeviceEnv const& env, SubgraphState* state,
                                                     std::vector<DeviceValue> const& inputs,
                                                     std::vector<backends::TensorView> const& dest) const {
  Impl const& m = *impl_;
  ir::Graph const& g = *m.graph;
  if (inputs.size() != g.inputs().size())
    return internalError(m.where, ": the subgraph has ", g.inputs().size(), " inputs but ", inputs.size(),
                         " were given");
  size_t const nv = g.values().size();
  ir::ShapeState st;
  st.resize(nv);
  std::vector<DeviceValue> vals(nv);
  for (size_t i = 0; i < inputs.size(); ++i) {
    ir::Value const* v = g.inputs()[i];
    DeviceValue const& in = inputs[i];
    if (in.dtype != v->dtype)
      return internalError(m.where, ": subgraph input '", v->name, "' is ", dataTypeName(v->dtype), " but got ",
                           dataTypeName(in.dtype));
    st.info[v->id] = {in.dtype, in.shape};
    if (in.host) st.values[v->id] = *in.host;
    vals[v->id] = in;
  }
  KILN_RETURN_IF_ERROR(ir::inferShapes(g, st, env.eval).withContext(m.where));
  // Graph outputs produced by a node may be written straight into the caller's memory.
  std::vector<int32_t> destOf(nv, -1);
  for (size_t j = 0; j < g.outputs().size() && j < dest.size(); ++j) {
    ir::Value const* v = g.outputs()[j];
    if (dest[j].data && destOf[v->id] < 0 && v->producer && v->producer->op != ir::OpType::kConstant)
      destOf[v->id] = static_cast<int32_t>(j);
  }
  for (auto const& np : g.nodes()) {
    ir::Node const& n = *np;
    if (n.op == ir::OpType::kConstant) {
      ir::Value const* o = n.output(0);
      DeviceValue c;
      c.data = m.constantAddress[o->id];
      c.dtype = st.info[o->id].dtype;
      c.shape = st.info[o->id].shape;
      vals[o->id] = std::move(c);
      continue;
    }
    bool unknownOutput = false;
    for (ir::Value const* v : n.outputs) unknownOutput = unknownOutput || !dimsKnown(st.info[v->id].shape);
    if (unknownOutput) KILN_RETURN_IF_ERROR(m.readShapeInputs(env, n, st, vals));

    backends::LaunchContext ctx;
    ctx.stream = env.stream;
    ctx.pool = env.pool;
    for (ir::Value const* v : n.inputs) {
      if (!v) {
        Dims none{};
        none.nbDims = -1;
        ctx.inputs.push_back({nullptr, DataType::kFLOAT, none});
        continue;
      }
      ir::TensorInfo const& info = st.info[v->id];
      if (!vals[v->id].data && volume(info.shape) > 0)
        return internalError(m.where, ": ", n.describe(), ": input '", v->name, "' was not computed");
      ctx.inputs.push_back({vals[v->id].data, info.dtype, info.shape});
    }
    bool dataDependent = false;
    for (ir::Value const* v : n.outputs) {
      ir::TensorInfo const& info = st.info[v->id];
      if (!dimsKnown(info.shape)) {
        dataDependent = true;
        ctx.outputs.push_back({nullptr, info.dtype, info.shape});
        continue;
      }
      int32_t j = destOf[v->id];
      if (j >= 0 && dest[static_cast<size_t>(j)].dtype == info.dtype &&
          dimsEqual(dest[static_cast<size_t>(j)].shape, info.shape)) {
        DeviceValue d;
        d.data = dest[static_cast<size_t>(j)].data;
        d.dtype = info.dtype;
        d.shape = info.shape;
        vals[v->id] = std::move(d);
      } else {
        KILN_ASSIGN_OR_RETURN(vals[v->id], env.allocate(info.dtype, info.shape, "subgraph tensor"));
      }
      ctx.outputs.push_back({vals[v->id].data, info.dtype, info.shape});
    }
    if (dataDependent) {
      ctx.allocateOutput = [&](size_t i, Dims const& dims) -> Result<void*> {
        if (i >= n.outputs.size()) return internalError(n.describe(), ": no output ", i);
        ir::Value const* v = n.outputs[i];
        Dims const& inferred = st.info[v->id].shape;
        if (!dimsKnown(dims) || (inferred.nbDims >= 0 && dims.nbDims != inferred.nbDims))
          return internalError(n.describe(), ": output ", i, " got shape ", dimsToString(dims), ", expected rank ",
                               inferred.nbDims);
        KILN_ASSIGN_OR_RETURN(vals[v->id], env.allocate(st.info[v->id].dtype, dims, "subgraph tensor"));
        st.info[v->id].shape = dims;
        st.pinned[v->id] |= ir::kPinnedShape;
        ctx.outputs[i].shape = dims;
        ctx.outputs[i].data = vals[v->id].data;
        return vals[v->id].data;
      };
    }
    backends::Kernel const& k = *m.kernels[n.id];
    // Data-dependent kernels get no workspace, as in the runtime (they allocate their own scratch).
    size_t ws = 0;
    if (!dataDependent) {
      std::vector<ir::TensorInfo> ins, outs;
      for (auto const& t : ctx.inputs) ins.push_back({t.dtype, t.shape});
      for (auto const& t : ctx.outputs) outs.push_back({t.dtype, t.shape});
      ws = k.workspaceSize(ins, outs);
    }
    DeviceValue wsBuf;
    if (ws) {
      KILN_ASSIGN_OR_RETURN(wsBuf,
                            env.allocate(DataType::kUINT8, makeDims({static_cast<int64_t>(ws)}), "layer workspace"));
      ctx.workspace = wsBuf.data;
      ctx.workspaceSize = ws;
    }
    ctx.state = state && static_cast<size_t>(n.id) < state->nodes.size() ? state->nodes[n.id].get() : nullptr;
    env.dev->rangePush(n.name.c_str());
    Status s = k.enqueue(ctx);
    env.dev->rangePop();
    if (!s.isOk()) return s.withContext(strCat(m.where, ", ", n.describe()));
    if (dataDependent) {
      for (size_t i = 0; i < n.outputs.size(); ++i)
        if (!dimsKnown(st.info[n.outputs[i]->id].shape))
          return internalError(m.where, ", ", n.describe(), ": the kernel did not give output ", i, " its shape");
      KILN_RETURN_IF_ERROR(ir::inferShapes(g, st, env.eval).withContext(strCat(m.where, ", after ", n.describe())));
    }
    // Buffers go back to the pool in stream order once their last reader is enqueued.
    for (ir::Value const* v : n.inputs)
      if (v && m.lastUse[v->id] == n.id) vals[v->id] = DeviceValue{};
  }
  std::vector<DeviceValue> result;
  for (ir::Value const* v : g.outputs()) {
    DeviceValue r = vals[v->id];
    r.dtype = st.info[v->id].dtype;
    r.shape = st.info[v->id].shape;
    if (!dimsKnown(r.shape) || (!r.data && volume(r.shape) > 0))
      return internalError(m.where, ": subgraph output '", v->name, "' was not computed");
    if (st.values[v->id]) r.host = *st.values[v->id];
    result.push_back(std::move(r));
  }
  return result;
}

}  // namespace kiln::cuda
