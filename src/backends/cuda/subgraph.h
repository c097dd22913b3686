// Running an If/Loop subgraph on the device: a CUDA tactic and kernel per node chosen once (the first that
// supports it, as the level-0 heuristic does), the subgraph's constants uploaded once, and at run time shape
// inference (with libkiln's host evaluator), stream-ordered buffers and the nodes enqueued in order.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/cuda/cuda_util.h"
#include "backends/device.h"

namespace kiln::cuda {

/// Device memory from the backend's stream-ordered pool, released on the stream when the last holder drops it.
class PoolBuffer {
 public:
  PoolBuffer(backends::DeviceBackend* dev, void* stream, void* data) : dev_(dev), stream_(stream), data_(data) {}
  ~PoolBuffer() { dev_->release(data_, stream_); }
  PoolBuffer(PoolBuffer const&) = delete;
  PoolBuffer& operator=(PoolBuffer const&) = delete;
  void* data() const { return data_; }

 private:
  backends::DeviceBackend* dev_;
  void* stream_;
  void* data_;
};

/// A tensor in device memory while a subgraph runs. Written once, then only read: carried values, loop items and
/// outputs share buffers by reference instead of copying them.
struct DeviceValue {
  void* data = nullptr;
  DataType dtype = DataType::kFLOAT;
  Dims shape{};
  std::shared_ptr<PoolBuffer> owner;  // null: memory held elsewhere (a kernel input, a constant, an output)
  std::optional<HostTensor> host;     // the contents, when shape inference knows them on the host
  size_t bytes() const { return static_cast<size_t>(volume(shape)) * dataTypeSize(dtype); }
};

/// What one launch of a control-flow kernel works with.
struct DeviceEnv {
  backends::DeviceBackend* dev = nullptr;
  backends::Stream* stream = nullptr;  // a DeviceStream
  void* native = nullptr;              // its cudaStream_t
  ThreadPool* pool = nullptr;
  ir::HostEvaluator const* eval = nullptr;  // libkiln's reference evaluator (null: shape tensors stay unknown)
  std::string what;                         // the If/Loop layer, for messages

  /// The environment of `ctx`, or an error naming `what` when ctx does not run on a device stream.
  static Result<DeviceEnv> of(backends::LaunchContext const& ctx, std::string const& what);
  /// Fails, naming the layer and `why`, when the stream is capturing a CUDA graph (a synchronizing step is next).
  Status refuseCapture(std::string const& why) const;
  /// A new pool buffer of `bytes` (a null buffer for 0 bytes); refuses sizes over the run-time limit.
  Result<DeviceValue> allocate(DataType dtype, Dims const& shape, char const* what) const;
  /// Reads `v` (small) to the host: a synchronizing copy, refused inside a CUDA graph capture.
  Result<HostTensor> download(DeviceValue const& v, std::string const& why) const;
};

/// Per-execution-context state of a subgraph's kernels (plugin copies, nested control flow), by node id.
struct SubgraphState {
  std::vector<std::unique_ptr<backends::KernelContextState>> nodes;
};

/// One subgraph, ready to run on the device.
class DeviceSubgraph {
 public:
  /// Checks that every node of `g` (recursively) has a CUDA tactic, for its inputs' declared types and ranks;
  /// the error names the first node without one. Used by the If/Loop tactics' supports().
  static Status check(ir::Graph const& g, std::string const& where);
  /// Chooses each node's tactic as check() does, creates the kernels and uploads the constants. Errors name
  /// `where` (the layer and the branch or body).
  static Result<std::unique_ptr<DeviceSubgraph>> create(ir::Graph const& g, std::string where);
  ~DeviceSubgraph();

  /// The state each execution context keeps for this subgraph's kernels.
  Result<std::unique_ptr<SubgraphState>> createState(backends::ContextResources const& resources) const;
  /// Runs the subgraph on env's stream. `inputs` follow the graph inputs (their `host` contents, when given,
  /// feed shape inference); `dest[i]`, when its data is set, is memory the producer of output i may write into
  /// directly when the shapes agree. Returns the outputs (in `dest` memory or in buffers they hold).
  Result<std::vector<DeviceValue>> run(DeviceEnv const& env, SubgraphState* state,
                                       std::vector<DeviceValue> const& inputs,
                                       std::vector<backends::TensorView> const& dest) const;
  size_t numInputs() const;
  size_t numOutputs() const;

 private:
  DeviceSubgraph() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Deepest nesting of control-flow nodes (as in shape inference and the reference kernels).
constexpr int kMaxControlFlowDepth = 16;
/// 1 + the deepest nesting of control flow inside `n`'s subgraphs.
int controlFlowDepth(ir::Node const& n);

}  // namespace kiln::cuda
