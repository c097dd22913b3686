// Tests of the cuBLASLt matrix multiply's L2-resident chunking (matmul_cublaslt.cc, the _l2chunk tactics): the chunk
// planner on the host, and on a GPU the chunked GEMM + pointwise pass against the reference backend and host math
// (every pass it chunks, each float type, row counts off the chunk size, one chunk, CUDA graph capture), with the
// FFN-in GEMMs of BERT-base and ViT-B/16 timed chunked and whole.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backends/cuda/cuda_test_util.h"
#include "backends/cuda/matmul.h"
#include "backends/reference/activation_math.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers
using cuda::matmul::l2ChunkBudget;
using cuda::matmul::l2ChunkRows;
using cuda::matmul::setL2ChunkBudget;

using Shape = std::vector<int64_t>;

constexpr char const* kChunk0 = "matrixmultiply_cublaslt_l2chunk_algo0";
constexpr char const* kWhole0 = "matrixmultiply_cublaslt_algo0";

// Forces the chunk budget for one scope (the tactics' supports() and launches read it).
class ScopedBudget {
 public:
  explicit ScopedBudget(int64_t bytes) : previous_(setL2ChunkBudget(bytes)) {}
  ~ScopedBudget() { setL2ChunkBudget(previous_); }
  ScopedBudget(ScopedBudget const&) = delete;
  ScopedBudget& operator=(ScopedBudget const&) = delete;

 private:
  int64_t previous_;
};

// ---- The planner (host only: runs everywhere). ----

TEST(CudaMatmulL2Chunk, ChunkRowsExamples) {
  EXPECT_EQ(l2ChunkRows(1000, 10, 10000), 0);   // fits exactly
  EXPECT_EQ(l2ChunkRows(1000, 10, 9999), 512);  // 2 chunks of 500, rounded up to 128 rows
  EXPECT_EQ(l2ChunkRows(128, 1 << 20, 1), 0);   // one tile of rows is never split
  EXPECT_EQ(l2ChunkRows(129, 100, 100), 128);   // a row over budget: chunks of one tile, the last of 1 row
  EXPECT_EQ(l2ChunkRows(5000, 100, 0), 0);      // no budget (no device): whole
  EXPECT_EQ(l2ChunkRows(5000, 0, 100), 0);
  // BERT-base b128's FFN-in output, fp16 [16384, 3072], under a third of a 50 MiB L2: 6 chunks of 2816 rows
  // (the last 2304).
  EXPECT_EQ(l2ChunkRows(16384, 3072 * 2, (int64_t{50} << 20) / 3), 2816);
}

TEST(CudaMatmulL2Chunk, ChunkRowsProperties) {
  for (int64_t m = 129; m < 6000; m += 37) {
    for (int64_t rowBytes : {int64_t{64}, int64_t{1536}, int64_t{6144}}) {
      for (int64_t budget : {int64_t{100000}, int64_t{1} << 20, int64_t{3} << 20}) {
        SCOPED_TRACE(strCat("m ", m, " row ", rowBytes, " budget ", budget));
        int64_t rows = l2ChunkRows(m, rowBytes, budget);
        if (m * rowBytes <= budget) {
          EXPECT_EQ(rows, 0);
          continue;
        }
        ASSERT_GT(rows, 0);
        EXPECT_EQ(rows % 128, 0);
        EXPECT_LT(rows, m);
        int64_t chunks = (m + rows - 1) / rows;
        int64_t planned = (m * rowBytes + budget - 1) / budget;  // the fewest chunks that fit
        EXPECT_LE(chunks, planned);
        // Each chunk fits the budget but for the rounding up to whole tiles (a chunk of one tile may not fit).
        EXPECT_LT((rows - 128) * rowBytes, budget) << rows;
      }
    }
  }
}

TEST(CudaMatmulL2Chunk, BudgetOverride) {
  int64_t before = setL2ChunkBudget(12345);
  EXPECT_EQ(l2ChunkBudget(), 12345);
  EXPECT_EQ(setL2ChunkBudget(before), 12345);
  if (before > 0) {
    EXPECT_EQ(l2ChunkBudget(), before);
  }
  ASSERT_EQ(setL2ChunkBudget(0), before);
  // Without an override: a third of the device's L2, or 0 without a device (nothing chunked).
  int64_t budget = l2ChunkBudget();
  EXPECT_GE(budget, 0);
  if (gpuAvailable()) {
    int l2 = 0;
    ASSERT_EQ(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), cudaSuccess);
    EXPECT_EQ(budget, l2 / 3);
  }
  setL2ChunkBudget(before);
}

// ---- Against the reference backend (every tactic the node has; the chunked ones must be among them). ----

struct Case {
  Shape a, b;
  int opA = 0, opB = 0;
  std::optional<Shape> bias;
  std::optional<Shape> residual;
  ActivationType act = ActivationType::kGELU_ERF;
  double alpha = 0, beta = 0;
  bool chunked = true;  // whether the _l2chunk tactics are offered
};

std::vector<TacticResult> runCase(DataType t, Case const& c, uint32_t seed) {
  SCOPED_TRACE(strCat(dataTypeName(t), " a ", dimsToString(makeDims(c.a)), " b ", dimsToString(makeDims(c.b)), " op ",
                      c.opA, "/", c.opB, " bias ", c.bias ? dimsToString(makeDims(*c.bias)) : "none",
                      c.residual ? " residual" : "", " act ", static_cast<int>(c.act)));
  ir::Attributes at = attrs({{"op_a", int64_t{c.opA}},
                             {"op_b", int64_t{c.opB}},
                             {"activation", int64_t{static_cast<int>(c.act)}},
                             {"act_alpha", c.alpha},
                             {"act_beta", c.beta}});
  std::vector<In> ins = {var(randomTensor(t, c.a, seed)), cst(randomTensor(t, c.b, seed + 1))};
  if (c.bias) ins.push_back(var(randomTensor(t, *c.bias, seed + 2)));
  if (c.residual) {
    if (!c.bias) ins.push_back(none());
    ins.push_back(var(randomTensor(t, *c.residual, seed + 3)));
  }
  auto r = expectMatchesReference({ir::OpType::kMatrixMultiply, at, ins}, -1, 2);
  size_t chunkedTactics = 0;
  bool whole = false;
  for (auto const& x : r) {
    if (x.tactic.rfind("matrixmultiply_cublaslt_l2chunk_algo", 0) == 0) ++chunkedTactics;
    whole = whole || x.tactic == kWhole0;
  }
  EXPECT_TRUE(whole);
  EXPECT_EQ(chunkedTactics, c.chunked ? 3u : 0u);
  return r;
}

// Budget: 200 rows of the case's output, so chunks are 256 rows (2 tiles) and the last one shorter.
int64_t budgetFor(DataType t, Case const& c) {
  int64_t n = c.opB == 1 ? c.b[0] : c.b.back();
  return 200 * n * static_cast<int64_t>(dataTypeSize(t));
}

TEST(CudaMatmulL2Chunk, MatchesReferenceForEveryChunkedPass) {
  KILN_REQUIRE_GPU();
  std::vector<Case> cases;
  {
    Case c;  // the FFN-in shape scaled down: bias in cuBLASLt, GELU erf in the vector pass; 1000 = 3 x 256 + 232
    c.a = {1000, 64};
    c.b = {64, 96};
    c.bias = Shape{96};
    cases.push_back(c);
    c.opB = 1;  // b stored [N, K]
    c.b = {96, 64};
    cases.push_back(c);
    Case s;  // no bias, another compiled activation; 300 = 256 + 44
    s.a = {300, 64};
    s.b = {64, 96};
    s.act = ActivationType::kSIGMOID;
    cases.push_back(s);
    Case f;  // a batch folded into the rows (b shared), an activation the pass switches on per element
    f.a = {3, 250, 64};
    f.b = {64, 96};
    f.bias = Shape{96};
    f.act = ActivationType::kELU;
    f.alpha = 0.7;
    cases.push_back(f);
    Case o;  // rows of 37 elements: chunk offsets off 16 bytes (the generic pass, cuBLASLt at small alignments)
    o.a = {517, 40};
    o.b = {40, 37};
    o.bias = Shape{37};
    cases.push_back(o);
    Case r;  // a residual (cuBLASLt's C, offset per chunk), the activation after it in the pass
    r.a = {600, 64};
    r.b = {64, 96};
    r.bias = Shape{96};
    r.residual = Shape{600, 96};
    r.act = ActivationType::kGELU_TANH;
    cases.push_back(r);
    Case l;  // leaky ReLU with its alpha, 1 row past 4 chunks
    l.a = {1025, 32};
    l.b = {32, 64};
    l.bias = Shape{64};
    l.act = ActivationType::kLEAKY_RELU;
    l.alpha = 0.1;
    cases.push_back(l);
  }
  uint32_t seed = 11;
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16})
    for (Case const& c : cases) {
      ScopedBudget budget(budgetFor(t, c));
      runCase(t, c, seed += 4);
    }
}

TEST(CudaMatmulL2Chunk, NotOfferedWhereNothingIsChunked) {
  KILN_REQUIRE_GPU();
  auto base = [] {
    Case c;
    c.a = {1000, 64};
    c.b = {64, 96};
    c.bias = Shape{96};
    c.chunked = false;
    return c;
  };
  std::vector<std::pair<DataType, Case>> cases;
  Case relu = base();  // ReLU in cuBLASLt's epilogue: no pass to chunk
  relu.act = ActivationType::kRELU;
  cases.emplace_back(DataType::kHALF, relu);
  Case tanhGelu = base();  // fp16's GELU tanh is cuBLASLt's too
  tanhGelu.act = ActivationType::kGELU_TANH;
  cases.emplace_back(DataType::kHALF, tanhGelu);
  Case transA = base();  // a stored [K, M]: a chunk of rows is not a block of a
  transA.a = {64, 1000};
  transA.opA = 1;
  cases.emplace_back(DataType::kHALF, transA);
  Case batched = base();  // a strided batch: left whole
  batched.a = {2, 500, 64};
  batched.b = {2, 64, 96};
  cases.emplace_back(DataType::kFLOAT, batched);
  Case alongM = base();  // a bias per row is added in the pass, mapped by y's whole index
  alongM.bias = Shape{1000, 1};
  cases.emplace_back(DataType::kHALF, alongM);
  Case small = base();  // within the budget
  small.a = {150, 64};
  cases.emplace_back(DataType::kHALF, small);
  uint32_t seed = 101;
  for (auto const& [t, c] : cases) {
    ScopedBudget budget(budgetFor(t, c));
    runCase(t, c, seed += 4);
  }
}

// ---- One kernel run directly: one chunk or many, enqueued plainly or captured into a CUDA graph. ----

struct Direct {
  DataType t = DataType::kHALF;
  int64_t m = 0, k = 0, n = 0;
  bool bias = true;
  ActivationType act = ActivationType::kGELU_ERF;
};

// y = act(a b + bias) on `tactic`'s kernel ([m, k] x [k, n]), enqueued on a stream of its own (or captured and
// launched as a graph, twice, y poisoned before each launch); returns the norm-relative error against host math in
// double.
double runDirect(char const* tactic, Direct const& d, bool capture) {
  SCOPED_TRACE(strCat(tactic, " ", dataTypeName(d.t), " [", d.m, ", ", d.k, "] x [", d.k, ", ", d.n, "]",
                      capture ? " captured" : ""));
  ir::Graph g;
  auto a = g.addInput("a", d.t, makeDims({d.m, d.k}));
  auto b = g.addInput("b", d.t, makeDims({d.k, d.n}));
  auto bias = g.addInput("bias", d.t, makeDims({d.n}));
  EXPECT_TRUE(a.isOk() && b.isOk() && bias.isOk());
  std::vector<ir::Value*> ins = {*a, *b};
  if (d.bias) ins.push_back(*bias);
  ir::Node* node = g.addNode(ir::OpType::kMatrixMultiply, "mm", ins);
  node->attrs = attrs({{"activation", int64_t{static_cast<int>(d.act)}}});
  backends::Tactic const* t = backends::TacticRegistry::instance().find(tactic);
  EXPECT_NE(t, nullptr);
  if (!t) return INFINITY;
  auto kernel = t->create(*node);
  EXPECT_TRUE(kernel.isOk()) << kernel.status().toString();
  if (!kernel.isOk()) return INFINITY;

  HostTensor ah = randomTensor(d.t, {d.m, d.k}, 21), bh = randomTensor(d.t, {d.k, d.n}, 22);
  HostTensor biash = randomTensor(d.t, {d.n}, 23);
  HostTensor yh = randomTensor(d.t, {d.m, d.n}, 24);
  std::vector<ir::TensorInfo> in = {{d.t, ah.shape()}, {d.t, bh.shape()}};
  if (d.bias) in.push_back({d.t, biash.shape()});
  std::vector<ir::TensorInfo> out = {{d.t, yh.shape()}};
  size_t wsBytes = (*kernel)->workspaceSize(in, out);
  void *da = nullptr, *db = nullptr, *dbias = nullptr, *dy = nullptr, *ws = nullptr;
  EXPECT_EQ(cudaMalloc(&da, ah.bytes()), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&db, bh.bytes()), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dbias, biash.bytes()), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dy, yh.bytes()), cudaSuccess);
  if (wsBytes) {
    EXPECT_EQ(cudaMalloc(&ws, wsBytes), cudaSuccess);
  }
  EXPECT_EQ(cudaMemcpy(da, ah.data(), ah.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(db, bh.data(), bh.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dbias, biash.data(), biash.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  cudaStream_t stream = nullptr;
  EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  backends::DeviceStream ds(device(), stream);
  backends::LaunchContext ctx;
  ctx.stream = &ds;
  ctx.inputs = {{da, d.t, ah.shape()}, {db, d.t, bh.shape()}};
  if (d.bias) ctx.inputs.push_back({dbias, d.t, biash.shape()});
  ctx.outputs = {{dy, d.t, yh.shape()}};
  ctx.workspace = ws;
  ctx.workspaceSize = wsBytes;
  auto poison = [&] { EXPECT_EQ(cudaMemsetAsync(dy, 0xff, yh.bytes(), stream), cudaSuccess); };
  if (capture) {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    EXPECT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    Status s = (*kernel)->enqueue(ctx);
    EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
    EXPECT_TRUE(s.isOk()) << s.toString();
    EXPECT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    for (int launch = 0; launch < 2; ++launch) {
      poison();
      EXPECT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    }
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  } else {
    poison();
    Status s = (*kernel)->enqueue(ctx);
    EXPECT_TRUE(s.isOk()) << s.toString();
  }
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(yh.mutableData(), dy, yh.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dbias);
  cudaFree(dy);
  if (ws) cudaFree(ws);
  cudaStreamDestroy(stream);

  double num = 0, den = 0;
  for (int64_t i = 0; i < d.m; ++i)
    for (int64_t j = 0; j < d.n; ++j) {
      double acc = d.bias ? biash.doubleAt(j) : 0;
      for (int64_t p = 0; p < d.k; ++p) acc += ah.doubleAt(i * d.k + p) * bh.doubleAt(p * d.n + j);
      double want = backends::reference::applyActivation(d.act, acc, 0, 0);
      double diff = yh.doubleAt(i * d.n + j) - want;
      num += diff * diff;
      den += want * want;
    }
  double err = std::sqrt(num / (den > 0 ? den : 1));
  return std::isnan(err) ? INFINITY : err;
}

// Row counts against 128-row chunks (the budget of 128 rows): one row, one chunk exactly, one row past it (a last
// chunk of 1 row), several chunks and a ragged last one; each float type; the chunked kernel and the whole one.
TEST(CudaMatmulL2Chunk, RowCountsAroundTheChunk) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
    int64_t const n = 64;
    ScopedBudget budget(128 * n * static_cast<int64_t>(dataTypeSize(t)));
    for (int64_t m : {int64_t{1}, int64_t{100}, int64_t{128}, int64_t{129}, int64_t{383}, int64_t{640}}) {
      Direct d;
      d.t = t;
      d.m = m;
      d.k = 48;
      d.n = n;
      for (char const* tactic : {kChunk0, kWhole0}) EXPECT_LE(runDirect(tactic, d, false), defaultTolerance(t));
    }
  }
}

// The chunked launch (6 chunks: 5 x 256 rows and 1 x 236) and the one-chunk launch captured into CUDA graphs, their
// plans first made during the capture (host work only), and replayed.
TEST(CudaMatmulL2Chunk, UnderGraphCapture) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
    for (bool bias : {true, false}) {
      Direct d;
      d.t = t;
      d.m = 1516;
      d.k = 72;
      d.n = 80;
      d.bias = bias;
      d.act = bias ? ActivationType::kGELU_ERF : ActivationType::kTANH;
      ScopedBudget budget(256 * d.n * static_cast<int64_t>(dataTypeSize(t)));
      EXPECT_LE(runDirect(kChunk0, d, true), defaultTolerance(t));
      d.m = 77;  // one chunk: the launch runs whole
      EXPECT_LE(runDirect(kChunk0, d, true), defaultTolerance(t));
    }
  }
}

// BERT-base b128's and ViT-B/16 b64's FFN-in GEMMs + bias + GELU erf in fp16 under the device's budget: each
// cuBLASLt heuristic result run whole and chunked, and the GEMM + bias alone (cuBLASLt's epilogue, no pass: the
// floor). Event-timed, printed, never asserted.
TEST(CudaMatmulEpilogue, FfnGeluChunkedVsWhole) {
  KILN_REQUIRE_GPU();
  struct Ffn {
    char const* name;
    int64_t m, k, n;
  };
  DataType const t = DataType::kHALF;
  for (Ffn const& f : {Ffn{"BERT-base b128", 16384, 768, 3072}, Ffn{"ViT-B/16 b64", 12608, 768, 3072}}) {
    int64_t rows = l2ChunkRows(f.m, f.n * 2, l2ChunkBudget());
    std::printf("[ bench    ] %s [%lld, %lld] x [%lld, %lld]: L2 budget %lld B, chunks of %lld rows\n", f.name,
                static_cast<long long>(f.m), static_cast<long long>(f.k), static_cast<long long>(f.k),
                static_cast<long long>(f.n), static_cast<long long>(l2ChunkBudget()), static_cast<long long>(rows));
    ir::Graph g;
    auto a = g.addInput("a", t, makeDims({f.m, f.k}));
    auto b = g.addInput("b", t, makeDims({f.k, f.n}));
    auto bias = g.addInput("bias", t, makeDims({f.n}));
    ASSERT_TRUE(a.isOk() && b.isOk() && bias.isOk());
    HostTensor ah = randomTensor(t, {f.m, f.k}, 31), bh = randomTensor(t, {f.k, f.n}, 32, -0.05, 0.05);
    HostTensor biash = randomTensor(t, {f.n}, 33);
    void *da = nullptr, *db = nullptr, *dbias = nullptr, *dy = nullptr;
    size_t yBytes = static_cast<size_t>(f.m * f.n) * 2;
    ASSERT_EQ(cudaMalloc(&da, ah.bytes()), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&db, bh.bytes()), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dbias, biash.bytes()), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dy, yBytes), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(da, ah.data(), ah.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(db, bh.data(), bh.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dbias, biash.data(), biash.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    cudaEvent_t start = nullptr, stop = nullptr;
    ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
    ASSERT_EQ(cudaEventCreate(&stop), cudaSuccess);
    for (int act : {static_cast<int>(ActivationType::kGELU_ERF), -1}) {
      ir::Node* node = g.addNode(ir::OpType::kMatrixMultiply, strCat("mm", act), {*a, *b, *bias});
      node->attrs = attrs({{"activation", int64_t{act}}});
      std::vector<std::string> tactics;
      for (int i = 0; i < 3; ++i) {
        tactics.push_back(strCat("matrixmultiply_cublaslt_algo", i));
        if (act >= 0) tactics.push_back(strCat("matrixmultiply_cublaslt_l2chunk_algo", i));
      }
      for (std::string const& name : tactics) {
        backends::Tactic const* tactic = backends::TacticRegistry::instance().find(name);
        ASSERT_NE(tactic, nullptr) << name;
        auto kernel = tactic->create(*node);
        ASSERT_TRUE(kernel.isOk()) << kernel.status().toString();
        std::vector<ir::TensorInfo> in = {{t, ah.shape()}, {t, bh.shape()}, {t, biash.shape()}};
        std::vector<ir::TensorInfo> out = {{t, makeDims({f.m, f.n})}};
        size_t wsBytes = (*kernel)->workspaceSize(in, out);
        void* ws = nullptr;
        if (wsBytes) {
          ASSERT_EQ(cudaMalloc(&ws, wsBytes), cudaSuccess);
        }
        backends::DeviceStream ds(device(), nullptr);
        backends::LaunchContext ctx;
        ctx.stream = &ds;
        ctx.inputs = {{da, t, ah.shape()}, {db, t, bh.shape()}, {dbias, t, biash.shape()}};
        ctx.outputs = {{dy, t, out[0].shape}};
        ctx.workspace = ws;
        ctx.workspaceSize = wsBytes;
        constexpr int kRuns = 20;
        Status s = (*kernel)->enqueue(ctx);  // warm-up: plans, module loading
        ASSERT_TRUE(s.isOk()) << s.toString();
        ASSERT_EQ(cudaEventRecord(start, nullptr), cudaSuccess);
        for (int r = 0; r < kRuns; ++r) ASSERT_TRUE((*kernel)->enqueue(ctx).isOk());
        ASSERT_EQ(cudaEventRecord(stop, nullptr), cudaSuccess);
        ASSERT_EQ(cudaEventSynchronize(stop), cudaSuccess);
        ASSERT_EQ(cudaGetLastError(), cudaSuccess);
        float ms = 0;
        ASSERT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
        double perRun = ms / kRuns;
        double tflops = 2.0 * static_cast<double>(f.m * f.k * f.n) / (perRun * 1e-3) / 1e12;
        std::printf("[ bench    ] %-15s %-14s %-40s %8.4f ms %6.1f TFLOP/s\n", f.name,
                    act >= 0 ? "+bias GELU erf" : "+bias (floor)", name.c_str(), perRun, tflops);
        if (ws) cudaFree(ws);
      }
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dbias);
    cudaFree(dy);
  }
}

}  // namespace
}  // namespace kiln
