// End-to-end: misuse of the public API fails cleanly: the call returns false/nullptr/an invalid value, and an
// error reaches the logger (or the attached IErrorRecorder); never a crash and never an internal error.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "e2e/e2e_util.h"

namespace kiln_e2e {
namespace {

// input [-1, 8] -> ReLU -> output, one profile with batch 1..4.
bool defineDynamicRelu(kiln::IBuilder& builder, kiln::INetworkDefinition& net, kiln::IBuilderConfig& config) {
  kiln::ITensor* x = net.addInput("input", kiln::DataType::kFLOAT, kiln::Dims2(-1, 8));
  kiln::IActivationLayer* relu = x == nullptr ? nullptr : net.addActivation(*x, kiln::ActivationType::kRELU);
  if (relu == nullptr) {
    return false;
  }
  relu->getOutput(0)->setName("output");
  net.markOutput(*relu->getOutput(0));
  kiln::IOptimizationProfile* profile = builder.createOptimizationProfile();
  return profile != nullptr && profile->setDimensions("input", kiln::OptProfileSelector::kMIN, kiln::Dims2(1, 8)) &&
         profile->setDimensions("input", kiln::OptProfileSelector::kOPT, kiln::Dims2(2, 8)) &&
         profile->setDimensions("input", kiln::OptProfileSelector::kMAX, kiln::Dims2(4, 8)) &&
         config.addOptimizationProfile(profile) == 0;
}

// A runtime, engine and context of the dynamic ReLU network, all reporting to `recorder` when given.
class ApiErrors : public ::testing::Test {
 protected:
  void load(kiln::IErrorRecorder* recorder) {
    std::vector<uint8_t> const plan = buildPlan(logger_, defineDynamicRelu);
    ASSERT_FALSE(plan.empty());
    runtime_.reset(kiln::createInferRuntime(logger_));
    ASSERT_NE(runtime_, nullptr);
    if (recorder != nullptr) {
      runtime_->setErrorRecorder(recorder);
    }
    engine_ = loadEngine(*runtime_, plan);
    ASSERT_NE(engine_, nullptr) << logger_.lastError();
    context_.reset(engine_->createExecutionContext());
    ASSERT_NE(context_, nullptr);
    logger_.setEchoErrors(false);
  }

  void TearDown() override {
    context_.reset();
    engine_.reset();
    runtime_.reset();
    EXPECT_EQ(logger_.internalErrorCount(), 0);
  }

  // Errors seen by the logger since `before`.
  int newErrors(int before) const { return logger_.errorCount() - before; }

  CapturingLogger logger_;
  std::unique_ptr<kiln::IRuntime> runtime_;
  std::unique_ptr<kiln::ICudaEngine> engine_;
  std::unique_ptr<kiln::IExecutionContext> context_;
  float in_[32] = {};
  float out_[32] = {};
};

// Evaluates `expr`, expects it to equal `expected`, and expects at least one new logged error.
#define EXPECT_FAILS_WITH_ERROR(expr, expected) \
  do {                                          \
    int const before_ = logger_.errorCount();   \
    EXPECT_EQ((expr), (expected)) << #expr;     \
    EXPECT_GT(newErrors(before_), 0) << #expr;  \
  } while (0)

TEST_F(ApiErrors, UnknownTensorNames) {
  load(nullptr);
  EXPECT_FAILS_WITH_ERROR(context_->setTensorAddress("no_such_tensor", out_), false);
  EXPECT_FAILS_WITH_ERROR(context_->setInputTensorAddress("no_such_tensor", in_), false);
  EXPECT_FAILS_WITH_ERROR(context_->setInputShape("no_such_tensor", kiln::Dims2(2, 8)), false);
  EXPECT_FAILS_WITH_ERROR(context_->setInputShape(nullptr, kiln::Dims2(2, 8)), false);
  EXPECT_FAILS_WITH_ERROR(context_->setTensorAddress(nullptr, out_), false);
  EXPECT_FAILS_WITH_ERROR(engine_->getTensorShape("no_such_tensor").nbDims, -1);
  EXPECT_EQ(engine_->getTensorIOMode("no_such_tensor"), kiln::TensorIOMode::kNONE);
  EXPECT_EQ(engine_->getIOTensorName(2), nullptr);
  EXPECT_EQ(engine_->getIOTensorName(-1), nullptr);
  EXPECT_EQ(context_->getTensorShape("no_such_tensor").nbDims, -1);
  // An output is not an input.
  EXPECT_FAILS_WITH_ERROR(context_->setInputShape("output", kiln::Dims2(2, 8)), false);
}

TEST_F(ApiErrors, EnqueueBeforeShapesOrAddressesAreSet) {
  load(nullptr);
  EXPECT_FALSE(context_->allInputDimensionsSpecified());
  ASSERT_TRUE(context_->setTensorAddress("input", in_));
  ASSERT_TRUE(context_->setTensorAddress("output", out_));
  EXPECT_FAILS_WITH_ERROR(context_->enqueueV3(nullptr), false);  // input shape not set

  ASSERT_TRUE(context_->setInputShape("input", kiln::Dims2(2, 8)));
  EXPECT_TRUE(context_->allInputDimensionsSpecified());
  std::unique_ptr<kiln::IExecutionContext> fresh(engine_->createExecutionContext());
  ASSERT_NE(fresh, nullptr);
  ASSERT_TRUE(fresh->setInputShape("input", kiln::Dims2(2, 8)));
  EXPECT_FAILS_WITH_ERROR(fresh->enqueueV3(nullptr), false);  // no addresses at all
  ASSERT_TRUE(fresh->setTensorAddress("input", in_));
  EXPECT_FAILS_WITH_ERROR(fresh->enqueueV3(nullptr), false);  // output address missing
  EXPECT_FAILS_WITH_ERROR(fresh->executeV2(nullptr), false);

  // Once everything is set, the same context runs and computes ReLU.
  for (int i = 0; i < 16; ++i) {
    in_[i] = static_cast<float>(i - 8);
  }
  ASSERT_TRUE(fresh->setTensorAddress("output", out_));
  ASSERT_TRUE(fresh->enqueueV3(nullptr)) << logger_.lastError();
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(out_[i], std::max(in_[i], 0.0F)) << i;
  }
}

TEST_F(ApiErrors, MisalignedAddressIsRefused) {
  load(nullptr);
  auto* misaligned = reinterpret_cast<float*>(reinterpret_cast<char*>(in_) + 1);
  EXPECT_FAILS_WITH_ERROR(context_->setTensorAddress("input", misaligned), false);
}

TEST_F(ApiErrors, WrongOptimizationProfileIndex) {
  load(nullptr);
  EXPECT_EQ(engine_->getNbOptimizationProfiles(), 1);
  EXPECT_FAILS_WITH_ERROR(context_->setOptimizationProfileAsync(1, nullptr), false);
  EXPECT_FAILS_WITH_ERROR(context_->setOptimizationProfileAsync(-1, nullptr), false);
  EXPECT_EQ(context_->getOptimizationProfile(), 0);
  EXPECT_TRUE(context_->setOptimizationProfileAsync(0, nullptr)) << logger_.lastError();
  EXPECT_EQ(engine_->getProfileShape("input", 1, kiln::OptProfileSelector::kMIN).nbDims, -1);
  EXPECT_EQ(engine_->getDeviceMemorySizeForProfileV2(1), -1);
}

TEST_F(ApiErrors, ShapesOutsideTheProfile) {
  load(nullptr);
  EXPECT_FAILS_WITH_ERROR(context_->setInputShape("input", kiln::Dims2(5, 8)), false);
  EXPECT_FAILS_WITH_ERROR(context_->setInputShape("input", kiln::Dims2(0, 8)), false);
  EXPECT_FAILS_WITH_ERROR(context_->setInputShape("input", kiln::Dims2(2, 9)), false);
  EXPECT_FAILS_WITH_ERROR(context_->setInputShape("input", kiln::Dims3(2, 8, 1)), false);
  kiln::Dims bogus{};
  bogus.nbDims = 9;  // above MAX_DIMS
  EXPECT_FAILS_WITH_ERROR(context_->setInputShape("input", bogus), false);
  bogus.nbDims = -1;
  EXPECT_FAILS_WITH_ERROR(context_->setInputShape("input", bogus), false);
}

TEST_F(ApiErrors, ErrorsGoToTheAttachedRecorderAndReferencesAreReleased) {
  CapturingRecorder recorder;
  load(&recorder);
  EXPECT_EQ(runtime_->getErrorRecorder(), &recorder);
  EXPECT_GT(recorder.refCount(), 0);
  int const before = recorder.getNbErrors();
  EXPECT_FALSE(context_->setTensorAddress("no_such_tensor", out_));
  ASSERT_GT(recorder.getNbErrors(), before);
  EXPECT_EQ(recorder.getErrorCode(recorder.getNbErrors() - 1), kiln::ErrorCode::kINVALID_ARGUMENT);
  EXPECT_NE(std::string(recorder.getErrorDesc(recorder.getNbErrors() - 1)), "");
  EXPECT_LE(std::string(recorder.getErrorDesc(recorder.getNbErrors() - 1)).size(),
            kiln::IErrorRecorder::kMAX_DESC_LENGTH);

  int const before2 = recorder.getNbErrors();
  EXPECT_FALSE(context_->setOptimizationProfileAsync(3, nullptr));
  EXPECT_GT(recorder.getNbErrors(), before2);

  context_.reset();
  engine_.reset();
  runtime_.reset();
  EXPECT_EQ(recorder.refCount(), 0) << "every incRefCount must be matched by a decRefCount";
}

TEST_F(ApiErrors, BuilderAndRuntimeMisuse) {
  logger_.setEchoErrors(false);
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger_));
  ASSERT_NE(builder, nullptr);
  int before = logger_.errorCount();
  EXPECT_EQ(std::unique_ptr<kiln::INetworkDefinition>(builder->createNetworkV2(1U << 20U)), nullptr);
  EXPECT_GT(newErrors(before), 0);
  EXPECT_FAILS_WITH_ERROR(builder->setMaxThreads(0), false);

  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  ASSERT_NE(config, nullptr);
  config->setDefaultDeviceType(kiln::DeviceType::kCPU);

  // A network without outputs does not build.
  {
    std::unique_ptr<kiln::INetworkDefinition> net(builder->createNetworkV2(0));
    ASSERT_NE(net, nullptr);
    ASSERT_NE(net->addInput("input", kiln::DataType::kFLOAT, kiln::Dims2(2, 8)), nullptr);
    EXPECT_FAILS_WITH_ERROR(std::unique_ptr<kiln::IHostMemory>(builder->buildSerializedNetwork(*net, *config)),
                            nullptr);
  }
  // Two inputs with one name.
  {
    std::unique_ptr<kiln::INetworkDefinition> net(builder->createNetworkV2(0));
    ASSERT_NE(net, nullptr);
    ASSERT_NE(net->addInput("input", kiln::DataType::kFLOAT, kiln::Dims2(2, 8)), nullptr);
    EXPECT_FAILS_WITH_ERROR(net->addInput("input", kiln::DataType::kFLOAT, kiln::Dims2(2, 8)),
                            static_cast<kiln::ITensor*>(nullptr));
  }
  // Dynamic input without an optimization profile.
  {
    std::unique_ptr<kiln::INetworkDefinition> net(builder->createNetworkV2(0));
    ASSERT_NE(net, nullptr);
    kiln::ITensor* x = net->addInput("input", kiln::DataType::kFLOAT, kiln::Dims2(-1, 8));
    ASSERT_NE(x, nullptr);
    kiln::IActivationLayer* relu = net->addActivation(*x, kiln::ActivationType::kRELU);
    ASSERT_NE(relu, nullptr);
    net->markOutput(*relu->getOutput(0));
    EXPECT_FAILS_WITH_ERROR(std::unique_ptr<kiln::IHostMemory>(builder->buildSerializedNetwork(*net, *config)),
                            nullptr);
  }
  // Convolution weights of the wrong size: refused when added, or when built.
  {
    std::unique_ptr<kiln::INetworkDefinition> net(builder->createNetworkV2(0));
    ASSERT_NE(net, nullptr);
    kiln::ITensor* x = net->addInput("input", kiln::DataType::kFLOAT, kiln::Dims4(1, 3, 8, 8));
    ASSERT_NE(x, nullptr);
    std::vector<float> const w(7, 1.0F);  // needs 4 * 3 * 3 * 3
    before = logger_.errorCount();
    kiln::IConvolutionLayer* conv =
        net->addConvolutionNd(*x, 4, kiln::DimsHW(3, 3), kiln::Weights{kiln::DataType::kFLOAT, w.data(), 7},
                              kiln::Weights{kiln::DataType::kFLOAT, nullptr, 0});
    if (conv != nullptr) {
      net->markOutput(*conv->getOutput(0));
      EXPECT_EQ(std::unique_ptr<kiln::IHostMemory>(builder->buildSerializedNetwork(*net, *config)), nullptr);
    }
    EXPECT_GT(newErrors(before), 0);
  }
  // Profile min > max.
  {
    kiln::IOptimizationProfile* profile = builder->createOptimizationProfile();
    ASSERT_NE(profile, nullptr);
    ASSERT_TRUE(profile->setDimensions("input", kiln::OptProfileSelector::kMIN, kiln::Dims2(4, 8)));
    EXPECT_FALSE(profile->setDimensions("input", kiln::OptProfileSelector::kMAX, kiln::Dims2(2, 8)));
  }

  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger_));
  ASSERT_NE(runtime, nullptr);
  EXPECT_FAILS_WITH_ERROR(runtime->setMaxThreads(0), false);
  EXPECT_FAILS_WITH_ERROR(runtime->setMemoryLimit(-1), false);
  // A header/library version mismatch is refused at creation.
  before = logger_.errorCount();
  EXPECT_EQ(kiln::createInferRuntime_INTERNAL(&logger_, KILN_VERSION_INT(KILN_VERSION_MAJOR + 1, 0, 0)), nullptr);
  EXPECT_GT(newErrors(before), 0);
}

}  // namespace
}  // namespace kiln_e2e

namespace kiln_e2e {
namespace {

// Where the CUDA backend cannot run (no libkiln_cuda.so, no device), a GPU build fails with a message saying
// why, not a crash; on a GPU machine the build succeeds and this test has nothing to check.
TEST(GpuTarget, UnavailableGpuIsAClearError) {
  CapturingLogger logger(false);
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> network(builder->createNetworkV2(0));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  config->setDefaultDeviceType(kiln::DeviceType::kGPU);
  auto* in = network->addInput("x", kiln::DataType::kFLOAT, kiln::Dims{1, {4}});
  auto* act = network->addActivation(*in, kiln::ActivationType::kRELU);
  network->markOutput(*act->getOutput(0));
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*network, *config));
  if (plan) GTEST_SKIP() << "a CUDA device is present";
  std::string const e = logger.lastError();
  std::printf("the error: %s\n", e.c_str());
  EXPECT_NE(e.find("CUDA backend"), std::string::npos) << e;
  EXPECT_NE(e.find("kCPU"), std::string::npos) << e;  // says how to build for the CPU instead
  EXPECT_EQ(logger.internalErrorCount(), 0);
}

}  // namespace
}  // namespace kiln_e2e
