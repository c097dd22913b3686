// gpu tests of the fused attention kernels against the reference backend: fp32/fp16/bf16, query and key counts
// around the tiles (1, 7, 16, 64, 65, 128, 197, 300), head dims 8..128 (d != dv too), k transposed or not,
// broadcast batch dims, masks [B,1,1,S], [B,1,S,S], [1,1,1,S] and none, fully masked rows with and without
// nan_to_zero, and head dims the kernels refuse.
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

TEST(CudaAttention, SequenceLengthsAroundTheTiles) {
  KILN_REQUIRE_GPU();
  std::pair<int64_t, int64_t> const lengths[] = {{1, 1},     {7, 300},   {16, 7},   {64, 64}, {65, 65},
                                                 {128, 128}, {197, 197}, {300, 65}, {1, 197}};
  for (DataType t : kFloats)
    for (int64_t d : {32, 64, 128})
      for (auto [sq, skv] : lengths) {
        SCOPED_TRACE(strCat(dataTypeName(t), " d ", d, " sq ", sq, " skv ", skv));
        expectMatchesReference(spec(t, bhsd(2, 3, sq, skv, d, d, false), 1.0 / std::sqrt(double(d)), false, false,
                                    static_cast<uint32_t>(sq * 7 + skv + d)));
      }
}

TEST(CudaAttention, HeadDimsAndTransposedKeys) {
  KILN_REQUIRE_GPU();
  std::pair<int64_t, int64_t> const dims[] = {{8, 8}, {8, 128}, {40, 24}, {64, 32}, {128, 64}, {96, 96}, {16, 120}};
  for (DataType t : kFloats)
    for (auto [d, dv] : dims)
      for (bool kT : {false, true}) {
        SCOPED_TRACE(strCat(dataTypeName(t), " d ", d, " dv ", dv, " k transposed ", kT));
        expectMatchesReference(spec(t, bhsd(1, 4, 70, 131, d, dv, kT), 0.2, kT, false, 11));
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
        expectMatchesReference(spec(t, sh, 0.125, false, true, 5));
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
        expectMatchesReference(spec(t, bhsd(2, 3, 70, skv, 64, 64, false), 0.125, false, nanToZero, 31, &m));
        // BERT's float32 mask value: finite in fp32 (a uniform row), -inf once cast to fp16/bf16 (a NaN row).
        HostTensor big = maskWithRow(t, 2, 70, skv, 3, -3.4e38);
        expectMatchesReference(spec(t, bhsd(2, 3, 70, skv, 64, 64, false), 0.125, false, nanToZero, 32, &big));
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
