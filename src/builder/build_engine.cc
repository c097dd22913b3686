// The build pipeline: verify -> shapes over the profiles -> passes -> precision -> tactics -> memory plan.
#include "builder/build_engine.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "backends/backend.h"
#include "backends/cpu_format.h"
#include "backends/device.h"
#include "builder/assign_formats.h"
#include "builder/assign_io_formats.h"
#include "builder/buffer_aliases.h"
#include "builder/device_timing.h"
#include "builder/memory_planner.h"
#include "builder/passes/pass.h"
#include "builder/passes/pipeline.h"
#include "builder/plugins.h"
#include "builder/precision.h"
#include "builder/timing_cache.h"
#include "core/dims.h"
#include "core/tensor_format.h"
#include "core/thread_pool.h"
#include "ir/contiguous_views.h"
#include "ir/shape_inference.h"
#include "kiln/kiln_version.h"

namespace kiln::builder {
namespace {

using ir::Graph;
using ir::Node;
using ir::OpType;
using ir::Value;

constexpr int64_t kArenaAlignment = 256;

std::string versionString() { return strCat(KILN_VERSION_MAJOR, ".", KILN_VERSION_MINOR, ".", KILN_VERSION_PATCH); }

// Outputs that are network inputs or appear twice get an Identity so every output has its own buffer.
void isolateOutputs(Graph& g) {
  std::set<Value*> seen;
  for (Value* v : std::vector<Value*>(g.outputs())) {
    if (!v->isInput) continue;
    Node* id = g.addNode(OpType::kIdentity, g.uniqueNodeName(v->name + "_output_copy"), {v}, 1);
    Value* out = id->outputs[0];
    out->dtype = v->dtype;
    out->shape = v->shape;
    std::string name = v->name;
    g.unmarkOutput(v);
    (void)g.renameValue(out, g.uniqueValueName(name + "_out"));
    g.markOutput(out);
  }
}

// A network output that folded into a constant still has to be written into the user's buffer: an Identity
// copies it there (Constant nodes themselves never run; their outputs point at the engine's weights).
void materializeConstantOutputs(Graph& g) {
  for (Value* v : std::vector<Value*>(g.outputs())) {
    if (!v->producer || v->producer->op != OpType::kConstant) continue;
    Node* id = g.addNode(OpType::kIdentity, g.uniqueNodeName(v->name + "_copy"), {}, 1);
    Value* out = id->outputs[0];
    g.replaceAllUses(v, out);  // moves the output mark and the name to `out`
    id->inputs = {v};
    out->dtype = v->dtype;
    out->shape = v->shape;
  }
}

// The profiles as per-input min/opt/max; a network without dynamic inputs gets one implicit profile.
Result<std::vector<plan::Profile>> resolveProfiles(Graph const& g, BuilderConfigImpl const& config) {
  bool dynamic = false;
  for (Value* in : g.inputs())
    if (!dimsKnown(in->shape)) dynamic = true;
  std::vector<plan::Profile> profiles;
  if (config.profiles().empty()) {
    if (dynamic) {
      for (Value* in : g.inputs())
        if (!dimsKnown(in->shape))
          return invalidArgument("network input '", in->name, "' has dynamic shape ", dimsToString(in->shape),
                                 " but no optimization profile was added to the builder config");
    }
    plan::Profile p;
    for (Value* in : g.inputs()) p.inputs.push_back({in->name, in->shape, in->shape, in->shape});
    profiles.push_back(std::move(p));
    return profiles;
  }
  for (size_t pi = 0; pi < config.profiles().size(); ++pi) {
    auto const& prof = config.profiles()[pi];
    plan::Profile p;
    for (auto const& [name, entry] : prof) {
      Value* v = g.findValue(name);
      if (!v || !v->isInput)
        return invalidArgument("optimization profile ", pi, " names '", name, "', which is not a network input");
    }
    for (Value* in : g.inputs()) {
      auto it = prof.find(in->name);
      bool hasDims = it != prof.end() && it->second.set[0];
      if (!hasDims) {
        if (!dimsKnown(in->shape))
          return invalidArgument("optimization profile ", pi, " has no dimensions for dynamic input '", in->name, "'");
        p.inputs.push_back({in->name, in->shape, in->shape, in->shape});
        continue;
      }
      auto const& d = it->second.dims;
      for (int s = 0; s < 3; ++s) {
        if (d[s].nbDims != in->shape.nbDims)
          return invalidArgument("optimization profile ", pi, ": input '", in->name, "' has rank ", in->shape.nbDims,
                                 " but the profile gives ", dimsToString(d[s]));
        for (int32_t k = 0; k < d[s].nbDims; ++k)
          if (in->shape.d[k] >= 0 && d[s].d[k] != in->shape.d[k])
            return invalidArgument("optimization profile ", pi, ": input '", in->name, "' dimension ", k, " is fixed to ",
                                   in->shape.d[k], " but the profile gives ", dimsToString(d[s]));
      }
      p.inputs.push_back({in->name, d[0], d[1], d[2]});
    }
    profiles.push_back(std::move(p));
  }
  return profiles;
}

// A build whose one optimization profile fixes every input's shape (min = opt = max, as trtexec's and kilnexec's
// --shapes make it) can only run at that shape: setInputShape refuses any other. So the build works on the network
// with the profile's dims in place of its -1s: fusions that must prove two shapes equal (a residual add into the
// GEMM before it or the LayerNorm after it, attention's BSHD layout) see concrete dims instead of -1s that shape
// inference cannot relate. Returns the declared (network) dims of every I/O tensor by name, for
// restoreDeclaredIODims; empty when nothing was specialized (several profiles, a real range, no dynamic input, or
// level 0, which builds the network as written: it is --check's oracle, and folds no profile constants either).
Result<std::map<std::string, Dims>> specializeToFixedProfile(Graph& g, std::vector<plan::Profile> const& profiles,
                                                             int optimizationLevel, ir::HostEvaluator const& eval) {
  std::map<std::string, Dims> declared;
  if (optimizationLevel <= 0 || profiles.size() != 1 || profiles[0].inputs.size() != g.inputs().size()) return declared;
  bool dynamic = false;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    plan::ProfileShapes const& p = profiles[0].inputs[i];
    if (!dimsEqual(p.min, p.opt) || !dimsEqual(p.opt, p.max) || !dimsKnown(p.opt)) return declared;
    dynamic = dynamic || !dimsKnown(g.inputs()[i]->shape);
  }
  if (!dynamic) return declared;
  for (Value* v : g.inputs()) declared[v->name] = v->shape;
  for (Value* v : g.outputs()) declared[v->name] = v->shape;
  for (size_t i = 0; i < g.inputs().size(); ++i) g.inputs()[i]->shape = profiles[0].inputs[i].opt;
  KILN_RETURN_IF_ERROR(ir::inferGraphInPlace(g, &eval).withContext("shapes at the fixed optimization profile"));
  return declared;
}

// The engine reports the network's dims for its I/O tensors, -1s included, as TensorRT does, whatever shapes the
// build specialized to; the graph's other values keep the specialized shapes (the run-time inference gives them).
void restoreDeclaredIODims(Graph& g, std::map<std::string, Dims> const& declared) {
  for (auto const* list : {&g.inputs(), &g.outputs()})
    for (Value* v : *list) {
      auto it = declared.find(v->name);
      if (it != declared.end()) v->shape = it->second;
    }
}

// Shapes of every value with the inputs at selector s (0 min, 1 opt, 2 max) of a profile.
Result<ir::ShapeState> shapesAt(Graph const& g, plan::Profile const& p, int s, ir::HostEvaluator const& eval) {
  ir::ShapeState st;
  st.resize(g.values().size());
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    Value* in = g.inputs()[i];
    Dims const& d = s == 0 ? p.inputs[i].min : s == 1 ? p.inputs[i].opt : p.inputs[i].max;
    st.info[in->id] = {in->dtype, d};
  }
  KILN_RETURN_IF_ERROR(ir::inferShapes(g, st, &eval));
  // Dims still unknown here are data-dependent (NonZero, NMS, loops): such tensors get memory at run time.
  return st;
}

std::vector<ir::TensorInfo> infosOf(std::vector<Value*> const& vs, ir::ShapeState const& st) {
  std::vector<ir::TensorInfo> r;
  for (Value* v : vs) {
    if (v) {
      r.push_back(st.info[v->id]);
    } else {
      ir::TensorInfo t;
      t.shape.nbDims = -1;
      r.push_back(t);
    }
  }
  return r;
}

void storeFromDouble(backends::TensorView const& v, int64_t i, double x) {
  (void)dispatchType(v.dtype, [&](auto tag) {
    using S = decltype(tag);
    static_cast<S*>(v.data)[i] = fromDouble<S>(x);
    return Status::ok();
  });
}

// Reads every cache line of [p, p + bytes), so that the next kernel finds it in cache.
void touch(void const* p, size_t bytes) {
  auto const* b = static_cast<unsigned char const volatile*>(p);
  for (size_t i = 0; i < bytes; i += 64) (void)b[i];
}

// Times one kernel on random inputs (CPU target): median of a few runs after a warm-up, in milliseconds. A
// candidate whose first two runs after the warm-up both take over twice the best time so far (`best`, 0: none yet)
// is not timed further (the faster of the two is returned), and timing stops after 100 ms, so slow candidates cost little (the
// reference kernels are not timed at all once a library tactic ran the node). The
// kernel runs on `pool` (null: one thread), the builder's maxThreads as the engine will run it: the oneDNN kernels
// build their primitives for that thread count when created, and which is fastest (Winograd or direct) and
// whether some exist at all depends on it.
Result<double> timeTactic(backends::Tactic const& t, Node const& n, ir::ShapeState const& st, int iterations,
                          double best, ThreadPool* pool) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<backends::Kernel> k, t.create(n));
  std::vector<HostTensor> ins, outs;
  backends::LaunchContext ctx;
  backends::CpuStream stream;
  ctx.stream = &stream;
  ctx.pool = pool;
  std::mt19937 rng(1);
  for (Value* v : n.inputs) {
    if (!v) {
      Dims none{};
      none.nbDims = -1;
      ctx.inputs.push_back({nullptr, DataType::kFLOAT, none});
      continue;
    }
    auto const& info = st.info[v->id];
    if (st.values[v->id]) {
      ctx.inputs.push_back({const_cast<void*>(st.values[v->id]->data()), info.dtype, info.shape});
      continue;
    }
    KILN_ASSIGN_OR_RETURN(HostTensor h, HostTensor::allocate(info.dtype, info.shape, "tactic timing input"));
    // Small non-negative values keep every kernel in range (gather indices, pow, log).
    auto* bytes = static_cast<uint8_t*>(h.mutableData());
    if (isFloatType(info.dtype)) {
      backends::TensorView view{bytes, info.dtype, info.shape};
      for (int64_t i = 0; i < h.count(); ++i) storeFromDouble(view, i, (rng() % 1000) / 1000.0);
    }
    ctx.inputs.push_back({bytes, info.dtype, info.shape});
    ins.push_back(std::move(h));
  }
  for (Value* v : n.outputs) {
    auto const& info = st.info[v->id];
    KILN_ASSIGN_OR_RETURN(HostTensor h, HostTensor::allocate(info.dtype, info.shape, "tactic timing output"));
    ctx.outputs.push_back({h.mutableData(), info.dtype, info.shape});
    outs.push_back(std::move(h));
  }
  size_t ws = k->workspaceSize(infosOf(n.inputs, st), infosOf(n.outputs, st));
  KILN_ASSIGN_OR_RETURN(HostBuffer wsBuf, HostBuffer::allocate(ws, "tactic timing workspace"));
  ctx.workspace = wsBuf.data();
  ctx.workspaceSize = ws;
  std::vector<double> times;
  double spent = 0;
  for (int i = 0; i < std::max(1, iterations) + 1; ++i) {
    // In a network every other layer runs between two runs of this one: its weights come from L3 or memory, its
    // input from the layer just before. So the caches are evicted before each timed run and the inputs read back
    // in (layers bound by their weights, as ResNet-50's layer3 and layer4 at batch 1, were judged with them hot
    // in L2 otherwise).
    if (i > 0) {
      backends::cpuEvictCaches(pool ? pool->threads() : 1);
      for (HostTensor const& h : ins) touch(h.data(), h.bytes());
    }
    auto t0 = std::chrono::steady_clock::now();
    Status s = k->enqueue(ctx);
    auto t1 = std::chrono::steady_clock::now();
    if (!s.isOk()) return s;
    double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    spent += ms;
    // Judged on the two runs after the warm-up (a first run also pays one-time costs: page faults on scratch memory
    // a kernel touches first, e.g. Winograd's transformed tiles, 5 ms against 1 ms later on this VM), the faster of
    // the two: on a busy machine one preempted run could take a candidate out (one build of five on this VM kept
    // ResNet-50's layer3 3x3 convolutions direct, 0.69-0.77 ms in timing, against F(2x2, 3x3)'s 0.43-0.52 ms in
    // the other four; the five layers share one timing-cache entry, so one timing decides them all).
    if (i == 2 && best > 0 && std::min(ms, times[0]) > 2 * best) return std::min(ms, times[0]);
    if (i > 0) times.push_back(ms);
    if (i > 0 && spent > 100) break;
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Times one kernel on the GPU: inputs of a constant pattern (constants and host-known shape tensors as they are),
// outputs and workspace in device memory, one timed warm-up run, then the median of up to `iterations` runs
// timed with events on the profile stream. A candidate whose warm-up is over twice the best time so far
// (`best`, 0: none yet) is not timed further, and timing stops after 100 ms, so slow candidates cost little.
Result<double> timeTacticOnDevice(backends::DeviceBackend* dev, void* stream, backends::Tactic const& t, Node const& n,
                                  ir::ShapeState const& st, int iterations, double best) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<backends::Kernel> k, t.create(n));
  std::vector<backends::DeviceBuffer> bufs;
  backends::LaunchContext ctx;
  backends::DeviceStream ds(dev, stream);
  ctx.stream = &ds;
  for (Value* v : n.inputs) {
    if (!v) {
      Dims none{};
      none.nbDims = -1;
      ctx.inputs.push_back({nullptr, DataType::kFLOAT, none});
      continue;
    }
    auto const& info = st.info[v->id];
    HostTensor const* known = nullptr;
    if (st.values[v->id]) known = &*st.values[v->id];
    else if (v->producer && v->producer->op == OpType::kConstant && v->producer->constant) known = &*v->producer->constant;
    KILN_ASSIGN_OR_RETURN(int64_t cnt, checkedVolume(info.shape));
    KILN_ASSIGN_OR_RETURN(size_t bytes, checkedBytes(cnt, dataTypeSize(info.dtype)));
    KILN_ASSIGN_OR_RETURN(auto b, backends::DeviceBuffer::allocate(dev, bytes, "tactic timing input"));
    if (known && known->bytes() == bytes) {
      KILN_RETURN_IF_ERROR(dev->copy(b.data(), known->data(), bytes, backends::CopyKind::kHostToDevice, stream));
    } else {
      // Filled on the device (activations can be large): bytes 0x3c are small positive numbers in every float
      // type (0.0115 in fp32/bf16, 1.06 in fp16), in the domain of every op; zeros are in range for indices.
      KILN_RETURN_IF_ERROR(dev->fill(b.data(), isFloatType(info.dtype) ? 0x3c : 0, bytes, stream));
    }
    KILN_RETURN_IF_ERROR(dev->synchronize(stream));
    ctx.inputs.push_back({b.data(), info.dtype, info.shape});
    bufs.push_back(std::move(b));
  }
  for (Value* v : n.outputs) {
    auto const& info = st.info[v->id];
    KILN_ASSIGN_OR_RETURN(int64_t cnt, checkedVolume(info.shape));
    KILN_ASSIGN_OR_RETURN(size_t bytes, checkedBytes(cnt, dataTypeSize(info.dtype)));
    KILN_ASSIGN_OR_RETURN(auto b, backends::DeviceBuffer::allocate(dev, bytes, "tactic timing output"));
    ctx.outputs.push_back({b.data(), info.dtype, info.shape});
    bufs.push_back(std::move(b));
  }
  size_t ws = k->workspaceSize(infosOf(n.inputs, st), infosOf(n.outputs, st));
  KILN_ASSIGN_OR_RETURN(auto wsBuf, backends::DeviceBuffer::allocate(dev, ws, "tactic timing workspace"));
  ctx.workspace = wsBuf.data();
  ctx.workspaceSize = ws;
  return medianDeviceMs(dev, stream, iterations, best, [&] { return k->enqueue(ctx); });
}

// Casts the precision assignment put on constants (float32 weights feeding fp16/bf16 layers) are computed once
// here, so the plan holds the weights in the type the layers read and no cast runs per inference. Returns
// whether anything changed.
Result<bool> foldConstantCasts(Graph& g, ir::HostEvaluator const& eval, MemoryBudget* budget) {
  bool changed = false;
  for (auto const& np : g.nodes()) {
    Node& n = *np;
    if (n.op != OpType::kCast || n.inputs.size() != 1 || n.outputs.size() != 1 || n.outputs[0]->isOutput) continue;
    Value* in = n.inputs[0];
    if (!in || !in->producer || in->producer->op != OpType::kConstant || !in->producer->constant) continue;
    Value* out = n.outputs[0];
    if (!dimsKnown(out->shape)) continue;
    KILN_ASSIGN_OR_RETURN(HostTensor t, HostTensor::allocate(out->dtype, out->shape, "folded weight cast", budget));
    std::vector<HostTensor> result;
    result.push_back(std::move(t));
    Status st = eval(n, {&*in->producer->constant}, result);
    if (st.code() == StatusCode::kUnsupported) continue;  // no host kernel for this conversion: it runs per inference
    KILN_RETURN_IF_ERROR(st.withContext(n.describe()));
    n.op = OpType::kConstant;
    n.inputs.clear();
    n.attrs = ir::Attributes();
    n.constant = std::move(result[0]);
    changed = true;
  }
  return changed;
}

// The plan target: "cpu", or the GPU's architecture ("sm_90").
std::string planTarget(backends::DeviceBackend* gpu) { return gpu ? gpu->target() : "cpu"; }

// TF32 is allowed per node (the CUDA tactics read it): float32 convolutions and matrix multiplies of a build
// with BuilderFlag::kTF32.
void markTf32(Graph& g, BuilderFlags flags) {
  if (!(flags & (1u << static_cast<uint32_t>(BuilderFlag::kTF32)))) return;
  for (auto const& n : g.nodes()) {
    if (n->op != OpType::kConvolution && n->op != OpType::kDeconvolution && n->op != OpType::kMatrixMultiply) continue;
    if (n->input(0) && n->input(0)->dtype == DataType::kFLOAT) n->attrs.setInt("allow_tf32", 1);
  }
}

}  // namespace

// Values whose contents inference knows on the host at every shape of every profile, and identically so, are
// constants of this engine: shape arithmetic (Shape -> Gather -> Concat -> Reshape, as exporters write it) of a
// network with dynamic dims built for fixed shapes. They become Constants, so the layers computing them neither
// run per inference nor take a kernel launch each.
Result<int> foldProfileConstants(Graph& g, std::vector<std::array<ir::ShapeState, 3>> const& states, MemoryBudget* budget) {
  int folded = 0;
  std::vector<Value*> candidates;
  for (auto const& np : g.nodes()) {
    Node const& n = *np;
    if (n.op == OpType::kConstant || !n.subgraphs.empty()) continue;
    // A random fill or a plugin is not a constant even when its shape is.
    if (!passutil::outputsFollowFromInputs(n)) continue;
    for (Value* v : n.outputs) {
      if (!v || v->isOutput) continue;
      bool same = true;
      HostTensor const* first = nullptr;
      for (auto const& st : states)
        for (auto const& s : st) {
          if (!same) break;
          auto const& val = s.values[v->id];
          if (!val || s.pinned[v->id]) {
            same = false;
            break;
          }
          if (!first) {
            first = &*val;
            continue;
          }
          same = val->dtype() == first->dtype() && dimsEqual(val->shape(), first->shape()) &&
                 val->bytes() == first->bytes() && std::memcmp(val->data(), first->data(), first->bytes()) == 0;
        }
      if (same && first) candidates.push_back(v);
    }
  }
  auto const& st0 = states[0][1];
  for (Value* v : candidates) {
    HostTensor const& val = *st0.values[v->id];
    KILN_ASSIGN_OR_RETURN(HostTensor copy, HostTensor::allocate(val.dtype(), val.shape(), "folded shape tensor", budget));
    if (val.bytes()) std::memcpy(copy.mutableData(), val.data(), val.bytes());
    Node* c = g.addConstant(g.uniqueNodeName(v->name + "_folded"), std::move(copy));
    Value* cv = c->outputs[0];
    for (Node* user : g.users(v))
      for (Value*& in : user->inputs)
        if (in == v) in = cv;
    ++folded;
  }
  // An assertion on a folded condition is decided now: true everywhere, it goes; false, the build fails.
  std::vector<Node*> decided;
  for (auto const& np : g.nodes()) {
    Node* n = np.get();
    if (n->op != OpType::kAssertion || !n->input(0) || !n->input(0)->producer) continue;
    Node const* p = n->input(0)->producer;
    if (p->op != OpType::kConstant || !p->constant) continue;
    HostTensor const& c = *p->constant;
    auto const* b = static_cast<uint8_t const*>(c.data());
    for (size_t i = 0; i < c.bytes(); ++i)
      if (b[i] == 0)
        return invalidArgument(n->describe(), ": the assertion fails for the shapes of the optimization profiles: ",
                               n->attrs.getString("message", ""));
    decided.push_back(n);
  }
  for (Node* n : decided) g.removeNode(n);
  return folded + static_cast<int>(decided.size());
}

Result<plan::PlanInfo> buildPlanInfo(NetworkView const& network, BuilderConfigImpl const& config, BuildEnv const& env) {
  Reporter const* log = env.reporter;
  auto verbose = [&](std::string const& m) {
    if (log) log->verbose(m);
  };
  if (!network.graph) return invalidArgument("buildSerializedNetwork: no network");
  if (network.graph->outputs().empty()) return invalidArgument("network '", network.name, "' has no outputs (call markOutput)");
  if (config.getEngineCapability() != EngineCapability::kSTANDARD)
    return unsupported("only EngineCapability::kSTANDARD engines can be built");

  // Target.
  DeviceType device = config.defaultDeviceSet() ? config.getDefaultDeviceType() : DeviceType::kCPU;
  if (device == DeviceType::kDLA) return unsupported("DLA is not supported by Kiln");
  backends::DeviceBackend* gpu = nullptr;
  if (device == DeviceType::kGPU) {
    auto b = backends::gpuBackend();
    if (!b)
      return b.status().withContext("building for DeviceType::kGPU (IBuilderConfig::setDefaultDeviceType(DeviceType::kCPU) "
                                    "builds for the CPU)");
    gpu = *b;
  }
  TacticSources sources = config.getTacticSources();

  std::unique_ptr<Graph> g = network.graph->clone();
  KILN_RETURN_IF_ERROR(clonePlugins(*g));
  isolateOutputs(*g);
  // An output that is also an input left its binding to an Identity's output: that binding keeps the tensor's
  // allowed formats.
  std::map<std::string, TensorFormats> allowedFormats = network.allowedFormats;
  for (Value* out : g->outputs())
    if (!allowedFormats.count(out->name) && out->producer && out->producer->op == OpType::kIdentity &&
        out->producer->inputs.size() == 1 && out->producer->inputs[0]->isInput) {
      auto it = network.allowedFormats.find(out->producer->inputs[0]->name);
      if (it != network.allowedFormats.end()) allowedFormats[out->name] = it->second;
    }
  ir::HostEvaluator eval = backends::referenceEvaluator();
  KILN_RETURN_IF_ERROR(ir::inferGraphInPlace(*g, &eval));
  for (Value* out : g->outputs())
    if (!out->producer) return invalidArgument("network output '", out->name, "' is not produced by any layer");

  KILN_ASSIGN_OR_RETURN(std::vector<plan::Profile> profiles, resolveProfiles(*g, config));
  KILN_ASSIGN_OR_RETURN(auto declaredIODims, specializeToFixedProfile(*g, profiles, config.optimizationLevel(), eval));
  if (!declaredIODims.empty())
    verbose("the optimization profile fixes every input's shape: the build specializes the network to it");

  // Passes.
  PassContext pctx;
  pctx.optimizationLevel = config.optimizationLevel();
  pctx.evaluator = &eval;
  pctx.budget = env.budget;
  pctx.cpuTarget = gpu == nullptr;
  // The CPU's fused attention is the oneDNN-source backend's (attention_cpu_tiled); elsewhere (reference-only
  // builds, CPUs without AVX-512) the unfused layers are faster.
  pctx.cpuFusedAttention = pctx.cpuTarget && (sources & (1u << static_cast<int32_t>(TacticSource::kONEDNN))) != 0 &&
                           backends::cpuFusedAttentionFast();
  std::vector<std::string> passLog;
  pctx.log = &passLog;
  KILN_RETURN_IF_ERROR(runPipeline(*g, pctx));
  for (auto const& l : passLog) verbose(l);
  materializeConstantOutputs(*g);

  // Precision.
  PrecisionOptions popt;
  popt.flags = config.getFlags();
  popt.stronglyTyped = network.stronglyTyped;
  // A reduced type is allowed, not required: on CPU builds a layer whose reduced form only reference (fp64 loops) or
  // host-fallback tactics run keeps float32 where a library tactic runs that. The tactics are asked with the first
  // profile's opt shapes, the concrete shapes tactic selection asks them with (dynamic dims are -1 here). GPU builds
  // keep the earlier assignment (every reduced-precision layer as the flags allow) until this rule has been run
  // on the device: the CUDA tactics take fp16/bf16 nearly everywhere.
  std::optional<ir::ShapeState> optShapes;
  if (device == DeviceType::kCPU) {
    KILN_RETURN_IF_ERROR(g->renumber());
    if (!profiles.empty()) {
      Result<ir::ShapeState> st = shapesAt(*g, profiles[0], 1, eval);
      if (st) optShapes = std::move(st).value();
    }
    popt.hasLibraryTactic = [&](Node const& n, std::vector<ir::TensorInfo> in, std::vector<ir::TensorInfo> out) {
      auto concrete = [&](std::vector<Value*> const& vs, std::vector<ir::TensorInfo>& infos) {
        for (size_t i = 0; optShapes && i < vs.size() && i < infos.size(); ++i)
          if (vs[i] && static_cast<size_t>(vs[i]->id) < optShapes->info.size())
            infos[i].shape = optShapes->info[vs[i]->id].shape;
      };
      concrete(n.inputs, in);
      concrete(n.outputs, out);
      for (auto const* t : backends::TacticRegistry::instance().candidates(n, in, out, device, sources))
        if (t->source != TacticSource::kREFERENCE && !backends::isHostFallback(*t)) return true;
      return false;
    };
  }
  KILN_RETURN_IF_ERROR(assignPrecision(*g, popt));
  KILN_RETURN_IF_ERROR(ir::inferGraphInPlace(*g, &eval));
  KILN_ASSIGN_OR_RETURN(bool castsFolded, foldConstantCasts(*g, eval, env.budget));
  if (castsFolded) {
    // The float32 originals no other layer reads go.
    KILN_RETURN_IF_ERROR(createEliminateDeadLayersPass()->run(*g, pctx).status());
    KILN_RETURN_IF_ERROR(ir::inferGraphInPlace(*g, &eval));
  }
  // Plugins: types negotiated with the plugin (casts around it), then shapes again.
  KILN_RETURN_IF_ERROR(negotiatePlugins(*g, device));
  if (gpu) KILN_RETURN_IF_ERROR(recordPluginTacticSources(*g, sources));
  KILN_RETURN_IF_ERROR(ir::inferGraphInPlace(*g, &eval));
  KILN_RETURN_IF_ERROR(g->renumber());
  if (gpu) markTf32(*g, config.getFlags());

  // Shapes at every profile's min/opt/max.
  std::vector<std::array<ir::ShapeState, 3>> states;
  for (size_t pi = 0; pi < profiles.size(); ++pi) {
    std::array<ir::ShapeState, 3> st;
    for (int s = 0; s < 3; ++s) {
      auto r = shapesAt(*g, profiles[pi], s, eval);
      if (!r) return r.status().withContext(strCat("optimization profile ", pi));
      st[s] = std::move(r).value();
    }
    states.push_back(std::move(st));
  }
  // V3 output shapes as expressions and the workspace for the plan: the runtime never calls the build capability.
  KILN_RETURN_IF_ERROR(capturePluginShapes(*g, states));
  KILN_RETURN_IF_ERROR(configurePlugins(*g, states));
  KILN_RETURN_IF_ERROR(sizePluginWorkspaces(*g, states));
  {
    std::vector<std::string> tacticLog;
    PluginTacticOptions popts;
    popts.optimizationLevel = config.optimizationLevel();
    popts.device = device;
    popts.gpu = gpu;
    popts.stream = config.getProfileStream();
    popts.iterations = config.getAvgTimingIterations() + 4;
    popts.cache = config.timingCache();
    popts.target = planTarget(gpu);
    KILN_RETURN_IF_ERROR(choosePluginTactics(*g, states, popts, &tacticLog));
    for (auto const& l : tacticLog) verbose(l);
  }

  auto recomputeStates = [&]() -> Status {
    KILN_RETURN_IF_ERROR(ir::inferGraphInPlace(*g, &eval));
    KILN_RETURN_IF_ERROR(g->renumber());
    for (size_t pi = 0; pi < profiles.size(); ++pi)
      for (int s = 0; s < 3; ++s) {
        auto r = shapesAt(*g, profiles[pi], s, eval);
        if (!r) return r.status().withContext(strCat("optimization profile ", pi));
        states[pi][s] = std::move(r).value();
      }
    return Status::ok();
  };
  // Shape tensors the profiles fix become constants (then the layers computing them go, and shapes again).
  if (config.optimizationLevel() > 0) {
    KILN_ASSIGN_OR_RETURN(int folded, foldProfileConstants(*g, states, env.budget));
    if (folded > 0) {
      size_t before = g->nodes().size();
      KILN_RETURN_IF_ERROR(createEliminateDeadLayersPass()->run(*g, pctx).status());
      KILN_RETURN_IF_ERROR(recomputeStates());
      // Layers whose inputs are all constants now (an embedding Gather of position ids sliced to the sequence
      // length, from the table in the type precision gave it) are computed here, once.
      KILN_ASSIGN_OR_RETURN(bool computed, createFoldConstantsPass()->run(*g, pctx));
      if (computed) {
        materializeConstantOutputs(*g);
        KILN_RETURN_IF_ERROR(createEliminateDeadLayersPass()->run(*g, pctx).status());
        KILN_RETURN_IF_ERROR(recomputeStates());
      }
      verbose(strCat("profile constants: ", folded, " shape tensors or assertions fixed by the profiles, ",
                     before - g->nodes().size(), " layers removed"));
    }
  }
  // Attention again: the exporters compute SDPA's scale from q's shape, which the profile constants make a
  // constant only now, after the pipeline (whose fuse_attention saw it computed). CPU builds too (fp32 only: the
  // pass checks PassContext::cpuTarget).
  if (config.optimizationLevel() > 0) {
    passLog.clear();
    // The profiles' input dims: absorb_attention_views proves its chains at shapes every profile fixes.
    std::vector<std::vector<Dims>> profileInputs;
    for (auto const& p : profiles)
      for (int s = 0; s < 3; ++s) {
        std::vector<Dims> dims;
        for (auto const& in : p.inputs) dims.push_back(s == 0 ? in.min : s == 1 ? in.opt : in.max);
        profileInputs.push_back(std::move(dims));
      }
    pctx.profileInputs = &profileInputs;
    KILN_ASSIGN_OR_RETURN(bool fused, createFuseAttentionPass()->run(*g, pctx));
    if (fused) {
      // The new Attention nodes' views and Q/K/V projections go as the pipeline's would have.
      KILN_RETURN_IF_ERROR(createAbsorbAttentionViewsPass()->run(*g, pctx).status());
      KILN_RETURN_IF_ERROR(createMergeQkvProjectionsPass()->run(*g, pctx).status());
      KILN_RETURN_IF_ERROR(createEliminateDeadLayersPass()->run(*g, pctx).status());
      KILN_RETURN_IF_ERROR(recomputeStates());
      for (auto const& l : passLog) verbose(l);
    }
    pctx.profileInputs = nullptr;  // points into this block
  }
  // Pointwise fusion last among the graph rewrites (GPU builds): the epilogue, residual, GELU and attention fusions
  // above keep their layers, and precision's casts are in place, so they fuse with the rounding they carry.
  if (gpu && config.optimizationLevel() > 0) {
    passLog.clear();
    KILN_ASSIGN_OR_RETURN(bool fusedPointwise, createFusePointwisePass()->run(*g, pctx));
    if (fusedPointwise) {
      KILN_RETURN_IF_ERROR(createEliminateDeadLayersPass()->run(*g, pctx).status());
      KILN_RETURN_IF_ERROR(recomputeStates());
      for (auto const& l : passLog) verbose(l);
    }
  }
  // GPU memory layouts: channels-last where format-aware tactics take it, Reformat layers where layouts meet;
  // the weights' reformats are computed here, once.
  if (gpu && config.optimizationLevel() > 0) {
    FormatContext fc;
    fc.device = device;
    fc.sources = sources;
    for (auto const& st : states)
      for (auto const& s : st) fc.states.push_back(&s);
    fc.opt = &states[0][1];
    KILN_ASSIGN_OR_RETURN(int hwc, assignFormats(*g, fc));
    if (hwc > 0) {
      KILN_RETURN_IF_ERROR(createFoldConstantsPass()->run(*g, pctx).status());
      KILN_RETURN_IF_ERROR(createEliminateDeadLayersPass()->run(*g, pctx).status());
      KILN_RETURN_IF_ERROR(recomputeStates());
      int reformats = 0;
      for (auto const& n : g->nodes()) reformats += n->op == OpType::kReformat;
      verbose(strCat("formats: ", hwc, " layers channels-last (kHWC), ", reformats, " reformat layers"));
    }
  }

  // Network I/O formats (ITensor::setAllowedFormats), on every target: a Reformat between each non-kLINEAR
  // binding and the network, merged with the one the layout assignment may have put there.
  KILN_ASSIGN_OR_RETURN(auto ioFormats, assignIOFormats(*g, allowedFormats));
  if (!ioFormats.empty()) {
    KILN_RETURN_IF_ERROR(recomputeStates());
    for (auto const& [v, f] : ioFormats) verbose(strCat("I/O tensor '", v->name, "' is bound in ", formatName(f)));
  }

  // Tactics: level 0 takes the first supported by heuristic; above, candidates are timed at the first
  // profile's opt shape and the fastest kept.
  size_t workspaceLimit = config.getMemoryPoolLimit(MemoryPoolType::kWORKSPACE);
  size_t nNodes = g->nodes().size();
  std::vector<int64_t> wsSizes(nNodes, 0);
  IProgressMonitor* monitor = config.getProgressMonitor();
  if (monitor) monitor->phaseStart("Tactic selection", nullptr, static_cast<int32_t>(nNodes));
  // CPU tactics are timed on as many threads as the engine's contexts will give them.
  std::unique_ptr<ThreadPool> timingPool;
  if (!gpu && env.maxThreads > 1) timingPool = std::make_unique<ThreadPool>(env.maxThreads);
  void* profileStream = config.getProfileStream();
  TimingCacheImpl localCache;
  TimingCacheImpl* cache = config.timingCache() ? config.timingCache() : &localCache;
  int32_t cacheHits = 0, timedNodes = 0;
  for (size_t ni = 0; ni < nNodes; ++ni) {
    Node* n = g->nodes()[ni].get();
    if (monitor && !monitor->stepComplete("Tactic selection", static_cast<int32_t>(ni))) {
      monitor->phaseFinish("Tactic selection");
      return errorStatus(StatusCode::kInvalidState, "the build was cancelled by the progress monitor");
    }
    auto const& opt = states[0][1];
    auto cands = backends::TacticRegistry::instance().candidates(*n, infosOf(n->inputs, opt), infosOf(n->outputs, opt),
                                                                  device, sources);
    // Every profile shape must be supported and fit the workspace limit.
    std::vector<backends::Tactic const*> ok;
    for (auto const* t : cands) {
      bool fits = true;
      for (auto const& st : states)
        for (auto const& s : st) {
          if (t->supports && !t->supports(*n, infosOf(n->inputs, s), infosOf(n->outputs, s))) fits = false;
        }
      if (fits) ok.push_back(t);
    }
    // On the GPU a host fallback (copy out, reference kernel, copy back) only runs what no device kernel can.
    if (gpu && std::any_of(ok.begin(), ok.end(), [](auto const* t) { return !backends::isHostFallback(*t); }))
      ok.erase(std::remove_if(ok.begin(), ok.end(), [](auto const* t) { return backends::isHostFallback(*t); }), ok.end());
    // A timing-cache hit: the tactic chosen before for this node signature and candidate set.
    std::string cacheKey;
    backends::Tactic const* cached = nullptr;
    if (config.optimizationLevel() > 0 && ok.size() > 1 && n->op != OpType::kConstant) {
      cacheKey = timingCacheKey(planTarget(gpu), *n, opt, ok);
      if (auto hit = cache->lookup(cacheKey))
        for (auto const* t : ok)
          if (t->name == *hit) cached = t;
      if (cached) {
        ++cacheHits;
        ok = {cached};
      }
    }
    if (ok.empty()) {
      std::string types;
      for (Value* v : n->inputs)
        if (v) types += strCat(types.empty() ? "" : ", ", dataTypeName(v->dtype));
      return unsupported(n->describe(), ": no kernel supports it on ", device == DeviceType::kCPU ? "the CPU" : "the GPU",
                         " with input types (", types, ") from the allowed tactic sources");
    }
    backends::Tactic const* chosen = nullptr;
    int64_t chosenWs = 0;
    double best = 0;
    for (auto const* t : ok) {
      KILN_ASSIGN_OR_RETURN(std::unique_ptr<backends::Kernel> k, t->create(*n));
      int64_t ws = 0;
      for (auto const& st : states)
        for (auto const& s : st) {
          auto ins = infosOf(n->inputs, s), outs = infosOf(n->outputs, s);
          bool known = true;
          for (auto const& i : ins) known = known && (i.shape.nbDims < 0 || dimsKnown(i.shape));
          for (auto const& o : outs) known = known && dimsKnown(o.shape);
          // Shapes known only at run time: the runtime sizes that workspace then. A V3 plugin's was sized by the
          // build (plugin_workspace), whatever its output shapes.
          if (known || n->attrs.has("plugin_workspace"))
            ws = std::max<int64_t>(ws, static_cast<int64_t>(k->workspaceSize(ins, outs)));
        }
      if (static_cast<size_t>(ws) > workspaceLimit) {
        verbose(strCat(n->describe(), ": tactic ", t->name, " needs ", ws, " workspace bytes, over the limit"));
        continue;
      }
      if (config.optimizationLevel() == 0 || ok.size() == 1 || n->op == OpType::kConstant) {
        chosen = t;
        chosenWs = ws;
        break;
      }
      // On the CPU the reference kernels (fp64 loops, the oracle) are not timed against a library tactic that
      // already ran the node: they never win, and timing them dominated CPU build times.
      if (!gpu && chosen && chosen->source != TacticSource::kREFERENCE && t->source == TacticSource::kREFERENCE) continue;
      auto timed = gpu ? timeTacticOnDevice(gpu, profileStream, *t, *n, opt, config.getAvgTimingIterations() + 4,
                                            chosen ? best : 0)
                       : timeTactic(*t, *n, opt, config.getAvgTimingIterations() + 2, chosen ? best : 0,
                                    timingPool.get());
      if (!timed) {
        // Dummy data can be out of a kernel's domain (indices, ...): such a candidate is skipped, not fatal.
        verbose(strCat(n->describe(), ": tactic ", t->name, " could not be timed: ", timed.status().message()));
        if (!chosen && t == ok.back()) {
          chosen = t;
          chosenWs = ws;
        }
        continue;
      }
      double ms = *timed;
      verbose(strCat(n->describe(), ": tactic ", t->name, " ", ms, " ms"));
      if (!chosen || ms < best) {
        chosen = t;
        chosenWs = ws;
        best = ms;
      }
    }
    if (!chosen)
      return errorStatus(StatusCode::kOutOfMemory, n->describe(), ": every kernel needs more workspace than the limit of ",
                         workspaceLimit, " bytes (IBuilderConfig::setMemoryPoolLimit(kWORKSPACE))");
    n->tactic = chosen->name;
    wsSizes[ni] = chosenWs;
    if (!cacheKey.empty() && !cached) {
      cache->insert(cacheKey, chosen->name);
      ++timedNodes;
    }
  }
  if (monitor) monitor->phaseFinish("Tactic selection");
  if (timedNodes || cacheHits)
    verbose(strCat("tactic timing: ", timedNodes, " layers timed, ", cacheHits, " taken from the timing cache"));

  // CPU activation formats between oneDNN layers (blocked where consecutive convolutions share a tensor).
  if (!gpu) {
    std::vector<std::string> formatLog;
    PassContext fctx = pctx;
    fctx.log = &formatLog;
    KILN_RETURN_IF_ERROR(createAssignCpuFormatsPass(backends::cpuPreferredActivationFormat())->run(*g, fctx).status());
    for (auto const& l : formatLog) verbose(l);
  }

  // Memory plan: activations and workspaces in one arena; inputs, outputs and constants live elsewhere.
  size_t nValues = g->values().size();
  std::vector<int32_t> firstUse(nValues, -1), lastUse(nValues, -1);
  std::vector<int64_t> bytes(nValues, 0);
  for (size_t ni = 0; ni < nNodes; ++ni) {
    Node* n = g->nodes()[ni].get();
    for (Value* v : n->outputs) {
      if (firstUse[v->id] < 0) firstUse[v->id] = static_cast<int32_t>(ni);
      lastUse[v->id] = std::max(lastUse[v->id], static_cast<int32_t>(ni));
    }
    for (Value* v : n->inputs)
      if (v) lastUse[v->id] = std::max(lastUse[v->id], static_cast<int32_t>(ni));
  }
  std::vector<bool> dynamic(nValues, false);
  for (auto const& v : g->values()) {
    for (auto const& st : states)
      for (auto const& s : st) {
        if (!dimsKnown(s.info[v->id].shape)) {
          dynamic[v->id] = true;
          continue;
        }
        KILN_ASSIGN_OR_RETURN(int64_t count, checkedVolume(s.info[v->id].shape));
        KILN_ASSIGN_OR_RETURN(size_t b, checkedBytes(count, dataTypeSize(s.info[v->id].dtype)));
        bytes[v->id] = std::max<int64_t>(bytes[v->id], static_cast<int64_t>(b));
      }
  }
  // A binding in a vectorized format is padded to whole vectors.
  for (auto const& [v, f] : ioFormats)
    for (auto const& st : states)
      for (auto const& s : st) {
        if (!dimsKnown(s.info[v->id].shape)) continue;
        KILN_ASSIGN_OR_RETURN(int64_t b, formatBytes(s.info[v->id].shape, s.info[v->id].dtype, f));
        bytes[v->id] = std::max(bytes[v->id], b);
      }
  auto inArena = [&](Value const* v) {
    return !v->isInput && !v->isOutput && !dynamic[v->id] && v->producer && v->producer->op != OpType::kConstant;
  };
  // Shared buffers: a view (a reshape, squeeze, unsqueeze, a same-type identity, a contiguous slice or gather)
  // lives in its input's memory, a Concatenation's inputs where they can in its output's, and an output its
  // tactic may write over an input it reads last (a CPU convolution's residual, whose sum post-op then adds in
  // place) in that input's; the kernels skip the copy when the addresses are equal, the runtime skips the layers
  // marked in place. A shared buffer lives from the first to the last use of any sharer.
  AliasInputs aliasIn;
  aliasIn.inArena.assign(nValues, false);
  aliasIn.bytes = bytes;
  aliasIn.alignment = kArenaAlignment;
  aliasIn.fixed.assign(nValues, ir::TensorInfo{});
  for (auto const& v : g->values()) {
    aliasIn.inArena[v->id] = inArena(v.get());
    // Offsets inside another buffer are planned only for shapes that every profile shape gives alike.
    ir::TensorInfo const* first = nullptr;
    bool same = !states.empty();
    for (auto const& st : states)
      for (auto const& s : st) {
        ir::TensorInfo const& t = s.info[v->id];
        if (!first) first = &t;
        same = same && dimsKnown(t.shape) && t.dtype == first->dtype && dimsEqual(t.shape, first->shape);
      }
    if (same && first)
      aliasIn.fixed[v->id] = *first;
    else
      aliasIn.fixed[v->id].shape.nbDims = -1;
  }
  backends::TacticRegistry const& registry = backends::TacticRegistry::instance();
  aliasIn.reusableInput = [&](Node const& n) {
    backends::Tactic const* t = n.tactic.empty() ? nullptr : registry.find(n.tactic);
    return t ? t->outputMayReuseInput : -1;
  };
  BufferAliases aliases = planBufferAliases(*g, aliasIn, firstUse, lastUse);
  std::vector<int32_t> const& aliasOf = aliases.aliasOf;
  for (auto const& [ni, flags] : aliases.inPlace) g->nodes()[ni]->attrs.setInts(ir::kInPlaceAttr, flags);
  for (auto const& l : aliases.log) verbose(l);
  if (!aliases.inPlace.empty()) verbose(strCat("memory: ", aliases.inPlace.size(), " layers in place"));
  std::vector<BufferRequest> requests;
  std::vector<std::pair<int, int32_t>> owners;  // (0 value / 1 workspace, id)
  for (auto const& v : g->values()) {
    if (!inArena(v.get()) || aliasOf[v->id] >= 0) continue;
    requests.push_back({bytes[v->id], firstUse[v->id], std::max(firstUse[v->id], lastUse[v->id])});
    owners.push_back({0, v->id});
  }
  for (size_t ni = 0; ni < nNodes; ++ni) {
    if (wsSizes[ni] <= 0) continue;
    requests.push_back({wsSizes[ni], static_cast<int32_t>(ni), static_cast<int32_t>(ni)});
    owners.push_back({1, static_cast<int32_t>(ni)});
  }
  ArenaPlan arena = planArena(requests, kArenaAlignment);

  plan::PlanInfo info;
  info.name = network.name;
  info.target = planTarget(gpu);
  info.kilnVersion = versionString();
  info.builderFlags = config.getFlags();
  info.optimizationLevel = config.optimizationLevel();
  info.profilingVerbosity = static_cast<int32_t>(config.getProfilingVerbosity());
  info.tacticSources = sources;
  info.profiles = std::move(profiles);
  info.placements.assign(nValues, plan::Placement{});
  info.workspaceOffsets.assign(nNodes, -1);
  info.workspaceSizes.assign(nNodes, 0);
  for (size_t i = 0; i < requests.size(); ++i) {
    auto [kind, id] = owners[i];
    if (kind == 0) info.placements[id] = {arena.offsets[i], requests[i].size};
    else {
      info.workspaceOffsets[id] = arena.offsets[i];
      info.workspaceSizes[id] = requests[i].size;
    }
  }
  for (auto const& v : g->values())
    if (aliasOf[v->id] >= 0)
      info.placements[v->id] = {info.placements[aliasOf[v->id]].offset + aliases.offset[v->id], bytes[v->id]};
  for (auto const& v : g->values())
    if (info.placements[v->id].offset < 0) info.placements[v->id].size = dynamic[v->id] ? 0 : bytes[v->id];
  info.arenaSize = arena.size;
  for (auto const& [v, f] : ioFormats) info.ioFormats[v->id] = f;
  restoreDeclaredIODims(*g, declaredIODims);
  info.graph = std::move(g);
  return info;
}

}  // namespace kiln::builder
