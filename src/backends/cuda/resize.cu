// Device side of Resize (resize_kernels.h). Coordinates use __dmul_rn/__dadd_rn where the reference's host
// arithmetic could otherwise be contracted into an fma by nvcc, so rounding matches the host's fp64 exactly.
#include <cstdint>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/resize_kernels.h"

namespace kiln::cuda {
namespace {

constexpr int32_t kLinear = 1, kCubic = 2;  // kNEAREST (0) has its own kernel
constexpr int32_t kAlignCorners = 0, kAsymmetric = 1, kHalfPixel = 2;
constexpr int32_t kSelectorUpper = 1;
constexpr int32_t kHalfUp = 0, kHalfDown = 1, kFloor = 2, kCeil = 3;

__device__ double sourceCoordinate(ResizePlan const& p, int32_t a, int64_t o) {
  int64_t in = p.inDims[a], out = p.outDims[a];
  if (out == 1 && p.selector == kSelectorUpper) return 0.0;
  double od = static_cast<double>(o);
  switch (p.transform) {
    case kAlignCorners: {
      double resized = p.scaleGiven ? __dmul_rn(static_cast<double>(in), p.scales[a]) : static_cast<double>(out);
      return out == 1 || !(resized > 1.0) ? 0.0 : __dmul_rn(od, static_cast<double>(in - 1)) / __dadd_rn(resized, -1.0);
    }
    case kAsymmetric:
      return od / p.scales[a];
    case kHalfPixel:
      return __dadd_rn(__dadd_rn(od, 0.5) / p.scales[a], -0.5);
    default:
      return od;
  }
}

__device__ __forceinline__ int64_t clampIndex(int64_t i, int64_t n) { return i < 0 ? 0 : (i > n - 1 ? n - 1 : i); }

__device__ int64_t roundNearest(int32_t mode, double x) {
  switch (mode) {
    case kHalfUp:
      return static_cast<int64_t>(floor(__dadd_rn(x, 0.5)));
    case kHalfDown:
      return static_cast<int64_t>(ceil(__dadd_rn(x, -0.5)));
    case kFloor:
      return static_cast<int64_t>(floor(x));
    case kCeil:
    default:
      return static_cast<int64_t>(ceil(x));
  }
}

template <typename E>
__global__ void resizeNearestKernel(E const* __restrict__ x, E* __restrict__ y, ResizePlan p, int64_t total) {
  for (int64_t lin = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; lin < total;
       lin += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rem = lin, off = 0, stride = 1;
    for (int32_t a = p.rank - 1; a >= 0; --a) {
      int64_t o = rem % p.outDims[a];
      rem /= p.outDims[a];
      int64_t i = clampIndex(roundNearest(p.rounding, sourceCoordinate(p, a, o)), p.inDims[a]);
      off += i * stride;
      stride *= p.inDims[a];
    }
    y[lin] = x[off];
  }
}

// The taps of output index o along axis a: up to 4 (index, weight) pairs, as the reference's axisTaps.
__device__ int32_t axisTaps(ResizePlan const& p, int32_t a, int64_t o, int64_t* idx, double* w) {
  int64_t in = p.inDims[a];
  if (p.mode == kCubic && !p.cubicAxis[a]) {
    idx[0] = o;
    w[0] = 1.0;
    return 1;
  }
  double xc = sourceCoordinate(p, a, o);
  if (p.mode == kLinear) {
    double hi = static_cast<double>(in - 1);
    xc = xc < 0.0 ? 0.0 : xc;
    xc = hi < xc ? hi : xc;
    int64_t i0 = static_cast<int64_t>(floor(xc));
    double t = __dadd_rn(xc, -static_cast<double>(i0));
    idx[0] = i0;
    w[0] = 1.0 - t;
    if (t > 0.0) {
      idx[1] = clampIndex(i0 + 1, in);
      w[1] = t;
      return 2;
    }
    return 1;
  }
  double A = p.cubicA;
  double f = floor(xc);
  double t = xc - f;
  int64_t i0 = static_cast<int64_t>(f);
  double t1 = t + 1, u = 1 - t, u1 = 2 - t;
  double c[4] = {((A * t1 - 5 * A) * t1 + 8 * A) * t1 - 4 * A, ((A + 2) * t - (A + 3)) * t * t + 1,
                 ((A + 2) * u - (A + 3)) * u * u + 1, ((A * u1 - 5 * A) * u1 + 8 * A) * u1 - 4 * A};
  int32_t n = 0;
  double sum = 0.0;
  for (int32_t j = 0; j < 4; ++j) {
    int64_t k = i0 - 1 + j;
    bool outside = k < 0 || k >= in;
    if (outside && p.excludeOutside) continue;
    idx[n] = clampIndex(k, in);
    w[n] = c[j];
    sum += c[j];
    ++n;
  }
  if (p.excludeOutside && sum != 0.0)
    for (int32_t j = 0; j < n; ++j) w[j] /= sum;
  return n;
}

template <typename T>
__global__ void resizeInterpolateKernel(T const* __restrict__ x, T* __restrict__ y, ResizePlan p, int64_t total) {
  for (int64_t lin = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; lin < total;
       lin += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t idx[8][4];
    double w[8][4];
    int32_t cnt[8];
    int64_t rem = lin;
    for (int32_t a = p.rank - 1; a >= 0; --a) {
      int64_t o = rem % p.outDims[a];
      rem /= p.outDims[a];
      cnt[a] = axisTaps(p, a, o, idx[a], w[a]);
    }
    // Tensor product of the per-axis taps (an odometer over tap positions, innermost axis fastest).
    int32_t pos[8] = {};
    double acc = 0.0;
    while (true) {
      int64_t off = 0;
      double wt = 1.0;
      for (int32_t a = 0; a < p.rank; ++a) {
        off = off * p.inDims[a] + idx[a][pos[a]];
        wt *= w[a][pos[a]];
      }
      acc += wt * static_cast<double>(dev::toFloat(x[off]));
      int32_t a = p.rank - 1;
      while (a >= 0 && ++pos[a] == cnt[a]) pos[a--] = 0;
      if (a < 0) break;
    }
    y[lin] = dev::fromFloat<T>(static_cast<float>(acc));
  }
}

template <typename E>
cudaError_t nearestAs(void const* x, void* y, ResizePlan const& p, int64_t total, cudaStream_t stream) {
  resizeNearestKernel<E>
      <<<dev::blocksFor(total), 256, 0, stream>>>(static_cast<E const*>(x), static_cast<E*>(y), p, total);
  return cudaGetLastError();
}

template <typename T>
cudaError_t interpolateAs(void const* x, void* y, ResizePlan const& p, int64_t total, cudaStream_t stream) {
  resizeInterpolateKernel<T>
      <<<dev::blocksFor(total), 256, 0, stream>>>(static_cast<T const*>(x), static_cast<T*>(y), p, total);
  return cudaGetLastError();
}

int64_t outCount(ResizePlan const& p) {
  int64_t n = 1;
  for (int32_t a = 0; a < p.rank; ++a) n *= p.outDims[a];
  return n;
}

}  // namespace

cudaError_t launchResizeNearest(void const* x, void* y, int32_t elemSize, ResizePlan const& plan, cudaStream_t stream) {
  int64_t total = outCount(plan);
  if (total <= 0) return cudaSuccess;
  switch (elemSize) {
    case 1:
      return nearestAs<uint8_t>(x, y, plan, total, stream);
    case 2:
      return nearestAs<uint16_t>(x, y, plan, total, stream);
    case 4:
      return nearestAs<uint32_t>(x, y, plan, total, stream);
    case 8:
      return nearestAs<uint64_t>(x, y, plan, total, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launchResizeInterpolate(void const* x, void* y, int32_t dtype, ResizePlan const& plan,
                                    cudaStream_t stream) {
  int64_t total = outCount(plan);
  if (total <= 0) return cudaSuccess;
  switch (dtype) {
    case dev::kFLOAT:
      return interpolateAs<float>(x, y, plan, total, stream);
    case dev::kHALF:
      return interpolateAs<__half>(x, y, plan, total, stream);
    case dev::kBF16:
      return interpolateAs<__nv_bfloat16>(x, y, plan, total, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace kiln::cuda
