// Element type names, sizes and the fp16/bf16/fp8 conversions (round to nearest even).
#include "core/dtype.h"

#include <limits>

namespace kiln {

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400) == 0);
      bits = sign | (uint32_t(127 - 15 - e) << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 | ((absx >> 13) & 0x3ff) : 0));
  }
  if (absx >= 0x477ff000u) return sign | 0x7c00;  // rounds to >= 65520: overflow to inf
  if (absx < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    if (absx < 0x33000000u) return sign;  // < 2^-25 rounds to zero
    uint32_t e = absx >> 23;
    uint32_t m = (absx & 0x7fffff) | 0x800000;
    // value = m * 2^(e-150); half subnormal unit is 2^-24, so result = m * 2^(e-126) rounded.
    uint32_t drop = 126 - e;  // bits to drop from m (between 14 and 24)
    uint32_t q = m >> drop;
    uint32_t rem = m & ((1u << drop) - 1);
    uint32_t half = 1u << (drop - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  // normal
  uint32_t e = (absx >> 23) - 127 + 15;
  uint32_t m = absx & 0x7fffff;
  uint32_t q = (e << 10) | (m >> 13);
  uint32_t rem = m & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (q & 1))) ++q;  // may carry into exponent: still correct
  return static_cast<uint16_t>(sign | q);
}

uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
  uint32_t lsb = (x >> 16) & 1;
  x += 0x7fff + lsb;
  return static_cast<uint16_t>(x >> 16);
}

float fp8e4m3ToFloat(uint8_t v) {
  uint32_t sign = v >> 7;
  uint32_t exp = (v >> 3) & 0xf;
  uint32_t mant = v & 7;
  float r;
  if (exp == 0xf && mant == 7) {
    r = std::numeric_limits<float>::quiet_NaN();
  } else if (exp == 0) {
    r = std::ldexp(static_cast<float>(mant), -9);
  } else {
    r = std::ldexp(1.0f + static_cast<float>(mant) / 8.0f, static_cast<int>(exp) - 7);
  }
  return sign ? -r : r;
}

uint8_t floatToFp8e4m3(float f) {
  if (std::isnan(f)) return 0x7f;
  uint8_t sign = std::signbit(f) ? 0x80 : 0;
  float a = std::fabs(f);
  if (a >= 448.0f) return sign | 0x7e;  // saturate to the largest finite value
  // Find the nearest representable value by scanning the 127 magnitudes (exact and simple).
  uint8_t best = 0;
  float bestErr = a;
  for (uint8_t c = 1; c <= 0x7e; ++c) {
    float v = fp8e4m3ToFloat(c);
    float err = std::fabs(v - a);
    if (err < bestErr || (err == bestErr && (c & 1) == 0 && (best & 1) == 1)) {
      best = c;
      bestErr = err;
    }
  }
  return sign | best;
}

size_t dataTypeSize(DataType t) {
  switch (t) {
    case DataType::kFLOAT: return 4;
    case DataType::kHALF: return 2;
    case DataType::kBF16: return 2;
    case DataType::kINT8: return 1;
    case DataType::kUINT8: return 1;
    case DataType::kFP8: return 1;
    case DataType::kBOOL: return 1;
    case DataType::kINT32: return 4;
    case DataType::kINT64: return 8;
    case DataType::kE8M0: return 1;
    case DataType::kFLOAT64: return 8;
    case DataType::kINT16: return 2;
    case DataType::kUINT16: return 2;
    case DataType::kUINT32: return 4;
    case DataType::kUINT64: return 8;
    case DataType::kINT4:
    case DataType::kFP4: return 0;
  }
  return 0;
}

char const* dataTypeName(DataType t) {
  switch (t) {
    case DataType::kFLOAT: return "float32";
    case DataType::kHALF: return "float16";
    case DataType::kBF16: return "bfloat16";
    case DataType::kINT8: return "int8";
    case DataType::kUINT8: return "uint8";
    case DataType::kFP8: return "fp8";
    case DataType::kBOOL: return "bool";
    case DataType::kINT32: return "int32";
    case DataType::kINT64: return "int64";
    case DataType::kINT4: return "int4";
    case DataType::kFP4: return "fp4";
    case DataType::kE8M0: return "e8m0";
    case DataType::kFLOAT64: return "float64";
    case DataType::kINT16: return "int16";
    case DataType::kUINT16: return "uint16";
    case DataType::kUINT32: return "uint32";
    case DataType::kUINT64: return "uint64";
  }
  return "unknown";
}

char const* dataTypeShortName(DataType t) {
  switch (t) {
    case DataType::kFLOAT: return "f32";
    case DataType::kHALF: return "f16";
    case DataType::kBF16: return "bf16";
    case DataType::kINT8: return "i8";
    case DataType::kUINT8: return "u8";
    case DataType::kFP8: return "fp8";
    case DataType::kBOOL: return "bool";
    case DataType::kINT32: return "i32";
    case DataType::kINT64: return "i64";
    case DataType::kINT4: return "i4";
    case DataType::kFP4: return "fp4";
    case DataType::kE8M0: return "e8m0";
    case DataType::kFLOAT64: return "f64";
    case DataType::kINT16: return "i16";
    case DataType::kUINT16: return "u16";
    case DataType::kUINT32: return "u32";
    case DataType::kUINT64: return "u64";
  }
  return "unknown";
}

std::vector<DataType> const& allStorableTypes() {
  static std::vector<DataType> const kAll = {
      DataType::kFLOAT, DataType::kHALF,    DataType::kBF16,  DataType::kINT8,   DataType::kUINT8,
      DataType::kFP8,   DataType::kBOOL,    DataType::kINT32, DataType::kINT64,  DataType::kFLOAT64,
      DataType::kINT16, DataType::kUINT16,  DataType::kUINT32, DataType::kUINT64};
  return kAll;
}

Result<DataType> parseDataType(std::string const& name) {
  static constexpr DataType kAll[] = {DataType::kFLOAT,   DataType::kHALF,   DataType::kBF16,   DataType::kINT8,
                                      DataType::kUINT8,   DataType::kFP8,    DataType::kBOOL,   DataType::kINT32,
                                      DataType::kINT64,   DataType::kINT4,   DataType::kFP4,    DataType::kE8M0,
                                      DataType::kFLOAT64, DataType::kINT16,  DataType::kUINT16, DataType::kUINT32,
                                      DataType::kUINT64};
  for (DataType t : kAll) {
    if (name == dataTypeName(t) || name == dataTypeShortName(t)) return t;
  }
  return invalidArgument("unknown data type '", name, "'");
}

bool isFloatType(DataType t) {
  return t == DataType::kFLOAT64 || t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16 || t == DataType::kFP8;
}

bool isIntegerType(DataType t) {
  return t == DataType::kINT8 || t == DataType::kUINT8 || t == DataType::kINT32 || t == DataType::kINT64 ||
         t == DataType::kINT16 || t == DataType::kUINT16 || t == DataType::kUINT32 || t == DataType::kUINT64;
}

bool isSupportedType(DataType t) { return dataTypeSize(t) != 0 && t != DataType::kE8M0; }

}  // namespace kiln
