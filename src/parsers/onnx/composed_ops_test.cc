// Tests of ONNX importers composed from public layers: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss,
// LayerNormalization's Mean/InvStdDev outputs, Dropout's mask, BatchNormalization with run-time parameters and
// training mode, Clip with run-time bounds, CastLike, Size, ConstantOfShape and the preview training optimizers.
// Expected values were computed with numpy following the ONNX operator definitions.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "onnx_test_util.h"

namespace {

using namespace kiln::onnx::test;  // NOLINT: test helpers
using kiln::Dims;

constexpr int32_t kInt64 = ::onnx::TensorProto::INT64;

/// A model that imports only the ai.onnx.preview.training domain (as ONNX's optimizer tests do).
ModelBuilder trainingModel() {
  ModelBuilder m;
  m.model().clear_opset_import();
  auto* o = m.model().add_opset_import();
  o->set_domain("ai.onnx.preview.training");
  o->set_version(1);
  return m;
}

std::vector<float> const kNllInput = {-1.5F, -1.25F, -1, -0.75F, -0.5F, -0.25F, 0, 0.25F, 0.5F, 0.75F, 1, 1.25F};

TEST(OnnxComposedOps, NllLossWeightedMeanWithNegativeIgnoreIndex) {
  ModelBuilder m;
  m.input("x", {2, 3, 2}).input("t", {2, 2}, kInt64).initF("w", {3}, {0.5F, 1, 2});
  m.output("mean").output("none");
  auto& mean = m.node("NegativeLogLikelihoodLoss", {"x", "t", "w"}, {"mean"});
  attr(mean, "ignore_index", int64_t{-1});
  auto& none = m.node("NegativeLogLikelihoodLoss", {"x", "t", "w"}, {"none"});
  attr(none, "ignore_index", int64_t{-1});
  attr(none, "reduction", std::string("none"));
  auto outs = run(m.bytes(), {{"x", {Dims{3, {2, 3, 2}}, kNllInput}}}, {{"t", {Dims{2, {2, 2}}, {0, 2, -1, 1}}}});
  ASSERT_FALSE(outs.empty());
  EXPECT_EQ(outs["mean"].dims.nbDims, 0);
  // Mean divides by the applied weights (0.5 + 2 + 1), not by the element count.
  expectNear(outs["mean"].v, {0.14285714285714285});
  EXPECT_EQ(outs["none"].dims.nbDims, 2);
  expectNear(outs["none"].v, {0.75, 0.5, 0, -0.75});
}

TEST(OnnxComposedOps, NllLossUnweightedSumAndIgnoredHighIndex) {
  ModelBuilder m;
  m.input("x", {2, 3, 2}).input("t", {2, 2}, kInt64).output("sum").output("mean");
  auto& sum = m.node("NegativeLogLikelihoodLoss", {"x", "t"}, {"sum"});
  attr(sum, "reduction", std::string("sum"));
  attr(sum, "ignore_index", int64_t{7});
  // Target 7 lies outside [0, 3) but equals ignore_index, so it is skipped (not an out-of-range gather).
  auto& mean = m.node("NegativeLogLikelihoodLoss", {"x", "t"}, {"mean"});
  attr(mean, "ignore_index", int64_t{7});
  auto outs = run(m.bytes(), {{"x", {Dims{3, {2, 3, 2}}, kNllInput}}}, {{"t", {Dims{2, {2, 2}}, {0, 2, 1, 1}}}});
  ASSERT_FALSE(outs.empty());
  // -(x[0,0,0] + x[0,2,1] + x[1,1,0] + x[1,1,1]) = 1.5 + 0.25 - 0.5 - 0.75.
  expectNear(outs["sum"].v, {0.5});
  expectNear(outs["mean"].v, {0.125});
  auto ignored = run(m.bytes(), {{"x", {Dims{3, {2, 3, 2}}, kNllInput}}}, {{"t", {Dims{2, {2, 2}}, {0, 2, 7, 1}}}});
  ASSERT_FALSE(ignored.empty());
  // The ignored element leaves the mean's denominator: (1.5 + 0.25 - 0.75) / 3.
  expectNear(ignored["sum"].v, {1.0});
  expectNear(ignored["mean"].v, {1.0 / 3.0});
}

TEST(OnnxComposedOps, NllLossRejectsBadReductionAndTargetRank) {
  ModelBuilder bad;
  bad.input("x", {2, 3}).input("t", {2}, kInt64).output("y");
  attr(bad.node("NegativeLogLikelihoodLoss", {"x", "t"}, {"y"}, "nll"), "reduction", std::string("avg"));
  ParseResult r = parseOnly(bad.bytes());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.desc.find("'nll'"), std::string::npos) << r.desc;
  EXPECT_NE(r.desc.find("reduction 'avg'"), std::string::npos) << r.desc;
  ModelBuilder rank;
  rank.input("x", {2, 3}).input("t", {2, 1}, kInt64).output("y");
  rank.node("NegativeLogLikelihoodLoss", {"x", "t"}, {"y"}, "nll");
  r = parseOnly(rank.bytes());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.desc.find("target rank 2"), std::string::npos) << r.desc;
}

TEST(OnnxComposedOps, SoftmaxCrossEntropySumWithLogProb) {
  ModelBuilder m;
  m.input("x", {3, 4}).input("t", {3}, kInt64).output("loss").output("log_prob");
  attr(m.node("SoftmaxCrossEntropyLoss", {"x", "t"}, {"loss", "log_prob"}), "reduction", std::string("sum"));
  auto outs = run(m.bytes(), {{"x", {Dims{2, {3, 4}}, {1, 2, 0.5F, -1, 0, 0, 3, 1, -2, 1.5F, 0.25F, 0.75F}}}},
                  {{"t", {Dims{1, {3}}, {1, 2, 0}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["loss"].v, {4.787874744913331});
  expectNear(outs["log_prob"].v, {-1.4951819, -0.495181898, -1.9951819, -3.4951819, -3.21099762, -3.21099762,
                                  -0.210997623, -2.21099762, -4.08169522, -0.581695224, -1.83169522, -1.33169522});
}

TEST(OnnxComposedOps, LayerNormalizationMeanAndInvStdDev) {
  ModelBuilder m;
  m.input("x", {2, 2, 3});
  m.initF("w", {2, 3}, {0.5F, 0.7F, 0.9F, 1.1F, 1.3F, 1.5F}).initF("b", {2, 3}, {-0.3F, -0.2F, -0.1F, 0, 0.1F, 0.2F});
  m.output("y").output("mean").output("inv");
  attr(m.node("LayerNormalization", {"x", "w", "b"}, {"y", "mean", "inv"}), "axis", int64_t{-2});
  std::vector<float> const x = {0,           0.1F,        0.282842712F, 0.519615242F, 0.8F,        1.11803399F,
                                1.46969385F, 1.85202592F, 2.2627417F,   2.7F,         3.16227766F, 3.64828727F};
  auto outs = run(m.bytes(), {{"x", {Dims{3, {2, 2, 3}}, x}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {-0.898875905, -0.860068814, -0.529370982, 0.138829816, 1.19280481, 2.67643718, -1.00176521,
                           -0.823409515, -0.405603452, 0.271783914, 1.22746206, 2.47898007});
  ASSERT_EQ(outs["mean"].dims.nbDims, 3);
  EXPECT_EQ(outs["mean"].dims.d[0], 2);
  EXPECT_EQ(outs["mean"].dims.d[1], 1);
  EXPECT_EQ(outs["mean"].dims.d[2], 1);
  expectNear(outs["mean"].v, {0.470081991, 2.51583773});
  expectNear(outs["inv"].v, {2.54796362, 1.34162274});
}

TEST(OnnxComposedOps, DropoutMaskAtInferenceAndZeroRatioTraining) {
  ModelBuilder m;
  m.input("x", {2, 3}).initF("ratio", {}, {0.0F});
  auto* t = m.graph().add_initializer();
  t->set_name("train");
  t->set_data_type(::onnx::TensorProto::BOOL);
  t->add_int32_data(1);
  m.output("y")
      .output("mask", {}, ::onnx::TensorProto::BOOL)
      .output("ty")
      .output("tmask", {}, ::onnx::TensorProto::BOOL);
  m.node("Dropout", {"x"}, {"y", "mask"});
  m.node("Dropout", {"x", "ratio", "train"}, {"ty", "tmask"});
  std::vector<float> const x = {1, -2, 3.5F, 0, -0.25F, 7};
  auto outs = run(m.bytes(), {{"x", {Dims{2, {2, 3}}, x}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {1, -2, 3.5, 0, -0.25, 7});
  expectNear(outs["mask"].v, {1, 1, 1, 1, 1, 1});
  // Training with ratio 0 drops nothing and scales by 1 / (1 - 0).
  expectNear(outs["ty"].v, {1, -2, 3.5, 0, -0.25, 7}, 0);
  expectNear(outs["tmask"].v, {1, 1, 1, 1, 1, 1});
}

TEST(OnnxComposedOps, BatchNormalizationRuntimeParameters) {
  ModelBuilder m;
  m.input("x", {2, 2, 3}).input("s", {2}).input("b", {2}).input("mu", {2}).input("var", {2}).output("y");
  m.node("BatchNormalization", {"x", "s", "b", "mu", "var"}, {"y"});
  Inputs ins = {{"x", {Dims{3, {2, 2, 3}}, {1, 2, 3, 4, 5, 6, -1, 0, 2, 0.5F, 1.5F, -2}}},
                {"s", {Dims{1, {2}}, {1.5F, -0.5F}}},
                {"b", {Dims{1, {2}}, {0.1F, 0.2F}}},
                {"mu", {Dims{1, {2}}, {1, 2}}},
                {"var", {Dims{1, {2}}, {0.5F, 4}}}};
  auto outs = run(m.bytes(), ins);
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {0.1, 2.22129913, 4.34259826, -0.299999375, -0.549999063, -0.79999875, -4.14259826,
                           -2.02129913, 2.22129913, 0.574999531, 0.324999844, 1.19999875});
}

TEST(OnnxComposedOps, BatchNormalizationTrainingMode) {
  ModelBuilder m(15);
  m.input("x", {2, 2, 3}).input("s", {2}).input("b", {2}).input("mu", {2}).input("var", {2});
  m.output("y").output("rmean").output("rvar");
  auto& n = m.node("BatchNormalization", {"x", "s", "b", "mu", "var"}, {"y", "rmean", "rvar"});
  attr(n, "training_mode", int64_t{1});
  attr(n, "momentum", 0.8F);
  Inputs ins = {{"x", {Dims{3, {2, 2, 3}}, {1, 2, 3, 4, 5, 6, -1, 0, 2, 0.5F, 1.5F, -2}}},
                {"s", {Dims{1, {2}}, {1.5F, -0.5F}}},
                {"b", {Dims{1, {2}}, {0.1F, 0.2F}}},
                {"mu", {Dims{1, {2}}, {1, 2}}},
                {"var", {Dims{1, {2}}, {0.5F, 4}}}};
  auto outs = run(m.bytes(), ins);
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {-0.0860515867, 1.03025793, 2.14656745, -0.0708679928, -0.251446655, -0.432025317,
                           -2.31867063, -1.20236111, 1.03025793, 0.561157324, 0.380578662, 1.01260398});
  expectNear(outs["rmean"].v, {1.03333333, 2.1});
  expectNear(outs["rvar"].v, {0.761111111, 4.73333333});
}

TEST(OnnxComposedOps, ClipRuntimeBoundsAndMissingMin) {
  ModelBuilder m;
  m.input("x", {5}).input("lo", {}).input("hi", {}).output("y").output("top");
  m.node("Clip", {"x", "lo", "hi"}, {"y"});
  m.node("Clip", {"x", "", "hi"}, {"top"});
  auto outs = run(
      m.bytes(),
      {{"x", {Dims{1, {5}}, {-3, -1, 0.5F, 2, 9}}}, {"lo", {Dims{0, {}}, {-1.5F}}}, {"hi", {Dims{0, {}}, {1.75F}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {-1.5, -1, 0.5, 1.75, 1.75});
  expectNear(outs["top"].v, {-3, -1, 0.5, 1.75, 1.75});
}

TEST(OnnxComposedOps, CastLikeTakesTheSecondInputsType) {
  ModelBuilder m;
  m.input("x", {3}).input("like", {1}, kInt64).output("y", {}, kInt64);
  m.node("CastLike", {"x", "like"}, {"y"});
  auto outs = run(m.bytes(), {{"x", {Dims{1, {3}}, {1, -2, 40}}}}, {{"like", {Dims{1, {1}}, {0}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {1, -2, 40}, 0);
}

/// A one-element TENSOR attribute `value`.
void valueAttr(::onnx::NodeProto& n, float v) {
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(::onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(::onnx::TensorProto::FLOAT);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_float_data(v);
}

/// A one-element int64 TENSOR attribute `value`.
void valueAttrI(::onnx::NodeProto& n, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(::onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(kInt64);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_int64_data(v);
}

TEST(OnnxComposedOps, ConstantShapeArithmeticFoldsAndRuntimeShapeFills) {
  // LayerNormalization's function body builds the reduced shape as
  // Concat(Slice(Shape(x), 0, axis), ConstantOfShape(rank - axis)) (or ConstantOfShape(-axis) for a negative
  // axis). Sub and Neg of constants must stay constants for the reshape to that shape to have a known rank.
  ModelBuilder m;
  m.input("x", {2, 3}).initI("rank", {}, {2}).initI("axis", {1}, {1}).initI("zero", {1}, {0});
  m.initI("negaxis", {1}, {-1});
  m.output("size", {}, kInt64).output("a").output("b").output("c");
  m.node("Size", {"x"}, {"size"});
  m.node("Shape", {"x"}, {"xs"});
  m.node("Slice", {"xs", "zero", "axis"}, {"prefix"});
  auto& mean = m.node("ReduceMean", {"x"}, {"mean"});
  attr(mean, "axes", std::vector<int64_t>{1});
  attr(mean, "keepdims", int64_t{0});
  m.node("Sub", {"rank", "axis"}, {"nsub"});
  valueAttrI(m.node("ConstantOfShape", {"nsub"}, {"suffix_sub"}), 1);
  attr(m.node("Concat", {"prefix", "suffix_sub"}, {"shape_sub"}), "axis", int64_t{0});
  m.node("Reshape", {"mean", "shape_sub"}, {"a"});
  m.node("Neg", {"negaxis"}, {"nneg"});
  valueAttrI(m.node("ConstantOfShape", {"nneg"}, {"suffix_neg"}), 1);
  attr(m.node("Concat", {"prefix", "suffix_neg"}, {"shape_neg"}), "axis", int64_t{0});
  m.node("Reshape", {"mean", "shape_neg"}, {"b"});
  // A run-time shape (Shape of x) goes through a fill layer.
  valueAttr(m.node("ConstantOfShape", {"xs"}, {"c"}), -0.5F);
  auto outs = run(m.bytes(), {{"x", {Dims{2, {2, 3}}, {1, 2, 3, 4, 5, 6}}}});
  ASSERT_FALSE(outs.empty());
  EXPECT_EQ(outs["size"].dims.nbDims, 0);
  expectNear(outs["size"].v, {6}, 0);
  for (char const* name : {"a", "b"}) {
    ASSERT_EQ(outs[name].dims.nbDims, 2) << name;
    EXPECT_EQ(outs[name].dims.d[1], 1) << name;
    expectNear(outs[name].v, {2, 5});
  }
  ASSERT_EQ(outs["c"].dims.nbDims, 2);
  EXPECT_EQ(outs["c"].dims.d[0], 2);
  EXPECT_EQ(outs["c"].dims.d[1], 3);
  expectNear(outs["c"].v, {-0.5, -0.5, -0.5, -0.5, -0.5, -0.5});
}

TEST(OnnxComposedOps, AdagradStep) {
  ModelBuilder m = trainingModel();
  m.input("R", {}).input("T", {}, kInt64).input("X", {2}).input("G", {2}).input("H", {2});
  m.output("X_new").output("H_new");
  auto& n = m.node("Adagrad", {"R", "T", "X", "G", "H"}, {"X_new", "H_new"});
  n.set_domain("ai.onnx.preview.training");
  attr(n, "norm_coefficient", 0.001F);
  attr(n, "epsilon", 1e-5F);
  attr(n, "decay_factor", 0.1F);
  auto outs = run(m.bytes(),
                  {{"R", {Dims{0, {}}, {0.1F}}},
                   {"X", {Dims{1, {2}}, {1, -2}}},
                   {"G", {Dims{1, {2}}, {-1, 0.5F}}},
                   {"H", {Dims{1, {2}}, {2, 0.25F}}}},
                  {{"T", {Dims{0, {}}, {3}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["X_new"].v, {1.04438168, -2.05428295});
  expectNear(outs["H_new"].v, {2.998001, 0.498004});
}

TEST(OnnxComposedOps, AdamStepWithAndWithoutBiasCorrection) {
  ModelBuilder m = trainingModel();
  m.input("R", {}).input("T", {}, kInt64).input("X", {2}).input("G", {2}).input("V", {2}).input("H", {2});
  m.output("X_new").output("V_new").output("H_new");
  auto& n = m.node("Adam", {"R", "T", "X", "G", "V", "H"}, {"X_new", "V_new", "H_new"});
  n.set_domain("ai.onnx.preview.training");
  attr(n, "norm_coefficient", 0.001F);
  attr(n, "norm_coefficient_post", 0.01F);
  attr(n, "alpha", 0.95F);
  attr(n, "beta", 0.85F);
  Inputs ins = {{"R", {Dims{0, {}}, {0.1F}}},
                {"X", {Dims{1, {2}}, {1, -2}}},
                {"G", {Dims{1, {2}}, {-1, 0.5F}}},
                {"V", {Dims{1, {2}}, {0.3F, -0.1F}}},
                {"H", {Dims{1, {2}}, {0.2F, 0.4F}}}};
  auto outs = run(m.bytes(), ins, {{"T", {Dims{0, {}}, {3}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["X_new"].v, {0.8107534, -1.9307854});
  expectNear(outs["V_new"].v, {0.23505, -0.0701});
  expectNear(outs["H_new"].v, {0.31970015, 0.3772006});
  auto first = run(m.bytes(), ins, {{"T", {Dims{0, {}}, {0}}}});
  ASSERT_FALSE(first.empty());
  expectNear(first["X_new"].v, {0.948844938, -1.96870032});
}

TEST(OnnxComposedOps, MomentumStandardAndNesterov) {
  ModelBuilder m = trainingModel();
  m.input("R", {}).input("T", {}, kInt64).input("X", {2}).input("G", {2}).input("V", {2});
  m.output("X_new").output("V_new").output("NX").output("NV");
  for (char const* mode : {"standard", "nesterov"}) {
    bool const standard = std::string(mode) == "standard";
    auto& n = m.node("Momentum", {"R", "T", "X", "G", "V"}, {standard ? "X_new" : "NX", standard ? "V_new" : "NV"});
    n.set_domain("ai.onnx.preview.training");
    attr(n, "norm_coefficient", 0.001F);
    attr(n, "alpha", 0.95F);
    attr(n, "beta", 0.1F);
    attr(n, "mode", std::string(mode));
  }
  Inputs ins = {{"R", {Dims{0, {}}, {0.1F}}},
                {"X", {Dims{1, {2}}, {1, -2}}},
                {"G", {Dims{1, {2}}, {-1, 0.5F}}},
                {"V", {Dims{1, {2}}, {0.3F, -0.1F}}}};
  auto outs = run(m.bytes(), ins, {{"T", {Dims{0, {}}, {3}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["X_new"].v, {0.98149, -1.99548});
  expectNear(outs["V_new"].v, {0.1851, -0.0452});
  expectNear(outs["NX"].v, {1.0823155, -2.045506});
  // At T = 0 the gradient's coefficient is 1, not beta.
  auto first = run(m.bytes(), ins, {{"T", {Dims{0, {}}, {0}}}});
  ASSERT_FALSE(first.empty());
  expectNear(first["X_new"].v, {1.0714, -2.0403});
  expectNear(first["V_new"].v, {-0.714, 0.403});
}

TEST(OnnxComposedOps, TrainingOnlyModelRefusesDefaultDomainNodes) {
  ModelBuilder m = trainingModel();
  m.input("x", {2}).output("y");
  m.node("Relu", {"x"}, {"y"});
  ParseResult r = parseOnly(m.bytes());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.desc.find("no default-domain opset"), std::string::npos) << r.desc;
}

}  // namespace
