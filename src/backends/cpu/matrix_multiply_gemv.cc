// CPU MatrixMultiply tactic matrix_multiply_cpu_gemv (Kiln's own loops): products of a few rows of A with a constant
// B (a classifier at batch 1: [1, 2048] x [2048, 1000]), which are bound by reading B from memory. B is packed once
// into 16-column panels, read front to back four side by side; a candidate the builder times against oneDNN.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/matrix_multiply_gemv.h"
#include "backends/cpu/onednn_util.h"
#include "backends/reference/activation_math.h"
#include "core/memory.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define KILN_GEMV_AVX512 1
#endif

namespace kiln::backends::cpu {
namespace {

using ir::OpType;

constexpr int64_t kPanel = 16;  // columns per panel: one 64-byte line of B per k
constexpr int64_t kRows = 4;    // rows of A that share one pass over B
constexpr int64_t kGroup = 4;   // panels computed together (their count is padded to a multiple of it)
// Rows of A (all but A's last dim) up to which the builder offers the tactic: beyond a few rows B is reused
// enough that oneDNN's blocked GEMM is the better choice (each group of kRows rows streams B once more).
constexpr int64_t kMaxRowsOffered = 8;

// Panels holding n columns, padded to whole groups.
int64_t panelCount(int64_t n) { return (n + kPanel * kGroup - 1) / (kPanel * kGroup) * kGroup; }

struct GemvConfig {
  std::string who;
  int64_t k = 0, n = 0;
  int64_t activation = -1;
  double alpha = 0, beta = 0;
  bool hasResidual = false;
  HostBuffer panels;  // B as [panelCount(n)][k][16] floats, columns past n zero
};

// out[r][j * 16 + l] = sum over kk of a[r * lda + kk] * panel j [kk][l], for r < rows (<= kRows), j < kGroup: one
// group of panels (consecutive in memory, kGroup * k * 16 floats).
void groupPortable(float const* a, int64_t lda, int64_t rows, float const* panels, int64_t k, float* out) {
  float acc[kRows][kGroup * kPanel] = {};
  for (int64_t j = 0; j < kGroup; ++j)
    for (int64_t kk = 0; kk < k; ++kk) {
      float const* b = panels + (j * k + kk) * kPanel;
      for (int64_t r = 0; r < rows; ++r) {
        float av = a[r * lda + kk];
        for (int64_t l = 0; l < kPanel; ++l) acc[r][j * kPanel + l] += av * b[l];
      }
    }
  std::memcpy(out, acc, sizeof(float) * static_cast<size_t>(rows * kGroup * kPanel));
}

#ifdef KILN_GEMV_AVX512
// The same with the group's panels read side by side: kGroup sequential streams at once keep more of B's lines in
// flight from memory than one (measured on 2 cores with B coming from memory: 0.27 against 0.34 ms for 2048 x 1000),
// and their rows x panels accumulators are independent FMA chains.
template <int kR>
__attribute__((target("avx512f"))) void groupAvx512Rows(float const* a, int64_t lda, float const* panels, int64_t k,
                                                        float* out) {
  __m512 acc[kR][kGroup];
  for (int r = 0; r < kR; ++r)
    for (int j = 0; j < kGroup; ++j) acc[r][j] = _mm512_setzero_ps();
  for (int64_t kk = 0; kk < k; ++kk) {
    __m512 b[kGroup];
    for (int j = 0; j < kGroup; ++j) b[j] = _mm512_loadu_ps(panels + (j * k + kk) * kPanel);
    for (int r = 0; r < kR; ++r) {
      __m512 av = _mm512_set1_ps(a[r * lda + kk]);
      for (int j = 0; j < kGroup; ++j) acc[r][j] = _mm512_fmadd_ps(av, b[j], acc[r][j]);
    }
  }
  for (int r = 0; r < kR; ++r)
    for (int j = 0; j < kGroup; ++j) _mm512_storeu_ps(out + (r * kGroup + j) * kPanel, acc[r][j]);
}

void groupAvx512(float const* a, int64_t lda, int64_t rows, float const* panels, int64_t k, float* out) {
  switch (rows) {
    case 1:
      return groupAvx512Rows<1>(a, lda, panels, k, out);
    case 2:
      return groupAvx512Rows<2>(a, lda, panels, k, out);
    case 3:
      return groupAvx512Rows<3>(a, lda, panels, k, out);
    default:
      return groupAvx512Rows<4>(a, lda, panels, k, out);
  }
}
#endif

std::atomic<bool> gForcePortable{false};

bool hasAvx512() {
#ifdef KILN_GEMV_AVX512
  static bool const has = __builtin_cpu_supports("avx512f");
  return has;
#else
  return false;
#endif
}

class GemvKernel final : public Kernel {
 public:
  explicit GemvKernel(GemvConfig cfg) : cfg_(std::move(cfg)) {}

  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& a = ctx.inputs[0];
    TensorView const& y = ctx.outputs[0];
    TensorView const* bias = ctx.inputs.size() > 2 && ctx.inputs[2].data ? &ctx.inputs[2] : nullptr;
    TensorView const* res = cfg_.hasResidual && ctx.inputs.size() > 3 && ctx.inputs[3].data ? &ctx.inputs[3] : nullptr;
    if (cfg_.hasResidual && !res)
      return invalidArgument(cfg_.who, ": the residual input the kernel was built for is missing");
    int64_t k = cfg_.k, n = cfg_.n;
    if (a.shape.nbDims < 2 || a.shape.d[a.shape.nbDims - 1] != k)
      return invalidArgument(cfg_.who, ": a ", dimsToString(a.shape), " must end in B's inner dimension ", k);
    int64_t rows = a.count() / k;
    if (y.count() != rows * n || y.shape.d[y.shape.nbDims - 1] != n)
      return invalidArgument(cfg_.who, ": y ", dimsToString(y.shape), " must hold ", rows, " rows of ", n);
    if (bias && bias->count() != n)
      return invalidArgument(cfg_.who, ": bias ", dimsToString(bias->shape), " must hold one value per column (", n,
                             ")");
    if (res && !dimsEqual(res->shape, y.shape))
      return invalidArgument(cfg_.who, ": residual ", dimsToString(res->shape), " must have y's shape ",
                             dimsToString(y.shape));
    if (y.count() == 0) return Status::ok();
    auto const* av = static_cast<float const*>(a.data);
    auto const* bv = bias ? static_cast<float const*>(bias->data) : nullptr;
    auto const* rv = res ? static_cast<float const*>(res->data) : nullptr;
    auto* yv = static_cast<float*>(y.data);
    auto const* panels = static_cast<float const*>(cfg_.panels.data());
    int64_t nGroups = panelCount(n) / kGroup;
    auto groupFn = groupPortable;
#ifdef KILN_GEMV_AVX512
    if (hasAvx512() && !gForcePortable.load(std::memory_order_relaxed)) groupFn = groupAvx512;
#endif
    // Groups of panels split evenly over the threads: each thread streams its own contiguous part of B once per row
    // group. Every output element is computed by one thread in a fixed order, so the result does not depend on the
    // count.
    OmpThreads threads(ctx, k * n);
    int nt = threads.count();
    for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
      int64_t rn = std::min(kRows, rows - r0);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1 && nGroups > 1)
      for (int64_t g = 0; g < nGroups; ++g) {
        constexpr int64_t kWidth = kGroup * kPanel;
        alignas(64) float out[kRows * kWidth];
        groupFn(av + r0 * k, k, rn, panels + g * kGroup * k * kPanel, k, out);
        int64_t cols = std::min(kWidth, n - g * kWidth);
        for (int64_t r = 0; r < rn; ++r)
          for (int64_t j = 0; j < cols; ++j) {
            int64_t col = g * kWidth + j, at = (r0 + r) * n + col;
            float v = out[r * kWidth + j];
            if (bv) v += bv[col];
            if (rv) v += rv[at];  // read before y[at] is written: y may be the residual's buffer
            if (cfg_.activation >= 0)
              v = static_cast<float>(
                  reference::applyActivation(static_cast<ActivationType>(cfg_.activation), v, cfg_.alpha, cfg_.beta));
            yv[at] = v;
          }
      }
    }
    return Status::ok();
  }

 private:
  GemvConfig cfg_;
};

bool isOp(int64_t v, MatrixOperation op) { return v == static_cast<int64_t>(op); }

// A float32 B as a Constant whose dims before the last two are all 1, A not transposed and not a vector, a bias
// holding one value per column, few known rows of A.
bool supportsGemv(ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
  if (in.size() < 2 || in.size() > 4 || out.size() != 1 || out[0].dtype != DataType::kFLOAT) return false;
  for (TensorInfo const& t : in)
    if (t.shape.nbDims >= 0 && t.dtype != DataType::kFLOAT) return false;
  int64_t opB = node.attrs.getInt("op_b", 0);
  if (!isOp(node.attrs.getInt("op_a", 0), MatrixOperation::kNONE) ||
      !(isOp(opB, MatrixOperation::kNONE) || isOp(opB, MatrixOperation::kTRANSPOSE)))
    return false;
  HostTensor const* b = constantInput(node, 1);
  if (!b || b->dtype() != DataType::kFLOAT || b->shape().nbDims < 2) return false;
  Dims const& bs = b->shape();
  for (int32_t i = 0; i + 2 < bs.nbDims; ++i)
    if (bs.d[i] != 1) return false;
  bool transB = isOp(opB, MatrixOperation::kTRANSPOSE);
  int64_t k = transB ? bs.d[bs.nbDims - 1] : bs.d[bs.nbDims - 2],
          n = transB ? bs.d[bs.nbDims - 2] : bs.d[bs.nbDims - 1];
  Dims const& as = in[0].shape;
  if (k <= 0 || n <= 0 || as.nbDims < 2 || !dimsKnown(as) || as.d[as.nbDims - 1] != k) return false;
  if (volume(as) / k > kMaxRowsOffered) return false;
  if (out[0].shape.nbDims < 2 || out[0].shape.d[out[0].shape.nbDims - 1] != n) return false;
  if (in.size() > 2 && in[2].shape.nbDims >= 0) {
    Dims const& c = in[2].shape;
    if (c.nbDims < 1 || c.d[c.nbDims - 1] != n) return false;
    for (int32_t i = 0; i + 1 < c.nbDims; ++i)
      if (c.d[i] != 1) return false;
  }
  int64_t act = node.attrs.getInt("activation", -1);
  return act == -1 || reference::isActivationType(act);
}

Result<std::unique_ptr<Kernel>> createGemv(ir::Node const& node) {
  HostTensor const* b = constantInput(node, 1);
  if (!b || b->dtype() != DataType::kFLOAT || b->shape().nbDims < 2)
    return invalidGraph(node.describe(), ": the GEMV tactic needs B as a float32 Constant");
  int64_t opB = node.attrs.getInt("op_b", 0);
  if (!isOp(node.attrs.getInt("op_a", 0), MatrixOperation::kNONE) ||
      !(isOp(opB, MatrixOperation::kNONE) || isOp(opB, MatrixOperation::kTRANSPOSE)))
    return invalidGraph(node.describe(), ": the GEMV tactic takes A as it is and B as it is or transposed");
  bool transB = isOp(opB, MatrixOperation::kTRANSPOSE);
  Dims const& bs = b->shape();
  GemvConfig cfg;
  cfg.who = node.describe();
  cfg.k = transB ? bs.d[bs.nbDims - 1] : bs.d[bs.nbDims - 2];
  cfg.n = transB ? bs.d[bs.nbDims - 2] : bs.d[bs.nbDims - 1];
  if (b->count() != cfg.k * cfg.n)
    return invalidGraph(node.describe(), ": B ", dimsToString(bs), " must be one matrix (leading dims 1)");
  cfg.activation = node.attrs.getInt("activation", -1);
  if (cfg.activation != -1 && !reference::isActivationType(cfg.activation))
    return invalidGraph(node.describe(), ": unknown activation ", cfg.activation);
  cfg.alpha = node.attrs.getFloat("act_alpha", 0.0);
  cfg.beta = node.attrs.getFloat("act_beta", 0.0);
  cfg.hasResidual = node.input(3) != nullptr;
  KILN_ASSIGN_OR_RETURN(cfg.panels,
                        HostBuffer::allocate(static_cast<size_t>(panelCount(cfg.n) * cfg.k * kPanel) * sizeof(float),
                                             "GEMV packed weights"));
  // B[kk][col] (B[col][kk] when transposed) to panel col / 16, row kk, lane col % 16; the buffer starts zeroed.
  auto const* src = static_cast<float const*>(b->data());
  auto* dst = static_cast<float*>(cfg.panels.data());
  for (int64_t kk = 0; kk < cfg.k; ++kk)
    for (int64_t col = 0; col < cfg.n; ++col)
      dst[((col / kPanel) * cfg.k + kk) * kPanel + col % kPanel] =
          transB ? src[col * cfg.k + kk] : src[kk * cfg.n + col];
  return std::unique_ptr<Kernel>(std::make_unique<GemvKernel>(std::move(cfg)));
}

// Timed above level 0 against oneDNN's GEMM (the level-0 heuristic keeps that one, priority 10). On ResNet-50's
// classifier at batch 1 (8 MB of weights, coming from memory in a network) it reads B faster than oneDNN's matmul.
Tactic gemvTactic() {
  Tactic t;
  t.name = "matrix_multiply_cpu_gemv";
  t.op = OpType::kMatrixMultiply;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kONEDNN;  // the fast CPU backend's source (Kiln's own loops, as attention_cpu_tiled)
  t.priority = 9;
  t.supports = supportsGemv;
  t.outputMayReuseInput = 3;  // each y element is written after its residual element is read, by one thread
  t.create = createGemv;
  return t;
}

KILN_REGISTER_TACTIC(gemvTactic);

}  // namespace

void setCpuGemvPortable(bool portable) { gForcePortable.store(portable); }

}  // namespace kiln::backends::cpu
