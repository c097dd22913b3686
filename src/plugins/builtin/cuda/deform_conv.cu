// CUDA kernel of ModulatedDeformConv2d (DCNv2): one thread per output element, summing the masked bilinear
// samples of its input channels' kernel taps against the weights (the same arithmetic as the host path).
#include "plugins/builtin/cuda/common.cuh"
#include "plugins/builtin/cuda/launch.h"

namespace kiln::plugin::cuda {
namespace {

template <typename T>
__device__ float sampleAt(T const* plane, int64_t h, int64_t w, float y, float x) {
  if (y <= -1.f || y >= static_cast<float>(h) || x <= -1.f || x >= static_cast<float>(w)) return 0.f;
  int64_t y0 = static_cast<int64_t>(floorf(y)), x0 = static_cast<int64_t>(floorf(x));
  float ly = y - static_cast<float>(y0), lx = x - static_cast<float>(x0), hy = 1.f - ly, hx = 1.f - lx;
  auto at = [&](int64_t r, int64_t c) { return (r >= 0 && r < h && c >= 0 && c < w) ? loadF(plane, r * w + c) : 0.f; };
  return hy * hx * at(y0, x0) + hy * lx * at(y0, x0 + 1) + ly * hx * at(y0 + 1, x0) + ly * lx * at(y0 + 1, x0 + 1);
}

template <typename T>
__global__ void deformConvKernel(DeformConvArgs a) {
  T const* x = static_cast<T const*>(a.x);
  T const* off = static_cast<T const*>(a.offset);
  T const* mask = static_cast<T const*>(a.mask);
  T const* wt = static_cast<T const*>(a.weight);
  T const* bias = static_cast<T const*>(a.bias);
  T* out = static_cast<T*>(a.out);
  int64_t total = a.n * a.cout * a.ho * a.wo, plane = a.ho * a.wo, kk = a.kh * a.kw;
  int64_t cinG = a.cin / a.group, coutG = a.cout / a.group, chPerDg = a.cin / a.deformableGroup;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t ow = t % a.wo, oh = (t / a.wo) % a.ho, co = (t / plane) % a.cout, b = t / (plane * a.cout);
    int64_t grp = co / coutG;
    float acc = bias ? loadF(bias, co) : 0.f;
    for (int64_t ci = 0; ci < cinG; ++ci) {
      int64_t c = grp * cinG + ci, dg = c / chPerDg;
      T const* xp = x + (b * a.cin + c) * a.h * a.w;
      for (int64_t i = 0; i < a.kh; ++i) {
        for (int64_t j = 0; j < a.kw; ++j) {
          int64_t tap = dg * kk + i * a.kw + j, pix = oh * a.wo + ow;
          float dy = loadF(off, (b * 2 * a.deformableGroup * kk + 2 * tap) * plane + pix);
          float dx = loadF(off, (b * 2 * a.deformableGroup * kk + 2 * tap + 1) * plane + pix);
          float mk = loadF(mask, (b * a.deformableGroup * kk + tap) * plane + pix);
          float yy = static_cast<float>(oh * a.strideH - a.padH + i * a.dilH) + dy;
          float xx = static_cast<float>(ow * a.strideW - a.padW + j * a.dilW) + dx;
          acc += loadF(wt, ((co * cinG + ci) * a.kh + i) * a.kw + j) * sampleAt(xp, a.h, a.w, yy, xx) * mk;
        }
      }
    }
    storeF(out, t, acc);
  }
}

}  // namespace

std::string launchDeformConv(DeformConvArgs const& a, cudaStream_t stream) {
  int64_t total = a.n * a.cout * a.ho * a.wo;
  if (total <= 0) return "";
  if (a.half) {
    deformConvKernel<__half><<<blocksFor(total), kThreads, 0, stream>>>(a);
  } else {
    deformConvKernel<float><<<blocksFor(total), kThreads, 0, stream>>>(a);
  }
  return launchStatus("ModulatedDeformConv2d kernel");
}

}  // namespace kiln::plugin::cuda
