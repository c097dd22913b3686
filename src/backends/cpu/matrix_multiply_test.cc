// matrix_multiply_onednn_gemm against the reference matrix multiply: square, tall, skinny, transposes, batch and
// batch broadcast, bias broadcast, fused residual and fused activations; vector operands are refused.
#include <gtest/gtest.h>

#include "backends/cpu/cpu_test_util.h"

namespace kiln {
namespace {

using namespace cputest;  // NOLINT: test helpers
using V = std::vector<int64_t>;

constexpr char kTactic[] = "matrix_multiply_onednn_gemm";
constexpr double kTol = 1e-5;

ir::Attributes mmAttrs(MatrixOperation a, MatrixOperation b, int64_t act = -1, double alpha = 0, double beta = 0) {
  ir::Attributes r;
  r.set("op_a", static_cast<int64_t>(a));
  r.set("op_b", static_cast<int64_t>(b));
  if (act >= 0) {
    r.set("activation", act);
    r.set("act_alpha", alpha);
    r.set("act_beta", beta);
  }
  return r;
}

constexpr MatrixOperation kN = MatrixOperation::kNONE;
constexpr MatrixOperation kT = MatrixOperation::kTRANSPOSE;

double run(V a, V b, MatrixOperation opA = kN, MatrixOperation opB = kN, int threads = 1, bool constB = false) {
  std::vector<In> ins{var(randomTensor(a, 11)), constB ? cst(randomTensor(b, 12)) : var(randomTensor(b, 12))};
  return compareWithReference(kTactic, OpType::kMatrixMultiply, mmAttrs(opA, opB), ins, threads);
}

TEST(OnednnMatMul, SquareTallSkinny) {
  EXPECT_LT(run({64, 64}, {64, 64}), kTol);
  EXPECT_LT(run({1, 1}, {1, 1}), kTol);
  EXPECT_LT(run({257, 7}, {7, 3}), kTol);
  EXPECT_LT(run({1, 300}, {300, 1}), kTol);
  EXPECT_LT(run({3, 513}, {513, 129}, kN, kN, 2, true), kTol);
}

TEST(OnednnMatMul, Transposes) {
  EXPECT_LT(run({9, 5}, {9, 6}, kT, kN), kTol);
  EXPECT_LT(run({5, 9}, {6, 9}, kN, kT), kTol);
  EXPECT_LT(run({9, 5}, {6, 9}, kT, kT), kTol);
  EXPECT_LT(run({2, 3, 17, 5}, {2, 3, 11, 17}, kT, kT, 2), kTol);
}

TEST(OnednnMatMul, BatchAndBroadcast) {
  EXPECT_LT(run({4, 7, 5}, {4, 5, 3}), kTol);
  EXPECT_LT(run({4, 7, 5}, {5, 3}), kTol);              // b broadcast by rank
  EXPECT_LT(run({7, 5}, {4, 5, 3}), kTol);              // a broadcast by rank
  EXPECT_LT(run({2, 1, 7, 5}, {1, 3, 5, 4}), kTol);     // both broadcast
  EXPECT_LT(run({2, 3, 6, 8}, {1, 1, 6, 8}, kN, kT), kTol);
}

// B shared by the whole batch runs as one 2-D product over the rows (the attention in-projection's [S, 1, K]
// rows, BERT's [1, S, K]); a constant B is packed once. Both with transposes, bias, activation, threads.
TEST(OnednnMatMul, SharedAndConstantB) {
  for (bool constB : {false, true}) {
    EXPECT_LT(run({128, 1, 64}, {1, 64, 96}, kN, kN, 2, constB), kTol) << constB;
    EXPECT_LT(run({1, 33, 40}, {40, 24}, kN, kN, 1, constB), kTol) << constB;
    EXPECT_LT(run({2, 3, 5, 40}, {24, 40}, kN, kT, 2, constB), kTol) << constB;
    EXPECT_LT(run({3, 40, 5}, {40, 24}, kT, kN, 1, constB), kTol) << constB;  // transposed A: not collapsed
    EXPECT_LT(run({3, 5, 40}, {3, 40, 24}, kN, kN, 1, constB), kTol) << constB;  // a B per batch
    std::vector<In> ins{var(randomTensor({4, 9, 16}, 11)), constB ? cst(randomTensor({16, 12}, 12)) : var(randomTensor({16, 12}, 12)),
                        cst(randomTensor({12}, 13))};
    EXPECT_LT(compareWithReference(kTactic, OpType::kMatrixMultiply,
                                   mmAttrs(kN, kN, static_cast<int64_t>(ActivationType::kGELU_ERF)), ins, 2),
              kTol);
    // A bias with batch dims keeps the batched product.
    std::vector<In> perBatch{var(randomTensor({4, 9, 16}, 11)),
                             constB ? cst(randomTensor({16, 12}, 12)) : var(randomTensor({16, 12}, 12)),
                             cst(randomTensor({4, 1, 12}, 13))};
    EXPECT_LT(compareWithReference(kTactic, OpType::kMatrixMultiply, mmAttrs(kN, kN), perBatch), kTol);
  }
}

TEST(OnednnMatMul, BiasAndActivations) {
  struct Act {
    ActivationType t;
    double alpha, beta;
  };
  std::vector<V> biasShapes{{6}, {1, 6}, {5, 6}, {3, 5, 6}, {3, 1, 1}};
  for (V const& bs : biasShapes) {
    for (Act act : {Act{ActivationType::kRELU, 0, 0}, Act{ActivationType::kGELU_ERF, 0, 0},
                    Act{ActivationType::kGELU_TANH, 0, 0}, Act{ActivationType::kSIGMOID, 0, 0},
                    Act{ActivationType::kLEAKY_RELU, 0.2, 0}, Act{ActivationType::kHARD_SIGMOID, 0.3, 0.4}}) {
      std::vector<In> ins{var(randomTensor({3, 5, 4}, 21)), cst(randomTensor({4, 6}, 22)), cst(randomTensor(bs, 23))};
      EXPECT_LT(compareWithReference(kTactic, OpType::kMatrixMultiply,
                                     mmAttrs(kN, kN, static_cast<int64_t>(act.t), act.alpha, act.beta), ins),
                kTol)
          << "bias rank " << bs.size() << " activation " << static_cast<int>(act.t);
    }
  }
}

// y = act(a b + bias + residual): with and without bias and activation, the collapsed 2-D product (shared B,
// BERT's [1, S, K] x [K, N]) and the batched one, constant B, two threads.
TEST(OnednnMatMul, Residual) {
  struct Case {
    V a, b, bias;
    bool constB;
    int64_t act;
  };
  int64_t const gelu = static_cast<int64_t>(ActivationType::kGELU_ERF);
  int64_t const relu = static_cast<int64_t>(ActivationType::kRELU);
  std::vector<Case> cases{
      {{1, 33, 40}, {40, 24}, {24}, true, -1},     // BERT's attention-output / FFN-out GEMM, bias along N
      {{1, 33, 40}, {40, 24}, {}, false, -1},      // no bias
      {{3, 5, 7}, {3, 7, 6}, {6}, false, relu},    // a B per batch: batched product
      {{2, 3, 5, 7}, {7, 6}, {5, 6}, true, gelu},  // shared B, bias along rows too: batched
      {{9, 16}, {16, 12}, {}, true, relu},         // 2-D
      {{4, 9, 16}, {12, 16}, {12}, false, gelu},   // transposed B (kT below)
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    Case const& c = cases[i];
    MatrixOperation opB = c.b[0] == 12 && c.b[1] == 16 ? kT : kN;
    In a = var(randomTensor(c.a, 31)), b = c.constB ? cst(randomTensor(c.b, 32)) : var(randomTensor(c.b, 32));
    OneNode plain = makeNode(OpType::kMatrixMultiply, mmAttrs(kN, opB), {a, b});
    V yShape = dimsToVector(plain.out[0].shape);
    std::vector<In> ins{a, b, c.bias.empty() ? none() : cst(randomTensor(c.bias, 33)), var(randomTensor(yShape, 34))};
    for (int threads : {1, 2})
      EXPECT_LT(compareWithReference(kTactic, OpType::kMatrixMultiply, mmAttrs(kN, opB, c.act), ins, threads), kTol)
          << "case " << i << " threads " << threads;
  }
}

TEST(OnednnMatMul, RefusesVectorsAndOtherTypes) {
  OneNode v = makeNode(OpType::kMatrixMultiply, mmAttrs(MatrixOperation::kVECTOR, kN),
                       {var(randomTensor({2, 4}, 1)), var(randomTensor({2, 4, 3}, 2))});
  EXPECT_FALSE(tacticSupports(kTactic, v));
  HostTensor ah = *HostTensor::allocate(DataType::kHALF, makeDims({2, 4}), "a");
  HostTensor bh = *HostTensor::allocate(DataType::kHALF, makeDims({4, 3}), "b");
  EXPECT_FALSE(tacticSupports(kTactic, makeNode(OpType::kMatrixMultiply, mmAttrs(kN, kN), {var(ah), var(bh)})));
  ir::Attributes softsign = mmAttrs(kN, kN, static_cast<int64_t>(ActivationType::kSOFTSIGN));
  EXPECT_FALSE(tacticSupports(
      kTactic, makeNode(OpType::kMatrixMultiply, softsign, {var(randomTensor({2, 4}, 1)), var(randomTensor({4, 3}, 2))})));
}

}  // namespace
}  // namespace kiln
