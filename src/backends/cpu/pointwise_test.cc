// activation_onednn_eltwise, unary_onednn_eltwise and elementwise_onednn_binary against the reference: every
// mapped activation (chains included), the mapped unary ops, arithmetic with broadcasting on either side (the
// non-commutative ops with a broadcast first operand), odd sizes, threads; refusals of what stays on the reference.
#include <gtest/gtest.h>

#include "backends/cpu/cpu_test_util.h"

namespace kiln {
namespace {

using namespace cputest;  // NOLINT: test helpers
using V = std::vector<int64_t>;

constexpr double kTol = 1e-5;

// Values in [lo, hi] (uniform): for ops with a restricted domain (log, sqrt, recip).
HostTensor ranged(V const& shape, uint32_t seed, float lo, float hi) {
  HostTensor t = randomTensor(shape, seed);
  auto* p = static_cast<float*>(t.mutableData());
  for (int64_t i = 0; i < t.count(); ++i)
    p[i] = lo + (p[i] + 1.f) * 0.5f * (hi - lo);
  return t;
}

TEST(OnednnPointwise, EveryMappedActivation) {
  struct Act {
    ActivationType t;
    double alpha, beta;
  };
  for (Act act : {Act{ActivationType::kRELU, 0, 0}, Act{ActivationType::kSIGMOID, 0, 0}, Act{ActivationType::kTANH, 0, 0},
                  Act{ActivationType::kLEAKY_RELU, 0.1, 0}, Act{ActivationType::kELU, 0.7, 0},
                  Act{ActivationType::kSELU, 1.67, 1.05}, Act{ActivationType::kSOFTPLUS, 0.8, 1.5},
                  Act{ActivationType::kCLIP, 0, 6}, Act{ActivationType::kHARD_SIGMOID, 0.2, 0.5},
                  Act{ActivationType::kSCALED_TANH, 1.3, 0.7}, Act{ActivationType::kGELU_ERF, 0, 0},
                  Act{ActivationType::kGELU_TANH, 0, 0}}) {
    ir::Attributes a = attrs({{"type", static_cast<int64_t>(act.t)}, {"alpha", act.alpha}, {"beta", act.beta}});
    for (V shape : {V{1}, V{3, 7}, V{2, 5, 9, 11}}) {
      EXPECT_LT(compareWithReference("activation_onednn_eltwise", OpType::kActivation, a,
                                     {var(ranged(shape, 5, -4.f, 4.f))}, 2),
                kTol)
          << static_cast<int>(act.t);
    }
  }
  // Softsign has no oneDNN eltwise: left to the reference.
  ir::Attributes soft = attrs({{"type", static_cast<int64_t>(ActivationType::kSOFTSIGN)}, {"alpha", 0.0}, {"beta", 0.0}});
  EXPECT_FALSE(tacticSupports("activation_onednn_eltwise", makeNode(OpType::kActivation, soft, {var(randomTensor({4}, 1))})));
}

TEST(OnednnPointwise, MappedUnaryOps) {
  struct U {
    UnaryOperation op;
    float lo, hi;
  };
  for (U u : {U{UnaryOperation::kEXP, -5, 5}, U{UnaryOperation::kLOG, 0.01f, 10}, U{UnaryOperation::kSQRT, 0, 9},
              U{UnaryOperation::kRECIP, 0.1f, 3}, U{UnaryOperation::kABS, -2, 2}, U{UnaryOperation::kNEG, -2, 2}}) {
    ir::Attributes a = attrs({{"op", static_cast<int64_t>(u.op)}});
    EXPECT_LT(compareWithReference("unary_onednn_eltwise", OpType::kUnary, a, {var(ranged({3, 17, 5}, 7, u.lo, u.hi))}),
              kTol)
        << static_cast<int>(u.op);
  }
  for (UnaryOperation op : {UnaryOperation::kERF, UnaryOperation::kSIN, UnaryOperation::kROUND, UnaryOperation::kFLOOR}) {
    ir::Attributes a = attrs({{"op", static_cast<int64_t>(op)}});
    EXPECT_FALSE(tacticSupports("unary_onednn_eltwise", makeNode(OpType::kUnary, a, {var(randomTensor({4}, 1))})));
  }
}

TEST(OnednnPointwise, BinaryWithBroadcasting) {
  struct Shapes {
    V a, b;
  };
  for (ElementWiseOperation op : {ElementWiseOperation::kSUM, ElementWiseOperation::kPROD, ElementWiseOperation::kSUB,
                                  ElementWiseOperation::kDIV}) {
    ir::Attributes a = attrs({{"op", static_cast<int64_t>(op)}});
    // Same shape, per-channel, scalar, lower rank, broadcast on both sides, broadcast first operand.
    for (Shapes s : {Shapes{{2, 3, 5, 7}, {2, 3, 5, 7}}, Shapes{{2, 16, 5, 5}, {1, 16, 1, 1}},
                     Shapes{{1, 128, 768}, {1}}, Shapes{{4, 9, 33}, {33}}, Shapes{{4, 1, 6}, {1, 5, 1}},
                     Shapes{{1, 16, 1, 1}, {2, 16, 5, 5}}, Shapes{{1}, {3, 7}}}) {
      // Divisors away from zero.
      HostTensor bt = op == ElementWiseOperation::kDIV ? ranged(s.b, 12, 0.5f, 2.f) : randomTensor(s.b, 12);
      EXPECT_LT(compareWithReference("elementwise_onednn_binary", OpType::kElementWise, a,
                                     {var(randomTensor(s.a, 11)), var(bt)}, 2),
                kTol)
          << static_cast<int>(op) << " " << s.a.size() << " " << s.b.size();
    }
  }
  // A constant operand works as a variable one.
  ir::Attributes sum = attrs({{"op", static_cast<int64_t>(ElementWiseOperation::kSUM)}});
  EXPECT_LT(compareWithReference("elementwise_onednn_binary", OpType::kElementWise, sum,
                                 {var(randomTensor({3, 8}, 1)), cst(randomTensor({8}, 2))}),
            kTol);
  // Comparisons, max/min (NaN rules), pow and integer types stay on the reference.
  for (ElementWiseOperation op : {ElementWiseOperation::kMAX, ElementWiseOperation::kPOW, ElementWiseOperation::kLESS}) {
    ir::Attributes a = attrs({{"op", static_cast<int64_t>(op)}});
    EXPECT_FALSE(tacticSupports("elementwise_onednn_binary",
                                makeNode(OpType::kElementWise, a, {var(randomTensor({4}, 1)), var(randomTensor({4}, 2))})));
  }
  HostTensor i32 = *HostTensor::allocate(DataType::kINT32, makeDims({4}), "i");
  EXPECT_FALSE(tacticSupports("elementwise_onednn_binary", makeNode(OpType::kElementWise, sum, {var(i32), var(i32)})));
}

// Activations and element-wise ops on 4-D tensors in the recorded formats (as between convolutions):
// EfficientNet's x * sigmoid(x) and its squeeze-excitation scale (a [N, C, 1, 1] plain operand on either side).
TEST(OnednnPointwise, RecordedActivationFormats) {
  ir::Attributes sig = attrs({{"type", static_cast<int64_t>(ActivationType::kSIGMOID)}, {"alpha", 0.0}, {"beta", 0.0}});
  ir::Attributes mul = attrs({{"op", static_cast<int64_t>(ElementWiseOperation::kPROD)}});
  ir::Attributes sub = attrs({{"op", static_cast<int64_t>(ElementWiseOperation::kSUB)}});
  for (int64_t f : {1, 8, 16}) {
    EXPECT_LT(compareWithReference("activation_onednn_eltwise", OpType::kActivation, sig,
                                   {var(randomTensor({2, 16, 5, 7}, 1))}, 2, {f}, f),
              kTol)
        << f;
    EXPECT_LT(compareWithReference("elementwise_onednn_binary", OpType::kElementWise, mul,
                                   {var(randomTensor({2, 16, 5, 7}, 2)), var(randomTensor({2, 16, 5, 7}, 3))}, 2, {f, f},
                                   f),
              kTol)
        << f;
    EXPECT_LT(compareWithReference("elementwise_onednn_binary", OpType::kElementWise, mul,
                                   {var(randomTensor({2, 32, 9, 9}, 4)), var(randomTensor({2, 32, 1, 1}, 5))}, 2, {f, 0},
                                   f),
              kTol)
        << f;
    EXPECT_LT(compareWithReference("elementwise_onednn_binary", OpType::kElementWise, mul,
                                   {var(randomTensor({1, 32, 1, 1}, 6)), var(randomTensor({1, 32, 9, 9}, 7))}, 1, {0, f},
                                   f),
              kTol)
        << f;
    EXPECT_LT(compareWithReference("elementwise_onednn_binary", OpType::kElementWise, sub,
                                   {var(randomTensor({1, 32, 1, 1}, 6)), var(randomTensor({1, 32, 9, 9}, 7))}, 1, {0, f},
                                   f),
              kTol)
        << f;
  }
  // y written over x (the builder's placement where the op reads x last): activations (a chain), unary ops and
  // binary ops over a full-shape first operand, in every format, on two threads (the SE block's x * s in place).
  ir::Attributes selu = attrs({{"type", static_cast<int64_t>(ActivationType::kSELU)}, {"alpha", 1.67}, {"beta", 1.05}});
  ir::Attributes ex = attrs({{"op", static_cast<int64_t>(UnaryOperation::kEXP)}});
  for (int64_t f : {0, 1, 8, 16}) {
    EXPECT_LT(compareWithReference("activation_onednn_eltwise", OpType::kActivation, selu,
                                   {var(randomTensor({1, 32, 33, 35}, 1))}, 2, {f}, f, 0),
              kTol)
        << f;
    EXPECT_LT(compareWithReference("elementwise_onednn_binary", OpType::kElementWise, mul,
                                   {var(randomTensor({1, 48, 29, 31}, 4)), var(randomTensor({1, 48, 1, 1}, 5))}, 2,
                                   {f, 0}, f, 0),
              kTol)
        << f;
    EXPECT_LT(compareWithReference("elementwise_onednn_binary", OpType::kElementWise, sub,
                                   {var(randomTensor({2, 16, 5, 7}, 2)), var(randomTensor({2, 16, 5, 7}, 3))}, 1,
                                   {f, f}, f, 0),
              kTol)
        << f;
  }
  EXPECT_LT(compareWithReference("unary_onednn_eltwise", OpType::kUnary, ex, {var(ranged({3, 170, 99}, 7, -3, 3))}, 2,
                                 {}, 0, 0),
            kTol);

  // The per-channel scale's own loop on two threads (from 32768 elements): batch 1 and 2, a scale per image or
  // shared, on either side, in place, every format.
  for (int64_t f : {0, 1, 8, 16}) {
    EXPECT_LT(compareWithReference("elementwise_onednn_binary", OpType::kElementWise, mul,
                                   {var(randomTensor({1, 144, 56, 56}, 8)), var(randomTensor({1, 144, 1, 1}, 9))}, 2,
                                   {f, 0}, f, 0),
              kTol)
        << f;
    EXPECT_LT(compareWithReference("elementwise_onednn_binary", OpType::kElementWise, mul,
                                   {var(randomTensor({2, 32, 1, 1}, 10)), var(randomTensor({2, 32, 45, 47}, 11))}, 2,
                                   {0, f}, f),
              kTol)
        << f;
    EXPECT_LT(compareWithReference("elementwise_onednn_binary", OpType::kElementWise, mul,
                                   {var(randomTensor({3, 48, 33, 31}, 12)), var(randomTensor({1, 48, 1, 1}, 13))}, 2,
                                   {f, 0}, f),
              kTol)
        << f;
  }

  // x and y of an activation in different formats are refused.
  OneNode n = makeNode(OpType::kActivation, sig, {var(randomTensor({1, 16, 2, 2}, 1))});
  n.node->attrs.setInts("cpu_formats_in", {1});
  n.node->attrs.setInts("cpu_formats_out", {0});
  EXPECT_FALSE(backends::TacticRegistry::instance().find("activation_onednn_eltwise")->create(*n.node).isOk());
}

}  // namespace
}  // namespace kiln
