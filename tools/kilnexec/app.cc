// kilnexec's driver: inspect, or build/load, then run, benchmark, report, check, in that order.
#include "app.h"

#include <kiln/kiln.h>
#include <nlohmann/json.hpp>

#include <dlfcn.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include "check.h"
#include "device.h"
#include "engine_build.h"
#include "html_report.h"
#include "inference.h"
#include "inspect.h"
#include "progress.h"
#include "report.h"

namespace kilnexec {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string backendName(Backend b) {
  switch (b) {
    case Backend::kCpu:
      return "cpu";
    case Backend::kReference:
      return "reference";
    case Backend::kCuda:
      return "cuda";
  }
  return "?";
}

std::string dimsOf(kiln::Dims const& d) {
  std::vector<int64_t> v(d.d, d.d + std::max(d.nbDims, 0));
  return formatDims(v);
}

// Runs `plan` once on `inputs` and returns the outputs (for --check's reference side).
bool runOnce(std::vector<uint8_t> const& plan, kiln::ILogger& logger, int32_t threads,
             std::vector<Tensor> const& inputs, std::vector<Tensor>& outputs, std::string& error) {
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  if (!runtime) {
    error = "createInferRuntime failed";
    return false;
  }
  if (threads > 0) runtime->setMaxThreads(threads);
  std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan.data(), plan.size()));
  if (!engine) {
    error = "the reference plan does not load";
    return false;
  }
  Runner runner;
  if (!runner.setup(*engine, inputs, error) || !runner.infer(error)) return false;
  outputs = runner.outputs();
  return true;
}

class Session {
 public:
  Session(Options o, std::string commandLine, std::FILE* out, std::FILE* err, bool interactive)
      : o_(std::move(o)),
        commandLine_(std::move(commandLine)),
        out_(out),
        err_(err),
        interactive_(interactive),
        logger_(o_.verbose) {}

  int run() {
    std::fprintf(out_, "&&&& RUNNING Kiln kilnexec [Kiln v%d.%d.%d] # %s\n", KILN_VERSION_MAJOR, KILN_VERSION_MINOR,
                 KILN_VERSION_PATCH, commandLine_.c_str());
    int const code = body();
    std::fprintf(out_, "&&&& %s Kiln kilnexec [Kiln v%d.%d.%d] # %s\n", code == kExitOk ? "PASSED" : "FAILED",
                 KILN_VERSION_MAJOR, KILN_VERSION_MINOR, KILN_VERSION_PATCH, commandLine_.c_str());
    std::fflush(out_);
    return code;
  }

 private:
  int fail(std::string const& message, int code = kExitFailure) {
    std::fprintf(err_, "[E] %s\n", message.c_str());
    return code;
  }
  void info(std::string const& line) { std::fprintf(out_, "[I] %s\n", line.c_str()); }
  void warn(std::string const& line) { std::fprintf(err_, "[W] %s\n", line.c_str()); }

  // Where a build runs when --backend is not given: on the GPU when CUDA can use one (trtexec always runs
  // there), else on the CPU. `autoBackend_` lets a CUDA build that fails fall back to the CPU.
  void chooseDefaultBackend() {
    std::string why;
    if (device::compiledIn() && device::usable(why)) {
      o_.backend = Backend::kCuda;
      autoBackend_ = true;
      return;
    }
    if (gpuPresent())
      warn(device::compiledIn() ? "a GPU is present, but CUDA cannot use it (" + why + "): running on the cpu backend"
                                : "a GPU is present, but this build of kilnexec has no CUDA support: running on the "
                                  "cpu backend");
  }

  // --loadEngine: the plan's target decides the backend (a GPU plan needs device buffers, a CPU plan host ones).
  int backendOfPlan(std::vector<uint8_t> const& plan) {
    std::unique_ptr<kiln::IHostMemory> summary(kiln::getPlanSummary(plan.data(), plan.size(), nullptr));
    if (!summary) return kExitOk;  // not a readable plan: deserializing it says why
    nlohmann::json const j =
        nlohmann::json::parse(static_cast<char const*>(summary->data()),
                              static_cast<char const*>(summary->data()) + summary->size(), nullptr, false);
    if (j.is_discarded() || !j.contains("target") || !j["target"].is_string()) return kExitOk;
    std::string const target = j["target"].get<std::string>();
    bool const planGpu = target != "cpu";
    if (o_.backendGiven && planGpu != (o_.backend == Backend::kCuda))
      return fail("--backend=" + backendName(o_.backend) + ": the plan " + o_.loadEngine + " was built for " +
                  (planGpu ? "the GPU (" + target + ")" : std::string("the CPU")) +
                  "; run it with --backend=" + (planGpu ? "cuda" : "cpu") + " (or without --backend)");
    if (!o_.backendGiven) o_.backend = planGpu ? Backend::kCuda : Backend::kCpu;
    return kExitOk;
  }

  // --backend=cuda: the CUDA runtime is there and --device selects the GPU.
  int prepareDevice() {
    if (o_.backend != Backend::kCuda) return kExitOk;
    if (!device::compiledIn())
      return fail(std::string(o_.backendGiven ? "--backend=cuda" : "the plan " + o_.loadEngine + " targets the GPU") +
                  ": this build of kilnexec has no CUDA support (configure Kiln with -DKILN_BUILD_CUDA=ON); use "
                  "--backend=cpu or --backend=reference" +
                  (o_.backendGiven ? "" : " with a plan built for the CPU"));
    std::string error;
    if (o_.deviceGiven && !device::setDevice(o_.device, error))
      return fail("--device=" + std::to_string(o_.device) + ": " + error);
    return kExitOk;
  }

  std::string backendLine() const {
    std::string line = "Backend: " + backendName(o_.backend);
    if (o_.backend == Backend::kCuda) {
      std::string const name = device::currentDeviceName();
      if (!name.empty()) line += " (" + name + ")";
      if (o_.infStreams > 1) line += ", " + std::to_string(o_.infStreams) + " streams";
    } else if (o_.threads > 0) {
      line += ", " + std::to_string(o_.threads) + " threads";
    }
    return line;
  }

  // --staticPlugins / --dynamicPlugins: loaded before anything is parsed, built or deserialized.
  int loadPlugins() {
    for (auto const& lib : o_.staticPlugins) {
      if (dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
        char const* e = dlerror();
        return fail("--staticPlugins=" + lib + ": cannot open plugin library '" + lib + "': " + (e ? e : "unknown error"));
      }
      info("Loaded static plugin library " + lib);
    }
    for (auto const& lib : o_.dynamicPlugins) {
      if (kiln::getPluginRegistry()->loadLibrary(lib.c_str()) == nullptr)
        return fail("--dynamicPlugins=" + lib + ": cannot load plugin library '" + lib +
                    "' (IPluginRegistry::loadLibrary; the registry's message above says why)");
      info("Loaded plugin library " + lib);
    }
    return kExitOk;
  }

  int body() {
    if (int rc = loadPlugins(); rc != kExitOk) return rc;
    if (!o_.inspect.empty()) {
      for (auto const& note : unsupportedFlagNotes(o_)) warn(note);
      std::string text, error;
      if (!inspectPlan(o_.inspect, logger_, text, error)) return fail(error);
      std::fputs(text.c_str(), out_);
      return kExitOk;
    }

    // Build or load.
    std::vector<uint8_t> plan;
    std::vector<std::pair<std::string, std::string>> layerOrder;
    if (!o_.loadEngine.empty()) {
      std::string error;
      if (!readFile(o_.loadEngine, plan, error)) return fail("--loadEngine: " + error);
      if (int const c = backendOfPlan(plan); c != kExitOk) return c;
      if (int const c = prepareDevice(); c != kExitOk) return c;
      for (auto const& note : unsupportedFlagNotes(o_)) warn(note);
      info(backendLine());
      info("Loaded plan " + o_.loadEngine + " (" + std::to_string(plan.size()) + " bytes)");
    } else {
      if (!o_.backendGiven) chooseDefaultBackend();
      if (int const c = prepareDevice(); c != kExitOk) return c;
      for (auto const& note : unsupportedFlagNotes(o_)) warn(note);
      info(backendLine());
      NetworkSource source;
      std::string error;
      if (!createNetwork(o_, logger_, source, error)) return fail(error);
      info("Network: " + source.description + ", " + std::to_string(source.network->getNbLayers()) + " layers, " +
           std::to_string(source.network->getNbInputs()) + " inputs, " +
           std::to_string(source.network->getNbOutputs()) + " outputs");
      if (o_.checkLayers) {
        layerOrder = markAllOutputs(*source.network);
        warn("--check-layers: every layer output is marked as a network output, which keeps layers from fusing");
      }
      ProgressBar bar(out_, interactive_ && !o_.verbose);
      BuildRequest request;
      request.monitor = &bar;
      std::vector<std::string> notes, lines;
      request.infoLines = &lines;
      auto const start = Clock::now();
      bool built = buildPlan(o_, request, source, logger_, plan, notes, error);
      if (!built && autoBackend_ && error.find("CUDA backend") != std::string::npos) {
        // The default chose the GPU, but Kiln's CUDA backend cannot run here: the CPU can.
        warn("the CUDA backend cannot run here (" + error +
             "); falling back to the cpu backend (give --backend to "
             "choose)");
        o_.backend = Backend::kCpu;
        autoBackend_ = false;
        for (auto const& note : unsupportedFlagNotes(o_)) warn(note);
        info(backendLine());
        notes.clear();
        lines.clear();
        error.clear();
        built = buildPlan(o_, request, source, logger_, plan, notes, error);
      }
      for (auto const& n : notes) warn(n);
      for (auto const& l : lines) info(l);
      if (!built) return fail(error);
      char buf[128];
      std::snprintf(buf, sizeof(buf), "Engine built in %.1f ms, plan %zu bytes", 1000.0 * secondsSince(start),
                    plan.size());
      info(buf);
      if (!o_.saveEngine.empty()) {
        if (!writeFile(o_.saveEngine, plan.data(), plan.size(), error)) return fail("--saveEngine: " + error);
        info("Saved plan to " + o_.saveEngine);
      }
    }

    std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger_));
    if (!runtime) return fail("createInferRuntime failed");
    if (o_.threads > 0) runtime->setMaxThreads(o_.threads);
    auto const loadStart = Clock::now();
    std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan.data(), plan.size()));
    if (!engine) return fail("the plan does not load: " + logger_.lastError());
    char buf[160];
    std::snprintf(buf, sizeof(buf), "Engine loaded in %.1f ms: %d layers, %lld bytes of activation memory",
                  1000.0 * secondsSince(loadStart), engine->getNbLayers(),
                  static_cast<long long>(engine->getDeviceMemorySizeV2()));
    info(buf);
    for (int32_t i = 0; i < engine->getNbIOTensors(); ++i) {
      char const* name = engine->getIOTensorName(i);
      bool const input = engine->getTensorIOMode(name) == kiln::TensorIOMode::kINPUT;
      info(std::string(input ? "Input  " : "Output ") + name + ": " + typeName(engine->getTensorDataType(name)) + " " +
           dimsOf(engine->getTensorShape(name)));
    }

    std::string engineJson;
    if (o_.dumpLayerInfo || !o_.exportLayerInfo.empty() || !o_.report.empty()) {
      std::unique_ptr<kiln::IEngineInspector> inspector(engine->createEngineInspector());
      if (!inspector) return fail("createEngineInspector failed");
      if (o_.dumpLayerInfo) {
        info("=== Layer information ===");
        std::fputs(inspector->getEngineInformation(kiln::LayerInformationFormat::kONELINE), out_);
      }
      engineJson = inspector->getEngineInformation(kiln::LayerInformationFormat::kJSON);
      if (!o_.exportLayerInfo.empty()) {
        std::string error;
        if (!writeFile(o_.exportLayerInfo, engineJson.data(), engineJson.size(), error))
          return fail("--exportLayerInfo: " + error);
        info("Exported layer information to " + o_.exportLayerInfo);
      }
    }

    BenchmarkResult bench;
    std::vector<Tensor> inputs, outputs;
    int code = kExitOk;
    if (!o_.skipInference) {
      std::string error;
      if (!prepareInputs(*engine, o_, inputs, error)) return fail(error);
      for (auto const& t : inputs)
        info("Input '" + t.name + "': " + formatDims(t.dims) +
             (o_.loadInputs.empty() ? " (random values)" : " (loaded)"));
      // On the GPU, --infStreams contexts, each with its own stream and device buffers, run concurrently.
      bool const gpu = o_.backend == Backend::kCuda;
      RunMode const mode{gpu, !o_.noDataTransfers};
      std::vector<std::unique_ptr<Runner>> runners;
      std::vector<Runner*> runnerPtrs;
      for (int32_t i = 0; i < (gpu ? o_.infStreams : 1); ++i) {
        runners.push_back(std::make_unique<Runner>());
        runnerPtrs.push_back(runners.back().get());
        if (!runners.back()->setup(*engine, inputs, error, mode)) return fail(error + ": " + logger_.lastError());
      }
      bool const profile = o_.dumpProfile || !o_.exportProfile.empty() || !o_.report.empty();
      auto trace = [&](std::string const& line) {
        if (o_.verbose) info(line);
      };
      bool const ran = benchmark(runnerPtrs, o_, profile, bench, error, trace);
      for (auto const& w : bench.warnings) warn(w);
      if (!ran) return fail(error + ": " + logger_.lastError());
      std::snprintf(buf, sizeof(buf), "Warm-up: %d inferences in %.1f ms; timed: %zu inferences", bench.warmUpRuns,
                    bench.warmUpMs, bench.times.size());
      info(buf);
      if (bench.cudaGraph) info("The timed inferences replayed a CUDA graph of enqueueV3 (--useCudaGraph)");
      if (gpu && o_.noDataTransfers) info("No data transfers around the inferences (--noDataTransfers)");
      outputs = runners.front()->outputs();
      std::fputs(formatPerformanceSummary(summarize(bench, o_.percentiles)).c_str(), out_);
      if (o_.dumpProfile) std::fputs(formatProfileTable(bench.profiler).c_str(), out_);
      if (!exportAll(bench, outputs)) return kExitFailure;
      if (o_.dumpOutput) std::fputs(formatOutputs(outputs).c_str(), out_);
      if (o_.check) code = check(inputs, outputs, layerOrder);
    }

    if (!o_.report.empty()) {
      ReportData data;
      data.title = "Kiln engine report: " + std::string(engine->getName());
      std::string error;
      if (!layersFromInspector(engineJson, data.layers, error)) return fail("--report: " + error);
      if (engine->getProfilingVerbosity() != kiln::ProfilingVerbosity::kDETAILED)
        warn(
            "--report: the plan keeps layer names only; build it with --profilingVerbosity=detailed to see types, "
            "tactics, precisions and shapes");
      if (bench.profiled) attachProfile(data.layers, layerTimes(bench.profiler));
      for (int32_t i = 0; i < engine->getNbIOTensors(); ++i) {
        char const* name = engine->getIOTensorName(i);
        (engine->getTensorIOMode(name) == kiln::TensorIOMode::kINPUT ? data.networkInputs : data.networkOutputs)
            .push_back(name);
      }
      data.facts.emplace_back("Source",
                              o_.loadEngine.empty() ? (o_.onnx.empty() ? "built-in network" : o_.onnx) : o_.loadEngine);
      data.facts.emplace_back("Backend", backendName(o_.backend));
      data.facts.emplace_back("Plan size", std::to_string(plan.size()) + " bytes");
      data.facts.emplace_back("Activation memory", std::to_string(engine->getDeviceMemorySizeV2()) + " bytes");
      if (!bench.times.empty()) {
        PerformanceSummary const s = summarize(bench, o_.percentiles);
        data.facts.emplace_back("Throughput", formatNumber(s.throughputQps) + " qps");
        data.facts.emplace_back("Latency", formatStats(s.latency));
      }
      std::string const html = renderHtmlReport(data);
      if (!writeFile(o_.report, html.data(), html.size(), error)) return fail("--report: " + error);
      info("Wrote the engine report to " + o_.report);
    }
    return code;
  }

  static std::string formatNumber(double v) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.5g", v);
    return buf;
  }

  bool exportAll(BenchmarkResult const& bench, std::vector<Tensor> const& outputs) {
    std::string error;
    if (!o_.exportTimes.empty()) {
      std::string const j = timesJson(bench);
      if (!writeFile(o_.exportTimes, j.data(), j.size(), error)) {
        fail("--exportTimes: " + error);
        return false;
      }
      info("Exported the times of " + std::to_string(bench.times.size()) + " inferences to " + o_.exportTimes);
    }
    if (!o_.exportProfile.empty()) {
      std::string const j = profileJson(bench.profiler);
      if (!writeFile(o_.exportProfile, j.data(), j.size(), error)) {
        fail("--exportProfile: " + error);
        return false;
      }
      info("Exported the layer profile to " + o_.exportProfile);
    }
    if (!o_.exportOutput.empty()) {
      if (!exportOutputs(o_.exportOutput, outputs, error)) {
        fail("--exportOutput: " + error);
        return false;
      }
      info("Exported " + std::to_string(outputs.size()) + " outputs to " + o_.exportOutput);
    }
    return true;
  }

  // --check / --check-layers: the same network built with reference kernels only, in fp32, at level 0.
  int check(std::vector<Tensor> const& inputs, std::vector<Tensor> const& outputs,
            std::vector<std::pair<std::string, std::string>> const& layerOrder) {
    NetworkSource source;
    std::string error;
    logger_.setQuiet(true);
    bool ok = createNetwork(o_, logger_, source, error);
    if (ok && o_.checkLayers) markAllOutputs(*source.network);
    std::vector<uint8_t> plan;
    std::vector<std::string> notes;
    BuildRequest request;
    request.reference = true;
    std::vector<Tensor> reference;
    ok = ok && buildPlan(o_, request, source, logger_, plan, notes, error) &&
         runOnce(plan, logger_, o_.threads, inputs, reference, error);
    logger_.setQuiet(false);
    if (!ok) return fail("--check: the reference could not run: " + error);
    char buf[96];
    std::snprintf(buf, sizeof(buf), "=== Check against the reference backend (atol %g, rtol %g) ===", o_.atol, o_.rtol);
    info(buf);
    bool pass = true;
    if (o_.checkLayers) {
      LayerCheck const lc = checkLayers(layerOrder, outputs, reference, o_.atol, o_.rtol);
      for (auto const& [layer, c] : lc.tensors) {
        info("layer " + layer + ", " + formatComparison(c));
      }
      if (lc.firstFailure >= 0) {
        auto const& [layer, c] = lc.tensors[static_cast<size_t>(lc.firstFailure)];
        std::fprintf(err_, "[E] --check-layers: the first layer that diverges is '%s' (its output '%s')\n",
                     layer.c_str(), c.name.c_str());
        pass = false;
      } else {
        info("--check-layers: all " + std::to_string(lc.tensors.size()) + " layer outputs match the reference");
      }
    } else {
      for (auto const& r : reference) {
        Tensor const* a = nullptr;
        for (auto const& t : outputs)
          if (t.name == r.name) a = &t;
        if (!a) continue;
        Comparison const c = compareTensors(*a, r, o_.atol, o_.rtol);
        info(formatComparison(c));
        pass = pass && c.pass;
      }
    }
    if (!pass) return fail("--check: FAILED: the engine's outputs differ from the reference beyond the tolerances");
    info("--check: PASSED");
    return kExitOk;
  }

  Options o_;
  bool autoBackend_ = false;  // the backend is the default's choice, not --backend's
  std::string commandLine_;
  std::FILE* out_;
  std::FILE* err_;
  bool interactive_;
  ToolLogger logger_;
};

}  // namespace

bool gpuPresent() {
  std::error_code ec;
  if (std::filesystem::exists("/dev/nvidiactl", ec)) return true;
  std::filesystem::path const gpus = "/proc/driver/nvidia/gpus";
  return std::filesystem::is_directory(gpus, ec) && !std::filesystem::is_empty(gpus, ec);
}

int runKilnexec(Options options, std::string const& commandLine, std::FILE* out, std::FILE* err, bool interactive) {
  return Session(std::move(options), commandLine, out, err, interactive).run();
}

int kilnexecMain(int argc, char const* const* argv, std::FILE* out, std::FILE* err, bool interactive) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string commandLine = "kilnexec";
  for (auto const& a : args) commandLine += " " + a;
  ParseResult parsed = parseCommandLine(args);
  if (!parsed.ok) {
    std::fprintf(err, "[E] %s\n", parsed.error.c_str());
    std::fprintf(err, "Run kilnexec --help for the flags.\n");
    return kExitUsage;
  }
  if (parsed.options.help) {
    std::fputs(usageText().c_str(), out);
    return kExitOk;
  }
  return runKilnexec(std::move(parsed.options), commandLine, out, err, interactive);
}

}  // namespace kilnexec
