// gpu micro-benchmark of the fp16 attention kernel on BERT-base's shape (12 heads, 128 tokens, head dim 64, q/k/v
// packed [B, S, 3, H, D] as merge_qkv_projections leaves them) at batch 128 and 1: unmasked, with BERT's key mask
// [B, 1, 1, S] (row mode) and with a full [B, 1, S, S] mask (tile mode), in the CTA form the grid picks and in each
// form forced; ViT-B/16 at batch 1 (197 tokens) in each CTA form and key split; and few queries over many keys
// with each key split. For reading on the H200; it asserts only that the launches succeed (and, for BERT, that the
// outputs are convex combinations of v).
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "backends/attention_head_args.h"
#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

constexpr int kWarmup = 3;
constexpr int kIterations = 50;

// Mean milliseconds of one launchAttention over kIterations after kWarmup; -1 when a launch failed.
double timeAttention(cuda::AttentionArgs const& a) {
  auto launch = [&] { return cuda::launchAttention(static_cast<int32_t>(DataType::kHALF), a, nullptr); };
  for (int i = 0; i < kWarmup; ++i)
    if (!launch()) return -1;
  cudaEvent_t start = nullptr, stop = nullptr;
  if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) return -1;
  (void)cudaEventRecord(start, nullptr);
  bool ok = true;
  for (int i = 0; i < kIterations; ++i) ok = launch() && ok;
  (void)cudaEventRecord(stop, nullptr);
  float ms = 0;
  ok = ok && cudaEventSynchronize(stop) == cudaSuccess && cudaEventElapsedTime(&ms, start, stop) == cudaSuccess;
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  if (!ok || cudaGetLastError() != cudaSuccess) return -1;
  return ms / kIterations;
}

// Arguments of attention over q/k/v packed [B, S, 3, H, D] into y [B, S, H, D], as merge_qkv_projections leaves
// them: the attention tactic's own mapping for layout 1, packed (ir::attentionHeadGeometry,
// fillHeadMajorAttentionArgs), scale 1/8 (head dim 64), no mask.
cuda::AttentionArgs packedQkvArgs(void const* qkv, void* y, int64_t batch, int64_t heads, int64_t tokens,
                                  int64_t headDim) {
  Dims const packed = makeDims({batch, tokens, 3, heads, headDim});
  auto const g =
      ir::attentionHeadGeometry("bench", 1, true, packed, packed, packed, makeDims({batch, tokens, heads, headDim}));
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  cuda::AttentionArgs a;
  if (!g.isOk()) return a;
  Status const s = backends::fillHeadMajorAttentionArgs<void>("bench", *g, 2, qkv, qkv, qkv, nullptr, Dims{}, y, a);
  EXPECT_TRUE(s.isOk()) << s.toString();
  a.batchCount = batch * heads;
  a.yStrided = true;
  a.scale = 0.125f;
  return a;
}

TEST(CudaAttentionBench, BertMaskedAndUnmasked) {
  KILN_REQUIRE_GPU();
  constexpr int64_t kH = 12, kS = 128, kD = 64;
  for (int64_t batch : {128, 1}) {
    int64_t const qkv = batch * kS * 3 * kH * kD, y = batch * kS * kH * kD;
    DeviceMemory dqkv(static_cast<size_t>(qkv) * 2), dy(static_cast<size_t>(y) * 2);
    DeviceMemory rowMask(static_cast<size_t>(batch * kS) * 2), tileMask(static_cast<size_t>(batch * kS * kS) * 2);
    HostTensor const x = randomTensor(DataType::kHALF, {qkv}, 101, -1, 1);
    ASSERT_EQ(cudaMemcpy(dqkv.p, x.data(), x.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    // Each sequence keeps a different number of leading keys (the rest -10000, as BERT's extended mask).
    std::vector<double> keyMask(static_cast<size_t>(batch * kS)), tile(static_cast<size_t>(batch * kS * kS));
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t c = 0; c < kS; ++c) {
        double const m = c < kS - (b * 37) % 100 ? 0.0 : -10000.0;
        keyMask[static_cast<size_t>(b * kS + c)] = m;
        for (int64_t r = 0; r < kS; ++r) tile[static_cast<size_t>((b * kS + r) * kS + c)] = m;
      }
    HostTensor const rm = HostTensor::fromVector(DataType::kHALF, makeDims({batch * kS}), keyMask);
    HostTensor const tm = HostTensor::fromVector(DataType::kHALF, makeDims({batch * kS * kS}), tile);
    ASSERT_EQ(cudaMemcpy(rowMask.p, rm.data(), rm.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(tileMask.p, tm.data(), tm.bytes(), cudaMemcpyHostToDevice), cudaSuccess);

    cuda::AttentionArgs a = packedQkvArgs(dqkv.p, dy.p, batch, kH, kS, kD);
    for (int maskKind = 0; maskKind < 3; ++maskKind) {
      a.mask = maskKind == 0 ? nullptr : (maskKind == 1 ? rowMask.p : tileMask.p);
      a.maskStride[0] = maskKind == 1 ? kS : kS * kS;
      a.maskStride[1] = 0;
      a.maskRowStride = maskKind == 2 ? kS : 0;
      a.maskColStride = 1;
      for (int64_t rows : {int64_t{0}, cuda::kAttentionRowsPerTile, cuda::kAttentionSmallRowsPerTile}) {
        int64_t const previous = cuda::setAttentionRowsPerCta(rows);
        double const ms = timeAttention(a);
        cuda::setAttentionRowsPerCta(previous);
        ASSERT_GT(ms, 0) << "launch failed";
        std::printf("[ bench    ] attention fp16 BERT b%-3lld %-22s rows/CTA %-5s %8.4f ms %6.1f TFLOP/s\n",
                    static_cast<long long>(batch),
                    maskKind == 0 ? "unmasked" : (maskKind == 1 ? "mask [B,1,1,S] (row)" : "mask [B,1,S,S] (tile)"),
                    rows == 0 ? "auto" : (rows == 16 ? "16" : "64"), ms,
                    4.0 * batch * kH * kS * kS * kD / (ms * 1e-3) / 1e12);
      }
      // Every output is a convex combination of v's values in [-1, 1].
      std::vector<uint16_t> out(4096);
      ASSERT_EQ(cudaMemcpy(out.data(), dy.p, out.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
      HostTensor const o = HostTensor::borrow(DataType::kHALF, makeDims({4096}), out.data());
      for (int64_t i = 0; i < o.count(); ++i) ASSERT_LE(std::fabs(o.doubleAt(i)), 1.0) << "element " << i;
    }
  }
}

// ViT-B/16 at batch 1: 12 heads over 197 tokens (d 64, packed q/k/v, no mask), 4 key tiles: printed for the
// form the grid picks, for 64-row CTAs, and for 16-row CTAs with each key split forced.
TEST(CudaAttentionBench, VitBatch1) {
  KILN_REQUIRE_GPU();
  constexpr int64_t kH = 12, kS = 197, kD = 64;
  DeviceMemory dqkv(static_cast<size_t>(kS * 3 * kH * kD) * 2), dy(static_cast<size_t>(kS * kH * kD) * 2);
  HostTensor const x = randomTensor(DataType::kHALF, {kS * 3 * kH * kD}, 131, -1, 1);
  ASSERT_EQ(cudaMemcpy(dqkv.p, x.data(), x.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  cuda::AttentionArgs const a = packedQkvArgs(dqkv.p, dy.p, 1, kH, kS, kD);
  struct Form {
    int64_t rows, splits;
  };
  for (Form const f : {Form{0, 0}, Form{cuda::kAttentionRowsPerTile, 1}, Form{cuda::kAttentionSmallRowsPerTile, 1},
                       Form{cuda::kAttentionSmallRowsPerTile, 2}, Form{cuda::kAttentionSmallRowsPerTile, 4}}) {
    int64_t const previousRows = cuda::setAttentionRowsPerCta(f.rows);
    int64_t const previousSplits = cuda::setAttentionKeySplits(f.splits);
    double const ms = timeAttention(a);
    cuda::setAttentionRowsPerCta(previousRows);
    cuda::setAttentionKeySplits(previousSplits);
    ASSERT_GT(ms, 0) << "launch failed";
    std::printf("[ bench    ] attention fp16 ViT b1 s197 rows/CTA %-4s key splits %-4s %8.4f ms %6.1f TFLOP/s\n",
                f.rows == 0 ? "auto" : std::to_string(f.rows).c_str(),
                f.rows == 0 ? "auto" : std::to_string(f.splits).c_str(), ms,
                4.0 * kH * kS * kS * kD / (ms * 1e-3) / 1e12);
  }
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// 12 heads of 16 queries over 4,096 keys (d 64, [b, h, s, d] packed, BERT-style key mask): 12 CTAs of 16 rows, so
// the grid-size choice splits the keys 8 ways; printed for that choice and for each split count forced.
TEST(CudaAttentionBench, FewQueriesManyKeys) {
  KILN_REQUIRE_GPU();
  constexpr int64_t kH = 12, kSq = 16, kSkv = 4096, kD = 64;
  DeviceMemory dq(static_cast<size_t>(kH * kSq * kD) * 2), dk(static_cast<size_t>(kH * kSkv * kD) * 2),
      dv(static_cast<size_t>(kH * kSkv * kD) * 2), dy(static_cast<size_t>(kH * kSq * kD) * 2),
      dm(static_cast<size_t>(kSkv) * 2);
  HostTensor const q = randomTensor(DataType::kHALF, {kH * kSq * kD}, 121, -1, 1);
  HostTensor const kv = randomTensor(DataType::kHALF, {kH * kSkv * kD}, 122, -1, 1);
  std::vector<double> keyMask(static_cast<size_t>(kSkv), 0.0);
  for (int64_t c = 4000; c < kSkv; ++c) keyMask[static_cast<size_t>(c)] = -10000.0;
  HostTensor const m = HostTensor::fromVector(DataType::kHALF, makeDims({kSkv}), keyMask);
  ASSERT_EQ(cudaMemcpy(dq.p, q.data(), q.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dk.p, kv.data(), kv.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dv.p, kv.data(), kv.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dm.p, m.data(), m.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  cuda::AttentionArgs a;
  a.q = dq.p;
  a.k = dk.p;
  a.v = dv.p;
  a.mask = dm.p;
  a.maskColStride = 1;
  a.y = dy.p;
  a.sq = kSq;
  a.skv = kSkv;
  a.d = a.dv = kD;
  a.batchRank = 1;
  a.batch[0] = kH;
  a.batchCount = kH;
  a.qStride[0] = kSq * kD;
  a.kStride[0] = a.vStride[0] = kSkv * kD;
  a.scale = 0.125f;
  for (int64_t splits : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{4}, int64_t{8}}) {
    int64_t const previous = cuda::setAttentionKeySplits(splits);
    double const ms = timeAttention(a);
    cuda::setAttentionKeySplits(previous);
    ASSERT_GT(ms, 0) << "launch failed";
    std::printf("[ bench    ] attention fp16 h%lld sq%lld skv%lld key splits %-5s %8.4f ms %6.1f TFLOP/s\n",
                static_cast<long long>(kH), static_cast<long long>(kSq), static_cast<long long>(kSkv),
                splits == 0 ? "auto" : std::to_string(splits).c_str(), ms,
                4.0 * kH * kSq * kSkv * kD / (ms * 1e-3) / 1e12);
  }
}

}  // namespace
}  // namespace kiln
