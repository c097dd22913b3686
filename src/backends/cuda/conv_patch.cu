// The patch rearrangement of a convolution whose stride equals its kernel (no padding, dilation 1, one group):
// x becomes the row-major matrix p [n * out pixels, c * kernel volume] that one GEMM with the weights turns into
// y. Pure byte moves in the widest word (16 bytes down to 1) that every run, stride and pointer allows.
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "backends/cuda/conv_kernels.h"

namespace kiln::cuda {
namespace {

// Every extent and stride in words. A row of p is `runs` runs of `runWords` words; run r is the mixed-radix
// number (r0, r1, r2) over runExt and starts at sum(ri * runStride[i]) words past its row's base; row m is the
// mixed-radix number (n, o0, o1, o2) over rowExt, whose base is sum(mi * rowStride[i]).
template <typename Index>
struct PatchParams {
  Index words;     // words of p
  Index rowWords;  // words per row of p
  Index runWords;  // words per run
  Index runExt[3], runStride[3];
  Index rowExt[4], rowStride[4];
};

// The word of x that word w of p copies (the kernel's index math; the host runs it too, for tests).
template <typename Index>
__host__ __device__ __forceinline__ Index sourceWord(PatchParams<Index> const& q, Index w) {
  Index row = w / q.rowWords;
  Index col = w - row * q.rowWords;
  Index run = col / q.runWords;
  Index off = col - run * q.runWords;
  Index d = run % q.runExt[2];
  run /= q.runExt[2];
  off += d * q.runStride[2];
  d = run % q.runExt[1];
  off += d * q.runStride[1] + (run / q.runExt[1]) * q.runStride[0];
  d = row % q.rowExt[3];
  row /= q.rowExt[3];
  off += d * q.rowStride[3];
  d = row % q.rowExt[2];
  row /= q.rowExt[2];
  off += d * q.rowStride[2];
  d = row % q.rowExt[1];
  return off + d * q.rowStride[1] + (row / q.rowExt[1]) * q.rowStride[0];
}

template <typename Word, typename Index>
__global__ void __launch_bounds__(256)
    patchKernel(PatchParams<Index> q, Word const* __restrict__ x, Word* __restrict__ p) {
  Index const step = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index w = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; w < q.words; w += step)
    p[w] = __ldg(x + sourceWord(q, w));
}

template <typename Word, typename Index>
void launchTyped(PatchParams<Index> const& q, void const* x, void* p, cudaStream_t stream) {
  constexpr int kThreads = 256;
  // A grid-stride loop: enough blocks for every SM many times over, capped so that the index never wraps.
  int64_t blocks = (static_cast<int64_t>(q.words) + kThreads - 1) / kThreads;
  if (blocks > 65535LL * 16) blocks = 65535LL * 16;
  patchKernel<Word, Index>
      <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(q, static_cast<Word const*>(x), static_cast<Word*>(p));
}

// The geometry in elements: extents and strides of runs and rows as described at PatchParams.
struct ElementPlan {
  int64_t rows = 0, runs = 0, runLen = 0;
  int64_t runExt[3] = {1, 1, 1}, runStride[3] = {0, 0, 0};
  int64_t rowExt[4] = {1, 1, 1, 1}, rowStride[4] = {0, 0, 0, 0};
};

ElementPlan planOf(ConvGeom const& g, bool channelsLast) {
  ElementPlan e;
  int64_t const in0 = g.in[0], in1 = g.in[1], in2 = g.in[2];
  e.rows = g.n * g.out[0] * g.out[1] * g.out[2];
  e.rowExt[0] = g.n;
  e.rowExt[1] = g.out[0];
  e.rowExt[2] = g.out[1];
  e.rowExt[3] = g.out[2];
  if (channelsLast) {
    // x [n, in0, in1, in2, c]: one kernel row (kernel[2] pixels of every channel) is contiguous; the columns of
    // p run (k0, k1, k2, c), as the builder's channels-last weights [k, k0, k1, k2, c] do.
    int64_t const c = g.c;
    e.runLen = g.kernel[2] * c;
    e.runs = g.kernel[0] * g.kernel[1];
    e.runExt[1] = g.kernel[0];
    e.runExt[2] = g.kernel[1];
    e.runStride[1] = in1 * in2 * c;
    e.runStride[2] = in2 * c;
    e.rowStride[0] = in0 * in1 * in2 * c;
    e.rowStride[1] = g.kernel[0] * in1 * in2 * c;
    e.rowStride[2] = g.kernel[1] * in2 * c;
    e.rowStride[3] = g.kernel[2] * c;
  } else {
    // x [n, c, in0, in1, in2]: kernel[2] elements of one input row are contiguous; the columns of p run
    // (c, k0, k1, k2), as the weights [k, c, k0, k1, k2] do.
    e.runLen = g.kernel[2];
    e.runs = g.c * g.kernel[0] * g.kernel[1];
    e.runExt[0] = g.c;
    e.runExt[1] = g.kernel[0];
    e.runExt[2] = g.kernel[1];
    e.runStride[0] = in0 * in1 * in2;
    e.runStride[1] = in1 * in2;
    e.runStride[2] = in2;
    e.rowStride[0] = g.c * in0 * in1 * in2;
    e.rowStride[1] = g.kernel[0] * in1 * in2;
    e.rowStride[2] = g.kernel[1] * in2;
    e.rowStride[3] = g.kernel[2];
  }
  return e;
}

template <typename Index>
PatchParams<Index> paramsOf(ElementPlan const& e, int64_t wordElems) {
  PatchParams<Index> q{};
  q.runWords = static_cast<Index>(e.runLen / wordElems);
  q.rowWords = static_cast<Index>(e.runs * e.runLen / wordElems);
  q.words = static_cast<Index>(e.rows * e.runs * e.runLen / wordElems);
  for (int i = 0; i < 3; ++i) {
    q.runExt[i] = static_cast<Index>(e.runExt[i]);
    q.runStride[i] = static_cast<Index>(e.runStride[i] / wordElems);
  }
  for (int i = 0; i < 4; ++i) {
    q.rowExt[i] = static_cast<Index>(e.rowExt[i]);
    q.rowStride[i] = static_cast<Index>(e.rowStride[i] / wordElems);
  }
  return q;
}

// 32-bit index math where every word index of x and p (and the grid stride added past the last) fits.
bool narrowIndex(ElementPlan const& e, int64_t wordElems, int64_t xElems) {
  int64_t const limit = std::numeric_limits<int32_t>::max();
  return xElems / wordElems < limit && e.rows * e.runs * e.runLen / wordElems < limit;
}

template <typename Word>
void launchWord(ElementPlan const& e, int64_t wordElems, int64_t xElems, void const* x, void* p, cudaStream_t s) {
  if (narrowIndex(e, wordElems, xElems))
    launchTyped<Word, uint32_t>(paramsOf<uint32_t>(e, wordElems), x, p, s);
  else
    launchTyped<Word, uint64_t>(paramsOf<uint64_t>(e, wordElems), x, p, s);
}

}  // namespace

int patchWordBytes(int64_t elementSize, ConvGeom const& g, bool channelsLast, void const* x, void const* p) {
  ElementPlan e = planOf(g, channelsLast);
  // Every byte step a word takes must be a multiple of it: the run length, each stride, both pointers.
  uint64_t bits = static_cast<uint64_t>(e.runLen * elementSize) | reinterpret_cast<uintptr_t>(x) |
                  reinterpret_cast<uintptr_t>(p) | 16u;
  for (int64_t s : e.runStride) bits |= static_cast<uint64_t>(s * elementSize);
  for (int64_t s : e.rowStride) bits |= static_cast<uint64_t>(s * elementSize);
  return static_cast<int>(bits & (~bits + 1));
}

namespace {

// launchPatchify's checks; the word it moves (0: it refuses).
int patchWordIfValid(int64_t elementSize, ConvGeom const& g, bool channelsLast, void const* x, void const* p) {
  if (elementSize != 1 && elementSize != 2 && elementSize != 4 && elementSize != 8) return 0;
  if (g.groups != 1 || g.n <= 0 || g.c <= 0) return 0;
  for (int i = 0; i < 3; ++i)
    if (g.kernel[i] < 1 || g.stride[i] != g.kernel[i] || g.dil[i] != 1 || g.padBegin[i] != 0 || g.out[i] < 1 ||
        g.out[i] * g.kernel[i] > g.in[i])
      return 0;
  int const word = patchWordBytes(elementSize, g, channelsLast, x, p);
  return word < elementSize ? 0 : word;  // less: a pointer not aligned to its own elements
}

}  // namespace

std::vector<int64_t> patchSourceWordsForTesting(int64_t elementSize, ConvGeom const& g, bool channelsLast,
                                                void const* x, void const* p, bool wideIndex) {
  int const word = patchWordIfValid(elementSize, g, channelsLast, x, p);
  if (word == 0) return {};
  ElementPlan e = planOf(g, channelsLast);
  int64_t const wordElems = word / elementSize;
  std::vector<int64_t> src(static_cast<size_t>(e.rows * e.runs * e.runLen / wordElems));
  if (wideIndex) {
    PatchParams<uint64_t> q = paramsOf<uint64_t>(e, wordElems);
    for (uint64_t w = 0; w < q.words; ++w) src[w] = static_cast<int64_t>(sourceWord(q, w));
  } else {
    PatchParams<uint32_t> q = paramsOf<uint32_t>(e, wordElems);
    for (uint32_t w = 0; w < q.words; ++w) src[w] = static_cast<int64_t>(sourceWord(q, w));
  }
  return src;
}

bool launchPatchify(int64_t elementSize, ConvGeom const& g, bool channelsLast, void const* x, void* p,
                    cudaStream_t stream) {
  int const word = patchWordIfValid(elementSize, g, channelsLast, x, p);
  if (word == 0) return false;
  ElementPlan e = planOf(g, channelsLast);
  int64_t const xElems = g.n * g.c * g.in[0] * g.in[1] * g.in[2];
  int64_t const wordElems = word / elementSize;
  switch (word) {
    case 16:
      launchWord<uint4>(e, wordElems, xElems, x, p, stream);
      break;
    case 8:
      launchWord<uint2>(e, wordElems, xElems, x, p, stream);
      break;
    case 4:
      launchWord<unsigned int>(e, wordElems, xElems, x, p, stream);
      break;
    case 2:
      launchWord<unsigned short>(e, wordElems, xElems, x, p, stream);
      break;
    case 1:
      launchWord<unsigned char>(e, wordElems, xElems, x, p, stream);
      break;
  }
  return true;
}

}  // namespace kiln::cuda
