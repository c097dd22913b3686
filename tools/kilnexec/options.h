// kilnexec's command line: trtexec's flags with trtexec's meanings and defaults, plus Kiln's own (--backend,
// --threads, --inspect, --check, --check-layers, --atol/--rtol, --report). Parsing is pure (no I/O).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kilnexec {

/// Exit codes: success, a model/plan/run that failed, and a command line that is wrong.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

/// Where the engine runs: kCuda on the GPU (device memory, streams, events), kCpu and kReference on the host.
enum class Backend { kCpu, kReference, kCuda };

/// One `name:AxBxC` entry of --shapes/--minShapes/--optShapes/--maxShapes.
struct ShapeSpec {
  std::string name;
  std::vector<int64_t> dims;
};

/// Everything the command line can say. Defaults are trtexec's.
struct Options {
  // Model and plan.
  std::string onnx;        ///< --onnx
  std::string loadEngine;  ///< --loadEngine
  std::string saveEngine;  ///< --saveEngine
  std::string inspect;     ///< --inspect=PLAN (Kiln)

  // Build.
  bool fp16 = false, bf16 = false, int8 = false, best = false, stronglyTyped = false;
  std::vector<ShapeSpec> shapes, minShapes, optShapes, maxShapes;
  std::vector<std::pair<std::string, int64_t>> memPoolSizes;  ///< pool name -> bytes
  int32_t builderOptimizationLevel = 3;
  std::string timingCacheFile;
  std::vector<std::string> staticPlugins, dynamicPlugins;
  std::string profilingVerbosity;  ///< "" (default), "layer_names_only", "detailed" or "none"
  /// --tacticSources edits, in order: (true: +, false: -) and the kiln::TacticSource value.
  std::vector<std::pair<bool, int32_t>> tacticSources;

  // Inference.
  int32_t iterations = 10;  ///< at least this many timed inferences
  double durationS = 3.0;   ///< and run for at least this many seconds
  double warmUpMs = 200.0;  ///< warm up for this long before timing
  int32_t avgRuns = 10;     ///< runs averaged per line of the verbose trace
  std::vector<double> percentiles{90, 95, 99};
  bool useCudaGraph = false, noDataTransfers = false, separateProfileRun = false, skipInference = false;
  int32_t infStreams = 1;
  int32_t device = 0;
  bool deviceGiven = false;
  std::vector<std::pair<std::string, std::string>> loadInputs;  ///< tensor name ("" = by array name) -> file

  // Reporting.
  bool dumpProfile = false, dumpLayerInfo = false, dumpOutput = false, verbose = false;
  std::string exportProfile, exportTimes, exportLayerInfo, exportOutput, report;

  // Kiln.
  Backend backend = Backend::kCpu;
  bool backendGiven = false;
  int32_t threads = 0;  ///< 0: every hardware thread
  bool check = false, checkLayers = false;
  double atol = 1e-5, rtol = 1e-5;

  bool help = false;
};

/// What parseCommandLine() found: options, or a usage error (message, exit code kExitUsage).
struct ParseResult {
  Options options;
  bool ok = true;
  std::string error;
};

/// Parses argv[1..] (trtexec syntax: `--flag` and `--flag=value`). Unknown flags, bad values and
/// contradictory combinations give ok == false and a message naming the flag.
ParseResult parseCommandLine(std::vector<std::string> const& args);

/// One line per accepted flag that this build or options.backend cannot act on, saying so and what happens
/// instead: the GPU flags (--useCudaGraph, --noDataTransfers, --infStreams, --device, --timingCacheFile) on the
/// cpu and reference backends, and INT8, plugin libraries and DLA pools everywhere.
std::vector<std::string> unsupportedFlagNotes(Options const& options);

/// The --help text.
std::string usageText();

/// Parses `1x3x224x224` (also `1,3,224,224`); false on anything else.
bool parseDims(std::string const& text, std::vector<int64_t>& dims);

/// "1x3x224x224".
std::string formatDims(std::vector<int64_t> const& dims);

}  // namespace kilnexec
