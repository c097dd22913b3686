// Security properties of loading a plan (docs/security.md): a plan names tactics and ops, never code, so loading
// and running one opens no shared library; a plan whose tactic or op names are not Kiln's (a library path, a
// plugin op) is refused by name; and a plan's claimed sizes (arena, placements) are checked before anything is
// allocated for them.
#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "e2e/e2e_util.h"
#include "plan/plan.h"

namespace kiln_e2e {
namespace {

// The shared objects mapped into this process (/proc/self/maps), by path.
std::set<std::string> mappedLibraries() {
  std::set<std::string> libs;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    size_t const slash = line.find('/');
    if (slash != std::string::npos && line.find(".so", slash) != std::string::npos) {
      libs.insert(line.substr(slash));
    }
  }
  return libs;
}

std::vector<uint8_t> convPlan(CapturingLogger& logger) {
  return buildPlan(logger, [](kiln::IBuilder&, kiln::INetworkDefinition& net, kiln::IBuilderConfig&) {
    static std::vector<float> const w(2 * 2 * 3 * 3, 0.25F);
    kiln::ITensor* x = net.addInput("input", kiln::DataType::kFLOAT, kiln::Dims4(1, 2, 5, 5));
    if (x == nullptr) return false;
    auto* conv = net.addConvolutionNd(*x, 2, kiln::DimsHW{3, 3},
                                      kiln::Weights{kiln::DataType::kFLOAT, w.data(), int64_t(w.size())},
                                      kiln::Weights{kiln::DataType::kFLOAT, nullptr, 0});
    if (conv == nullptr) return false;
    // A second layer, so that the plan has an intermediate tensor in the activation arena.
    auto* relu = net.addActivation(*conv->getOutput(0), kiln::ActivationType::kRELU);
    if (relu == nullptr) return false;
    relu->getOutput(0)->setName("output");
    net.markOutput(*relu->getOutput(0));
    return true;
  });
}

// Rewrites a real plan through the plan reader and writer with `change` applied to what was read.
template <typename Change>
std::vector<uint8_t> rewritten(std::vector<uint8_t> const& plan, Change&& change) {
  auto info = kiln::plan::readPlan(plan.data(), plan.size());
  EXPECT_TRUE(info.isOk()) << info.status().toString();
  if (!info.isOk()) return {};
  change(info.value());
  auto bytes = kiln::plan::writePlan(info.value());
  EXPECT_TRUE(bytes.isOk()) << bytes.status().toString();
  if (!bytes.isOk()) return {};
  auto const* p = static_cast<uint8_t const*>(bytes.value().data());
  return std::vector<uint8_t>(p, p + bytes.value().size());
}

std::string refusal(kiln::IRuntime& runtime, CapturingLogger& logger, std::vector<uint8_t> const& bytes) {
  int const before = logger.errorCount();
  std::unique_ptr<kiln::ICudaEngine> engine(runtime.deserializeCudaEngine(bytes.data(), bytes.size()));
  EXPECT_EQ(engine, nullptr);
  return logger.errorCount() > before ? logger.lastError() : std::string("(no error)");
}

TEST(Security, LoadingAndRunningAPlanOpensNoLibrary) {
  CapturingLogger logger;
  std::vector<uint8_t> const plan = convPlan(logger);
  ASSERT_FALSE(plan.empty());
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  ASSERT_NE(runtime, nullptr);
  std::set<std::string> const before = mappedLibraries();
  ASSERT_FALSE(before.empty());
  {
    std::unique_ptr<kiln::ICudaEngine> engine = loadEngine(*runtime, plan);
    ASSERT_NE(engine, nullptr) << logger.lastError();
    std::unique_ptr<kiln::IExecutionContext> context(engine->createExecutionContext());
    ASSERT_NE(context, nullptr);
    std::vector<kiln_samples::HostTensor> outputs;
    ASSERT_TRUE(kiln_samples::runContext(*context, {randomInput("input", kiln::Dims4(1, 2, 5, 5), 1)}, outputs));
  }
  std::set<std::string> const after = mappedLibraries();
  for (std::string const& lib : after) {
    EXPECT_EQ(before.count(lib), 1U) << "loading a CPU plan mapped " << lib;
  }
}

TEST(Security, TacticAndOpNamesThatAreNotKilnsAreRefusedByName) {
  CapturingLogger logger(false);
  std::vector<uint8_t> const plan = convPlan(logger);
  ASSERT_FALSE(plan.empty());
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  ASSERT_NE(runtime, nullptr);
  std::set<std::string> const before = mappedLibraries();
  for (std::string const name : {"/tmp/libevil.so", "../libkiln_cuda.so.0", "convolution_onednn_direct\n"}) {
    std::vector<uint8_t> const bytes = rewritten(plan, [&](kiln::plan::PlanInfo& info) {
      for (auto const& n : info.graph->nodes()) {
        if (n->op != kiln::ir::OpType::kConstant) n->tactic = name;
      }
    });
    ASSERT_FALSE(bytes.empty());
    std::string const m = refusal(*runtime, logger, bytes);
    EXPECT_NE(m.find(name), std::string::npos) << m;
  }
  EXPECT_EQ(mappedLibraries(), before);
}

// Claimed sizes are checked against the runtime's memory cap before anything is allocated: an arena of 2^50
// bytes (the default cap is the machine's memory), a placement beyond the arena, a placement whose end overflows.
TEST(Security, ClaimedSizesFailFastWithANamedError) {
  CapturingLogger logger(false);
  std::vector<uint8_t> const plan = convPlan(logger);
  ASSERT_FALSE(plan.empty());
  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  ASSERT_NE(runtime, nullptr);

  std::vector<uint8_t> const hugeArena = rewritten(plan, [](kiln::plan::PlanInfo& info) { info.arenaSize = int64_t{1} << 50; });
  std::unique_ptr<kiln::ICudaEngine> engine = loadEngine(*runtime, hugeArena);
  if (engine != nullptr) {
    int const before = logger.errorCount();
    EXPECT_EQ(std::unique_ptr<kiln::IExecutionContext>(engine->createExecutionContext()), nullptr);
    ASSERT_GT(logger.errorCount(), before);
    EXPECT_NE(logger.lastError().find("memory limit"), std::string::npos) << logger.lastError();
  } else {
    EXPECT_NE(logger.lastError().find("arena"), std::string::npos) << logger.lastError();
  }

  auto original = kiln::plan::readPlan(plan.data(), plan.size());
  ASSERT_TRUE(original.isOk());
  ASSERT_GT(original.value().arenaSize, 0);
  std::vector<uint8_t> const outside = rewritten(plan, [](kiln::plan::PlanInfo& info) {
    for (auto& pl : info.placements) {
      if (pl.offset >= 0) pl.offset = info.arenaSize + 64;
    }
  });
  std::string m = refusal(*runtime, logger, outside);
  EXPECT_NE(m.find("arena"), std::string::npos) << m;

  std::vector<uint8_t> const overflow = rewritten(plan, [](kiln::plan::PlanInfo& info) {
    for (auto& pl : info.placements) {
      if (pl.offset >= 0) {
        pl.offset = std::numeric_limits<int64_t>::max() - 8;
        pl.size = 64;
      }
    }
  });
  m = refusal(*runtime, logger, overflow);
  EXPECT_NE(m.find("arena"), std::string::npos) << m;

  // The runtime's own cap: a plan larger than it is refused naming the limit.
  ASSERT_TRUE(runtime->setMemoryLimit(static_cast<int64_t>(plan.size() / 2)));
  m = refusal(*runtime, logger, plan);
  EXPECT_NE(m.find("memory limit"), std::string::npos) << m;
}

}  // namespace
}  // namespace kiln_e2e
