// gpu tests of the MatrixMultiply tactics (cuBLASLt algo0..2 and the tiled kernel) against the reference
// backend: every float type, transposes, vectors, batch broadcasting, edge sizes, bias with each activation, the
// fused residual; and the post-GEMM epilogue launcher's vectorized and generic paths against host math.
#include <cuda_runtime_api.h>

#include <cstring>
#include <thread>
#include <vector>

#include "backends/cuda/cuda_test_util.h"
#include "backends/cuda/matmul_kernels.h"
#include "backends/cuda/tactic_timing_test_util.h"
#include "backends/reference/activation_math.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers
using cuda::launchMatmulEpilogue;
using cuda::MatmulEpilogue;
using cuda::MatmulEpiloguePath;
using cuda::matmulEpiloguePath;

using Shape = std::vector<int64_t>;

struct Mm {
  Shape a, b;
  int opA = 0, opB = 0;
  std::optional<Shape> bias;
  int act = -1;
  double alpha = 0, beta = 0;
  bool tf32 = false;
  bool constB = false;
  std::optional<Shape> residual;  // input 3 (y's shape)
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
  if (c.residual) {
    if (!c.bias) ins.push_back(none());
    ins.push_back(var(randomTensor(t, *c.residual, seed + 3)));
  }
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

TEST(CudaMatrixMultiply, Tf32IsUsedOnlyWhenAllowed) {
  KILN_REQUIRE_GPU();
  // TF32 rounds inputs to 10 mantissa bits: its error is far above fp32's, which shows the flag reached cuBLASLt
  // (and that cuBLASLt, not the tiled fallback, ran).
  for (bool tf32 : {false, true}) {
    Mm c = mm({130, 257}, {257, 131});
    c.tf32 = tf32;
    auto r = check(DataType::kFLOAT, c, tf32 ? kTf32Tolerance : -1);
    ASSERT_EQ(r.size(), 4u);
    double simt = 0, lt = 0;
    for (auto const& x : r) {
      std::printf("%s %s: %.3g\n", tf32 ? "tf32" : "fp32", x.tactic.c_str(), x.error);
      (x.tactic == "matrixmultiply_cuda_simt" ? simt : lt) =
          std::max(x.tactic == "matrixmultiply_cuda_simt" ? simt : lt, x.error);
    }
    if (tf32)
      EXPECT_GT(lt, 10 * simt);
    else
      EXPECT_LT(lt, 1e-6);
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
  // (type, tf32, activation of the FFN's first GEMM): the fp64 reference is the slow part, so one FFN each.
  struct Case {
    DataType t;
    bool tf32;
    ActivationType act;
  };
  for (Case const& k : {Case{DataType::kFLOAT, false, ActivationType::kGELU_ERF},
                        Case{DataType::kFLOAT, true, ActivationType::kGELU_TANH},
                        Case{DataType::kHALF, false, ActivationType::kGELU_TANH},
                        Case{DataType::kBF16, false, ActivationType::kGELU_ERF}}) {
    double tol = k.tf32 ? kTf32Tolerance : -1;
    Mm ffn = mm({128, 768}, {768, 3072});
    ffn.constB = true;
    ffn.bias = Shape{3072};
    ffn.act = static_cast<int>(k.act);
    ffn.tf32 = k.tf32;
    check(k.t, ffn, tol);
    Mm proj = mm({2, 128, 768}, {768, 768});  // batch folded into M
    proj.constB = true;
    proj.bias = Shape{768};
    proj.tf32 = k.tf32;
    check(k.t, proj, tol);
    Mm scores = mm({2, 12, 128, 64}, {2, 12, 128, 64}, 0, 1);  // Q K^T per head
    scores.tf32 = k.tf32;
    check(k.t, scores, tol);
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

// y = act(a b + bias + residual) (input 3, fused from the residual Add after BERT's attention-output and FFN-out
// GEMMs): cuBLASLt's C with beta = 1, the activation after it in the pointwise pass; the tiled kernel's epilogue.
void residualCases(DataType t, double tol) {
  std::vector<std::optional<Shape>> biases = {std::nullopt, Shape{11}, Shape{9, 1}};
  for (auto const& bias : biases) {
    for (int act : {-1, static_cast<int>(ActivationType::kRELU), static_cast<int>(ActivationType::kGELU_ERF),
                    static_cast<int>(ActivationType::kGELU_TANH)}) {
      Mm c = mm({2, 1, 9, 13}, {3, 13, 11});  // strided-batch calls: C advances with D
      c.bias = bias;
      c.act = act;
      c.residual = Shape{2, 3, 9, 11};
      check(t, c, tol, 5);
    }
  }
  Mm tall = mm({4, 9, 16}, {16, 24});  // b shared: one tall GEMM, bias along N in cuBLASLt's epilogue
  tall.constB = true;
  tall.bias = Shape{24};
  tall.residual = Shape{4, 9, 24};
  check(t, tall, tol, 6);
  Mm vec = mm({2, 9, 13}, {13}, 0, 2);  // matrix times vector
  vec.residual = Shape{2, 9};
  check(t, vec, tol, 7);
  Mm k0 = mm({3, 0}, {0, 5});  // K = 0: y = bias + residual
  k0.bias = Shape{5};
  k0.residual = Shape{3, 5};
  check(t, k0, tol, 8);
}

TEST(CudaMatrixMultiply, ResidualFloat32) {
  KILN_REQUIRE_GPU();
  residualCases(DataType::kFLOAT, -1);
}

TEST(CudaMatrixMultiply, ResidualFloat16) {
  KILN_REQUIRE_GPU();
  residualCases(DataType::kHALF, -1);
}

TEST(CudaMatrixMultiply, ResidualBFloat16) {
  KILN_REQUIRE_GPU();
  residualCases(DataType::kBF16, -1);
}

TEST(CudaMatrixMultiply, ResidualFloat64OnTheTiledKernel) {
  KILN_REQUIRE_GPU();
  Mm c = mm({2, 1, 9, 13}, {3, 13, 11});
  c.bias = Shape{11};
  c.act = static_cast<int>(ActivationType::kSIGMOID);
  c.residual = Shape{2, 3, 9, 11};
  auto r = check(DataType::kFLOAT64, c, 1e-12);
  ASSERT_EQ(r.size(), 1u);
}

TEST(CudaMatrixMultiply, ResidualBertAndManyBatches) {
  KILN_REQUIRE_GPU();
  Mm proj = mm({2, 128, 768}, {768, 768});  // BERT's attention-output GEMM + bias + the layer input
  proj.constB = true;
  proj.bias = Shape{768};
  proj.residual = Shape{2, 128, 768};
  check(DataType::kHALF, proj);
  for (DataType t : {DataType::kFLOAT, DataType::kHALF}) {
    Mm many = mm({70000, 1, 2}, {70000, 2, 1});  // several cuBLASLt calls: C offset per call
    many.residual = Shape{70000, 1, 1};
    check(t, many);
    Mm odd = mm({3, 5, 3}, {3, 3, 7});  // odd byte strides: C's alignment as small as D's
    odd.residual = Shape{3, 5, 7};
    check(t, odd);
  }
}

// Device time of every tactic on the GEMMs of BERT-base and ViT-B/16 at batch 1 (fp16, the epilogue each layer
// fuses), beside the bytes of the operands. Prints only: the builder's timing decides, per shape.
TEST(CudaMatrixMultiply, TimesTransformerBatch1) {
  KILN_REQUIRE_GPU();
  struct Case {
    char const* name;
    int64_t m, k, n;
    bool residual;
    int act;
  };
  int const gelu = static_cast<int>(ActivationType::kGELU_ERF);
  std::vector<Case> const cases{
      {"bert b1 qkv 128x768 -> 2304 +bias", 128, 768, 2304, false, -1},
      {"bert b1 attention out 128x768 -> 768 +bias +residual", 128, 768, 768, true, -1},
      {"bert b1 ffn in 128x768 -> 3072 +bias gelu", 128, 768, 3072, false, gelu},
      {"bert b1 ffn out 128x3072 -> 768 +bias +residual", 128, 3072, 768, true, -1},
      {"vit b1 mlp in 197x768 -> 3072 +bias gelu", 197, 768, 3072, false, gelu},
      {"vit b1 mlp out 197x3072 -> 768 +bias +residual", 197, 3072, 768, true, -1},
  };
  DataType const t = DataType::kHALF;
  for (Case const& c : cases) {
    ir::Graph g;
    ir::Value* x = *g.addInput("x", t, makeDims({1, c.m, c.k}));
    ir::Value* w = g.addConstant("w", *HostTensor::allocate(t, makeDims({c.k, c.n}), "w"))->output(0);
    ir::Value* b = g.addConstant("b", *HostTensor::allocate(t, makeDims({c.n}), "b"))->output(0);
    std::vector<ir::Value*> ins{x, w, b};
    if (c.residual) ins.push_back(*g.addInput("r", t, makeDims({1, c.m, c.n})));
    ir::Node* n = g.addNode(ir::OpType::kMatrixMultiply, "mm", ins, 1);
    n->attrs.setInt("activation", c.act);
    g.markOutput(n->output(0));
    ir::HostEvaluator eval = backends::referenceEvaluator();
    ASSERT_TRUE(ir::inferGraphInPlace(g, &eval).isOk());
    std::vector<ir::TensorInfo> in, out{{t, n->output(0)->shape}};
    for (ir::Value* v : n->inputs) in.push_back({v->dtype, v->shape});
    double moved = 2.0 * static_cast<double>(c.m * c.k + c.k * c.n + c.m * c.n * (c.residual ? 2 : 1));
    std::printf("[ bench ] %s: %.1f MB to move\n", c.name, moved / 1e6);
    printTacticTimes(*n, in, out, moved, 50);
  }
}

// ---- launchMatmulEpilogue directly: which path runs, and its results against host math. ----

// One in-place epilogue over y (count elements of t, at `yOffset` elements into its buffer) with the bias
// (biasLen elements at `biasOffset` into its buffer) mapped by `ep`'s dims/strides. Expects `path`; compares
// with the reference's activation in double; checks that the elements around y are untouched.
void checkEpilogue(DataType t, int64_t count, int64_t yOffset, std::optional<int64_t> biasLen, int64_t biasOffset,
                   MatmulEpilogue ep, MatmulEpiloguePath path, double tol = -1) {
  SCOPED_TRACE(strCat(dataTypeName(t), " count ", count, " y+", yOffset, " bias ", biasLen ? *biasLen : -1, "+",
                      biasOffset, " act ", ep.activation));
  size_t es = dataTypeSize(t);
  int64_t const pad = 16;
  HostTensor y0 = randomTensor(t, {count + 2 * pad}, 41, -3, 3);
  HostTensor b0 = randomTensor(t, {(biasLen ? *biasLen : 0) + pad}, 42, -1, 1);
  void *dy = nullptr, *db = nullptr;
  ASSERT_EQ(cudaMalloc(&dy, y0.bytes()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&db, b0.bytes()), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dy, y0.data(), y0.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(db, b0.data(), b0.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  void* y = static_cast<char*>(dy) + (pad + yOffset) * es;
  ep.bias = biasLen ? static_cast<char*>(db) + biasOffset * es : nullptr;
  int32_t code = static_cast<int32_t>(t);
  EXPECT_EQ(matmulEpiloguePath(y, code, ep), path);
  ASSERT_TRUE(launchMatmulEpilogue(y, code, count, ep, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  HostTensor got = randomTensor(t, {count + 2 * pad}, 43);
  ASSERT_EQ(cudaMemcpy(got.mutableData(), dy, got.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(dy);
  cudaFree(db);
  double num = 0, den = 0;
  int64_t first = pad + yOffset;
  for (int64_t i = 0; i < count; ++i) {
    double v = y0.doubleAt(first + i);
    if (biasLen) {
      // The bias's offset for y's linear index i over ep's dims (row-major), as the kernels map it.
      int64_t off = 0, rem = i;
      for (int32_t d = ep.rank - 1; d >= 0; --d) {
        off += (rem % ep.dims[d]) * ep.biasStrides[d];
        rem /= ep.dims[d];
      }
      v += b0.doubleAt(biasOffset + off);
    }
    if (ep.activation >= 0)
      v = backends::reference::applyActivation(static_cast<ActivationType>(ep.activation), v, ep.alpha, ep.beta);
    double d = got.doubleAt(first + i) - v;
    num += d * d;
    den += v * v;
  }
  // Norm-relative error, as the tactic tests measure it (NaN fails).
  double err = std::sqrt(num / (den > 0 ? den : 1));
  EXPECT_LE(err, tol < 0 ? defaultTolerance(t) : tol);
  for (int64_t i = 0; i < y0.count(); ++i) {
    if (i >= first && i < first + count) continue;
    ASSERT_EQ(
        std::memcmp(static_cast<char const*>(got.data()) + i * es, static_cast<char const*>(y0.data()) + i * es, es), 0)
        << "element " << i - first << " outside y was written";
  }
}

// y [m, n] with a bias of n along its rows (strides {0, 1}), or none.
MatmulEpilogue rowsEpilogue(int64_t m, int64_t n, int act, double alpha = 0, double beta = 0) {
  MatmulEpilogue ep;
  ep.rank = 2;
  ep.dims[0] = m;
  ep.dims[1] = n;
  ep.biasStrides[0] = 0;
  ep.biasStrides[1] = 1;
  ep.activation = act;
  ep.alpha = alpha;
  ep.beta = beta;
  return ep;
}

bool vectorActivation(ActivationType a) {
  switch (a) {
    case ActivationType::kRELU:
    case ActivationType::kSIGMOID:
    case ActivationType::kTANH:
    case ActivationType::kLEAKY_RELU:
    case ActivationType::kCLIP:
    case ActivationType::kGELU_ERF:
    case ActivationType::kGELU_TANH:
      return true;
    case ActivationType::kELU:
    case ActivationType::kSELU:
    case ActivationType::kSOFTSIGN:
    case ActivationType::kSOFTPLUS:
    case ActivationType::kHARD_SIGMOID:
    case ActivationType::kSCALED_TANH:
    case ActivationType::kTHRESHOLDED_RELU:
      return false;
  }
  return false;
}

// Every activation on the vector path (those compiled in) or the generic one (the rest), with and without a
// bias along the rows, fp32/fp16/bf16; one layout of y whose row count is not a multiple of the unroll.
TEST(CudaMatmulEpilogue, EachActivationOnItsPath) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
    for (Act const& a : activations()) {
      auto path = vectorActivation(a.type) ? MatmulEpiloguePath::kVector : MatmulEpiloguePath::kGeneric;
      MatmulEpilogue ep = rowsEpilogue(37, 48, static_cast<int>(a.type), a.alpha, a.beta);
      checkEpilogue(t, 37 * 48, 0, int64_t{48}, 0, ep, path);
      checkEpilogue(t, 37 * 48, 0, std::nullopt, 0, ep, path);
    }
    // Bias only (no activation), and large enough for a grid of many blocks with four vectors per thread.
    checkEpilogue(t, 1027 * 768, 0, int64_t{768}, 0, rowsEpilogue(1027, 768, -1), MatmulEpiloguePath::kVector);
    checkEpilogue(t, 257 * 3072, 0, int64_t{3072}, 0,
                  rowsEpilogue(257, 3072, static_cast<int>(ActivationType::kGELU_ERF)), MatmulEpiloguePath::kVector);
  }
}

// What the vector path refuses falls back, and what it takes at its edges is still right: y or the bias off
// 16 bytes, a row length not in whole vectors, a bias along another dim, a residual, fp64; odd element counts
// without a bias (the scalar tail), a bias covering y whole, one element.
TEST(CudaMatmulEpilogue, FallbacksAndEdges) {
  KILN_REQUIRE_GPU();
  int const gelu = static_cast<int>(ActivationType::kGELU_ERF);
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
    int64_t lanes = 16 / static_cast<int64_t>(dataTypeSize(t));
    MatmulEpilogue rows = rowsEpilogue(9, 8 * lanes, gelu);
    int64_t n = 8 * lanes, count = 9 * n;
    checkEpilogue(t, count, 0, n, 0, rows, MatmulEpiloguePath::kVector);
    checkEpilogue(t, count, 1, n, 0, rows, MatmulEpiloguePath::kGeneric);  // y misaligned
    checkEpilogue(t, count, 0, n, 1, rows, MatmulEpiloguePath::kGeneric);  // bias misaligned
    MatmulEpilogue ragged = rowsEpilogue(9, n + 1, gelu);                  // rows not in whole vectors
    checkEpilogue(t, 9 * (n + 1), 0, n + 1, 0, ragged, MatmulEpiloguePath::kGeneric);
    MatmulEpilogue alongM = rowsEpilogue(9, n, gelu);  // a bias per row
    alongM.biasStrides[0] = 1;
    alongM.biasStrides[1] = 0;
    checkEpilogue(t, count, 0, int64_t{9}, 0, alongM, MatmulEpiloguePath::kGeneric);
    for (int64_t odd : {int64_t{1}, lanes - 1, 5 * lanes + 3, 4099 * lanes + 1})  // no bias: the scalar tail
      checkEpilogue(t, odd, 0, std::nullopt, 0, rowsEpilogue(1, odd, gelu), MatmulEpiloguePath::kVector);
    MatmulEpilogue whole;  // a bias of y's whole shape
    whole.rank = 1;
    whole.dims[0] = 6 * lanes;
    whole.biasStrides[0] = 1;
    whole.activation = static_cast<int>(ActivationType::kTANH);
    checkEpilogue(t, 6 * lanes, 0, 6 * lanes, 0, whole, MatmulEpiloguePath::kVector);
    // A residual is read by the generic kernel only (cuBLASLt adds it as C; this checks the launcher's choice).
    MatmulEpilogue withResidual = rowsEpilogue(9, n, -1);
    withResidual.residual = &withResidual;  // never dereferenced: only the path is asked for
    EXPECT_EQ(matmulEpiloguePath(reinterpret_cast<void*>(uintptr_t{256}), static_cast<int32_t>(t), withResidual),
              MatmulEpiloguePath::kGeneric);
  }
  MatmulEpilogue f64 = rowsEpilogue(9, 16, gelu);
  checkEpilogue(DataType::kFLOAT64, 9 * 16, 0, int64_t{16}, 0, f64, MatmulEpiloguePath::kGeneric, 1e-12);
}

// The epilogue after BERT-base's FFN-in GEMM at batch 128 x 128 tokens (fp16 [16384, 3072], GELU erf, the bias
// already added by cuBLASLt) and a bias-only pass of the same size: event-timed, bytes read + written per second
// printed, never asserted (speed is for the benchmarks; an sm_90 part moves 3.35-4.8 TB/s).
TEST(CudaMatmulEpilogue, BertFfnBandwidth) {
  KILN_REQUIRE_GPU();
  int64_t const m = 128 * 128, n = 3072, count = m * n;
  void *y = nullptr, *bias = nullptr;
  ASSERT_EQ(cudaMalloc(&y, static_cast<size_t>(count) * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&bias, static_cast<size_t>(n) * 2), cudaSuccess);
  {
    // Values of both signs: erfc's branches diverge inside warps as they do on real activations.
    HostTensor init = randomTensor(DataType::kHALF, {count}, 51, -3, 3);
    ASSERT_EQ(cudaMemcpy(y, init.data(), init.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ASSERT_EQ(cudaMemset(bias, 0, static_cast<size_t>(n) * 2), cudaSuccess);
  cudaEvent_t start = nullptr, stop = nullptr;
  ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&stop), cudaSuccess);
  int32_t const half = static_cast<int32_t>(DataType::kHALF);
  for (bool withBias : {false, true}) {
    MatmulEpilogue ep = rowsEpilogue(m, n, withBias ? -1 : static_cast<int>(ActivationType::kGELU_ERF));
    ep.bias = withBias ? bias : nullptr;
    ASSERT_EQ(matmulEpiloguePath(y, half, ep), MatmulEpiloguePath::kVector);
    constexpr int kRuns = 20;
    ASSERT_TRUE(launchMatmulEpilogue(y, half, count, ep, nullptr));  // warm-up
    ASSERT_EQ(cudaEventRecord(start, nullptr), cudaSuccess);
    for (int r = 0; r < kRuns; ++r) ASSERT_TRUE(launchMatmulEpilogue(y, half, count, ep, nullptr));
    ASSERT_EQ(cudaEventRecord(stop, nullptr), cudaSuccess);
    ASSERT_EQ(cudaEventSynchronize(stop), cudaSuccess);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    float ms = 0;
    ASSERT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
    double perRun = ms / kRuns;
    double gbps = 2.0 * static_cast<double>(count) * 2 / (perRun * 1e-3) / 1e9;
    std::printf("%s epilogue fp16 [%lld, %lld]: %.4f ms, %.0f GB/s\n", withBias ? "bias" : "GELU erf",
                static_cast<long long>(m), static_cast<long long>(n), perRun, gbps);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(y);
  cudaFree(bias);
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

// One cuBLASLt kernel shared by threads enqueueing different shapes at once, and enqueued inside a CUDA graph
// capture (a shape first seen there: its plan is made during the capture). fp32 [2, M, 40] x [40, 24] + bias, ReLU.
TEST(CudaMatrixMultiply, SharedKernelAcrossThreadsAndGraphCapture) {
  KILN_REQUIRE_GPU();
  constexpr int64_t kK = 40, kN = 24;
  ir::Graph g;
  auto a = g.addInput("a", DataType::kFLOAT, makeDims({2, -1, kK}));
  auto b = g.addInput("b", DataType::kFLOAT, makeDims({kK, kN}));
  auto bias = g.addInput("bias", DataType::kFLOAT, makeDims({kN}));
  ASSERT_TRUE(a.isOk() && b.isOk() && bias.isOk());
  ir::Node* n = g.addNode(ir::OpType::kMatrixMultiply, "mm", {*a, *b, *bias});
  n->attrs = attrs({{"activation", int64_t{static_cast<int64_t>(ActivationType::kRELU)}}});
  for (char const* name : {"matrixmultiply_cublaslt_algo0", "matrixmultiply_cuda_simt"}) {
    SCOPED_TRACE(name);
    backends::Tactic const* t = backends::TacticRegistry::instance().find(name);
    ASSERT_NE(t, nullptr);
    auto k = t->create(*n);
    ASSERT_TRUE(k.isOk()) << k.status().toString();
    backends::Kernel const& kernel = **k;
    auto bv = randomValues(kK * kN, 2), biasv = randomValues(kN, 3);
    // Runs y = relu(a b + bias) for M rows per batch on `stream`, or captured in a graph; returns max |error|.
    auto runOnce = [&](int64_t m, bool capture) -> double {
      auto av = randomValues(static_cast<size_t>(2 * m * kK), static_cast<uint32_t>(m));
      std::vector<float> ah(av.begin(), av.end()), bh(bv.begin(), bv.end()), biash(biasv.begin(), biasv.end());
      std::vector<float> yh(static_cast<size_t>(2 * m * kN), -7.f);
      void *da = nullptr, *db = nullptr, *dbias = nullptr, *dy = nullptr;
      void* ws = nullptr;
      std::vector<ir::TensorInfo> in = {{DataType::kFLOAT, makeDims({2, m, kK})},
                                        {DataType::kFLOAT, makeDims({kK, kN})},
                                        {DataType::kFLOAT, makeDims({kN})}};
      std::vector<ir::TensorInfo> out = {{DataType::kFLOAT, makeDims({2, m, kN})}};
      size_t wsBytes = kernel.workspaceSize(in, out);
      cudaStream_t stream = nullptr;
      EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
      EXPECT_EQ(cudaMalloc(&da, ah.size() * 4), cudaSuccess);
      EXPECT_EQ(cudaMalloc(&db, bh.size() * 4), cudaSuccess);
      EXPECT_EQ(cudaMalloc(&dbias, biash.size() * 4), cudaSuccess);
      EXPECT_EQ(cudaMalloc(&dy, yh.size() * 4), cudaSuccess);
      if (wsBytes) {
        EXPECT_EQ(cudaMalloc(&ws, wsBytes), cudaSuccess);
      }
      cudaMemcpy(da, ah.data(), ah.size() * 4, cudaMemcpyHostToDevice);
      cudaMemcpy(db, bh.data(), bh.size() * 4, cudaMemcpyHostToDevice);
      cudaMemcpy(dbias, biash.data(), biash.size() * 4, cudaMemcpyHostToDevice);
      cudaMemset(dy, 0xff, yh.size() * 4);
      cudaDeviceSynchronize();  // the copies and the memset are on the legacy stream
      backends::DeviceStream ds(device(), stream);
      backends::LaunchContext ctx;
      ctx.stream = &ds;
      ctx.inputs = {{da, DataType::kFLOAT, in[0].shape},
                    {db, DataType::kFLOAT, in[1].shape},
                    {dbias, DataType::kFLOAT, in[2].shape}};
      ctx.outputs = {{dy, DataType::kFLOAT, out[0].shape}};
      ctx.workspace = ws;
      ctx.workspaceSize = wsBytes;
      if (capture) {
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        EXPECT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
        Status s = kernel.enqueue(ctx);
        EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
        EXPECT_TRUE(s.isOk()) << s.toString();
        EXPECT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
        EXPECT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
        EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
      } else {
        Status s = kernel.enqueue(ctx);
        EXPECT_TRUE(s.isOk()) << s.toString();
      }
      EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      cudaMemcpy(yh.data(), dy, yh.size() * 4, cudaMemcpyDeviceToHost);
      double worst = 0;
      for (int64_t r = 0; r < 2 * m; ++r)
        for (int64_t j = 0; j < kN; ++j) {
          double acc = biasv[static_cast<size_t>(j)];
          for (int64_t t2 = 0; t2 < kK; ++t2)
            acc += static_cast<double>(ah[static_cast<size_t>(r * kK + t2)]) * bh[static_cast<size_t>(t2 * kN + j)];
          acc = acc > 0 ? acc : 0;
          double e = std::fabs(acc - yh[static_cast<size_t>(r * kN + j)]);
          worst = std::isnan(e) ? INFINITY : std::max(worst, e);
        }
      cudaFree(da);
      cudaFree(db);
      cudaFree(dbias);
      cudaFree(dy);
      if (ws) cudaFree(ws);
      cudaStreamDestroy(stream);
      return worst;
    };
    std::vector<double> worst(4, 0);
    std::vector<std::thread> threads;
    for (int th = 0; th < 4; ++th)
      threads.emplace_back([&, th] {
        for (int it = 0; it < 6; ++it)
          worst[static_cast<size_t>(th)] =
              std::max(worst[static_cast<size_t>(th)], runOnce(5 + 7 * ((th + it) % 4), false));
      });
    for (auto& th : threads) th.join();
    for (double w : worst) EXPECT_LE(w, 1e-4);
    EXPECT_LE(runOnce(61, true), 1e-4);
  }
}

}  // namespace
}  // namespace kiln
