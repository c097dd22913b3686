// The backend interface: tactics (named kernels for one op, registered by the file that implements them),
// the kernel life cycle supports -> workspaceSize -> create/prepare -> enqueue, and streams.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "ir/graph.h"
#include "ir/shape_inference.h"

namespace kiln::backends {

using ir::TensorInfo;

/// A tensor as a kernel sees it: memory (host or device) with type and shape, row-major.
struct TensorView {
  void* data = nullptr;
  DataType dtype = DataType::kFLOAT;
  Dims shape{};
  int64_t count() const { return volume(shape); }
  template <typename T>
  T* as() const { return static_cast<T*>(data); }
};

/// An ordered queue of work on a device. The CPU stream runs work inline.
class Stream {
 public:
  virtual ~Stream() = default;
  virtual DeviceType device() const = 0;
  /// Native handle (cudaStream_t on the GPU; null on the CPU).
  virtual void* native() const { return nullptr; }
  virtual Status synchronize() { return Status::ok(); }
};

/// Mutable state one execution context keeps for one kernel (a plugin layer's per-context plugin copy), made by
/// Kernel::createContextState and handed back with every launch of that context (LaunchContext::state).
class KernelContextState {
 public:
  virtual ~KernelContextState() = default;
};

/// What an execution context offers the kernels' per-context state.
struct ContextResources {
  IGpuAllocator* allocator = nullptr;  // the runtime's allocator (null: the backend's own memory)
  IErrorRecorder* recorder = nullptr;  // the context's error recorder
};

/// Everything one kernel launch gets. Inputs absent from the node have data == nullptr and nbDims == -1.
struct LaunchContext {
  Stream* stream = nullptr;
  std::vector<TensorView> inputs;
  std::vector<TensorView> outputs;
  void* workspace = nullptr;
  size_t workspaceSize = 0;
  ThreadPool* pool = nullptr;  // CPU threads the kernel may use (null: run on the calling thread)
  /// Set for nodes with data-dependent output shapes (NonZero, NMS, control flow): such outputs come with
  /// data == nullptr and unknown dims; the kernel computes the shape, then asks here for the memory
  /// (returns the address to write, or why there is none). Null for nodes whose output shapes are known.
  std::function<Result<void*>(size_t output, Dims const& shape)> allocateOutput;
  /// This context's state of the kernel (Kernel::createContextState); null for stateless kernels.
  KernelContextState* state = nullptr;
};

/// A kernel instance for one node of one engine: created (and its weights prepared) once per engine,
/// immutable after that, safe to enqueue from many contexts at once.
class Kernel {
 public:
  virtual ~Kernel() = default;
  /// Scratch bytes for these shapes.
  virtual size_t workspaceSize(std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) const {
    return 0;
  }
  /// Runs the node on ctx.stream. Shapes come with every call (they change with the context's input shapes).
  virtual Status enqueue(LaunchContext const& ctx) const = 0;
  /// The state an execution context keeps for this kernel, made once per context before its first launch
  /// (may be called from several threads at once); null (the default) for kernels that keep none.
  virtual Result<std::unique_ptr<KernelContextState>> createContextState(ContextResources const& resources) const {
    return std::unique_ptr<KernelContextState>();
  }
};

/// The memory layout of a node's 4-D activations (attribute `format`; kLINEAR when absent).
inline TensorFormat nodeFormat(ir::Node const& node) {
  return static_cast<TensorFormat>(node.attrs.getInt("format", static_cast<int64_t>(TensorFormat::kLINEAR)));
}

/// For element-wise tactics (whose result at each element depends only on the inputs at the same position): true
/// when the node is kLINEAR, or kHWC with every present input of the output's shape or of one element, so that the
/// flat element order is the same for all of them whatever the layout.
inline bool elementWiseLayoutOk(ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
  TensorFormat f = nodeFormat(node);
  if (f == TensorFormat::kLINEAR) return true;
  if (f != TensorFormat::kHWC || out.size() != 1 || !dimsKnown(out[0].shape)) return false;
  for (auto const& t : in) {
    if (t.shape.nbDims < 0) continue;  // absent
    if (!dimsKnown(t.shape)) return false;
    if (!dimsEqual(t.shape, out[0].shape) && volume(t.shape) != 1) return false;
  }
  return true;
}

/// A registered way to run an op ("<op>_<impl>_<variant>", e.g. "conv_reference_direct").
struct Tactic {
  std::string name;
  ir::OpType op = ir::OpType::kIdentity;
  DeviceType device = DeviceType::kCPU;
  TacticSource source = TacticSource::kREFERENCE;
  int priority = 0;  // higher is tried first by the level-0 heuristic
  /// True when the tactic reads the node attribute `format` (ops.def): only such tactics are candidates for
  /// nodes whose activations are in another layout than kLINEAR.
  bool formatAware = false;
  /// The input whose memory the builder may give output 0 (-1: none), when the node is that input's last
  /// reader, neither is a network I/O and both have one size and recorded format. A tactic sets it only where
  /// its kernel is correct with the output at the input's address (it reads each element of that input before
  /// or as it writes the output elements that depend on it).
  int32_t outputMayReuseInput = -1;
  /// True when this tactic can run `node` with these input/output types and (possibly -1) shapes.
  std::function<bool(ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out)>
      supports;
  /// Builds the kernel: reads attributes, packs constant weights (node.inputs' producers are Constant
  /// nodes when the weights are constant). Errors name the node.
  std::function<Result<std::unique_ptr<Kernel>>(ir::Node const& node)> create;
};

/// The process-wide tactic registry.
class TacticRegistry {
 public:
  static TacticRegistry& instance();
  /// Adds a tactic (a second tactic with the same name replaces nothing and is reported at startup).
  bool add(Tactic t);
  Tactic const* find(std::string const& name) const;
  /// Tactics that support the node on `device` from the allowed `sources` (bit mask of TacticSource),
  /// highest priority first.
  std::vector<Tactic const*> candidates(ir::Node const& node, std::vector<TensorInfo> const& in,
                                        std::vector<TensorInfo> const& out, DeviceType device,
                                        TacticSources sources) const;
  std::vector<Tactic const*> all() const;

 private:
  std::vector<std::unique_ptr<Tactic>> tactics_;
};

/// `KILN_REGISTER_TACTIC(makeTacticFunction)`: registers the Tactic returned by a function at load time.
#define KILN_REGISTER_TACTIC(MAKE) \
  static bool const KILN_CONCAT(kiln_tactic_registered_, __LINE__) = ::kiln::backends::TacticRegistry::instance().add(MAKE())

/// The stream of the CPU backends (work runs inline on the calling thread).
class CpuStream final : public Stream {
 public:
  DeviceType device() const override { return DeviceType::kCPU; }
};

/// Runs one node with the reference tactics on host tensors: used for host evaluation of shape tensors,
/// constant folding and tests. `out` must come allocated with dtype and shape.
Status evaluateOnHost(ir::Node const& node, std::vector<HostTensor const*> const& in, std::vector<HostTensor>& out);
/// Runs one node with the reference tactics on host tensors whose outputs may have data-dependent shapes:
/// outputs whose `outInfo` shape is fully known are allocated up front; the others are allocated when the
/// kernel calls LaunchContext::allocateOutput. Returns the outputs (an error if the kernel left one unset).
Result<std::vector<HostTensor>> evaluateOnHostDynamic(ir::Node const& node, std::vector<HostTensor const*> const& in,
                                                      std::vector<ir::TensorInfo> const& outInfo);
/// evaluateOnHost as an ir::HostEvaluator.
ir::HostEvaluator referenceEvaluator();

}  // namespace kiln::backends
