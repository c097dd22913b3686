// CUDA kernels of ROIAlign_TRT, Normalize_TRT and Region_TRT, plus the device copy PriorBox_TRT uses.
#include "plugins/builtin/cuda/common.cuh"
#include "plugins/builtin/cuda/launch.h"

namespace kiln::plugin::cuda {
namespace {

template <typename T>
__device__ void bilinear(T const* plane, int64_t h, int64_t w, float y, float x, float* wt, float* val) {
  for (int k = 0; k < 4; ++k) wt[k] = val[k] = 0.f;
  if (y < -1.f || y > static_cast<float>(h) || x < -1.f || x > static_cast<float>(w)) return;
  y = fmaxf(y, 0.f);
  x = fmaxf(x, 0.f);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
  if (y0 >= h - 1) {
    y0 = y1 = h - 1;
    y = static_cast<float>(y0);
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= w - 1) {
    x0 = x1 = w - 1;
    x = static_cast<float>(x0);
  } else {
    x1 = x0 + 1;
  }
  float ly = y - static_cast<float>(y0), lx = x - static_cast<float>(x0), hy = 1.f - ly, hx = 1.f - lx;
  wt[0] = hy * hx;
  wt[1] = hy * lx;
  wt[2] = ly * hx;
  wt[3] = ly * lx;
  val[0] = loadF(plane, y0 * w + x0);
  val[1] = loadF(plane, y0 * w + x1);
  val[2] = loadF(plane, y1 * w + x0);
  val[3] = loadF(plane, y1 * w + x1);
}

template <typename T>
__global__ void roiAlignKernel(RoiAlignArgs a) {
  int64_t total = a.numRois * a.c * a.outH * a.outW;
  T const* x = static_cast<T const*>(a.x);
  T const* rois = static_cast<T const*>(a.rois);
  T* out = static_cast<T*>(a.out);
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t pw = t % a.outW, ph = (t / a.outW) % a.outH, ch = (t / (a.outW * a.outH)) % a.c;
    int64_t r = t / (a.outW * a.outH * a.c);
    int64_t b = a.batchIndices[r];
    if (b < 0 || b >= a.n) {
      storeF(out, t, 0.f);
      continue;
    }
    float off = a.halfPixel ? 0.5f : 0.f;
    float x1 = loadF(rois, r * 4) * a.spatialScale - off, y1 = loadF(rois, r * 4 + 1) * a.spatialScale - off;
    float x2 = loadF(rois, r * 4 + 2) * a.spatialScale - off, y2 = loadF(rois, r * 4 + 3) * a.spatialScale - off;
    float rw = x2 - x1, rh = y2 - y1;
    if (!a.halfPixel) {
      rw = fmaxf(rw, 1.f);
      rh = fmaxf(rh, 1.f);
    }
    float bh = rh / static_cast<float>(a.outH), bw = rw / static_cast<float>(a.outW);
    int64_t gh = a.samplingRatio > 0 ? a.samplingRatio : static_cast<int64_t>(ceilf(rh / a.outH));
    int64_t gw = a.samplingRatio > 0 ? a.samplingRatio : static_cast<int64_t>(ceilf(rw / a.outW));
    gh = gh < 1 ? 1 : gh;
    gw = gw < 1 ? 1 : gw;
    T const* plane = x + (b * a.c + ch) * a.h * a.w;
    float acc = 0.f;
    bool first = true;
    for (int64_t iy = 0; iy < gh; ++iy) {
      float yy = y1 + static_cast<float>(ph) * bh + (static_cast<float>(iy) + 0.5f) * bh / static_cast<float>(gh);
      for (int64_t ix = 0; ix < gw; ++ix) {
        float xx = x1 + static_cast<float>(pw) * bw + (static_cast<float>(ix) + 0.5f) * bw / static_cast<float>(gw);
        float wt[4], v[4];
        bilinear(plane, a.h, a.w, yy, xx, wt, v);
        if (a.avg) {
          acc += wt[0] * v[0] + wt[1] * v[1] + wt[2] * v[2] + wt[3] * v[3];
        } else {
          float m = fmaxf(fmaxf(wt[0] * v[0], wt[1] * v[1]), fmaxf(wt[2] * v[2], wt[3] * v[3]));
          acc = first ? m : fmaxf(acc, m);
          first = false;
        }
      }
    }
    storeF(out, t, a.avg ? acc / static_cast<float>(gh * gw) : acc);
  }
}

// One thread per (sample, position) summing over channels; acrossSpatial: one block per sample.
__global__ void l2PerPositionKernel(float const* in, float* out, float const* w, int64_t n, int64_t c, int64_t hw,
                                    bool shared, float eps) {
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < n * hw;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t b = t / hw, p = t % hw;
    float const* xs = in + b * c * hw + p;
    double sq = 0;
    for (int64_t ch = 0; ch < c; ++ch) sq += static_cast<double>(xs[ch * hw]) * xs[ch * hw];
    float inv = static_cast<float>(1.0 / sqrt(sq + eps));
    for (int64_t ch = 0; ch < c; ++ch) out[b * c * hw + ch * hw + p] = xs[ch * hw] * inv * w[shared ? 0 : ch];
  }
}

__global__ void l2AcrossSpatialKernel(float const* in, float* out, float const* w, int64_t c, int64_t hw, bool shared,
                                      float eps) {
  __shared__ double partial[kThreads];
  int64_t b = blockIdx.x, len = c * hw;
  float const* xs = in + b * len;
  double sq = 0;
  for (int64_t i = threadIdx.x; i < len; i += blockDim.x) sq += static_cast<double>(xs[i]) * xs[i];
  partial[threadIdx.x] = sq;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  float inv = static_cast<float>(1.0 / sqrt(partial[0] + eps));
  for (int64_t i = threadIdx.x; i < len; i += blockDim.x) out[b * len + i] = xs[i] * inv * w[shared ? 0 : i / hw];
}

__global__ void regionKernel(float const* in, float* out, int64_t n, int32_t num, int32_t coords, int32_t classes,
                             int64_t hw) {
  int64_t per = coords + 1 + classes;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < n * num * hw;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t p = t % hw, ba = t / hw;
    int64_t base = ba * per * hw;
    for (int64_t k = 0; k < coords; ++k) {
      float v = in[base + k * hw + p];
      out[base + k * hw + p] = k < 2 ? 1.f / (1.f + expf(-v)) : v;
    }
    out[base + coords * hw + p] = 1.f / (1.f + expf(-in[base + coords * hw + p]));
    int64_t cls = base + (coords + 1) * hw + p;
    float m = in[cls];
    for (int64_t k = 1; k < classes; ++k) m = fmaxf(m, in[cls + k * hw]);
    float sum = 0.f;
    for (int64_t k = 0; k < classes; ++k) sum += expf(in[cls + k * hw] - m);
    for (int64_t k = 0; k < classes; ++k) out[cls + k * hw] = expf(in[cls + k * hw] - m) / sum;
  }
}

}  // namespace

std::string launchRoiAlign(RoiAlignArgs const& a, cudaStream_t stream) {
  int64_t total = a.numRois * a.c * a.outH * a.outW;
  if (total <= 0) return "";
  if (a.half) {
    roiAlignKernel<__half><<<blocksFor(total), kThreads, 0, stream>>>(a);
  } else {
    roiAlignKernel<float><<<blocksFor(total), kThreads, 0, stream>>>(a);
  }
  return launchStatus("ROIAlign kernel");
}

std::string launchL2Normalize(float const* in, float* out, float const* weights, int64_t n, int64_t c, int64_t hw,
                              bool acrossSpatial, bool channelShared, float eps, cudaStream_t stream) {
  if (n * c * hw <= 0) return "";
  if (acrossSpatial) {
    l2AcrossSpatialKernel<<<static_cast<unsigned>(n), kThreads, 0, stream>>>(in, out, weights, c, hw, channelShared, eps);
  } else {
    l2PerPositionKernel<<<blocksFor(n * hw), kThreads, 0, stream>>>(in, out, weights, n, c, hw, channelShared, eps);
  }
  return launchStatus("Normalize kernel");
}

std::string launchRegion(float const* in, float* out, int64_t n, int32_t num, int32_t coords, int32_t classes, int64_t hw,
                         cudaStream_t stream) {
  int64_t total = n * num * hw;
  if (total <= 0) return "";
  regionKernel<<<blocksFor(total), kThreads, 0, stream>>>(in, out, n, num, coords, classes, hw);
  return launchStatus("Region kernel");
}

std::string copyDeviceAsync(void* dst, void const* src, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return "";
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream);
  return e == cudaSuccess ? "" : std::string("device copy: ") + cudaGetErrorString(e);
}

}  // namespace kiln::plugin::cuda
