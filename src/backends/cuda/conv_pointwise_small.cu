// Channels-last convolutions with a short reduction, in one memory-bound pass (x read once, y written once, bias,
// residual and activation fused): pointwise for few input channels (MobileNetV2's expansions) and windows of at most
// 32 values (a network's first layer). fp16/bf16 on mma.sync, fp32 on FMA; weights staged in shared memory.
#include <cuda_runtime.h>

#include <type_traits>

#include "backends/cuda/activation.cuh"
#include "backends/cuda/conv_kernels.h"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/vector_io.cuh"

namespace kiln::cuda {
namespace {

// A warp computes tiles of 32 pixels (rows of x and y) by up to 64 output channels at a time; a block has 4 warps
// and loops over the tiles (persistent grid), so its staged weights serve every tile it takes.
constexpr int kRows = 32;
constexpr int kChunk = 64;  // output channels per accumulator pass
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kMaxSmem = 160 * 1024;  // staged weights + scratch; opted in above 48 KiB
// fp32 scratch rows: 72 floats (mma: a quad's float2 stores of 8 rows hit distinct banks), 68 (FMA: a lane's
// float4 stores of 8 rows hit distinct banks).
constexpr int kPitchMma = kChunk + 8;
constexpr int kPitchFma = kChunk + 4;

// Activation as a template argument where it is one of MobileNet's (none, ReLU, clip = ReLU6), else kRuntime:
// the per-element switch on ep.activation.
constexpr int kRuntime = -2;

// At most 128 registers a thread for the tensor-core kernel (16 warps an SM): unbounded, ptxas took up to 150 for
// the 32-channel blocks, 12 warps.
constexpr int kMmaBlocksPerSm = 4;

constexpr int kMaxWindowValues = 32;  // the window convolution's K: one 32-column block

struct SmallParams {
  int64_t m;       // pixels
  int cin, cout;   // channels in and out
  int kpad;        // mma: cin padded to 16 (cin <= 16) or to whole 32-channel blocks; FMA: cin
  int wPitch;      // mma: elements of a staged weight row [cout'][wPitch]; FMA: floats of a row [cin][wPitch]
  int coutStaged;  // output channels staged (mma: cout up to 8; FMA: up to 64), zeros past cout
  int tiles;       // ceil(m / kRows)
  // The window convolution only (cin is then c * kh * kw, its im2col row): 2-D geometry, 32-bit.
  int c, ih, iw, oh, ow, kw, sh, sw, dh, dw, ph, pw;
};

constexpr int kOutside = -(1 << 29);  // a row offset that puts an im2col column past K outside every input

// The im2col run [k0, k0 + N) of output pixel p (row-major over [n, oh, ow]) as N / 2 packed pairs: column k is
// (ky, kx, ch) of the window in the weights' channels-last order [kh][kw][c]; zeros in the padding, past K (dy =
// kOutside) and for a row past m. dy, dx, off: each column's row and column offsets in the input and its offset
// from the window's first element, computed once per lane by windowColumns.
template <typename T, int N>
__device__ __forceinline__ void loadWindow(SmallParams const& d, T const* x, int64_t p, int const (&dy)[N],
                                           int const (&dx)[N], int const (&off)[N], uint32_t (&out)[N / 2]) {
  unsigned short e[N];
  bool const rowOk = p < d.m;
  int64_t const r = rowOk ? p / d.ow : 0;
  int const ox = rowOk ? static_cast<int>(p - r * d.ow) : 0;
  int const oy = static_cast<int>(r % d.oh);
  int64_t const b = r / d.oh;
  int const iy0 = oy * d.sh - d.ph, ix0 = ox * d.sw - d.pw;
  // Offsets from the image's first element; only those of elements inside it are read.
  int64_t const base = ((b * d.ih + iy0) * d.iw + ix0) * d.c;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    int const iy = iy0 + dy[j], ix = ix0 + dx[j];
    bool const inside = rowOk && static_cast<unsigned>(iy) < static_cast<unsigned>(d.ih) &&
                        static_cast<unsigned>(ix) < static_cast<unsigned>(d.iw);
    e[j] =
        inside ? __ldg(reinterpret_cast<unsigned short const*>(x + (base + off[j]))) : static_cast<unsigned short>(0);
  }
#pragma unroll
  for (int i = 0; i < N / 2; ++i)
    out[i] = static_cast<uint32_t>(e[2 * i]) | (static_cast<uint32_t>(e[2 * i + 1]) << 16);
}

// Each column's offsets for loadWindow: columns k0 + j of K = d.cin.
template <int N>
__device__ __forceinline__ void windowColumns(SmallParams const& d, int k0, int (&dy)[N], int (&dx)[N], int (&off)[N]) {
#pragma unroll
  for (int j = 0; j < N; ++j) {
    int const k = k0 + j;
    int const tap = k / d.c, ch = k - tap * d.c;
    int const ky = tap / d.kw, kx = tap - ky * d.kw;
    bool const real = k < d.cin;
    dy[j] = real ? ky * d.dh : kOutside;
    dx[j] = kx * d.dw;
    off[j] = real ? (ky * d.dh * d.iw + kx * d.dw) * d.c + ch : 0;
  }
}

// c += a b for one m16n8k16 tile, fp32 accumulation (PTX ISA, "matrix fragments for mma.m16n8k16").
template <typename T>
__device__ __forceinline__ void mma16816(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                         uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  } else {
    static_assert(std::is_same_v<T, __nv_bfloat16>, "fp16 or bf16");
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
}

// N consecutive elements x[k0 .. k0 + N) of one pixel's row as N / 2 packed pairs, zeros past cin (and for a row
// past m: `row` null). kVec: one 16-byte (N = 8) or 8-byte (N = 4) load, the caller having checked alignment and
// that cin is a multiple of N; else element by element.
template <typename T, int N, bool kVec>
__device__ __forceinline__ void loadRun(T const* row, int k0, int cin, uint32_t (&out)[N / 2]) {
  if (row == nullptr || k0 >= cin) {
#pragma unroll
    for (int i = 0; i < N / 2; ++i) out[i] = 0u;
    return;
  }
  if constexpr (kVec) {
    if constexpr (N == 8) {
      uint4 const u = __ldg(reinterpret_cast<uint4 const*>(row + k0));
      out[0] = u.x;
      out[1] = u.y;
      out[2] = u.z;
      out[3] = u.w;
    } else {
      uint2 const u = __ldg(reinterpret_cast<uint2 const*>(row + k0));
      out[0] = u.x;
      out[1] = u.y;
    }
  } else {
    unsigned short e[N];
#pragma unroll
    for (int i = 0; i < N; ++i)
      e[i] =
          k0 + i < cin ? __ldg(reinterpret_cast<unsigned short const*>(row + k0 + i)) : static_cast<unsigned short>(0);
#pragma unroll
    for (int i = 0; i < N / 2; ++i)
      out[i] = static_cast<uint32_t>(e[2 * i]) | (static_cast<uint32_t>(e[2 * i + 1]) << 16);
  }
}

template <int kAct>
__device__ __forceinline__ float applyAct(float v, Epilogue const& ep) {
  if constexpr (kAct == kRuntime) {
    return ep.activation >= 0 ? dev::activate<float>(ep.activation, v, ep.alpha, ep.beta) : v;
  } else if constexpr (kAct >= 0) {
    return dev::activate<float>(kAct, v, ep.alpha, ep.beta);
  } else {
    return v;
  }
}

// Rows [row0, row0 + 32) x channels [n0, n0 + nc) of y from the warp's fp32 scratch (row r at sc + r * pitch):
// + bias (staged fp32), + residual, activation, then stored. kVec: whole 16-byte vectors (cout a multiple of the
// vector, y and residual aligned), consecutive lanes on consecutive vectors of a row, so a warp writes whole rows
// of y; else element by element. The residual may be y's own memory: each element is read by the lane that then
// writes it.
template <typename T, bool kVec, int kAct, int kPitch>
__device__ __forceinline__ void finishTile(float const* sc, float const* sBias, SmallParams const& d, int64_t row0,
                                           int n0, int nc, Epilogue const& ep, T* y, int lane) {
  T const* const residual = static_cast<T const*>(ep.residual);
  if constexpr (kVec) {
    constexpr int V = vec::kWidth<T>;
    int const perRow = nc / V;
    for (int i = lane; i < kRows * perRow; i += 32) {
      int const r = i / perRow, c = (i - r * perRow) * V;
      int64_t const p = row0 + r;
      if (p >= d.m) break;  // rows only grow with i
      float v[V];
#pragma unroll
      for (int j = 0; j < V; j += 4) {
        float4 const a = *reinterpret_cast<float4 const*>(sc + r * kPitch + c + j);
        float4 const b = *reinterpret_cast<float4 const*>(sBias + n0 + c + j);
        v[j] = a.x + b.x;
        v[j + 1] = a.y + b.y;
        v[j + 2] = a.z + b.z;
        v[j + 3] = a.w + b.w;
      }
      int64_t const o = p * d.cout + n0 + c;
      if (residual) {
        float rv[V];
        vec::unpack<T>(*reinterpret_cast<uint4 const*>(residual + o), rv);
#pragma unroll
        for (int j = 0; j < V; ++j) v[j] += rv[j];
      }
#pragma unroll
      for (int j = 0; j < V; ++j) v[j] = applyAct<kAct>(v[j], ep);
      *reinterpret_cast<uint4*>(y + o) = vec::pack<T>(v);
    }
  } else {
    for (int i = lane; i < kRows * nc; i += 32) {
      int const r = i / nc, c = i - r * nc;
      int64_t const p = row0 + r;
      if (p >= d.m) break;
      float v = sc[r * kPitch + c] + sBias[n0 + c];
      int64_t const o = p * d.cout + n0 + c;
      if (residual) v += dev::toFloat(residual[o]);
      y[o] = dev::fromFloat<T>(applyAct<kAct>(v, ep));
    }
  }
}

// fp16/bf16 on tensor cores. The reduction order over input channels is free as long as x's and w's fragments
// agree, so each lane's A fragment is one contiguous run of a pixel's channels: in a 32-channel block, lane
// 4 g + q holds channels [8 q, 8 q + 8) of rows g and g + 8 (one 16-byte load each), whose pairs serve as the
// fragment's k = 2q.. (first pair) and 2q + 8.. (second) of k-step 0 and likewise (third, fourth) of k-step 1;
// the B fragment of output channel g is then the same 16 bytes of w's row, [8 q, 8 q + 8). With 16 input channels
// or fewer, one k-step: channels [4 q, 4 q + 4), 8 bytes.
// kConv: the window convolution, rows gathered by loadWindow (K = d.cin <= 32: one k-step or one block).
template <typename T, bool kVec, int kAct, bool kK16, bool kConv>
__global__ void __launch_bounds__(kThreads, kMmaBlocksPerSm)
    smallPointwiseMmaKernel(SmallParams d, T const* __restrict__ x, T const* __restrict__ w, Epilogue ep, T* y) {
  extern __shared__ __align__(16) unsigned char smallSmem[];
  float* const sBias = reinterpret_cast<float*>(smallSmem);                  // [coutStaged + kChunk]
  float* const scratch = sBias + d.coutStaged + kChunk;                      // [kWarps][kRows][kPitchMma]
  T* const sW = reinterpret_cast<T*>(scratch + kWarps * kRows * kPitchMma);  // [coutStaged][wPitch]
  int const tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
  int const g = lane / 4, q = lane % 4;

  for (int e = tid; e < d.coutStaged * d.wPitch; e += kThreads) {
    int const n = e / d.wPitch, k = e - n * d.wPitch;
    sW[e] = n < d.cout && k < d.cin ? w[static_cast<int64_t>(n) * d.cin + k] : dev::fromFloat<T>(0.f);
  }
  T const* const bias = static_cast<T const*>(ep.bias);
  for (int e = tid; e < d.coutStaged + kChunk; e += kThreads)
    sBias[e] = bias && e < d.cout ? dev::toFloat(bias[e]) : 0.f;
  __syncthreads();

  float* const sc = scratch + warp * kRows * kPitchMma;
  int const kBlocks = kK16 || kConv ? 1 : d.kpad / 32;
  constexpr int kRun = kK16 ? 4 : 8;  // a lane's columns of one block
  int wy[kRun], wx[kRun], woff[kRun];
  if constexpr (kConv) windowColumns<kRun>(d, kRun * q, wy, wx, woff);
  for (int tile = static_cast<int>(blockIdx.x) * kWarps + warp; tile < d.tiles;
       tile += static_cast<int>(gridDim.x) * kWarps) {
    int64_t const row0 = static_cast<int64_t>(tile) * kRows;
    // Rows g, g + 8, g + 16, g + 24 of the tile (two m16 tiles); null past m.
    T const* rows[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      int64_t const p = row0 + g + 8 * i;
      rows[i] = !kConv && p < d.m ? x + p * d.cin : nullptr;
    }
    for (int n0 = 0; n0 < d.cout; n0 += kChunk) {
      int const nc = min(kChunk, d.cout - n0);
      int const ntiles = (nc + 7) / 8;
      float acc[2][8][4];
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int nt = 0; nt < 8; ++nt)
#pragma unroll
          for (int j = 0; j < 4; ++j) acc[mt][nt][j] = 0.f;
      for (int kb = 0; kb < kBlocks; ++kb) {
        if constexpr (kK16) {
          uint32_t a[4][2];
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            if constexpr (kConv)
              loadWindow<T, 4>(d, x, row0 + g + 8 * i, wy, wx, woff, a[i]);
            else
              loadRun<T, 4, kVec>(rows[i], 4 * q, d.cin, a[i]);
          }
#pragma unroll
          for (int nt = 0; nt < 8; ++nt) {
            if (nt < ntiles) {
              uint2 const b = *reinterpret_cast<uint2 const*>(sW + (n0 + nt * 8 + g) * d.wPitch + 4 * q);
#pragma unroll
              for (int mt = 0; mt < 2; ++mt)
                mma16816<T>(acc[mt][nt], a[2 * mt][0], a[2 * mt + 1][0], a[2 * mt][1], a[2 * mt + 1][1], b.x, b.y);
            }
          }
        } else {
          uint32_t a[4][4];
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            if constexpr (kConv)
              loadWindow<T, 8>(d, x, row0 + g + 8 * i, wy, wx, woff, a[i]);
            else
              loadRun<T, 8, kVec>(rows[i], kb * 32 + 8 * q, d.cin, a[i]);
          }
#pragma unroll
          for (int nt = 0; nt < 8; ++nt) {
            if (nt < ntiles) {
              uint4 const b = *reinterpret_cast<uint4 const*>(sW + (n0 + nt * 8 + g) * d.wPitch + kb * 32 + 8 * q);
#pragma unroll
              for (int mt = 0; mt < 2; ++mt) {
                mma16816<T>(acc[mt][nt], a[2 * mt][0], a[2 * mt + 1][0], a[2 * mt][1], a[2 * mt + 1][1], b.x, b.y);
                mma16816<T>(acc[mt][nt], a[2 * mt][2], a[2 * mt + 1][2], a[2 * mt][3], a[2 * mt + 1][3], b.z, b.w);
              }
            }
          }
        }
      }
      // Accumulators to the scratch: c0, c1 at row g, channels 2q, 2q + 1 of the n-tile; c2, c3 at row g + 8.
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int nt = 0; nt < 8; ++nt) {
          if (nt < ntiles) {
            float* const p = sc + (mt * 16 + g) * kPitchMma + nt * 8 + 2 * q;
            *reinterpret_cast<float2*>(p) = make_float2(acc[mt][nt][0], acc[mt][nt][1]);
            *reinterpret_cast<float2*>(p + 8 * kPitchMma) = make_float2(acc[mt][nt][2], acc[mt][nt][3]);
          }
        }
      __syncwarp();
      finishTile<T, kVec, kAct, kPitchMma>(sc, sBias, d, row0, n0, nc, ep, y, lane);
      __syncwarp();  // the scratch is read before the next chunk overwrites it
    }
  }
}

// fp32 on FMA (exact fp32 products; tensor cores would round to TF32): lane r of a warp takes row r of the tile,
// and all lanes read the same staged weights (broadcasts), w as fp32 [cin][wPitch], 64 output channels at a time.
template <bool kVec, int kAct>
__global__ void __launch_bounds__(kThreads)
    smallPointwiseFmaKernel(SmallParams d, float const* __restrict__ x, float const* __restrict__ w, Epilogue ep,
                            float* y) {
  extern __shared__ __align__(16) unsigned char smallSmem[];
  float* const sBias = reinterpret_cast<float*>(smallSmem);  // [coutStaged + kChunk]
  float* const scratch = sBias + d.coutStaged + kChunk;      // [kWarps][kRows][kPitchFma]
  float* const sW = scratch + kWarps * kRows * kPitchFma;    // [cin][wPitch]
  int const tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;

  for (int e = tid; e < d.cin * d.wPitch; e += kThreads) {
    int const k = e / d.wPitch, n = e - k * d.wPitch;
    sW[e] = n < d.cout ? w[static_cast<int64_t>(n) * d.cin + k] : 0.f;
  }
  float const* const bias = static_cast<float const*>(ep.bias);
  for (int e = tid; e < d.coutStaged + kChunk; e += kThreads) sBias[e] = bias && e < d.cout ? bias[e] : 0.f;
  __syncthreads();

  float* const sc = scratch + warp * kRows * kPitchFma;
  for (int tile = static_cast<int>(blockIdx.x) * kWarps + warp; tile < d.tiles;
       tile += static_cast<int>(gridDim.x) * kWarps) {
    int64_t const row0 = static_cast<int64_t>(tile) * kRows;
    int64_t const p = row0 + lane;
    float const* const row = p < d.m ? x + p * d.cin : nullptr;
    for (int n0 = 0; n0 < d.cout; n0 += kChunk) {
      float acc[kChunk];
#pragma unroll
      for (int j = 0; j < kChunk; ++j) acc[j] = 0.f;
      for (int k0 = 0; k0 < d.cin; k0 += 4) {
        float xv[4];
        if (kVec && row) {
          float4 const u = __ldg(reinterpret_cast<float4 const*>(row + k0));
          xv[0] = u.x;
          xv[1] = u.y;
          xv[2] = u.z;
          xv[3] = u.w;
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) xv[j] = row && k0 + j < d.cin ? __ldg(row + k0 + j) : 0.f;
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (k0 + j < d.cin) {
            float const* const wr = sW + (k0 + j) * d.wPitch + n0;
#pragma unroll
            for (int n = 0; n < kChunk; n += 4) {
              float4 const q = *reinterpret_cast<float4 const*>(wr + n);
              acc[n] = fmaf(xv[j], q.x, acc[n]);
              acc[n + 1] = fmaf(xv[j], q.y, acc[n + 1]);
              acc[n + 2] = fmaf(xv[j], q.z, acc[n + 2]);
              acc[n + 3] = fmaf(xv[j], q.w, acc[n + 3]);
            }
          }
        }
      }
      float* const mine = sc + lane * kPitchFma;
#pragma unroll
      for (int n = 0; n < kChunk; n += 4)
        *reinterpret_cast<float4*>(mine + n) = make_float4(acc[n], acc[n + 1], acc[n + 2], acc[n + 3]);
      __syncwarp();
      finishTile<float, kVec, kAct, kPitchFma>(sc, sBias, d, row0, n0, min(kChunk, d.cout - n0), ep, y, lane);
      __syncwarp();
    }
  }
}

// The parameters (sizes, staged layouts) and the dynamic shared memory of a call; false where it does not fit.
bool planSmall(int32_t dtype, int64_t m, int64_t cin, int64_t cout, SmallParams* d, size_t* smem) {
  if (vec::width(dtype) == 0 || m <= 0 || cin <= 0 || cout <= 0 || cin > 4096 || cout > 4096) return false;
  if ((m + kRows - 1) / kRows >= (int64_t{1} << 31)) return false;
  d->m = m;
  d->cin = static_cast<int>(cin);
  d->cout = static_cast<int>(cout);
  d->tiles = static_cast<int>((m + kRows - 1) / kRows);
  int64_t bytes = 0;
  if (dtype == dev::kFLOAT) {
    d->kpad = d->cin;
    d->coutStaged = (d->cout + kChunk - 1) / kChunk * kChunk;
    d->wPitch = d->coutStaged;
    bytes = (static_cast<int64_t>(d->coutStaged) + kChunk + kWarps * kRows * kPitchFma) * 4 +
            static_cast<int64_t>(d->cin) * d->wPitch * 4;
  } else {
    // A staged weight row's 16-byte loads by 8 lanes (rows g, g + 1; q = 0..3) hit distinct banks when rows
    // are 64 bytes apart modulo 128: the pitch is an odd number of 32-element blocks.
    d->kpad = d->cin <= 16 ? 16 : (d->cin + 31) / 32 * 32;
    d->wPitch = d->kpad <= 16 ? 16 : (d->kpad / 32) % 2 == 1 ? d->kpad : d->kpad + 32;
    d->coutStaged = (d->cout + 7) / 8 * 8;
    bytes = (static_cast<int64_t>(d->coutStaged) + kChunk + kWarps * kRows * kPitchMma) * 4 +
            static_cast<int64_t>(d->coutStaged) * d->wPitch * 2;
  }
  if (bytes > kMaxSmem) return false;
  *smem = static_cast<size_t>(bytes);
  return true;
}

template <typename T, bool kVec, int kAct, bool kConv>
void launchTyped(SmallParams const& d, size_t smem, T const* x, T const* w, Epilogue const& ep, T* y,
                 cudaStream_t stream) {
  if constexpr (std::is_same_v<T, float>) {
    static_assert(!kConv, "the window convolution runs on tensor cores only");
    auto kernel = smallPointwiseFmaKernel<kVec, kAct>;
    if (smem > 48 * 1024)
      (void)cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    unsigned const blocks = vec::persistentBlocks(kernel, kThreads, smem, (d.tiles + kWarps - 1) / kWarps);
    kernel<<<blocks, kThreads, smem, stream>>>(d, x, w, ep, y);
  } else {
    auto kernel = d.kpad <= 16 ? smallPointwiseMmaKernel<T, kVec, kAct, true, kConv>
                               : smallPointwiseMmaKernel<T, kVec, kAct, false, kConv>;
    if (smem > 48 * 1024)
      (void)cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    unsigned const blocks = vec::persistentBlocks(kernel, kThreads, smem, (d.tiles + kWarps - 1) / kWarps);
    kernel<<<blocks, kThreads, smem, stream>>>(d, x, w, ep, y);
  }
}

template <typename T, bool kVec, bool kConv>
void launchAct(SmallParams const& d, size_t smem, T const* x, T const* w, Epilogue const& ep, T* y,
               cudaStream_t stream) {
  switch (ep.activation) {
    case -1:
      launchTyped<T, kVec, -1, kConv>(d, smem, x, w, ep, y, stream);
      return;
    case 0:  // ReLU
      launchTyped<T, kVec, 0, kConv>(d, smem, x, w, ep, y, stream);
      return;
    case 8:  // clip (ReLU6)
      launchTyped<T, kVec, 8, kConv>(d, smem, x, w, ep, y, stream);
      return;
  }
  launchTyped<T, kVec, kRuntime, kConv>(d, smem, x, w, ep, y, stream);
}

// The window convolution's geometry into d (after planSmall with m pixels, K = c * kh * kw): false where a value
// does not fit its 32-bit index math.
bool setWindow(ConvGeom const& g, SmallParams* d) {
  int64_t const vals[] = {g.c,         g.in[1],     g.in[2],  g.out[1], g.out[2],      g.kernel[1],  g.kernel[2],
                          g.stride[1], g.stride[2], g.dil[1], g.dil[2], g.padBegin[1], g.padBegin[2]};
  for (int64_t v : vals)
    if (v < 0 || v >= (int64_t{1} << 20)) return false;
  // Row offsets (ky * dh * iw + kx * dw) * c and window origins (out - 1) * stride within 32 bits, and kOutside
  // below any real one.
  if ((g.kernel[1] * g.dil[1] + 1) * g.in[2] * g.c >= (int64_t{1} << 28)) return false;
  if (g.out[1] * g.stride[1] >= (int64_t{1} << 28) || g.out[2] * g.stride[2] >= (int64_t{1} << 28)) return false;
  d->c = static_cast<int>(g.c);
  d->ih = static_cast<int>(g.in[1]);
  d->iw = static_cast<int>(g.in[2]);
  d->oh = static_cast<int>(g.out[1]);
  d->ow = static_cast<int>(g.out[2]);
  d->kw = static_cast<int>(g.kernel[2]);
  d->sh = static_cast<int>(g.stride[1]);
  d->sw = static_cast<int>(g.stride[2]);
  d->dh = static_cast<int>(g.dil[1]);
  d->dw = static_cast<int>(g.dil[2]);
  d->ph = static_cast<int>(g.padBegin[1]);
  d->pw = static_cast<int>(g.padBegin[2]);
  return true;
}

// Whether g is a window convolution the kernel takes: fp16/bf16, 2-D (depth 1), one group, K = c * kh * kw at most
// 32, positive sizes.
bool windowCallOk(int32_t dtype, ConvGeom const& g) {
  return (dtype == dev::kHALF || dtype == dev::kBF16) && g.in[0] == 1 && g.out[0] == 1 && g.kernel[0] == 1 &&
         g.groups == 1 && g.c > 0 && g.k > 0 && g.kernel[1] > 0 && g.kernel[2] > 0 && g.stride[1] > 0 &&
         g.stride[2] > 0 && g.dil[1] > 0 && g.dil[2] > 0 && g.c * g.kernel[1] * g.kernel[2] <= kMaxWindowValues;
}

}  // namespace

bool smallPointwiseFits(int32_t dtype, int64_t cin, int64_t cout) {
  SmallParams d{};
  size_t smem = 0;
  return planSmall(dtype, 1, cin, cout, &d, &smem);
}

bool launchSmallPointwise(int32_t dtype, int64_t m, int64_t cin, int64_t cout, void const* x, void const* w,
                          Epilogue const& ep, void* y, cudaStream_t stream) {
  SmallParams d{};
  size_t smem = 0;
  if (!planSmall(dtype, m, cin, cout, &d, &smem)) return false;
  int const v = vec::width(dtype);
  // Vector loads: 16 bytes of x per lane (8 for fp16/bf16 at 16 channels or fewer, whose lanes take 4), so cin a
  // multiple of that run and x aligned to it; vector stores: cout in whole 16-byte vectors, y and residual aligned.
  int const run = dtype == dev::kFLOAT ? 4 : d.kpad <= 16 ? 4 : 8;
  int const elem = dtype == dev::kFLOAT ? 4 : 2;
  bool const vecOk = cin % run == 0 && reinterpret_cast<uintptr_t>(x) % static_cast<uintptr_t>(run * elem) == 0 &&
                     cout % v == 0 && vec::aligned16(y) && vec::aligned16(ep.residual);
  bool const known = KILN_CUDA_DISPATCH_FLOAT(dtype, {
    if (vecOk)
      launchAct<T, true, false>(d, smem, static_cast<T const*>(x), static_cast<T const*>(w), ep, static_cast<T*>(y),
                                stream);
    else
      launchAct<T, false, false>(d, smem, static_cast<T const*>(x), static_cast<T const*>(w), ep, static_cast<T*>(y),
                                 stream);
  });
  return known;
}

bool smallWindowConvFits(int32_t dtype, ConvGeom const& g) {
  SmallParams d{};
  size_t smem = 0;
  return windowCallOk(dtype, g) && planSmall(dtype, 1, g.c * g.kernel[1] * g.kernel[2], g.k, &d, &smem) &&
         setWindow(g, &d);
}

bool launchSmallWindowConv(int32_t dtype, ConvGeom const& g, void const* x, void const* w, Epilogue const& ep, void* y,
                           cudaStream_t stream) {
  if (!windowCallOk(dtype, g)) return false;
  int64_t const m = g.n * g.out[1] * g.out[2];
  SmallParams d{};
  size_t smem = 0;
  if (m <= 0 || !planSmall(dtype, m, g.c * g.kernel[1] * g.kernel[2], g.k, &d, &smem) || !setWindow(g, &d))
    return false;
  bool const vecOk = g.k % 8 == 0 && vec::aligned16(y) && vec::aligned16(ep.residual);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    if (vecOk)
      launchAct<T, true, true>(d, smem, static_cast<T const*>(x), static_cast<T const*>(w), ep, static_cast<T*>(y),
                               stream);
    else
      launchAct<T, false, true>(d, smem, static_cast<T const*>(x), static_cast<T const*>(w), ep, static_cast<T*>(y),
                                stream);
  };
  if (dtype == dev::kHALF)
    run(__half{});
  else
    run(__nv_bfloat16{});
  return true;
}

}  // namespace kiln::cuda
