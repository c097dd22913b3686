// Launcher of the vectorized in-place GEMM epilogue y = act(y + bias + residual) (gemm_epilogue.cu), what cuBLASLt's
// epilogue cannot do after matmul.cu's and conv_pointwise.cu's GEMMs. Plain signatures: no Kiln headers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

/// One pass over y [count] of fp32, fp16 or bf16. Element i of y adds bias[(i / biasRow) % biasPeriod]: biasRow 1
/// is a bias along y's last dim (or covering y), loaded as whole 16-byte vectors; a larger biasRow is one value
/// per row of biasRow elements (a row-major convolution output's channel plane), broadcast to a vector.
struct GemmEpilogue {
  void const* bias = nullptr;      ///< y's type; null: none
  int64_t biasPeriod = 0;          ///< bias elements
  int64_t biasRow = 1;             ///< y elements per bias element
  void const* residual = nullptr;  ///< y's shape and type; may be y's own memory; null: none
  int32_t activation = -1;         ///< an ActivationType value with TensorRT's alpha/beta meanings; -1: none
  float alpha = 0.f;
  float beta = 0.f;
  /// 4: each thread loads 4 vectors of y (with their bias and residual) before it computes any, the most bytes in
  /// flight per thread; 1: one vector per thread and step, half the registers and 4 times the blocks. The grid is
  /// sized for that many (past 65535 * 16 blocks it is capped and loops). A residual or an activation without a
  /// kernel of its own always takes 1.
  int vectorsPerThread = 4;
};

/// Whether launchGemmEpilogue takes the call: dtype fp32/fp16/bf16, y and the residual 16-byte aligned, and a bias
/// with biasPeriod >= 1 that is either along the last dim in whole 16-byte vectors from a 16-byte aligned address
/// (biasRow 1) or one value per row of whole vectors (biasRow a multiple of the width); vectorsPerThread 1 or 4.
bool gemmEpilogueFits(void const* y, int32_t dtype, GemmEpilogue const& e);

/// Whether `activation` is compiled into its own kernel (none, ReLU, sigmoid, tanh, leaky ReLU, clip, GELU erf and
/// tanh; no residual); any other runs a kernel that switches on it per element.
bool gemmEpilogueCompiled(int32_t activation, bool residual);

/// y = act(y + bias + residual) over y [count] in place, fp32 math, rounded to y's type once; the last count % width
/// elements one by one. False (nothing launched) where gemmEpilogueFits is false or count < 0; launch errors are
/// left for launchStatus.
bool launchGemmEpilogue(void* y, int32_t dtype, int64_t count, GemmEpilogue const& e, cudaStream_t stream);

}  // namespace kiln::cuda
