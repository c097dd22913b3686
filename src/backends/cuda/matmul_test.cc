// gpu tests of the MatrixMultiply tactics (cuBLASLt algo0..2 and the tiled kernel) against the reference
// backend: every float type, transposes, vectors, batch broadcasting, edge sizes, bias with each activation.
#include <cuda_runtime_api.h>

#include <thread>
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
