// End-to-end: one BERT encoder layer (hidden 64, 4 heads, FFN 256) with dynamic batch and sequence length,
// built through the public API for the CPU (reference tactics, levels 0 and 3), serialized, deserialized and
// run at several shapes with one context, against a naive fp64 forward pass (level 3 with both residual sums
// fused into the matmuls); shapes outside the profile fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "e2e/e2e_util.h"

namespace kiln_e2e {
namespace {

using kiln_samples::BertSpec;
using kiln_samples::BertWeights;

BertSpec testSpec() {
  BertSpec s;
  s.name = "bert_layer_test";
  s.hidden = 64;
  s.heads = 4;
  s.ffn = 256;
  s.minBatch = 1;
  s.optBatch = 2;
  s.maxBatch = 4;
  s.minSeq = 1;
  s.optSeq = 16;
  s.maxSeq = 32;
  s.seed = 64;
  return s;
}

// rows x in  times  in x out  plus bias.
std::vector<double> linear(std::vector<double> const& x, int64_t rows, int64_t in, int64_t out,
                           std::vector<float> const& w, std::vector<float> const& b) {
  std::vector<double> y(static_cast<size_t>(rows * out));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < out; ++o) {
      double acc = b[static_cast<size_t>(o)];
      for (int64_t i = 0; i < in; ++i) {
        acc += x[static_cast<size_t>(r * in + i)] * static_cast<double>(w[static_cast<size_t>(i * out + o)]);
      }
      y[static_cast<size_t>(r * out + o)] = acc;
    }
  }
  return y;
}

void layerNorm(std::vector<double>& x, int64_t rows, int64_t h, std::vector<float> const& scale,
               std::vector<float> const& bias, double eps) {
  for (int64_t r = 0; r < rows; ++r) {
    double* row = &x[static_cast<size_t>(r * h)];
    double mean = 0;
    for (int64_t i = 0; i < h; ++i) {
      mean += row[i];
    }
    mean /= static_cast<double>(h);
    double var = 0;
    for (int64_t i = 0; i < h; ++i) {
      var += (row[i] - mean) * (row[i] - mean);
    }
    var /= static_cast<double>(h);
    double const inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < h; ++i) {
      row[i] = (row[i] - mean) * inv * scale[static_cast<size_t>(i)] + bias[static_cast<size_t>(i)];
    }
  }
}

std::vector<double> referenceForward(BertWeights const& w, std::vector<float> const& input, int64_t batch,
                                     int64_t seq) {
  BertSpec const& s = w.spec;
  int64_t const h = s.hidden;
  int64_t const dh = h / s.heads;
  int64_t const rows = batch * seq;
  std::vector<double> x(input.begin(), input.end());
  std::vector<double> const q = linear(x, rows, h, h, w.wq, w.bq);
  std::vector<double> const k = linear(x, rows, h, h, w.wk, w.bk);
  std::vector<double> const v = linear(x, rows, h, h, w.wv, w.bv);
  double const scale = w.attentionScale[0];
  std::vector<double> context(static_cast<size_t>(rows * h), 0.0);
  std::vector<double> p(static_cast<size_t>(seq));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t head = 0; head < s.heads; ++head) {
      for (int64_t i = 0; i < seq; ++i) {
        double maxScore = -INFINITY;
        for (int64_t j = 0; j < seq; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < dh; ++d) {
            dot += q[static_cast<size_t>((b * seq + i) * h + head * dh + d)] *
                   k[static_cast<size_t>((b * seq + j) * h + head * dh + d)];
          }
          p[static_cast<size_t>(j)] = dot * scale;
          maxScore = std::max(maxScore, p[static_cast<size_t>(j)]);
        }
        double denom = 0;
        for (int64_t j = 0; j < seq; ++j) {
          p[static_cast<size_t>(j)] = std::exp(p[static_cast<size_t>(j)] - maxScore);
          denom += p[static_cast<size_t>(j)];
        }
        for (int64_t d = 0; d < dh; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < seq; ++j) {
            acc += p[static_cast<size_t>(j)] / denom * v[static_cast<size_t>((b * seq + j) * h + head * dh + d)];
          }
          context[static_cast<size_t>((b * seq + i) * h + head * dh + d)] = acc;
        }
      }
    }
  }
  std::vector<double> x1 = linear(context, rows, h, h, w.wo, w.bo);
  for (size_t i = 0; i < x1.size(); ++i) {
    x1[i] += x[i];
  }
  layerNorm(x1, rows, h, w.ln1Scale, w.ln1Bias, static_cast<double>(s.epsilon));
  std::vector<double> mid = linear(x1, rows, h, s.ffn, w.w1, w.b1);
  for (double& m : mid) {
    m = 0.5 * m * (1.0 + std::erf(m / std::sqrt(2.0)));
  }
  std::vector<double> y = linear(mid, rows, s.ffn, h, w.w2, w.b2);
  for (size_t i = 0; i < y.size(); ++i) {
    y[i] += x1[i];
  }
  layerNorm(y, rows, h, w.ln2Scale, w.ln2Bias, static_cast<double>(s.epsilon));
  return y;
}

struct BertEngine {
  std::unique_ptr<kiln::IRuntime> runtime;
  std::unique_ptr<kiln::ICudaEngine> engine;
};

BertEngine buildBert(CapturingLogger& logger, BertWeights const& weights, int32_t level) {
  BertEngine e;
  std::vector<uint8_t> const plan = buildPlan(
      logger,
      [&](kiln::IBuilder& builder, kiln::INetworkDefinition& net, kiln::IBuilderConfig& config) {
        return kiln_samples::addBertLayer(net, weights) && kiln_samples::addBertProfile(builder, config, weights.spec);
      },
      BuildOptions{level, true});
  if (plan.empty()) {
    return e;
  }
  e.runtime.reset(kiln::createInferRuntime(logger));
  if (e.runtime) {
    e.engine = loadEngine(*e.runtime, plan);
  }
  return e;
}

class BertLayerTest : public ::testing::TestWithParam<int32_t> {};

TEST_P(BertLayerTest, MatchesFp64ReferenceAtSeveralShapesWithOneContext) {
  BertWeights const weights = kiln_samples::makeBertWeights(testSpec());
  CapturingLogger logger;
  BertEngine e = buildBert(logger, weights, GetParam());
  ASSERT_NE(e.engine, nullptr) << logger.lastError();
  ASSERT_EQ(e.engine->getNbIOTensors(), 2);
  ASSERT_EQ(e.engine->getNbOptimizationProfiles(), 1);
  // Level 3 fuses both residual sums into the matmuls before them (input 3), so the plan carries them there.
  std::unique_ptr<kiln::IEngineInspector> inspector(e.engine->createEngineInspector());
  ASSERT_NE(inspector, nullptr);
  char const* info = inspector->getEngineInformation(kiln::LayerInformationFormat::kONELINE);
  ASSERT_NE(info, nullptr);
  std::string const layers = info;
  for (char const* sum : {"attention.residual", "ffn.residual"}) {
    EXPECT_EQ(layers.find(sum) == std::string::npos, GetParam() > 0) << sum << " in " << layers;
  }
  EXPECT_TRUE(sameDims(e.engine->getTensorShape("input"), kiln::Dims3(-1, -1, 64)));
  EXPECT_TRUE(sameDims(e.engine->getProfileShape("input", 0, kiln::OptProfileSelector::kMIN), kiln::Dims3(1, 1, 64)));
  EXPECT_TRUE(sameDims(e.engine->getProfileShape("input", 0, kiln::OptProfileSelector::kOPT), kiln::Dims3(2, 16, 64)));
  EXPECT_TRUE(sameDims(e.engine->getProfileShape("input", 0, kiln::OptProfileSelector::kMAX), kiln::Dims3(4, 32, 64)));

  std::unique_ptr<kiln::IExecutionContext> context(e.engine->createExecutionContext());
  ASSERT_NE(context, nullptr);
  struct Shape {
    int64_t batch, seq;
  };
  // The opt shape, odd smaller ones, the profile's min and max, and the opt shape again.
  for (Shape const shape : {Shape{2, 16}, Shape{1, 7}, Shape{3, 5}, Shape{1, 1}, Shape{4, 32}, Shape{2, 16}}) {
    SCOPED_TRACE("batch " + std::to_string(shape.batch) + ", seq " + std::to_string(shape.seq));
    kiln_samples::HostTensor const input = randomInput("input", kiln::Dims3(shape.batch, shape.seq, 64),
                                                       static_cast<uint64_t>(shape.batch * 100 + shape.seq));
    std::vector<kiln_samples::HostTensor> outputs;
    ASSERT_TRUE(kiln_samples::runContext(*context, {input}, outputs)) << logger.lastError();
    ASSERT_EQ(outputs.size(), 1U);
    EXPECT_TRUE(sameDims(outputs[0].dims, kiln::Dims3(shape.batch, shape.seq, 64)));
    std::vector<double> const ref = referenceForward(weights, input.data, shape.batch, shape.seq);
    EXPECT_LT(normRelError(outputs[0].data, ref), 1e-5);
  }
  EXPECT_EQ(logger.errorCount(), 0);
}

INSTANTIATE_TEST_SUITE_P(OptimizationLevels, BertLayerTest, ::testing::Values(0, 3),
                         [](::testing::TestParamInfo<int32_t> const& param) {
                           return "Level" + std::to_string(param.param);
                         });

TEST(BertLayerShapes, SetInputShapeOutsideTheProfileFailsWithAnError) {
  BertWeights const weights = kiln_samples::makeBertWeights(testSpec());
  CapturingLogger logger;
  BertEngine e = buildBert(logger, weights, 0);
  ASSERT_NE(e.engine, nullptr) << logger.lastError();
  std::unique_ptr<kiln::IExecutionContext> context(e.engine->createExecutionContext());
  ASSERT_NE(context, nullptr);
  logger.setEchoErrors(false);

  kiln::Dims bad[] = {
      kiln::Dims3(5, 16, 64),                              // batch above max
      kiln::Dims3(2, 33, 64),                              // seq above max
      kiln::Dims3(0, 16, 64),                              // batch below min
      kiln::Dims3(2, 0, 64),                               // seq below min
      kiln::Dims3(2, 16, 63),                              // static hidden dimension changed
      kiln::Dims2(2, 16),                                  // wrong rank
      kiln::Dims4(2, 16, 64, 1), kiln::Dims3(-1, 16, 64),  // a runtime shape must be concrete
  };
  for (kiln::Dims const& dims : bad) {
    SCOPED_TRACE("rank " + std::to_string(dims.nbDims) + ", d0 " + std::to_string(dims.d[0]) + ", d1 " +
                 std::to_string(dims.d[1]));
    int const before = logger.errorCount();
    EXPECT_FALSE(context->setInputShape("input", dims));
    EXPECT_GT(logger.errorCount(), before);
  }
  EXPECT_EQ(logger.internalErrorCount(), 0);

  // The context is still usable with a shape inside the profile.
  logger.setEchoErrors(true);
  kiln_samples::HostTensor const input = randomInput("input", kiln::Dims3(2, 9, 64), 29);
  std::vector<kiln_samples::HostTensor> outputs;
  ASSERT_TRUE(kiln_samples::runContext(*context, {input}, outputs)) << logger.lastError();
  ASSERT_EQ(outputs.size(), 1U);
  EXPECT_LT(normRelError(outputs[0].data, referenceForward(weights, input.data, 2, 9)), 1e-5);
}

}  // namespace
}  // namespace kiln_e2e
