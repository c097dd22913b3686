// Tests of --inspect: a plan built here is summarized from its leading bytes only, and broken files are
// refused with a reason.
#include "inspect.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "engine_build.h"
#include "tensor_io.h"

namespace kilnexec {
namespace {

class Inspect : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kilnexec_inspect_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    Options o;
    o.fp16 = true;
    NetworkSource source;
    std::string error;
    ASSERT_TRUE(createNetwork(o, logger_, source, error)) << error;
    std::vector<std::string> notes;
    ASSERT_TRUE(buildPlan(o, BuildRequest{}, source, logger_, plan_, notes, error)) << error;
    path_ = (dir_ / "net.plan").string();
    ASSERT_TRUE(writeFile(path_, plan_.data(), plan_.size(), error));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ToolLogger logger_{false};
  std::filesystem::path dir_;
  std::string path_;
  std::vector<uint8_t> plan_;
};

TEST_F(Inspect, ReadsTheHeadOnly) {
  std::vector<uint8_t> bytes;
  uint64_t fileSize = 0;
  std::string error;
  ASSERT_TRUE(readPlanPrefix(path_, bytes, fileSize, error)) << error;
  EXPECT_EQ(fileSize, plan_.size());
  EXPECT_LT(bytes.size(), plan_.size() / 2);  // the weights (most of the plan) are not read
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), plan_.begin()));
}

TEST_F(Inspect, Summary) {
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger_));
  std::unique_ptr<kiln::ICudaEngine> engine(runtime->deserializeCudaEngine(plan_.data(), plan_.size()));
  ASSERT_NE(engine, nullptr);
  std::string text, error;
  ASSERT_TRUE(inspectPlan(path_, logger_, text, error)) << error;
  for (std::string const& s :
       {std::string("=== Plan small_resnet ==="), std::string("target cpu"),
        std::string("Builder flags (precisions): FP16, TF32"),
        "Layers: " + std::to_string(engine->getNbLayers()) + " (", std::string("Input  input: float32 1x3x64x64"),
        std::string("Output probs: float32 1x10"), std::string("Plugins: none"),
        std::string("Profile 0 input: min 1x3x64x64, opt 1x3x64x64, max 1x3x64x64"), std::string("Section graph"),
        std::string("(verified)"), std::string("(not read)"), "File: " + std::to_string(plan_.size()) + " bytes"})
    EXPECT_NE(text.find(s), std::string::npos) << s << "\n" << text;
}

TEST_F(Inspect, RefusesBrokenFiles) {
  std::string text, error;
  EXPECT_FALSE(inspectPlan((dir_ / "missing.plan").string(), logger_, text, error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;

  std::string const junk = (dir_ / "junk.plan").string();
  ASSERT_TRUE(writeFile(junk, "not a plan at all", 17, error));
  EXPECT_FALSE(inspectPlan(junk, logger_, text, error));
  EXPECT_NE(error.find("not a Kiln plan"), std::string::npos) << error;

  std::vector<uint8_t> cut(plan_.begin(), plan_.begin() + 200);  // header, part of the graph section
  std::string const truncated = (dir_ / "cut.plan").string();
  ASSERT_TRUE(writeFile(truncated, cut.data(), cut.size(), error));
  EXPECT_FALSE(inspectPlan(truncated, logger_, text, error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;

  std::vector<uint8_t> flipped = plan_;
  flipped[300] ^= 0x40;  // inside the graph section
  std::string const bad = (dir_ / "bad.plan").string();
  ASSERT_TRUE(writeFile(bad, flipped.data(), flipped.size(), error));
  EXPECT_FALSE(inspectPlan(bad, logger_, text, error));
  EXPECT_NE(error.find("checksum"), std::string::npos) << error;
}

}  // namespace
}  // namespace kilnexec
