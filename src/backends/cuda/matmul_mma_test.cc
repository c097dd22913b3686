// Tests of the tensor-core GEMM (matmul_mma.cu, the matrixmultiply_cuda_mma_* tactics): what the launcher and the
// tactics' supports() take (host only), and on a GPU each block tile in fp16 and bf16 against the reference backend
// over edge shapes (one row, rows and columns off the tile, K of one stage and deep K, b [K, N] and [N, K], a
// batch folded into the rows) with every epilogue (bias along N, residual, each activation), and the kernel's
// fallback to the tiled kernel on a shape or an alignment the tensor-core kernel does not take.
#include <cuda_runtime_api.h>

#include <cmath>
#include <string>
#include <vector>

#include "backends/cuda/cuda_test_util.h"
#include "backends/cuda/matmul_kernels.h"
#include "backends/reference/activation_math.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers
using cuda::MatmulMmaCall;
using cuda::matmulMmaFits;
using cuda::matmulMmaShapeFits;
using cuda::MatmulMmaTile;

using Shape = std::vector<int64_t>;

struct TileTactic {
  MatmulMmaTile tile;
  char const* name;
};
std::vector<TileTactic> const& tiles() {
  static std::vector<TileTactic> const t = {{MatmulMmaTile::k32x32x64, "matrixmultiply_cuda_mma_32x32x64"},
                                            {MatmulMmaTile::k32x64x32, "matrixmultiply_cuda_mma_32x64x32"},
                                            {MatmulMmaTile::k32x64x64, "matrixmultiply_cuda_mma_32x64x64"},
                                            {MatmulMmaTile::k64x64x32, "matrixmultiply_cuda_mma_64x64x32"}};
  return t;
}

// ---- What the launcher takes (host only). ----

void* fakePointer(uintptr_t at) { return reinterpret_cast<void*>(at); }

MatmulMmaCall fittingCall() {
  MatmulMmaCall c;
  c.dtype = static_cast<int32_t>(DataType::kHALF);
  c.m = 197;
  c.n = 3072;
  c.k = 768;
  c.a = fakePointer(0x10000);
  c.b = fakePointer(0x20000);
  c.y = fakePointer(0x30000);
  c.bias = fakePointer(0x40000);
  c.residual = fakePointer(0x50000);
  c.tile = MatmulMmaTile::k64x64x32;
  return c;
}

TEST(CudaMatmulMma, LauncherRefusesWhatItCannotRun) {
  EXPECT_TRUE(matmulMmaFits(fittingCall()));
  MatmulMmaCall bf = fittingCall();
  bf.dtype = static_cast<int32_t>(DataType::kBF16);
  EXPECT_TRUE(matmulMmaFits(bf));
  MatmulMmaCall noEpilogue = fittingCall();
  noEpilogue.bias = nullptr;
  noEpilogue.residual = nullptr;
  EXPECT_TRUE(matmulMmaFits(noEpilogue));

  auto refused = [](char const* why, auto edit) {
    MatmulMmaCall c = fittingCall();
    edit(c);
    EXPECT_FALSE(matmulMmaFits(c)) << why;
  };
  refused("fp32", [](MatmulMmaCall& c) { c.dtype = static_cast<int32_t>(DataType::kFLOAT); });
  refused("fp64", [](MatmulMmaCall& c) { c.dtype = static_cast<int32_t>(DataType::kFLOAT64); });
  refused("k = 0", [](MatmulMmaCall& c) { c.k = 0; });
  refused("m = 0", [](MatmulMmaCall& c) { c.m = 0; });
  refused("n % 8", [](MatmulMmaCall& c) { c.n = 3076; });
  refused("k % 8", [](MatmulMmaCall& c) { c.k = 772; });
  refused("a off 16 bytes", [](MatmulMmaCall& c) { c.a = fakePointer(0x10002); });
  refused("b off 16 bytes", [](MatmulMmaCall& c) { c.b = fakePointer(0x20008); });
  refused("y off 4 bytes", [](MatmulMmaCall& c) { c.y = fakePointer(0x30002); });
  refused("bias off 4 bytes", [](MatmulMmaCall& c) { c.bias = fakePointer(0x40002); });
  refused("residual off 4 bytes", [](MatmulMmaCall& c) { c.residual = fakePointer(0x50006); });
  refused("n past 2^31", [](MatmulMmaCall& c) { c.n = int64_t{1} << 31; });

  // The row tiles fill the grid's y (65535): the limit follows the tile's rows.
  MatmulMmaCall tall = fittingCall();
  tall.tile = MatmulMmaTile::k32x64x32;
  tall.m = 65535 * 32;
  EXPECT_TRUE(matmulMmaShapeFits(tall));
  tall.m += 1;
  EXPECT_FALSE(matmulMmaShapeFits(tall));
  tall.tile = MatmulMmaTile::k64x64x32;
  EXPECT_TRUE(matmulMmaShapeFits(tall));
}

// ---- What the tactics offer to take (host only: supports() reads shapes). ----

// supports() of `tactic` for y = a b (+ bias) with the node's attributes.
bool supports(char const* tactic, DataType t, Shape const& a, Shape const& b, int opA = 0, int opB = 0,
              std::optional<Shape> bias = std::nullopt) {
  // The backend's own list (the registry holds it only once a device installs the backend).
  backends::Tactic const* tac = nullptr;
  for (backends::Tactic const& c : cuda::CudaTactics::instance().all())
    if (c.name == tactic) tac = &c;
  EXPECT_NE(tac, nullptr) << tactic;
  if (!tac) return false;
  ir::Graph g;
  std::vector<ir::Value*> ins = {*g.addInput("a", t, makeDims(a)), *g.addInput("b", t, makeDims(b))};
  if (bias) ins.push_back(*g.addInput("bias", t, makeDims(*bias)));
  ir::Node* n = g.addNode(ir::OpType::kMatrixMultiply, "mm", ins, 1);
  n->attrs = attrs({{"op_a", int64_t{opA}}, {"op_b", int64_t{opB}}});
  g.markOutput(n->output(0));
  ir::HostEvaluator eval = backends::referenceEvaluator();
  Status s = ir::inferGraphInPlace(g, &eval);
  EXPECT_TRUE(s.isOk()) << s.toString();
  std::vector<ir::TensorInfo> in, out{{t, n->output(0)->shape}};
  for (ir::Value* v : n->inputs) in.push_back({v->dtype, v->shape});
  return tac->supports(*n, in, out);
}

TEST(CudaMatmulMma, TacticsOfferOnlyWhatTheKernelRuns) {
  for (TileTactic const& tt : tiles()) {
    SCOPED_TRACE(tt.name);
    char const* t = tt.name;
    EXPECT_TRUE(supports(t, DataType::kHALF, {1, 128, 768}, {768, 3072}, 0, 0, Shape{3072}));
    EXPECT_TRUE(supports(t, DataType::kBF16, {197, 768}, {2304, 768}, 0, 1));
    EXPECT_TRUE(supports(t, DataType::kHALF, {4, 9, 16}, {16, 24}));  // b shared: folds into 36 rows
    EXPECT_FALSE(supports(t, DataType::kFLOAT, {128, 768}, {768, 768}));
    EXPECT_FALSE(supports(t, DataType::kFLOAT64, {128, 768}, {768, 768}));
    EXPECT_FALSE(supports(t, DataType::kHALF, {128, 768}, {768, 12}));                 // n % 8
    EXPECT_FALSE(supports(t, DataType::kHALF, {128, 36}, {36, 64}));                   // k % 8
    EXPECT_FALSE(supports(t, DataType::kHALF, {768, 128}, {768, 64}, 1, 0));           // a transposed
    EXPECT_FALSE(supports(t, DataType::kHALF, {128, 64}, {64}, 0, 2));                 // b a vector
    EXPECT_FALSE(supports(t, DataType::kHALF, {2, 9, 16}, {2, 16, 24}));               // a batch of b
    EXPECT_FALSE(supports(t, DataType::kHALF, {9, 16}, {16, 24}, 0, 0, Shape{9, 1}));  // bias along M
    EXPECT_FALSE(supports(t, DataType::kHALF, {8192, 64}, {64, 64}));  // past the rows it is offered for
  }
}

// ---- Each tile against the reference backend. ----

struct Case {
  Shape a, b;
  int opB = 0;
  bool bias = false, residual = false;
  ActivationType act = ActivationType::kRELU;
  bool hasAct = false;
  double alpha = 0, beta = 0;
};

// y's shape for a [.., M, K] against b (2-D, [K, N] or [N, K]).
Shape outShape(Case const& c) {
  Shape y = c.a;
  y.back() = c.opB ? c.b[0] : c.b[1];
  return y;
}

void checkOnTile(char const* tactic, DataType t, Case const& c, uint32_t seed) {
  SCOPED_TRACE(strCat(tactic, " ", dataTypeName(t), " a ", dimsToString(makeDims(c.a)), " b ",
                      dimsToString(makeDims(c.b)), " op_b ", c.opB, c.bias ? " +bias" : "",
                      c.residual ? " +residual" : "", " act ", c.hasAct ? static_cast<int>(c.act) : -1));
  ir::Attributes at = attrs({{"op_a", int64_t{0}},
                             {"op_b", int64_t{c.opB}},
                             {"activation", int64_t{c.hasAct ? static_cast<int>(c.act) : -1}},
                             {"act_alpha", c.alpha},
                             {"act_beta", c.beta}});
  Shape y = outShape(c);
  // Values in [-1, 1) over K up to 776 sum to a few units: the activations all act on that range.
  std::vector<In> ins = {var(randomTensor(t, c.a, seed)), cst(randomTensor(t, c.b, seed + 1))};
  if (c.bias)
    ins.push_back(cst(randomTensor(t, {y.back()}, seed + 2)));
  else if (c.residual)
    ins.push_back(none());
  if (c.residual) ins.push_back(var(randomTensor(t, y, seed + 3)));
  NodeSpec spec{ir::OpType::kMatrixMultiply, at, ins};
  spec.only = tactic;
  auto results = expectMatchesReference(spec, -1, 1);
  ASSERT_EQ(results.size(), 1u) << "the tactic did not take the node";
  EXPECT_EQ(results[0].tactic, tactic);
}

// M: one row, under one tile of 32, one past, a whole 128, ViT's 197; K: one 8-deep piece (a stage mostly zero),
// 40 (a stage and a piece), 776 (many stages, the last partial); N: one piece of 8, 136 (past two 64-column tiles
// and one of 128), 264.
std::vector<Case> edgeShapes() {
  std::vector<Case> out;
  struct Mkn {
    int64_t m, k, n;
  };
  for (Mkn s : {Mkn{1, 8, 8}, Mkn{5, 40, 136}, Mkn{33, 776, 8}, Mkn{128, 40, 136}, Mkn{197, 776, 136}, Mkn{64, 64, 64},
                Mkn{65, 32, 264}, Mkn{3, 1024, 72}}) {
    for (int opB : {0, 1}) {
      Case c;
      c.a = {s.m, s.k};
      c.b = opB ? Shape{s.n, s.k} : Shape{s.k, s.n};
      c.opB = opB;
      out.push_back(c);
      Case gelu = c;  // BERT / ViT's FFN-in
      gelu.bias = true;
      gelu.act = ActivationType::kGELU_ERF;
      gelu.hasAct = true;
      out.push_back(gelu);
      Case res = c;  // the attention-out and FFN-out GEMMs, with an activation after the sum
      res.bias = true;
      res.residual = true;
      res.act = ActivationType::kRELU;
      res.hasAct = true;
      out.push_back(res);
    }
  }
  // A contiguous batch of a against a shared b: one GEMM of 3 x 43 rows.
  Case batch;
  batch.a = {3, 43, 48};
  batch.b = {48, 24};
  batch.bias = true;
  batch.residual = true;
  out.push_back(batch);
  Case batchT = batch;
  batchT.a = {1, 3, 43, 48};
  batchT.b = {24, 48};
  batchT.opB = 1;
  out.push_back(batchT);
  return out;
}

void edgeShapesOnEveryTile(DataType t) {
  uint32_t seed = 100;
  for (TileTactic const& tt : tiles())
    for (Case const& c : edgeShapes()) checkOnTile(tt.name, t, c, seed += 7);
}

TEST(CudaMatmulMma, EdgeShapesFloat16) {
  KILN_REQUIRE_GPU();
  edgeShapesOnEveryTile(DataType::kHALF);
}

TEST(CudaMatmulMma, EdgeShapesBFloat16) {
  KILN_REQUIRE_GPU();
  edgeShapesOnEveryTile(DataType::kBF16);
}

// Every activation (parameters that make it act on sums around [-3, 3]) after the bias and the residual.
TEST(CudaMatmulMma, EveryActivation) {
  KILN_REQUIRE_GPU();
  struct Act {
    ActivationType type;
    double alpha, beta;
  };
  std::vector<Act> const acts = {{ActivationType::kRELU, 0, 0},
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
  uint32_t seed = 500;
  for (DataType t : {DataType::kHALF, DataType::kBF16})
    for (Act const& a : acts) {
      Case c;
      c.a = {37, 24};
      c.b = {24, 80};
      c.bias = true;
      c.residual = true;
      c.act = a.type;
      c.hasAct = true;
      c.alpha = a.alpha;
      c.beta = a.beta;
      checkOnTile("matrixmultiply_cuda_mma_32x64x32", t, c, seed += 5);
    }
}

// ---- The kernel on what the tensor-core launch refuses: the tiled kernel computes the node. ----

// y = gelu(a b + bias) by the 64x64 tactic's kernel enqueued directly, with a starting `aOffset` elements into its
// buffer; expects matmulMmaFits to be `mmaRuns` for those pointers; returns the norm-relative error against host
// math in double.
double runDirect(DataType t, int64_t m, int64_t k, int64_t n, int64_t aOffset, bool mmaRuns) {
  SCOPED_TRACE(strCat(dataTypeName(t), " [", m, ", ", k, "] x [", k, ", ", n, "] a +", aOffset));
  ir::Graph g;
  std::vector<ir::Value*> ins = {*g.addInput("a", t, makeDims({m, k})), *g.addInput("b", t, makeDims({k, n})),
                                 *g.addInput("bias", t, makeDims({n}))};
  ir::Node* node = g.addNode(ir::OpType::kMatrixMultiply, "mm", ins);
  ActivationType const act = ActivationType::kGELU_ERF;
  node->attrs = attrs({{"activation", int64_t{static_cast<int>(act)}}});
  backends::Tactic const* tac = backends::TacticRegistry::instance().find("matrixmultiply_cuda_mma_64x64x32");
  EXPECT_NE(tac, nullptr);
  if (!tac) return INFINITY;
  auto kernel = tac->create(*node);
  EXPECT_TRUE(kernel.isOk()) << kernel.status().toString();
  if (!kernel.isOk()) return INFINITY;

  HostTensor ah = randomTensor(t, {m * k + aOffset}, 31), bh = randomTensor(t, {k, n}, 32);
  HostTensor biash = randomTensor(t, {n}, 33), yh = randomTensor(t, {m, n}, 34);
  size_t es = dataTypeSize(t);
  void *da = nullptr, *db = nullptr, *dbias = nullptr, *dy = nullptr;
  EXPECT_EQ(cudaMalloc(&da, ah.bytes()), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&db, bh.bytes()), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dbias, biash.bytes()), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dy, yh.bytes()), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(da, ah.data(), ah.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(db, bh.data(), bh.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dbias, biash.data(), biash.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemset(dy, 0xff, yh.bytes()), cudaSuccess);
  void* a = static_cast<char*>(da) + aOffset * es;

  MatmulMmaCall probe;
  probe.dtype = static_cast<int32_t>(t);
  probe.m = m;
  probe.n = n;
  probe.k = k;
  probe.a = a;
  probe.b = db;
  probe.y = dy;
  probe.bias = dbias;
  probe.tile = MatmulMmaTile::k64x64x32;
  EXPECT_EQ(matmulMmaFits(probe), mmaRuns);

  cudaStream_t stream = nullptr;
  EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  backends::DeviceStream ds(device(), stream);
  backends::LaunchContext ctx;
  ctx.stream = &ds;
  ctx.inputs = {{a, t, makeDims({m, k})}, {db, t, bh.shape()}, {dbias, t, biash.shape()}};
  ctx.outputs = {{dy, t, yh.shape()}};
  Status s = (*kernel)->enqueue(ctx);
  EXPECT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(yh.mutableData(), dy, yh.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dbias);
  cudaFree(dy);
  cudaStreamDestroy(stream);

  double num = 0, den = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = biash.doubleAt(j);
      for (int64_t p = 0; p < k; ++p) acc += ah.doubleAt(aOffset + i * k + p) * bh.doubleAt(p * n + j);
      double want = backends::reference::applyActivation(act, acc, 0, 0);
      double diff = yh.doubleAt(i * n + j) - want;
      num += diff * diff;
      den += want * want;
    }
  double err = std::sqrt(num / (den > 0 ? den : 1));
  return std::isnan(err) ? INFINITY : err;
}

TEST(CudaMatmulMma, KernelFallsBackWhereTheLaunchRefuses) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kHALF, DataType::kBF16}) {
    double tol = defaultTolerance(t);
    EXPECT_LE(runDirect(t, 70, 48, 72, 0, true), tol);   // the tensor-core kernel itself
    EXPECT_LE(runDirect(t, 70, 48, 72, 8, true), tol);   // a 16 bytes into its buffer: still aligned
    EXPECT_LE(runDirect(t, 70, 48, 72, 1, false), tol);  // a 2 bytes off: the tiled kernel
    EXPECT_LE(runDirect(t, 70, 48, 75, 0, false), tol);  // n % 8 (a context's shape the build did not see)
    EXPECT_LE(runDirect(t, 70, 44, 72, 0, false), tol);  // k % 8
  }
}

}  // namespace
}  // namespace kiln
