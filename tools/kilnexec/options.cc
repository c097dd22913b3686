// kilnexec's command line parser: a table of flags, each parsing its own value, then the checks of
// combinations that contradict each other.
#include "options.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <map>
#include <sstream>

namespace kilnexec {
namespace {

std::vector<std::string> split(std::string const& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

bool parseInt(std::string const& s, int64_t& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

bool parseDouble(std::string const& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v)) return false;
  out = v;
  return true;
}

// `name:dims` with the name possibly holding colons (TensorFlow-style "input:0"): split at the last colon,
// and strip optional single quotes around the name, as trtexec does.
bool parseShapeList(std::string const& value, std::vector<ShapeSpec>& out, std::string& error) {
  for (std::string const& entry : split(value, ',')) {
    auto colon = entry.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      error = "expected name:AxBxC, got '" + entry + "'";
      return false;
    }
    ShapeSpec spec;
    spec.name = entry.substr(0, colon);
    if (spec.name.size() >= 2 && spec.name.front() == '\'' && spec.name.back() == '\'')
      spec.name = spec.name.substr(1, spec.name.size() - 2);
    if (!parseDims(entry.substr(colon + 1), spec.dims)) {
      error = "bad dimensions '" + entry.substr(colon + 1) + "' for '" + spec.name + "' (expected e.g. 1x3x224x224)";
      return false;
    }
    for (auto const& s : out)
      if (s.name == spec.name) {
        error = "'" + spec.name + "' is given twice";
        return false;
      }
    out.push_back(std::move(spec));
  }
  return true;
}

// trtexec's pool sizes: a number with an optional base-2 suffix B, K, M or G; no suffix means MiB.
bool parsePoolSize(std::string text, int64_t& bytes) {
  if (text.empty()) return false;
  double scale = 1024.0 * 1024.0;
  char const last = text.back();
  if (last == 'B' || last == 'K' || last == 'M' || last == 'G') {
    scale = last == 'B' ? 1.0 : last == 'K' ? 1024.0 : last == 'M' ? 1024.0 * 1024.0 : 1024.0 * 1024.0 * 1024.0;
    text.pop_back();
  }
  double v = 0;
  if (!parseDouble(text, v) || v < 0 || v * scale > 9.0e18) return false;
  bytes = static_cast<int64_t>(v * scale);
  return true;
}

}  // namespace

bool parseDims(std::string const& text, std::vector<int64_t>& dims) {
  dims.clear();
  if (text.empty()) return false;
  std::string t = text;
  for (char& c : t)
    if (c == ',') c = 'x';
  for (std::string const& part : split(t, 'x')) {
    int64_t v = 0;
    if (!parseInt(part, v) || v < 0) return false;
    dims.push_back(v);
  }
  return dims.size() <= 8;
}

std::string formatDims(std::vector<int64_t> const& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s.empty() ? "scalar" : s;
}

ParseResult parseCommandLine(std::vector<std::string> const& args) {
  ParseResult r;
  Options& o = r.options;
  auto fail = [&](std::string msg) {
    r.ok = false;
    r.error = std::move(msg);
    return r;
  };

  using ValueHandler = std::function<bool(std::string const&, std::string&)>;
  auto integer = [](int32_t& dst, int64_t lo, int64_t hi) -> ValueHandler {
    return [&dst, lo, hi](std::string const& v, std::string& err) {
      int64_t x = 0;
      if (!parseInt(v, x) || x < lo || x > hi) {
        err = "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + v + "'";
        return false;
      }
      dst = static_cast<int32_t>(x);
      return true;
    };
  };
  auto real = [](double& dst, double lo) -> ValueHandler {
    return [&dst, lo](std::string const& v, std::string& err) {
      double x = 0;
      if (!parseDouble(v, x) || x < lo) {
        std::ostringstream os;
        os << "expected a number >= " << lo << ", got '" << v << "'";
        err = os.str();
        return false;
      }
      dst = x;
      return true;
    };
  };
  auto text = [](std::string& dst) -> ValueHandler {
    return [&dst](std::string const& v, std::string& err) {
      if (v.empty()) {
        err = "expected a value";
        return false;
      }
      dst = v;
      return true;
    };
  };
  auto shapes = [](std::vector<ShapeSpec>& dst) -> ValueHandler {
    return [&dst](std::string const& v, std::string& err) { return parseShapeList(v, dst, err); };
  };
  auto paths = [](std::vector<std::string>& dst) -> ValueHandler {
    return [&dst](std::string const& v, std::string& err) {
      for (auto const& p : split(v, ',')) {
        if (p.empty()) {
          err = "empty path";
          return false;
        }
        dst.push_back(p);
      }
      return true;
    };
  };

  std::map<std::string, bool*> boolFlags = {
      {"fp16", &o.fp16},
      {"bf16", &o.bf16},
      {"int8", &o.int8},
      {"best", &o.best},
      {"stronglyTyped", &o.stronglyTyped},
      {"useCudaGraph", &o.useCudaGraph},
      {"noDataTransfers", &o.noDataTransfers},
      {"separateProfileRun", &o.separateProfileRun},
      {"dumpProfile", &o.dumpProfile},
      {"dumpLayerInfo", &o.dumpLayerInfo},
      {"dumpOutput", &o.dumpOutput},
      {"verbose", &o.verbose},
      {"skipInference", &o.skipInference},
      {"check", &o.check},
      {"check-layers", &o.checkLayers},
      {"help", &o.help},
  };
  std::map<std::string, ValueHandler> valueFlags = {
      {"onnx", text(o.onnx)},
      {"loadEngine", text(o.loadEngine)},
      {"saveEngine", text(o.saveEngine)},
      {"inspect", text(o.inspect)},
      {"shapes", shapes(o.shapes)},
      {"minShapes", shapes(o.minShapes)},
      {"optShapes", shapes(o.optShapes)},
      {"maxShapes", shapes(o.maxShapes)},
      {"builderOptimizationLevel", integer(o.builderOptimizationLevel, 0, 5)},
      {"timingCacheFile", text(o.timingCacheFile)},
      {"staticPlugins", paths(o.staticPlugins)},
      {"dynamicPlugins", paths(o.dynamicPlugins)},
      {"iterations", integer(o.iterations, 1, 1 << 30)},
      {"duration", real(o.durationS, 0.0)},
      {"warmUp", real(o.warmUpMs, 0.0)},
      {"avgRuns", integer(o.avgRuns, 1, 1 << 30)},
      {"infStreams", integer(o.infStreams, 1, 1024)},
      {"exportProfile", text(o.exportProfile)},
      {"exportTimes", text(o.exportTimes)},
      {"exportLayerInfo", text(o.exportLayerInfo)},
      {"exportOutput", text(o.exportOutput)},
      {"report", text(o.report)},
      {"threads", integer(o.threads, 1, 4096)},
      {"atol", real(o.atol, 0.0)},
      {"rtol", real(o.rtol, 0.0)},
  };
  valueFlags["device"] = [&o](std::string const& v, std::string& err) {
    int64_t x = 0;
    if (!parseInt(v, x) || x < 0 || x > 1023) {
      err = "expected a device index >= 0, got '" + v + "'";
      return false;
    }
    o.device = static_cast<int32_t>(x);
    o.deviceGiven = true;
    return true;
  };
  valueFlags["backend"] = [&o](std::string const& v, std::string& err) {
    if (v == "cpu")
      o.backend = Backend::kCpu;
    else if (v == "reference")
      o.backend = Backend::kReference;
    else if (v == "cuda")
      o.backend = Backend::kCuda;
    else {
      err = "expected cuda, cpu or reference, got '" + v + "'";
      return false;
    }
    o.backendGiven = true;
    return true;
  };
  valueFlags["profilingVerbosity"] = [&o](std::string const& v, std::string& err) {
    if (v != "layer_names_only" && v != "detailed" && v != "none") {
      err = "expected layer_names_only, detailed or none, got '" + v + "'";
      return false;
    }
    o.profilingVerbosity = v;
    return true;
  };
  // trtexec's tactic source edits: +NAME / -NAME, comma-separated, on top of the default (every source in Kiln).
  // The names are kiln::TacticSource's in value order (engine_build.cc checks the count; libkiln's plan summary
  // keeps its own copy, internal to the library).
  valueFlags["tacticSources"] = [&o](std::string const& v, std::string& err) {
    static const char* const kNames[] = {"CUBLAS",           "CUBLAS_LT", "CUDNN",  "EDGE_MASK_CONVOLUTIONS",
                                         "JIT_CONVOLUTIONS", "KILN",      "ONEDNN", "REFERENCE"};
    for (auto const& entry : split(v, ',')) {
      std::string name = entry.size() > 1 ? entry.substr(1) : "";
      for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      int32_t source = -1;
      for (int32_t i = 0; i < static_cast<int32_t>(std::size(kNames)); ++i)
        if (name == kNames[i]) source = i;
      if ((entry.empty() || (entry[0] != '+' && entry[0] != '-')) || source < 0) {
        err = "expected +NAME or -NAME (comma-separated) with NAME one of ";
        for (size_t i = 0; i < std::size(kNames); ++i) err += std::string(i ? ", " : "") + kNames[i];
        err += "; got '" + entry + "'";
        return false;
      }
      o.tacticSources.emplace_back(entry[0] == '+', source);
    }
    return true;
  };
  valueFlags["percentile"] = [&o](std::string const& v, std::string& err) {
    o.percentiles.clear();
    for (auto const& p : split(v, ',')) {
      double x = 0;
      if (!parseDouble(p, x) || x < 0 || x > 100) {
        err = "expected percentiles in [0, 100], got '" + p + "'";
        return false;
      }
      o.percentiles.push_back(x);
    }
    return true;
  };
  valueFlags["memPoolSize"] = [&o](std::string const& v, std::string& err) {
    for (auto const& entry : split(v, ',')) {
      auto colon = entry.find(':');
      std::string const pool = colon == std::string::npos ? "" : entry.substr(0, colon);
      static const char* const kPools[] = {"workspace", "dlaSRAM", "dlaLocalDRAM", "dlaGlobalDRAM", "tacticSharedMem"};
      bool known = false;
      for (char const* k : kPools) known = known || pool == k;
      if (!known) {
        err =
            "expected pool:size with pool one of workspace, dlaSRAM, dlaLocalDRAM, dlaGlobalDRAM, tacticSharedMem; got "
            "'" +
            entry + "'";
        return false;
      }
      int64_t bytes = 0;
      if (!parsePoolSize(entry.substr(colon + 1), bytes)) {
        err =
            "bad size '" + entry.substr(colon + 1) + "' for pool " + pool + " (a number with B, K, M or G; default M)";
        return false;
      }
      o.memPoolSizes.emplace_back(pool, bytes);
    }
    return true;
  };
  valueFlags["loadInputs"] = [&o](std::string const& v, std::string& err) {
    for (auto const& entry : split(v, ',')) {
      // name:file, or a bare .npz file whose arrays are named after the inputs.
      auto colon = entry.rfind(':');
      if (colon == std::string::npos) {
        if (entry.size() < 4 || entry.substr(entry.size() - 4) != ".npz") {
          err = "expected name:file (or a .npz file whose arrays are named after the inputs), got '" + entry + "'";
          return false;
        }
        o.loadInputs.emplace_back("", entry);
        continue;
      }
      std::string name = entry.substr(0, colon), file = entry.substr(colon + 1);
      if (name.size() >= 2 && name.front() == '\'' && name.back() == '\'') name = name.substr(1, name.size() - 2);
      if (name.empty() || file.empty()) {
        err = "expected name:file, got '" + entry + "'";
        return false;
      }
      o.loadInputs.emplace_back(name, file);
    }
    return true;
  };

  for (std::string const& arg : args) {
    if (arg == "-h") {
      o.help = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0)
      return fail("unexpected argument '" + arg + "' (flags look like --name or --name=value)");
    std::string body = arg.substr(2);
    auto eq = body.find('=');
    std::string const name = body.substr(0, eq);
    bool const hasValue = eq != std::string::npos;
    std::string const value = hasValue ? body.substr(eq + 1) : "";
    if (auto b = boolFlags.find(name); b != boolFlags.end()) {
      if (hasValue) return fail("--" + name + " takes no value (got '" + value + "')");
      *b->second = true;
      continue;
    }
    if (name == "checkLayers") {  // trtexec-style spelling of Kiln's --check-layers
      if (hasValue) return fail("--checkLayers takes no value");
      o.checkLayers = true;
      continue;
    }
    auto v = valueFlags.find(name);
    if (v == valueFlags.end()) return fail("unknown flag --" + name + " (see --help)");
    if (!hasValue) return fail("--" + name + " needs a value: --" + name + "=...");
    std::string err;
    if (!v->second(value, err)) return fail("--" + name + ": " + err);
  }
  if (o.help) return r;

  // Combinations that contradict each other.
  if (o.checkLayers) o.check = true;
  if (!o.onnx.empty() && !o.loadEngine.empty())
    return fail("--onnx and --loadEngine both give the network: use one (build from ONNX, or load a plan)");
  if (!o.inspect.empty() && (!o.onnx.empty() || !o.loadEngine.empty() || !o.saveEngine.empty()))
    return fail("--inspect reads a plan's header only; it does not combine with --onnx, --loadEngine or --saveEngine");
  if (!o.loadEngine.empty()) {
    bool const buildFlag = o.fp16 || o.bf16 || o.int8 || o.best || o.stronglyTyped || !o.minShapes.empty() ||
                           !o.optShapes.empty() || !o.maxShapes.empty() || !o.memPoolSizes.empty() ||
                           !o.timingCacheFile.empty() || !o.saveEngine.empty() || !o.profilingVerbosity.empty() ||
                           !o.tacticSources.empty();
    if (buildFlag)
      return fail(
          "--loadEngine runs an engine already built: build flags (--fp16, --bf16, --int8, --best, "
          "--stronglyTyped, --min/opt/maxShapes, --memPoolSize, --timingCacheFile, --profilingVerbosity, "
          "--tacticSources, --saveEngine) have no effect on it");
    if (o.check) return fail("--check needs the network to build the reference from: use --onnx (or no model)");
  }
  if (o.stronglyTyped && (o.fp16 || o.bf16 || o.int8 || o.best))
    return fail(
        "--stronglyTyped takes precisions from the network: it does not combine with --fp16, --bf16, "
        "--int8 or --best");
  if (o.skipInference) {
    if (o.check) return fail("--skipInference does not run the engine, so --check cannot compare anything");
    std::vector<std::pair<bool, char const*>> runFlags = {{!o.exportTimes.empty(), "--exportTimes"},
                                                          {!o.exportProfile.empty(), "--exportProfile"},
                                                          {!o.exportOutput.empty(), "--exportOutput"},
                                                          {o.dumpOutput, "--dumpOutput"},
                                                          {o.dumpProfile, "--dumpProfile"},
                                                          {!o.loadInputs.empty(), "--loadInputs"}};
    for (auto const& [given, flag] : runFlags)
      if (given)
        return fail(std::string("--skipInference does not run the engine, so ") + flag + " has nothing to show");
  }
  bool const anyProfileShape = !o.minShapes.empty() || !o.optShapes.empty() || !o.maxShapes.empty();
  if (anyProfileShape && o.optShapes.empty())
    return fail("--minShapes/--maxShapes need --optShapes too (missing min or max default to opt)");
  for (auto const* list : {&o.minShapes, &o.maxShapes})
    for (auto const& s : *list) {
      bool found = false;
      for (auto const& opt : o.optShapes) found = found || opt.name == s.name;
      if (!found) return fail("'" + s.name + "' has a min or max shape but no --optShapes entry");
    }
  if (o.check && !o.inspect.empty()) return fail("--check needs an engine, not a plan header (--inspect)");
  return r;
}

std::vector<std::string> unsupportedFlagNotes(Options const& o) {
  std::vector<std::string> notes;
  if (o.int8 || o.best)
    notes.push_back(std::string(o.int8 ? "--int8" : "--best") +
                    ": INT8 calibration and INT8 kernels are not in Kiln yet; the engine is built without INT8");
  // The CUDA machinery flags act on the CUDA backend; on the CPU backends there is nothing for them to do.
  if (o.backend != Backend::kCuda) {
    std::string const backend = o.backend == Backend::kReference ? "reference" : "cpu";
    std::string const onHost = ": the " + backend + " backend runs on the host, so this flag does nothing there";
    if (o.useCudaGraph) notes.push_back("--useCudaGraph" + onHost + " (CUDA graphs need --backend=cuda)");
    if (o.noDataTransfers)
      notes.push_back("--noDataTransfers" + onHost + " (it reads and writes host memory in place: no transfers)");
    if (o.infStreams > 1)
      notes.push_back("--infStreams=" + std::to_string(o.infStreams) + onHost +
                      " (streams need --backend=cuda); it runs one context");
    if (o.deviceGiven) notes.push_back("--device=" + std::to_string(o.device) + onHost);
    if (!o.timingCacheFile.empty())
      notes.push_back("--timingCacheFile=" + o.timingCacheFile + onHost +
                      " (the timing cache keeps GPU tactic timings); nothing is read or written");
  }
  if (o.backend == Backend::kReference && !o.tacticSources.empty())
    notes.push_back("--tacticSources: the reference backend builds from the reference kernels only; ignored");
  for (auto const& [pool, bytes] : o.memPoolSizes)
    if (pool != "workspace")
      notes.push_back("--memPoolSize=" + pool + ": Kiln has no such pool (DLA and tactic shared memory); ignored");
  return notes;
}

std::string usageText() {
  return R"(kilnexec: build, run, benchmark, inspect and check Kiln engines (the trtexec of Kiln).

Usage: kilnexec [--onnx=model.onnx | --loadEngine=plan] [options]
       kilnexec --inspect=plan
With no model, kilnexec builds and benchmarks a built-in demo network (a small ResNet).

Model and plan
  --onnx=FILE                 Build from an ONNX model
  --loadEngine=FILE           Load a serialized plan
  --saveEngine=FILE           Save the built plan
  --inspect=FILE              Print a plan's header (versions, target, precisions, profiles, plugins, sizes,
                              checksums) without loading its body or needing a device
Build
  --fp16 / --bf16             Allow FP16 / BF16 kernels besides FP32
  --int8                      Accepted; Kiln has no INT8 yet (says so)
  --best                      --fp16 --bf16 --int8
  --stronglyTyped             Types follow the network (no precision flags)
  --shapes=spec               Run-time shapes (and, without min/opt/max, the profile): name:1x3x224x224[,...]
  --minShapes/--optShapes/--maxShapes=spec   Optimization profile (min and max default to opt)
  --memPoolSize=pool:size     Pool limits, size in MiB or with B/K/M/G: workspace:1024M
  --builderOptimizationLevel=N   0 (fast build) .. 5; default 3
  --profilingVerbosity=V      layer_names_only, detailed or none (default detailed when layer info is asked for)
  --timingCacheFile=FILE      GPU: read the timing cache from FILE if it exists, write it back after the build
  --tacticSources=+A,-B,...   Add (+) or remove (-) tactic sources from the default (all of them): CUBLAS,
                              CUBLAS_LT, CUDNN, EDGE_MASK_CONVOLUTIONS, JIT_CONVOLUTIONS, KILN (Kiln's own
                              kernels), ONEDNN, REFERENCE; e.g. --tacticSources=-CUDNN times no cuDNN kernel
  --staticPlugins=LIBS / --dynamicPlugins=LIBS   Plugin libraries loaded before parsing or loading: static ones are
                              opened (their REGISTER_KILN_PLUGIN creators register themselves), dynamic ones go
                              through IPluginRegistry::loadLibrary (they export getCreators); a failure exits 1
Inference
  --iterations=N              Run at least N timed inferences (default 10)
  --duration=S                Run for at least S seconds (default 3)
  --warmUp=MS                 Warm up for MS milliseconds first (default 200)
  --avgRuns=N                 Runs averaged per line of the --verbose trace (default 10)
  --percentile=P1,P2,...      Percentiles to report (default 90,95,99)
  --loadInputs=name:file      Inputs from .npy, .npz (array named like the input, or the only one) or raw bytes;
                              a bare file.npz gives every input by array name
  --useCudaGraph              GPU: capture one enqueue into a CUDA graph after the warm-up and replay it
                              (falls back to plain enqueues with a warning if the capture fails)
  --noDataTransfers           GPU: no H2D/D2H copies around each inference (inputs are uploaded once,
                              outputs fetched once at the end)
  --infStreams=N              GPU: N contexts on N streams run concurrently; throughput counts them all
  --device=N                  GPU: run on CUDA device N (default 0)
  --skipInference             Build (and save) only
  --threads=N                 Host threads for the CPU backend (default: all)
  --backend=B                 cuda, cpu or reference (default: cuda when CUDA can use a GPU, else cpu; a
                              default cuda build that cannot run falls back to cpu with a warning).
                              --loadEngine runs the plan where it was built for
  (on the cpu and reference backends the GPU flags above do nothing and say so)
Reporting
  --dumpProfile / --exportProfile=FILE     Per-layer times, printed / as JSON
  --separateProfileRun        Profile in a run of its own, after the timed runs
  --exportTimes=FILE          Every timed inference as JSON
  --dumpLayerInfo / --exportLayerInfo=FILE  Engine layers (IEngineInspector), printed / as JSON
  --dumpOutput / --exportOutput=FILE       Outputs, printed / as .json, .npz, .npy (one output) or raw .bin
  --report=FILE.html          One self-contained HTML page: the optimized graph and the layer time profile
  --verbose                   Kiln's verbose log
Checking
  --check                     Compare every output with the reference backend on the same inputs
  --check-layers              Mark every tensor as an output and name the first layer that diverges
  --atol=A, --rtol=R          Pass when |x - ref| <= atol + rtol * |ref| (defaults 1e-5, 1e-5)

Exit status: 0 success, 1 a model, plan, run or check that failed, 2 a command line that is wrong.
)";
}

}  // namespace kilnexec
