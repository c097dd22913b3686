// Plugin layers in the build: per-build clones, type/format negotiation with casts around the plugin, profile
// configuration, the host-execution check of CPU builds, V3 tactics timed on the host or the GPU.
#include "builder/plugins.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <functional>
#include <limits>
#include <optional>

#include "backends/device.h"
#include "builder/device_timing.h"
#include "builder/timing_cache.h"
#include "core/dims.h"
#include "core/dtype.h"
#include "core/memory.h"

namespace kiln::builder {
namespace {

using ir::Graph;
using ir::Node;
using ir::OpType;
using ir::Value;

bool isPlugin(Node const& n) { return n.op == OpType::kPluginV2 || n.op == OpType::kPluginV3; }

// The plugin's regular inputs (V3 shape inputs come last and are not negotiated).
size_t regularInputs(Node const& n) {
  int64_t shape = n.op == OpType::kPluginV3 ? n.attrs.getInt("num_shape_inputs", 0) : 0;
  return n.inputs.size() - static_cast<size_t>(std::clamp<int64_t>(shape, 0, static_cast<int64_t>(n.inputs.size())));
}

// Types tried after the one a tensor has, in this order.
constexpr DataType kTypeOrder[] = {DataType::kFLOAT, DataType::kHALF, DataType::kBF16,  DataType::kINT32, DataType::kINT64,
                                   DataType::kINT8,  DataType::kUINT8, DataType::kBOOL, DataType::kFP8};

std::vector<DataType> candidates(DataType first) {
  std::vector<DataType> r{first};
  for (DataType t : kTypeOrder)
    if (t != first) r.push_back(t);
  return r;
}

std::string typeList(std::vector<DataType> const& ts) {
  std::string s;
  for (DataType t : ts) s += strCat(s.empty() ? "" : ", ", dataTypeName(t));
  return s;
}

DynamicPluginTensorDesc dynDesc(DataType t, Dims const& d) {
  DynamicPluginTensorDesc x{};
  x.desc = linearDesc(t, d);
  x.min = d;
  x.opt = d;
  x.max = d;
  return x;
}

Status negotiate(Graph& g, Node& n, DeviceType device) {
  ir::PluginInstance& p = *n.plugin;
  std::string what = strCat(n.describe(), " (", p.describe(), ")");
  if (device == DeviceType::kCPU && !p.hostExecution())
    return unsupported(what,
                       " has no host execution (kiln::IPluginHostExecution::enqueueHost): it cannot run on "
                       "DeviceType::kCPU. Build for DeviceType::kGPU, or implement kiln::IPluginHostExecution in the "
                       "plugin (V2: the plugin class; V3: its IPluginV3OneRuntime capability)");
  size_t nIn = regularInputs(n);
  size_t nOut = n.outputs.size();
  std::vector<DynamicPluginTensorDesc> io;
  for (size_t i = 0; i < nIn; ++i) io.push_back(dynDesc(n.inputs[i]->dtype, n.inputs[i]->shape));
  for (size_t o = 0; o < nOut; ++o) io.push_back(dynDesc(n.outputs[o]->dtype, n.outputs[o]->shape));
  std::vector<DataType> inTypes;
  for (size_t i = 0; i < nIn; ++i) {
    bool found = false;
    auto tries = candidates(n.inputs[i]->dtype);
    for (DataType t : tries) {
      io[i].desc.type = t;
      if (p.supportsFormatCombination(static_cast<int32_t>(i), io, static_cast<int32_t>(nIn))) {
        found = true;
        break;
      }
    }
    if (!found)
      return unsupported(what, ": supportsFormatCombination accepts input ", i, " in none of the types (",
                         typeList(tries), ") in TensorFormat::kLINEAR, the only format Kiln runs plugins in");
    inTypes.push_back(io[i].desc.type);
  }
  KILN_ASSIGN_OR_RETURN(std::vector<DataType> natural, p.outputTypes(inTypes));
  if (natural.size() != nOut) return invalidGraph(what, " gives ", natural.size(), " output types for ", nOut, " outputs");
  std::vector<DataType> outTypes;
  for (size_t o = 0; o < nOut; ++o) {
    bool found = false;
    auto tries = candidates(natural[o]);
    for (DataType t : tries) {
      io[nIn + o].desc.type = t;
      if (p.supportsFormatCombination(static_cast<int32_t>(nIn + o), io, static_cast<int32_t>(nIn))) {
        found = true;
        break;
      }
    }
    if (!found)
      return unsupported(what, ": supportsFormatCombination accepts output ", o, " in none of the types (",
                         typeList(tries), ") in TensorFormat::kLINEAR, given inputs of types (", typeList(inTypes), ")");
    outTypes.push_back(io[nIn + o].desc.type);
  }
  // Casts in: the plugin reads the negotiated types.
  for (size_t i = 0; i < nIn; ++i) {
    Value* in = n.inputs[i];
    if (in->dtype == inTypes[i]) continue;
    Node* c = g.addNode(OpType::kCast, g.uniqueNodeName(strCat(in->name, "_to_", dataTypeShortName(inTypes[i]), "_for_", n.name)),
                        {in}, 1);
    c->attrs.setInt("to", static_cast<int64_t>(inTypes[i]));
    c->outputs[0]->dtype = inTypes[i];
    c->outputs[0]->shape = in->shape;
    n.inputs[i] = c->outputs[0];
  }
  // Casts out: readers of an output keep seeing the type it had before negotiation.
  for (size_t o = 0; o < nOut; ++o) {
    Value* v = n.outputs[o];
    if (v->dtype == outTypes[o]) continue;
    DataType before = v->dtype;
    Node* c = g.addNode(OpType::kCast, g.uniqueNodeName(strCat(v->name, "_from_", n.name)), {}, 1);
    c->attrs.setInt("to", static_cast<int64_t>(before));
    g.replaceAllUses(v, c->outputs[0]);  // readers, the output mark and the name move to the cast's output
    c->inputs = {v};
    c->outputs[0]->dtype = before;
    c->outputs[0]->shape = v->shape;
    v->dtype = outTypes[o];
  }
  std::vector<int64_t> ins, outs;
  for (DataType t : inTypes) ins.push_back(static_cast<int64_t>(t));
  for (DataType t : outTypes) outs.push_back(static_cast<int64_t>(t));
  n.attrs.setInts("in_types", ins);
  n.attrs.setInts("out_types", outs);
  return Status::ok();
}

Status forEachPlugin(Graph& g, std::function<Status(Graph&, Node&)> const& fn) {
  std::vector<Node*> nodes;
  for (auto const& np : g.nodes()) nodes.push_back(np.get());
  for (Node* n : nodes) {
    for (auto const& sub : n->subgraphs)
      if (sub) KILN_RETURN_IF_ERROR(forEachPlugin(*sub, fn));
    if (isPlugin(*n)) {
      if (!n->plugin) return invalidGraph(n->describe(), " has no plugin object");
      KILN_RETURN_IF_ERROR(fn(g, *n));
    }
  }
  return Status::ok();
}

IPluginV3OneBuild* buildOf(IPluginV3* p) {
  auto* c = p ? p->getCapabilityInterface(PluginCapabilityType::kBUILD) : nullptr;
  char const* k = c ? c->getInterfaceInfo().kind : nullptr;
  return k && std::string(k) == "PLUGIN_V3ONE_BUILD" ? static_cast<IPluginV3OneBuild*>(c) : nullptr;
}

IPluginV3OneRuntime* runtimeOf(IPluginV3* p) {
  auto* c = p ? p->getCapabilityInterface(PluginCapabilityType::kRUNTIME) : nullptr;
  char const* k = c ? c->getInterfaceInfo().kind : nullptr;
  return k && std::string(k) == "PLUGIN_V3ONE_RUNTIME" ? static_cast<IPluginV3OneRuntime*>(c) : nullptr;
}

// Int32/int64 contents of a host tensor (a constant shape input), or nullopt for other types.
std::optional<std::vector<int64_t>> intValues(HostTensor const& t) {
  if (t.dtype() != DataType::kINT32 && t.dtype() != DataType::kINT64) return std::nullopt;
  std::vector<int64_t> r;
  int64_t count = volume(t.shape());
  for (int64_t k = 0; k < count; ++k)
    r.push_back(t.dtype() == DataType::kINT32 ? static_cast<int32_t const*>(t.data())[k]
                                              : static_cast<int64_t const*>(t.data())[k]);
  return r;
}

// A plugin node's inputs at one bound of a profile, for its shape program.
ir::EvalInputs evalInputs(Node const& n, ir::ShapeState const& st) {
  ir::EvalInputs ev;
  size_t nIn = regularInputs(n);
  for (size_t i = 0; i < nIn; ++i) ev.inputs.push_back(st.info[n.inputs[i]->id].shape);
  for (size_t i = nIn; i < n.inputs.size(); ++i) {
    auto const& v = st.values[n.inputs[i]->id];
    ev.shapeValues.push_back(v ? intValues(*v) : std::nullopt);
  }
  return ev;
}

// The buffers, descriptions and pointers of one timing run of a plugin node at shapes `st`.
struct PluginIo {
  std::vector<PluginTensorDesc> in, out;
  std::vector<DynamicPluginTensorDesc> din, dout;
  std::vector<void const*> inPtrs;
  std::vector<void*> outPtrs;
};

// The dims each output of `n` has in a timing run at shapes `st`: its shape, or for an output sized by a size tensor
// its declared upper bound (the shape program at SizeTensorMode::kUpper): the memory and the description
// enqueueDataDependent gives the plugin at run time.
Result<std::vector<Dims>> timingOutputDims(Node const& n, ir::ShapeState const& st, std::string const& what) {
  std::vector<Dims> dims;
  bool unknown = false;
  for (Value const* v : n.outputs) {
    dims.push_back(st.info[v->id].shape);
    unknown = unknown || !dimsKnown(dims.back());
  }
  std::shared_ptr<ir::PluginShapeProgram const> program = n.plugin->shapeProgram();
  if (!unknown || !program || !program->hasDataDependentOutputs()) return dims;
  ir::EvalInputs ev = evalInputs(n, st);
  ev.sizeMode = ir::SizeTensorMode::kUpper;
  KILN_ASSIGN_OR_RETURN(std::vector<Dims> upper, ir::withContext(program->evaluate(ev), what));
  for (size_t o = 0; o < dims.size() && o < upper.size(); ++o)
    if (!dimsKnown(dims[o])) dims[o] = upper[o];
  return dims;
}

// Fills `io`'s descriptions at `st`, with `make(value, bytes, isInput)` giving each tensor's memory; outputs sized by
// size tensors at their upper bound (timingOutputDims).
Status describePluginIo(Node const& n, ir::ShapeState const& st, std::string const& what, PluginIo& io,
                        std::function<Result<void*>(Value const*, size_t, bool)> const& make) {
  size_t nIn = regularInputs(n);
  KILN_ASSIGN_OR_RETURN(std::vector<Dims> outDims, timingOutputDims(n, st, what));
  for (size_t k = 0; k < nIn + n.outputs.size(); ++k) {
    bool isIn = k < nIn;
    Value const* v = isIn ? n.inputs[k] : n.outputs[k - nIn];
    DataType type = st.info[v->id].dtype;
    Dims const& shape = isIn ? st.info[v->id].shape : outDims[k - nIn];
    if (!dimsKnown(shape)) return unsupported(what, ": shapes known only at run time");
    KILN_ASSIGN_OR_RETURN(int64_t count, checkedVolume(shape));
    KILN_ASSIGN_OR_RETURN(size_t bytes, checkedBytes(count, dataTypeSize(type)));
    KILN_ASSIGN_OR_RETURN(void* p, make(v, bytes, isIn));
    (isIn ? io.in : io.out).push_back(linearDesc(type, shape));
    (isIn ? io.din : io.dout).push_back(dynDesc(type, shape));
    if (isIn) io.inPtrs.push_back(p);
    else io.outPtrs.push_back(p);
  }
  return Status::ok();
}

// The workspace of a timing run: the one the run time gives the node (attribute plugin_workspace, sized over every
// profile's bounds by sizePluginWorkspaces), else getWorkspaceSize at the run's shapes.
size_t timingWorkspace(Node const& n, PluginIo const& io) {
  if (n.attrs.has("plugin_workspace"))
    return static_cast<size_t>(std::max<int64_t>(0, n.attrs.getInt("plugin_workspace", 0)));
  return n.plugin->workspaceSize(io.din, io.dout);
}

// A context copy of the node's V3 plugin (as an execution context makes it) with `tactic` set.
Result<std::unique_ptr<ir::PluginInstance>> tacticCopy(Node const& n, int32_t tactic, std::string const& what) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<ir::PluginInstance> copy, n.plugin->attachToContext(nullptr, nullptr, nullptr, nullptr));
  IPluginV3OneRuntime* rt = runtimeOf(copy->v3());
  if (!rt) return internalError(what, ": the copy has no runtime capability");
  if (int32_t rc = rt->setTactic(tactic); rc != 0) return invalidArgument(what, ": setTactic returned ", rc);
  return copy;
}

// Median milliseconds of enqueueHost with `tactic` on a context copy of the node's plugin, at shapes `st` (outputs
// sized by size tensors at their upper bound, as at run time).
Result<double> timePluginTactic(Node const& n, ir::ShapeState const& st, int32_t tactic) {
  std::string what = strCat(n.describe(), " (", n.plugin->describe(), "), tactic ", tactic);
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<ir::PluginInstance> copy, tacticCopy(n, tactic, what));
  std::vector<HostBuffer> bufs;
  PluginIo io;
  auto make = [&](Value const*, size_t bytes, bool) -> Result<void*> {
    KILN_ASSIGN_OR_RETURN(HostBuffer b, HostBuffer::allocate(bytes, "plugin tactic timing"));
    void* p = b.data();
    bufs.push_back(std::move(b));
    return p;
  };
  KILN_RETURN_IF_ERROR(describePluginIo(n, st, what, io, make));
  size_t ws = timingWorkspace(n, io);
  KILN_ASSIGN_OR_RETURN(HostBuffer wsBuf, HostBuffer::allocate(ws, "plugin tactic timing workspace"));
  std::vector<double> times;
  for (int i = 0; i < 6; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    KILN_RETURN_IF_ERROR(copy->execute(io.in, io.out, io.inPtrs.data(), io.outPtrs.data(), ws ? wsBuf.data() : nullptr,
                                       true, nullptr).withContext(strCat("timing tactic ", tactic)));
    auto t1 = std::chrono::steady_clock::now();
    if (i > 0) times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Median milliseconds of the plugin's enqueue with `tactic` on the GPU, as the builder times GPU tactics
// (build_engine.cc timeTacticOnDevice): a context copy (attachToContext, setTactic; its first run calls
// onShapeChange with the opt shapes), inputs in device memory (host-known values as they are, activations filled
// with bytes 0x3c), outputs (those sized by size tensors at their upper bound) and the node's workspace in device
// memory, a warm-up run timed with events on `stream`, then the median of up to `iterations` runs; timing stops
// after 100 ms.
Result<double> timePluginTacticOnDevice(backends::DeviceBackend* dev, void* stream, Node const& n,
                                        ir::ShapeState const& st, int32_t tactic, int32_t iterations) {
  std::string what = strCat(n.describe(), " (", n.plugin->describe(), "), tactic ", tactic);
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<ir::PluginInstance> copy, tacticCopy(n, tactic, what));
  std::vector<backends::DeviceBuffer> bufs;
  PluginIo io;
  auto make = [&](Value const* v, size_t bytes, bool input) -> Result<void*> {
    KILN_ASSIGN_OR_RETURN(auto b, backends::DeviceBuffer::allocate(dev, bytes, "plugin tactic timing"));
    HostTensor const* known = nullptr;
    if (input && st.values[v->id]) known = &*st.values[v->id];
    else if (input && v->producer && v->producer->op == OpType::kConstant && v->producer->constant)
      known = &*v->producer->constant;
    if (known && known->bytes() == bytes) {
      KILN_RETURN_IF_ERROR(dev->copy(b.data(), known->data(), bytes, backends::CopyKind::kHostToDevice, stream));
    } else if (input) {
      KILN_RETURN_IF_ERROR(dev->fill(b.data(), isFloatType(st.info[v->id].dtype) ? 0x3c : 0, bytes, stream));
    }
    void* p = b.data();
    bufs.push_back(std::move(b));
    return p;
  };
  KILN_RETURN_IF_ERROR(describePluginIo(n, st, what, io, make));
  size_t ws = timingWorkspace(n, io);
  KILN_ASSIGN_OR_RETURN(auto wsBuf, backends::DeviceBuffer::allocate(dev, ws, "plugin tactic timing workspace"));
  KILN_RETURN_IF_ERROR(dev->synchronize(stream));
  auto ms = medianDeviceMs(dev, stream, iterations, 0, [&] {
    return copy->execute(io.in, io.out, io.inPtrs.data(), io.outPtrs.data(), ws ? wsBuf.data() : nullptr, false, stream);
  });
  if (!ms) return ms.status().withContext(strCat(what, ": timing it on the GPU"));
  return *ms;
}

// What configurePlugin and getWorkspaceSize see of a profile: desc.dims the build's dims (-1 where profiles vary),
// min/opt/max the profile's. Outputs sized by size tensors take their bounds from the shape program: min with
// every size 0, opt with the declared opt, max with the declared upper bound (the allocation the plugin gets).
Status profileDescs(Node const& n, std::array<ir::ShapeState, 3> const& st, std::vector<DynamicPluginTensorDesc>& in,
                    std::vector<DynamicPluginTensorDesc>& out) {
  auto desc = [&](Value const* v) {
    DynamicPluginTensorDesc d{};
    d.desc = linearDesc(st[1].info[v->id].dtype, v->shape);
    d.min = st[0].info[v->id].shape;
    d.opt = st[1].info[v->id].shape;
    d.max = st[2].info[v->id].shape;
    return d;
  };
  size_t nIn = regularInputs(n);
  for (size_t i = 0; i < nIn; ++i) in.push_back(desc(n.inputs[i]));
  for (Value const* v : n.outputs) out.push_back(desc(v));
  std::shared_ptr<ir::PluginShapeProgram const> program = n.plugin->shapeProgram();
  if (!program || !program->hasDataDependentOutputs()) return Status::ok();
  constexpr ir::SizeTensorMode kModes[3] = {ir::SizeTensorMode::kZero, ir::SizeTensorMode::kOpt,
                                            ir::SizeTensorMode::kUpper};
  for (int s = 0; s < 3; ++s) {
    ir::EvalInputs ev = evalInputs(n, st[s]);
    ev.sizeMode = kModes[s];
    KILN_ASSIGN_OR_RETURN(std::vector<Dims> dims, program->evaluate(ev));
    for (size_t o = 0; o < out.size() && o < dims.size(); ++o) {
      if (dimsKnown(st[s].info[n.outputs[o]->id].shape)) continue;
      (s == 0 ? out[o].min : s == 1 ? out[o].opt : out[o].max) = dims[o];
    }
  }
  return Status::ok();
}

}  // namespace

// The timing-cache key of a plugin node's tactic choice: the layers' key (target, attributes, I/O types and shapes:
// TensorRT's prefix), then the plugin's identity, the tactics it offers and its own suffix (getTimingCacheID()).
std::string pluginTacticKey(Node const& n, ir::ShapeState const& st, std::vector<int32_t> const& tactics,
                            std::string const& target, char const* cacheId) {
  std::string k = strCat(timingCacheKey(target, n, st, {}), "|plugin:", n.plugin->describe(), "|plugin_tactics:");
  for (int32_t t : tactics) k += strCat(t, ",");
  return strCat(k, "|", cacheId);
}

Status choosePluginTactics(Graph& g, std::vector<std::array<ir::ShapeState, 3>> const& states,
                           PluginTacticOptions const& options, std::vector<std::string>* log) {
  TimingCacheImpl* cache = options.cache;
  bool gpu = options.device == DeviceType::kGPU;
  for (auto const& np : g.nodes()) {
    Node& n = *np;
    if (n.op != OpType::kPluginV3 || !n.plugin || !n.plugin->v3()) continue;
    IPluginV3OneBuild* b = buildOf(n.plugin->v3());
    if (!b) continue;
    int32_t count = b->getNbTactics();
    if (count <= 0) continue;
    std::string what = strCat(n.describe(), " (", n.plugin->describe(), ")");
    if (count > 1024) return invalidArgument(what, ": getNbTactics() returned ", count);
    std::vector<int32_t> tactics(static_cast<size_t>(count), 0);
    if (int32_t rc = b->getValidTactics(tactics.data(), count); rc != 0)
      return invalidArgument(what, ": getValidTactics returned ", rc);
    for (int32_t t : tactics)
      if (t == 0) return invalidArgument(what, ": getValidTactics returned tactic 0 (tactics must be non-zero)");
    int32_t chosen = tactics.front();
    bool timeIt = gpu ? options.gpu != nullptr : options.device == DeviceType::kCPU && n.plugin->hostExecution();
    if (options.optimizationLevel > 0 && timeIt && !states.empty()) {
      char const* cacheId = b->getTimingCacheID();
      std::string key =
          cache && cacheId ? pluginTacticKey(n, states[0][1], tactics, options.target, cacheId) : std::string();
      if (!key.empty()) {
        if (std::optional<std::string> hit = cache->lookup(key)) {
          int32_t t = 0;
          auto [end, ec] = std::from_chars(hit->data(), hit->data() + hit->size(), t);
          if (ec == std::errc() && end == hit->data() + hit->size() &&
              std::find(tactics.begin(), tactics.end(), t) != tactics.end()) {
            if (log) log->push_back(strCat(what, ": plugin tactic ", t, " from the timing cache"));
            n.attrs.setInt("plugin_tactic", t);
            continue;
          }
        }
      }
      double best = -1;
      for (int32_t t : tactics) {
        KILN_ASSIGN_OR_RETURN(double ms, gpu ? timePluginTacticOnDevice(options.gpu, options.stream, n, states[0][1], t,
                                                                        options.iterations)
                                             : timePluginTactic(n, states[0][1], t));
        if (log) log->push_back(strCat(what, ": plugin tactic ", t, " ", ms, " ms", gpu ? " on the GPU" : ""));
        if (best < 0 || ms < best) {
          best = ms;
          chosen = t;
        }
      }
      if (!key.empty()) cache->insert(key, std::to_string(chosen));
      if (log) log->push_back(strCat(what, ": plugin tactic ", chosen, " chosen"));
    }
    n.attrs.setInt("plugin_tactic", chosen);
  }
  return Status::ok();
}

PluginTensorDesc linearDesc(DataType type, Dims const& dims) {
  PluginTensorDesc d{};
  d.dims = dims;
  d.type = type;
  d.format = TensorFormat::kLINEAR;
  d.scale = -1.0F;
  return d;
}

Status clonePlugins(Graph& g) {
  return forEachPlugin(g, [](Graph&, Node& n) -> Status {
    KILN_ASSIGN_OR_RETURN(n.plugin, ir::withContext(n.plugin->clone(), n.describe()));
    n.plugin->setLayer(n.name);
    return Status::ok();
  });
}

Status recordPluginTacticSources(Graph& g, TacticSources sources) {
  return forEachPlugin(g, [sources](Graph&, Node& n) {
    if (n.op == OpType::kPluginV2) n.attrs.setInt("tactic_sources", static_cast<int64_t>(sources));
    return Status::ok();
  });
}

Status negotiatePlugins(Graph& g, DeviceType device) {
  return forEachPlugin(g, [device](Graph& graph, Node& n) { return negotiate(graph, n, device); });
}

Status configurePlugins(Graph const& g, std::vector<std::array<ir::ShapeState, 3>> const& states) {
  for (auto const& np : g.nodes()) {
    Node const& n = *np;
    if (!isPlugin(n)) continue;
    for (size_t pi = 0; pi < states.size(); ++pi) {
      std::vector<DynamicPluginTensorDesc> in, out;
      KILN_RETURN_IF_ERROR(profileDescs(n, states[pi], in, out).withContext(strCat(n.describe(), ", optimization profile ", pi)));
      KILN_RETURN_IF_ERROR(n.plugin->configure(in, out).withContext(strCat(n.describe(), ", optimization profile ", pi)));
    }
  }
  return Status::ok();
}

Status capturePluginShapes(Graph& g, std::vector<std::array<ir::ShapeState, 3>> const& states) {
  Graph const* top = &g;
  return forEachPlugin(g, [&](Graph& graph, Node& n) -> Status {
    if (n.op != OpType::kPluginV3) return Status::ok();
    std::string what = strCat(n.describe(), " (", n.plugin->describe(), ")");
    size_t nIn = regularInputs(n);
    std::vector<Dims> dims;
    std::vector<std::optional<std::vector<int64_t>>> values;
    std::vector<int64_t> counts;
    for (size_t i = 0; i < nIn; ++i) dims.push_back(n.inputs[i]->shape);
    for (size_t i = nIn; i < n.inputs.size(); ++i) {
      Value const* v = n.inputs[i];
      counts.push_back(dimsKnown(v->shape) ? volume(v->shape) : -1);
      values.push_back(std::nullopt);
      if (v->producer && v->producer->op == OpType::kConstant && v->producer->constant)
        values.back() = intValues(*v->producer->constant);
    }
    KILN_ASSIGN_OR_RETURN(ir::PluginShapeProgram program,
                          ir::withContext(n.plugin->captureShapes(dims, values, counts), n.describe()));
    // Size tensors: 0-D (checked by the program) and of a negotiated integer type.
    auto outTypes = n.attrs.getInts("out_types");
    for (ir::SizeTensorDecl const& d : program.sizeTensors()) {
      auto t = static_cast<size_t>(d.output) < outTypes.size() ? static_cast<DataType>(outTypes[d.output])
                                                               : n.outputs[d.output]->dtype;
      if (t != DataType::kINT32 && t != DataType::kINT64)
        return invalidGraph(what, ": size tensor output ", d.output, " must be int32 or int64, not ", dataTypeName(t));
    }
    // The expressions must give what the plugin gave over concrete dims, at every profile's bounds.
    if (&graph == top) {
      for (size_t pi = 0; pi < states.size(); ++pi)
        for (int s = 0; s < 3; ++s) {
          ir::ShapeState const& st = states[pi][s];
          ir::EvalInputs ev = evalInputs(n, st);
          Result<std::vector<Dims>> got = program.evaluate(ev);
          if (!got) return invalidGraph(what, ": its captured shape expressions fail at optimization profile ", pi, ": ", got.status().message());
          for (size_t o = 0; o < n.outputs.size(); ++o) {
            Dims const& want = st.info[n.outputs[o]->id].shape;
            if (!dimsEqual((*got)[o], want))
              return invalidGraph(what, ": getOutputShapes gives output ", o, " shape ", dimsToString(want),
                                  " over the concrete dims of optimization profile ", pi, " but ",
                                  dimsToString((*got)[o]), " through its expressions (the shapes a plugin returns "
                                  "must not depend on which dimensions are constant while building)");
          }
        }
    }
    n.attrs.setInts("plugin_shapes", program.encode());
    n.plugin->setShapeProgram(std::make_shared<ir::PluginShapeProgram const>(std::move(program)));
    return Status::ok();
  });
}

Status sizePluginWorkspaces(Graph& g, std::vector<std::array<ir::ShapeState, 3>> const& states) {
  for (auto const& np : g.nodes()) {
    Node& n = *np;
    if (n.op != OpType::kPluginV3 || !n.plugin) continue;
    size_t ws = 0;
    for (size_t pi = 0; pi < states.size(); ++pi) {
      std::vector<DynamicPluginTensorDesc> in, out;
      KILN_RETURN_IF_ERROR(profileDescs(n, states[pi], in, out).withContext(strCat(n.describe(), ", optimization profile ", pi)));
      ws = std::max(ws, n.plugin->workspaceSize(in, out));
    }
    if (ws > static_cast<size_t>(std::numeric_limits<int64_t>::max()))
      return invalidArgument(n.describe(), " (", n.plugin->describe(), "): getWorkspaceSize returned ", ws);
    n.attrs.setInt("plugin_workspace", static_cast<int64_t>(ws));
  }
  return Status::ok();
}

}  // namespace kiln::builder
