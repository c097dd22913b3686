// attention_cpu_tiled against the reference Attention kernel (fp64), with the AVX-512 and the portable loops:
// BERT / ViT shapes, sequence lengths that are not multiples of the row block, the row tiles or the 32-column step,
// head dims that are not multiples of 16, k transposed, batch broadcast, layouts 1 and 2 (also packed), masks
// broadcast along every axis, nan_to_zero, threads; NaN rows directly; refusals; the time on BERT's and ViT's shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <thread>

#include "backends/cpu/attention_cpu.h"
#include "backends/cpu/cpu_test_util.h"

namespace kiln {
namespace {

using namespace cputest;  // NOLINT: test helpers
using backends::cpu::CpuAttentionIsa;
using V = std::vector<int64_t>;

constexpr char kTactic[] = "attention_cpu_tiled";
constexpr double kTol = 1e-5;

ir::Attributes attnAttrs(double scale, bool kT = false, bool nanToZero = false, int64_t layout = 0) {
  ir::Attributes r;
  r.set("scale", scale);
  r.set("k_transposed", static_cast<int64_t>(kT ? 1 : 0));
  r.set("nan_to_zero", static_cast<int64_t>(nanToZero ? 1 : 0));
  if (layout != 0) r.set("layout", layout);
  return r;
}

// Both loop sets (the portable ones on every machine, the AVX-512 ones where the CPU has them).
class CpuAttention : public ::testing::TestWithParam<CpuAttentionIsa> {
 protected:
  void SetUp() override { previous_ = backends::cpu::setCpuAttentionIsa(GetParam()); }
  void TearDown() override { backends::cpu::setCpuAttentionIsa(previous_); }

  double run(V q, V k, V v, ir::Attributes const& a, V mask = {}, int threads = 1) {
    std::vector<In> ins{var(randomTensor(q, 21)), var(randomTensor(k, 22)), var(randomTensor(v, 23))};
    if (!mask.empty()) ins.push_back(var(randomTensor(mask, 24)));
    return compareWithReference(kTactic, OpType::kAttention, a, ins, threads);
  }

 private:
  CpuAttentionIsa previous_ = CpuAttentionIsa::kAuto;
};

TEST_P(CpuAttention, EncoderAndVitShapes) {
  // BERT-base-shaped heads: [B*H, S, D] with k^T as the exporter leaves it; ViT's 197 tokens.
  EXPECT_LT(run({12, 128, 64}, {12, 64, 128}, {12, 128, 64}, attnAttrs(0.125, true)), kTol);
  EXPECT_LT(run({12, 128, 64}, {12, 128, 64}, {12, 128, 64}, attnAttrs(0.125), {}, 2), kTol);
  EXPECT_LT(run({1, 12, 197, 64}, {1, 12, 197, 64}, {1, 12, 197, 64}, attnAttrs(0.125), {}, 2), kTol);
}

TEST_P(CpuAttention, EdgeShapes) {
  EXPECT_LT(run({1, 1}, {1, 1}, {1, 1}, attnAttrs(1.0)), kTol);
  EXPECT_LT(run({3, 5}, {7, 5}, {7, 3}, attnAttrs(0.7)), kTol);      // one row block, a 7-of-32 column step
  EXPECT_LT(run({65, 8}, {33, 8}, {33, 17}, attnAttrs(0.3)), kTol);  // 2 blocks of 33 / 32 rows; dv 16 + 1
  EXPECT_LT(run({2, 131, 24}, {2, 24, 95}, {2, 95, 80}, attnAttrs(0.2, true), {}, 2), kTol);  // dv 64 + 16
  EXPECT_LT(run({1, 7, 128}, {1, 40, 128}, {1, 40, 128}, attnAttrs(0.09)), kTol);
  // Every remainder of the 8-row score tiles and the 6-row P * V tiles: 14 = 8 + 6 = 2 x 6 + 2, 23 = 2 x 8 + 7 =
  // 3 x 6 + 5; 80 keys end on a 16-column stripe.
  EXPECT_LT(run({3, 14, 8}, {3, 80, 8}, {3, 80, 8}, attnAttrs(0.5)), kTol);
  EXPECT_LT(run({3, 23, 8}, {3, 8, 80}, {3, 80, 48}, attnAttrs(0.5, true), {}, 2), kTol);
  EXPECT_LT(run({2, 3, 200, 16}, {2, 3, 300, 16}, {2, 3, 300, 16}, attnAttrs(0.25), {}, 2), kTol);  // many rows
}

TEST_P(CpuAttention, BatchBroadcast) {
  EXPECT_LT(run({2, 3, 9, 8}, {1, 3, 11, 8}, {2, 1, 11, 8}, attnAttrs(0.5)), kTol);
  EXPECT_LT(run({9, 8}, {4, 11, 8}, {11, 8}, attnAttrs(0.5)), kTol);  // q and v broadcast by rank
  EXPECT_LT(run({2, 1, 9, 8}, {3, 8, 11}, {1, 11, 16}, attnAttrs(0.5, true)), kTol);
}

TEST_P(CpuAttention, MasksBroadcastEveryWay) {
  V const q{2, 3, 37, 16}, k{2, 3, 45, 16}, v{2, 3, 45, 16};
  for (V const& m :
       {V{2, 3, 37, 45}, V{2, 1, 1, 45}, V{1, 3, 37, 1}, V{37, 45}, V{45}, V{1}, V{2, 1, 37, 45}, V{1, 1, 37, 1}})
    EXPECT_LT(run(q, k, v, attnAttrs(0.25), m, 2), kTol) << dimsToString(makeDims(m));
}

TEST_P(CpuAttention, Layout1) {
  // [B, S, H, D] operands: rows H * D apart.
  EXPECT_LT(run({2, 50, 3, 16}, {2, 70, 3, 16}, {2, 70, 3, 24}, attnAttrs(0.25, false, false, 1)), kTol);
  EXPECT_LT(
      run({1, 128, 12, 64}, {1, 128, 12, 64}, {1, 128, 12, 64}, attnAttrs(0.125, false, false, 1), {1, 1, 1, 128}, 2),
      kTol);
  EXPECT_LT(run({2, 9, 2, 8}, {2, 13, 2, 8}, {2, 13, 2, 8}, attnAttrs(0.5, false, true, 1), {2, 2, 9, 1}), kTol);
}

TEST_P(CpuAttention, Layout2AndPackedQkv) {
  // Layout 2: [S, B, H, D] operands (torchvision's sequence-first order).
  EXPECT_LT(run({50, 2, 3, 16}, {70, 2, 3, 16}, {70, 2, 3, 24}, attnAttrs(0.25, false, false, 2)), kTol);
  EXPECT_LT(run({9, 2, 2, 8}, {13, 2, 2, 8}, {13, 2, 2, 8}, attnAttrs(0.5, false, true, 2), {2, 2, 9, 1}, 2), kTol);
  // packed_qkv: q, k and v in one [B, S, 3, H, D] (layout 1) or [S, B, 3, H, D] (layout 2) tensor, y unpacked.
  for (int64_t layout : {int64_t{1}, int64_t{2}}) {
    ir::Attributes a = attnAttrs(0.125, false, false, layout);
    a.set("packed_qkv", int64_t{1});
    V const packed = layout == 1 ? V{2, 37, 3, 3, 16} : V{37, 2, 3, 3, 16};
    EXPECT_LT(compareWithReference(kTactic, OpType::kAttention, a,
                                   {var(randomTensor(packed, 31)), none(), none(), var(randomTensor({2, 1, 1, 37}, 32))},
                                   2),
              kTol)
        << "layout " << layout;
    EXPECT_LT(compareWithReference(kTactic, OpType::kAttention, a,
                                   {var(randomTensor(layout == 1 ? V{1, 197, 3, 4, 64} : V{197, 1, 3, 4, 64}, 33))},
                                   2),
              kTol)
        << "layout " << layout << ", ViT-B/16's token count";
  }
}

// A mask of -inf over whole rows (and partly over others): those rows are NaN, or 0 with nan_to_zero; the rest
// match the reference (nan_to_zero through the harness).
TEST_P(CpuAttention, NanRows) {
  int64_t const sq = 5, skv = 19, d = 8;
  HostTensor mask = randomTensor({sq, skv}, 5);
  auto* m = static_cast<float*>(mask.mutableData());
  float const inf = std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < skv; ++j) m[1 * skv + j] = -inf;     // row 1: every key masked
  for (int64_t j = 0; j < skv; j += 2) m[2 * skv + j] = -inf;  // row 2: half
  m[3 * skv + 4] = std::numeric_limits<float>::quiet_NaN();    // row 3: a NaN score
  m[4 * skv + 7] = inf;                                        // row 4: +inf
  HostTensor q = randomTensor({sq, d}, 1), k = randomTensor({skv, d}, 2), v = randomTensor({skv, d}, 3);
  for (bool nanToZero : {false, true}) {
    std::vector<float> y(static_cast<size_t>(sq * d), 42.f);
    backends::cpu::CpuAttentionArgs a;
    a.q = static_cast<float const*>(q.data());
    a.k = static_cast<float const*>(k.data());
    a.v = static_cast<float const*>(v.data());
    a.mask = m;
    a.y = y.data();
    a.sq = sq;
    a.skv = skv;
    a.d = d;
    a.dv = d;
    a.qRowStride = a.kRowStride = a.vRowStride = a.yRowStride = d;
    a.maskRowStride = skv;
    a.maskColStride = 1;
    a.scale = 0.5f;
    a.nanToZero = nanToZero;
    backends::cpu::runCpuAttention(a, 1);
    for (int64_t r = 0; r < sq; ++r)
      for (int64_t c = 0; c < d; ++c) {
        float const x = y[static_cast<size_t>(r * d + c)];
        bool const nanRow = r == 1 || r == 3 || r == 4;
        if (nanRow && nanToZero)
          EXPECT_EQ(x, 0.f) << r << "," << c;
        else if (nanRow)
          EXPECT_TRUE(std::isnan(x)) << r << "," << c;
        else
          EXPECT_TRUE(std::isfinite(x)) << r << "," << c;
      }
  }
  std::vector<In> ins{var(q), var(k), var(v), var(mask)};
  EXPECT_LT(compareWithReference(kTactic, OpType::kAttention, attnAttrs(0.5, false, true), ins), kTol);
}

// Strided operands straight through the argument struct: q, k, v as views of one [S, 3, H, D] tensor (the packed
// projection's layout), y [S, H, D]; the AVX-512 and portable loops agree with a plain loop.
TEST_P(CpuAttention, StridedViewsOfOnePackedTensor) {
  int64_t const s = 21, h = 3, d = 16;
  HostTensor qkv = randomTensor({s, 3, h, d}, 9);
  auto const* p = static_cast<float const*>(qkv.data());
  std::vector<float> y(static_cast<size_t>(s * h * d));
  backends::cpu::CpuAttentionArgs a;
  a.q = p;
  a.k = p + h * d;
  a.v = p + 2 * h * d;
  a.y = y.data();
  a.sq = a.skv = s;
  a.d = a.dv = d;
  a.batchRank = 1;
  a.batch[0] = h;
  a.qStride[0] = a.kStride[0] = a.vStride[0] = a.yStride[0] = d;
  a.qRowStride = a.kRowStride = a.vRowStride = 3 * h * d;
  a.yRowStride = h * d;
  a.scale = 0.25f;
  backends::cpu::runCpuAttention(a, 2);
  double num = 0, den = 0;
  for (int64_t hi = 0; hi < h; ++hi)
    for (int64_t i = 0; i < s; ++i) {
      std::vector<double> sc(static_cast<size_t>(s));
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < s; ++j) {
        double t = 0;
        for (int64_t c = 0; c < d; ++c)
          t += double(p[(i * 3 + 0) * h * d + hi * d + c]) * p[(j * 3 + 1) * h * d + hi * d + c];
        sc[static_cast<size_t>(j)] = t * 0.25;
        mx = std::max(mx, t * 0.25);
      }
      for (double& x : sc) sum += (x = std::exp(x - mx));
      for (int64_t c = 0; c < d; ++c) {
        double o = 0;
        for (int64_t j = 0; j < s; ++j) o += sc[static_cast<size_t>(j)] / sum * p[(j * 3 + 2) * h * d + hi * d + c];
        double const got = y[static_cast<size_t>(i * h * d + hi * d + c)];
        num += (got - o) * (got - o);
        den += o * o;
      }
    }
  EXPECT_LT(std::sqrt(num / den), kTol);
}

INSTANTIATE_TEST_SUITE_P(Isa, CpuAttention, ::testing::Values(CpuAttentionIsa::kAuto, CpuAttentionIsa::kPortable),
                         [](auto const& p) { return p.param == CpuAttentionIsa::kAuto ? "Auto" : "Portable"; });

TEST(CpuAttentionTactic, RefusesWhatItDoesNotRun) {
  auto n32 = makeNode(OpType::kAttention, attnAttrs(1.0),
                      {var(randomTensor({4, 8}, 1)), var(randomTensor({4, 8}, 2)), var(randomTensor({4, 8}, 3))});
  EXPECT_TRUE(tacticSupports(kTactic, n32));
  HostTensor h = *HostTensor::allocate(DataType::kHALF, makeDims({4, 8}), "h");
  auto n16 = makeNode(OpType::kAttention, attnAttrs(1.0), {var(h), var(h), var(h)});
  EXPECT_FALSE(tacticSupports(kTactic, n16));
}

TEST(CpuAttentionTactic, OneKernelFromManyThreads) {
  // The kernel is shared by an engine's contexts: four threads at once through the harness's single-kernel path
  // would each build their own, so run the loop itself from four threads on one set of arguments' inputs.
  int64_t const b = 4, s = 40, d = 16;
  HostTensor q = randomTensor({b, s, d}, 1), k = randomTensor({b, s, d}, 2), v = randomTensor({b, s, d}, 3);
  auto args = [&](std::vector<float>& y) {
    backends::cpu::CpuAttentionArgs a;
    a.q = static_cast<float const*>(q.data());
    a.k = static_cast<float const*>(k.data());
    a.v = static_cast<float const*>(v.data());
    a.y = y.data();
    a.sq = a.skv = s;
    a.d = a.dv = d;
    a.batchRank = 1;
    a.batch[0] = b;
    a.qStride[0] = a.kStride[0] = a.vStride[0] = a.yStride[0] = s * d;
    a.qRowStride = a.kRowStride = a.vRowStride = a.yRowStride = d;
    a.scale = 0.3f;
    return a;
  };
  std::vector<float> expect(static_cast<size_t>(b * s * d));
  backends::cpu::runCpuAttention(args(expect), 1);
  std::vector<std::vector<float>> ys(4, std::vector<float>(expect.size()));
  std::vector<std::thread> ts;
  for (auto& y : ys) ts.emplace_back([&] { backends::cpu::runCpuAttention(args(y), 2); });
  for (auto& t : ts) t.join();
  for (auto const& y : ys) EXPECT_EQ(y, expect);
}

// Prints the fused loop's time on BERT-base's (12 heads, S = 128, D = 64) and ViT-B/16's (S = 197) batch-1 shapes on
// two threads (median of 20 runs; compare with the unfused MatMul, Div, SoftMax, MatMul layers of kilnexec
// --dumpProfile), and checks that two threads give one thread's result exactly (each item is one thread's work).
TEST(CpuAttentionTactic, BenchmarkBertAndVitShapes) {
  for (int64_t s : {128, 197}) {
    int64_t const h = 12, d = 64;
    HostTensor q = randomTensor({h, s, d}, 1), k = randomTensor({h, s, d}, 2), v = randomTensor({h, s, d}, 3);
    std::vector<float> y1(static_cast<size_t>(h * s * d)), y2(y1.size());
    backends::cpu::CpuAttentionArgs a;
    a.q = static_cast<float const*>(q.data());
    a.k = static_cast<float const*>(k.data());
    a.v = static_cast<float const*>(v.data());
    a.sq = a.skv = s;
    a.d = a.dv = d;
    a.batchRank = 1;
    a.batch[0] = h;
    a.qStride[0] = a.kStride[0] = a.vStride[0] = a.yStride[0] = s * d;
    a.qRowStride = a.kRowStride = a.vRowStride = a.yRowStride = d;
    a.scale = 0.125f;
    a.y = y1.data();
    backends::cpu::runCpuAttention(a, 1);
    a.y = y2.data();
    std::vector<double> ms;
    for (int i = 0; i < 5; ++i) {  // a figure to read, not a benchmark (kept short for the sanitized unit tier)
      auto const t0 = std::chrono::steady_clock::now();
      backends::cpu::runCpuAttention(a, 2);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    EXPECT_EQ(y1, y2);
    std::sort(ms.begin(), ms.end());
    double const gflop = 4.0 * static_cast<double>(h * s * s * d) * 1e-9;
    std::printf("attention_cpu_tiled %s, 12 heads x %lld x 64, 2 threads: median %.3f ms (%.0f GFLOP/s), min %.3f ms\n",
                backends::cpu::cpuAttentionUsesAvx512() ? "AVX-512" : "portable", static_cast<long long>(s), ms[2],
                gflop / ms[2] * 1e3, ms[0]);
  }
}

}  // namespace
}  // namespace kiln
