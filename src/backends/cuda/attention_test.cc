// gpu tests of the fused attention kernels against the reference backend: fp32/fp16/bf16, query and key counts
// around the tiles (1, 7, 16, 64, 65, 128, 197, 300), head dims 8..128 (d != dv too), k transposed or not,
// broadcast batch dims, masks [B,1,1,S], [B,1,S,S], [1,1,1,S] and none, fully masked rows with and without
// nan_to_zero, and head dims the kernels refuse; the fp16/bf16 kernel at head dims 64, 128, 40, 72 and lengths
// 1..512, in both its 64-row and 16-row CTA forms, each mask staging (row-broadcast, tile; cp.async or plain
// loads; padded and strided masks), the key split over a cluster; q, k, v, y as [B, S, H, D] views through
// AttentionArgs' strides.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

constexpr DataType kFloats[] = {DataType::kFLOAT, DataType::kHALF, DataType::kBF16};

struct Shapes {
  std::vector<int64_t> q, k, v, mask;  // k as stored; mask empty: none
};

// [b, h, sq, d] x [b, h, skv, d] -> [b, h, sq, dv], k stored [b, h, d, skv] when kTransposed.
Shapes bhsd(int64_t b, int64_t h, int64_t sq, int64_t skv, int64_t d, int64_t dv, bool kTransposed) {
  Shapes s;
  s.q = {b, h, sq, d};
  s.k = kTransposed ? std::vector<int64_t>{b, h, d, skv} : std::vector<int64_t>{b, h, skv, d};
  s.v = {b, h, skv, dv};
  return s;
}

cudatest::NodeSpec spec(DataType t, Shapes const& s, double scale, bool kTransposed, bool nanToZero, uint32_t seed,
                        HostTensor const* mask = nullptr) {
  std::vector<In> in{var(randomTensor(t, s.q, seed, -2, 2)), var(randomTensor(t, s.k, seed + 1, -2, 2)),
                     var(randomTensor(t, s.v, seed + 2, -1, 1))};
  if (mask)
    in.push_back(var(*mask));
  else if (!s.mask.empty())
    in.push_back(var(randomTensor(t, s.mask, seed + 3, -4, 0)));
  return {ir::OpType::kAttention,
          attrs({{"scale", scale}, {"k_transposed", int64_t{kTransposed}}, {"nan_to_zero", int64_t{nanToZero}}}),
          std::move(in)};
}

// Forces the fp16/bf16 kernel's query rows per CTA while in scope.
class ScopedRowsPerCta {
 public:
  explicit ScopedRowsPerCta(int64_t rows) : previous_(cuda::setAttentionRowsPerCta(rows)) {}
  ~ScopedRowsPerCta() { cuda::setAttentionRowsPerCta(previous_); }
  ScopedRowsPerCta(ScopedRowsPerCta const&) = delete;
  ScopedRowsPerCta& operator=(ScopedRowsPerCta const&) = delete;

 private:
  int64_t previous_;
};

// Runs `check` under each query-rows-per-CTA form of the fp16/bf16 kernel (64 and 16; whichever the grid would
// pick), once for fp32, which has one form.
template <typename F>
void forEachRowTile(DataType t, F const& check) {
  for (int64_t rows : {cuda::kAttentionRowsPerTile, cuda::kAttentionSmallRowsPerTile}) {
    if (t == DataType::kFLOAT && rows != cuda::kAttentionRowsPerTile) continue;
    ScopedRowsPerCta forced(rows);
    SCOPED_TRACE(strCat(rows, " query rows per CTA"));
    check();
  }
}

TEST(CudaAttention, SequenceLengthsAroundTheTiles) {
  KILN_REQUIRE_GPU();
  std::pair<int64_t, int64_t> const lengths[] = {{1, 1},     {7, 300},   {16, 7},   {64, 64}, {65, 65},
                                                 {128, 128}, {197, 197}, {300, 65}, {1, 197}};
  for (DataType t : kFloats)
    for (int64_t d : {32, 64, 128})
      for (auto [sq, skv] : lengths) {
        SCOPED_TRACE(strCat(dataTypeName(t), " d ", d, " sq ", sq, " skv ", skv));
        forEachRowTile(t, [&] {
          expectMatchesReference(spec(t, bhsd(2, 3, sq, skv, d, d, false), 1.0 / std::sqrt(double(d)), false, false,
                                      static_cast<uint32_t>(sq * 7 + skv + d)));
        });
      }
}

TEST(CudaAttention, HeadDimsAndTransposedKeys) {
  KILN_REQUIRE_GPU();
  std::pair<int64_t, int64_t> const dims[] = {{8, 8}, {8, 128}, {40, 24}, {64, 32}, {128, 64}, {96, 96}, {16, 120}};
  for (DataType t : kFloats)
    for (auto [d, dv] : dims)
      for (bool kT : {false, true}) {
        SCOPED_TRACE(strCat(dataTypeName(t), " d ", d, " dv ", dv, " k transposed ", kT));
        forEachRowTile(t, [&] { expectMatchesReference(spec(t, bhsd(1, 4, 70, 131, d, dv, kT), 0.2, kT, false, 11)); });
      }
}

TEST(CudaAttention, Masks) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats)
    for (int64_t s : {7, 128, 197}) {
      for (auto mask : {std::vector<int64_t>{2, 1, 1, s}, std::vector<int64_t>{2, 1, s, s},
                        std::vector<int64_t>{1, 1, 1, s}, std::vector<int64_t>{s}, std::vector<int64_t>{2, 3, s, s}}) {
        SCOPED_TRACE(strCat(dataTypeName(t), " s ", s, " mask rank ", mask.size(), " [", mask[0], ",..]"));
        Shapes sh = bhsd(2, 3, s, s, 64, 64, false);
        sh.mask = mask;
        forEachRowTile(t, [&] { expectMatchesReference(spec(t, sh, 0.125, false, true, 5)); });
      }
    }
}

TEST(CudaAttention, BroadcastBatchDims) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    Shapes s;
    s.q = {2, 4, 33, 64};
    s.k = {2, 1, 50, 64};  // shared by the heads
    s.v = {50, 32};        // shared by everything
    s.mask = {4, 33, 50};
    expectMatchesReference(spec(t, s, 0.125, false, false, 21));
    Shapes flat;  // no batch dims at all
    flat.q = {20, 64};
    flat.k = {64, 90};
    flat.v = {90, 64};
    expectMatchesReference(spec(t, flat, 0.125, true, false, 22));
  }
}

// A [b, 1, sq, skv] mask of random values whose row `row` is `value` everywhere.
HostTensor maskWithRow(DataType t, int64_t b, int64_t sq, int64_t skv, int64_t row, double value) {
  std::vector<double> v = randomValues(static_cast<size_t>(b * sq * skv), 9, -4, 0);
  for (int64_t i = 0; i < b * sq * skv; ++i)
    if ((i / skv) % sq == row) v[static_cast<size_t>(i)] = value;
  return HostTensor::fromVector(t, makeDims({b, 1, sq, skv}), v);
}

TEST(CudaAttention, FullyMaskedRows) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats)
    for (int64_t skv : {7, 65, 300})
      for (bool nanToZero : {true, false}) {
        SCOPED_TRACE(strCat(dataTypeName(t), " skv ", skv, " nan_to_zero ", nanToZero));
        HostTensor m = maskWithRow(t, 2, 70, skv, 66, -INFINITY);
        // BERT's float32 mask value: finite in fp32 (a uniform row), -inf once cast to fp16/bf16 (a NaN row).
        HostTensor big = maskWithRow(t, 2, 70, skv, 3, -3.4e38);
        forEachRowTile(t, [&] {
          expectMatchesReference(spec(t, bhsd(2, 3, 70, skv, 64, 64, false), 0.125, false, nanToZero, 31, &m));
          expectMatchesReference(spec(t, bhsd(2, 3, 70, skv, 64, 64, false), 0.125, false, nanToZero, 32, &big));
        });
      }
}

// The fp16/bf16 kernel's cases: head dims at the 64 and 128 specializations and padded up to them (40, 72), key
// and query counts around the 64-key tiles, masks broadcast over heads and rows.
TEST(CudaAttention, MmaKernelTilesAndHeadDims) {
  KILN_REQUIRE_GPU();
  std::pair<int64_t, int64_t> const lengths[] = {{1, 1},     {63, 63}, {64, 64}, {65, 65},  {128, 128}, {197, 197},
                                                 {512, 512}, {1, 512}, {512, 1}, {63, 197}, {65, 128},  {197, 63}};
  for (DataType t : {DataType::kHALF, DataType::kBF16})
    for (int64_t d : {64, 128, 40, 72})
      for (auto [sq, skv] : lengths) {
        SCOPED_TRACE(strCat(dataTypeName(t), " d ", d, " sq ", sq, " skv ", skv));
        Shapes s = bhsd(2, 2, sq, skv, d, d, false);
        if ((sq + skv) % 2 == 0) s.mask = {2, 1, 1, skv};  // half of them with a per-batch key mask
        forEachRowTile(t, [&] {
          expectMatchesReference(
              spec(t, s, 1.0 / std::sqrt(double(d)), false, false, static_cast<uint32_t>(sq + skv + d)));
        });
      }
}

TEST(CudaAttention, MmaKernelMasksAndMaskedRows) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kHALF, DataType::kBF16})
    for (int64_t d : {128, 40}) {
      for (auto mask : {std::vector<int64_t>{2, 1, 1, 130}, std::vector<int64_t>{2, 1, 70, 130},
                        std::vector<int64_t>{1, 3, 70, 1}, std::vector<int64_t>{70, 130}}) {
        SCOPED_TRACE(strCat(dataTypeName(t), " d ", d, " mask rank ", mask.size(), " [", mask[0], ",..]"));
        Shapes sh = bhsd(2, 3, 70, 130, d, d, false);
        sh.mask = mask;
        forEachRowTile(t, [&] { expectMatchesReference(spec(t, sh, 0.125, false, false, 51)); });
      }
      for (bool nanToZero : {true, false}) {
        SCOPED_TRACE(strCat(dataTypeName(t), " d ", d, " fully masked rows, nan_to_zero ", nanToZero));
        HostTensor m = maskWithRow(t, 2, 70, 130, 64, -INFINITY);  // the first row of the second row tile
        forEachRowTile(t, [&] {
          expectMatchesReference(spec(t, bhsd(2, 3, 70, 130, d, d, false), 0.125, false, nanToZero, 52, &m));
        });
      }
    }
}

// ---- [B, S, H, D] views through AttentionArgs' row and batch strides (launchAttention called directly) ----

// The reference backend's attention of q [b, h, sq, d], k [b, h, skv, d], v [b, h, skv, dv] (mask optional).
std::optional<HostTensor> referenceAttention(HostTensor const& q, HostTensor const& k, HostTensor const& v,
                                             HostTensor const* mask, double scale, bool nanToZero) {
  ir::Graph g;
  std::vector<ir::Value*> vals;
  std::vector<HostTensor const*> ptrs{&q, &k, &v};
  if (mask) ptrs.push_back(mask);
  for (size_t i = 0; i < ptrs.size(); ++i)
    vals.push_back(*g.addInput(strCat("x", i), ptrs[i]->dtype(), ptrs[i]->shape()));
  ir::Node* n = g.addNode(ir::OpType::kAttention, "attention", vals, 1);
  n->attrs = attrs({{"scale", scale}, {"k_transposed", int64_t{0}}, {"nan_to_zero", int64_t{nanToZero}}});
  g.markOutput(n->outputs[0]);
  ir::HostEvaluator eval = backends::referenceEvaluator();
  Status inf = ir::inferGraphInPlace(g, &eval);
  EXPECT_TRUE(inf.isOk()) << inf.toString();
  if (!inf.isOk()) return std::nullopt;
  auto r = backends::evaluateOnHostDynamic(*n, ptrs, {{n->outputs[0]->dtype, n->outputs[0]->shape}});
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  if (!r.isOk()) return std::nullopt;
  return (*r)[0];
}

// Element (i0, i1, i2, i3) of a [n0, n1, n2, n3] row-major array with dims 1 and 2 swapped: [n0, n2, n1, n3].
int64_t swapped12(int64_t i, int64_t n1, int64_t n2, int64_t n3) {
  int64_t const i3 = i % n3, i2 = i / n3 % n2, i1 = i / (n3 * n2) % n1, i0 = i / (n3 * n2 * n1);
  return ((i0 * n2 + i2) * n1 + i1) * n3 + i3;
}

struct BshdCase {
  DataType t;
  int64_t b, h, sq, skv, d, dv;
  bool mask, nanToZero;
  int64_t qOffset;  // elements q's view starts past a 16-byte boundary (non-zero: the plain-load path)
  int64_t yPad;     // extra elements between y's rows (left as they were)
};

// q [b, sq, h, d], k [b, skv, h, d], v [b, skv, h, dv] and y [b, sq, h, dv (+ yPad per row)] passed as views with
// batch dims (b, h); the result must match the reference on the [b, h, s, d] copies, and y's padding must keep the
// bytes it had.
void expectBshdMatchesReference(BshdCase const& c) {
  SCOPED_TRACE(strCat(dataTypeName(c.t), " b ", c.b, " h ", c.h, " sq ", c.sq, " skv ", c.skv, " d ", c.d, " dv ", c.dv,
                      " mask ", c.mask, " nan_to_zero ", c.nanToZero, " q offset ", c.qOffset, " y pad ", c.yPad));
  auto values = [](int64_t n, uint32_t seed, double lo, double hi) {
    return randomValues(static_cast<size_t>(n), seed, lo, hi);
  };
  std::vector<double> const q = values(c.b * c.sq * c.h * c.d, 61, -2, 2);
  std::vector<double> const k = values(c.b * c.skv * c.h * c.d, 62, -2, 2);
  std::vector<double> const v = values(c.b * c.skv * c.h * c.dv, 63, -1, 1);
  std::vector<double> m = values(c.b * c.skv, 64, -4, 0);
  if (c.mask) m[0] = m[1] = -INFINITY;  // batch 0 keeps keys 2.. (all masked when skv <= 2: a NaN or zero row)
  // The device copies in [b, s, h, d]; the reference's in [b, h, s, d], from the values as rounded to c.t.
  HostTensor const qd = HostTensor::fromVector(c.t, makeDims({c.b, c.sq, c.h, c.d}), q);
  HostTensor const kd = HostTensor::fromVector(c.t, makeDims({c.b, c.skv, c.h, c.d}), k);
  HostTensor const vd = HostTensor::fromVector(c.t, makeDims({c.b, c.skv, c.h, c.dv}), v);
  HostTensor const md = HostTensor::fromVector(c.t, makeDims({c.b, 1, 1, c.skv}), m);
  auto toBhsd = [&](HostTensor const& x, int64_t s, int64_t d) {
    std::vector<double> r(static_cast<size_t>(x.count()));
    for (int64_t i = 0; i < x.count(); ++i) r[static_cast<size_t>(swapped12(i, s, c.h, d))] = x.doubleAt(i);
    return HostTensor::fromVector(c.t, makeDims({c.b, c.h, s, d}), r);
  };
  double const scale = 1.0 / std::sqrt(double(c.d));
  auto ref = referenceAttention(toBhsd(qd, c.sq, c.d), toBhsd(kd, c.skv, c.d), toBhsd(vd, c.skv, c.dv),
                                c.mask ? &md : nullptr, scale, c.nanToZero);
  if (!ref) return;

  size_t const e = dataTypeSize(c.t);
  int64_t const yRow = c.h * c.dv + c.yPad;
  size_t const yBytes = static_cast<size_t>(c.b * c.sq * yRow) * e;
  DeviceMemory dq(qd.bytes() + 16), dk(kd.bytes()), dv(vd.bytes()), dm(md.bytes()), dy(yBytes);
  auto* qView = static_cast<unsigned char*>(dq.p) + c.qOffset * static_cast<int64_t>(e);
  EXPECT_EQ(cudaMemcpy(qView, qd.data(), qd.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dk.p, kd.data(), kd.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dv.p, vd.data(), vd.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dm.p, md.data(), md.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemset(dy.p, 0x5a, yBytes), cudaSuccess);  // the padding's bytes must stay

  cuda::AttentionArgs a;
  a.q = qView;
  a.k = dk.p;
  a.v = dv.p;
  a.mask = c.mask ? dm.p : nullptr;
  a.y = dy.p;
  a.sq = c.sq;
  a.skv = c.skv;
  a.d = c.d;
  a.dv = c.dv;
  a.batchRank = 2;
  a.batch[0] = c.b;
  a.batch[1] = c.h;
  a.batchCount = c.b * c.h;
  a.qStride[0] = c.sq * c.h * c.d;
  a.qStride[1] = c.d;
  a.kStride[0] = c.skv * c.h * c.d;
  a.kStride[1] = c.d;
  a.vStride[0] = c.skv * c.h * c.dv;
  a.vStride[1] = c.dv;
  a.maskStride[0] = c.skv;
  a.maskColStride = 1;
  a.qRowStride = c.h * c.d;
  a.kRowStride = c.h * c.d;
  a.vRowStride = c.h * c.dv;
  a.yRowStride = yRow;
  a.yStride[0] = c.sq * yRow;
  a.yStride[1] = c.dv;
  a.yStrided = true;
  a.scale = static_cast<float>(scale);
  a.nanToZero = c.nanToZero;
  ASSERT_TRUE(cuda::launchAttention(static_cast<int32_t>(c.t), a, nullptr));
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  std::vector<unsigned char> y(yBytes);
  ASSERT_EQ(cudaMemcpy(y.data(), dy.p, yBytes, cudaMemcpyDeviceToHost), cudaSuccess);
  // y [b, sq, h, dv] (rows padded) back to [b, h, sq, dv]; the padding untouched.
  std::vector<double> got(static_cast<size_t>(c.b * c.h * c.sq * c.dv));
  int64_t padChanged = 0;
  for (int64_t r = 0; r < c.b * c.sq; ++r) {
    HostTensor const row = HostTensor::borrow(c.t, makeDims({yRow}), y.data() + static_cast<size_t>(r * yRow) * e);
    for (int64_t i = 0; i < c.h * c.dv; ++i)
      got[static_cast<size_t>(swapped12(r * c.h * c.dv + i, c.sq, c.h, c.dv))] = row.doubleAt(i);
    for (int64_t i = c.h * c.dv * static_cast<int64_t>(e); i < yRow * static_cast<int64_t>(e); ++i)
      padChanged += y[static_cast<size_t>(r * yRow) * e + static_cast<size_t>(i)] != 0x5a;
  }
  EXPECT_EQ(padChanged, 0) << "bytes written between y's rows";
  HostTensor const gotT = HostTensor::fromVector(c.t, ref->shape(), got);
  EXPECT_LE(normRelativeError(gotT, *ref), defaultTolerance(c.t));
}

TEST(CudaAttention, BshdViewsThroughStrides) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats)
    forEachRowTile(t, [&] {
      expectBshdMatchesReference({t, 2, 3, 65, 197, 64, 64, true, false, 0, 0});
      expectBshdMatchesReference({t, 2, 3, 128, 128, 128, 128, false, false, 0, 8});
      expectBshdMatchesReference({t, 2, 3, 63, 70, 40, 40, true, true, 0, 0});
      expectBshdMatchesReference({t, 1, 2, 1, 512, 72, 72, false, false, 0, 0});
      expectBshdMatchesReference({t, 2, 2, 2, 2, 64, 64, true, false, 0, 0});     // batch 0's rows fully masked: NaN
      expectBshdMatchesReference({t, 2, 2, 2, 2, 64, 64, true, true, 0, 0});      // ... and 0 with nan_to_zero
      expectBshdMatchesReference({t, 2, 3, 70, 100, 64, 32, true, false, 1, 3});  // unaligned q and y: plain loads
    });
}

// Not a check of speed: prints the kernel's time on BERT-base's attention (b 128, h 12, s 128, d 64), packed
// [b, h, s, d] and as [b, s, h, d] views, for issue 8's comparison (FLOPs = 4 b h s^2 d).
TEST(CudaAttention, BenchmarkBertBase) {
  KILN_REQUIRE_GPU();
  constexpr int64_t kB = 128, kH = 12, kS = 128, kD = 64;
  size_t const bytes = static_cast<size_t>(kB * kH * kS * kD) * 2;
  std::vector<double> host = randomValues(static_cast<size_t>(kB * kH * kS * kD), 71, -1, 1);
  HostTensor const x = HostTensor::fromVector(DataType::kHALF, makeDims({kB * kH * kS * kD}), host);
  DeviceMemory q(bytes), k(bytes), v(bytes), y(bytes);
  for (void* p : {q.p, k.p, v.p}) ASSERT_EQ(cudaMemcpy(p, x.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  for (bool bshd : {false, true}) {
    cuda::AttentionArgs a;
    a.q = q.p;
    a.k = k.p;
    a.v = v.p;
    a.y = y.p;
    a.sq = a.skv = kS;
    a.d = a.dv = kD;
    a.batchRank = 2;
    a.batch[0] = kB;
    a.batch[1] = kH;
    a.batchCount = kB * kH;
    a.scale = 0.125f;
    int64_t const batchStride0 = bshd ? kS * kH * kD : kH * kS * kD, batchStride1 = bshd ? kD : kS * kD;
    for (int64_t* s : {a.qStride, a.kStride, a.vStride, a.yStride}) {
      s[0] = batchStride0;
      s[1] = batchStride1;
    }
    a.yStrided = true;
    if (bshd) a.qRowStride = a.kRowStride = a.vRowStride = a.yRowStride = kH * kD;
    cudaEvent_t start = nullptr, stop = nullptr;
    ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
    ASSERT_EQ(cudaEventCreate(&stop), cudaSuccess);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(cuda::launchAttention(static_cast<int32_t>(DataType::kHALF), a, nullptr));
    constexpr int kIters = 20;
    ASSERT_EQ(cudaEventRecord(start, nullptr), cudaSuccess);
    for (int i = 0; i < kIters; ++i)
      ASSERT_TRUE(cuda::launchAttention(static_cast<int32_t>(DataType::kHALF), a, nullptr));
    ASSERT_EQ(cudaEventRecord(stop, nullptr), cudaSuccess);
    ASSERT_EQ(cudaEventSynchronize(stop), cudaSuccess);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    float ms = 0;
    ASSERT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
    (void)cudaEventDestroy(start);
    (void)cudaEventDestroy(stop);
    double const us = 1e3 * ms / kIters;
    double const tflops = 4.0 * kB * kH * kS * kS * kD / (us * 1e-6) / 1e12;
    std::printf("attention fp16 b%lld h%lld s%lld d%lld %s: %.1f us per launch, %.1f TFLOP/s\n",
                static_cast<long long>(kB), static_cast<long long>(kH), static_cast<long long>(kS),
                static_cast<long long>(kD), bshd ? "[b,s,h,d] views" : "[b,h,s,d]", us, tflops);
    // The output is a convex combination of v's values in [-1, 1].
    std::vector<uint16_t> out(1024);
    ASSERT_EQ(cudaMemcpy(out.data(), y.p, out.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    HostTensor const o = HostTensor::borrow(DataType::kHALF, makeDims({1024}), out.data());
    for (int64_t i = 0; i < o.count(); ++i) ASSERT_LE(std::fabs(o.doubleAt(i)), 1.0) << "element " << i;
  }
}

TEST(CudaAttention, RefusesWhatItCannotRun) {
  KILN_REQUIRE_GPU();
  // Head dims 12 (not a multiple of 8) and 136 (past 128): no CUDA tactic, the builder keeps the host fallback.
  for (auto [d, dv] : {std::pair<int64_t, int64_t>{12, 16}, {64, 136}}) {
    auto r =
        expectMatchesReference(spec(DataType::kHALF, bhsd(1, 2, 8, 8, d, dv, false), 0.5, false, false, 41), -1, 0);
    EXPECT_TRUE(r.empty()) << "d " << d << " dv " << dv;
  }
}

}  // namespace
}  // namespace kiln

// Layout 1 ([B, S, H, D] operands, fuse_attention's form for BERT): q [B, Sq, H, D], k [B, Skv, H, D], v [B, Skv,
// H, Dv] -> y [B, Sq, H, Dv] against the reference, over tile edges, d != dv, masks and fully masked rows; the
// kernels read the operands through row and batch strides.

namespace kiln {
namespace {

TEST(CudaAttention, BshdLayoutMatchesReference) {
  KILN_REQUIRE_GPU();
  struct Case {
    int64_t b, h, sq, skv, d, dv;
  };
  Case const cases[] = {{2, 3, 7, 300, 64, 64}, {1, 12, 128, 128, 64, 64}, {2, 4, 65, 197, 32, 48},
                        {3, 2, 1, 1, 8, 8},     {2, 2, 130, 64, 128, 128}, {1, 5, 64, 65, 96, 96}};
  for (DataType t : kFloats)
    for (Case const& c : cases)
      for (int maskKind = 0; maskKind < 4; ++maskKind) {
        SCOPED_TRACE(strCat(dataTypeName(t), " b ", c.b, " h ", c.h, " sq ", c.sq, " skv ", c.skv, " d ", c.d, " dv ",
                            c.dv, " mask ", maskKind));
        auto const seed = static_cast<uint32_t>(c.sq * 13 + c.skv + c.d + maskKind);
        std::vector<In> in{var(randomTensor(t, {c.b, c.sq, c.h, c.d}, seed, -2, 2)),
                           var(randomTensor(t, {c.b, c.skv, c.h, c.d}, seed + 1, -2, 2)),
                           var(randomTensor(t, {c.b, c.skv, c.h, c.dv}, seed + 2, -1, 1))};
        bool nanToZero = false;
        if (maskKind == 1) in.push_back(var(randomTensor(t, {c.b, 1, 1, c.skv}, seed + 3, -4, 0)));  // BERT's
        if (maskKind == 2) in.push_back(var(randomTensor(t, {c.b, c.h, c.sq, c.skv}, seed + 3, -4, 0)));
        if (maskKind == 3) {
          // Row sq/2 of every head fully masked; rows that the softmax makes NaN are 0.
          in.push_back(var(maskWithRow(t, c.b, c.sq, c.skv, c.sq / 2, -INFINITY)));
          nanToZero = true;
        }
        NodeSpec s{ir::OpType::kAttention,
                   attrs({{"scale", 1.0 / std::sqrt(double(c.d))},
                          {"k_transposed", int64_t{0}},
                          {"nan_to_zero", int64_t{nanToZero}},
                          {"layout", int64_t{1}}}),
                   std::move(in)};
        forEachRowTile(t, [&] { expectMatchesReference(s, -1, 1); });
      }
}

}  // namespace
}  // namespace kiln

// Layout 2 ([S, B, H, D] operands, torchvision's order) and packed q/k/v (input 0 [B, S, 3, H, D] or
// [S, B, 3, H, D], merge_qkv_projections' form): the same kernel through other offsets and strides, against the
// reference, over tile edges, masks, fully masked rows and head dims whose rows are not 16-byte aligned in fp16.

namespace kiln {
namespace {

struct HeadMajorCase {
  int64_t b, h, sq, skv, d, dv;
};

// The operand shapes of `c` in layout 1 or 2 (`s` the sequence, `last` the head dim).
std::vector<int64_t> ordered(int64_t layout, int64_t b, int64_t s, std::vector<int64_t> rest) {
  std::vector<int64_t> r = layout == 2 ? std::vector<int64_t>{s, b} : std::vector<int64_t>{b, s};
  r.insert(r.end(), rest.begin(), rest.end());
  return r;
}

NodeSpec headMajorSpec(DataType t, int64_t layout, bool packed, HeadMajorCase const& c, int maskKind) {
  auto const seed = static_cast<uint32_t>(c.sq * 13 + c.skv + c.d + maskKind + layout * 7 + packed);
  std::vector<In> in;
  if (packed) {
    in = {var(randomTensor(t, ordered(layout, c.b, c.sq, {3, c.h, c.d}), seed, -2, 2)), none(), none()};
  } else {
    in = {var(randomTensor(t, ordered(layout, c.b, c.sq, {c.h, c.d}), seed, -2, 2)),
          var(randomTensor(t, ordered(layout, c.b, c.skv, {c.h, c.d}), seed + 1, -2, 2)),
          var(randomTensor(t, ordered(layout, c.b, c.skv, {c.h, c.dv}), seed + 2, -1, 1))};
  }
  bool nanToZero = false;
  if (maskKind == 1) in.push_back(var(randomTensor(t, {c.b, 1, 1, c.skv}, seed + 3, -4, 0)));
  if (maskKind == 2) in.push_back(var(randomTensor(t, {c.b, c.h, c.sq, c.skv}, seed + 3, -4, 0)));
  if (maskKind == 3) {
    in.push_back(var(maskWithRow(t, c.b, c.sq, c.skv, c.sq / 2, -INFINITY)));
    nanToZero = true;
  }
  ir::Attributes a = attrs({{"scale", 1.0 / std::sqrt(double(c.d))},
                            {"k_transposed", int64_t{0}},
                            {"nan_to_zero", int64_t{nanToZero}},
                            {"layout", layout}});
  if (packed) a.setInt("packed_qkv", 1);
  return {ir::OpType::kAttention, std::move(a), std::move(in)};
}

TEST(CudaAttention, SbhdLayoutMatchesReference) {
  KILN_REQUIRE_GPU();
  HeadMajorCase const cases[] = {{2, 3, 7, 300, 64, 64}, {4, 12, 197, 197, 64, 64}, {2, 4, 65, 197, 32, 48},
                                 {3, 2, 1, 1, 8, 8},     {2, 2, 130, 64, 128, 128}, {1, 5, 64, 65, 40, 40}};
  for (DataType t : kFloats)
    for (HeadMajorCase const& c : cases)
      for (int maskKind = 0; maskKind < 4; ++maskKind) {
        SCOPED_TRACE(strCat(dataTypeName(t), " b ", c.b, " h ", c.h, " sq ", c.sq, " skv ", c.skv, " d ", c.d, " dv ",
                            c.dv, " mask ", maskKind));
        forEachRowTile(t, [&] { expectMatchesReference(headMajorSpec(t, 2, false, c, maskKind), -1, 1); });
      }
}

TEST(CudaAttention, PackedQkvMatchesReference) {
  KILN_REQUIRE_GPU();
  // One sequence (sq = skv) and dv = d: q, k and v are slots of one tensor.
  HeadMajorCase const cases[] = {{2, 3, 7, 7, 64, 64},  {4, 12, 197, 197, 64, 64},  {1, 12, 128, 128, 64, 64},
                                 {3, 2, 1, 1, 8, 8},    {2, 2, 130, 130, 128, 128}, {1, 5, 65, 65, 40, 40},
                                 {2, 3, 64, 64, 24, 24}};
  for (int64_t layout : {1, 2})
    for (DataType t : kFloats)
      for (HeadMajorCase const& c : cases)
        for (int maskKind = 0; maskKind < 4; ++maskKind) {
          SCOPED_TRACE(strCat("layout ", layout, " ", dataTypeName(t), " b ", c.b, " h ", c.h, " s ", c.sq, " d ", c.d,
                              " mask ", maskKind));
          forEachRowTile(t, [&] { expectMatchesReference(headMajorSpec(t, layout, true, c, maskKind), -1, 1); });
        }
}

// The tactic refuses what the kernels do not take in the new forms (head dims, a packed node with k or v
// present) at supports() time, so the builder never picks it for them.
// Checked without a device: the library's tactic list, not the installed backend's.
TEST(CudaAttention, PackedAndSbhdRefusals) {
  backends::Tactic const* tactic = nullptr;
  for (auto const& t : cuda::CudaTactics::instance().all())
    if (t.name == "attention_cuda_flash") tactic = &t;
  ASSERT_NE(tactic, nullptr);
  ir::Node n;
  n.op = ir::OpType::kAttention;
  n.name = "attention";
  n.attrs.setInt("layout", 2);
  n.attrs.setInt("packed_qkv", 1);
  auto info = [](std::vector<int64_t> const& s) { return ir::TensorInfo{DataType::kHALF, makeDims(s)}; };
  ir::TensorInfo absent{DataType::kHALF, Dims{-1, {}}};
  EXPECT_TRUE(tactic->supports(n, {info({197, 4, 3, 12, 64}), absent, absent}, {info({197, 4, 12, 64})}));
  EXPECT_TRUE(tactic->supports(n, {info({197, -1, 3, 12, 64})}, {info({197, -1, 12, 64})}));
  EXPECT_FALSE(tactic->supports(n, {info({197, 4, 3, 12, 60}), absent, absent}, {info({197, 4, 12, 60})}));
  EXPECT_FALSE(tactic->supports(n, {info({197, 4, 2, 12, 64}), absent, absent}, {info({197, 4, 12, 64})}));
  EXPECT_FALSE(
      tactic->supports(n, {info({197, 4, 3, 12, 64}), info({197, 4, 12, 64}), absent}, {info({197, 4, 12, 64})}));
  n.attrs.setInt("layout", 0);
  EXPECT_FALSE(tactic->supports(n, {info({197, 4, 3, 12, 64})}, {info({197, 4, 12, 64})}));
  n.attrs.setInt("layout", 2);
  n.attrs.setInt("packed_qkv", 0);
  EXPECT_TRUE(tactic->supports(n, {info({197, 4, 12, 64}), info({50, 4, 12, 64}), info({50, 4, 12, 32})},
                               {info({197, 4, 12, 32})}));
  EXPECT_FALSE(tactic->supports(n, {info({197, 4, 12, 64}), info({50, 3, 12, 64}), info({50, 4, 12, 32})},
                                {info({197, 4, 12, 32})}));
}

}  // namespace
}  // namespace kiln

// Mask staging (row-broadcast and tile modes, by cp.async and by plain loads, the last 16-byte chunk partly past the
// keys, padded and strided masks, -inf keys and rows) in both CTA forms, and the choice of the form by grid size.

namespace kiln {
namespace {

// Masks of every staging path over key counts around the 64-key tiles and the 8-key cp.async chunks: [b,1,1,skv] and
// [1,h,1,skv] (row mode; cp.async when skv is a multiple of 8, else plain loads), [skv] (row mode by cp.async, the
// last chunk partly past skv when skv is not a multiple of 8), [b,h,sq,skv] and [b,1,sq,skv] (tile mode; cp.async
// when skv is a multiple of 8), [b,1,sq,1] (tile mode, column stride 0: plain loads).
TEST(CudaAttention, MaskStagingPaths) {
  KILN_REQUIRE_GPU();
  std::pair<int64_t, int64_t> const lengths[] = {{70, 64}, {33, 77}, {70, 130}, {130, 136}, {1, 200}, {17, 9}};
  for (DataType t : {DataType::kHALF, DataType::kBF16})
    for (int64_t d : {64, 40, 128})
      for (auto [sq, skv] : lengths)
        for (auto const& mask : {std::vector<int64_t>{2, 1, 1, skv}, std::vector<int64_t>{1, 3, 1, skv},
                                 std::vector<int64_t>{skv}, std::vector<int64_t>{2, 3, sq, skv},
                                 std::vector<int64_t>{2, 1, sq, skv}, std::vector<int64_t>{2, 1, sq, 1}}) {
          SCOPED_TRACE(
              strCat(dataTypeName(t), " d ", d, " sq ", sq, " skv ", skv, " mask ", dimsToString(makeDims(mask))));
          Shapes sh = bhsd(2, 3, sq, skv, d, d, false);
          sh.mask = mask;
          auto const seed = static_cast<uint32_t>(sq * 5 + skv * 3 + d + mask.size() * 17 + mask[0]);
          forEachRowTile(t,
                         [&] { expectMatchesReference(spec(t, sh, 1.0 / std::sqrt(double(d)), false, false, seed)); });
        }
}

// -inf keys in both modes: a row-broadcast mask that masks every key of batch entry 1 (all its rows NaN, or 0 with
// nan_to_zero) and keys [60, 70) of batch entry 0 (across the first tile boundary: finite rows); a tile mask with
// rows 15, 16 (either side of a 16-row CTA boundary) and 63 fully masked.
TEST(CudaAttention, MaskInfinitiesInBothModes) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kHALF, DataType::kBF16})
    for (int64_t skv : {65, 130, 200})
      for (bool nanToZero : {false, true}) {
        SCOPED_TRACE(strCat(dataTypeName(t), " skv ", skv, " nan_to_zero ", nanToZero));
        std::vector<double> rows = randomValues(static_cast<size_t>(2 * skv), 81, -4, 0);
        for (int64_t c = 0; c < skv; ++c) {
          if (c >= 60 && c < 70) rows[static_cast<size_t>(c)] = -INFINITY;
          rows[static_cast<size_t>(skv + c)] = -INFINITY;
        }
        HostTensor const rowMask = HostTensor::fromVector(t, makeDims({2, 1, 1, skv}), rows);
        std::vector<double> tile = randomValues(static_cast<size_t>(2 * 70 * skv), 82, -4, 0);
        for (int64_t i = 0; i < 2 * 70 * skv; ++i) {
          int64_t const r = i / skv % 70;
          if (r == 15 || r == 16 || r == 63) tile[static_cast<size_t>(i)] = -INFINITY;
        }
        HostTensor const tileMask = HostTensor::fromVector(t, makeDims({2, 1, 70, skv}), tile);
        forEachRowTile(t, [&] {
          expectMatchesReference(spec(t, bhsd(2, 3, 70, skv, 64, 64, false), 0.125, false, nanToZero, 83, &rowMask));
          expectMatchesReference(spec(t, bhsd(2, 3, 70, skv, 64, 64, false), 0.125, false, nanToZero, 84, &tileMask));
        });
      }
}

struct StridedMaskCase {
  DataType t;
  int64_t b, h, sq, skv, d;
  int64_t rowStride, colStride;  // the mask's, in elements (row stride 0: one row for every query)
};

// q [b,h,sq,d], k, v [b,h,skv,d] packed and a mask given to launchAttention through strides no tensor shape gives
// (rows padded, keys every other element), shared by the heads; every element the strides do not reach is NaN, so
// reading one shows. The reference gets the dense [b,1,sq,skv] mask gathered through the same strides.
void expectStridedMaskMatchesReference(StridedMaskCase const& c) {
  SCOPED_TRACE(strCat(dataTypeName(c.t), " b ", c.b, " h ", c.h, " sq ", c.sq, " skv ", c.skv, " d ", c.d,
                      " mask row stride ", c.rowStride, " column stride ", c.colStride));
  auto roundUp8 = [](int64_t x) { return (x + 7) / 8 * 8; };
  int64_t const batchStride = roundUp8(std::max(c.sq * c.rowStride, c.skv * c.colStride)) + 8;
  std::vector<double> buffer(static_cast<size_t>(c.b * batchStride), NAN);
  std::vector<double> const values = randomValues(static_cast<size_t>(c.b * c.sq * c.skv), 91, -4, 0);
  auto at = [&](int64_t bi, int64_t r, int64_t k) {
    return static_cast<size_t>(bi * batchStride + r * c.rowStride + k * c.colStride);
  };
  for (int64_t bi = 0; bi < c.b; ++bi)
    for (int64_t r = 0; r < c.sq; ++r)
      for (int64_t k = 0; k < c.skv; ++k)
        buffer[at(bi, r, k)] = values[static_cast<size_t>((bi * c.sq + r) * c.skv + k)];
  std::vector<double> dense(static_cast<size_t>(c.b * c.sq * c.skv));
  for (int64_t bi = 0; bi < c.b; ++bi)
    for (int64_t r = 0; r < c.sq; ++r)
      for (int64_t k = 0; k < c.skv; ++k)
        dense[static_cast<size_t>((bi * c.sq + r) * c.skv + k)] = buffer[at(bi, r, k)];
  HostTensor const q = randomTensor(c.t, {c.b, c.h, c.sq, c.d}, 92, -2, 2);
  HostTensor const k = randomTensor(c.t, {c.b, c.h, c.skv, c.d}, 93, -2, 2);
  HostTensor const v = randomTensor(c.t, {c.b, c.h, c.skv, c.d}, 94, -1, 1);
  HostTensor const m = HostTensor::fromVector(c.t, makeDims({c.b * batchStride}), buffer);
  HostTensor const md = HostTensor::fromVector(c.t, makeDims({c.b, 1, c.sq, c.skv}), dense);
  double const scale = 1.0 / std::sqrt(double(c.d));
  auto ref = referenceAttention(q, k, v, &md, scale, false);
  if (!ref) return;

  DeviceMemory dq(q.bytes()), dk(k.bytes()), dv(v.bytes()), dm(m.bytes()), dy(ref->bytes());
  EXPECT_EQ(cudaMemcpy(dq.p, q.data(), q.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dk.p, k.data(), k.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dv.p, v.data(), v.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dm.p, m.data(), m.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  cuda::AttentionArgs a;
  a.q = dq.p;
  a.k = dk.p;
  a.v = dv.p;
  a.mask = dm.p;
  a.y = dy.p;
  a.sq = c.sq;
  a.skv = c.skv;
  a.d = a.dv = c.d;
  a.batchRank = 2;
  a.batch[0] = c.b;
  a.batch[1] = c.h;
  a.batchCount = c.b * c.h;
  a.qStride[0] = c.h * c.sq * c.d;
  a.qStride[1] = c.sq * c.d;
  a.kStride[0] = a.vStride[0] = c.h * c.skv * c.d;
  a.kStride[1] = a.vStride[1] = c.skv * c.d;
  a.maskStride[0] = batchStride;  // maskStride[1] 0: shared by the heads
  a.maskRowStride = c.rowStride;
  a.maskColStride = c.colStride;
  a.scale = static_cast<float>(scale);
  ASSERT_TRUE(cuda::launchAttention(static_cast<int32_t>(c.t), a, nullptr));
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<unsigned char> y(ref->bytes());
  ASSERT_EQ(cudaMemcpy(y.data(), dy.p, y.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_LE(normRelativeError(HostTensor::borrow(c.t, ref->shape(), y.data()), *ref), defaultTolerance(c.t));
}

TEST(CudaAttention, MaskThroughOddStrides) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kHALF, DataType::kBF16})
    forEachRowTile(t, [&] {
      expectStridedMaskMatchesReference({t, 2, 3, 70, 70, 64, 72, 1});    // tile, cp.async, last chunk 6 of 8 keys
      expectStridedMaskMatchesReference({t, 2, 3, 70, 130, 64, 133, 1});  // tile, odd row stride: plain loads
      expectStridedMaskMatchesReference({t, 1, 2, 33, 77, 40, 160, 2});   // tile, column stride 2: plain loads
      expectStridedMaskMatchesReference({t, 2, 3, 70, 77, 64, 0, 1});     // row, cp.async, last chunk 5 of 8 keys
      expectStridedMaskMatchesReference({t, 2, 2, 17, 100, 128, 0, 3});   // row, column stride 3: plain loads
    });
  // A negative mask stride is refused.
  cuda::AttentionArgs a;
  a.sq = a.skv = 8;
  a.d = a.dv = 64;
  a.mask = &a;  // never read: the call returns before launching
  a.maskColStride = -1;
  EXPECT_FALSE(cuda::launchAttention(static_cast<int32_t>(DataType::kHALF), a, nullptr));
}

// The form chosen by grid size (nothing forced): layout 1 with BERT's [b,1,1,s] key mask. 16-row CTAs with the key
// split where there are at least 4 key tiles and twice the 16-row CTAs are at most the SMs (b1 h2 s300: 38 of
// them), 64-row CTAs otherwise: fewer than 4 key tiles (b1 h1 s1, b1 h12 s128, b3 h5 s65, b8 h12 s128) or too many
// 16-row CTAs to split (b2 h16 s200, b1 h12 s384).
TEST(CudaAttention, RowsPerCtaChosenByGridSize) {
  KILN_REQUIRE_GPU();
  ScopedRowsPerCta automatic(0);
  struct Case {
    int64_t b, h, s;
  };
  for (DataType t : {DataType::kHALF, DataType::kBF16})
    for (Case const c : {Case{1, 1, 1}, Case{1, 12, 128}, Case{2, 16, 200}, Case{3, 5, 65}, Case{8, 12, 128},
                         Case{1, 12, 384}, Case{1, 2, 300}}) {
      SCOPED_TRACE(strCat(dataTypeName(t), " b ", c.b, " h ", c.h, " s ", c.s));
      auto const seed = static_cast<uint32_t>(c.b * 31 + c.h * 7 + c.s);
      std::vector<double> m = randomValues(static_cast<size_t>(c.b * c.s), seed, -4, 0);
      if (c.s > 8) m[static_cast<size_t>(c.s - 1)] = m[static_cast<size_t>(c.s - 2)] = -10000;  // padding keys
      std::vector<In> in{var(randomTensor(t, {c.b, c.s, c.h, 64}, seed + 1, -2, 2)),
                         var(randomTensor(t, {c.b, c.s, c.h, 64}, seed + 2, -2, 2)),
                         var(randomTensor(t, {c.b, c.s, c.h, 64}, seed + 3, -1, 1)),
                         var(HostTensor::fromVector(t, makeDims({c.b, 1, 1, c.s}), m))};
      NodeSpec s{
          ir::OpType::kAttention,
          attrs({{"scale", 0.125}, {"k_transposed", int64_t{0}}, {"nan_to_zero", int64_t{0}}, {"layout", int64_t{1}}}),
          std::move(in)};
      expectMatchesReference(s, -1, 1);
    }
}

}  // namespace
}  // namespace kiln

// The key split of the 16-row form (several CTAs of one cluster per query tile, combined through distributed shared
// memory): forced split counts over key counts around the tiles, masks of both modes, runs whose keys are all -inf,
// fully masked rows, layouts 1 and 2 and packed q/k/v; and the split chosen by grid size.

namespace kiln {
namespace {

// Forces the key split while in scope.
class ScopedKeySplits {
 public:
  explicit ScopedKeySplits(int64_t splits) : previous_(cuda::setAttentionKeySplits(splits)) {}
  ~ScopedKeySplits() { cuda::setAttentionKeySplits(previous_); }
  ScopedKeySplits(ScopedKeySplits const&) = delete;
  ScopedKeySplits& operator=(ScopedKeySplits const&) = delete;

 private:
  int64_t previous_;
};

TEST(CudaAttention, KeySplitsMatchReference) {
  KILN_REQUIRE_GPU();
  ScopedRowsPerCta rows(cuda::kAttentionSmallRowsPerTile);
  std::pair<int64_t, int64_t> const lengths[] = {{1, 129}, {7, 300}, {16, 520}, {33, 1000}, {70, 130}, {5, 64}};
  for (DataType t : {DataType::kHALF, DataType::kBF16})
    for (int64_t d : {64, 128, 40})
      for (auto [sq, skv] : lengths)
        for (int maskKind = 0; maskKind < 3; ++maskKind)
          for (int64_t splits : {2, 3, 8}) {
            SCOPED_TRACE(
                strCat(dataTypeName(t), " d ", d, " sq ", sq, " skv ", skv, " mask ", maskKind, " splits ", splits));
            ScopedKeySplits forced(splits);
            Shapes sh = bhsd(2, 3, sq, skv, d, d, false);
            if (maskKind == 1) sh.mask = {2, 1, 1, skv};
            if (maskKind == 2) sh.mask = {2, 3, sq, skv};
            expectMatchesReference(
                spec(t, sh, 1.0 / std::sqrt(double(d)), false, false, static_cast<uint32_t>(sq + skv + d + maskKind)));
          }
}

// -inf over whole runs: batch entry 0 masks keys [0, 256) (the first runs of 2, 3 and 8 splits see only -inf and
// must weigh nothing), batch entry 1 every key (NaN rows, or 0 with nan_to_zero); k transposed (plain loads) too.
TEST(CudaAttention, KeySplitsWithMaskedRuns) {
  KILN_REQUIRE_GPU();
  ScopedRowsPerCta rows(cuda::kAttentionSmallRowsPerTile);
  constexpr int64_t kSkv = 600;
  std::vector<double> m = randomValues(2 * kSkv, 111, -4, 0);
  for (int64_t c = 0; c < kSkv; ++c) {
    if (c < 256) m[static_cast<size_t>(c)] = -INFINITY;
    m[static_cast<size_t>(kSkv + c)] = -INFINITY;
  }
  for (DataType t : {DataType::kHALF, DataType::kBF16}) {
    HostTensor const mask = HostTensor::fromVector(t, makeDims({2, 1, 1, kSkv}), m);
    for (int64_t splits : {2, 3, 8})
      for (bool nanToZero : {false, true})
        for (bool kT : {false, true}) {
          SCOPED_TRACE(strCat(dataTypeName(t), " splits ", splits, " nan_to_zero ", nanToZero, " k transposed ", kT));
          ScopedKeySplits forced(splits);
          expectMatchesReference(spec(t, bhsd(2, 2, 20, kSkv, 64, 64, kT), 0.125, kT, nanToZero, 112, &mask));
        }
  }
}

TEST(CudaAttention, KeySplitsInHeadMajorLayouts) {
  KILN_REQUIRE_GPU();
  ScopedRowsPerCta rows(cuda::kAttentionSmallRowsPerTile);
  ScopedKeySplits forced(4);
  HeadMajorCase const cases[] = {{1, 3, 40, 40, 64, 64}, {2, 2, 300, 300, 64, 64}, {1, 2, 130, 130, 128, 128}};
  for (DataType t : {DataType::kHALF, DataType::kBF16})
    for (HeadMajorCase const& c : cases)
      for (int maskKind = 0; maskKind < 4; ++maskKind) {
        SCOPED_TRACE(strCat(dataTypeName(t), " b ", c.b, " h ", c.h, " s ", c.sq, " mask ", maskKind));
        expectMatchesReference(headMajorSpec(t, 1, false, c, maskKind), -1, 1);
        expectMatchesReference(headMajorSpec(t, 2, true, c, maskKind), -1, 1);
      }
}

// Nothing forced: few queries over many keys split (b1 h2 sq 1 and 20 over 2,048 and 4,100 keys: 2 CTAs of 16 rows,
// 8 splits); many queries do not (b4 h12 sq 512: 64-row CTAs).
TEST(CudaAttention, KeySplitsChosenByGridSize) {
  KILN_REQUIRE_GPU();
  ScopedRowsPerCta rows(0);
  ScopedKeySplits splits(0);
  struct Case {
    int64_t b, h, sq, skv;
  };
  for (DataType t : {DataType::kHALF, DataType::kBF16})
    for (Case const c : {Case{1, 2, 1, 2048}, Case{1, 2, 20, 4100}, Case{4, 12, 512, 512}}) {
      SCOPED_TRACE(strCat(dataTypeName(t), " b ", c.b, " h ", c.h, " sq ", c.sq, " skv ", c.skv));
      Shapes sh = bhsd(c.b, c.h, c.sq, c.skv, 64, 64, false);
      sh.mask = {c.b, 1, 1, c.skv};
      expectMatchesReference(spec(t, sh, 0.125, false, false, static_cast<uint32_t>(c.sq + c.skv)));
    }
}

}  // namespace
}  // namespace kiln
