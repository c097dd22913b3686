// matrix_multiply_cpu_gemv against the reference matrix multiply, AVX-512 and portable loops: one to eight rows (row
// groups of 4 and a partial one), column counts around the 16-wide panel, odd and tiny inner sizes, B as it is and
// transposed, batch dims, bias, residual (y over it too), every activation, two threads; and what it refuses.
#include <gtest/gtest.h>

#include "backends/cpu/cpu_test_util.h"
#include "backends/cpu/matrix_multiply_gemv.h"

namespace kiln {
namespace {

using namespace cputest;  // NOLINT: test helpers
using V = std::vector<int64_t>;

constexpr char kTactic[] = "matrix_multiply_cpu_gemv";
constexpr double kTol = 1e-5;
constexpr MatrixOperation kN = MatrixOperation::kNONE;
constexpr MatrixOperation kT = MatrixOperation::kTRANSPOSE;

ir::Attributes attrs(MatrixOperation b, int64_t act = -1, double alpha = 0, double beta = 0) {
  ir::Attributes r;
  r.set("op_a", static_cast<int64_t>(kN));
  r.set("op_b", static_cast<int64_t>(b));
  if (act >= 0) {
    r.set("activation", act);
    r.set("act_alpha", alpha);
    r.set("act_beta", beta);
  }
  return r;
}

struct Case {
  V a, b;
  MatrixOperation opB = kN;
  V bias{};  // empty: none
  bool residual = false;
  int64_t act = -1;
  double alpha = 0, beta = 0;
};

std::vector<In> inputs(Case const& c) {
  std::vector<In> ins{var(randomTensor(c.a, 11)), cst(randomTensor(c.b, 12))};
  if (!c.bias.empty() || c.residual) ins.push_back(c.bias.empty() ? none() : cst(randomTensor(c.bias, 13)));
  if (c.residual) {
    OneNode n = makeNode(OpType::kMatrixMultiply, attrs(c.opB), {ins[0], ins[1]});
    ins.push_back(var(randomTensor(dimsToVector(n.out[0].shape), 14)));
  }
  return ins;
}

// Both loop sets (the portable one forced, then the CPU's best), one and two threads; the worst error.
double run(Case const& c, bool overResidual = false) {
  double worst = 0;
  for (bool portable : {true, false}) {
    backends::cpu::setCpuGemvPortable(portable);
    for (int threads : {1, 2})
      worst =
          std::max(worst, compareWithReference(kTactic, OpType::kMatrixMultiply, attrs(c.opB, c.act, c.alpha, c.beta),
                                               inputs(c), threads, {}, 0, overResidual ? 3 : -1));
  }
  backends::cpu::setCpuGemvPortable(false);
  return worst;
}

bool supports(Case const& c) {
  return tacticSupports(kTactic, makeNode(OpType::kMatrixMultiply, attrs(c.opB), inputs(c)));
}

TEST(CpuGemv, RowsColumnsAndTransposes) {
  for (int64_t rows : {1, 2, 3, 4, 5, 8})
    for (int64_t n : {1, 15, 16, 17, 100})
      for (MatrixOperation opB : {kN, kT}) {
        int64_t k = rows == 3 ? 1 : 37;
        Case c{.a = {rows, k}, .b = opB == kT ? V{n, k} : V{k, n}, .opB = opB};
        EXPECT_LT(run(c), kTol) << rows << " x " << k << " x " << n << " " << static_cast<int>(opB);
      }
  // ResNet-50's classifier, as ONNX's Gemm gives it (B transposed, bias), and batch dims on A and B.
  EXPECT_LT(run({.a = {1, 2048}, .b = {1000, 2048}, .opB = kT, .bias = {1000}}), kTol);
  EXPECT_LT(run({.a = {2, 1, 64}, .b = {1, 64, 33}, .bias = {1, 1, 33}}), kTol);
}

TEST(CpuGemv, BiasResidualAndActivations) {
  struct Act {
    ActivationType t;
    double alpha, beta;
  };
  for (Act act : {Act{ActivationType::kRELU, 0, 0}, Act{ActivationType::kSIGMOID, 0, 0},
                  Act{ActivationType::kSOFTPLUS, 0.8, 1.5}, Act{ActivationType::kSOFTSIGN, 0, 0},
                  Act{ActivationType::kTHRESHOLDED_RELU, 0.2, 0}, Act{ActivationType::kGELU_TANH, 0, 0}})
    for (bool residual : {false, true}) {
      Case c{.a = {3, 50},
             .b = {50, 40},
             .bias = {40},
             .residual = residual,
             .act = static_cast<int64_t>(act.t),
             .alpha = act.alpha,
             .beta = act.beta};
      EXPECT_LT(run(c), kTol) << static_cast<int>(act.t) << " " << residual;
      if (residual) {
        EXPECT_LT(run(c, true), kTol) << static_cast<int>(act.t) << " over the residual";
      }
    }
}

TEST(CpuGemv, Refusals) {
  Case base{.a = {1, 8}, .b = {8, 4}};
  EXPECT_TRUE(supports(base));
  EXPECT_FALSE(supports({.a = {9, 8}, .b = {8, 4}}));                  // more rows than offered
  EXPECT_TRUE(supports({.a = {1, 8}, .b = {8, 4}, .bias = {1, 4}}));   // a bias per column, leading 1s
  EXPECT_FALSE(supports({.a = {2, 8}, .b = {8, 4}, .bias = {2, 4}}));  // a bias varying by row
  EXPECT_FALSE(supports({.a = {1, 8}, .b = {2, 8, 4}}));               // B with a batch
  // B not a constant, A transposed.
  EXPECT_FALSE(tacticSupports(kTactic, makeNode(OpType::kMatrixMultiply, attrs(kN),
                                                {var(randomTensor({1, 8}, 1)), var(randomTensor({8, 4}, 2))})));
  ir::Attributes ta = attrs(kN);
  ta.set("op_a", static_cast<int64_t>(kT));
  EXPECT_FALSE(tacticSupports(
      kTactic, makeNode(OpType::kMatrixMultiply, ta, {var(randomTensor({8, 1}, 1)), cst(randomTensor({8, 4}, 2))})));
  // The level-0 heuristic keeps oneDNN's GEMM: this one is a timed candidate behind it.
  OneNode n = makeNode(OpType::kMatrixMultiply, attrs(kN), inputs(base));
  auto cands = backends::TacticRegistry::instance().candidates(*n.node, n.in, n.out, DeviceType::kCPU, ~0u);
  ASSERT_GE(cands.size(), 2u);
  EXPECT_EQ(cands[0]->name, "matrix_multiply_onednn_gemm");
  EXPECT_EQ(cands[1]->name, kTactic);
}

}  // namespace
}  // namespace kiln
