// Real models (torchvision's resnet18, mobilenet_v2, efficientnet_b0, squeezenet1_1, a small ViT and a transformer
// encoder, exported by PyTorch at opset 17 with random weights) parsed, built and run by Kiln on the CPU, and
// compared with ONNX Runtime's CPU outputs for the same input: norm-relative error below 1e-5 in fp32.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/onnx_parser.h"

namespace {

using json = nlohmann::json;

class Logger : public kiln::ILogger {
 public:
  void log(Severity s, char const* msg) noexcept override {
    if (s <= Severity::kERROR && first.empty()) first = msg;
    if (s <= Severity::kWARNING) std::fprintf(stderr, "[kiln] %s\n", msg);
  }
  std::string first;
};

std::string dataDir() {
  if (char const* e = std::getenv("KILN_REAL_MODELS_DIR"); e && *e) return e;
  return KILN_REAL_MODELS_DIR;
}

std::vector<char> readFile(std::string const& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<float> readFloats(std::string const& path) {
  std::vector<char> b = readFile(path);
  std::vector<float> v(b.size() / sizeof(float));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(float));
  return v;
}

json manifest() {
  std::ifstream f(dataDir() + "/manifest.json");
  if (!f) return json::array();
  return json::parse(f, nullptr, /*allow_exceptions=*/false);
}

std::vector<std::string> modelNames() {
  std::vector<std::string> names;
  json m = manifest();
  if (m.is_array())
    for (auto const& e : m) names.push_back(e.value("name", ""));
  return names;
}

kiln::Dims toDims(std::vector<int64_t> const& v) {
  kiln::Dims d{};
  d.nbDims = static_cast<int32_t>(v.size());
  for (size_t i = 0; i < v.size(); ++i) d.d[i] = v[i];
  return d;
}

class RealModel : public ::testing::TestWithParam<std::string> {};

// Parses, builds at optimization level `level` (0: heuristic tactics, no timing; 3: the default passes with
// timed tactic choice) and runs one model; compares every output with ONNX Runtime's.
void runModel(json const& m, int32_t level) {
  std::string const dir = dataDir();
  Logger logger;
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  ASSERT_NE(builder, nullptr);
  std::unique_ptr<kiln::INetworkDefinition> network(builder->createNetworkV2(0));
  std::unique_ptr<kiln::onnx::IParser> parser(kiln::onnx::createParser(*network, logger));
  std::string const modelPath = dir + "/" + m.at("model").get<std::string>();
  ASSERT_TRUE(parser->parseFromFile(modelPath.c_str(), 0))
      << (parser->getNbErrors() > 0 ? parser->getError(0)->desc() : logger.first);

  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  config->setDefaultDeviceType(kiln::DeviceType::kCPU);
  config->clearFlag(kiln::BuilderFlag::kTF32);
  config->setBuilderOptimizationLevel(level);
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*network, *config));
  ASSERT_NE(plan, nullptr) << logger.first;
  parser.reset();

  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan->data(), plan->size()));
  ASSERT_NE(engine, nullptr) << logger.first;
  std::unique_ptr<kiln::IExecutionContext> context(engine->createExecutionContext());
  ASSERT_NE(context, nullptr) << logger.first;

  std::string const input = m.at("input").get<std::string>();
  std::vector<float> x = readFloats(dir + "/" + m.at("input_file").get<std::string>());
  kiln::Dims const inDims = toDims(m.at("input_shape").get<std::vector<int64_t>>());
  ASSERT_TRUE(context->setInputShape(input.c_str(), inDims)) << logger.first;
  ASSERT_TRUE(context->setTensorAddress(input.c_str(), x.data())) << logger.first;

  json const& outputs = m.at("outputs");
  std::vector<std::vector<float>> got(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string const name = outputs[i].at("name").get<std::string>();
    auto const shape = outputs[i].at("shape").get<std::vector<int64_t>>();
    kiln::Dims const d = context->getTensorShape(name.c_str());
    ASSERT_EQ(d.nbDims, static_cast<int32_t>(shape.size())) << name;
    int64_t n = 1;
    for (size_t k = 0; k < shape.size(); ++k) {
      ASSERT_EQ(d.d[k], shape[k]) << name << " axis " << k;
      n *= shape[k];
    }
    got[i].assign(static_cast<size_t>(n), std::nanf(""));
    ASSERT_TRUE(context->setTensorAddress(name.c_str(), got[i].data())) << logger.first;
  }
  ASSERT_TRUE(context->enqueueV3(nullptr)) << logger.first;

  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string const name = outputs[i].at("name").get<std::string>();
    std::vector<float> want = readFloats(dir + "/" + outputs[i].at("file").get<std::string>());
    ASSERT_EQ(got[i].size(), want.size()) << name;
    double diff = 0;
    double ref = 0;
    double maxAbs = 0;
    for (size_t k = 0; k < want.size(); ++k) {
      double const e = static_cast<double>(got[i][k]) - static_cast<double>(want[k]);
      ASSERT_TRUE(std::isfinite(got[i][k])) << name << "[" << k << "] = " << got[i][k];
      diff += e * e;
      ref += static_cast<double>(want[k]) * want[k];
      maxAbs = std::max(maxAbs, std::fabs(e));
    }
    double const rel = std::sqrt(diff) / std::max(std::sqrt(ref), 1e-30);
    std::printf("%-20s level %d output %-8s norm-relative error vs onnxruntime %s: %.3g (max abs %.3g)\n",
                m.at("name").get<std::string>().c_str(), level, name.c_str(),
                m.value("ort_version", std::string("?")).c_str(), rel, maxAbs);
    EXPECT_LT(rel, 1e-5) << name;
  }
}

json findModel(std::string const& name) {
  for (auto const& e : manifest())
    if (e.value("name", "") == name) return e;
  return {};
}

TEST_P(RealModel, MatchesOnnxRuntimeAtLevel0) {
  json m = findModel(GetParam());
  ASSERT_TRUE(m.contains("outputs")) << "no ONNX Runtime outputs for " << GetParam() << " in " << dataDir();
  runModel(m, 0);
}

TEST_P(RealModel, MatchesOnnxRuntimeAtLevel3) {
  json m = findModel(GetParam());
  ASSERT_TRUE(m.contains("outputs")) << "no ONNX Runtime outputs for " << GetParam() << " in " << dataDir();
  runModel(m, 3);
}

// The six models must all be there: a missing export is a failure, not a smaller test.
TEST(RealModels, AllSixExportedWithOracleOutputs) {
  std::vector<std::string> want{"resnet18", "mobilenet_v2", "efficientnet_b0", "squeezenet1_1", "vit_small",
                                "transformer_encoder"};
  EXPECT_EQ(modelNames(), want) << "manifest: " << dataDir() << "/manifest.json";
}

INSTANTIATE_TEST_SUITE_P(Torchvision, RealModel, ::testing::ValuesIn(modelNames()),
                         [](auto const& p) { return p.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RealModel);

}  // namespace
