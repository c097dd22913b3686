// Running engines for kilnexec: input preparation (loaded or generated), an execution context with its I/O
// bound, single inferences, the timed benchmark loop and the per-layer profiler.
#pragma once

#include <kiln/kiln_runtime.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "options.h"
#include "tensor_io.h"

namespace kilnexec {

/// Writes `value` into element `i` of `t`, converted to its type (round to nearest even for fp16/bf16,
/// saturating for integers).
void setElementFromDouble(Tensor& t, size_t i, double value);

/// The inputs of `engine` for one run: the --loadInputs files, else deterministic pseudo-random values
/// (floats in [-1, 1), integers in [0, 4), booleans 0/1). Shapes come from --shapes, else the loaded array,
/// else the engine's static shape, else profile 0's opt shape. False with `error` on a bad file or shape.
bool prepareInputs(kiln::ICudaEngine const& engine, Options const& options, std::vector<Tensor>& inputs,
                   std::string& error);

/// Where a Runner's buffers live and what one inference moves.
struct RunMode {
  bool gpu = false;       ///< device buffers (cudaMalloc), a stream of its own, CUDA events (--backend=cuda)
  bool transfers = true;  ///< GPU only: copy inputs in and outputs out around each inference (!--noDataTransfers)
};

/// One timed inference, trtexec's fields, in milliseconds since the benchmark started. The CPU backends read
/// and write host memory in place, so H2D and D2H are empty intervals at the compute's ends.
struct InferenceTime {
  double enqStart = 0, enqEnd = 0;
  double h2dStart = 0, h2dEnd = 0;
  double computeStart = 0, computeEnd = 0;
  double d2hStart = 0, d2hEnd = 0;
  double enqueueMs() const { return enqEnd - enqStart; }
  double h2dMs() const { return h2dEnd - h2dStart; }
  double computeMs() const { return computeEnd - computeStart; }
  double d2hMs() const { return d2hEnd - d2hStart; }
  double latencyMs() const { return d2hEnd - h2dStart; }
};

/// An execution context with every I/O tensor bound: host buffers it owns on the CPU backends; on the GPU,
/// device buffers (with host copies of the inputs and outputs) and a stream of its own. Outputs whose size is
/// only known while running get an IOutputAllocator (device memory on the GPU).
class Runner {
 public:
  Runner();
  ~Runner();
  Runner(Runner const&) = delete;
  Runner& operator=(Runner const&) = delete;

  /// Creates the context of `engine`, sets the input shapes and copies `inputs` into its buffers (uploads
  /// them on the GPU, so that they are in place even without per-inference transfers).
  bool setup(kiln::ICudaEngine& engine, std::vector<Tensor> const& inputs, std::string& error, RunMode mode = {});
  /// Runs one inference to completion (CPU: enqueueV3 on the null stream; GPU: H2D, enqueueV3 and D2H on the
  /// runner's stream, then waits for it).
  bool infer(std::string& error);
  /// GPU: puts one inference on the stream (H2D unless --noDataTransfers, the enqueue or the captured graph,
  /// D2H) with events around each part and returns, keeping the host time of the enqueue call measured from
  /// `origin` for finish(). CPU: runs it, as infer() does.
  bool launch(std::chrono::steady_clock::time_point origin, std::string& error);
  /// Waits for the inference launch() started and fills `t` (GPU times from the events, relative to the
  /// event recordOrigin() recorded; CPU: host times, H2D and D2H empty).
  bool finish(InferenceTime& t, std::string& error);
  /// GPU: records the origin event of finish()'s times on this runner's stream and waits for it.
  bool recordOrigin(std::string& error);
  /// GPU: captures one enqueueV3 into a CUDA graph, which launch() then replays. False with `error` when the
  /// capture fails (launch() keeps using enqueueV3).
  bool captureGraph(std::string& error);
  /// Goes back to enqueueV3 (when another runner's capture failed).
  void dropGraph();
  /// The outputs of the last inference, in I/O order, with their final shapes (GPU: copied back to the host
  /// first, whatever --noDataTransfers says).
  std::vector<Tensor> outputs();
  /// The context (after setup()).
  kiln::IExecutionContext& context() { return *context_; }
  bool gpu() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<kiln::IExecutionContext> context_;
};

/// IProfiler that accumulates per-layer times over runs, keeping the order layers first appear in.
class LayerProfiler : public kiln::IProfiler {
 public:
  void reportLayerTime(char const* layerName, float ms) noexcept override;
  struct Layer {
    std::string name;
    std::vector<double> times;  ///< one per profiled run
  };
  std::vector<Layer> const& layers() const { return layers_; }
  /// Number of runs profiled (the most times any layer reported).
  size_t runs() const;

 private:
  std::vector<Layer> layers_;
  std::map<std::string, size_t> index_;
};

/// What the benchmark measured.
struct BenchmarkResult {
  std::vector<InferenceTime> times;
  double walltimeMs = 0;  ///< from the start of the timed phase to the last inference's end
  int32_t warmUpRuns = 0;
  double warmUpMs = 0;
  LayerProfiler profiler;  ///< filled when profiling was asked for
  bool profiled = false;
  bool gpu = false;                   ///< the runners ran on the GPU (times from CUDA events)
  int32_t streams = 1;                ///< runners that ran concurrently (--infStreams)
  bool cudaGraph = false;             ///< the timed runs replayed a CUDA graph
  std::vector<std::string> warnings;  ///< for the user (e.g. a CUDA graph capture that failed)
};

/// Warms up for --warmUp ms, then runs until --iterations inferences and --duration seconds are both
/// reached; profiles layers during those runs or, with --separateProfileRun, in runs of their own. `trace`
/// receives the --avgRuns averages (shown with --verbose). With several runners (GPU, --infStreams) each
/// round launches one inference on every runner's stream, then waits for all of them; every inference
/// counts. With --useCudaGraph (GPU) each runner captures its enqueue after the warm-up (a failed capture
/// falls back to enqueueV3 with a warning); profiling then happens in runs of its own, without the graph.
bool benchmark(std::vector<Runner*> const& runners, Options const& options, bool profile, BenchmarkResult& result,
               std::string& error, std::function<void(std::string const&)> const& trace);

/// benchmark() with one runner.
bool benchmark(Runner& runner, Options const& options, bool profile, BenchmarkResult& result, std::string& error,
               std::function<void(std::string const&)> const& trace);

}  // namespace kilnexec
