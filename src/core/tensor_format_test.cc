// Tests of the TensorFormat layouts: vectorized dims, padded sizes, TensorRT-style strides, offsets checked
// against hand-written index formulas, and the I/O type/rank rules.
#include "core/tensor_format.h"

#include <gtest/gtest.h>

#include "core/dims.h"

namespace kiln {
namespace {

Dims dims(std::initializer_list<int64_t> v) {
  Dims d{};
  d.nbDims = static_cast<int32_t>(v.size());
  int32_t i = 0;
  for (int64_t x : v) d.d[i++] = x;
  return d;
}

FormatLayout layout(TensorFormat f, int32_t rank) {
  auto l = formatLayout(f, rank);
  EXPECT_TRUE(l.isOk()) << l.status().toString();
  return l.isOk() ? *l : FormatLayout{};
}

TEST(TensorFormat, VectorizedDimAndComponents) {
  EXPECT_EQ(layout(TensorFormat::kLINEAR, 4).vecDim, -1);
  EXPECT_EQ(layout(TensorFormat::kHWC8, 4).vecDim, 1);
  EXPECT_EQ(layout(TensorFormat::kHWC8, 4).components, 8);
  EXPECT_TRUE(layout(TensorFormat::kHWC8, 4).vectorMinor);
  EXPECT_EQ(layout(TensorFormat::kCHW32, 3).vecDim, 0);
  EXPECT_FALSE(layout(TensorFormat::kCHW32, 3).vectorMinor);
  EXPECT_EQ(layout(TensorFormat::kDHWC8, 5).vecDim, 1);
  EXPECT_EQ(layout(TensorFormat::kCDHW32, 5).vecDim, 1);
  EXPECT_EQ(layout(TensorFormat::kCHW4, 5).vecDim, 2);  // third to last
  EXPECT_EQ(layout(TensorFormat::kHWC, 4).components, 1);
  EXPECT_FALSE(formatLayout(TensorFormat::kCHW4, 2).isOk());
  EXPECT_FALSE(formatLayout(TensorFormat::kDHWC8, 3).isOk());
  auto dla = formatLayout(TensorFormat::kDLA_HWC4, 4);
  ASSERT_FALSE(dla.isOk());
  EXPECT_NE(dla.status().message().find("DLA"), std::string::npos);
  EXPECT_FALSE(formatLayout(static_cast<TensorFormat>(13), 4).isOk());
}

TEST(TensorFormat, PaddedSizes) {
  EXPECT_EQ(*formatBytes(dims({2, 3, 5, 7}), DataType::kHALF, TensorFormat::kHWC8), 2 * 8 * 5 * 7 * 2);
  EXPECT_EQ(*formatBytes(dims({2, 33, 5, 7}), DataType::kINT8, TensorFormat::kCHW32), 2 * 64 * 5 * 7);
  EXPECT_EQ(*formatBytes(dims({2, 3, 5, 7}), DataType::kFLOAT, TensorFormat::kHWC), 2 * 3 * 5 * 7 * 4);
  EXPECT_EQ(*formatBytes(dims({1, 5, 2, 3, 4}), DataType::kHALF, TensorFormat::kDHWC8), 8 * 2 * 3 * 4 * 2);
  EXPECT_EQ(*formatBytes(dims({0, 5, 2, 3}), DataType::kHALF, TensorFormat::kCHW2), 0);
}

// Hand-written index formulas for a 4-D [N, C, H, W] tensor.
int64_t chwV(int64_t n, int64_t c, int64_t h, int64_t w, Dims const& d, int64_t v) {
  int64_t cv = (d.d[1] + v - 1) / v;
  return (((n * cv + c / v) * d.d[2] + h) * d.d[3] + w) * v + c % v;
}
int64_t hwcV(int64_t n, int64_t c, int64_t h, int64_t w, Dims const& d, int64_t v) {
  int64_t cp = (d.d[1] + v - 1) / v * v;
  return ((n * d.d[2] + h) * d.d[3] + w) * cp + c;
}

TEST(TensorFormat, OffsetsMatchTheLayoutFormulas) {
  Dims d = dims({2, 5, 3, 4});
  struct Case {
    TensorFormat f;
    int64_t v;
    bool minor;
  };
  for (Case k :
       {Case{TensorFormat::kCHW2, 2, false}, Case{TensorFormat::kCHW4, 4, false}, Case{TensorFormat::kCHW16, 16, false},
        Case{TensorFormat::kCHW32, 32, false}, Case{TensorFormat::kHWC8, 8, true}, Case{TensorFormat::kHWC16, 16, true},
        Case{TensorFormat::kHWC, 1, true}, Case{TensorFormat::kLINEAR, 1, false}}) {
    FormatLayout l = layout(k.f, 4);
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < 5; ++c)
        for (int64_t h = 0; h < 3; ++h)
          for (int64_t w = 0; w < 4; ++w) {
            int64_t coord[4] = {n, c, h, w};
            int64_t want = k.minor ? hwcV(n, c, h, w, d, k.v) : chwV(n, c, h, w, d, k.v);
            ASSERT_EQ(formatOffset(d, l, coord), want) << formatName(k.f) << " at " << n << c << h << w;
          }
  }
}

TEST(TensorFormat, StridesInVectors) {
  Dims d = dims({2, 5, 3, 4});
  // kHWC8: one element is a vector of 8 channels; memory [N][H][W][1 vector].
  EXPECT_EQ(dimsToString(formatStrides(d, layout(TensorFormat::kHWC8, 4))), dimsToString(dims({12, 1, 4, 1})));
  // kCHW4: [N][2 vectors of C][H][W].
  EXPECT_EQ(dimsToString(formatStrides(d, layout(TensorFormat::kCHW4, 4))), dimsToString(dims({24, 12, 4, 1})));
  EXPECT_EQ(dimsToString(formatStrides(d, layout(TensorFormat::kHWC, 4))), dimsToString(dims({60, 1, 20, 5})));
  EXPECT_EQ(dimsToString(formatStrides(d, layout(TensorFormat::kLINEAR, 4))), dimsToString(dims({60, 12, 4, 1})));
}

TEST(TensorFormat, IOTypeRules) {
  EXPECT_TRUE(checkIOFormat(TensorFormat::kHWC8, DataType::kHALF, 4).isOk());
  EXPECT_TRUE(checkIOFormat(TensorFormat::kHWC8, DataType::kBF16, 3).isOk());
  EXPECT_FALSE(checkIOFormat(TensorFormat::kHWC8, DataType::kFLOAT, 4).isOk());
  EXPECT_TRUE(checkIOFormat(TensorFormat::kCHW4, DataType::kINT8, 4).isOk());
  EXPECT_FALSE(checkIOFormat(TensorFormat::kCHW4, DataType::kFLOAT, 4).isOk());
  EXPECT_TRUE(checkIOFormat(TensorFormat::kCHW32, DataType::kFLOAT, 4).isOk());
  EXPECT_TRUE(checkIOFormat(TensorFormat::kHWC, DataType::kUINT8, 4).isOk());
  EXPECT_FALSE(checkIOFormat(TensorFormat::kHWC, DataType::kHALF, 4).isOk());
  EXPECT_FALSE(checkIOFormat(TensorFormat::kHWC16, DataType::kBF16, 4).isOk());
  EXPECT_FALSE(checkIOFormat(TensorFormat::kDHWC, DataType::kFLOAT, 3).isOk());
  EXPECT_TRUE(checkIOFormat(TensorFormat::kCDHW32, DataType::kINT8, 5).isOk());
  EXPECT_TRUE(checkIOFormat(TensorFormat::kLINEAR, DataType::kINT64, 1).isOk());
  EXPECT_FALSE(checkIOFormat(TensorFormat::kDLA_LINEAR, DataType::kHALF, 4).isOk());
}

TEST(TensorFormat, NamesAndDescriptions) {
  EXPECT_EQ(formatSetToString((1U << 2) | (1U << 5)), "kHWC8 | kCHW32");
  EXPECT_EQ(formatSetToString(0), "none");
  EXPECT_EQ(formatDescription(TensorFormat::kHWC8, DataType::kHALF),
            "Channel major FP16 format where channel % 8 == 0 (kHWC8)");
  EXPECT_EQ(formatDescription(TensorFormat::kLINEAR, DataType::kFLOAT), "Row major linear FP32 format (kLINEAR)");
  EXPECT_EQ(formatDescription(TensorFormat::kCHW32, DataType::kINT8),
            "Thirty-two wide channel vectorized row major Int8 format (kCHW32)");
}

}  // namespace
}  // namespace kiln
