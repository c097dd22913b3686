// Device side of GridSample (grid_sample_kernels.h).
#include <cstdint>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/grid_sample_kernels.h"

namespace kiln::cuda {
namespace {

constexpr int32_t kNearest = 0, kLinear = 1;
constexpr int32_t kClamp = 2, kReflect = 4;

__device__ __forceinline__ double loadGrid(void const* g, int32_t type, int64_t i) {
  switch (type) {
    case dev::kHALF:
      return static_cast<double>(__half2float(static_cast<__half const*>(g)[i]));
    case dev::kBF16:
      return static_cast<double>(__bfloat162float(static_cast<__nv_bfloat16 const*>(g)[i]));
    default:
      return static_cast<double>(static_cast<float const*>(g)[i]);
  }
}

__device__ double unnormalize(double c, int64_t size, bool align) {
  double s = static_cast<double>(size);
  return align ? __dmul_rn(__dadd_rn(c, 1.0) / 2.0, s - 1.0) : __dadd_rn(__dmul_rn(__dadd_rn(c, 1.0), s), -1.0) / 2.0;
}

__device__ double reflect(double x, double twiceLow, double twiceHigh) {
  if (twiceLow == twiceHigh) return 0.0;
  double lo = twiceLow / 2.0, span = (twiceHigh - twiceLow) / 2.0;
  x = fabs(x - lo);
  double extra = fmod(x, span);
  auto flips = static_cast<int64_t>(floor(x / span));
  return flips % 2 == 0 ? extra + lo : __dadd_rn(span - extra, lo);
}

__device__ double clip(double x, int64_t size) {
  double hi = static_cast<double>(size - 1);
  x = x < 0.0 ? 0.0 : x;
  return hi < x ? hi : x;
}

__device__ double padCoordinate(double x, int64_t size, GridSamplePlan const& p) {
  if (p.sample == kClamp) return clip(x, size);
  if (p.sample == kReflect) {
    double s = static_cast<double>(size);
    x = p.alignCorners ? reflect(x, 0.0, 2.0 * (s - 1.0)) : reflect(x, -1.0, __dadd_rn(2.0 * s, -1.0));
    return clip(x, size);
  }
  return x;
}

__device__ __forceinline__ double cubic1(double x, double a) { return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0; }
__device__ __forceinline__ double cubic2(double x, double a) { return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a; }

template <typename T>
__device__ __forceinline__ double pixel(T const* img, int64_t h, int64_t w, int64_t iy, int64_t ix) {
  if (iy < 0 || iy >= h || ix < 0 || ix >= w) return 0.0;
  return static_cast<double>(dev::toFloat(img[iy * w + ix]));
}

template <typename T>
__global__ void gridSample2dKernel(T const* __restrict__ x, void const* grid, int32_t gridType, T* __restrict__ y,
                                   GridSamplePlan p, int64_t total) {
  int64_t h = p.inDims[0], w = p.inDims[1], ho = p.outDims[0], wo = p.outDims[1];
  for (int64_t lin = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; lin < total;
       lin += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t ox = lin % wo, oy = (lin / wo) % ho, bc = lin / (wo * ho), b = bc / p.c;
    int64_t gi = ((b * ho + oy) * wo + ox) * 2;
    double sx = unnormalize(loadGrid(grid, gridType, gi), w, p.alignCorners);
    double sy = unnormalize(loadGrid(grid, gridType, gi + 1), h, p.alignCorners);
    T const* img = x + bc * h * w;
    double v = 0.0;
    if (p.mode == kNearest) {
      double px = padCoordinate(sx, w, p), py = padCoordinate(sy, h, p);
      v = pixel(img, h, w, static_cast<int64_t>(nearbyint(py)), static_cast<int64_t>(nearbyint(px)));
    } else if (p.mode == kLinear) {
      double px = padCoordinate(sx, w, p), py = padCoordinate(sy, h, p);
      double x0 = floor(px), y0 = floor(py);
      double tx = px - x0, ty = py - y0;
      auto ix = static_cast<int64_t>(x0);
      auto iy = static_cast<int64_t>(y0);
      v = (1 - ty) * ((1 - tx) * pixel(img, h, w, iy, ix) + tx * pixel(img, h, w, iy, ix + 1)) +
          ty * ((1 - tx) * pixel(img, h, w, iy + 1, ix) + tx * pixel(img, h, w, iy + 1, ix + 1));
    } else {
      double x0 = floor(sx), y0 = floor(sy);
      double tx = sx - x0, ty = sy - y0;
      double const a = -0.75;
      double cx[4] = {cubic2(tx + 1, a), cubic1(tx, a), cubic1(1 - tx, a), cubic2(2 - tx, a)};
      double cy[4] = {cubic2(ty + 1, a), cubic1(ty, a), cubic1(1 - ty, a), cubic2(2 - ty, a)};
      auto ix = static_cast<int64_t>(x0);
      auto iy = static_cast<int64_t>(y0);
      for (int32_t j = 0; j < 4; ++j) {
        double row = 0.0;
        for (int32_t i = 0; i < 4; ++i) {
          int64_t qy = iy - 1 + j, qx = ix - 1 + i;
          if (p.sample == kClamp || p.sample == kReflect) {
            qx = static_cast<int64_t>(padCoordinate(static_cast<double>(qx), w, p));
            qy = static_cast<int64_t>(padCoordinate(static_cast<double>(qy), h, p));
          }
          row += cx[i] * pixel(img, h, w, qy, qx);
        }
        v += cy[j] * row;
      }
    }
    y[lin] = dev::fromFloat<T>(static_cast<float>(v));
  }
}

template <typename T>
__global__ void gridSample3dKernel(T const* __restrict__ x, void const* grid, int32_t gridType, T* __restrict__ y,
                                   GridSamplePlan p, int64_t total) {
  int64_t d = p.inDims[0], h = p.inDims[1], w = p.inDims[2];
  int64_t points = p.outDims[0] * p.outDims[1] * p.outDims[2];
  for (int64_t lin = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; lin < total;
       lin += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t pt = lin % points, bc = lin / points, b = bc / p.c;
    int64_t gi = (b * points + pt) * 3;
    double px = padCoordinate(unnormalize(loadGrid(grid, gridType, gi), w, p.alignCorners), w, p);
    double py = padCoordinate(unnormalize(loadGrid(grid, gridType, gi + 1), h, p.alignCorners), h, p);
    double pz = padCoordinate(unnormalize(loadGrid(grid, gridType, gi + 2), d, p.alignCorners), d, p);
    T const* vol = x + bc * d * h * w;
    auto at = [&](int64_t iz, int64_t iy, int64_t ix) {
      if (iz < 0 || iz >= d || iy < 0 || iy >= h || ix < 0 || ix >= w) return 0.0;
      return static_cast<double>(dev::toFloat(vol[(iz * h + iy) * w + ix]));
    };
    double v = 0.0;
    if (p.mode == kNearest) {
      v = at(static_cast<int64_t>(nearbyint(pz)), static_cast<int64_t>(nearbyint(py)),
             static_cast<int64_t>(nearbyint(px)));
    } else {
      double x0 = floor(px), y0 = floor(py), z0 = floor(pz);
      double tx = px - x0, ty = py - y0, tz = pz - z0;
      auto ix = static_cast<int64_t>(x0);
      auto iy = static_cast<int64_t>(y0);
      auto iz = static_cast<int64_t>(z0);
      for (int32_t k = 0; k < 2; ++k)
        for (int32_t j = 0; j < 2; ++j)
          for (int32_t i = 0; i < 2; ++i) {
            double wgt = (k ? tz : 1 - tz) * (j ? ty : 1 - ty) * (i ? tx : 1 - tx);
            v += wgt * at(iz + k, iy + j, ix + i);
          }
    }
    y[lin] = dev::fromFloat<T>(static_cast<float>(v));
  }
}

template <typename T>
cudaError_t gridSampleAs(void const* x, void const* grid, int32_t gridType, void* y, GridSamplePlan const& p,
                         int64_t total, cudaStream_t stream) {
  unsigned blocks = dev::blocksFor(total);
  if (p.spatial == 3)
    gridSample3dKernel<T>
        <<<blocks, 256, 0, stream>>>(static_cast<T const*>(x), grid, gridType, static_cast<T*>(y), p, total);
  else
    gridSample2dKernel<T>
        <<<blocks, 256, 0, stream>>>(static_cast<T const*>(x), grid, gridType, static_cast<T*>(y), p, total);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launchGridSample(void const* x, int32_t xType, void const* grid, int32_t gridType, void* y,
                             GridSamplePlan const& p, cudaStream_t stream) {
  if (gridType != dev::kFLOAT && gridType != dev::kHALF && gridType != dev::kBF16) return cudaErrorInvalidValue;
  int64_t total = p.n * p.c;
  for (int32_t i = 0; i < p.spatial; ++i) total *= p.outDims[i];
  if (total <= 0) return cudaSuccess;
  switch (xType) {
    case dev::kFLOAT:
      return gridSampleAs<float>(x, grid, gridType, y, p, total, stream);
    case dev::kHALF:
      return gridSampleAs<__half>(x, grid, gridType, y, p, total, stream);
    case dev::kBF16:
      return gridSampleAs<__nv_bfloat16>(x, grid, gridType, y, p, total, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace kiln::cuda
