// CUDA kernels of the data-movement built-ins: ScatterND, ResizeNearest_TRT, Reorg_TRT.
#include "plugins/builtin/cuda/common.cuh"
#include "plugins/builtin/cuda/launch.h"

namespace kiln::plugin::cuda {
namespace {

constexpr int kMaxDims = 8;

struct ScatterMeta {
  int64_t dims[kMaxDims];
  int64_t strides[kMaxDims];
};

// One thread per (update, slice element); out-of-range indices are skipped (the host path refuses them; the
// device path cannot report per element without a sync, so such updates leave data unchanged).
__global__ void scatterKernel(int32_t const* indices, char const* updates, char* out, int64_t nUpdates, int32_t k,
                              ScatterMeta meta, int64_t slice, int32_t eb) {
  int64_t total = nUpdates * slice;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t u = t / slice, e = t % slice;
    int64_t offset = 0;
    bool ok = true;
    for (int32_t i = 0; i < k; ++i) {
      int64_t v = indices[u * k + i];
      if (v < 0) v += meta.dims[i];
      if (v < 0 || v >= meta.dims[i]) ok = false;
      offset += v * meta.strides[i];
    }
    if (!ok) continue;
    char const* src = updates + (u * slice + e) * eb;
    char* dst = out + (offset + e) * eb;
    for (int32_t b = 0; b < eb; ++b) dst[b] = src[b];
  }
}

__global__ void resizeNearestKernel(float const* in, float* out, int64_t planes, int64_t ih, int64_t iw, int64_t oh,
                                    int64_t ow, float scale) {
  int64_t total = planes * oh * ow;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t c = t % ow, r = (t / ow) % oh, p = t / (ow * oh);
    int64_t sr = static_cast<int64_t>(static_cast<float>(r) / scale);
    int64_t sc = static_cast<int64_t>(static_cast<float>(c) / scale);
    sr = sr < ih - 1 ? sr : ih - 1;
    sc = sc < iw - 1 ? sc : iw - 1;
    out[t] = in[(p * ih + sr) * iw + sc];
  }
}

__global__ void reorgKernel(float const* in, float* out, int64_t n, int64_t c, int64_t h, int64_t w, int64_t s) {
  int64_t total = n * c * h * w, cOut = c / (s * s);
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t q = t % w, r = (t / w) % h, k = (t / (w * h)) % c, b = t / (w * h * c);
    int64_t offset = k / cOut, ic = k % cOut;
    int64_t ir = r * s + offset / s, iq = q * s + offset % s;
    out[t] = in[((b * cOut + ic) * h * s + ir) * w * s + iq];
  }
}

}  // namespace

std::string launchScatterNd(void const* data, int32_t const* indices, void const* updates, void* out,
                            int64_t dataVolume, int64_t nUpdates, int32_t k, int64_t const* dataDims,
                            int64_t const* dataStrides, int64_t sliceSize, int32_t elementBytes, cudaStream_t stream) {
  if (k < 1 || k > kMaxDims) return "ScatterND: index tuples of " + std::to_string(k) + " components are not supported";
  int64_t bytes = dataVolume * elementBytes;
  if (out != data && bytes > 0) {
    cudaError_t e = cudaMemcpyAsync(out, data, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice, stream);
    if (e != cudaSuccess) return std::string("ScatterND copy: ") + cudaGetErrorString(e);
  }
  ScatterMeta meta{};
  for (int32_t i = 0; i < k; ++i) {
    meta.dims[i] = dataDims[i];
    meta.strides[i] = dataStrides[i];
  }
  int64_t total = nUpdates * sliceSize;
  if (total > 0) {
    scatterKernel<<<blocksFor(total), kThreads, 0, stream>>>(indices, static_cast<char const*>(updates),
                                                             static_cast<char*>(out), nUpdates, k, meta, sliceSize,
                                                             elementBytes);
  }
  return launchStatus("ScatterND kernel");
}

std::string launchResizeNearest(float const* in, float* out, int64_t planes, int64_t inH, int64_t inW, int64_t outH,
                                int64_t outW, float scale, cudaStream_t stream) {
  int64_t total = planes * outH * outW;
  if (total <= 0) return "";
  resizeNearestKernel<<<blocksFor(total), kThreads, 0, stream>>>(in, out, planes, inH, inW, outH, outW, scale);
  return launchStatus("ResizeNearest kernel");
}

std::string launchReorg(float const* in, float* out, int64_t n, int64_t c, int64_t h, int64_t w, int32_t stride,
                        cudaStream_t stream) {
  int64_t total = n * c * h * w;
  if (total <= 0) return "";
  reorgKernel<<<blocksFor(total), kThreads, 0, stream>>>(in, out, n, c, h, w, stride);
  return launchStatus("Reorg kernel");
}

}  // namespace kiln::plugin::cuda
