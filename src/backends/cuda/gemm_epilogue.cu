// The vectorized in-place GEMM epilogue y = act(y + bias + residual) (gemm_epilogue_kernels.h): 16-byte loads and
// stores, 4 vectors (or 1) per thread and step loaded with their bias and residual before any is computed, the
// common activations compiled in.
#include "backends/cuda/activation.cuh"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/gemm_epilogue_kernels.h"
#include "backends/cuda/vector_io.cuh"

namespace kiln::cuda {
namespace {

// After a GEMM this pass is pure streaming (read y, write y, the bias from L1/L2): what bounds it is bytes in flight
// per SM. With kUnroll 4 each thread loads 4 vectors of y (and their bias and residual vectors) before it computes
// any, so a resident warp keeps 2 KiB of y's loads outstanding; kUnroll 1 takes half the registers (more resident
// threads) and gives small outputs more blocks. The grid is sized for kUnroll vectors per thread (a grid capped by
// blocksFor loops). The activation is a template argument, so no per-element switch is left in the loop.
constexpr int kThreads = 256;
constexpr int kRuntimeActivation = -2;  // the kernel that switches on Params::activation per element

// The activation kinds with a compiled-in kernel (ActivationType values; -1: none): none, kRELU, kSIGMOID, kTANH,
// kLEAKY_RELU, kCLIP, kGELU_ERF, kGELU_TANH.
template <int... kActs>
struct Activations {};
using Compiled = Activations<-1, 0, 1, 2, 3, 8, 12, 13>;

// GemmEpilogue as the kernel reads it.
struct Params {
  void const* bias;
  void const* residual;
  int64_t biasVecs;    // vector bias (biasRow 1): y's vector v adds bias vector v % biasVecs
  int64_t biasPeriod;  // row bias: y's element i adds bias[(i / biasRow) % biasPeriod]
  int64_t biasRow;
  int32_t activation;
  float alpha, beta;
};

// GELU erf as x * (1 + erf(x / sqrt 2)) / 2 here, where dev::activate (the generic kernels, fp64) takes erfc(-x /
// sqrt 2): erff is a short polynomial, erfcf adds a division and an exp, and after a GEMM this pass must stay
// memory-bound (chunked from L2, all the more). The sum cancels for x < -3 (|GELU| < 0.004): there the result keeps
// an absolute error of about 1e-7 * |x| (erff's ulp at -1, halved and scaled by x), large relative to GELU's tiny
// values but far below the rounding of the O(1) outputs, and of the next GEMM's sums, that matter.
__device__ __forceinline__ float geluErf(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }

template <int kAct>
__device__ __forceinline__ float activation(float v, Params const& p) {
  if constexpr (kAct == kRuntimeActivation) {
    if (p.activation >= 0) v = dev::activate<float>(p.activation, v, p.alpha, p.beta);
  } else if constexpr (kAct == 12) {  // kGELU_ERF
    v = geluErf(v);
  } else if constexpr (kAct >= 0) {
    v = dev::activate<float>(kAct, v, p.alpha, p.beta);
  }
  return v;
}

template <typename T, int kAct, bool kResidual, int kUnroll>
__global__ void __launch_bounds__(kThreads) gemmEpilogueKernel(T* y, int64_t nVec, int64_t count, Params p) {
  constexpr int W = vec::kWidth<T>;
  auto* yv = reinterpret_cast<uint4*>(y);  // not restrict: the residual may share y's memory
  auto const* rv = static_cast<uint4 const*>(p.residual);
  T const* bias = static_cast<T const*>(p.bias);
  bool const vecBias = bias && p.biasRow == 1, rowBias = bias && p.biasRow > 1;
  int64_t const s = static_cast<int64_t>(gridDim.x) * kThreads;
  // 32-bit divisions where every operand fits.
  constexpr int64_t kMax32 = 0xffffffff;
  bool const smallVec = nVec <= kMax32 && p.biasVecs <= kMax32;
  bool const small = count <= kMax32 && p.biasRow <= kMax32 && p.biasPeriod <= kMax32;
  for (int64_t i0 = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x; i0 < nVec; i0 += s * kUnroll) {
    uint4 x[kUnroll], b[kUnroll], r[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      int64_t const i = i0 + u * s;
      if (i >= nVec) continue;
      x[u] = yv[i];
      if (vecBias) {
        int64_t const bi = smallVec ? static_cast<int64_t>(static_cast<uint32_t>(i) % static_cast<uint32_t>(p.biasVecs))
                                    : i % p.biasVecs;
        b[u] = __ldg(reinterpret_cast<uint4 const*>(bias) + bi);
      } else if (rowBias) {  // a row holds whole vectors: one bias value for the vector
        int64_t const e = i * W;
        int64_t const bi = small ? static_cast<int64_t>(static_cast<uint32_t>(e) / static_cast<uint32_t>(p.biasRow) %
                                                        static_cast<uint32_t>(p.biasPeriod))
                                 : e / p.biasRow % p.biasPeriod;
        b[u] = vec::broadcast<T>(__ldg(bias + bi));
      }
      if constexpr (kResidual) r[u] = rv[i];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      int64_t const i = i0 + u * s;
      if (i >= nVec) continue;
      float v[W];
      vec::unpack<T>(x[u], v);
      if (bias) {
        float bf[W];
        vec::unpack<T>(b[u], bf);
#pragma unroll
        for (int l = 0; l < W; ++l) v[l] += bf[l];
      }
      if constexpr (kResidual) {
        float rf[W];
        vec::unpack<T>(r[u], rf);
#pragma unroll
        for (int l = 0; l < W; ++l) v[l] += rf[l];
      }
#pragma unroll
      for (int l = 0; l < W; ++l) v[l] = activation<kAct>(v[l], p);
      yv[i] = vec::pack<T>(v);
    }
  }
  // The last count % W elements, one per thread of block 0 (the launcher checked the alignment of whole vectors
  // only, so these go element by element).
  int64_t const tail = count - nVec * W;
  if (blockIdx.x == 0 && threadIdx.x < tail) {
    int64_t const i = nVec * W + threadIdx.x;
    float v = dev::toFloat(y[i]);
    if (bias) v += dev::toFloat(bias[i / p.biasRow % p.biasPeriod]);
    if constexpr (kResidual) v += dev::toFloat(static_cast<T const*>(p.residual)[i]);
    y[i] = dev::fromFloat<T>(activation<kAct>(v, p));
  }
}

template <typename T, int kAct, bool kResidual, int kUnroll>
void launch(T* y, int64_t count, Params const& p, cudaStream_t stream) {
  int64_t const nVec = count / vec::kWidth<T>;
  unsigned const blocks = dev::blocksFor((nVec + kUnroll - 1) / kUnroll, kThreads);
  gemmEpilogueKernel<T, kAct, kResidual, kUnroll><<<blocks, kThreads, 0, stream>>>(y, nVec, count, p);
}

template <int... kActs>
bool contains(Activations<kActs...>, int32_t act) {
  return ((act == kActs) || ...);
}

// The compiled-in kernel for p's activation at 4 or 1 vectors per thread; else, and with a residual, the kernel
// that switches per element, at 1 (no production pass has a residual, since cuBLASLt adds it as C, nor an activation
// outside the list at 4; unrolling the switch 4 times would cost registers and compile time for nothing).
template <typename T, int kAct>
void launchCompiled(T* y, int64_t count, Params const& p, int vectorsPerThread, cudaStream_t stream) {
  if (vectorsPerThread == 4)
    launch<T, kAct, false, 4>(y, count, p, stream);
  else
    launch<T, kAct, false, 1>(y, count, p, stream);
}

template <typename T, int... kActs>
void launchFor(Activations<kActs...>, T* y, int64_t count, Params const& p, int vectorsPerThread, cudaStream_t stream) {
  if (p.residual) return launch<T, kRuntimeActivation, true, 1>(y, count, p, stream);
  bool const compiled =
      ((p.activation == kActs && (launchCompiled<T, kActs>(y, count, p, vectorsPerThread, stream), true)) || ...);
  if (!compiled) launch<T, kRuntimeActivation, false, 1>(y, count, p, stream);
}

}  // namespace

bool gemmEpilogueCompiled(int32_t activation, bool residual) { return !residual && contains(Compiled{}, activation); }

bool gemmEpilogueFits(void const* y, int32_t dtype, GemmEpilogue const& e) {
  int const width = vec::width(dtype);
  if (width == 0 || !vec::aligned16(y) || !vec::aligned16(e.residual)) return false;
  if (e.vectorsPerThread != 1 && e.vectorsPerThread != 4) return false;
  if (!e.bias) return true;
  if (e.biasPeriod < 1 || e.biasRow < 1) return false;
  return e.biasRow == 1 ? e.biasPeriod % width == 0 && vec::aligned16(e.bias) : e.biasRow % width == 0;
}

bool launchGemmEpilogue(void* y, int32_t dtype, int64_t count, GemmEpilogue const& e, cudaStream_t stream) {
  if (count < 0 || !gemmEpilogueFits(y, dtype, e)) return false;
  Params p{};
  p.bias = e.bias;
  p.residual = e.residual;
  p.biasVecs = e.bias ? e.biasPeriod / vec::width(dtype) : 0;
  p.biasPeriod = e.bias ? e.biasPeriod : 1;
  p.biasRow = e.bias ? e.biasRow : 1;
  p.activation = e.activation;
  p.alpha = e.alpha;
  p.beta = e.beta;
  return KILN_CUDA_DISPATCH_FLOAT(dtype,
                                  launchFor(Compiled{}, static_cast<T*>(y), count, p, e.vectorsPerThread, stream));
}

}  // namespace kiln::cuda
