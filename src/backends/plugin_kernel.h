// The kernel of plugin nodes, shared by the reference backend (host execution through
// kiln::IPluginHostExecution) and the CUDA backend (the plugin's enqueue on the launch's stream): the workspace is
// the build's (V3, attribute plugin_workspace) or the engine's V2 instance's; each execution context runs its own
// copy (attachToContext), kept as the kernel's per-context state; outputs sized by size tensors are written into
// upper-bound scratch, then moved to memory of their actual shape. Header-only, because libkiln_cuda carries no copy
// of the backends component.
#pragma once

#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "backends/backend.h"
#include "ir/plugin.h"

namespace kiln::backends {

/// Device memory operations for plugins with size tensors on the GPU (the CUDA backend gives its own; null on the
/// host). Every operation is ordered on `stream`.
struct PluginDeviceOps {
  Result<void*> (*allocate)(size_t bytes, void* stream);
  void (*release)(void* ptr, void* stream);
  /// Device-to-host (`toHost`) or device-to-device copy.
  Status (*copy)(void* dst, void const* src, size_t bytes, bool toHost, void* stream);
  Status (*synchronize)(void* stream);
};

/// The workspace the build sized for a V3 plugin node (attribute plugin_workspace, format 1.3), or nullopt.
inline std::optional<size_t> pluginStoredWorkspace(ir::Node const& n) {
  if (!n.attrs.has("plugin_workspace")) return std::nullopt;
  int64_t ws = n.attrs.getInt("plugin_workspace", 0);
  return ws > 0 ? static_cast<size_t>(ws) : 0;
}


/// The cuDNN and cuBLAS handles one execution context's copy of a V2 plugin layer is attached with
/// (attachToContext), made by the device backend with the context's state of that layer and destroyed with it.
/// A handle is null where its tactic source was disabled in the build.
class PluginHandles {
 public:
  virtual ~PluginHandles() = default;
  virtual cudnnContext* cudnn() const = 0;
  virtual cublasContext* cublas() const = 0;
  /// Binds both handles to `stream` (cudnnSetStream / cublasSetStream), before each enqueue, so that what the
  /// plugin runs on them is ordered on the launch's stream (and captured with it into a CUDA graph).
  virtual Status setStream(void* stream) = 0;
};

/// Makes a context's handles: a cuDNN handle when `cudnn`, a cuBLAS handle when `cublas`; errors say which
/// handle could not be made and why.
using PluginHandlesFactory = Result<std::unique_ptr<PluginHandles>> (*)(bool cudnn, bool cublas);

/// One context's plugin copy, and the handles it was attached with (declared first: they outlive the copy, whose
/// detachFromContext runs before they go).
struct PluginContextState final : KernelContextState {
  std::unique_ptr<PluginHandles> handles;
  std::unique_ptr<ir::PluginInstance> plugin;
};

/// The V3 tactic the builder chose for a plugin node (0: none).
inline int32_t pluginTactic(ir::Node const& n) { return static_cast<int32_t>(n.attrs.getInt("plugin_tactic", 0)); }

/// The builder's TacticSources recorded on a V2 plugin node (attribute tactic_sources; absent: every source, as a
/// build with the default sources): which handles its per-context copies are attached with.
inline bool pluginWantsCudnn(ir::Node const& n) {
  return (n.attrs.getInt("tactic_sources", -1) >> static_cast<int32_t>(TacticSource::kCUDNN)) & 1;
}
inline bool pluginWantsCublas(ir::Node const& n) {
  return (n.attrs.getInt("tactic_sources", -1) >> static_cast<int32_t>(TacticSource::kCUBLAS)) & 1;
}

/// Number of a plugin node's regular inputs (V3 shape inputs, last, are not passed to enqueue).
inline size_t pluginRegularInputs(ir::Node const& n) {
  int64_t shape = n.op == ir::OpType::kPluginV3 ? n.attrs.getInt("num_shape_inputs", 0) : 0;
  if (shape < 0 || static_cast<size_t>(shape) > n.inputs.size()) return n.inputs.size();
  return n.inputs.size() - static_cast<size_t>(shape);
}

class PluginKernel final : public Kernel {
 public:
  /// `host`: run through enqueueHost (CPU targets); else enqueue on the stream.
  /// `tactic`: the V3 tactic the builder chose (node attribute plugin_tactic; 0: the default, no setTactic).
  /// `handles`: makes the cuDNN/cuBLAS handles a V2 plugin's context copies are attached with, `cudnn` and
  /// `cublas` saying which (null factory: attached with null handles, as on the CPU).
  PluginKernel(std::shared_ptr<ir::PluginInstance> prototype, size_t nbInputs, bool host, int32_t tactic = 0,
               PluginHandlesFactory handles = nullptr, bool cudnn = false, bool cublas = false)
      : prototype_(std::move(prototype)),
        nbInputs_(nbInputs),
        host_(host),
        tactic_(tactic),
        handles_(handles),
        cudnn_(cudnn),
        cublas_(cublas) {}

  /// The build's workspace for this node (pluginStoredWorkspace): returned whatever the shapes, so that a run-time
  /// V3 plugin is never asked (it has no build capability).
  void setStoredWorkspace(std::optional<size_t> ws) { storedWorkspace_ = ws; }
  /// Device memory for outputs sized by size tensors (GPU kernels; null: host memory).
  void setDeviceOps(PluginDeviceOps const* ops) { deviceOps_ = ops; }

  size_t workspaceSize(std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) const override {
    if (storedWorkspace_) return *storedWorkspace_;
    std::vector<DynamicPluginTensorDesc> i, o;
    for (size_t k = 0; k < nbInputs_ && k < in.size(); ++k) i.push_back(dyn(in[k]));
    for (auto const& t : out) o.push_back(dyn(t));
    return prototype_->workspaceSize(i, o);
  }

  Result<std::unique_ptr<KernelContextState>> createContextState(ContextResources const& resources) const override {
    KILN_RETURN_IF_ERROR(prototype_->initialize());
    auto state = std::make_unique<PluginContextState>();
    if (handles_ && (cudnn_ || cublas_) && prototype_->kind() == ir::PluginKind::kV2) {
      auto made = handles_(cudnn_, cublas_);
      if (!made)
        return made.status().withContext(strCat("layer '", prototype_->layer(), "' (", prototype_->describe(),
                                                "): the handles for its attachToContext"));
      state->handles = std::move(made).value();
    }
    cudnnContext* cudnn = state->handles ? state->handles->cudnn() : nullptr;
    cublasContext* cublas = state->handles ? state->handles->cublas() : nullptr;
    KILN_ASSIGN_OR_RETURN(state->plugin,
                          prototype_->attachToContext(resources.allocator, resources.recorder, cudnn, cublas));
    if (tactic_ != 0 && state->plugin->v3()) {
      auto* c = state->plugin->v3()->getCapabilityInterface(PluginCapabilityType::kRUNTIME);
      if (!c) return internalError(prototype_->describe(), ": the context's copy has no runtime capability");
      if (int32_t rc = static_cast<IPluginV3OneRuntime*>(c)->setTactic(tactic_); rc != 0)
        return invalidArgument(prototype_->describe(), " of layer '", prototype_->layer(), "': setTactic(", tactic_,
                               ") returned ", rc);
    }
    return std::unique_ptr<KernelContextState>(std::move(state));
  }

  Status enqueue(LaunchContext const& ctx) const override {
    auto* state = static_cast<PluginContextState*>(ctx.state);
    if (!state || !state->plugin)
      return unsupported(prototype_->describe(), " of layer '", prototype_->layer(),
                         "' runs only in an execution context (not inside If/Loop bodies or host evaluation)");
    if (ctx.inputs.size() < nbInputs_) return internalError("plugin launch with ", ctx.inputs.size(), " inputs");
    std::vector<PluginTensorDesc> in, out;
    std::vector<void const*> inPtrs;
    std::vector<void*> outPtrs;
    for (size_t k = 0; k < nbInputs_; ++k) {
      in.push_back(desc(ctx.inputs[k].dtype, ctx.inputs[k].shape));
      inPtrs.push_back(ctx.inputs[k].data);
    }
    bool dataDependent = false;
    for (auto const& t : ctx.outputs) {
      out.push_back(desc(t.dtype, t.shape));
      outPtrs.push_back(t.data);
      dataDependent = dataDependent || !dimsKnown(t.shape);
    }
    void* stream = ctx.stream ? ctx.stream->native() : nullptr;
    if (state->handles)
      KILN_RETURN_IF_ERROR(state->handles->setStream(stream).withContext(
          strCat(prototype_->describe(), " of layer '", prototype_->layer(), "'")));
    void* ws = ctx.workspaceSize ? ctx.workspace : nullptr;
    if (dataDependent) return enqueueDataDependent(ctx, *state->plugin, in, inPtrs, ws, stream);
    return state->plugin->execute(in, out, inPtrs.data(), outPtrs.data(), ws, host_, stream);
  }

 private:
  static PluginTensorDesc desc(DataType t, Dims const& d) {
    PluginTensorDesc x{};
    x.dims = d;
    x.type = t;
    x.format = TensorFormat::kLINEAR;
    x.scale = -1.0F;
    return x;
  }
  static DynamicPluginTensorDesc dyn(TensorInfo const& t) {
    DynamicPluginTensorDesc x{};
    x.desc = desc(t.dtype, t.shape);
    x.min = t.shape;
    x.opt = t.shape;
    x.max = t.shape;
    return x;
  }

  std::string who() const { return strCat(prototype_->describe(), " of layer '", prototype_->layer(), "'"); }

  // Scratch of one launch: host memory, or device memory released in stream order.
  struct Scratch {
    PluginDeviceOps const* ops = nullptr;
    void* stream = nullptr;
    std::vector<void*> device;
    std::vector<HostBuffer> host;
    Scratch() = default;
    Scratch(Scratch const&) = delete;
    Scratch& operator=(Scratch const&) = delete;
    ~Scratch() {
      for (void* p : device) ops->release(p, stream);
    }
    Result<void*> allocate(size_t bytes, char const* what) {
      if (ops) {
        KILN_ASSIGN_OR_RETURN(void* p, ops->allocate(bytes ? bytes : 1, stream));
        device.push_back(p);
        return p;
      }
      KILN_ASSIGN_OR_RETURN(HostBuffer b, HostBuffer::allocate(bytes ? bytes : 1, what));
      host.push_back(std::move(b));
      return host.back().data();
    }
  };

  // Reads `count` int32/int64 values of `t` (device memory through the ops: this waits for the stream).
  Result<std::vector<int64_t>> readInts(TensorView const& t, int64_t count, void* stream) const {
    if (t.dtype != DataType::kINT32 && t.dtype != DataType::kINT64)
      return invalidArgument(who(), ": expected an int32 or int64 tensor, got ", dataTypeName(t.dtype));
    size_t esize = dataTypeSize(t.dtype);
    std::vector<uint8_t> bytes(static_cast<size_t>(count) * esize);
    if (count > 0 && !t.data) return internalError(who(), ": a tensor to read has no memory");
    if (count > 0 && deviceOps_) {
      KILN_RETURN_IF_ERROR(deviceOps_->copy(bytes.data(), t.data, bytes.size(), true, stream));
      KILN_RETURN_IF_ERROR(deviceOps_->synchronize(stream));
    } else if (count > 0) {
      std::memcpy(bytes.data(), t.data, bytes.size());
    }
    std::vector<int64_t> r;
    for (int64_t k = 0; k < count; ++k) {
      if (esize == 4) {
        int32_t v;
        std::memcpy(&v, bytes.data() + k * 4, 4);
        r.push_back(v);
      } else {
        int64_t v;
        std::memcpy(&v, bytes.data() + k * 8, 8);
        r.push_back(v);
      }
    }
    return r;
  }

  // Outputs whose extents are size tensors' values (IExprBuilder::declareSizeTensor): the plugin writes them into
  // scratch of the declared upper bound (their descriptions carry the upper-bound dims), then the size tensors are
  // read (a synchronizing copy on the GPU), checked against 0 <= size <= upper, and each such output is allocated at
  // its actual shape (LaunchContext::allocateOutput: the user's IOutputAllocator for network outputs) and its
  // leading elements copied there: the plugin writes them packed in the actual shape.
  Status enqueueDataDependent(LaunchContext const& ctx, ir::PluginInstance& plugin, std::vector<PluginTensorDesc> in,
                              std::vector<void const*> const& inPtrs, void* workspace, void* stream) const {
    std::shared_ptr<ir::PluginShapeProgram const> program = prototype_->shapeProgram();
    if (!program) return internalError(who(), ": outputs of unknown shape but no stored shape expressions");
    if (!ctx.allocateOutput) return internalError(who(), ": data-dependent outputs but no allocateOutput");
    ir::EvalInputs ev;
    for (auto const& d : in) ev.inputs.push_back(d.dims);
    for (size_t k = nbInputs_; k < ctx.inputs.size(); ++k) {
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> vals, readInts(ctx.inputs[k], ctx.inputs[k].count(), stream));
      ev.shapeValues.emplace_back(std::move(vals));
    }
    ev.sizeMode = ir::SizeTensorMode::kUpper;
    KILN_ASSIGN_OR_RETURN(std::vector<std::optional<int64_t>> nodeValues,
                          ir::withContext(program->evaluateNodes(ev), who()));
    KILN_ASSIGN_OR_RETURN(std::vector<Dims> upper, ir::withContext(program->evaluate(ev), who()));
    if (upper.size() != ctx.outputs.size()) return internalError(who(), ": shape program of ", upper.size(), " outputs");
    Scratch scratch;
    scratch.ops = deviceOps_;
    scratch.stream = stream;
    std::vector<PluginTensorDesc> out;
    std::vector<void*> outPtrs;
    std::vector<bool> staged(ctx.outputs.size(), false);
    for (size_t i = 0; i < ctx.outputs.size(); ++i) {
      TensorView const& t = ctx.outputs[i];
      if (dimsKnown(t.shape)) {
        out.push_back(desc(t.dtype, t.shape));
        outPtrs.push_back(t.data);
        continue;
      }
      if (!dimsKnown(upper[i]))
        return invalidArgument(who(), ": output ", i, " has no upper bound at these input shapes (",
                               dimsToString(upper[i]), ")");
      KILN_ASSIGN_OR_RETURN(int64_t count, checkedVolume(upper[i]));
      KILN_ASSIGN_OR_RETURN(size_t bytes, checkedBytes(count, dataTypeSize(t.dtype)));
      KILN_ASSIGN_OR_RETURN(void* p, scratch.allocate(bytes, "plugin output at its upper bound"));
      out.push_back(desc(t.dtype, upper[i]));
      outPtrs.push_back(p);
      staged[i] = true;
    }
    KILN_RETURN_IF_ERROR(plugin.execute(in, out, inPtrs.data(), outPtrs.data(), workspace, host_, stream));
    ev.sizeMode = ir::SizeTensorMode::kValue;
    ev.sizes.assign(ctx.outputs.size(), -1);
    for (ir::SizeTensorDecl const& d : program->sizeTensors()) {
      TensorView const& t = ctx.outputs[d.output];
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> v, readInts(t, 1, stream));
      auto const& bound = nodeValues[program->nodes[d.node].c];
      if (!bound || v[0] < 0 || v[0] > *bound)
        return invalidArgument(who(), ": size tensor output ", d.output, " holds ", v[0], ", outside [0, ",
                               bound ? strCat(*bound) : std::string("unknown"),
                               "] (the upper bound given to IExprBuilder::declareSizeTensor)");
      ev.sizes[d.output] = v[0];
    }
    KILN_ASSIGN_OR_RETURN(std::vector<Dims> actual, ir::withContext(program->evaluate(ev), who()));
    for (size_t i = 0; i < ctx.outputs.size(); ++i) {
      if (!staged[i]) continue;
      if (!dimsKnown(actual[i]))
        return invalidArgument(who(), ": output ", i, " still has an unknown shape ", dimsToString(actual[i]),
                               " after its size tensors were read");
      KILN_ASSIGN_OR_RETURN(int64_t count, checkedVolume(actual[i]));
      KILN_ASSIGN_OR_RETURN(int64_t bound, checkedVolume(upper[i]));
      if (count > bound)
        return invalidArgument(who(), ": output ", i, " of shape ", dimsToString(actual[i]), " exceeds its upper bound ",
                               dimsToString(upper[i]));
      size_t bytes = static_cast<size_t>(count) * dataTypeSize(ctx.outputs[i].dtype);
      KILN_ASSIGN_OR_RETURN(void* dst, ctx.allocateOutput(i, actual[i]));
      if (bytes == 0) continue;
      if (!dst) return internalError(who(), ": no memory for output ", i);
      if (deviceOps_) {
        KILN_RETURN_IF_ERROR(deviceOps_->copy(dst, outPtrs[i], bytes, false, stream));
      } else {
        std::memcpy(dst, outPtrs[i], bytes);
      }
    }
    return Status::ok();  // the device scratch is released after the copies, in stream order
  }

  std::shared_ptr<ir::PluginInstance> prototype_;
  size_t nbInputs_;
  bool host_;
  int32_t tactic_;
  PluginHandlesFactory handles_;
  bool cudnn_, cublas_;
  std::optional<size_t> storedWorkspace_;
  PluginDeviceOps const* deviceOps_ = nullptr;
};

/// True when the node's negotiated types (in_types/out_types) are the ones given.
inline bool pluginTypesMatch(ir::Node const& n, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
  auto ins = n.attrs.getInts("in_types");
  auto outs = n.attrs.getInts("out_types");
  size_t nIn = pluginRegularInputs(n);
  if (!ins.empty() && ins.size() == nIn)
    for (size_t i = 0; i < nIn && i < in.size(); ++i)
      if (static_cast<int64_t>(in[i].dtype) != ins[i]) return false;
  if (!outs.empty() && outs.size() == out.size())
    for (size_t i = 0; i < out.size(); ++i)
      if (static_cast<int64_t>(out[i].dtype) != outs[i]) return false;
  return true;
}

}  // namespace kiln::backends
