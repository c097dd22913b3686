// Normalization kernels, fastest first: rows (each group one contiguous run of x) in whole 16-byte vectors held
// in registers, one warp per row up to 2,048 elements, one block or a cluster of up to 8 blocks per row beyond;
// one warp per row element by element (rows not in whole vectors); one block per group, three passes, any layout.
// All compute the mean, then the mean squared deviation from it, in fp32.
#include <cooperative_groups.h>

#include <cmath>
#include <cstdint>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/normalization_kernels.h"
#include "backends/cuda/reduce_device.cuh"
#include "backends/cuda/vector_io.cuh"

namespace kiln::cuda {
namespace {

namespace cg = cooperative_groups;

// How scale or bias is indexed along a row of the vectorized kernels, from the row's own offset: element j of the
// row reads off + j (layer norm), off (instance norm, group norm per group) or off + j / div (group norm V2: one
// value per channel of div elements).
enum AffineMode : int32_t { kPerElement = 0, kPerRow = 1, kPerChannel = 2 };

struct Affine {
  void const* data;
  int32_t dtype;
  int32_t mode;
  int64_t div;
};

// Values of scale/bias for the V elements from row offset j (a multiple of V; with kPerChannel, div is a
// multiple of V, so the V elements share one channel).
template <int V>
__device__ __forceinline__ void loadAffine(Affine const& a, int64_t off, int64_t j, float (&out)[V]) {
  if (a.mode == kPerElement) {
    vec::loadAny<V>(a.data, a.dtype, off + j, out);
    return;
  }
  float v = red::loadFloat(a.data, a.dtype, a.mode == kPerRow ? off : off + j / a.div);
#pragma unroll
  for (int i = 0; i < V; ++i) out[i] = v;
}

// x (+ residual) of V elements at xr[j].
template <typename T, int V>
__device__ __forceinline__ void loadInput(T const* xr, T const* rr, int64_t j, float (&v)[V]) {
  vec::load<T, V>(xr + j, v);
  if (rr) {
    float r[V];
    vec::load<T, V>(rr + j, r);
#pragma unroll
    for (int i = 0; i < V; ++i) v[i] += r[i];
  }
}

template <typename T, int V>
__device__ __forceinline__ void storeOutput(T* yr, int64_t j, float const (&v)[V], float mean, float inv,
                                            Affine const& scale, int64_t sOff, Affine const& bias, int64_t bOff) {
  float s[V], b[V], o[V];
  loadAffine<V>(scale, sOff, j, s);
  loadAffine<V>(bias, bOff, j, b);
#pragma unroll
  for (int i = 0; i < V; ++i) o[i] = (v[i] - mean) * inv * s[i] + b[i];
  vec::store<T, V>(yr + j, o);
}

// One warp per row of `len` = nvec * V elements (nvec <= 32 * kVecs), vector k of lane l at index l + 32 k (each
// load instruction of the warp covers 512 contiguous bytes). kVecs is 2, 4 or 8 (fewer kernels to compile; the
// unused slots of a shorter row are predicated off).
constexpr int kWarpVecBlock = 128;

template <typename T, int kVecs>
__global__ void __launch_bounds__(kWarpVecBlock)
    warpVecNormKernel(T const* __restrict__ x, T const* __restrict__ residual, T* __restrict__ y, Affine scale,
                      Affine bias, StridedSpace outer, int32_t nvec, float epsilon) {
  constexpr int V = vec::kWidth<T>;
  int const lane = threadIdx.x & 31;
  int const warpsPerBlock = blockDim.x >> 5;
  int64_t const warps = static_cast<int64_t>(gridDim.x) * warpsPerBlock;
  float const count = static_cast<float>(nvec) * V;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * warpsPerBlock + (threadIdx.x >> 5); o < outer.count; o += warps) {
    int64_t off[3];
    red::decode<3>(outer, o, off);
    T const* xr = x + off[0];
    T const* rr = residual ? residual + off[0] : nullptr;
    float v[kVecs][V];
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      int vi = lane + 32 * k;
      if (vi < nvec) {
        loadInput<T, V>(xr, rr, static_cast<int64_t>(vi) * V, v[k]);
#pragma unroll
        for (int i = 0; i < V; ++i) sum += v[k][i];
      }
    }
    float const mean = red::warpReduce(sum, red::SumOp{}) / count;
    float sq = 0.f;
#pragma unroll
    for (int k = 0; k < kVecs; ++k)
      if (lane + 32 * k < nvec)
#pragma unroll
        for (int i = 0; i < V; ++i) {
          float d = v[k][i] - mean;
          sq += d * d;
        }
    float const inv = 1.f / sqrtf(red::warpReduce(sq, red::SumOp{}) / count + epsilon);
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      int vi = lane + 32 * k;
      if (vi < nvec)
        storeOutput<T, V>(y + off[0], static_cast<int64_t>(vi) * V, v[k], mean, inv, scale, off[1], bias, off[2]);
    }
  }
}

// One row per cluster of `cluster` blocks (1 to 8; the cluster is the launch's, so a plain block-per-row launch is
// a cluster of 1): block b of the cluster holds vectors [b * blockDim * kVecs, ...) of the row, thread t vector
// t + blockDim * k of that slice. Block sums go through shared memory; the cluster adds its blocks' sums by
// reading each block's shared memory (distributed shared memory), so the row is read from memory once.
constexpr int kClusterMaxThreads = 512;

template <typename T, int kVecs>
__global__ void __launch_bounds__(kClusterMaxThreads)
    clusterVecNormKernel(T const* __restrict__ x, T const* __restrict__ residual, T* __restrict__ y, Affine scale,
                         Affine bias, StridedSpace outer, int64_t nvec, float epsilon) {
  constexpr int V = vec::kWidth<T>;
  __shared__ float scratch[33];
  __shared__ float partial[2];
  cg::cluster_group cluster = cg::this_cluster();
  unsigned const rank = cluster.block_rank();
  unsigned const size = cluster.num_blocks();
  int64_t const clusters = gridDim.x / size;
  int64_t const slice = static_cast<int64_t>(blockDim.x) * kVecs;
  int64_t const first = rank * slice;
  float const count = static_cast<float>(nvec) * V;
  // Every block of a cluster walks the same rows, so the cluster-wide barriers below are reached together.
  for (int64_t o = blockIdx.x / size; o < outer.count; o += clusters) {
    int64_t off[3];
    red::decode<3>(outer, o, off);
    T const* xr = x + off[0];
    T const* rr = residual ? residual + off[0] : nullptr;
    float v[kVecs][V];
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      int64_t vi = first + threadIdx.x + static_cast<int64_t>(blockDim.x) * k;
      if (vi < nvec) {
        loadInput<T, V>(xr, rr, vi * V, v[k]);
#pragma unroll
        for (int i = 0; i < V; ++i) sum += v[k][i];
      }
    }
    sum = red::blockReduce(sum, red::SumOp{}, 0.f, scratch);
    if (threadIdx.x == 0) partial[0] = sum;
    cluster.sync();
    float total = 0.f;
    for (unsigned b = 0; b < size; ++b) total += *cluster.map_shared_rank(&partial[0], b);
    float const mean = total / count;
    float sq = 0.f;
#pragma unroll
    for (int k = 0; k < kVecs; ++k)
      if (first + threadIdx.x + static_cast<int64_t>(blockDim.x) * k < nvec)
#pragma unroll
        for (int i = 0; i < V; ++i) {
          float d = v[k][i] - mean;
          sq += d * d;
        }
    sq = red::blockReduce(sq, red::SumOp{}, 0.f, scratch);
    if (threadIdx.x == 0) partial[1] = sq;
    cluster.sync();
    float sqTotal = 0.f;
    for (unsigned b = 0; b < size; ++b) sqTotal += *cluster.map_shared_rank(&partial[1], b);
    float const inv = 1.f / sqrtf(sqTotal / count + epsilon);
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      int64_t vi = first + threadIdx.x + static_cast<int64_t>(blockDim.x) * k;
      if (vi < nvec) storeOutput<T, V>(y + off[0], vi * V, v[k], mean, inv, scale, off[1], bias, off[2]);
    }
    // No block may overwrite `partial` (next row) or exit while another still reads it.
    cluster.sync();
  }
}

// Element by element, the generic path: one block per normalized group, two reduction passes and a writing
// pass, scale and bias at their own (broadcast) strides.
template <typename T>
__global__ void normKernel(T const* __restrict__ x, T const* __restrict__ residual, T* __restrict__ y,
                           void const* __restrict__ scale, int32_t scaleType, void const* __restrict__ bias,
                           int32_t biasType, StridedSpace outer, StridedSpace inner, float epsilon) {
  __shared__ float scratch[33];
  float const count = static_cast<float>(inner.count);
  auto in = [&](int64_t i) { return dev::toFloat(x[i]) + (residual ? dev::toFloat(residual[i]) : 0.f); };
  for (int64_t o = blockIdx.x; o < outer.count; o += gridDim.x) {
    int64_t ob[3];
    red::decode<3>(outer, o, ob);
    float sum = 0.f;
    for (int64_t i = threadIdx.x; i < inner.count; i += blockDim.x) sum += in(ob[0] + red::offset0(inner, i));
    float mean = red::blockReduce(sum, red::SumOp{}, 0.f, scratch) / count;
    float sq = 0.f;
    for (int64_t i = threadIdx.x; i < inner.count; i += blockDim.x) {
      float d = in(ob[0] + red::offset0(inner, i)) - mean;
      sq += d * d;
    }
    float inv = 1.f / sqrtf(red::blockReduce(sq, red::SumOp{}, 0.f, scratch) / count + epsilon);
    for (int64_t i = threadIdx.x; i < inner.count; i += blockDim.x) {
      int64_t ib[3];
      red::decode<3>(inner, i, ib);
      float s = red::loadFloat(scale, scaleType, ob[1] + ib[1]);
      float b = red::loadFloat(bias, biasType, ob[2] + ib[2]);
      y[ob[0] + ib[0]] = dev::fromFloat<T>((in(ob[0] + ib[0]) - mean) * inv * s + b);
    }
  }
}

// One warp per contiguous row of L <= 32 * kPer elements element by element (element lane + 32 k in slot k), for
// rows not in whole 16-byte vectors; scale and bias one contiguous row shared by every group.
constexpr int kRowWarps = 4;

template <typename T, int kPer>
__global__ void __launch_bounds__(32 * kRowWarps)
    rowNormKernel(T const* __restrict__ x, T const* __restrict__ residual, T* __restrict__ y,
                  void const* __restrict__ scale, int32_t scaleType, void const* __restrict__ bias, int32_t biasType,
                  StridedSpace outer, int32_t len, float epsilon) {
  int const lane = threadIdx.x & 31;
  int64_t const warps = static_cast<int64_t>(gridDim.x) * kRowWarps;
  float const count = static_cast<float>(len);
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * kRowWarps + (threadIdx.x >> 5); o < outer.count; o += warps) {
    int64_t const base = red::offset0(outer, o);
    float v[kPer];
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      int j = lane + 32 * k;
      v[k] = j < len ? dev::toFloat(x[base + j]) + (residual ? dev::toFloat(residual[base + j]) : 0.f) : 0.f;
      sum += v[k];
    }
    float const mean = red::warpReduce(sum, red::SumOp{}) / count;
    float sq = 0.f;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      int j = lane + 32 * k;
      float d = j < len ? v[k] - mean : 0.f;
      sq += d * d;
    }
    float const inv = 1.f / sqrtf(red::warpReduce(sq, red::SumOp{}) / count + epsilon);
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      int j = lane + 32 * k;
      if (j < len)
        y[base + j] = dev::fromFloat<T>((v[k] - mean) * inv * red::loadFloat(scale, scaleType, j) +
                                        red::loadFloat(bias, biasType, j));
    }
  }
}

// Fewer rows than kRowKernelFrom go from the element-by-element warp kernel to the block-per-group kernel, which
// spreads a small batch over more SMs.
constexpr int64_t kRowKernelFrom = 1024;

// Whether (outer, inner) is the case rowNormKernel handles: at least kRowKernelFrom groups, each one contiguous
// run in x, scale and bias; scale and bias not moving with the group.
bool isScalarRowCase(StridedSpace const& outer, StridedSpace const& inner) {
  if (inner.rank != 1 || inner.count > 32 * 32 || inner.count < 1 || outer.count < kRowKernelFrom) return false;
  for (int t = 0; t < 3; ++t)
    if (inner.stride[t][0] != 1) return false;
  for (int d = 0; d < outer.rank; ++d)
    if (outer.stride[1][d] != 0 || outer.stride[2][d] != 0) return false;
  return true;
}

// The vectorized paths' view of a group: x's part is one contiguous run (the inner dims are x's trailing dims),
// and scale/bias index as one of the AffineModes. False where the group is not that.
bool affineMode(StridedSpace const& inner, int t, Affine& a) {
  bool allZero = true;
  for (int d = 0; d < inner.rank; ++d) allZero = allZero && inner.stride[t][d] == 0;
  if (allZero) {
    a.mode = kPerRow;
    a.div = 1;
    return true;
  }
  bool sameAsX = true;
  for (int d = 0; d < inner.rank; ++d) sameAsX = sameAsX && inner.stride[t][d] == inner.stride[0][d];
  if (sameAsX) {
    a.mode = kPerElement;
    a.div = 1;
    return true;
  }
  // Group norm V2: inner [C/G, spatial], one value per channel.
  if (inner.rank == 2 && inner.stride[t][0] == 1 && inner.stride[t][1] == 0) {
    a.mode = kPerChannel;
    a.div = inner.size[1];
    return true;
  }
  return false;
}

bool xContiguous(StridedSpace const& inner) {
  int64_t step = 1;
  for (int d = inner.rank; d-- > 0;) {
    if (inner.stride[0][d] != step) return false;
    step *= inner.size[d];
  }
  return true;
}

// The vectorized paths' limits: a warp holds up to 8 vectors a lane, so rows of 2,048 elements at 2 bytes and
// 1,024 at 4 (64 and 32 fp32 registers of row data); a cluster of up to 8 blocks of up to 512 threads, 4 vectors
// each (2 or 4 a thread: the smallest cluster, then the fewest vectors, that fit).
constexpr int kWarpVecsMax = 8;
constexpr int kClusterVecsMax = 4;
constexpr int kClusterMax = 8;

template <typename T, int kVecs>
void launchWarpVec(T const* x, T const* r, T* y, Affine const& s, Affine const& b, StridedSpace const& outer,
                   int32_t nvec, float eps, cudaStream_t stream) {
  int64_t blocks64 = (outer.count * 32 + kWarpVecBlock - 1) / kWarpVecBlock;
  auto blocks = static_cast<unsigned>(blocks64 < (1 << 20) ? blocks64 : (1 << 20));
  // Few rows: one warp a block, spread over more SMs.
  unsigned threads = outer.count < 4 * 132 ? 32u : static_cast<unsigned>(kWarpVecBlock);
  if (threads == 32) blocks = static_cast<unsigned>(outer.count);
  warpVecNormKernel<T, kVecs><<<blocks, threads, 0, stream>>>(x, r, y, s, b, outer, nvec, eps);
}

template <typename T, int kVecs>
void launchCluster(T const* x, T const* r, T* y, Affine const& s, Affine const& b, StridedSpace const& outer,
                   int64_t nvec, int cluster, int threads, float eps, cudaStream_t stream) {
  int64_t rows = outer.count < (1 << 20) ? outer.count : (1 << 20);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(rows * cluster));
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = 0;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(cluster);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  // A failed launch is left in CUDA's last error, which the tactic's launchStatus reports.
  (void)cudaLaunchKernelEx(&cfg, clusterVecNormKernel<T, kVecs>, x, r, y, s, b, outer, nvec, eps);
}

template <typename T>
NormPath launchTyped(T const* x, T const* r, T* y, void const* scale, int32_t scaleType, void const* bias,
                     int32_t biasType, StridedSpace const& outer, StridedSpace const& inner, float eps,
                     cudaStream_t stream, bool forceGeneric) {
  constexpr int V = vec::kWidth<T>;
  constexpr int kBytes = static_cast<int>(sizeof(T));
  Affine s{scale, scaleType, kPerRow, 1}, b{bias, biasType, kPerRow, 1};
  int64_t const len = inner.count;
  auto bytesOf = [](int32_t t) { return t == dev::kFLOAT ? 4 : 2; };
  bool vectorized = !forceGeneric && len % V == 0 && xContiguous(inner) && affineMode(inner, 1, s) &&
                    affineMode(inner, 2, b) && vec::aligned(x, V, kBytes) && vec::aligned(y, V, kBytes) &&
                    (!r || vec::aligned(r, V, kBytes));
  // Per-element scale/bias are read V at a time: aligned like x (their row offsets are multiples of len).
  if (vectorized && s.mode == kPerElement) vectorized = vec::aligned(scale, V, bytesOf(scaleType));
  if (vectorized && b.mode == kPerElement) vectorized = vec::aligned(bias, V, bytesOf(biasType));
  if (vectorized && (s.mode == kPerChannel || b.mode == kPerChannel))
    vectorized = (s.mode != kPerChannel || s.div % V == 0) && (b.mode != kPerChannel || b.div % V == 0);
  if (vectorized) {
    int64_t const nvec = len / V;
    if (nvec <= 32 * kWarpVecsMax) {
      auto n = static_cast<int32_t>(nvec);
      if (nvec <= 64)
        launchWarpVec<T, 2>(x, r, y, s, b, outer, n, eps, stream);
      else if (nvec <= 128)
        launchWarpVec<T, 4>(x, r, y, s, b, outer, n, eps, stream);
      else
        launchWarpVec<T, 8>(x, r, y, s, b, outer, n, eps, stream);
      return NormPath::kWarpVec;
    }
    // The smallest cluster, then the fewest vectors a thread, that fits the row in blocks of at most 512 threads.
    for (int cluster = 1; cluster <= kClusterMax; cluster *= 2)
      for (int k = 2; k <= kClusterVecsMax; k *= 2) {
        int64_t threads = (nvec + int64_t{cluster} * k - 1) / (int64_t{cluster} * k);
        threads = (threads + 31) / 32 * 32;
        if (threads > kClusterMaxThreads) continue;
        auto t = static_cast<int>(threads);
        if (k == 2)
          launchCluster<T, 2>(x, r, y, s, b, outer, nvec, cluster, t, eps, stream);
        else
          launchCluster<T, 4>(x, r, y, s, b, outer, nvec, cluster, t, eps, stream);
        return NormPath::kClusterVec;
      }
  }
  if (!forceGeneric && isScalarRowCase(outer, inner)) {
    int64_t blocks64 = (outer.count + kRowWarps - 1) / kRowWarps;
    auto blocks = static_cast<unsigned>(blocks64 < (1 << 20) ? blocks64 : (1 << 20));
    dim3 block(32 * kRowWarps);
    auto l = static_cast<int32_t>(len);
    if (len <= 32 * 4)
      rowNormKernel<T, 4><<<blocks, block, 0, stream>>>(x, r, y, scale, scaleType, bias, biasType, outer, l, eps);
    else if (len <= 32 * 8)
      rowNormKernel<T, 8><<<blocks, block, 0, stream>>>(x, r, y, scale, scaleType, bias, biasType, outer, l, eps);
    else if (len <= 32 * 16)
      rowNormKernel<T, 16><<<blocks, block, 0, stream>>>(x, r, y, scale, scaleType, bias, biasType, outer, l, eps);
    else
      rowNormKernel<T, 32><<<blocks, block, 0, stream>>>(x, r, y, scale, scaleType, bias, biasType, outer, l, eps);
    return NormPath::kWarpScalar;
  }
  int threads = len >= 256 ? 256 : static_cast<int>((len + 31) / 32 * 32);
  if (threads < 32) threads = 32;
  auto blocks = static_cast<unsigned>(outer.count < (1 << 20) ? outer.count : (1 << 20));
  normKernel<T><<<blocks, threads, 0, stream>>>(x, r, y, scale, scaleType, bias, biasType, outer, inner, eps);
  return NormPath::kBlock;
}

}  // namespace

NormPath launchNormalization(int32_t dtype, void const* x, void const* residual, void* y, void const* scale,
                             int32_t scaleType, void const* bias, int32_t biasType, StridedSpace const& outer,
                             StridedSpace const& inner, float epsilon, cudaStream_t stream, bool forceGeneric) {
  NormPath path = NormPath::kNone;
  KILN_CUDA_DISPATCH_FLOAT(
      dtype, path = launchTyped<T>(static_cast<T const*>(x), static_cast<T const*>(residual), static_cast<T*>(y), scale,
                                   scaleType, bias, biasType, outer, inner, epsilon, stream, forceGeneric));
  return path;
}

}  // namespace kiln::cuda
