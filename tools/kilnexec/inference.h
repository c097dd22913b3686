// Running engines for kilnexec: input preparation (loaded or generated), an execution context with its I/O
// bound, single inferences, the timed benchmark loop and the per-layer profiler.
#pragma once

#include <kiln/kiln_runtime.h>

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

/// An execution context with every I/O tensor bound to host buffers it owns. Outputs whose size is only known
/// while running get an IOutputAllocator.
class Runner {
 public:
  Runner();
  ~Runner();
  Runner(Runner const&) = delete;
  Runner& operator=(Runner const&) = delete;

  /// Creates the context of `engine`, sets the input shapes and copies `inputs` into its buffers.
  bool setup(kiln::ICudaEngine& engine, std::vector<Tensor> const& inputs, std::string& error);
  /// Runs one inference (enqueueV3 on the null stream; the CPU backends finish before it returns).
  bool infer(std::string& error);
  /// The outputs of the last inference, in I/O order, with their final shapes.
  std::vector<Tensor> outputs() const;
  /// The context (after setup()).
  kiln::IExecutionContext& context() { return *context_; }

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

/// What the benchmark measured.
struct BenchmarkResult {
  std::vector<InferenceTime> times;
  double walltimeMs = 0;  ///< from the start of the timed phase to the last inference's end
  int32_t warmUpRuns = 0;
  double warmUpMs = 0;
  LayerProfiler profiler;  ///< filled when profiling was asked for
  bool profiled = false;
};

/// Warms up for --warmUp ms, then runs until --iterations inferences and --duration seconds are both
/// reached; profiles layers during those runs or, with --separateProfileRun, in runs of their own. `trace`
/// receives the --avgRuns averages (shown with --verbose).
bool benchmark(Runner& runner, Options const& options, bool profile, BenchmarkResult& result, std::string& error,
               std::function<void(std::string const&)> const& trace);

}  // namespace kilnexec
