// kiln_demo: builds two small networks with Kiln's public API (a ResNet-style CNN and a BERT-style encoder
// layer with dynamic shapes) for the CPU, saves each plan to a file, reloads it, runs it and prints a table.
// Usage: kiln_demo [--runs N] [--verbose]
#include <kiln/kiln.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "demo/networks.h"

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Row {
  std::string name;
  int32_t networkLayers = 0;
  int32_t engineLayers = 0;
  size_t planBytes = 0;
  double buildMs = 0;
  double loadMs = 0;
  double medianMs = 0;
  std::string shape;
  double checksum = 0;
};

std::string shapeString(kiln::Dims const& d) {
  std::string s;
  for (int32_t i = 0; i < d.nbDims; ++i) {
    s += (i == 0 ? "" : "x") + std::to_string(d.d[i]);
  }
  return s;
}

// Builds with `define` (which adds the network and any profile), round-trips the plan through a file, runs
// `inputs` `runs` times. Returns false, having printed why, on any failure.
template <typename Define>
bool demoNetwork(kiln_samples::ConsoleLogger& logger, std::string const& name, Define define,
                 std::vector<kiln_samples::HostTensor> const& inputs, int runs, Row& row) {
  row.name = name;
  auto const buildStart = Clock::now();
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  if (!builder) {
    std::fprintf(stderr, "%s: createInferBuilder failed\n", name.c_str());
    return false;
  }
  std::unique_ptr<kiln::INetworkDefinition> network(builder->createNetworkV2(0));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  if (!network || !config) {
    std::fprintf(stderr, "%s: could not create the network or the config\n", name.c_str());
    return false;
  }
  config->setDefaultDeviceType(kiln::DeviceType::kCPU);
  if (!define(*builder, *network, *config)) {
    std::fprintf(stderr, "%s: could not define the network\n", name.c_str());
    return false;
  }
  row.networkLayers = network->getNbLayers();
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*network, *config));
  if (!plan) {
    std::fprintf(stderr, "%s: build failed\n", name.c_str());
    return false;
  }
  row.buildMs = msSince(buildStart);
  row.planBytes = plan->size();

  std::filesystem::path const path =
      std::filesystem::temp_directory_path() / ("kiln_demo_" + name + "_" + std::to_string(getpid()) + ".plan");
  {
    std::ofstream out(path, std::ios::binary);
    out.write(static_cast<char const*>(plan->data()), static_cast<std::streamsize>(plan->size()));
    if (!out) {
      std::fprintf(stderr, "%s: could not write %s\n", name.c_str(), path.c_str());
      return false;
    }
  }
  plan.reset();

  auto const loadStart = Clock::now();
  std::vector<char> bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::filesystem::remove(path);
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  if (!runtime) {
    std::fprintf(stderr, "%s: createInferRuntime failed\n", name.c_str());
    return false;
  }
  std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(bytes.data(), bytes.size()));
  if (!engine) {
    std::fprintf(stderr, "%s: deserializeCudaEngine failed\n", name.c_str());
    return false;
  }
  row.loadMs = msSince(loadStart);
  row.engineLayers = engine->getNbLayers();

  std::unique_ptr<kiln::IExecutionContext> context(engine->createExecutionContext());
  if (!context) {
    std::fprintf(stderr, "%s: createExecutionContext failed\n", name.c_str());
    return false;
  }
  std::vector<kiln_samples::HostTensor> outputs;
  std::vector<double> times;
  for (int i = 0; i <= runs; ++i) {  // run 0 warms up and is not timed
    auto const start = Clock::now();
    if (!kiln_samples::runContext(*context, inputs, outputs)) {
      std::fprintf(stderr, "%s: inference failed\n", name.c_str());
      return false;
    }
    if (i > 0) {
      times.push_back(msSince(start));
    }
  }
  std::sort(times.begin(), times.end());
  row.medianMs = times.empty() ? 0.0 : times[times.size() / 2];
  row.shape = shapeString(inputs.front().dims);
  for (float v : outputs.front().data) {
    row.checksum += v;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 20;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--verbose") == 0) {
      verbose = true;
    } else {
      std::fprintf(stderr, "usage: %s [--runs N] [--verbose]\n", argv[0]);
      return 2;
    }
  }
  kiln_samples::ConsoleLogger logger(verbose ? kiln::ILogger::Severity::kINFO : kiln::ILogger::Severity::kWARNING);

  std::vector<Row> rows;
  bool ok = true;

  kiln_samples::ResNetWeights const cnn = kiln_samples::makeResNetWeights(kiln_samples::smallResNetSpec());
  {
    kiln_samples::Random rng(100);
    kiln_samples::ResNetSpec const& s = cnn.spec;
    kiln_samples::HostTensor input{"input", kiln::Dims4(s.batch, s.inChannels, s.height, s.width), {}};
    input.data = rng.uniformVector(static_cast<size_t>(kiln_samples::volume(input.dims)), -1.0F, 1.0F);
    Row row;
    auto define = [&](kiln::IBuilder&, kiln::INetworkDefinition& net, kiln::IBuilderConfig&) {
      return kiln_samples::addResNet(net, cnn);
    };
    if (demoNetwork(logger, s.name, define, {input}, runs, row)) {
      rows.push_back(row);
    } else {
      ok = false;
    }
  }

  kiln_samples::BertWeights const bert = kiln_samples::makeBertWeights(kiln_samples::BertSpec{});
  {
    kiln_samples::Random rng(200);
    kiln_samples::BertSpec const& s = bert.spec;
    kiln_samples::HostTensor input{"input", kiln::Dims3(s.optBatch, s.optSeq, s.hidden), {}};
    input.data = rng.uniformVector(static_cast<size_t>(kiln_samples::volume(input.dims)), -1.0F, 1.0F);
    Row row;
    auto define = [&](kiln::IBuilder& builder, kiln::INetworkDefinition& net, kiln::IBuilderConfig& config) {
      return kiln_samples::addBertLayer(net, bert) && kiln_samples::addBertProfile(builder, config, s);
    };
    if (demoNetwork(logger, s.name, define, {input}, runs, row)) {
      rows.push_back(row);
    } else {
      ok = false;
    }
  }

  std::printf("Kiln %d.%d.%d, CPU target, %d timed runs each\n", KILN_VERSION_MAJOR, KILN_VERSION_MINOR,
              KILN_VERSION_PATCH, runs);
  std::printf("%-14s %-12s %-16s %8s %10s %9s %11s %14s\n", "network", "input", "layers (net>eng)", "plan KiB",
              "build ms", "load ms", "median ms", "checksum");
  for (Row const& r : rows) {
    std::string const layers = std::to_string(r.networkLayers) + " > " + std::to_string(r.engineLayers);
    std::printf("%-14s %-12s %-16s %8.1f %10.1f %9.2f %11.3f %14.6g\n", r.name.c_str(), r.shape.c_str(), layers.c_str(),
                static_cast<double>(r.planBytes) / 1024.0, r.buildMs, r.loadMs, r.medianMs, r.checksum);
  }
  return ok ? 0 : 1;
}
