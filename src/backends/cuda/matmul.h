// MatrixMultiply's host-side pieces shared by its CUDA tactics (matmul.cc, matmul_cublaslt.cc): attributes,
// the shape of one launch (operand layouts, collapsed broadcast batch, bias map) and the tiled-kernel launch.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/cuda/matmul_kernels.h"
#include "kiln/kiln.h"

namespace kiln::cuda::matmul {

using backends::TensorView;

/// The node's attributes, checked as the reference kernel checks them.
struct Attrs {
  std::string who;
  MatrixOperation opA = MatrixOperation::kNONE;
  MatrixOperation opB = MatrixOperation::kNONE;
  int32_t activation = -1;
  double alpha = 0, beta = 0;
  bool tf32 = false;
};

/// Reads and checks op_a, op_b, activation, act_alpha, act_beta and allow_tf32; errors name the node.
Result<Attrs> readAttrs(ir::Node const& node);

/// True for 2 to 4 inputs with a, b, y (and a present bias and residual) all of one CUDA float type (fp32/fp16/bf16,
/// and fp64 when `withFloat64`), and attributes the reference accepts.
bool supportsNode(ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out,
                  bool withFloat64);

/// One launch: y[batch] (m x n) = op(a) (m x k) * op(b) (k x n) over a broadcast batch.
struct Shape {
  MatmulProblem p;      // m, n, k and the element strides inside one matrix (dtype unset)
  bool transA = false;  // a stored [K, M]
  bool transB = false;  // b stored [N, K] (a kVECTOR b is one such row: n = 1)
  bool vecB = false;
  MatmulBatch batch;        // batch dims, size-1 dims dropped and neighbours merged; element strides
  int64_t batchCount = 1;   // product of the batch dims
  MatmulEpilogue biasMap;   // y's dims and the bias's strides over them (bias pointer unset)
  bool biasAlongN = false;  // the bias is one vector of n along y's last dim (cuBLASLt's bias epilogue)
};

/// The shape of a launch with these dims, with the reference kernel's checks (invalidArgument when they fail).
Result<Shape> analyze(Attrs const& at, Dims const& a, Dims const& b, Dims const* bias, Dims const& y);
/// analyze() on a launch's inputs and output; also checks that a present residual has y's shape.
Result<Shape> analyzeLaunch(Attrs const& at, backends::LaunchContext const& ctx);

/// The launch's residual (input 3, y's shape and layout; only read), or null.
void const* residualOf(backends::LaunchContext const& ctx);

/// The epilogue (no residual): the bias when `addBias`, the node's activation when `applyActivation`.
MatmulEpilogue epilogueFor(Shape const& s, Attrs const& at, void const* bias, bool addBias, bool applyActivation);

/// One plain cuBLASLt GEMM for ops that are a matrix multiply in disguise (pointwise convolutions): y[i] (m x n,
/// row-major) = op(a[i]) (m x k) * op(b[i]) (k x n) (+ c[i], y's layout, when given) for i < count, each operand
/// at its element stride per batch entry (0: shared); the epilogue adds `bias` (n values along y's rows) and then
/// applies ReLU where asked. fp32 (TF32 with `tf32`), fp16 or bf16 with fp32 accumulation; m, n, k > 0.
struct LtGemm {
  DataType dtype = DataType::kFLOAT;
  bool tf32 = false;
  int64_t m = 0, n = 0, k = 0;
  bool transA = false;  // a stored [k, m]
  bool transB = false;  // b stored [n, k]
  int64_t count = 1;    // at most 65535
  int64_t strideA = 0, strideB = 0, strideY = 0;
  bool bias = false, relu = false;
};

/// cuBLASLt plans (descriptors and heuristic results) of LtGemm shapes, cached per object (shapes change with
/// the context's inputs); safe to use from several threads at once.
class LtGemmRunner {
 public:
  LtGemmRunner();
  ~LtGemmRunner();
  LtGemmRunner(LtGemmRunner const&) = delete;
  LtGemmRunner& operator=(LtGemmRunner const&) = delete;
  /// The workspace heuristic result #algoIndex (or #0 where there are fewer) needs at 256-byte alignment, plus
  /// the slack for aligning it; the cap when the plan cannot be made.
  size_t workspaceSize(LtGemm const& g, int algoIndex) const;
  /// The most workspace any call takes (with the slack for aligning it): what to ask for when shapes are unknown.
  static size_t maxWorkspaceSize();
  /// Enqueues the GEMM with heuristic result #algoIndex (or #0) on `stream`, within the workspace given (any
  /// alignment). Returns false in *ran (and enqueues nothing) when cuBLASLt has no algorithm for the shape;
  /// errors name `who`.
  Status run(LtGemm const& g, int algoIndex, void const* a, void const* b, void const* c, void const* bias, void* y,
             void* workspace, size_t workspaceBytes, cudaStream_t stream, std::string const& who, bool* ran) const;

 private:
  struct Cache;
  std::unique_ptr<Cache> cache_;
};

/// L2-resident chunking (the `matrixmultiply_cublaslt_l2chunk_algo*` tactics): an output larger than this many
/// bytes, followed by the pointwise pass, runs as row chunks of GEMM then pass, so that the pass reads each chunk
/// from L2. The override of setL2ChunkBudget when set, else a third of the current device's L2 (cached per device);
/// 0 when the device cannot be asked (nothing is chunked then).
int64_t l2ChunkBudget();

/// Test hook: forces l2ChunkBudget() to `bytes` (0: the device's third of L2 again); returns the previous override.
int64_t setL2ChunkBudget(int64_t bytes);

/// Rows per chunk for an output of `m` rows of `rowBytes` bytes under `budget` bytes: the fewest chunks that each
/// fit the budget, their rows evened out and rounded up to a multiple of 128 (a GEMM tile's rows; at least 128).
/// 0 when the output needs no split: it fits the budget, m is at most 128, or one chunk would cover all m rows.
int64_t l2ChunkRows(int64_t m, int64_t rowBytes, int64_t budget);

/// Enqueues the whole node on the tiled kernel (bias, residual and activation fused). y must not be empty.
Status runSimt(Shape const& s, Attrs const& at, backends::LaunchContext const& ctx);

}  // namespace kiln::cuda::matmul
