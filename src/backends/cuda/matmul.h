// MatrixMultiply's host-side pieces shared by its CUDA tactics (matmul.cc, matmul_cublaslt.cc): attributes,
// the shape of one launch (operand layouts, collapsed broadcast batch, bias map) and the tiled-kernel launch.
#pragma once

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

/// The cuBLASLt kernel of matrixmultiply_cublaslt_algo<algoIndex> for these attributes (also run by other ops
/// that are a matrix multiply in disguise: channels-last 1x1 convolutions).
std::unique_ptr<backends::Kernel> makeCublasLtKernel(Attrs at, int algoIndex);

/// Enqueues the whole node on the tiled kernel (bias, residual and activation fused). y must not be empty.
Status runSimt(Shape const& s, Attrs const& at, backends::LaunchContext const& ctx);

}  // namespace kiln::cuda::matmul
