// CPU end to end: layers the memory plan runs in place (concatenations, Slice/Gather views) give fp64 results at
// builder levels 0 and 3, the builder logs each one, and shapes that vary between profile shapes stay copies.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "e2e/in_place_nets.h"

namespace kiln_e2e {
namespace {

using kiln_samples::HostTensor;

struct Ran {
  std::vector<std::string> log;
  std::vector<HostTensor> outputs;
};

Ran buildAndRun(DefineFn const& define, std::vector<HostTensor> const& inputs, BuildOptions options) {
  RecordingLogger logger;
  Ran r;
  auto plan = buildPlan(logger, define, options);
  r.log = logger.messages();
  if (plan.empty()) return r;
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  auto engine = loadEngine(*rt, plan);
  EXPECT_NE(engine, nullptr) << logger.lastError();
  if (!engine) return r;
  std::unique_ptr<kiln::IExecutionContext> ctx(engine->createExecutionContext());
  // Twice: the second run finds the arena as the first left it (stale tokens, an in-place output) and must still
  // give the same results.
  for (int rep = 0; rep < 2; ++rep) {
    r.outputs.clear();
    EXPECT_TRUE(kiln_samples::runContext(*ctx, inputs, r.outputs)) << logger.lastError();
  }
  return r;
}

std::vector<BuildOptions> levels() { return {BuildOptions{0, true}, BuildOptions{3, false}}; }

TEST(InPlace, ConcatenationOfTwoConvolutionsAlongChannels) {
  TwoConvConcat net;
  HostTensor x = randomInput("x", net.inputDims(), 3);
  for (BuildOptions o : levels()) {
    SCOPED_TRACE("level " + std::to_string(o.optimizationLevel));
    Ran r = buildAndRun(net.define(), {x}, o);
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_LE(normRelError(r.outputs[0].data, net.expected(x.data)), 1e-6);
    EXPECT_EQ(inPlaceLines(r.log, "'cat'"), 1);
    EXPECT_EQ(inPlaceLines(r.log, "inputs 0 at byte 0, 1 at byte 512 written in place in its output (not run)"), 1);
  }
}

TEST(InPlace, ClassTokenAndPatchTokensWithSliceAndGatherViews) {
  for (bool computed : {true, false}) {
    VitHead net(computed);
    HostTensor x = randomInput("x", net.inputDims(), 5);
    auto want = net.expected(x.data);
    for (BuildOptions o : levels()) {
      SCOPED_TRACE(std::string(computed ? "computed" : "constant") + " class token, level " +
                   std::to_string(o.optimizationLevel));
      Ran r = buildAndRun(net.define(), {x}, o);
      for (size_t i = 0; i < want.size(); ++i) {
        HostTensor const* t = findTensor(r.outputs, i == 0 ? "logits" : i == 1 ? "tokens" : "picked");
        ASSERT_NE(t, nullptr);
        EXPECT_LE(normRelError(t->data, want[i]), 1e-6) << t->name;
      }
      // The patch tokens (and a computed class token) are written in place: 256 bytes a token; a constant class
      // token is copied. h[:, 0:1], h[:, 1:] and h[:, 5] are views at bytes 0, 256 and 1280.
      EXPECT_EQ(
          inPlaceLines(r.log, computed ? "inputs 0 at byte 0, 1 at byte 256 written in place in its output (not run)"
                                       : "input 1 at byte 256 written in place in its output (the others copied)"),
          1);
      EXPECT_EQ(inPlaceLines(r.log, "is a view at byte 0 of"), 1);
      EXPECT_EQ(inPlaceLines(r.log, "is a view at byte 256 of"), 1);
      EXPECT_EQ(inPlaceLines(r.log, "is a view at byte 1280 of"), 1);
    }
  }
}

TEST(InPlace, ShapesThatVaryBetweenProfileShapesAreCopied) {
  VitHead net(true);
  HostTensor x = randomInput("x", net.inputDims(), 7);
  auto want = net.expected(x.data);
  Ran r = buildAndRun(net.define(true), {x}, BuildOptions{0, true});
  EXPECT_EQ(inPlaceLines(r.log, ""), 0);
  HostTensor const* t = findTensor(r.outputs, "picked");
  ASSERT_NE(t, nullptr);
  EXPECT_LE(normRelError(t->data, want[2]), 1e-6);
}

}  // namespace
}  // namespace kiln_e2e
