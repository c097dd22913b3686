// kilnexec's performance summary, profile tables, output dumps and JSON exports.
#include "report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "options.h"

namespace kilnexec {
namespace {

// JSON numbers cannot be NaN or infinite: those become strings, as Python's json module would not accept them.
nlohmann::json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

bool endsWith(std::string const& s, char const* ext) {
  std::string const e = ext;
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

}  // namespace

PerformanceSummary summarize(BenchmarkResult const& result, std::vector<double> const& percentiles) {
  PerformanceSummary s;
  std::vector<double> latency, enqueue, h2d, compute, d2h;
  for (auto const& t : result.times) {
    latency.push_back(t.latencyMs());
    enqueue.push_back(t.enqueueMs());
    h2d.push_back(t.h2dMs());
    compute.push_back(t.computeMs());
    d2h.push_back(t.d2hMs());
  }
  s.inferences = result.times.size();
  s.latency = computeStats(latency, percentiles);
  s.enqueue = computeStats(enqueue, percentiles);
  s.h2d = computeStats(h2d, percentiles);
  s.compute = computeStats(compute, percentiles);
  s.d2h = computeStats(d2h, percentiles);
  s.walltimeS = result.walltimeMs / 1000.0;
  s.throughputQps = result.walltimeMs > 0 ? static_cast<double>(s.inferences) / s.walltimeS : 0;
  s.totalComputeMs = s.compute.sum;
  s.gpu = result.gpu;
  return s;
}

std::string formatPerformanceSummary(PerformanceSummary const& s) {
  char buf[160];
  std::string out = "[I] === Performance summary ===\n";
  std::snprintf(buf, sizeof(buf), "[I] Throughput: %.5g qps\n", s.throughputQps);
  out += buf;
  out += "[I] Latency: " + formatStats(s.latency) + "\n";
  out += "[I] Enqueue Time: " + formatStats(s.enqueue) + "\n";
  out += "[I] H2D Latency: " + formatStats(s.h2d) + "\n";
  out += std::string(s.gpu ? "[I] GPU Compute Time: " : "[I] Compute Time: ") + formatStats(s.compute) + "\n";
  out += "[I] D2H Latency: " + formatStats(s.d2h) + "\n";
  std::snprintf(buf, sizeof(buf), "[I] Total Host Walltime: %.5g s\n", s.walltimeS);
  out += buf;
  std::snprintf(buf, sizeof(buf), "[I] Total %sCompute Time: %.5g s\n", s.gpu ? "GPU " : "", s.totalComputeMs / 1000.0);
  out += buf;
  std::snprintf(buf, sizeof(buf), "[I] Coefficient of variation: latency %.3g %%, compute %.3g %% (%zu inferences)\n",
                s.latency.cvPercent, s.compute.cvPercent, s.inferences);
  out += buf;
  if (s.compute.cvPercent > 10.0)
    out += "[W] The compute time varies by more than 10 %: the machine may be busy; results may be unstable.\n";
  if (s.gpu)
    out +=
        "[I] Explanations: Throughput is inferences per second of host walltime (over every stream); Latency is H2D + "
        "GPU Compute + D2H of one inference; Enqueue Time is the host time of the enqueue call (asynchronous: the GPU "
        "computes after it returns); H2D, GPU Compute and D2H are measured on the stream with CUDA events.\n";
  else
    out +=
        "[I] Explanations: Throughput is inferences per second of host walltime; Latency is H2D + Compute + D2H of "
        "one inference; Enqueue Time is the host time of the enqueue call (the CPU backends compute inside it, so it "
        "equals Compute Time); H2D and D2H are 0 on the CPU backends, which read and write host memory in place.\n";
  return out;
}

std::vector<LayerTime> layerTimes(LayerProfiler const& profiler) {
  std::vector<LayerTime> out;
  double sum = 0;
  size_t const runs = std::max<size_t>(1, profiler.runs());
  for (auto const& l : profiler.layers()) {
    LayerTime t;
    t.name = l.name;
    for (double v : l.times) t.totalMs += v;
    t.averageMs = t.totalMs / static_cast<double>(runs);
    t.medianMs = computeStats(l.times, {}).median;
    sum += t.totalMs;
    out.push_back(t);
  }
  for (auto& t : out) t.percent = sum > 0 ? 100.0 * t.totalMs / sum : 0;
  return out;
}

std::string formatProfileTable(LayerProfiler const& profiler) {
  std::vector<LayerTime> const times = layerTimes(profiler);
  size_t width = 5;
  for (auto const& t : times) width = std::max(width, t.name.size());
  width = std::min<size_t>(width, 60);
  char buf[256];
  std::string out = "[I] === Profile (" + std::to_string(profiler.runs()) + " runs) ===\n";
  std::snprintf(buf, sizeof(buf), "[I] %-*s %12s %12s %12s %8s\n", static_cast<int>(width), "Layer", "Time (ms)",
                "Avg. (ms)", "Median (ms)", "Time %");
  out += buf;
  double total = 0, avg = 0, med = 0;
  for (auto const& t : times) {
    std::snprintf(buf, sizeof(buf), "[I] %-*.*s %12.4f %12.4f %12.4f %8.1f\n", static_cast<int>(width),
                  static_cast<int>(width), t.name.c_str(), t.totalMs, t.averageMs, t.medianMs, t.percent);
    out += buf;
    total += t.totalMs;
    avg += t.averageMs;
    med += t.medianMs;
  }
  std::snprintf(buf, sizeof(buf), "[I] %-*s %12.4f %12.4f %12.4f %8.1f\n", static_cast<int>(width), "Total", total, avg,
                med, 100.0);
  out += buf;
  return out;
}

std::string timesJson(BenchmarkResult const& result) {
  nlohmann::json j = nlohmann::json::array();
  for (auto const& t : result.times)
    j.push_back({{"startEnqMs", t.enqStart},
                 {"endEnqMs", t.enqEnd},
                 {"startH2dMs", t.h2dStart},
                 {"endH2dMs", t.h2dEnd},
                 {"startComputeMs", t.computeStart},
                 {"endComputeMs", t.computeEnd},
                 {"startD2hMs", t.d2hStart},
                 {"endD2hMs", t.d2hEnd},
                 {"h2dMs", t.h2dMs()},
                 {"computeMs", t.computeMs()},
                 {"d2hMs", t.d2hMs()},
                 {"latencyMs", t.latencyMs()}});
  return j.dump(2) + "\n";
}

std::string profileJson(LayerProfiler const& profiler) {
  nlohmann::json j = nlohmann::json::array();
  j.push_back({{"count", profiler.runs()}});
  for (auto const& t : layerTimes(profiler))
    j.push_back({{"name", t.name},
                 {"timeMs", t.totalMs},
                 {"averageMs", t.averageMs},
                 {"medianMs", t.medianMs},
                 {"percentage", t.percent}});
  return j.dump(2) + "\n";
}

std::string outputsJson(std::vector<Tensor> const& outputs) {
  nlohmann::json j = nlohmann::json::array();
  for (auto const& t : outputs) {
    nlohmann::json values = nlohmann::json::array();
    for (double v : toDoubles(t)) values.push_back(number(v));
    j.push_back({{"name", t.name}, {"dimensions", formatDims(t.dims)}, {"type", typeName(t.type)}, {"values", values}});
  }
  return j.dump(2) + "\n";
}

std::string formatOutputs(std::vector<Tensor> const& outputs, size_t maxValues) {
  std::string out;
  char buf[64];
  for (auto const& t : outputs) {
    std::vector<double> const v = toDoubles(t);
    out += "[I] Output '" + t.name + "' " + typeName(t.type) + " " + formatDims(t.dims) + ":";
    for (size_t i = 0; i < v.size() && i < maxValues; ++i) {
      std::snprintf(buf, sizeof(buf), " %.6g", v[i]);
      out += buf;
    }
    if (v.size() > maxValues) out += " ... (" + std::to_string(v.size() - maxValues) + " more)";
    out += "\n";
  }
  return out;
}

bool exportOutputs(std::string const& path, std::vector<Tensor> const& outputs, std::string& error) {
  if (endsWith(path, ".npz")) {
    auto const bytes = writeNpz(outputs);
    return writeFile(path, bytes.data(), bytes.size(), error);
  }
  if (endsWith(path, ".npy")) {
    if (outputs.size() != 1) {
      error = "--exportOutput=" + path + ": a .npy file holds one array but the engine has " +
              std::to_string(outputs.size()) + " outputs (use .npz or .json)";
      return false;
    }
    auto const bytes = writeNpy(outputs[0]);
    return writeFile(path, bytes.data(), bytes.size(), error);
  }
  if (endsWith(path, ".bin") || endsWith(path, ".raw")) {
    std::vector<uint8_t> bytes;
    for (auto const& t : outputs) bytes.insert(bytes.end(), t.bytes.begin(), t.bytes.end());
    return writeFile(path, bytes.data(), bytes.size(), error);
  }
  std::string const json = outputsJson(outputs);
  return writeFile(path, json.data(), json.size(), error);
}

}  // namespace kilnexec
