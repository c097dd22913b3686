// libFuzzer target: ONNX model bytes -> kiln::onnx parse -> build for the CPU (level 0, memory-capped) -> load
// and run once on zero inputs. Any crash, leak or sanitizer report is a bug; refusals are expected.
#include <kiln/kiln.h>
#include <kiln/onnx_parser.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "fuzz_util.h"

namespace {

// Dynamic input dims get the profile [1, 1, 2] so that the build has a profile to plan for.
bool addProfile(kiln::IBuilder& builder, kiln::INetworkDefinition& network, kiln::IBuilderConfig& config) {
  kiln::IOptimizationProfile* profile = nullptr;
  for (int32_t i = 0; i < network.getNbInputs(); ++i) {
    kiln::ITensor* input = network.getInput(i);
    if (input == nullptr) return false;
    kiln::Dims dims = input->getDimensions();
    if (dims.nbDims < 0 || dims.nbDims > kiln::Dims::MAX_DIMS) return false;
    bool dynamic = false;
    kiln::Dims lo = dims;
    kiln::Dims hi = dims;
    for (int32_t d = 0; d < dims.nbDims; ++d) {
      if (dims.d[d] < 0) {
        dynamic = true;
        lo.d[d] = 1;
        hi.d[d] = 2;
      }
    }
    if (!dynamic || input->isShapeTensor()) continue;
    if (profile == nullptr) profile = builder.createOptimizationProfile();
    if (profile == nullptr) return false;
    profile->setDimensions(input->getName(), kiln::OptProfileSelector::kMIN, lo);
    profile->setDimensions(input->getName(), kiln::OptProfileSelector::kOPT, lo);
    profile->setDimensions(input->getName(), kiln::OptProfileSelector::kMAX, hi);
  }
  return profile == nullptr || config.addOptimizationProfile(profile) >= 0;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kiln_fuzz::initEnvironment();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(uint8_t const* data, size_t size) {
  static kiln_fuzz::QuietLogger logger;
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  if (!builder || !builder->setMemoryLimit(kiln_fuzz::kMemoryLimit)) return 0;
  std::unique_ptr<kiln::INetworkDefinition> network(builder->createNetworkV2(0));
  if (!network) return 0;
  std::unique_ptr<kiln::onnx::IParser> parser(kiln::onnx::createParser(*network, logger));
  if (!parser || !parser->parse(data, size, nullptr)) return 0;
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  if (!config) return 0;
  config->setDefaultDeviceType(kiln::DeviceType::kCPU);
  config->setBuilderOptimizationLevel(0);
  if (!addProfile(*builder, *network, *config)) return 0;
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*network, *config));
  if (!plan) return 0;
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  if (!runtime || !runtime->setMemoryLimit(kiln_fuzz::kMemoryLimit)) return 0;
  std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan->data(), plan->size()));
  if (engine) kiln_fuzz::runOnce(*engine);
  return 0;
}
