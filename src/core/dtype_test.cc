// Tests of the fp16/bf16/fp8 conversions (round to nearest even, specials) and type names.
#include "core/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kiln {
namespace {

TEST(DType, HalfRoundTripsEveryValue) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = halfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(f))));
      continue;
    }
    EXPECT_EQ(floatToHalf(f), h) << "half bits " << h;
  }
}

TEST(DType, HalfRoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10): ties go to even (1.0).
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3*2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9 (even).
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);  // rounds up to infinity
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -26)), 0x0000);  // below half of it
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
}

TEST(DType, Bf16RoundsToNearestEven) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);      // tie -> even
  EXPECT_EQ(floatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // tie -> even (up)
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(std::nanf("")))));
  for (uint32_t b = 0; b < 0x10000; b += 7) {
    float f = bf16ToFloat(static_cast<uint16_t>(b));
    if (!std::isnan(f)) {
      EXPECT_EQ(floatToBf16(f), b);
    }
  }
}

TEST(DType, Fp8E4M3) {
  EXPECT_EQ(fp8e4m3ToFloat(floatToFp8e4m3(1.0f)), 1.0f);
  EXPECT_EQ(fp8e4m3ToFloat(floatToFp8e4m3(1000.0f)), 448.0f);
  EXPECT_TRUE(std::isnan(fp8e4m3ToFloat(floatToFp8e4m3(std::nanf("")))));
  for (int c = 0; c < 0x7f; ++c) EXPECT_EQ(floatToFp8e4m3(fp8e4m3ToFloat(static_cast<uint8_t>(c))), c);
}

TEST(DType, FromDoubleIntegersTruncateAndSaturate) {
  EXPECT_EQ(fromDouble<int32_t>(2.9), 2);
  EXPECT_EQ(fromDouble<int32_t>(-2.9), -2);
  EXPECT_EQ(fromDouble<int8_t>(1000.0), 127);
  EXPECT_EQ(fromDouble<uint8_t>(-5.0), 0);
  EXPECT_EQ(fromDouble<int64_t>(std::nan("")), 0);
  EXPECT_TRUE(fromDouble<bool>(0.5));
}

TEST(DType, NamesParse) {
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kINT32,
                     DataType::kINT64, DataType::kBOOL, DataType::kUINT8, DataType::kFP8}) {
    EXPECT_EQ(*parseDataType(dataTypeName(t)), t);
    EXPECT_EQ(*parseDataType(dataTypeShortName(t)), t);
    EXPECT_GT(dataTypeSize(t), 0u);
  }
  EXPECT_FALSE(parseDataType("float128").isOk());
  EXPECT_FALSE(dispatchType(DataType::kINT4, [](auto) { return Status::ok(); }).isOk());
}

}  // namespace
}  // namespace kiln
