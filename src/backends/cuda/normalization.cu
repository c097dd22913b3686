// Normalization kernels, fastest first: rows (each group one contiguous run of x) in whole 16-byte vectors held
// in registers, one persistent warp per row up to 2,048 elements (prefetching its next row), one block or a
// cluster of up to 8 blocks per row beyond; one warp per row element by element (rows not in whole vectors); one
// block per group, three passes, any layout. All compute the mean, then the mean squared deviation from it, in fp32.
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

// Everything the register-resident row kernels take, by value.
struct RowArgs {
  void const* x;
  void const* residual;  // null for none
  int64_t rPeriod;       // the residual repeats every rPeriod elements of x (a multiple of the row length)
  void* y;
  Affine scale, bias;
  StridedSpace outer;  // the rows, with offsets into x (0), scale (1) and bias (2)
  int32_t nvec;        // 16-byte vectors in a row
  float epsilon;
  bool streaming;     // RowVariant::kAlternative
  bool staged;        // scale and bias per element and the same for every row: staged in shared memory as fp32
                      // (the kernels' kStaged; the launcher picks the instantiation from it)
  bool held = false;  // the same, not staged: warpRowNormKernel holds each lane's scale and bias in registers
};

// Offsets of row o into x, scale and bias; the common single-dim case without a division.
__device__ __forceinline__ void rowOffsets(StridedSpace const& s, int64_t o, int64_t (&off)[3]) {
  if (s.rank == 1) {
#pragma unroll
    for (int t = 0; t < 3; ++t) off[t] = o * s.stride[t][0];
    return;
  }
  red::decode<3>(s, o, off);
}

// A row as it arrives: raw 16-byte vectors of x and the residual, offsets, and the per-row scale/bias values.
template <int kVecs, bool kResidual>
struct RawRow {
  uint4 x[kVecs];
  uint4 r[kResidual ? kVecs : 1];
  int64_t off[3];
  float s, b;  // kPerRow values
};

// The fp32 staging of per-element scale and bias in shared memory: plane p (of V / 4) holds lanes [4p, 4p + 4) of
// every vector, vector vi's at [4 vi, 4 vi + 4), so that a warp reading one float4 per lane for consecutive vectors
// reads consecutive 16-byte words (no bank conflicts). Scale's planes first, then bias's.
template <int V>
__device__ __forceinline__ int stagedIndex(int which, int nvec, int j) {
  int const vi = j / V, w = j % V;
  return ((which * (V / 4) + w / 4) * nvec + vi) * 4 + (w % 4);
}

template <int V>
__device__ __forceinline__ void loadStaged(float const* staged, int which, int nvec, int vi, float (&out)[V]) {
#pragma unroll
  for (int p = 0; p < V / 4; ++p) {
    float4 q = reinterpret_cast<float4 const*>(staged)[(which * (V / 4) + p) * nvec + vi];
    out[4 * p] = q.x;
    out[4 * p + 1] = q.y;
    out[4 * p + 2] = q.z;
    out[4 * p + 3] = q.w;
  }
}

// Fills the staging from scale and bias (the block's threads together; the caller synchronizes after).
template <int V>
__device__ __forceinline__ void stageAffine(RowArgs const& a, float* staged) {
  int const len = a.nvec * V;
  for (int j = threadIdx.x; j < len; j += blockDim.x) {
    staged[stagedIndex<V>(0, a.nvec, j)] = red::loadFloat(a.scale.data, a.scale.dtype, j);
    staged[stagedIndex<V>(1, a.nvec, j)] = red::loadFloat(a.bias.data, a.bias.dtype, j);
  }
}

// scale or bias for the V elements of vector vi of a row (element j = vi * V on), in the affine's mode.
template <int V, bool kStaged>
__device__ __forceinline__ void affineValues(Affine const& a, float const* stagedBase, int which, int nvec, int64_t off,
                                             float rowValue, int vi, float (&out)[V]) {
  if constexpr (kStaged) {
    loadStaged<V>(stagedBase, which, nvec, vi, out);
    return;
  }
  if (a.mode == kPerElement) {
    vec::loadAny<V>(a.data, a.dtype, off + static_cast<int64_t>(vi) * V, out);
    return;
  }
  // kPerChannel: div is a multiple of V and a row is under 2^31 elements, so 32-bit division.
  float v = a.mode == kPerRow
                ? rowValue
                : red::loadFloat(a.data, a.dtype, off + static_cast<uint32_t>(vi * V) / static_cast<uint32_t>(a.div));
#pragma unroll
  for (int i = 0; i < V; ++i) out[i] = v;
}

// Issues the loads of vector slots k of row o whose index idx(k) is below nvec (no arithmetic waits on them).
template <typename T, int kVecs, bool kResidual, typename Idx>
__device__ __forceinline__ void loadRow(RowArgs const& a, int64_t o, Idx idx, RawRow<kVecs, kResidual>& row) {
  constexpr int V = vec::kWidth<T>;
  rowOffsets(a.outer, o, row.off);
  T const* xr = static_cast<T const*>(a.x) + row.off[0];
  T const* rr = kResidual ? static_cast<T const*>(a.residual) + row.off[0] % a.rPeriod : nullptr;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    int vi = idx(k);
    if (vi < a.nvec) {
      row.x[k] = vec::loadRaw(xr + static_cast<int64_t>(vi) * V, a.streaming);
      if constexpr (kResidual) row.r[k] = vec::loadRaw(rr + static_cast<int64_t>(vi) * V, a.streaming);
    }
  }
  row.s = a.scale.mode == kPerRow ? red::loadFloat(a.scale.data, a.scale.dtype, row.off[1]) : 0.f;
  row.b = a.bias.mode == kPerRow ? red::loadFloat(a.bias.data, a.bias.dtype, row.off[2]) : 0.f;
}

// x (+ residual) of slot k as fp32, converted again from the raw vectors at each use: holding the 16-byte vectors
// rather than their fp32 lanes halves the registers of a 2-byte row (more warps resident, more bytes in flight).
template <typename T, int kVecs, bool kResidual>
__device__ __forceinline__ void inputAt(RawRow<kVecs, kResidual> const& row, int k, float (&v)[vec::kWidth<T>]) {
  constexpr int V = vec::kWidth<T>;
  vec::unpack<T>(row.x[k], v);
  if constexpr (kResidual) {
    float r[V];
    vec::unpack<T>(row.r[k], r);
#pragma unroll
    for (int i = 0; i < V; ++i) v[i] += r[i];
  }
}

template <typename T, int kVecs, bool kResidual, typename Idx>
__device__ __forceinline__ float rowSum(RowArgs const& a, Idx idx, RawRow<kVecs, kResidual> const& row) {
  float sum = 0.f;
#pragma unroll
  for (int k = 0; k < kVecs; ++k)
    if (idx(k) < a.nvec) {
      float v[vec::kWidth<T>];
      inputAt<T>(row, k, v);
#pragma unroll
      for (int i = 0; i < vec::kWidth<T>; ++i) sum += v[i];
    }
  return sum;
}

template <typename T, int kVecs, bool kResidual, typename Idx>
__device__ __forceinline__ float squaredDeviations(RowArgs const& a, Idx idx, RawRow<kVecs, kResidual> const& row,
                                                   float mean) {
  float sq = 0.f;
#pragma unroll
  for (int k = 0; k < kVecs; ++k)
    if (idx(k) < a.nvec) {
      float v[vec::kWidth<T>];
      inputAt<T>(row, k, v);
#pragma unroll
      for (int i = 0; i < vec::kWidth<T>; ++i) {
        float d = v[i] - mean;
        sq += d * d;
      }
    }
  return sq;
}

template <typename T, int kVecs, bool kResidual, bool kStaged, typename Idx>
__device__ __forceinline__ void storeRow(RowArgs const& a, Idx idx, RawRow<kVecs, kResidual> const& row, float mean,
                                         float inv, float const* staged) {
  constexpr int V = vec::kWidth<T>;
  T* yr = static_cast<T*>(a.y) + row.off[0];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    int vi = idx(k);
    if (vi < a.nvec) {
      float v[V], s[V], b[V], o[V];
      inputAt<T>(row, k, v);
      affineValues<V, kStaged>(a.scale, staged, 0, a.nvec, row.off[1], row.s, vi, s);
      affineValues<V, kStaged>(a.bias, staged, 1, a.nvec, row.off[2], row.b, vi, b);
#pragma unroll
      for (int i = 0; i < V; ++i) o[i] = (v[i] - mean) * inv * s[i] + b[i];
      vec::storeRaw(yr + static_cast<int64_t>(vi) * V, vec::pack<T>(o), a.streaming);
    }
  }
}

// Per-element scale and bias shared by every row (a layer norm), each lane's vector slots of them as fp32 in
// registers: a lane's slots are the same in every row, so they are loaded once, beside the first row's loads, and
// the row's store does not wait on a second round trip to memory (with few rows, one per warp, that round trip was
// a third of the kernel).
template <int V, int kVecs>
struct HeldAffine {
  float s[kVecs][V];
  float b[kVecs][V];
};

template <int V, int kVecs, typename Idx>
__device__ __forceinline__ void loadHeldAffine(RowArgs const& a, Idx idx, HeldAffine<V, kVecs>& h) {
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    int vi = idx(k);
    if (vi < a.nvec) {
      vec::loadAny<V>(a.scale.data, a.scale.dtype, static_cast<int64_t>(vi) * V, h.s[k]);
      vec::loadAny<V>(a.bias.data, a.bias.dtype, static_cast<int64_t>(vi) * V, h.b[k]);
    }
  }
}

template <typename T, int kVecs, bool kResidual, typename Idx>
__device__ __forceinline__ void storeRowHeld(RowArgs const& a, Idx idx, RawRow<kVecs, kResidual> const& row, float mean,
                                             float inv, HeldAffine<vec::kWidth<T>, kVecs> const& h) {
  constexpr int V = vec::kWidth<T>;
  T* yr = static_cast<T*>(a.y) + row.off[0];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    int vi = idx(k);
    if (vi < a.nvec) {
      float v[V], o[V];
      inputAt<T>(row, k, v);
#pragma unroll
      for (int i = 0; i < V; ++i) o[i] = (v[i] - mean) * inv * h.s[k][i] + h.b[k][i];
      vec::storeRaw(yr + static_cast<int64_t>(vi) * V, vec::pack<T>(o), a.streaming);
    }
  }
}

// One warp per row of nvec <= 32 * kVecs vectors (vector k of lane l at index l + 32 k: each load instruction of
// the warp covers 512 contiguous bytes), the warps of a persistent grid looping over the rows. With kPrefetch the
// next row's loads are issued before the current row is reduced, so that every warp keeps a row in flight while it
// computes. Staged scale/bias (a.staged) sit in dynamic shared memory, filled once per block.
constexpr int kRowBlock = 128;

template <typename T, int kVecs, bool kResidual, bool kStaged, bool kPrefetch>
__global__ void __launch_bounds__(kRowBlock, 3) warpRowNormKernel(RowArgs a) {
  constexpr int V = vec::kWidth<T>;
  extern __shared__ float4 stagedRaw[];
  auto* staged = reinterpret_cast<float*>(stagedRaw);
  int const lane = threadIdx.x & 31;
  int const warpsPerBlock = blockDim.x >> 5;
  int64_t const step = static_cast<int64_t>(gridDim.x) * warpsPerBlock;
  int64_t const rows = a.outer.count;
  float const count = static_cast<float>(a.nvec) * V;
  auto idx = [lane](int k) { return lane + 32 * k; };
  int64_t o = static_cast<int64_t>(blockIdx.x) * warpsPerBlock + (threadIdx.x >> 5);
  RawRow<kVecs, kResidual> cur;
  // The first row's loads go out before the staging, which waits on its own loads.
  if (o < rows) loadRow<T, kVecs, kResidual>(a, o, idx, cur);
  // Held scale and bias (a.held) for up to 4 vectors a lane: 64 more registers at most.
  constexpr bool kHold = !kStaged && kVecs <= 4;
  HeldAffine<V, kHold ? kVecs : 1> held;
  if constexpr (kHold) {
    if (a.held && o < rows) loadHeldAffine<V>(a, idx, held);
  }
  if constexpr (kStaged) {
    stageAffine<V>(a, staged);
    __syncthreads();
  }
  for (; o < rows; o += step) {
    if constexpr (!kPrefetch) {
      if (o != static_cast<int64_t>(blockIdx.x) * warpsPerBlock + (threadIdx.x >> 5))
        loadRow<T, kVecs, kResidual>(a, o, idx, cur);
    }
    RawRow<kVecs, kResidual> next;
    if constexpr (kPrefetch) {
      if (o + step < rows) loadRow<T, kVecs, kResidual>(a, o + step, idx, next);
    }
    float const mean = red::warpReduce(rowSum<T>(a, idx, cur), red::SumOp{}) / count;
    float const var = red::warpReduce(squaredDeviations<T>(a, idx, cur, mean), red::SumOp{}) / count;
    float const inv = 1.f / sqrtf(var + a.epsilon);
    if constexpr (kHold) {
      if (a.held) {
        storeRowHeld<T>(a, idx, cur, mean, inv, held);
      } else {
        storeRow<T, kVecs, kResidual, kStaged>(a, idx, cur, mean, inv, staged);
      }
    } else {
      storeRow<T, kVecs, kResidual, kStaged>(a, idx, cur, mean, inv, staged);
    }
    if constexpr (kPrefetch) cur = next;
  }
}

// Cluster-wide barrier halves (every thread of every block of the cluster arrives, then waits): release on arrive
// and acquire on wait make a block's shared-memory writes before it visible to the others' reads after.
__device__ __forceinline__ void clusterArrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void clusterWait() { asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory"); }

// The sum of v over the block and, with clusterSize > 1, over the cluster's blocks (through distributed shared
// memory). Every thread of every block gets the same value, summed in the same order. `warpSums` (16 floats) and
// `partial` (1 float) are this reduction's own shared memory. After it the caller must not overwrite `partial`
// before the cluster's next barrier (the other blocks may still read it).
__device__ __forceinline__ float sliceReduce(float v, float* warpSums, float* partial, unsigned clusterSize) {
  int const lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = red::warpReduce(v, red::SumOp{});
  if (lane == 0) warpSums[warp] = v;
  __syncthreads();
  float total = 0.f;
  for (int w = 0; w < warps; ++w) total += warpSums[w];
  if (clusterSize == 1) return total;
  if (threadIdx.x == 0) *partial = total;
  clusterArrive();
  clusterWait();
  cg::cluster_group cluster = cg::this_cluster();
  float mine = lane < static_cast<int>(clusterSize) ? *cluster.map_shared_rank(partial, lane) : 0.f;
  return red::warpReduce(mine, red::SumOp{});
}

// One row per block, or per cluster of `clusterSize` blocks (2 to 8, the launch's cluster dimension): block b of
// the cluster holds vectors [b * blockDim * kVecs, ...) of the row, thread t vector t + blockDim * k of that slice,
// so the row is read from memory once and written once. Block sums go through shared memory, the cluster's through
// distributed shared memory; the last barrier's wait comes after the stores, which overlap it. With kPrefetch the
// grid is persistent (as many blocks or clusters as are resident) and each block issues its slice of the next row
// before it reduces the current one, so that loads stay in flight through the reductions and barriers.
// Registers: at most 80 a thread without prefetch (three 256-thread blocks an SM; a block of 512, the 8-block
// clusters, fits too), 96 with it (two rows' vectors) or with the residual, which takes no prefetch (four rows'
// vectors spill even at 128).
constexpr int kSliceMaxThreads = 512;

template <typename T, int kVecs, bool kResidual, bool kPrefetch>
__global__ void __maxnreg__(kPrefetch || kResidual ? 96 : 80) sliceNormKernel(RowArgs a, unsigned clusterSize) {
  constexpr int V = vec::kWidth<T>;
  __shared__ float warpSums[2][kSliceMaxThreads / 32];
  __shared__ float partial[2];
  unsigned const rank = clusterSize > 1 ? cg::this_cluster().block_rank() : 0u;
  int64_t const clusters = gridDim.x / clusterSize;
  int64_t const rows = a.outer.count;
  int const first = static_cast<int>(rank * blockDim.x * kVecs + threadIdx.x);
  auto idx = [first](int k) { return first + static_cast<int>(blockDim.x) * k; };
  float const count = static_cast<float>(a.nvec) * V;
  int64_t o = blockIdx.x / clusterSize;
  RawRow<kVecs, kResidual> cur;
  if (kPrefetch && o < rows) loadRow<T, kVecs, kResidual>(a, o, idx, cur);
  // Every block of a cluster walks the same rows, so the cluster-wide barriers are reached together.
  for (; o < rows; o += clusters) {
    if constexpr (!kPrefetch) loadRow<T, kVecs, kResidual>(a, o, idx, cur);
    RawRow<kVecs, kResidual> next;
    if constexpr (kPrefetch) {
      if (o + clusters < rows) loadRow<T, kVecs, kResidual>(a, o + clusters, idx, next);
    }
    float const mean = sliceReduce(rowSum<T>(a, idx, cur), warpSums[0], &partial[0], clusterSize) / count;
    float const var =
        sliceReduce(squaredDeviations<T>(a, idx, cur, mean), warpSums[1], &partial[1], clusterSize) / count;
    if (clusterSize > 1) clusterArrive();  // done reading the others' partial[1]
    storeRow<T, kVecs, kResidual, false>(a, idx, cur, mean, 1.f / sqrtf(var + a.epsilon), nullptr);
    // No block may overwrite `partial` (next row) or exit while another still reads it.
    if (clusterSize > 1) clusterWait();
    if constexpr (kPrefetch) cur = next;
  }
}

// Element by element, the generic path: one block per normalized group, two reduction passes and a writing
// pass, scale and bias at their own (broadcast) strides.
template <typename T>
__global__ void normKernel(T const* __restrict__ x, T const* __restrict__ residual, int64_t rPeriod, T* __restrict__ y,
                           void const* __restrict__ scale, int32_t scaleType, void const* __restrict__ bias,
                           int32_t biasType, StridedSpace outer, StridedSpace inner, float epsilon) {
  __shared__ float scratch[33];
  float const count = static_cast<float>(inner.count);
  auto in = [&](int64_t i) { return dev::toFloat(x[i]) + (residual ? dev::toFloat(residual[i % rPeriod]) : 0.f); };
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
    rowNormKernel(T const* __restrict__ x, T const* __restrict__ residual, int64_t rPeriod, T* __restrict__ y,
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
      v[k] = j < len ? dev::toFloat(x[base + j]) + (residual ? dev::toFloat(residual[base % rPeriod + j]) : 0.f) : 0.f;
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

// The vectorized paths' limits: a warp holds up to 8 vectors a lane (rows of 2,048 elements at 2 bytes and 1,024 at
// 4); beyond, a block of up to 256 threads of 4 vectors each, or a cluster of 2 to 8 such blocks (65,536 elements at
// 2 bytes), and clusters of 8 blocks of up to 512 threads past that (131,072 at 2 bytes, 65,536 at 4).
constexpr int kWarpVecsMax = 8;
constexpr int kSliceVecs = 4;
constexpr int kSliceThreads = 256;
constexpr int kClusterMax = 8;
// A warp prefetches the next row while it computes one up to this many vectors a lane (the registers of two rows
// of x and the residual; beyond, occupancy gives the bytes in flight).
constexpr int kPrefetchVecsMax = 4;

template <typename T, int kVecs, bool kStaged>
void launchWarpRows(RowArgs const& a, cudaStream_t stream) {
  constexpr int V = vec::kWidth<T>;
  constexpr bool kPrefetch = kVecs <= kPrefetchVecsMax;
  auto kernel = a.residual ? warpRowNormKernel<T, kVecs, true, kStaged, kPrefetch>
                           : warpRowNormKernel<T, kVecs, false, kStaged, kPrefetch>;
  int64_t const rows = a.outer.count;
  // Few rows: one warp a block, spread over more SMs.
  int const threads = rows < 4 * static_cast<int64_t>(vec::multiprocessorCount()) ? 32 : kRowBlock;
  size_t const smem = a.staged ? 2 * static_cast<size_t>(a.nvec) * V * sizeof(float) : 0;
  int64_t const wanted = (rows * 32 + threads - 1) / threads;
  unsigned const blocks = vec::persistentBlocks(kernel, threads, smem, wanted);
  kernel<<<blocks, threads, smem, stream>>>(a);
}

template <typename T, int kVecs, bool kResidual, bool kPrefetch>
void launchSliceKernel(RowArgs const& a, int cluster, int threads, cudaStream_t stream) {
  auto kernel = sliceNormKernel<T, kVecs, kResidual, kPrefetch>;
  int64_t groups = a.outer.count < (1 << 20) ? a.outer.count : (1 << 20);  // blocks, or clusters, to launch
  auto const size = static_cast<unsigned>(cluster);
  if (cluster == 1) {
    if (kPrefetch) groups = vec::persistentBlocks(kernel, threads, 0, groups);
    kernel<<<static_cast<unsigned>(groups), threads, 0, stream>>>(a, size);
    return;
  }
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(groups * cluster));
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = 0;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = size;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  if (kPrefetch) {
    // As many clusters as the device holds at once (the query's failure leaves one cluster per row).
    int resident = 0;
    if (cudaOccupancyMaxActiveClusters(&resident, kernel, &cfg) == cudaSuccess && resident > 0) {
      if (resident < groups) groups = resident;
      cfg.gridDim = dim3(static_cast<unsigned>(groups * cluster));
    } else {
      (void)cudaGetLastError();  // the query's failure is not the launch's
    }
  }
  // A failed launch is left in CUDA's last error, which the tactic's launchStatus reports.
  (void)cudaLaunchKernelEx(&cfg, kernel, a, size);
}

// The slice kernel for a's residual and the variant's prefetch (none with a residual).
template <typename T, int kVecs>
void launchSlices(RowArgs const& a, int cluster, int threads, bool prefetch, cudaStream_t stream) {
  if (a.residual)
    launchSliceKernel<T, kVecs, true, false>(a, cluster, threads, stream);
  else if (prefetch)
    launchSliceKernel<T, kVecs, false, true>(a, cluster, threads, stream);
  else
    launchSliceKernel<T, kVecs, false, false>(a, cluster, threads, stream);
}

template <typename T>
NormPath launchTyped(T const* x, T const* r, int64_t rp, T* y, void const* scale, int32_t scaleType, void const* bias,
                     int32_t biasType, StridedSpace const& outer, StridedSpace const& inner, float eps,
                     cudaStream_t stream, bool forceGeneric, RowVariant variant) {
  constexpr int V = vec::kWidth<T>;
  constexpr int kBytes = static_cast<int>(sizeof(T));
  Affine s{scale, scaleType, kPerRow, 1}, b{bias, biasType, kPerRow, 1};
  int64_t const len = inner.count;
  // A residual broadcast over x's leading dims repeats every rp elements: the row kernels take it a row at a time,
  // so each row must lie within one period; otherwise (broadcast inside the normalized dims) the generic kernel.
  if (r && rp % len != 0) forceGeneric = true;
  auto bytesOf = [](int32_t t) { return t == dev::kFLOAT ? 4 : 2; };
  bool vectorized = !forceGeneric && len % V == 0 && xContiguous(inner) && affineMode(inner, 1, s) &&
                    affineMode(inner, 2, b) && vec::aligned(x, V, kBytes) && vec::aligned(y, V, kBytes) &&
                    (!r || vec::aligned(r, V, kBytes));
  // Per-element scale/bias are read V at a time: aligned like x (their row offsets are multiples of len).
  if (vectorized && s.mode == kPerElement) vectorized = vec::aligned(scale, V, bytesOf(scaleType));
  if (vectorized && b.mode == kPerElement) vectorized = vec::aligned(bias, V, bytesOf(biasType));
  if (vectorized && (s.mode == kPerChannel || b.mode == kPerChannel))
    vectorized = (s.mode != kPerChannel || s.div % V == 0) && (b.mode != kPerChannel || b.div % V == 0);
  int64_t const nvec = len / V;
  if (vectorized && nvec <= 32 * kWarpVecsMax) {
    RowArgs a{x, r, rp, y, s, b, outer, static_cast<int32_t>(nvec), eps, variant == RowVariant::kAlternative, false};
    // Scale and bias per element and the same for every row (layer norm): fp32 in shared memory, read once a block.
    bool sharedRow = true;
    for (int d = 0; d < outer.rank; ++d) sharedRow = sharedRow && outer.stride[1][d] == 0 && outer.stride[2][d] == 0;
    // Not for few rows: those blocks are one warp (launchWarpRows), whose staging loop waits on an L2 round trip
    // per element pair before its first row can finish (H200, ViT b1's 197 x 768 layer norm: ~20 us staged against
    // ~6 us reading scale and bias with the row's own vector loads).
    a.staged = sharedRow && s.mode == kPerElement && b.mode == kPerElement &&
               outer.count >= 4 * static_cast<int64_t>(vec::multiprocessorCount());
    a.held = !a.staged && sharedRow && s.mode == kPerElement && b.mode == kPerElement;
    int64_t const perLane = (nvec + 31) / 32;
    if (!a.staged) {
      // Other scale/bias forms (instance norm, group norm, per-row scale): fewer kernels, 2, 4 or 8 vectors a lane.
      if (perLane <= 2)
        launchWarpRows<T, 2, false>(a, stream);
      else if (perLane <= 4)
        launchWarpRows<T, 4, false>(a, stream);
      else
        launchWarpRows<T, 8, false>(a, stream);
      return NormPath::kWarpVec;
    }
    switch (perLane) {  // layer norm: exactly the vectors a lane holds (768 at 2 bytes: 3)
      case 1:
        launchWarpRows<T, 1, true>(a, stream);
        break;
      case 2:
        launchWarpRows<T, 2, true>(a, stream);
        break;
      case 3:
        launchWarpRows<T, 3, true>(a, stream);
        break;
      case 4:
        launchWarpRows<T, 4, true>(a, stream);
        break;
      case 5:
      case 6:
        launchWarpRows<T, 6, true>(a, stream);
        break;
      default:
        launchWarpRows<T, 8, true>(a, stream);
        break;
    }
    return NormPath::kWarpVec;
  }
  if (vectorized) {
    // The smallest cluster whose blocks of at most 256 threads hold the row at 4 vectors a thread; past 8 such
    // blocks, 8 blocks of up to 512 threads.
    for (int cluster = 1; cluster <= kClusterMax; cluster *= 2) {
      int64_t per = int64_t{cluster} * kSliceVecs;
      int64_t threads = ((nvec + per - 1) / per + 31) / 32 * 32;
      int64_t const limit = cluster == kClusterMax ? kSliceMaxThreads : kSliceThreads;
      if (threads > limit) continue;
      RowArgs a{x, r, rp, y, s, b, outer, static_cast<int32_t>(nvec), eps, false, false};
      launchSlices<T, kSliceVecs>(a, cluster, static_cast<int>(threads), variant == RowVariant::kAlternative, stream);
      return NormPath::kClusterVec;
    }
  }
  if (!forceGeneric && isScalarRowCase(outer, inner)) {
    int64_t blocks64 = (outer.count + kRowWarps - 1) / kRowWarps;
    auto blocks = static_cast<unsigned>(blocks64 < (1 << 20) ? blocks64 : (1 << 20));
    dim3 block(32 * kRowWarps);
    auto l = static_cast<int32_t>(len);
    if (len <= 32 * 4)
      rowNormKernel<T, 4><<<blocks, block, 0, stream>>>(x, r, rp, y, scale, scaleType, bias, biasType, outer, l, eps);
    else if (len <= 32 * 8)
      rowNormKernel<T, 8><<<blocks, block, 0, stream>>>(x, r, rp, y, scale, scaleType, bias, biasType, outer, l, eps);
    else if (len <= 32 * 16)
      rowNormKernel<T, 16><<<blocks, block, 0, stream>>>(x, r, rp, y, scale, scaleType, bias, biasType, outer, l, eps);
    else
      rowNormKernel<T, 32><<<blocks, block, 0, stream>>>(x, r, rp, y, scale, scaleType, bias, biasType, outer, l, eps);
    return NormPath::kWarpScalar;
  }
  int threads = len >= 256 ? 256 : static_cast<int>((len + 31) / 32 * 32);
  if (threads < 32) threads = 32;
  auto blocks = static_cast<unsigned>(outer.count < (1 << 20) ? outer.count : (1 << 20));
  normKernel<T><<<blocks, threads, 0, stream>>>(x, r, rp, y, scale, scaleType, bias, biasType, outer, inner, eps);
  return NormPath::kBlock;
}

}  // namespace

NormPath launchNormalization(int32_t dtype, void const* x, void const* residual, int64_t residualCount, void* y,
                             void const* scale, int32_t scaleType, void const* bias, int32_t biasType,
                             StridedSpace const& outer, StridedSpace const& inner, float epsilon, cudaStream_t stream,
                             bool forceGeneric, RowVariant variant) {
  NormPath path = NormPath::kNone;
  KILN_CUDA_DISPATCH_FLOAT(
      dtype, path = launchTyped<T>(static_cast<T const*>(x), static_cast<T const*>(residual),
                                   residual && residualCount > 0 ? residualCount : 1, static_cast<T*>(y), scale,
                                   scaleType, bias, biasType, outer, inner, epsilon, stream, forceGeneric, variant));
  return path;
}

}  // namespace kiln::cuda
