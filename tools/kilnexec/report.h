// kilnexec's reports: trtexec's performance summary, the layer profile table, output dumps, and the JSON
// exports (--exportTimes, --exportProfile, --exportOutput) in trtexec's formats.
#pragma once

#include <string>
#include <vector>

#include "inference.h"
#include "stats.h"
#include "tensor_io.h"

namespace kilnexec {

/// The numbers of trtexec's "Performance summary".
struct PerformanceSummary {
  size_t inferences = 0;
  double throughputQps = 0;
  Stats latency, enqueue, h2d, compute, d2h;
  double walltimeS = 0;
  double totalComputeMs = 0;
  bool gpu = false;  ///< GPU times (CUDA events): "GPU Compute Time", real H2D/D2H and an asynchronous enqueue
};

/// Summarizes the timed runs of `result`.
PerformanceSummary summarize(BenchmarkResult const& result, std::vector<double> const& percentiles);

/// The summary as trtexec prints it (Throughput, Latency, Enqueue Time, H2D Latency, Compute Time (GPU
/// Compute Time on the GPU), D2H Latency, Total Host Walltime, Total Compute Time, coefficient of variation), one "[I]
/// " line each.
std::string formatPerformanceSummary(PerformanceSummary const& s);

/// Per-layer time of a profile: total over runs, average and median per run, share of the sum.
struct LayerTime {
  std::string name;
  double totalMs = 0, averageMs = 0, medianMs = 0, percent = 0;
};
std::vector<LayerTime> layerTimes(LayerProfiler const& profiler);

/// The --dumpProfile table.
std::string formatProfileTable(LayerProfiler const& profiler);

/// --exportTimes JSON: one object per timed inference (trtexec's keys: startEnqMs, endEnqMs, startH2dMs, ...,
/// latencyMs).
std::string timesJson(BenchmarkResult const& result);

/// --exportProfile JSON: [{"count": runs}, {"name", "timeMs", "averageMs", "medianMs", "percentage"}, ...].
std::string profileJson(LayerProfiler const& profiler);

/// --exportOutput JSON: [{"name", "dimensions" ("1x10"), "type", "values": [...]}, ...].
std::string outputsJson(std::vector<Tensor> const& outputs);

/// The --dumpOutput text: each output's name, shape and values (at most `maxValues` of them).
std::string formatOutputs(std::vector<Tensor> const& outputs, size_t maxValues = 64);

/// Writes outputs by the file's extension: .json (trtexec's format), .npz, .npy (one output only), .bin/.raw
/// (the outputs' bytes one after another, in I/O order). Other extensions get JSON.
bool exportOutputs(std::string const& path, std::vector<Tensor> const& outputs, std::string& error);

}  // namespace kilnexec
