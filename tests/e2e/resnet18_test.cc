// End-to-end: a ResNet-18-shaped network with random weights, built through the public API for the CPU with
// the reference tactics (optimization levels 0 and 3), serialized, deserialized and run, against a naive
// fp64 forward pass written here over the same weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "e2e/e2e_util.h"
#include "ir/graph.h"
#include "plan/plan.h"

namespace kiln_e2e {
namespace {

using kiln_samples::BasicBlock;
using kiln_samples::ConvBn;
using kiln_samples::ResNetWeights;

// NCHW activations in fp64.
struct Act {
  int64_t n = 0, c = 0, h = 0, w = 0;
  std::vector<double> v;
  Act(int64_t n_, int64_t c_, int64_t h_, int64_t w_)
      : n(n_), c(c_), h(h_), w(w_), v(static_cast<size_t>(n_ * c_ * h_ * w_), 0.0) {}
  double& at(int64_t i, int64_t ch, int64_t y, int64_t x) {
    return v[static_cast<size_t>(((i * c + ch) * h + y) * w + x)];
  }
  double at(int64_t i, int64_t ch, int64_t y, int64_t x) const {
    return v[static_cast<size_t>(((i * c + ch) * h + y) * w + x)];
  }
};

// Convolution (zero padding, no bias) followed by the folded batch norm, optionally ReLU.
Act convBn(Act const& x, ConvBn const& p, bool relu) {
  int64_t const k = p.kernel;
  int64_t const oh = (x.h + 2 * p.padding - k) / p.stride + 1;
  int64_t const ow = (x.w + 2 * p.padding - k) / p.stride + 1;
  Act y(x.n, p.outChannels, oh, ow);
  for (int64_t i = 0; i < x.n; ++i) {
    for (int64_t o = 0; o < p.outChannels; ++o) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          double acc = 0;
          for (int64_t ci = 0; ci < p.inChannels; ++ci) {
            for (int64_t ky = 0; ky < k; ++ky) {
              int64_t const iy = oy * p.stride - p.padding + ky;
              if (iy < 0 || iy >= x.h) {
                continue;
              }
              for (int64_t kx = 0; kx < k; ++kx) {
                int64_t const ix = ox * p.stride - p.padding + kx;
                if (ix < 0 || ix >= x.w) {
                  continue;
                }
                acc +=
                    static_cast<double>(p.weights[static_cast<size_t>(((o * p.inChannels + ci) * k + ky) * k + kx)]) *
                    x.at(i, ci, iy, ix);
              }
            }
          }
          double r = acc * p.bnScale[static_cast<size_t>(o)] + p.bnShift[static_cast<size_t>(o)];
          y.at(i, o, oy, ox) = relu ? std::max(r, 0.0) : r;
        }
      }
    }
  }
  return y;
}

// 3x3 max pool, stride 2, padding 1 (padding never wins).
Act maxPool(Act const& x) {
  int64_t const oh = (x.h + 2 - 3) / 2 + 1;
  int64_t const ow = (x.w + 2 - 3) / 2 + 1;
  Act y(x.n, x.c, oh, ow);
  for (int64_t i = 0; i < x.n; ++i) {
    for (int64_t ch = 0; ch < x.c; ++ch) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          double m = -std::numeric_limits<double>::infinity();
          for (int64_t ky = 0; ky < 3; ++ky) {
            for (int64_t kx = 0; kx < 3; ++kx) {
              int64_t const iy = oy * 2 - 1 + ky;
              int64_t const ix = ox * 2 - 1 + kx;
              if (iy >= 0 && iy < x.h && ix >= 0 && ix < x.w) {
                m = std::max(m, x.at(i, ch, iy, ix));
              }
            }
          }
          y.at(i, ch, oy, ox) = m;
        }
      }
    }
  }
  return y;
}

Act basicBlock(Act const& x, BasicBlock const& b) {
  Act y = convBn(convBn(x, b.conv1, true), b.conv2, false);
  Act shortcut = b.hasDownsample ? convBn(x, b.downsample, false) : x;
  for (size_t i = 0; i < y.v.size(); ++i) {
    y.v[i] = std::max(y.v[i] + shortcut.v[i], 0.0);
  }
  return y;
}

// Returns {logits, probs}, each [batch][classes].
std::pair<std::vector<double>, std::vector<double>> referenceForward(ResNetWeights const& w,
                                                                     std::vector<float> const& input) {
  auto const& s = w.spec;
  Act x(s.batch, s.inChannels, s.height, s.width);
  for (size_t i = 0; i < input.size(); ++i) {
    x.v[i] = input[i];
  }
  x = maxPool(convBn(x, w.stem, true));
  for (BasicBlock const& b : w.blocks) {
    x = basicBlock(x, b);
  }
  std::vector<double> logits(static_cast<size_t>(s.batch * s.classes));
  std::vector<double> probs(logits.size());
  for (int64_t i = 0; i < s.batch; ++i) {
    std::vector<double> pooled(static_cast<size_t>(x.c));
    for (int64_t ch = 0; ch < x.c; ++ch) {
      double sum = 0;
      for (int64_t yy = 0; yy < x.h; ++yy) {
        for (int64_t xx = 0; xx < x.w; ++xx) {
          sum += x.at(i, ch, yy, xx);
        }
      }
      pooled[static_cast<size_t>(ch)] = sum / static_cast<double>(x.h * x.w);
    }
    double maxLogit = -std::numeric_limits<double>::infinity();
    for (int64_t k = 0; k < s.classes; ++k) {
      double acc = w.fcBias[static_cast<size_t>(k)];
      for (int64_t ch = 0; ch < x.c; ++ch) {
        acc += static_cast<double>(w.fcWeights[static_cast<size_t>(k * x.c + ch)]) * pooled[static_cast<size_t>(ch)];
      }
      logits[static_cast<size_t>(i * s.classes + k)] = acc;
      maxLogit = std::max(maxLogit, acc);
    }
    double denom = 0;
    for (int64_t k = 0; k < s.classes; ++k) {
      denom += std::exp(logits[static_cast<size_t>(i * s.classes + k)] - maxLogit);
    }
    for (int64_t k = 0; k < s.classes; ++k) {
      probs[static_cast<size_t>(i * s.classes + k)] =
          std::exp(logits[static_cast<size_t>(i * s.classes + k)] - maxLogit) / denom;
    }
  }
  return {logits, probs};
}

class ResNet18Test : public ::testing::TestWithParam<int32_t> {};

TEST_P(ResNet18Test, MatchesFp64Reference) {
  ResNetWeights const weights = kiln_samples::makeResNetWeights(kiln_samples::resNet18Spec(1, 64, 64, 1000));
  ASSERT_EQ(weights.blocks.size(), 8U);
  CapturingLogger logger;
  std::vector<uint8_t> const plan = buildPlan(
      logger,
      [&](kiln::IBuilder&, kiln::INetworkDefinition& net, kiln::IBuilderConfig&) {
        return kiln_samples::addResNet(net, weights);
      },
      BuildOptions{GetParam(), true});
  ASSERT_FALSE(plan.empty());

  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  ASSERT_NE(runtime, nullptr);
  std::unique_ptr<kiln::ICudaEngine> engine = loadEngine(*runtime, plan);
  ASSERT_NE(engine, nullptr) << logger.lastError();
  ASSERT_EQ(engine->getNbIOTensors(), 3);
  EXPECT_EQ(engine->getTensorIOMode("input"), kiln::TensorIOMode::kINPUT);
  EXPECT_EQ(engine->getTensorIOMode("logits"), kiln::TensorIOMode::kOUTPUT);
  EXPECT_EQ(engine->getTensorIOMode("probs"), kiln::TensorIOMode::kOUTPUT);
  EXPECT_TRUE(sameDims(engine->getTensorShape("input"), kiln::Dims4(1, 3, 64, 64)));
  EXPECT_TRUE(sameDims(engine->getTensorShape("logits"), kiln::Dims2(1, 1000)));
  EXPECT_EQ(engine->getTensorDataType("logits"), kiln::DataType::kFLOAT);
  EXPECT_STREQ(engine->getName(), "resnet18");

  std::unique_ptr<kiln::IExecutionContext> context(engine->createExecutionContext());
  ASSERT_NE(context, nullptr);
  kiln_samples::HostTensor const input = randomInput("input", kiln::Dims4(1, 3, 64, 64), 1818);
  std::vector<kiln_samples::HostTensor> outputs;
  ASSERT_TRUE(kiln_samples::runContext(*context, {input}, outputs)) << logger.lastError();

  auto const [refLogits, refProbs] = referenceForward(weights, input.data);
  auto const* logits = findTensor(outputs, "logits");
  auto const* probs = findTensor(outputs, "probs");
  ASSERT_NE(logits, nullptr);
  ASSERT_NE(probs, nullptr);
  EXPECT_LT(normRelError(logits->data, refLogits), 1e-5);
  EXPECT_LT(normRelError(probs->data, refProbs), 1e-5);
  EXPECT_EQ(logger.errorCount(), 0);
}

// With the oneDNN tactics: every convolution that reads its fused residual last writes its output over the
// residual's buffer (Tactic::outputMayReuseInput), so no copy runs; the results still match the fp64 forward pass.
TEST(ResNet18OneDnn, ConvolutionsWriteOverTheResidualsTheyReadLast) {
  ResNetWeights const weights = kiln_samples::makeResNetWeights(kiln_samples::resNet18Spec(1, 64, 64, 1000));
  CapturingLogger logger;
  std::vector<uint8_t> const plan = buildPlan(
      logger,
      [&](kiln::IBuilder&, kiln::INetworkDefinition& net, kiln::IBuilderConfig&) {
        return kiln_samples::addResNet(net, weights);
      },
      BuildOptions{3, false});
  ASSERT_FALSE(plan.empty());
  auto info = kiln::plan::readPlan(plan.data(), plan.size());
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  kiln::ir::Graph const& g = *info.value().graph;
  auto const& pl = info.value().placements;
  int residualConvs = 0, shared = 0;
  for (auto const& n : g.nodes()) {
    if (n->tactic.rfind("convolution_onednn_", 0) != 0 || !n->input(3)) continue;  // direct or Winograd
    ++residualConvs;
    kiln::ir::Value const* res = n->input(3);
    kiln::ir::Value const* y = n->outputs[0];
    // ResNet's residual is read by nothing after the block's last convolution.
    bool readLater = false;
    for (auto const& m : g.nodes())
      if (m->id > n->id)
        for (kiln::ir::Value const* v : m->inputs) readLater = readLater || v == res;
    if (readLater || pl[res->id].offset < 0 || pl[y->id].offset < 0) continue;
    EXPECT_EQ(pl[y->id].offset, pl[res->id].offset) << n->name;
    shared += pl[y->id].offset == pl[res->id].offset;
  }
  if (residualConvs == 0) GTEST_SKIP() << "no oneDNN convolution with a fused residual (built without oneDNN?)";
  EXPECT_GE(shared, 6) << "of " << residualConvs;

  std::unique_ptr<kiln::IRuntime> runtime(kiln::createInferRuntime(logger));
  std::unique_ptr<kiln::ICudaEngine> engine = loadEngine(*runtime, plan);
  ASSERT_NE(engine, nullptr) << logger.lastError();
  std::unique_ptr<kiln::IExecutionContext> context(engine->createExecutionContext());
  ASSERT_NE(context, nullptr);
  kiln_samples::HostTensor const input = randomInput("input", kiln::Dims4(1, 3, 64, 64), 1818);
  std::vector<kiln_samples::HostTensor> outputs;
  for (int rep = 0; rep < 2; ++rep) {  // the second run starts from the first run's arena contents
    ASSERT_TRUE(kiln_samples::runContext(*context, {input}, outputs)) << logger.lastError();
    auto const [refLogits, refProbs] = referenceForward(weights, input.data);
    auto const* logits = findTensor(outputs, "logits");
    ASSERT_NE(logits, nullptr);
    EXPECT_LT(normRelError(logits->data, refLogits), 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(OptimizationLevels, ResNet18Test, ::testing::Values(0, 3),
                         [](::testing::TestParamInfo<int32_t> const& param) {
                           return "Level" + std::to_string(param.param);
                         });

}  // namespace
}  // namespace kiln_e2e
