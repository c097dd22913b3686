// gpu tests of the MatrixMultiply tactics (cuBLASLt algo0..2 and the tiled kernel) against the reference
// backend: every float type, transposes, vectors, batch broadcasting, edge sizes, bias with each activation.
#include <vector>

#include "backends/cuda/cuda_test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

using Shape = std::vector<int64_t>;

struct Mm {
  Shape a, b;
  int opA = 0, opB = 0;
  std::optional<Shape> bias;
  int act = -1;
  double alpha = 0, beta = 0;
  bool tf32 = false;
  bool constB = false;
};

Mm mm(Shape a, Shape b, int opA = 0, int opB = 0, std::optional<Shape> bias = std::nullopt) {
  Mm c;
  c.a = std::move(a);
  c.b = std::move(b);
  c.opA = opA;
  c.opB = opB;
  c.bias = std::move(bias);
  return c;
}

// Runs one MatrixMultiply against the reference; returns what each tactic scored.
std::vector<TacticResult> check(DataType t, Mm const& c, double tol = -1, uint32_t seed = 1, size_t minTactics = 1) {
  SCOPED_TRACE(strCat(dataTypeName(t), " a ", dimsToString(makeDims(c.a)), " op ", c.opA, " b ",
                      dimsToString(makeDims(c.b)), " op ", c.opB, " act ", c.act, c.tf32 ? " tf32" : ""));
  ir::Attributes at = attrs({{"op_a", int64_t{c.opA}},
                             {"op_b", int64_t{c.opB}},
                             {"activation", int64_t{c.act}},
                             {"act_alpha", c.alpha},
                             {"act_beta", c.beta}});
  if (c.tf32) at.setInt("allow_tf32", 1);
  std::vector<In> ins = {var(randomTensor(t, c.a, seed)),
                         c.constB ? cst(randomTensor(t, c.b, seed + 1)) : var(randomTensor(t, c.b, seed + 1))};
  if (c.bias) ins.push_back(var(randomTensor(t, *c.bias, seed + 2)));
  return expectMatchesReference({ir::OpType::kMatrixMultiply, at, ins}, tol, minTactics);
}

// Shapes every float type runs: square, tall/skinny, K = 1, M = 1, N = 1, odd sizes across many tiles,
// transposes, vectors, broadcast batches.
std::vector<Mm> shapeCases() {
  return {
      mm({64, 64}, {64, 64}),
      mm({1000, 7}, {7, 3}),
      mm({3, 7}, {7, 1000}),
      mm({5, 1}, {1, 9}),       // K = 1
      mm({1, 300}, {300, 70}),  // M = 1
      mm({70, 300}, {300, 1}),  // N = 1
      mm({1, 1}, {1, 1}),
      mm({33, 65}, {65, 17}),                // odd, not multiples of the tile
      mm({130, 257}, {257, 131}),            // several tiles each way
      mm({65, 33}, {65, 17}, 1, 0),          // a transposed
      mm({33, 65}, {17, 65}, 0, 1),          // b transposed
      mm({65, 33}, {17, 65}, 1, 1),          // both
      mm({2, 1, 9, 13}, {3, 13, 11}),        // batch broadcast [2,1] x [3] -> [2,3]
      mm({2, 1, 13, 9}, {3, 11, 13}, 1, 1),  // ... transposed
      mm({4, 9, 13}, {13, 11}),              // b shared by the batch (one tall GEMM)
      mm({4, 9, 13}, {1, 13, 11}),
      mm({9, 13}, {4, 13, 11}),              // a shared by the batch
      mm({3, 1, 2, 5, 7}, {1, 4, 1, 7, 6}),  // rank 5, broadcast both ways
      mm({2, 3, 4}, {2, 4, 5}),
      mm({13}, {13, 11}, 2, 0),        // vector times matrix
      mm({3, 13}, {13, 11}, 2, 0),     // batch of row vectors
      mm({2, 9, 13}, {13}, 0, 2),      // matrix times vector
      mm({13}, {13}, 2, 2),            // dot product: rank-0 output
      mm({2, 13}, {1, 13}, 2, 2),      // batched dot with broadcast
      mm({2, 3}, {6, 1, 3, 4}, 2, 0),  // vector batch against a matrix batch
      mm({5, 13}, {5, 11, 13}, 2, 1),  // vectors times transposed matrices
  };
}

TEST(CudaMatrixMultiply, Float32Shapes) {
  KILN_REQUIRE_GPU();
  for (auto const& c : shapeCases()) {
    auto r = check(DataType::kFLOAT, c, -1, 1, 2);  // cuBLASLt and the tiled kernel
    EXPECT_GE(r.size(), 4u);
  }
}

TEST(CudaMatrixMultiply, Tf32Shapes) {
  KILN_REQUIRE_GPU();
  for (auto c : shapeCases()) {
    c.tf32 = true;
    check(DataType::kFLOAT, c, kTf32Tolerance);
  }
}

TEST(CudaMatrixMultiply, Float16Shapes) {
  KILN_REQUIRE_GPU();
  for (auto const& c : shapeCases()) check(DataType::kHALF, c);
}

TEST(CudaMatrixMultiply, BFloat16Shapes) {
  KILN_REQUIRE_GPU();
  for (auto const& c : shapeCases()) check(DataType::kBF16, c);
}

TEST(CudaMatrixMultiply, Float64OnTheTiledKernel) {
  KILN_REQUIRE_GPU();
  for (auto const& c : shapeCases()) {
    auto r = check(DataType::kFLOAT64, c, 1e-12);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].tactic, "matrixmultiply_cuda_simt");
  }
}

// Parameters that make each activation do something on values around [-3, 3].
struct Act {
  ActivationType type;
  double alpha, beta;
};
std::vector<Act> activations() {
  return {{ActivationType::kRELU, 0, 0},
          {ActivationType::kSIGMOID, 0, 0},
          {ActivationType::kTANH, 0, 0},
          {ActivationType::kLEAKY_RELU, 0.1, 0},
          {ActivationType::kELU, 0.7, 0},
          {ActivationType::kSELU, 1.67, 1.05},
          {ActivationType::kSOFTSIGN, 0, 0},
          {ActivationType::kSOFTPLUS, 1.5, 0.8},
          {ActivationType::kCLIP, -0.5, 0.5},
          {ActivationType::kHARD_SIGMOID, 0.2, 0.5},
          {ActivationType::kSCALED_TANH, 1.5, 0.6},
          {ActivationType::kTHRESHOLDED_RELU, 0.3, 0},
          {ActivationType::kGELU_ERF, 0, 0},
          {ActivationType::kGELU_TANH, 0, 0}};
}

// Bias along N (cuBLASLt's fused epilogue), along M, over the batch, a scalar; each activation.
void biasAndActivations(DataType t, bool tf32, double tol) {
  std::vector<std::optional<Shape>> biases = {Shape{11}, Shape{1, 11},       Shape{9, 1}, Shape{2, 1, 1, 1},
                                              Shape{},   Shape{2, 3, 9, 11}, std::nullopt};
  for (auto const& bias : biases) {
    for (auto const& act : activations()) {
      Mm c = mm({2, 1, 9, 13}, {3, 13, 11});
      c.bias = bias;
      c.act = static_cast<int>(act.type);
      c.alpha = act.alpha;
      c.beta = act.beta;
      c.tf32 = tf32;
      check(t, c, tol);
    }
    Mm none = mm({2, 1, 9, 13}, {3, 13, 11});
    none.bias = bias;
    none.tf32 = tf32;
    check(t, none, tol);
  }
  // Folded batch (one tall GEMM) with a fused bias, and a matrix-vector product with a one-element bias.
  for (auto const& act : activations()) {
    Mm c = mm({4, 9, 13}, {13, 11});
    c.bias = Shape{11};
    c.act = static_cast<int>(act.type);
    c.alpha = act.alpha;
    c.beta = act.beta;
    c.tf32 = tf32;
    check(t, c, tol);
    Mm v = mm({2, 9, 13}, {13}, 0, 2);
    v.bias = Shape{1};
    v.act = c.act;
    v.alpha = act.alpha;
    v.beta = act.beta;
    v.tf32 = tf32;
    check(t, v, tol);
  }
}

TEST(CudaMatrixMultiply, BiasAndActivationsFloat32) {
  KILN_REQUIRE_GPU();
  biasAndActivations(DataType::kFLOAT, false, -1);
}

TEST(CudaMatrixMultiply, BiasAndActivationsTf32) {
  KILN_REQUIRE_GPU();
  biasAndActivations(DataType::kFLOAT, true, kTf32Tolerance);
}

TEST(CudaMatrixMultiply, BiasAndActivationsFloat16) {
  KILN_REQUIRE_GPU();
  biasAndActivations(DataType::kHALF, false, -1);
}

TEST(CudaMatrixMultiply, BiasAndActivationsBFloat16) {
  KILN_REQUIRE_GPU();
  biasAndActivations(DataType::kBF16, false, -1);
}

TEST(CudaMatrixMultiply, BiasAndActivationsFloat64) {
  KILN_REQUIRE_GPU();
  biasAndActivations(DataType::kFLOAT64, false, 1e-12);
}

TEST(CudaMatrixMultiply, BertShapes) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
    for (bool tf32 : {false, true}) {
      if (tf32 && t != DataType::kFLOAT) continue;
      double tol = tf32 ? kTf32Tolerance : -1;
      Mm ffn = mm({128, 768}, {768, 3072});
      ffn.constB = true;
      ffn.bias = Shape{3072};
      ffn.act = static_cast<int>(ActivationType::kGELU_TANH);
      ffn.tf32 = tf32;
      check(t, ffn, tol);
      ffn.act = static_cast<int>(ActivationType::kGELU_ERF);
      check(t, ffn, tol);
      Mm proj = mm({2, 128, 768}, {768, 768});  // batch folded into M
      proj.constB = true;
      proj.bias = Shape{768};
      proj.tf32 = tf32;
      check(t, proj, tol);
      Mm scores = mm({2, 12, 128, 64}, {2, 12, 128, 64}, 0, 1);  // Q K^T per head
      scores.tf32 = tf32;
      check(t, scores, tol);
    }
  }
}

TEST(CudaMatrixMultiply, EmptyAndZeroDepth) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
    check(t, mm({0, 4}, {4, 5}));
    check(t, mm({2, 0, 3, 4}, {4, 5}));
    check(t, mm({3, 4}, {4, 0}));
    Mm k0 = mm({3, 0}, {0, 5});  // K = 0: y = act(bias)
    k0.bias = Shape{5};
    k0.act = static_cast<int>(ActivationType::kSIGMOID);
    check(t, k0);
    check(t, mm({3, 0}, {0, 5}));
  }
}

TEST(CudaMatrixMultiply, OddAlignmentsAndManyBatches) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
    check(t, mm({3, 5, 3}, {3, 3, 7}));  // strides of odd byte counts
    check(t, mm({7, 5, 3}, {1, 3, 7}, 0, 0, Shape{7}));
    check(t, mm({70000, 1, 2}, {70000, 2, 1}));  // more batches than one cuBLASLt call or grid.z takes
    check(t, mm({70000, 2}, {70000, 2}, 2, 2));
  }
}

TEST(CudaMatrixMultiply, MixedTypesAreNotClaimed) {
  KILN_REQUIRE_GPU();
  // Different operand types fall back to the host: no CUDA tactic may claim them.
  ir::Attributes at = attrs({{"op_a", int64_t{0}}, {"op_b", int64_t{0}}});
  expectMatchesReference(
      {ir::OpType::kMatrixMultiply,
       at,
       {var(randomTensor(DataType::kFLOAT, {3, 4}, 1)), var(randomTensor(DataType::kHALF, {4, 5}, 2))}},
      -1, 0);
}

}  // namespace
}  // namespace kiln
