// NMS kernels. One block per (batch, class): candidates get a 64-bit key (score descending, then box index
// ascending: the reference's stable order; invalid or removed candidates get ~0). Each round the block takes the
// smallest key, checks that its rank among all valid candidates is under topk_box_limit, keeps it and removes
// every remaining candidate whose IoU with it is above the threshold: the same boxes as the reference's
// sequential greedy loop (a box survives exactly when its IoU with every earlier kept box is <= the threshold).
// Box math is in double with explicit roundings (no FMA contraction), as the reference's.
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/scan.cuh"
#include "backends/cuda/nms_kernels.h"

namespace kiln::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kScanThreads = 1024;
constexpr unsigned long long kNone = ~0ull;

__device__ __forceinline__ float loadF(int32_t dtype, void const* p, int64_t i) {
  switch (dtype) {
    case dev::kHALF:
      return dev::toFloat(static_cast<__half const*>(p)[i]);
    case dev::kBF16:
      return dev::toFloat(static_cast<__nv_bfloat16 const*>(p)[i]);
    default:
      return static_cast<float const*>(p)[i];
  }
}

__device__ __forceinline__ int64_t loadI(int32_t dtype, void const* p) {
  return dtype == dev::kINT64 ? *static_cast<int64_t const*>(p) : *static_cast<int32_t const*>(p);
}

struct Box {
  double x1, y1, x2, y2;
};

// std::min / std::max exactly (argument order matters with NaN).
__device__ __forceinline__ double stdMin(double a, double b) { return b < a ? b : a; }
__device__ __forceinline__ double stdMax(double a, double b) { return a < b ? b : a; }

__device__ __forceinline__ Box loadBox(NmsProblem const& p, int64_t b, int64_t i, int64_t c) {
  int64_t base = p.perClassBoxes ? ((b * p.boxes + i) * p.classes + c) * 4 : (b * p.boxes + i) * 4;
  double v0 = loadF(p.boxType, p.boxesData, base), v1 = loadF(p.boxType, p.boxesData, base + 1);
  double v2 = loadF(p.boxType, p.boxesData, base + 2), v3 = loadF(p.boxType, p.boxesData, base + 3);
  if (p.centerSizes) {
    double hw = __ddiv_rn(v2, 2.0), hh = __ddiv_rn(v3, 2.0);
    return {__dsub_rn(v0, hw), __dsub_rn(v1, hh), __dadd_rn(v0, hw), __dadd_rn(v1, hh)};
  }
  return {stdMin(v0, v2), stdMin(v1, v3), stdMax(v0, v2), stdMax(v1, v3)};
}

// The reference's iou(a, b), a the candidate and b the kept box.
__device__ __forceinline__ double iou(Box const& a, Box const& b) {
  double w = __dsub_rn(stdMin(a.x2, b.x2), stdMax(a.x1, b.x1));
  double h = __dsub_rn(stdMin(a.y2, b.y2), stdMax(a.y1, b.y1));
  if (w <= 0 || h <= 0) return 0.0;
  double inter = __dmul_rn(w, h);
  double areaA = __dmul_rn(__dsub_rn(a.x2, a.x1), __dsub_rn(a.y2, a.y1));
  double areaB = __dmul_rn(__dsub_rn(b.x2, b.x1), __dsub_rn(b.y2, b.y1));
  double uni = __dsub_rn(__dadd_rn(areaA, areaB), inter);
  return uni > 0 ? __ddiv_rn(inter, uni) : 0.0;
}

// The candidate key of box i (kNone when its score is NaN or not above the score threshold).
__device__ __forceinline__ unsigned long long candidateKey(NmsProblem const& p, int64_t b, int64_t i, int64_t c,
                                                           bool hasThr, float thr) {
  float s = loadF(p.scoreType, p.scoresData, (b * p.boxes + i) * p.classes + c);
  if (isnan(s) || (hasThr && !(s > thr))) return kNone;
  unsigned u = s == 0.f ? 0u : __float_as_uint(s);                // -0 ties with +0, as in the reference's comparison
  unsigned ordered = (u & 0x80000000u) ? ~u : (u | 0x80000000u);  // ascending with the score
  return (static_cast<unsigned long long>(~ordered) << 32) | static_cast<unsigned long long>(i);
}

__device__ __forceinline__ unsigned long long blockMin(unsigned long long v, unsigned long long* shared) {
  for (int d = 16; d > 0; d >>= 1) {
    unsigned long long o = __shfl_xor_sync(0xffffffffu, v, d);
    v = o < v ? o : v;
  }
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();  // shared may still be read from the previous call
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  unsigned long long r = shared[0];
  for (int w = 1; w < kThreads / 32; ++w) r = shared[w] < r ? shared[w] : r;
  return r;
}

// Scratch: keys [P * N] (u64), counts/offsets [P + 1] (i64), kept box indices [P * N] (i32).
struct Scratch {
  unsigned long long* keys;
  int64_t* counts;
  int32_t* kept;
};

Scratch scratchOf(NmsProblem const& p, void* base) {
  int64_t nProblems = p.batches * p.classes;
  auto* keys = static_cast<unsigned long long*>(base);
  auto* counts = reinterpret_cast<int64_t*>(keys + nProblems * p.boxes);
  auto* kept = reinterpret_cast<int32_t*>(counts + nProblems + 1);
  return {keys, counts, kept};
}

__global__ void __launch_bounds__(kThreads) nmsSelect(NmsProblem p, Scratch s) {
  __shared__ unsigned long long sharedMin[kThreads / 32];
  __shared__ int sharedCount;
  int64_t nProblems = p.batches * p.classes;
  int64_t maxOut = loadI(p.maxOutType, p.maxOut);
  double iouThr = p.iouThreshold ? static_cast<double>(loadF(p.iouType, p.iouThreshold, 0)) : 0.0;
  bool hasThr = p.scoreThreshold != nullptr;
  float scoreThr = hasThr ? loadF(p.scoreThresholdType, p.scoreThreshold, 0) : 0.f;
  int64_t n = p.boxes;
  for (int64_t prob = blockIdx.x; prob < nProblems; prob += gridDim.x) {
    int64_t b = prob / p.classes, c = prob % p.classes;
    unsigned long long* keys = s.keys + prob * n;
    int32_t* kept = s.kept + prob * n;
    for (int64_t i = threadIdx.x; i < n; i += kThreads) keys[i] = candidateKey(p, b, i, c, hasThr, scoreThr);
    __syncthreads();
    int64_t numKept = 0;
    while (numKept < maxOut) {
      unsigned long long local = kNone;
      for (int64_t i = threadIdx.x; i < n; i += kThreads) local = keys[i] < local ? keys[i] : local;
      unsigned long long best = blockMin(local, sharedMin);
      if (best == kNone) break;
      auto sel = static_cast<int64_t>(best & 0xffffffffull);
      if (p.topkLimit < n) {
        // Rank of the chosen candidate among every valid one (kept and removed ones included).
        if (threadIdx.x == 0) sharedCount = 0;
        __syncthreads();
        int below = 0;
        for (int64_t i = threadIdx.x; i < n; i += kThreads) below += candidateKey(p, b, i, c, hasThr, scoreThr) < best;
        atomicAdd(&sharedCount, below);
        __syncthreads();
        int64_t rank = sharedCount;
        __syncthreads();  // everyone has read sharedCount before it is reset
        if (rank >= p.topkLimit) break;
      }
      if (threadIdx.x == 0) {
        kept[numKept] = static_cast<int32_t>(sel);
        keys[sel] = kNone;
      }
      ++numKept;
      Box k = loadBox(p, b, sel, c);
      for (int64_t i = threadIdx.x; i < n; i += kThreads)
        if (i != sel && keys[i] != kNone && iou(loadBox(p, b, i, c), k) > iouThr) keys[i] = kNone;
      __syncthreads();
    }
    if (threadIdx.x == 0) s.counts[prob] = numKept;
    __syncthreads();
  }
}

template <typename O>
__global__ void nmsWrite(NmsProblem p, Scratch s, O* y, O* numSelected) {
  int64_t nProblems = p.batches * p.classes;
  for (int64_t prob = blockIdx.x; prob < nProblems; prob += gridDim.x) {
    int64_t first = s.counts[prob], count = s.counts[prob + 1] - first;
    int64_t b = prob / p.classes, c = prob % p.classes;
    int32_t const* kept = s.kept + prob * p.boxes;
    for (int64_t r = threadIdx.x; r < count; r += blockDim.x) {
      O* row = y + (first + r) * 3;
      row[0] = static_cast<O>(b);
      row[1] = static_cast<O>(c);
      row[2] = static_cast<O>(kept[r]);
    }
  }
  if (numSelected && blockIdx.x == 0 && threadIdx.x == 0) *numSelected = static_cast<O>(s.counts[nProblems]);
}

unsigned gridFor(int64_t problems) { return static_cast<unsigned>(problems < 65535 * 16 ? problems : 65535 * 16); }

}  // namespace

size_t nmsScratchBytes(NmsProblem const& p) {
  int64_t nProblems = p.batches * p.classes;
  return static_cast<size_t>(nProblems * p.boxes) * (sizeof(unsigned long long) + sizeof(int32_t)) +
         static_cast<size_t>(nProblems + 1) * sizeof(int64_t);
}

bool launchNmsSelect(NmsProblem const& p, void* scratch, int64_t** totalOnDevice, cudaStream_t stream) {
  auto floatOk = [](int32_t t) { return t == dev::kFLOAT || t == dev::kHALF || t == dev::kBF16; };
  if (!floatOk(p.boxType) || !floatOk(p.scoreType) || (p.maxOutType != dev::kINT32 && p.maxOutType != dev::kINT64) ||
      (p.iouThreshold && !floatOk(p.iouType)) || (p.scoreThreshold && !floatOk(p.scoreThresholdType)))
    return false;
  Scratch s = scratchOf(p, scratch);
  int64_t nProblems = p.batches * p.classes;
  nmsSelect<<<gridFor(nProblems), kThreads, 0, stream>>>(p, s);
  dev::exclusiveScanOneBlock<kScanThreads><<<1, kScanThreads, 0, stream>>>(s.counts, nProblems);
  *totalOnDevice = s.counts + nProblems;
  return true;
}

void launchNmsWrite(NmsProblem const& p, void const* scratch, void* y, void* numSelected, bool out64,
                    cudaStream_t stream) {
  Scratch s = scratchOf(p, const_cast<void*>(scratch));
  unsigned grid = gridFor(p.batches * p.classes);
  if (out64)
    nmsWrite<int64_t><<<grid, 128, 0, stream>>>(p, s, static_cast<int64_t*>(y), static_cast<int64_t*>(numSelected));
  else
    nmsWrite<int32_t><<<grid, 128, 0, stream>>>(p, s, static_cast<int32_t*>(y), static_cast<int32_t*>(numSelected));
}

}  // namespace kiln::cuda
