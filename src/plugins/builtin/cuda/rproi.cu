// CUDA kernels of RPROI_TRT (see rproi.cc for the semantics): one thread per anchor decodes its proposal and
// makes its sort key, CUB's stable segmented radix sort orders each image's proposals (descending score, ties by
// anchor index, as the host path), one block per image runs the greedy NMS, one thread per pooled value does the
// ROI max pooling. Arithmetic uses explicit round-to-nearest operations (no fused multiply-adds) in the host
// path's order and exp in double rounded to float, so that boxes, and hence every decision, match the host path
// bit for bit.
#include <cub/device/device_segmented_radix_sort.cuh>

#include <cfloat>
#include <initializer_list>

#include "plugins/builtin/cuda/common.cuh"
#include "plugins/builtin/cuda/launch.h"

namespace kiln::plugin::cuda {
namespace {

constexpr int kRproiNmsThreads = 256;

// Ascending keys give descending scores (the host path's orderKey).
__device__ __forceinline__ uint32_t rproiOrderKey(float s) {
  uint32_t u = __float_as_uint(s);
  u = (u & 0x80000000U) ? ~u : (u | 0x80000000U);
  return ~u;
}

// IoU with "+1" widths and heights, operands in the host path's order.
__device__ float rproiIou(float4 const& a, float4 const& b) {
  float iw = fmaxf(__fadd_rn(__fsub_rn(fminf(a.z, b.z), fmaxf(a.x, b.x)), 1.f), 0.f);
  float ih = fmaxf(__fadd_rn(__fsub_rn(fminf(a.w, b.w), fmaxf(a.y, b.y)), 1.f), 0.f);
  float inter = __fmul_rn(iw, ih);
  float areaA = __fmul_rn(__fadd_rn(__fsub_rn(a.z, a.x), 1.f), __fadd_rn(__fsub_rn(a.w, a.y), 1.f));
  float areaB = __fmul_rn(__fadd_rn(__fsub_rn(b.z, b.x), 1.f), __fadd_rn(__fsub_rn(b.w, b.y), 1.f));
  return __fdiv_rn(inter, __fsub_rn(__fadd_rn(areaA, areaB), inter));
}

// round(v * scale) on the feature map, kept within +-2^30 (the host path's scaledCoord).
__device__ __forceinline__ int64_t rproiScaledCoord(float v, float scale) {
  float r = roundf(__fmul_rn(v, scale));
  return static_cast<int64_t>(fminf(fmaxf(r, -1073741824.f), 1073741824.f));
}

// One thread per (image, anchor, cell): the clipped proposal, its sort key (-inf score when below the minimum
// size) and its index within the image.
__global__ void rproiProposalKernel(RproiArgs a, float4* boxes, uint32_t* keys, int32_t* vals) {
  int64_t hw = a.h * a.w, per = a.a * hw, total = a.n * per;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t b = t / per, r = t % per, k = r / hw, pos = r % hw, y = pos / a.w, x = pos % a.w;
    float const* an = a.anchors + k * 4;
    float const* dl = a.deltas + (b * 4 * a.a + 4 * k) * hw + pos;
    float imH = a.imInfo[b * 3], imW = a.imInfo[b * 3 + 1];
    float minSize = __fmul_rn(a.minBoxSize, a.imInfo[b * 3 + 2]);
    float cx = __fadd_rn(an[0], static_cast<float>(x * a.featureStride));
    float cy = __fadd_rn(an[1], static_cast<float>(y * a.featureStride));
    cx = __fadd_rn(cx, __fmul_rn(dl[0], an[2]));
    cy = __fadd_rn(cy, __fmul_rn(dl[hw], an[3]));
    float bw = __fmul_rn(static_cast<float>(exp(static_cast<double>(dl[2 * hw]))), an[2]);
    float bh = __fmul_rn(static_cast<float>(exp(static_cast<double>(dl[3 * hw]))), an[3]);
    float halfW = __fdiv_rn(bw, 2.f), halfH = __fdiv_rn(bh, 2.f);
    float maxX = __fsub_rn(imW, 1.f), maxY = __fsub_rn(imH, 1.f);
    float4 q;
    q.x = fminf(fmaxf(__fsub_rn(cx, halfW), 0.f), maxX);
    q.y = fminf(fmaxf(__fsub_rn(cy, halfH), 0.f), maxY);
    q.z = fminf(fmaxf(__fadd_rn(cx, halfW), 0.f), maxX);
    q.w = fminf(fmaxf(__fadd_rn(cy, halfH), 0.f), maxY);
    bool small = __fadd_rn(__fsub_rn(q.z, q.x), 1.f) < minSize || __fadd_rn(__fsub_rn(q.w, q.y), 1.f) < minSize;
    float score = small ? -__int_as_float(0x7F800000) : a.scores[(b * 2 * a.a + a.a + k) * hw + pos];
    boxes[t] = q;
    keys[t] = rproiOrderKey(score);
    vals[t] = static_cast<int32_t>(r);
  }
}

__global__ void rproiOffsetsKernel(int32_t* offsets, int64_t segments, int64_t length) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i <= segments;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    offsets[i] = static_cast<int32_t>(i * length);
  }
}

// One block per image: greedy NMS over the best min(preNmsTop, per) proposals in sorted order. Thread 0 appends
// the kept ones to the image's rois; every thread tests a share of the kept ones against each candidate.
// Rows past the kept ones become zeros.
__global__ void rproiNmsKernel(RproiArgs a, float4 const* boxes, int32_t const* order) {
  int64_t b = blockIdx.x, per = a.a * a.h * a.w;
  int64_t limit = per < a.preNmsTop ? per : a.preNmsTop;
  float* rois = a.rois + b * a.nmsMaxOut * 4;
  __shared__ int32_t kept;
  __shared__ float4 cand;
  if (threadIdx.x == 0) kept = 0;
  __syncthreads();
  for (int64_t j = 0; j < limit && kept < a.nmsMaxOut; ++j) {
    if (threadIdx.x == 0) cand = boxes[b * per + order[b * per + j]];
    __syncthreads();
    int suppressed = 0;
    for (int32_t q = threadIdx.x; q < kept; q += blockDim.x) {
      float4 k = make_float4(rois[q * 4], rois[q * 4 + 1], rois[q * 4 + 2], rois[q * 4 + 3]);
      if (rproiIou(k, cand) > a.iouThreshold) suppressed = 1;
    }
    suppressed = __syncthreads_or(suppressed);
    if (!suppressed && threadIdx.x == 0) {
      rois[kept * 4] = cand.x;
      rois[kept * 4 + 1] = cand.y;
      rois[kept * 4 + 2] = cand.z;
      rois[kept * 4 + 3] = cand.w;
      ++kept;
    }
    __syncthreads();
  }
  for (int64_t q = kept + threadIdx.x; q < a.nmsMaxOut; q += blockDim.x) {
    for (int k = 0; k < 4; ++k) rois[q * 4 + k] = 0.f;
  }
}

// One thread per pooled value: the maximum of its bin (see rproi.cc).
__global__ void rproiPoolKernel(RproiArgs a) {
  int64_t ph = a.poolingH, pw = a.poolingW, total = a.n * a.nmsMaxOut * a.c * ph * pw;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t j = t % pw, i = (t / pw) % ph, ch = (t / (pw * ph)) % a.c, roi = t / (pw * ph * a.c);
    int64_t b = roi / a.nmsMaxOut;
    float const* r = a.rois + roi * 4;
    int64_t x0 = rproiScaledCoord(r[0], a.spatialScale), y0 = rproiScaledCoord(r[1], a.spatialScale);
    int64_t rw = rproiScaledCoord(r[2], a.spatialScale) - x0 + 1, rh = rproiScaledCoord(r[3], a.spatialScale) - y0 + 1;
    rw = rw < 1 ? 1 : rw;
    rh = rh < 1 ? 1 : rh;
    float binH = __fdiv_rn(static_cast<float>(rh), static_cast<float>(ph));
    float binW = __fdiv_rn(static_cast<float>(rw), static_cast<float>(pw));
    int64_t hs = static_cast<int64_t>(floorf(__fmul_rn(static_cast<float>(i), binH))) + y0;
    int64_t he = static_cast<int64_t>(ceilf(__fmul_rn(static_cast<float>(i + 1), binH))) + y0;
    int64_t ws = static_cast<int64_t>(floorf(__fmul_rn(static_cast<float>(j), binW))) + x0;
    int64_t we = static_cast<int64_t>(ceilf(__fmul_rn(static_cast<float>(j + 1), binW))) + x0;
    hs = hs < 0 ? 0 : (hs > a.h ? a.h : hs);
    he = he < 0 ? 0 : (he > a.h ? a.h : he);
    ws = ws < 0 ? 0 : (ws > a.w ? a.w : ws);
    we = we < 0 ? 0 : (we > a.w ? a.w : we);
    bool empty = he <= hs || we <= ws;
    float m = empty ? 0.f : -FLT_MAX;
    float const* plane = a.featureMap + (b * a.c + ch) * a.h * a.w;
    for (int64_t yy = hs; yy < he; ++yy) {
      for (int64_t xx = ws; xx < we; ++xx) {
        float v = plane[yy * a.w + xx];
        if (v > m) m = v;
      }
    }
    a.pooled[t] = m;
  }
}

size_t rproiAlign(size_t v) { return (v + 255) & ~size_t{255}; }

// The workspace: consecutive 256-byte aligned regions (pointers null when `base` is).
struct RproiLayout {
  float4* boxes = nullptr;
  uint32_t *keys = nullptr, *keysSorted = nullptr;
  int32_t *vals = nullptr, *valsSorted = nullptr, *offsets = nullptr;
  void* temp = nullptr;
  size_t tempBytes = 0, total = 0;
};

RproiLayout rproiLayout(void* ws, int64_t n, int64_t items, size_t tempBytes) {
  char* base = static_cast<char*>(ws);
  RproiLayout l;
  auto take = [&](size_t bytes) {
    void* p = base ? base + l.total : nullptr;
    l.total += rproiAlign(bytes);
    return p;
  };
  size_t count = static_cast<size_t>(items);
  l.boxes = static_cast<float4*>(take(count * sizeof(float4)));
  l.keys = static_cast<uint32_t*>(take(count * sizeof(uint32_t)));
  l.keysSorted = static_cast<uint32_t*>(take(count * sizeof(uint32_t)));
  l.vals = static_cast<int32_t*>(take(count * sizeof(int32_t)));
  l.valsSorted = static_cast<int32_t*>(take(count * sizeof(int32_t)));
  l.offsets = static_cast<int32_t*>(take(static_cast<size_t>(n + 1) * sizeof(int32_t)));
  l.tempBytes = tempBytes;
  l.temp = take(tempBytes);
  return l;
}

size_t rproiSortBytes(int64_t items, int64_t segments, std::string* error) {
  size_t bytes = 0;
  cudaError_t e = cub::DeviceSegmentedRadixSort::SortPairs(
      nullptr, bytes, static_cast<uint32_t const*>(nullptr), static_cast<uint32_t*>(nullptr),
      static_cast<int32_t const*>(nullptr), static_cast<int32_t*>(nullptr), static_cast<int>(items),
      static_cast<int>(segments), static_cast<int32_t const*>(nullptr), static_cast<int32_t const*>(nullptr));
  if (e != cudaSuccess && error) *error = std::string("RPROI: CUB sort sizing: ") + cudaGetErrorString(e);
  return bytes;
}

constexpr int64_t kRproiMaxItems = 0x7FFFFFFF;

// n * a * h * w, or -1 when that is above kRproiMaxItems (or a factor is negative).
int64_t rproiItems(int64_t n, int64_t a, int64_t h, int64_t w) {
  int64_t items = 1;
  for (int64_t v : {n, a, h, w}) {
    if (v < 0 || (v > 0 && items > kRproiMaxItems / v)) return -1;
    items *= v;
  }
  return items;
}

}  // namespace

size_t rproiWorkspace(int64_t n, int64_t a, int64_t h, int64_t w, std::string* error) {
  int64_t items = rproiItems(n, a, h, w);
  if (items <= 0) return 0;
  return rproiLayout(nullptr, n, items, rproiSortBytes(items, n, error)).total;
}

std::string launchRproi(RproiArgs const& a, void* workspace, size_t workspaceBytes, cudaStream_t stream) {
  if (a.n <= 0) return "";
  int64_t items = rproiItems(a.n, a.a, a.h, a.w);
  if (items < 0) return "RPROI: more than 2^31 - 1 anchors in the batch";
  int64_t per = items / a.n;
  RproiLayout l;
  if (items > 0) {
    std::string err;
    size_t temp = rproiSortBytes(items, a.n, &err);
    if (!err.empty()) return err;
    l = rproiLayout(workspace, a.n, items, temp);
    if (!workspace || workspaceBytes < l.total) {
      return "RPROI: the workspace holds " + std::to_string(workspaceBytes) + " bytes, " + std::to_string(l.total) +
             " needed";
    }
    rproiProposalKernel<<<blocksFor(items), kThreads, 0, stream>>>(a, l.boxes, l.keys, l.vals);
    err = launchStatus("RPROI proposal kernel");
    if (!err.empty()) return err;
    rproiOffsetsKernel<<<blocksFor(a.n + 1), kThreads, 0, stream>>>(l.offsets, a.n, per);
    cudaError_t e = cub::DeviceSegmentedRadixSort::SortPairs(
        l.temp, l.tempBytes, l.keys, l.keysSorted, l.vals, l.valsSorted, static_cast<int>(items), static_cast<int>(a.n),
        l.offsets, l.offsets + 1, 0, 32, stream);
    if (e != cudaSuccess) return std::string("RPROI: CUB segmented sort: ") + cudaGetErrorString(e);
    err = launchStatus("RPROI sort");
    if (!err.empty()) return err;
  }
  // With no anchors (an empty grid) the NMS kernel only writes the zero rows.
  rproiNmsKernel<<<static_cast<unsigned>(a.n), kRproiNmsThreads, 0, stream>>>(a, l.boxes, l.valsSorted);
  std::string err = launchStatus("RPROI NMS kernel");
  if (!err.empty()) return err;
  int64_t pooledCount = a.n * a.nmsMaxOut * a.c * a.poolingH * a.poolingW;
  if (pooledCount <= 0) return "";
  rproiPoolKernel<<<blocksFor(pooledCount), kThreads, 0, stream>>>(a);
  return launchStatus("RPROI pooling kernel");
}

}  // namespace kiln::plugin::cuda
