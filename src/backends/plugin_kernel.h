// The kernel of plugin nodes, shared by the reference backend (host execution through
// kiln::IPluginHostExecution) and the CUDA backend (the plugin's enqueue on the launch's stream): the engine's
// plugin instance sizes the workspace; each execution context runs its own copy (attachToContext), kept as the
// kernel's per-context state. Header-only, because libkiln_cuda carries no copy of the backends component.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "backends/backend.h"
#include "ir/plugin.h"

namespace kiln::backends {

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

  size_t workspaceSize(std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) const override {
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
    for (auto const& t : ctx.outputs) {
      out.push_back(desc(t.dtype, t.shape));
      outPtrs.push_back(t.data);
    }
    void* stream = ctx.stream ? ctx.stream->native() : nullptr;
    if (state->handles)
      KILN_RETURN_IF_ERROR(state->handles->setStream(stream).withContext(
          strCat(prototype_->describe(), " of layer '", prototype_->layer(), "'")));
    return state->plugin->execute(in, out, inPtrs.data(), outPtrs.data(), ctx.workspaceSize ? ctx.workspace : nullptr,
                                  host_, stream);
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

  std::shared_ptr<ir::PluginInstance> prototype_;
  size_t nbInputs_;
  bool host_;
  int32_t tactic_;
  PluginHandlesFactory handles_;
  bool cudnn_, cublas_;
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
