// CUDA kernels of the NMS built-ins (EfficientNMS_TRT, BatchedNMS(Dynamic)_TRT). Scores become sort keys
// (descending score, invalid candidates last) sorted per segment with CUB's stable radix sort, so ties keep
// ascending candidate ids exactly as on the host; the greedy suppression then runs one block per image (or per
// image and class), testing each candidate against the kept boxes in parallel. IoU is computed without fused
// multiply-adds so that suppression decisions match the host path bit for bit.
#include <cub/device/device_segmented_radix_sort.cuh>

#include "plugins/builtin/cuda/common.cuh"
#include "plugins/builtin/cuda/launch.h"

namespace kiln::plugin::cuda {
namespace {

constexpr uint32_t kInvalidKey = 0xFFFFFFFFU;
constexpr int kNmsThreads = 256;

// Ascending order of the key is descending order of the score.
__device__ __forceinline__ uint32_t descendingKey(float s) {
  uint32_t u = __float_as_uint(s);
  u = (u & 0x80000000U) ? ~u : (u | 0x80000000U);
  uint32_t k = ~u;
  return k == kInvalidKey ? kInvalidKey - 1 : k;
}

__device__ __forceinline__ float keyScore(uint32_t k) {
  uint32_t u = ~k;
  u = (u & 0x80000000U) ? (u & 0x7FFFFFFFU) : ~u;
  return __uint_as_float(u);
}

struct Box {
  float x1, y1, x2, y2;
};

__device__ float iou(Box const& a, Box const& b, float offset) {
  float ax1 = fminf(a.x1, a.x2), ax2 = fmaxf(a.x1, a.x2), ay1 = fminf(a.y1, a.y2), ay2 = fmaxf(a.y1, a.y2);
  float bx1 = fminf(b.x1, b.x2), bx2 = fmaxf(b.x1, b.x2), by1 = fminf(b.y1, b.y2), by2 = fmaxf(b.y1, b.y2);
  float iw = __fadd_rn(__fsub_rn(fminf(ax2, bx2), fmaxf(ax1, bx1)), offset);
  float ih = __fadd_rn(__fsub_rn(fminf(ay2, by2), fmaxf(ay1, by1)), offset);
  float inter = (iw > 0.f && ih > 0.f) ? __fmul_rn(iw, ih) : 0.f;
  float areaA = __fmul_rn(__fadd_rn(__fsub_rn(ax2, ax1), offset), __fadd_rn(__fsub_rn(ay2, ay1), offset));
  float areaB = __fmul_rn(__fadd_rn(__fsub_rn(bx2, bx1), offset), __fadd_rn(__fsub_rn(by2, by1), offset));
  float uni = __fsub_rn(__fadd_rn(areaA, areaB), inter);
  return uni > 0.f ? __fdiv_rn(inter, uni) : 0.f;
}

__global__ void segmentOffsetsKernel(int32_t* offsets, int64_t segments, int64_t length) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i <= segments;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    offsets[i] = static_cast<int32_t>(i * length);
  }
}

size_t align256(size_t v) { return (v + 255) & ~size_t{255}; }

// Byte layout of a workspace: consecutive 256-byte aligned regions.
struct Carver {
  char* base;
  size_t used = 0;
  template <typename T>
  T* take(size_t count) {
    T* p = reinterpret_cast<T*>(base ? base + used : nullptr);
    used += align256(count * sizeof(T));
    return p;
  }
};

size_t sortTempBytes(int64_t items, int64_t segments, std::string* error) {
  size_t bytes = 0;
  cudaError_t e = cub::DeviceSegmentedRadixSort::SortPairs(
      nullptr, bytes, static_cast<uint32_t const*>(nullptr), static_cast<uint32_t*>(nullptr),
      static_cast<int32_t const*>(nullptr), static_cast<int32_t*>(nullptr), static_cast<int>(items),
      static_cast<int>(segments), static_cast<int32_t const*>(nullptr), static_cast<int32_t const*>(nullptr));
  if (e != cudaSuccess && error) *error = std::string("CUB sort sizing: ") + cudaGetErrorString(e);
  return bytes;
}

std::string sortSegments(void* temp, size_t tempBytes, uint32_t const* keysIn, uint32_t* keysOut, int32_t const* valsIn,
                         int32_t* valsOut, int64_t items, int64_t segments, int32_t* offsets, cudaStream_t stream) {
  segmentOffsetsKernel<<<blocksFor(segments + 1), kThreads, 0, stream>>>(offsets, segments, items / segments);
  cudaError_t e = cub::DeviceSegmentedRadixSort::SortPairs(temp, tempBytes, keysIn, keysOut, valsIn, valsOut,
                                                           static_cast<int>(items), static_cast<int>(segments), offsets,
                                                           offsets + 1, 0, 32, stream);
  if (e != cudaSuccess) return std::string("CUB segmented sort: ") + cudaGetErrorString(e);
  return launchStatus("NMS sort");
}

//
// EfficientNMS
//

template <typename T>
__global__ void efficientKeysKernel(EfficientNmsArgs a, uint32_t* keys, int32_t* vals) {
  int64_t per = a.nb * a.nc, total = a.n * per;
  T const* scores = static_cast<T const*>(a.scores);
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t c = t % a.nc;
    float s = loadF(scores, t);
    if (a.sigmoid) s = 1.f / (1.f + expf(-s));
    bool valid = c != a.background && s >= a.scoreThreshold;
    keys[t] = valid ? descendingKey(s) : kInvalidKey;
    vals[t] = static_cast<int32_t>(t % per);
  }
}

template <typename T>
__device__ Box efficientBox(EfficientNmsArgs const& a, int64_t b, int64_t id) {
  int64_t i = id / a.nc, c = id % a.nc;
  T const* boxes = static_cast<T const*>(a.boxes);
  int64_t base = a.perClassBoxes ? ((b * a.nb + i) * a.nc + c) * 4 : (b * a.nb + i) * 4;
  float v[4];
  for (int k = 0; k < 4; ++k) v[k] = loadF(boxes, base + k);
  if (a.anchors) {
    T const* an = static_cast<T const*>(a.anchors);
    int64_t ab = ((a.anchorBatch == 1 ? 0 : b) * a.nb + i) * 4;
    float x = loadF(an, ab), y = loadF(an, ab + 1), w = loadF(an, ab + 2), h = loadF(an, ab + 3);
    if (a.centerSize) {
      v[0] = __fadd_rn(__fmul_rn(v[0], w), x);
      v[1] = __fadd_rn(__fmul_rn(v[1], h), y);
      v[2] = __fmul_rn(expf(v[2]), w);
      v[3] = __fmul_rn(expf(v[3]), h);
    } else {
      v[0] = __fadd_rn(v[0], x);
      v[1] = __fadd_rn(v[1], y);
      v[2] = __fadd_rn(v[2], w);
      v[3] = __fadd_rn(v[3], h);
    }
  }
  if (a.centerSize) {
    return {__fsub_rn(v[0], __fmul_rn(v[2], 0.5f)), __fsub_rn(v[1], __fmul_rn(v[3], 0.5f)),
            __fadd_rn(v[0], __fmul_rn(v[2], 0.5f)), __fadd_rn(v[1], __fmul_rn(v[3], 0.5f))};
  }
  return {v[0], v[1], v[2], v[3]};
}

template <typename T>
__global__ void efficientNmsKernel(EfficientNmsArgs a, uint32_t const* keys, int32_t const* vals, Box* keptBoxes,
                                   int32_t* keptClasses) {
  int64_t b = blockIdx.x;
  int64_t per = a.nb * a.nc;
  uint32_t const* k = keys + b * per;
  int32_t const* v = vals + b * per;
  Box* kb = keptBoxes + b * a.maxOut;
  int32_t* kc = keptClasses + b * a.maxOut;
  __shared__ int32_t kept;
  __shared__ Box cand;
  if (threadIdx.x == 0) kept = 0;
  __syncthreads();
  T* outBoxes = static_cast<T*>(a.outBoxes);
  T* outScores = static_cast<T*>(a.outScores);
  for (int64_t j = 0; j < per && kept < a.maxOut; ++j) {
    if (k[j] == kInvalidKey) break;
    int32_t cls = static_cast<int32_t>(v[j] % a.nc);
    if (threadIdx.x == 0) cand = efficientBox<T>(a, b, v[j]);
    __syncthreads();
    int suppressed = 0;
    for (int32_t q = threadIdx.x; q < kept; q += blockDim.x) {
      if ((a.classAgnostic || kc[q] == cls) && iou(kb[q], cand, 0.f) >= a.iouThreshold) suppressed = 1;
    }
    suppressed = __syncthreads_or(suppressed);
    if (!suppressed && threadIdx.x == 0) {
      int64_t o = b * a.maxOut + kept;
      kb[kept] = cand;
      kc[kept] = cls;
      storeF(outBoxes, o * 4 + 0, cand.x1);
      storeF(outBoxes, o * 4 + 1, cand.y1);
      storeF(outBoxes, o * 4 + 2, cand.x2);
      storeF(outBoxes, o * 4 + 3, cand.y2);
      storeF(outScores, o, keyScore(k[j]));
      a.outClasses[o] = cls;
      ++kept;
    }
    __syncthreads();
  }
  for (int64_t q = kept + threadIdx.x; q < a.maxOut; q += blockDim.x) {
    int64_t o = b * a.maxOut + q;
    for (int c = 0; c < 4; ++c) storeF(outBoxes, o * 4 + c, 0.f);
    storeF(outScores, o, 0.f);
    a.outClasses[o] = 0;
  }
  if (threadIdx.x == 0) a.outCounts[b] = kept;
}

//
// BatchedNMS
//

template <typename T>
__global__ void batchedKeysKernel(BatchedNmsArgs a, uint32_t* keys, int32_t* vals) {
  int64_t total = a.n * a.nc * a.nb;  // layout [b][c][i]
  T const* scores = static_cast<T const*>(a.scores);
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t i = t % a.nb, c = (t / a.nb) % a.nc, b = t / (a.nb * a.nc);
    float s = loadF(scores, (b * a.nb + i) * a.nc + c);
    bool valid = c != a.background && (a.strictThreshold ? s > a.scoreThreshold : s >= a.scoreThreshold);
    keys[t] = valid ? descendingKey(s) : kInvalidKey;
    vals[t] = static_cast<int32_t>(i);
  }
}

template <typename T>
__device__ Box batchedBox(BatchedNmsArgs const& a, int64_t b, int64_t c, int64_t i) {
  T const* boxes = static_cast<T const*>(a.boxes);
  int64_t lc = a.shareLocation ? 1 : a.nc;
  int64_t base = ((b * a.nb + i) * lc + (a.shareLocation ? 0 : c)) * 4;
  return {loadF(boxes, base), loadF(boxes, base + 1), loadF(boxes, base + 2), loadF(boxes, base + 3)};
}

// One block per (image, class): greedy NMS over the class's topK best; kept entries become merge keys.
template <typename T>
__global__ void batchedClassNmsKernel(BatchedNmsArgs a, uint32_t const* keys, int32_t const* vals, Box* keptBoxes,
                                      uint32_t* mergeKeys, int32_t* mergeVals) {
  int64_t seg = blockIdx.x, b = seg / a.nc, c = seg % a.nc;
  uint32_t const* k = keys + seg * a.nb;
  int32_t const* v = vals + seg * a.nb;
  Box* kb = keptBoxes + seg * a.topK;
  uint32_t* mk = mergeKeys + seg * a.topK;
  int32_t* mv = mergeVals + seg * a.topK;
  __shared__ int32_t kept;
  __shared__ Box cand;
  if (threadIdx.x == 0) kept = 0;
  __syncthreads();
  int64_t limit = a.nb < a.topK ? a.nb : a.topK;
  for (int64_t j = 0; j < limit; ++j) {
    if (k[j] == kInvalidKey) break;
    if (threadIdx.x == 0) cand = batchedBox<T>(a, b, c, v[j]);
    __syncthreads();
    int suppressed = 0;
    for (int32_t q = threadIdx.x; q < kept; q += blockDim.x) {
      if (iou(kb[q], cand, a.offset) > a.iouThreshold) suppressed = 1;
    }
    suppressed = __syncthreads_or(suppressed);
    if (!suppressed && threadIdx.x == 0) {
      kb[kept] = cand;
      mk[kept] = k[j];
      mv[kept] = static_cast<int32_t>(c * a.topK + kept);
      ++kept;
    }
    __syncthreads();
  }
  for (int64_t q = kept + threadIdx.x; q < a.topK; q += blockDim.x) {
    mk[q] = kInvalidKey;
    mv[q] = static_cast<int32_t>(c * a.topK + q);
  }
}

template <typename T>
__global__ void batchedGatherKernel(BatchedNmsArgs a, uint32_t const* keys, int32_t const* vals, Box const* keptBoxes) {
  int64_t b = blockIdx.x, per = a.nc * a.topK;
  T* ob = static_cast<T*>(a.outBoxes);
  T* os = static_cast<T*>(a.outScores);
  T* oc = static_cast<T*>(a.outClasses);
  __shared__ int32_t count;
  if (threadIdx.x == 0) count = 0;
  __syncthreads();
  for (int64_t q = threadIdx.x; q < a.keepTopK; q += blockDim.x) {
    int64_t o = b * a.keepTopK + q;
    uint32_t key = q < per ? keys[b * per + q] : kInvalidKey;
    if (key == kInvalidKey) {
      for (int c = 0; c < 4; ++c) storeF(ob, o * 4 + c, 0.f);
      storeF(os, o, 0.f);
      storeF(oc, o, -1.f);
      continue;
    }
    int32_t slot = vals[b * per + q];
    int64_t cls = slot / a.topK;
    Box bx = keptBoxes[b * per + slot];
    float v[4] = {bx.x1, bx.y1, bx.x2, bx.y2};
    for (int c = 0; c < 4; ++c) storeF(ob, o * 4 + c, a.clip ? fminf(fmaxf(v[c], 0.f), 1.f) : v[c]);
    storeF(os, o, keyScore(key));
    storeF(oc, o, static_cast<float>(cls));
    atomicAdd(&count, 1);
  }
  __syncthreads();
  if (threadIdx.x == 0) a.outCounts[b] = count;
}

struct EfficientLayout {
  uint32_t *keys, *keysSorted;
  int32_t *vals, *valsSorted, *offsets;
  Box* keptBoxes;
  int32_t* keptClasses;
  void* temp;
  size_t tempBytes;
  size_t total;
};

EfficientLayout efficientLayout(void* ws, int64_t n, int64_t nb, int64_t nc, int32_t maxOut, size_t tempBytes) {
  Carver c{static_cast<char*>(ws)};
  size_t items = static_cast<size_t>(n * nb * nc);
  EfficientLayout l{};
  l.keys = c.take<uint32_t>(items);
  l.keysSorted = c.take<uint32_t>(items);
  l.vals = c.take<int32_t>(items);
  l.valsSorted = c.take<int32_t>(items);
  l.offsets = c.take<int32_t>(static_cast<size_t>(n + 1));
  l.keptBoxes = c.take<Box>(static_cast<size_t>(n * maxOut));
  l.keptClasses = c.take<int32_t>(static_cast<size_t>(n * maxOut));
  l.tempBytes = tempBytes;
  l.temp = c.take<char>(tempBytes);
  l.total = c.used;
  return l;
}

struct BatchedLayout {
  uint32_t *keys, *keysSorted, *mergeKeys, *mergeKeysSorted;
  int32_t *vals, *valsSorted, *mergeVals, *mergeValsSorted, *offsets, *mergeOffsets;
  Box* keptBoxes;
  void *temp, *mergeTemp;
  size_t tempBytes, mergeTempBytes;
  size_t total;
};

BatchedLayout batchedLayout(void* ws, int64_t n, int64_t nb, int64_t nc, int32_t topK, size_t tempBytes,
                            size_t mergeTempBytes) {
  Carver c{static_cast<char*>(ws)};
  size_t items = static_cast<size_t>(n * nc * nb), merged = static_cast<size_t>(n * nc * topK);
  BatchedLayout l{};
  l.keys = c.take<uint32_t>(items);
  l.keysSorted = c.take<uint32_t>(items);
  l.vals = c.take<int32_t>(items);
  l.valsSorted = c.take<int32_t>(items);
  l.offsets = c.take<int32_t>(static_cast<size_t>(n * nc + 1));
  l.keptBoxes = c.take<Box>(merged);
  l.mergeKeys = c.take<uint32_t>(merged);
  l.mergeKeysSorted = c.take<uint32_t>(merged);
  l.mergeVals = c.take<int32_t>(merged);
  l.mergeValsSorted = c.take<int32_t>(merged);
  l.mergeOffsets = c.take<int32_t>(static_cast<size_t>(n + 1));
  l.tempBytes = tempBytes;
  l.temp = c.take<char>(tempBytes);
  l.mergeTempBytes = mergeTempBytes;
  l.mergeTemp = c.take<char>(mergeTempBytes);
  l.total = c.used;
  return l;
}

constexpr int64_t kMaxItems = 0x7FFFFFFF;

}  // namespace

size_t efficientNmsWorkspace(int64_t n, int64_t nb, int64_t nc, int32_t maxOut, std::string* error) {
  if (n <= 0 || nb <= 0 || nc <= 0) return 0;
  size_t temp = sortTempBytes(n * nb * nc, n, error);
  return efficientLayout(nullptr, n, nb, nc, maxOut, temp).total;
}

std::string launchEfficientNms(EfficientNmsArgs const& a, void* workspace, size_t workspaceBytes, cudaStream_t stream) {
  if (a.n <= 0) return "";
  if (a.n * a.nb * a.nc > kMaxItems) return "EfficientNMS: more than 2^31 candidates per batch";
  std::string err;
  size_t temp = a.nb > 0 && a.nc > 0 ? sortTempBytes(a.n * a.nb * a.nc, a.n, &err) : 0;
  if (!err.empty()) return err;
  EfficientLayout l = efficientLayout(workspace, a.n, a.nb, a.nc, a.maxOut, temp);
  if (!workspace || workspaceBytes < l.total) {
    return "EfficientNMS: the workspace holds " + std::to_string(workspaceBytes) + " bytes, " +
           std::to_string(l.total) + " needed";
  }
  int64_t items = a.n * a.nb * a.nc;
  if (items > 0) {
    if (a.half) {
      efficientKeysKernel<__half><<<blocksFor(items), kThreads, 0, stream>>>(a, l.keys, l.vals);
    } else {
      efficientKeysKernel<float><<<blocksFor(items), kThreads, 0, stream>>>(a, l.keys, l.vals);
    }
    err = sortSegments(l.temp, l.tempBytes, l.keys, l.keysSorted, l.vals, l.valsSorted, items, a.n, l.offsets, stream);
    if (!err.empty()) return err;
  } else {
    // No candidates: every image gets zero detections (the NMS kernel sees an empty segment).
    l.keysSorted = nullptr;
  }
  EfficientNmsArgs b = a;
  if (items == 0) b.nb = 0;
  if (a.half) {
    efficientNmsKernel<__half><<<static_cast<unsigned>(a.n), kNmsThreads, 0, stream>>>(b, l.keysSorted, l.valsSorted,
                                                                                        l.keptBoxes, l.keptClasses);
  } else {
    efficientNmsKernel<float><<<static_cast<unsigned>(a.n), kNmsThreads, 0, stream>>>(b, l.keysSorted, l.valsSorted,
                                                                                       l.keptBoxes, l.keptClasses);
  }
  return launchStatus("EfficientNMS kernel");
}

size_t batchedNmsWorkspace(int64_t n, int64_t nb, int64_t nc, int32_t topK, std::string* error) {
  if (n <= 0 || nb <= 0 || nc <= 0) return 0;
  size_t temp = sortTempBytes(n * nc * nb, n * nc, error);
  size_t mergeTemp = sortTempBytes(n * nc * topK, n, error);
  return batchedLayout(nullptr, n, nb, nc, topK, temp, mergeTemp).total;
}

std::string launchBatchedNms(BatchedNmsArgs const& a, void* workspace, size_t workspaceBytes, cudaStream_t stream) {
  if (a.n <= 0) return "";
  if (a.n * a.nc * (a.nb > a.topK ? a.nb : a.topK) > kMaxItems) return "BatchedNMS: more than 2^31 candidates";
  if (a.nb <= 0) {
    return "BatchedNMS: the CUDA path needs at least one box";
  }
  std::string err;
  size_t temp = sortTempBytes(a.n * a.nc * a.nb, a.n * a.nc, &err);
  size_t mergeTemp = sortTempBytes(a.n * a.nc * a.topK, a.n, &err);
  if (!err.empty()) return err;
  BatchedLayout l = batchedLayout(workspace, a.n, a.nb, a.nc, a.topK, temp, mergeTemp);
  if (!workspace || workspaceBytes < l.total) {
    return "BatchedNMS: the workspace holds " + std::to_string(workspaceBytes) + " bytes, " + std::to_string(l.total) +
           " needed";
  }
  int64_t items = a.n * a.nc * a.nb, merged = a.n * a.nc * a.topK;
  if (a.half) {
    batchedKeysKernel<__half><<<blocksFor(items), kThreads, 0, stream>>>(a, l.keys, l.vals);
  } else {
    batchedKeysKernel<float><<<blocksFor(items), kThreads, 0, stream>>>(a, l.keys, l.vals);
  }
  err = sortSegments(l.temp, l.tempBytes, l.keys, l.keysSorted, l.vals, l.valsSorted, items, a.n * a.nc, l.offsets,
                     stream);
  if (!err.empty()) return err;
  if (a.half) {
    batchedClassNmsKernel<__half><<<static_cast<unsigned>(a.n * a.nc), kNmsThreads, 0, stream>>>(
        a, l.keysSorted, l.valsSorted, l.keptBoxes, l.mergeKeys, l.mergeVals);
  } else {
    batchedClassNmsKernel<float><<<static_cast<unsigned>(a.n * a.nc), kNmsThreads, 0, stream>>>(
        a, l.keysSorted, l.valsSorted, l.keptBoxes, l.mergeKeys, l.mergeVals);
  }
  err = launchStatus("BatchedNMS class kernel");
  if (!err.empty()) return err;
  err = sortSegments(l.mergeTemp, l.mergeTempBytes, l.mergeKeys, l.mergeKeysSorted, l.mergeVals, l.mergeValsSorted,
                     merged, a.n, l.mergeOffsets, stream);
  if (!err.empty()) return err;
  if (a.half) {
    batchedGatherKernel<__half><<<static_cast<unsigned>(a.n), kNmsThreads, 0, stream>>>(a, l.mergeKeysSorted,
                                                                                        l.mergeValsSorted, l.keptBoxes);
  } else {
    batchedGatherKernel<float><<<static_cast<unsigned>(a.n), kNmsThreads, 0, stream>>>(a, l.mergeKeysSorted,
                                                                                       l.mergeValsSorted, l.keptBoxes);
  }
  return launchStatus("BatchedNMS gather kernel");
}

//
// DetectionOutput: decode into float boxes/scores, BatchedNMS on them, then the [n, 1, K, 7] rows.
//

namespace {

__global__ void decodeKernel(DetectionOutputArgs a, int64_t lc, float* boxes, float* scores) {
  int64_t np = a.priorCount;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < a.n * np * lc;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t b = t / (np * lc), i = (t / lc) % np;
    float const* l = a.loc + t * 4;
    float const* pb = a.priors + (a.priorBatch == 1 ? 0 : b) * 2 * np * 4;
    float const* pr = pb + i * 4;
    float const* var = pb + np * 4 + i * 4;
    float v[4] = {1.f, 1.f, 1.f, 1.f};
    if (!a.varianceEncoded) {
      for (int k = 0; k < 4; ++k) v[k] = var[k];
    }
    float pw = __fsub_rn(pr[2], pr[0]), ph = __fsub_rn(pr[3], pr[1]);
    float pcx = __fdiv_rn(__fadd_rn(pr[0], pr[2]), 2.f), pcy = __fdiv_rn(__fadd_rn(pr[1], pr[3]), 2.f);
    float* o = boxes + t * 4;
    if (a.codeType == 0) {
      for (int k = 0; k < 4; ++k) o[k] = __fadd_rn(pr[k], __fmul_rn(v[k], l[k]));
    } else if (a.codeType == 2) {
      o[0] = __fadd_rn(pr[0], __fmul_rn(__fmul_rn(v[0], l[0]), pw));
      o[1] = __fadd_rn(pr[1], __fmul_rn(__fmul_rn(v[1], l[1]), ph));
      o[2] = __fadd_rn(pr[2], __fmul_rn(__fmul_rn(v[2], l[2]), pw));
      o[3] = __fadd_rn(pr[3], __fmul_rn(__fmul_rn(v[3], l[3]), ph));
    } else {
      float cx, cy, w, h;
      if (a.codeType == 1) {
        cx = __fadd_rn(__fmul_rn(__fmul_rn(v[0], l[0]), pw), pcx);
        cy = __fadd_rn(__fmul_rn(__fmul_rn(v[1], l[1]), ph), pcy);
        w = __fmul_rn(expf(__fmul_rn(v[2], l[2])), pw);
        h = __fmul_rn(expf(__fmul_rn(v[3], l[3])), ph);
      } else {
        cy = __fadd_rn(__fmul_rn(__fmul_rn(v[0], l[0]), ph), pcy);
        cx = __fadd_rn(__fmul_rn(__fmul_rn(v[1], l[1]), pw), pcx);
        h = __fmul_rn(expf(__fmul_rn(v[2], l[2])), ph);
        w = __fmul_rn(expf(__fmul_rn(v[3], l[3])), pw);
      }
      o[0] = __fsub_rn(cx, __fdiv_rn(w, 2.f));
      o[1] = __fsub_rn(cy, __fdiv_rn(h, 2.f));
      o[2] = __fadd_rn(cx, __fdiv_rn(w, 2.f));
      o[3] = __fadd_rn(cy, __fdiv_rn(h, 2.f));
    }
  }
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < a.n * np * a.nc;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float s = a.conf[t];
    scores[t] = a.sigmoid ? 1.f / (1.f + expf(-s)) : s;
  }
}

__global__ void detectionRowsKernel(int64_t n, int32_t k, float const* boxes, float const* scores,
                                    float const* classes, float* det) {
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < n * k;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float* d = det + t * 7;
    d[0] = static_cast<float>(t / k);
    d[1] = classes[t];
    d[2] = scores[t];
    for (int q = 0; q < 4; ++q) d[3 + q] = boxes[t * 4 + q];
  }
}

struct DetectionLayout {
  float *boxes, *scores, *outBoxes, *outScores, *outClasses;
  void* nms;
  size_t nmsBytes, total;
};

DetectionLayout detectionLayout(void* ws, int64_t n, int64_t np, int64_t nc, int64_t lc, int32_t k, size_t nmsBytes) {
  Carver c{static_cast<char*>(ws)};
  DetectionLayout l{};
  l.boxes = c.take<float>(static_cast<size_t>(n * np * lc * 4));
  l.scores = c.take<float>(static_cast<size_t>(n * np * nc));
  l.outBoxes = c.take<float>(static_cast<size_t>(n * k * 4));
  l.outScores = c.take<float>(static_cast<size_t>(n * k));
  l.outClasses = c.take<float>(static_cast<size_t>(n * k));
  l.nmsBytes = nmsBytes;
  l.nms = c.take<char>(nmsBytes);
  l.total = c.used;
  return l;
}

}  // namespace

size_t detectionOutputWorkspace(int64_t n, int64_t priors, int64_t nc, int64_t locClasses, int32_t topK,
                                int32_t keepTopK, std::string* error) {
  if (n <= 0 || priors <= 0) return 0;
  size_t nms = batchedNmsWorkspace(n, priors, nc, topK, error);
  return detectionLayout(nullptr, n, priors, nc, locClasses, keepTopK, nms).total;
}

std::string launchDetectionOutput(DetectionOutputArgs const& a, void* workspace, size_t workspaceBytes,
                                  cudaStream_t stream) {
  if (a.n <= 0) return "";
  if (a.priorCount <= 0) return "NMS: the CUDA path needs at least one prior";
  int64_t lc = a.shareLocation ? 1 : a.nc;
  std::string err;
  size_t nmsBytes = batchedNmsWorkspace(a.n, a.priorCount, a.nc, a.topK, &err);
  if (!err.empty()) return err;
  DetectionLayout l = detectionLayout(workspace, a.n, a.priorCount, a.nc, lc, a.keepTopK, nmsBytes);
  if (!workspace || workspaceBytes < l.total) {
    return "NMS: the workspace holds " + std::to_string(workspaceBytes) + " bytes, " + std::to_string(l.total) +
           " needed";
  }
  int64_t items = a.n * a.priorCount * (lc > a.nc ? lc : a.nc);
  decodeKernel<<<blocksFor(items), kThreads, 0, stream>>>(a, lc, l.boxes, l.scores);
  err = launchStatus("NMS decode kernel");
  if (!err.empty()) return err;
  BatchedNmsArgs b;
  b.boxes = l.boxes;
  b.scores = l.scores;
  b.shareLocation = a.shareLocation;
  b.n = a.n;
  b.nb = a.priorCount;
  b.nc = a.nc;
  b.topK = a.topK;
  b.keepTopK = a.keepTopK;
  b.background = a.background;
  b.scoreThreshold = a.threshold;
  b.iouThreshold = a.iouThreshold;
  b.offset = a.offset;
  b.clip = true;
  b.strictThreshold = true;
  b.outCounts = a.keepCount;
  b.outBoxes = l.outBoxes;
  b.outScores = l.outScores;
  b.outClasses = l.outClasses;
  err = launchBatchedNms(b, l.nms, l.nmsBytes, stream);
  if (!err.empty()) return err;
  detectionRowsKernel<<<blocksFor(a.n * a.keepTopK), kThreads, 0, stream>>>(a.n, a.keepTopK, l.outBoxes, l.outScores,
                                                                             l.outClasses, a.detections);
  return launchStatus("NMS output kernel");
}

}  // namespace kiln::plugin::cuda
