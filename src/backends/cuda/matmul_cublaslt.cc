// MatrixMultiply on cuBLASLt: tactics matrixmultiply_cublaslt_algo{0,1,2} (heuristic result #i, the builder
// keeps the fastest), fp32 (TF32 only when allowed) / fp16 / bf16 with fp32 accumulation, strided batches with
// broadcast operands, bias/ReLU/GELU epilogues fused where cuBLASLt has them, the rest in a pointwise pass; a
// residual (input 3) is cuBLASLt's C with beta = 1; their _l2chunk variants, which run a GEMM followed by that pass as
// L2-sized row chunks; and LtGemmRunner, the same plans for ops that are a GEMM in disguise (pointwise convolutions).
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>

#include "backends/cuda/cuda_libs.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/matmul.h"

namespace kiln::cuda::matmul {
namespace {

constexpr size_t kWorkspaceCap = size_t{32} << 20;
constexpr size_t kWorkspaceAlign = 256;
constexpr int64_t kMaxBatchPerCall = 65535;  // batches per cuBLASLt call; more are split into several calls
constexpr int kHeuristicResults = 8;
constexpr size_t kMaxPlans = 512;       // cached shapes per kernel before the cache starts over
constexpr int64_t kChunkRowStep = 128;  // chunk rows are whole GEMM tiles (cuBLASLt's tiles are 64-256 rows)

std::atomic<int64_t> l2ChunkBudgetOverride{0};

// The current device's L2 in bytes, cached per device (the attribute is asked once, never on the enqueue path
// after the first call); 0 when there is no device to ask.
int64_t l2CacheBytes() {
  constexpr int kCached = 16;
  static std::atomic<int64_t> cache[kCached];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();  // no device: not an error of any later launch
    return 0;
  }
  if (device >= 0 && device < kCached) {
    int64_t v = cache[device].load(std::memory_order_relaxed);
    if (v > 0) return v;
  }
  int bytes = 0;
  if (cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device) != cudaSuccess || bytes <= 0) {
    (void)cudaGetLastError();
    return 0;
  }
  if (device >= 0 && device < kCached) cache[device].store(bytes, std::memory_order_relaxed);
  return bytes;
}

// Row-major y = a * b is column-major y^T = b^T * a^T: cuBLASLt's A is our b and its B our a; D is n x m.
struct PlanKey {
  int64_t dtype, tf32, m, n, k, transA, transB, count, strideA, strideB, strideY, epilogue;
  int64_t alignA, alignB, alignY, alignBias, workspace;
  int64_t alignC;  // the residual's alignment (C); alignY without one
  auto tie() const {
    return std::tie(dtype, tf32, m, n, k, transA, transB, count, strideA, strideB, strideY, epilogue, alignA, alignB,
                    alignY, alignBias, workspace, alignC);
  }
  bool operator<(PlanKey const& o) const { return tie() < o.tie(); }
};

// Descriptors and heuristic results of one shape. The bias pointer is an attribute of the shared descriptor,
// so it is set and used under `mu`.
struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t layoutA = nullptr, layoutB = nullptr, layoutD = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algos;  // empty: cuBLASLt has none (the tiled kernel runs)
  std::mutex mu;
  Plan() = default;
  Plan(Plan const&) = delete;
  Plan& operator=(Plan const&) = delete;
  ~Plan() {
    if (layoutD) cublasLtMatrixLayoutDestroy(layoutD);
    if (layoutB) cublasLtMatrixLayoutDestroy(layoutB);
    if (layoutA) cublasLtMatrixLayoutDestroy(layoutA);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

// supports() admits only fp32, fp16 and bf16.
cudaDataType_t cudaTypeOf(int64_t dtype) {
  if (dtype == static_cast<int64_t>(DataType::kHALF)) return CUDA_R_16F;
  if (dtype == static_cast<int64_t>(DataType::kBF16)) return CUDA_R_16BF;
  return CUDA_R_32F;
}

// The largest power of two <= 256 dividing the address and every byte step taken from it.
int64_t alignmentOf(void const* p, std::initializer_list<int64_t> steps) {
  uint64_t bits = reinterpret_cast<uintptr_t>(p) | kWorkspaceAlign;
  for (int64_t s : steps) bits |= static_cast<uint64_t>(s);
  return static_cast<int64_t>(bits & (~bits + 1));
}

Status makeLayout(cublasLtMatrixLayout_t* l, cudaDataType_t t, int64_t rows, int64_t cols, int64_t ld, int64_t count,
                  int64_t stride) {
  KILN_CUBLAS_RETURN_IF_ERROR(
      cublasLtMatrixLayoutCreate(l, t, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld),
      "cublasLtMatrixLayoutCreate");
  int32_t c = static_cast<int32_t>(count);
  KILN_CUBLAS_RETURN_IF_ERROR(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &c, sizeof(c)),
                              "cuBLASLt batch count");
  KILN_CUBLAS_RETURN_IF_ERROR(
      cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
      "cuBLASLt batch stride");
  return Status::ok();
}

Result<std::shared_ptr<Plan>> makePlan(PlanKey const& key, void const* biasForAlignment) {
  KILN_ASSIGN_OR_RETURN(cublasLtHandle_t handle, cublasLt());
  auto plan = std::make_shared<Plan>();
  cudaDataType_t t = cudaTypeOf(key.dtype);
  cublasComputeType_t compute = key.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  KILN_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescCreate(&plan->desc, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  cublasOperation_t opA = key.transB ? CUBLAS_OP_T : CUBLAS_OP_N;  // cuBLASLt's A is our b
  cublasOperation_t opB = key.transA ? CUBLAS_OP_T : CUBLAS_OP_N;  // cuBLASLt's B is our a
  KILN_CUBLAS_RETURN_IF_ERROR(
      cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)), "cuBLASLt transa");
  KILN_CUBLAS_RETURN_IF_ERROR(
      cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)), "cuBLASLt transb");
  auto epi = static_cast<cublasLtEpilogue_t>(key.epilogue);
  KILN_CUBLAS_RETURN_IF_ERROR(
      cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)),
      "cuBLASLt epilogue");
  if (key.epilogue & CUBLASLT_EPILOGUE_BIAS) {
    int32_t bt = static_cast<int32_t>(t);
    KILN_CUBLAS_RETURN_IF_ERROR(
        cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof(bt)),
        "cuBLASLt bias type");
    // The heuristic reads the pointer's alignment; the key holds it, each call sets its own pointer.
    KILN_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                               &biasForAlignment, sizeof(biasForAlignment)),
                                "cuBLASLt bias pointer");
  }
  int64_t m = key.m, n = key.n, k = key.k;
  // b as column-major: [N, K] with ld N, or (transposed storage) [K, N] with ld K.
  KILN_RETURN_IF_ERROR(key.transB ? makeLayout(&plan->layoutA, t, k, n, k, key.count, key.strideB)
                                  : makeLayout(&plan->layoutA, t, n, k, n, key.count, key.strideB));
  // a as column-major: [K, M] with ld K, or (transposed storage) [M, K] with ld M.
  KILN_RETURN_IF_ERROR(key.transA ? makeLayout(&plan->layoutB, t, m, k, m, key.count, key.strideA)
                                  : makeLayout(&plan->layoutB, t, k, m, k, key.count, key.strideA));
  KILN_RETURN_IF_ERROR(makeLayout(&plan->layoutD, t, n, m, n, key.count, key.strideY));

  cublasLtMatmulPreference_t pref = nullptr;
  KILN_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>, decltype(&cublasLtMatmulPreferenceDestroy)>
      prefOwner(pref, &cublasLtMatmulPreferenceDestroy);
  uint64_t ws = static_cast<uint64_t>(key.workspace);
  KILN_CUBLAS_RETURN_IF_ERROR(
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
      "cuBLASLt workspace preference");
  // Alignments as the pointers really have them (batch steps included): cuBLASLt assumes 256 bytes otherwise.
  std::array<std::pair<cublasLtMatmulPreferenceAttributes_t, int64_t>, 4> aligns = {{
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.alignB},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.alignA},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.alignC},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.alignY},
  }};
  for (auto const& [attr, value] : aligns) {
    uint32_t v = static_cast<uint32_t>(value);
    KILN_CUBLAS_RETURN_IF_ERROR(cublasLtMatmulPreferenceSetAttribute(pref, attr, &v, sizeof(v)),
                                "cuBLASLt alignment preference");
  }
  std::array<cublasLtMatmulHeuristicResult_t, kHeuristicResults> results{};
  int returned = 0;
  cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(handle, plan->desc, plan->layoutA, plan->layoutB, plan->layoutD,
                                                     plan->layoutD, pref, kHeuristicResults, results.data(), &returned);
  if (st != CUBLAS_STATUS_SUCCESS && st != CUBLAS_STATUS_NOT_SUPPORTED)
    return cublasStatus(st, "cublasLtMatmulAlgoGetHeuristic");
  for (int i = 0; st == CUBLAS_STATUS_SUCCESS && i < returned; ++i)
    if (results[static_cast<size_t>(i)].state == CUBLAS_STATUS_SUCCESS &&
        results[static_cast<size_t>(i)].workspaceSize <= ws)
      plan->algos.push_back(results[static_cast<size_t>(i)]);
  return plan;
}

// Plans by key, made on first use: one per LtKernel (its node's shapes) and one per LtGemmRunner.
class PlanCache {
 public:
  Result<std::shared_ptr<Plan>> planFor(PlanKey const& key, void const* bias) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    if (plans_.size() >= kMaxPlans) plans_.clear();  // plans in use live on through their shared_ptr
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<Plan> plan, makePlan(key, bias));
    plans_.emplace(key, plan);
    return plan;
  }

 private:
  std::mutex mu_;
  std::map<PlanKey, std::shared_ptr<Plan>> plans_;
};

// How the node's bias and activation split between the cuBLASLt epilogue and the pointwise pass after it.
struct EpilogueSplit {
  cublasLtEpilogue_t lt = CUBLASLT_EPILOGUE_DEFAULT;
  bool postBias = false, postActivation = false;
};

// With a residual the activation always goes to the pointwise pass: it must follow the residual's addition, and
// cuBLASLt's epilogue is not documented to come after beta * C.
EpilogueSplit splitEpilogue(Attrs const& at, Shape const& s, DataType dtype, bool hasBias, bool hasResidual) {
  EpilogueSplit e;
  bool biasFused = hasBias && s.biasAlongN;
  // cuBLASLt's GELU is the tanh form; its accuracy is trusted only where fp32's 1e-5 is not asked for.
  bool geluOk =
      at.activation == static_cast<int32_t>(ActivationType::kGELU_TANH) && (dtype != DataType::kFLOAT || at.tf32);
  bool reluOk = at.activation == static_cast<int32_t>(ActivationType::kRELU);
  bool actFused = (!hasBias || biasFused) && !hasResidual && (at.activation < 0 || geluOk || reluOk);
  if (biasFused)
    e.lt = actFused && reluOk ? CUBLASLT_EPILOGUE_RELU_BIAS
                              : (actFused && geluOk ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_BIAS);
  else if (actFused && reluOk)
    e.lt = CUBLASLT_EPILOGUE_RELU;
  else if (actFused && geluOk)
    e.lt = CUBLASLT_EPILOGUE_GELU;
  e.postBias = hasBias && !biasFused;
  e.postActivation = at.activation >= 0 && !actFused;
  return e;
}

// The GEMM calls of one launch: the batch dim with the most entries goes into cuBLASLt's strided batch, the
// others are looped over here.
struct CallShape {
  int64_t m = 0;
  int inner = -1;  // index into s.batch of the strided-batch dim; -1: one matrix
  int64_t strideA = 0, strideB = 0, strideY = 0, innerCount = 1;
  std::array<int64_t, kMatmulMaxDims> yStride{};  // element stride of y over each batch dim
};

CallShape callShapeOf(Shape const& s) {
  CallShape c;
  c.m = s.p.m;
  MatmulBatch const& b = s.batch;
  // A b shared by every batch entry of a contiguous, untransposed a: one tall GEMM of batch * m rows.
  if (!s.transA && b.rank == 1 && b.strideB[0] == 0 && b.strideA[0] == s.p.m * s.p.k) {
    c.m = s.p.m * b.dims[0];
    c.inner = 0;  // that dim is in m now: one call of one matrix
    return c;
  }
  int64_t run = s.p.m * s.p.n;
  for (int32_t d = b.rank - 1; d >= 0; --d) {
    c.yStride[static_cast<size_t>(d)] = run;
    run *= b.dims[d];
  }
  for (int32_t d = 0; d < b.rank; ++d)
    if (c.inner < 0 || b.dims[d] > b.dims[c.inner]) c.inner = d;
  if (c.inner >= 0) {
    c.strideA = b.strideA[c.inner];
    c.strideB = b.strideB[c.inner];
    c.strideY = c.yStride[static_cast<size_t>(c.inner)];
    c.innerCount = b.dims[c.inner];
  }
  return c;
}

// Rows per chunk where the _l2chunk variant splits this launch, 0 where it runs whole. Split are single GEMMs (no
// batch dim left after folding a shared b into the rows; batched products keep one strided-batch call) of an a
// that is not transposed (a chunk of rows is then a contiguous [rows, K] block, as y's and the residual's are)
// whose pointwise pass is the activation alone: the pass then computes the same function of each element wherever
// the chunk starts. A bias in that pass (one not along y's rows, which cuBLASLt adds itself) maps y's whole index,
// so such launches, like those without a pass, run whole.
int64_t chunkRowsOf(Shape const& s, CallShape const& c, EpilogueSplit const& e, int64_t elementBytes, int64_t budget) {
  if (!e.postActivation || e.postBias || s.transA || c.innerCount != 1) return 0;
  for (int32_t d = 0; d < s.batch.rank; ++d)
    if (d != c.inner && s.batch.dims[d] != 1) return 0;
  return l2ChunkRows(c.m, s.p.n * elementBytes, budget);
}

class LtKernel final : public backends::Kernel {
 public:
  LtKernel(Attrs at, int algoIndex, bool l2Chunk) : at_(std::move(at)), algoIndex_(algoIndex), l2Chunk_(l2Chunk) {}

  size_t workspaceSize(std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) const override {
    bool known = out.size() == 1 && dimsKnown(out[0].shape) && in.size() >= 2;
    for (auto const& i : in) known = known && (i.shape.nbDims < 0 || dimsKnown(i.shape));
    if (!known) return kWorkspaceCap + kWorkspaceAlign;
    bool hasBias = in.size() > 2 && in[2].shape.nbDims >= 0;
    bool hasResidual = in.size() > 3 && in[3].shape.nbDims >= 0;
    auto s = analyze(at_, in[0].shape, in[1].shape, hasBias ? &in[2].shape : nullptr, out[0].shape);
    if (!s.isOk() || volume(out[0].shape) == 0 || s->p.k == 0) return 0;
    // The exact need of the first call's algorithm at full alignment; a launch with less workspace (or other
    // alignments) asks the heuristic again within what it got.
    CallShape c = callShapeOf(*s);
    EpilogueSplit e = splitEpilogue(at_, *s, out[0].dtype, hasBias, hasResidual);
    int64_t es = static_cast<int64_t>(dataTypeSize(out[0].dtype));
    int64_t rows = l2Chunk_ ? chunkRowsOf(*s, c, e, es, l2ChunkBudget()) : 0;
    if (rows == 0) return workspaceFor(*s, c, out[0].dtype, e, std::min(c.innerCount, kMaxBatchPerCall));
    // Chunked: the full chunks' plan and the last chunk's (fewer rows); one workspace serves both, in turn.
    CallShape full = c, last = c;
    full.m = rows;
    last.m = c.m - (c.m - 1) / rows * rows;
    return std::max(workspaceFor(*s, full, out[0].dtype, e, 1), workspaceFor(*s, last, out[0].dtype, e, 1));
  }

  Status enqueue(backends::LaunchContext const& ctx) const override {
    KILN_ASSIGN_OR_RETURN(Shape s, analyzeLaunch(at_, ctx));
    TensorView const& y = ctx.outputs[0];
    if (y.count() == 0) return Status::ok();
    if (s.p.k == 0) return runSimt(s, at_, ctx);  // y = act(0 + bias): nothing for cuBLASLt to multiply
    void const* bias = ctx.inputs.size() > 2 ? ctx.inputs[2].data : nullptr;
    // The residual is C (beta = 1), laid out as D. It is another buffer than y (the memory plan keeps a layer's
    // inputs and outputs apart), and cuBLASLt only reads C; were it y itself, C == D with one layout is allowed.
    void const* residual = residualOf(ctx);
    EpilogueSplit e = splitEpilogue(at_, s, y.dtype, bias != nullptr, residual != nullptr);
    CallShape c = callShapeOf(s);
    int64_t es = static_cast<int64_t>(dataTypeSize(y.dtype));
    MatmulBatch const& b = s.batch;
    auto stepsOf = [&](int64_t const* strides) {
      int64_t bits = 0;
      for (int32_t d = 0; d < b.rank; ++d) bits |= strides[d] * es;
      return bits;
    };
    int64_t yBits = 0;
    for (int32_t d = 0; d < b.rank; ++d) yBits |= c.yStride[static_cast<size_t>(d)] * es;
    void const* pa = ctx.inputs[0].data;
    void const* pb = ctx.inputs[1].data;
    int64_t alignA = alignmentOf(pa, {stepsOf(b.strideA)}), alignB = alignmentOf(pb, {stepsOf(b.strideB)});
    int64_t alignY = alignmentOf(y.data, {yBits});
    int64_t alignC = residual ? alignmentOf(residual, {yBits}) : alignY;
    int64_t alignBias = e.lt & CUBLASLT_EPILOGUE_BIAS ? alignmentOf(bias, {}) : 256;
    // Workspace as cuBLASLt wants it: 256-byte aligned, at most the cap.
    uintptr_t wsAddr = reinterpret_cast<uintptr_t>(ctx.workspace);
    uintptr_t wsAligned = (wsAddr + kWorkspaceAlign - 1) & ~(uintptr_t{kWorkspaceAlign} - 1);
    size_t wsSize =
        ctx.workspace && ctx.workspaceSize > wsAligned - wsAddr ? ctx.workspaceSize - (wsAligned - wsAddr) : 0;
    wsSize = std::min(wsSize, kWorkspaceCap);
    void* ws = wsSize ? reinterpret_cast<void*>(wsAligned) : nullptr;

    KILN_ASSIGN_OR_RETURN(cublasLtHandle_t handle, cublasLt());
    cudaStream_t stream = streamOf(ctx);
    if (int64_t rows = l2Chunk_ ? chunkRowsOf(s, c, e, es, l2ChunkBudget()) : 0; rows > 0) {
      KILN_ASSIGN_OR_RETURN(bool ran, enqueueChunked(ctx, s, c, e, rows, ws, wsSize, handle, stream));
      if (ran) return Status::ok();
    }
    // Outer loop: every batch dim but the strided one.
    int64_t outer = 1;
    for (int32_t d = 0; d < b.rank; ++d)
      if (d != c.inner) outer *= b.dims[d];
    float const one = 1.0f, zero = 0.0f;
    float const* beta = residual ? &one : &zero;
    for (int64_t o = 0; o < outer; ++o) {
      int64_t offA = 0, offB = 0, offY = 0, rem = o;
      for (int32_t d = b.rank - 1; d >= 0; --d) {
        if (d == c.inner) continue;
        int64_t i = rem % b.dims[d];
        rem /= b.dims[d];
        offA += i * b.strideA[d];
        offB += i * b.strideB[d];
        offY += i * c.yStride[static_cast<size_t>(d)];
      }
      for (int64_t start = 0; start < c.innerCount; start += kMaxBatchPerCall) {
        int64_t count = std::min(kMaxBatchPerCall, c.innerCount - start);
        PlanKey key =
            keyOf(s, c, y.dtype, e, count, alignA, alignB, alignY, alignBias, static_cast<int64_t>(wsSize), alignC);
        KILN_ASSIGN_OR_RETURN(std::shared_ptr<Plan> plan, planFor(key, bias));
        if (plan->algos.empty()) return runSimt(s, at_, ctx);  // no cuBLASLt algorithm for this shape
        size_t ai = static_cast<size_t>(algoIndex_) < plan->algos.size() ? static_cast<size_t>(algoIndex_) : 0;
        auto const* a = static_cast<char const*>(pa) + (offA + start * c.strideA) * es;
        auto const* bb = static_cast<char const*>(pb) + (offB + start * c.strideB) * es;
        int64_t yOff = (offY + start * c.strideY) * es;
        auto* yy = static_cast<char*>(y.data) + yOff;
        void const* cc = residual ? static_cast<char const*>(residual) + yOff : yy;
        std::lock_guard<std::mutex> lock(plan->mu);
        if (e.lt & CUBLASLT_EPILOGUE_BIAS)
          KILN_CUBLAS_RETURN_IF_ERROR(
              cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)),
              "cuBLASLt bias pointer");
        KILN_CUBLAS_RETURN_IF_ERROR(
            cublasLtMatmul(handle, plan->desc, &one, bb, plan->layoutA, a, plan->layoutB, beta, cc, plan->layoutD, yy,
                           plan->layoutD, &plan->algos[ai].algo, ws, wsSize, stream),
            at_.who + ": cublasLtMatmul");
      }
    }
    if (e.postBias || e.postActivation) {
      MatmulEpilogue ep = epilogueFor(s, at_, bias, e.postBias, e.postActivation);
      if (!launchMatmulEpilogue(y.data, static_cast<int32_t>(y.dtype), y.count(), ep, stream))
        return unsupported(at_.who, ": no epilogue kernel for ", dataTypeName(y.dtype));
      KILN_RETURN_IF_ERROR(launchStatus(at_.who + ": matmul epilogue kernel"));
    }
    return Status::ok();
  }

 private:
  // The workspace heuristic result #algoIndex_ (or #0) of this call shape needs at 256-byte alignment, with the
  // slack for aligning it; the cap when the plan cannot be made.
  size_t workspaceFor(Shape const& s, CallShape const& c, DataType dtype, EpilogueSplit const& e, int64_t count) const {
    PlanKey key = keyOf(s, c, dtype, e, count, 256, 256, 256, 256, kWorkspaceCap, 256);
    auto plan = planFor(key, reinterpret_cast<void const*>(kWorkspaceAlign));
    if (!plan.isOk()) return kWorkspaceCap + kWorkspaceAlign;
    std::vector<cublasLtMatmulHeuristicResult_t> const& algos = (*plan)->algos;
    if (algos.empty()) return 0;
    size_t i = static_cast<size_t>(algoIndex_) < algos.size() ? static_cast<size_t>(algoIndex_) : 0;
    return algos[i].workspaceSize == 0 ? 0 : algos[i].workspaceSize + kWorkspaceAlign;
  }

  // One GEMM (chunkRowsOf > 0: one matrix, a not transposed) as chunks of `rows` rows (the last one fewer), each
  // GEMM followed on the stream by the pointwise pass over the rows it wrote: y's chunk is still in L2 when the
  // pass reads it, so HBM sees y written once instead of written, read and written again. The plans are those of
  // the chunk shapes (cuBLASLt's heuristic asked for `rows` and for the last chunk's rows, once, as for any shape);
  // the alignments cover every chunk's offset. Returns false, having enqueued nothing, when cuBLASLt has no
  // algorithm for a chunk shape (the caller runs the launch whole).
  Result<bool> enqueueChunked(backends::LaunchContext const& ctx, Shape const& s, CallShape const& c,
                              EpilogueSplit const& e, int64_t rows, void* ws, size_t wsSize, cublasLtHandle_t handle,
                              cudaStream_t stream) const {
    TensorView const& y = ctx.outputs[0];
    int64_t const es = static_cast<int64_t>(dataTypeSize(y.dtype));
    void const* bias = ctx.inputs.size() > 2 ? ctx.inputs[2].data : nullptr;
    void const* residual = residualOf(ctx);
    void const* pa = ctx.inputs[0].data;
    void const* pb = ctx.inputs[1].data;
    int64_t const aStep = rows * s.p.k * es, yStep = rows * s.p.n * es;
    int64_t const alignA = alignmentOf(pa, {aStep}), alignB = alignmentOf(pb, {});
    int64_t const alignY = alignmentOf(y.data, {yStep});
    int64_t const alignC = residual ? alignmentOf(residual, {yStep}) : alignY;
    int64_t const alignBias = e.lt & CUBLASLT_EPILOGUE_BIAS ? alignmentOf(bias, {}) : 256;
    int64_t const chunks = (c.m + rows - 1) / rows;
    int64_t const lastRows = c.m - (chunks - 1) * rows;
    CallShape full = c, last = c;
    full.m = rows;
    last.m = lastRows;
    auto wsBytes = static_cast<int64_t>(wsSize);
    KILN_ASSIGN_OR_RETURN(
        std::shared_ptr<Plan> fullPlan,
        planFor(keyOf(s, full, y.dtype, e, 1, alignA, alignB, alignY, alignBias, wsBytes, alignC), bias));
    std::shared_ptr<Plan> lastPlan = fullPlan;
    if (lastRows != rows) {
      KILN_ASSIGN_OR_RETURN(
          lastPlan, planFor(keyOf(s, last, y.dtype, e, 1, alignA, alignB, alignY, alignBias, wsBytes, alignC), bias));
    }
    if (fullPlan->algos.empty() || lastPlan->algos.empty()) return false;
    // Only the activation is left for the pass (chunkRowsOf): the same element-wise pass over any run of rows.
    MatmulEpilogue const ep = epilogueFor(s, at_, nullptr, false, true);
    float const one = 1.0f, zero = 0.0f;
    float const* beta = residual ? &one : &zero;
    for (int64_t i = 0; i < chunks; ++i) {
      int64_t const r = i + 1 < chunks ? rows : lastRows;
      Plan& plan = r == rows ? *fullPlan : *lastPlan;
      size_t ai = static_cast<size_t>(algoIndex_) < plan.algos.size() ? static_cast<size_t>(algoIndex_) : 0;
      auto const* a = static_cast<char const*>(pa) + i * aStep;
      auto* yy = static_cast<char*>(y.data) + i * yStep;
      void const* cc = residual ? static_cast<char const*>(residual) + i * yStep : yy;
      {
        std::lock_guard<std::mutex> lock(plan.mu);
        if (e.lt & CUBLASLT_EPILOGUE_BIAS)
          KILN_CUBLAS_RETURN_IF_ERROR(
              cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)),
              "cuBLASLt bias pointer");
        KILN_CUBLAS_RETURN_IF_ERROR(
            cublasLtMatmul(handle, plan.desc, &one, pb, plan.layoutA, a, plan.layoutB, beta, cc, plan.layoutD, yy,
                           plan.layoutD, &plan.algos[ai].algo, ws, wsSize, stream),
            at_.who + ": cublasLtMatmul (chunk " + std::to_string(i) + ")");
      }
      if (!launchMatmulEpilogue(yy, static_cast<int32_t>(y.dtype), r * s.p.n, ep, stream))
        return unsupported(at_.who, ": no epilogue kernel for ", dataTypeName(y.dtype));
      KILN_RETURN_IF_ERROR(launchStatus(at_.who + ": matmul epilogue kernel"));
    }
    return true;
  }

  PlanKey keyOf(Shape const& s, CallShape const& c, DataType dtype, EpilogueSplit const& e, int64_t count,
                int64_t alignA, int64_t alignB, int64_t alignY, int64_t alignBias, int64_t workspace,
                int64_t alignC) const {
    PlanKey k{};
    k.dtype = static_cast<int64_t>(dtype);
    k.tf32 = dtype == DataType::kFLOAT && at_.tf32;
    k.m = c.m;
    k.n = s.p.n;
    k.k = s.p.k;
    k.transA = s.transA;
    k.transB = s.transB;
    k.count = count;
    // A single matrix needs no stride; 0 keeps such keys equal.
    k.strideA = count > 1 ? c.strideA : 0;
    k.strideB = count > 1 ? c.strideB : 0;
    k.strideY = count > 1 ? c.strideY : 0;
    k.epilogue = static_cast<int64_t>(e.lt);
    k.alignA = alignA;
    k.alignB = alignB;
    k.alignY = alignY;
    k.alignBias = alignBias;
    k.workspace = workspace;
    k.alignC = alignC;
    return k;
  }

  Result<std::shared_ptr<Plan>> planFor(PlanKey const& key, void const* bias) const {
    return plans_.planFor(key, bias);
  }

  Attrs at_;
  int algoIndex_;
  bool l2Chunk_;  // the _l2chunk variant: split launches that chunkRowsOf admits
  mutable PlanCache plans_;
};

// Whether the _l2chunk variant would split this node's launches: always where a shape is not known yet (the launch
// decides, and runs whole where chunkRowsOf says 0), else where chunkRowsOf does under the current budget. Elsewhere
// it would only repeat the plain tactic's timing, so it is not offered.
bool l2ChunkMaySplit(ir::Node const& n, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
  auto at = readAttrs(n);
  if (!at.isOk()) return false;
  bool known = dimsKnown(out[0].shape);
  for (auto const& i : in) known = known && (i.shape.nbDims < 0 || dimsKnown(i.shape));
  if (!known) return true;
  bool hasBias = in.size() > 2 && in[2].shape.nbDims >= 0;
  bool hasResidual = in.size() > 3 && in[3].shape.nbDims >= 0;
  auto s = analyze(*at, in[0].shape, in[1].shape, hasBias ? &in[2].shape : nullptr, out[0].shape);
  if (!s.isOk() || volume(out[0].shape) == 0 || s->p.k == 0) return false;
  EpilogueSplit e = splitEpilogue(*at, *s, out[0].dtype, hasBias, hasResidual);
  int64_t es = static_cast<int64_t>(dataTypeSize(out[0].dtype));
  return chunkRowsOf(*s, callShapeOf(*s), e, es, l2ChunkBudget()) > 0;
}

}  // namespace

int64_t l2ChunkBudget() {
  int64_t forced = l2ChunkBudgetOverride.load(std::memory_order_relaxed);
  return forced > 0 ? forced : l2CacheBytes() / 3;
}

int64_t setL2ChunkBudget(int64_t bytes) {
  return l2ChunkBudgetOverride.exchange(bytes > 0 ? bytes : 0, std::memory_order_relaxed);
}

int64_t l2ChunkRows(int64_t m, int64_t rowBytes, int64_t budget) {
  if (budget <= 0 || rowBytes <= 0 || m <= kChunkRowStep) return 0;
  // m * rowBytes is an output's size in bytes: far from overflowing.
  if (m * rowBytes <= budget) return 0;
  int64_t const chunks = (m * rowBytes + budget - 1) / budget;
  int64_t const even = (m + chunks - 1) / chunks;
  int64_t const rows = (even + kChunkRowStep - 1) / kChunkRowStep * kChunkRowStep;
  return rows >= m ? 0 : rows;
}

// LtGemmRunner: the plans of makePlan under their PlanKey, as LtKernel keeps them, for callers that describe the
// GEMM themselves (a residual as C with beta 1; no batch broadcast analysis, no pointwise pass).
struct LtGemmRunner::Cache : PlanCache {
  static PlanKey keyOf(LtGemm const& g, int64_t alignA, int64_t alignB, int64_t alignY, int64_t alignBias,
                       int64_t workspace) {
    PlanKey k{};
    k.dtype = static_cast<int64_t>(g.dtype);
    k.tf32 = g.dtype == DataType::kFLOAT && g.tf32;
    k.m = g.m;
    k.n = g.n;
    k.k = g.k;
    k.transA = g.transA;
    k.transB = g.transB;
    k.count = g.count;
    k.strideA = g.count > 1 ? g.strideA : 0;
    k.strideB = g.count > 1 ? g.strideB : 0;
    k.strideY = g.count > 1 ? g.strideY : 0;
    cublasLtEpilogue_t e = g.bias ? (g.relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                                  : (g.relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
    k.epilogue = static_cast<int64_t>(e);
    k.alignA = alignA;
    k.alignB = alignB;
    k.alignY = alignY;
    k.alignBias = alignBias;
    k.workspace = workspace;
    return k;
  }
};

LtGemmRunner::LtGemmRunner() : cache_(new Cache) {}
LtGemmRunner::~LtGemmRunner() = default;

size_t LtGemmRunner::maxWorkspaceSize() { return kWorkspaceCap + kWorkspaceAlign; }

size_t LtGemmRunner::workspaceSize(LtGemm const& g, int algoIndex) const {
  PlanKey key = Cache::keyOf(g, 256, 256, 256, 256, kWorkspaceCap);
  auto plan = cache_->planFor(key, reinterpret_cast<void const*>(kWorkspaceAlign));
  if (!plan.isOk()) return kWorkspaceCap + kWorkspaceAlign;
  std::vector<cublasLtMatmulHeuristicResult_t> const& algos = (*plan)->algos;
  if (algos.empty()) return 0;
  size_t i = static_cast<size_t>(algoIndex) < algos.size() ? static_cast<size_t>(algoIndex) : 0;
  size_t need = algos[i].workspaceSize == 0 ? 0 : algos[i].workspaceSize + kWorkspaceAlign;
  // A launch given exactly this (256-byte aligned, as pool memory is) keys its plan by that workspace: make it
  // now, so that the first launch -- the builder's timed warm-up -- does not pay for the heuristic query.
  if (need < kWorkspaceCap) {
    PlanKey exact = Cache::keyOf(g, 256, 256, 256, 256, static_cast<int64_t>(need));
    (void)cache_->planFor(exact, reinterpret_cast<void const*>(kWorkspaceAlign));
  }
  return need;
}

Status LtGemmRunner::run(LtGemm const& g, int algoIndex, void const* a, void const* b, void const* c, void const* bias,
                         void* y, void* workspace, size_t workspaceBytes, cudaStream_t stream, std::string const& who,
                         bool* ran) const {
  *ran = false;
  int64_t es = static_cast<int64_t>(dataTypeSize(g.dtype));
  int64_t steps = g.count > 1 ? 1 : 0;
  int64_t alignA = alignmentOf(a, {steps * g.strideA * es}), alignB = alignmentOf(b, {steps * g.strideB * es});
  int64_t alignY = alignmentOf(y, {steps * g.strideY * es});
  // C shares D's layout (and its alignment preference): the smaller of the two alignments serves both.
  if (c) alignY = std::min(alignY, alignmentOf(c, {steps * g.strideY * es}));
  int64_t alignBias = g.bias ? alignmentOf(bias, {}) : 256;
  uintptr_t wsAddr = reinterpret_cast<uintptr_t>(workspace);
  uintptr_t wsAligned = (wsAddr + kWorkspaceAlign - 1) & ~(uintptr_t{kWorkspaceAlign} - 1);
  size_t wsSize = workspace && workspaceBytes > wsAligned - wsAddr ? workspaceBytes - (wsAligned - wsAddr) : 0;
  wsSize = std::min(wsSize, kWorkspaceCap);
  void* ws = wsSize ? reinterpret_cast<void*>(wsAligned) : nullptr;

  PlanKey key = Cache::keyOf(g, alignA, alignB, alignY, alignBias, static_cast<int64_t>(wsSize));
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<Plan> plan, cache_->planFor(key, bias));
  if (plan->algos.empty()) return Status::ok();
  KILN_ASSIGN_OR_RETURN(cublasLtHandle_t handle, cublasLt());
  size_t ai = static_cast<size_t>(algoIndex) < plan->algos.size() ? static_cast<size_t>(algoIndex) : 0;
  float const one = 1.0f, zero = 0.0f;
  std::lock_guard<std::mutex> lock(plan->mu);
  if (g.bias)
    KILN_CUBLAS_RETURN_IF_ERROR(
        cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)),
        "cuBLASLt bias pointer");
  // Row-major y = a * b is column-major y^T = b^T * a^T (makePlan's layouts): cuBLASLt's A is b, its B is a.
  KILN_CUBLAS_RETURN_IF_ERROR(
      cublasLtMatmul(handle, plan->desc, &one, b, plan->layoutA, a, plan->layoutB, c ? &one : &zero, c ? c : y,
                     plan->layoutD, y, plan->layoutD, &plan->algos[ai].algo, ws, wsSize, stream),
      who + ": cublasLtMatmul");
  *ran = true;
  return Status::ok();
}

namespace {

// The plain tactics (priority 20-18) and their _l2chunk variants (17-15: the level-0 heuristic keeps the plain
// ones; above level 0 the builder's timing picks chunked or whole per shape, since which wins depends on how well
// cuBLASLt's kernels fill the device at the chunk's rows).
backends::Tactic makeLt(int algoIndex, bool l2Chunk) {
  backends::Tactic t;
  t.name = strCat("matrixmultiply_cublaslt_", l2Chunk ? "l2chunk_" : "", "algo", algoIndex);
  t.op = ir::OpType::kMatrixMultiply;
  t.source = TacticSource::kCUBLAS_LT;
  t.priority = (l2Chunk ? 17 : 20) - algoIndex;
  t.supports = [l2Chunk](ir::Node const& n, std::vector<ir::TensorInfo> const& in,
                         std::vector<ir::TensorInfo> const& out) {
    return supportsNode(n, in, out, /*withFloat64=*/false) && (!l2Chunk || l2ChunkMaySplit(n, in, out));
  };
  t.create = [algoIndex, l2Chunk](ir::Node const& n) -> Result<std::unique_ptr<backends::Kernel>> {
    KILN_ASSIGN_OR_RETURN(Attrs at, readAttrs(n));
    return std::unique_ptr<backends::Kernel>(new LtKernel(std::move(at), algoIndex, l2Chunk));
  };
  return t;
}

backends::Tactic makeLt0() { return makeLt(0, false); }
backends::Tactic makeLt1() { return makeLt(1, false); }
backends::Tactic makeLt2() { return makeLt(2, false); }
backends::Tactic makeLtChunk0() { return makeLt(0, true); }
backends::Tactic makeLtChunk1() { return makeLt(1, true); }
backends::Tactic makeLtChunk2() { return makeLt(2, true); }
KILN_REGISTER_CUDA_TACTIC(makeLt0);
KILN_REGISTER_CUDA_TACTIC(makeLt1);
KILN_REGISTER_CUDA_TACTIC(makeLt2);
KILN_REGISTER_CUDA_TACTIC(makeLtChunk0);
KILN_REGISTER_CUDA_TACTIC(makeLtChunk1);
KILN_REGISTER_CUDA_TACTIC(makeLtChunk2);

}  // namespace
}  // namespace kiln::cuda::matmul
