// Building for kilnexec: the network (ONNX or built-in), the builder configuration and the profile.
#include "engine_build.h"

#include <cstdio>
#include <filesystem>
#include <map>

#include "demo/networks.h"
#include "tensor_io.h"
#ifdef KILNEXEC_HAVE_ONNX
#include <kiln/onnx_parser.h>
#endif

namespace kilnexec {

void ToolLogger::log(Severity severity, kiln::AsciiChar const* msg) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (severity <= Severity::kERROR) lastError_ = msg ? msg : "";
  if (quiet_) return;
  char const* tag = "[I]";
  switch (severity) {
    case Severity::kINTERNAL_ERROR:
      tag = "[F]";
      break;
    case Severity::kERROR:
      tag = "[E]";
      break;
    case Severity::kWARNING:
      tag = "[W]";
      break;
    case Severity::kINFO:
      tag = "[I]";
      break;
    case Severity::kVERBOSE:
      tag = "[V]";
      break;
  }
  if (severity <= Severity::kWARNING || verbose_) std::fprintf(stderr, "%s [kiln] %s\n", tag, msg ? msg : "");
}

std::string ToolLogger::lastError() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lastError_;
}

std::string builtinNetworkName() { return kiln_samples::smallResNetSpec().name; }

bool createNetwork(Options const& options, kiln::ILogger& logger, NetworkSource& source, std::string& error) {
  source.builder.reset(kiln::createInferBuilder(logger));
  if (!source.builder) {
    error = "createInferBuilder failed";
    return false;
  }
  uint32_t const flags =
      options.stronglyTyped ? 1u << static_cast<uint32_t>(kiln::NetworkDefinitionCreationFlag::kSTRONGLY_TYPED) : 0u;
  source.network.reset(source.builder->createNetworkV2(flags));
  if (!source.network) {
    error = "createNetworkV2 failed";
    return false;
  }
  if (options.onnx.empty()) {
    auto weights =
        std::make_shared<kiln_samples::ResNetWeights>(kiln_samples::makeResNetWeights(kiln_samples::smallResNetSpec()));
    if (!kiln_samples::addResNet(*source.network, *weights)) {
      error = "could not define the built-in network";
      return false;
    }
    source.weightsOwner = weights;
    source.description = "built-in network " + weights->spec.name;
    return true;
  }
#ifdef KILNEXEC_HAVE_ONNX
  std::shared_ptr<kiln::onnx::IParser> parser(kiln::onnx::createParser(*source.network, logger));
  if (!parser) {
    error = "could not create the ONNX parser";
    return false;
  }
  auto const verbosity = static_cast<int32_t>(kiln::ILogger::Severity::kWARNING);
  if (!parser->parseFromFile(options.onnx.c_str(), verbosity)) {
    error = "could not parse '" + options.onnx + "'";
    for (int32_t i = 0; i < parser->getNbErrors(); ++i) error += std::string("\n  ") + parser->getError(i)->desc();
    return false;
  }
  source.weightsOwner = parser;
  source.description = options.onnx;
  return true;
#else
  error = "this build of kilnexec has no ONNX parser (configure with -DKILN_BUILD_ONNX=ON): cannot read '" +
          options.onnx + "'";
  return false;
#endif
}

std::vector<std::pair<std::string, std::string>> markAllOutputs(kiln::INetworkDefinition& network) {
  std::vector<std::pair<std::string, std::string>> tensors;
  for (int32_t i = 0; i < network.getNbLayers(); ++i) {
    kiln::ILayer* layer = network.getLayer(i);
    if (!layer) continue;
    bool const constant = layer->getType() == kiln::LayerType::kCONSTANT;
    for (int32_t o = 0; o < layer->getNbOutputs(); ++o) {
      kiln::ITensor* t = layer->getOutput(o);
      if (!t) continue;
      if (constant && !t->isNetworkOutput()) continue;  // weights are compared through their consumers
      if (!t->isNetworkOutput()) network.markOutput(*t);
      tensors.emplace_back(t->getName(), layer->getName());
    }
  }
  return tensors;
}

namespace {

kiln::Dims toDims(std::vector<int64_t> const& v) {
  kiln::Dims d{};
  d.nbDims = static_cast<int32_t>(v.size());
  for (size_t i = 0; i < v.size() && i < 8; ++i) d.d[i] = v[i];
  return d;
}

std::vector<int64_t> fromDims(kiln::Dims const& d) { return std::vector<int64_t>(d.d, d.d + std::max(d.nbDims, 0)); }

ShapeSpec const* findShape(std::vector<ShapeSpec> const& list, std::string const& name) {
  for (auto const& s : list)
    if (s.name == name) return &s;
  return nullptr;
}

// min/opt/max of one input from the shape flags; false with `error` if they do not fit the input.
bool profileShapes(Options const& o, kiln::ITensor const& input, std::vector<int64_t> (&out)[3],
                   std::vector<std::string>& notes, std::string& error) {
  std::string const name = input.getName();
  std::vector<int64_t> const declared = fromDims(input.getDimensions());
  ShapeSpec const* opt = findShape(o.optShapes, name);
  ShapeSpec const* shapes = findShape(o.shapes, name);
  if (opt) {
    ShapeSpec const* mn = findShape(o.minShapes, name);
    ShapeSpec const* mx = findShape(o.maxShapes, name);
    out[0] = mn ? mn->dims : opt->dims;
    out[1] = opt->dims;
    out[2] = mx ? mx->dims : opt->dims;
  } else if (shapes) {
    out[0] = out[1] = out[2] = shapes->dims;
  } else {
    // trtexec's rule: dynamic dimensions without shapes default to 1, with a warning.
    std::vector<int64_t> d = declared;
    for (auto& x : d)
      if (x < 0) x = 1;
    out[0] = out[1] = out[2] = d;
    notes.push_back("dynamic input '" + name + "' (" + formatDims(declared) + ") has no shape given; using " +
                    formatDims(d) + " (give --shapes or --optShapes)");
  }
  for (auto const& s : out) {
    if (s.size() != declared.size()) {
      error = "input '" + name + "' has rank " + std::to_string(declared.size()) + " but the shape flags give " +
              formatDims(s);
      return false;
    }
    for (size_t i = 0; i < s.size(); ++i)
      if (declared[i] >= 0 && s[i] != declared[i]) {
        error = "input '" + name + "' is " + formatDims(declared) + "; the shape flags give " + formatDims(s);
        return false;
      }
  }
  for (size_t i = 0; i < out[0].size(); ++i)
    if (out[0][i] > out[1][i] || out[1][i] > out[2][i]) {
      error = "input '" + name + "': min <= opt <= max does not hold (" + formatDims(out[0]) + ", " +
              formatDims(out[1]) + ", " + formatDims(out[2]) + ")";
      return false;
    }
  return true;
}

}  // namespace

bool buildPlan(Options const& o, BuildRequest const& request, NetworkSource& source, ToolLogger& logger,
               std::vector<uint8_t>& plan, std::vector<std::string>& notes, std::string& error) {
  kiln::IBuilder& builder = *source.builder;
  kiln::INetworkDefinition& network = *source.network;
  bool const gpu = !request.reference && o.backend == Backend::kCuda;
  std::unique_ptr<kiln::ITimingCache> cache;  // declared before the config, which refers to it
  std::unique_ptr<kiln::IBuilderConfig> config(builder.createBuilderConfig());
  if (!config) {
    error = "createBuilderConfig failed";
    return false;
  }
  config->setDefaultDeviceType(gpu ? kiln::DeviceType::kGPU : kiln::DeviceType::kCPU);
  auto say = [&](std::string line) {
    if (request.infoLines) request.infoLines->push_back(std::move(line));
  };
  bool const useCache = gpu && !o.timingCacheFile.empty();
  if (useCache) {
    std::vector<uint8_t> bytes;
    std::error_code ec;
    if (std::filesystem::exists(o.timingCacheFile, ec)) {
      std::string readError;
      if (!readFile(o.timingCacheFile, bytes, readError)) {
        error = "--timingCacheFile: " + readError;
        return false;
      }
      cache.reset(config->createTimingCache(bytes.data(), bytes.size()));
      if (cache)
        say("Loaded the timing cache " + o.timingCacheFile + " (" + std::to_string(bytes.size()) + " bytes)");
      else
        notes.push_back("--timingCacheFile=" + o.timingCacheFile + ": the file cannot be used as a timing cache (" +
                        logger.lastError() + "); starting an empty one, which overwrites it after the build");
    }
    if (!cache) cache.reset(config->createTimingCache(nullptr, 0));
    if (!cache || !config->setTimingCache(*cache, false)) {
      error = "--timingCacheFile: the builder refused the timing cache: " + logger.lastError();
      return false;
    }
  }
  if (request.reference || o.backend == Backend::kReference)
    config->setTacticSources(1u << static_cast<uint32_t>(kiln::TacticSource::kREFERENCE));
  if (request.reference) {
    config->setBuilderOptimizationLevel(0);
  } else {
    config->setBuilderOptimizationLevel(o.builderOptimizationLevel);
    // options.cc names the sources by their value, 0 (CUBLAS) .. 7 (REFERENCE).
    static_assert(kiln::EnumMax<kiln::TacticSource>() == 8, "--tacticSources: update the names in options.cc");
    if (!o.tacticSources.empty() && o.backend != Backend::kReference) {
      kiln::TacticSources sources = config->getTacticSources();
      for (auto const& [add, which] : o.tacticSources) {
        uint32_t const bit = 1u << static_cast<uint32_t>(which);
        sources = add ? (sources | bit) : (sources & ~bit);
      }
      if (!config->setTacticSources(sources)) {
        error = "--tacticSources: the builder refused the tactic sources: " + logger.lastError();
        return false;
      }
    }
    if (o.fp16 || o.best) config->setFlag(kiln::BuilderFlag::kFP16);
    if (o.bf16 || o.best) config->setFlag(kiln::BuilderFlag::kBF16);
    for (auto const& [pool, bytes] : o.memPoolSizes)
      if (pool == "workspace") config->setMemoryPoolLimit(kiln::MemoryPoolType::kWORKSPACE, static_cast<size_t>(bytes));
    config->setProgressMonitor(request.monitor);
  }
  // Layer details (tactics, precisions, shapes) are kept when something will show them.
  kiln::ProfilingVerbosity verbosity = kiln::ProfilingVerbosity::kLAYER_NAMES_ONLY;
  if (o.profilingVerbosity == "detailed" ||
      (o.profilingVerbosity.empty() && (o.dumpLayerInfo || !o.exportLayerInfo.empty() || !o.report.empty())))
    verbosity = kiln::ProfilingVerbosity::kDETAILED;
  else if (o.profilingVerbosity == "none")
    verbosity = kiln::ProfilingVerbosity::kNONE;
  config->setProfilingVerbosity(verbosity);
  if (o.threads > 0) builder.setMaxThreads(o.threads);

  for (auto const* list : {&o.shapes, &o.minShapes, &o.optShapes, &o.maxShapes})
    for (auto const& s : *list) {
      bool found = false;
      for (int32_t i = 0; i < network.getNbInputs(); ++i) found = found || s.name == network.getInput(i)->getName();
      if (!found) {
        error = "the shape flags name '" + s.name + "', which is not an input of the network";
        return false;
      }
    }
  bool dynamic = false;
  for (int32_t i = 0; i < network.getNbInputs(); ++i)
    for (int64_t d : fromDims(network.getInput(i)->getDimensions())) dynamic = dynamic || d < 0;
  if (dynamic) {
    kiln::IOptimizationProfile* profile = builder.createOptimizationProfile();
    for (int32_t i = 0; i < network.getNbInputs(); ++i) {
      kiln::ITensor const& input = *network.getInput(i);
      std::vector<int64_t> shapes[3];
      if (!profileShapes(o, input, shapes, notes, error)) return false;
      kiln::OptProfileSelector const sel[3] = {kiln::OptProfileSelector::kMIN, kiln::OptProfileSelector::kOPT,
                                               kiln::OptProfileSelector::kMAX};
      for (int s = 0; s < 3; ++s)
        if (!profile->setDimensions(input.getName(), sel[s], toDims(shapes[s]))) {
          error =
              "the optimization profile refused input '" + std::string(input.getName()) + "': " + logger.lastError();
          return false;
        }
    }
    if (config->addOptimizationProfile(profile) < 0) {
      error = "the optimization profile is invalid: " + logger.lastError();
      return false;
    }
  }

  std::unique_ptr<kiln::IHostMemory> serialized(builder.buildSerializedNetwork(network, *config));
  if (!serialized) {
    error = "the build failed: " + logger.lastError();
    return false;
  }
  auto const* p = static_cast<uint8_t const*>(serialized->data());
  plan.assign(p, p + serialized->size());
  if (useCache) {
    kiln::ITimingCache const* updated = config->getTimingCache();
    std::unique_ptr<kiln::IHostMemory> bytes(updated ? updated->serialize() : nullptr);
    if (!bytes) {
      error = "--timingCacheFile: the timing cache could not be serialized: " + logger.lastError();
      return false;
    }
    if (!writeFile(o.timingCacheFile, bytes->data(), bytes->size(), error)) {
      error = "--timingCacheFile: " + error;
      return false;
    }
    say("Wrote the timing cache " + o.timingCacheFile + " (" + std::to_string(bytes->size()) + " bytes)");
  }
  return true;
}

}  // namespace kilnexec
