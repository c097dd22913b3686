// Fills a StridedAttentionArgs (attention_args.h) for a head-major attention (layouts 1 and 2, q/k/v separate or
// packed) from ir::attentionHeadGeometry and the mask's shape: the one mapping the CPU and CUDA tactics both use.
// Header-only; the CUDA library's .cc files include it (its .cu files do not: it needs Kiln's C++20 headers).
#pragma once

#include <cstddef>
#include <string>

#include "backends/attention_args.h"
#include "core/dims.h"
#include "core/status.h"
#include "ir/attention_layout.h"

namespace kiln::backends {

namespace attention_detail {

// p advanced by i elements of elemSize bytes (T may be void).
template <typename T>
T const* advance(T const* p, int64_t i, size_t elemSize) {
  return static_cast<T const*>(static_cast<void const*>(static_cast<unsigned char const*>(static_cast<void const*>(p)) +
                                                        static_cast<size_t>(i) * elemSize));
}
template <typename T>
T* advance(T* p, int64_t i, size_t elemSize) {
  return static_cast<T*>(
      static_cast<void*>(static_cast<unsigned char*>(static_cast<void*>(p)) + static_cast<size_t>(i) * elemSize));
}

}  // namespace attention_detail

/// Element strides of `mask` broadcast to the scores [B, H, sq, skv] (right-aligned; 0 over its dims of extent 1)
/// into out[4]. Fails with invalid argument, starting with `who`, when mask has more than 4 dims or a dim that is
/// neither 1 nor the scores'.
inline Status headMajorMaskStrides(std::string const& who, Dims const& mask, int64_t b, int64_t h, int64_t sq,
                                   int64_t skv, int64_t (&out)[4]) {
  int64_t const scores[4] = {b, h, sq, skv};
  bool ok = mask.nbDims >= 0 && mask.nbDims <= 4;
  for (int32_t i = 0; ok && i < mask.nbDims; ++i) {
    int64_t const m = mask.d[i], s = scores[4 - mask.nbDims + i];
    ok = m == 1 || m == s;
  }
  if (!ok)
    return invalidArgument(who, ": mask ", dimsToString(mask), " does not broadcast to the scores ",
                           dimsToString(makeDims({b, h, sq, skv})));
  for (int64_t& s : out) s = 0;
  int64_t stride = 1;
  for (int32_t i = mask.nbDims - 1; i >= 0; --i) {
    out[4 - mask.nbDims + i] = mask.d[i] == 1 ? 0 : stride;
    stride *= mask.d[i];
  }
  return Status::ok();
}

/// Fills a for the head-major geometry g: extents, batch dims (B, H), each operand's pointer (its tensor's data,
/// elemSize bytes per element, advanced by the operand's offset: with packed q/k/v, q, k and v are the same
/// tensor), its batch, head and row strides, and the mask (null: none; else of shape maskShape) broadcast to the
/// scores [B, H, sq, skv]. scale, kTransposed and nanToZero are left to the caller. Fails as headMajorMaskStrides.
template <typename T>
Status fillHeadMajorAttentionArgs(std::string const& who, ir::AttentionHeadGeometry const& g, size_t elemSize,
                                  T const* q, T const* k, T const* v, T const* mask, Dims const& maskShape, T* y,
                                  StridedAttentionArgs<T>& a) {
  using attention_detail::advance;
  if (mask) {
    int64_t ms[4] = {};
    KILN_RETURN_IF_ERROR(headMajorMaskStrides(who, maskShape, g.batch, g.heads, g.sq, g.skv, ms));
    a.maskStride[0] = ms[0];
    a.maskStride[1] = ms[1];
    a.maskRowStride = ms[2];
    a.maskColStride = ms[3];
  }
  a.q = advance(q, g.q.offset, elemSize);
  a.k = advance(k, g.k.offset, elemSize);
  a.v = advance(v, g.v.offset, elemSize);
  a.mask = mask;
  a.y = advance(y, g.y.offset, elemSize);
  a.sq = g.sq;
  a.skv = g.skv;
  a.d = g.d;
  a.dv = g.dv;
  a.batchRank = 2;
  a.batch[0] = g.batch;
  a.batch[1] = g.heads;
  ir::AttentionOperandView const* views[4] = {&g.q, &g.k, &g.v, &g.y};
  int64_t* strides[4] = {a.qStride, a.kStride, a.vStride, a.yStride};
  int64_t* rowStrides[4] = {&a.qRowStride, &a.kRowStride, &a.vRowStride, &a.yRowStride};
  for (int i = 0; i < 4; ++i) {
    strides[i][0] = views[i]->batchStride;
    strides[i][1] = views[i]->headStride;
    *rowStrides[i] = views[i]->rowStride;
  }
  return Status::ok();
}

}  // namespace kiln::backends
