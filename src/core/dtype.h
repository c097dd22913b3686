// Element types: sizes, names, fp16/bf16 storage with round-to-nearest-even, and dispatch over types.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/status.h"
#include "kiln/kiln_base.h"

namespace kiln {

/// IEEE binary16 storage; arithmetic goes through float.
struct Half {
  uint16_t bits = 0;
};
/// bfloat16 storage; arithmetic goes through float.
struct BFloat16 {
  uint16_t bits = 0;
};
/// float8 e4m3fn storage (conversion only; kernels come later).
struct Fp8E4M3 {
  uint8_t bits = 0;
};

float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);  // round to nearest even, overflow to inf, NaN kept
inline float bf16ToFloat(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t floatToBf16(float f);  // round to nearest even, NaN kept
float fp8e4m3ToFloat(uint8_t v);
uint8_t floatToFp8e4m3(float f);  // round to nearest even, saturating to +-448, NaN kept

/// Bytes per element; 0 for sub-byte types (kINT4, kFP4) that Kiln does not store yet.
size_t dataTypeSize(DataType t);
/// Long name: "float32", "float16", "bfloat16", "int8", ...
char const* dataTypeName(DataType t);
/// Short name used in the IR text form: "f32", "f16", "bf16", "i8", "i32", "i64", "bool", "u8", "fp8".
char const* dataTypeShortName(DataType t);
/// Parses a long or short name.
Result<DataType> parseDataType(std::string const& name);
bool isFloatType(DataType t);    // float64/32/16, bf16, fp8
bool isIntegerType(DataType t);  // int8/16/32/64, uint8/16/32/64
/// Every type Kiln can store, TensorRT's first, then Kiln's extensions.
std::vector<DataType> const& allStorableTypes();
/// True when Kiln can store and compute this type (everything but int4/fp4/e8m0 for now).
bool isSupportedType(DataType t);

// Value conversions used by reference kernels: every storage type to and from double.
template <typename T>
inline double toDouble(T v) {
  if constexpr (std::is_same_v<T, Half>) return halfToFloat(v.bits);
  else if constexpr (std::is_same_v<T, BFloat16>) return bf16ToFloat(v.bits);
  else if constexpr (std::is_same_v<T, Fp8E4M3>) return fp8e4m3ToFloat(v.bits);
  else return static_cast<double>(v);
}

/// Converts a double to a storage type: floats round to nearest even (through float for the 16-bit types),
/// integers truncate toward zero (ONNX Cast), bool is (v != 0). Out-of-range float->int is saturated.
template <typename T>
inline T fromDouble(double v) {
  if constexpr (std::is_same_v<T, Half>) return Half{floatToHalf(static_cast<float>(v))};
  else if constexpr (std::is_same_v<T, BFloat16>) return BFloat16{floatToBf16(static_cast<float>(v))};
  else if constexpr (std::is_same_v<T, Fp8E4M3>) return Fp8E4M3{floatToFp8e4m3(static_cast<float>(v))};
  else if constexpr (std::is_same_v<T, bool>) return v != 0.0;
  else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(v);
  else {
    if (std::isnan(v)) return T(0);
    double t = std::trunc(v);
    if (t <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (t >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(t);
  }
}

/// Storage type of a DataType.
template <DataType D> struct StorageOf;
template <> struct StorageOf<DataType::kFLOAT> { using type = float; };
template <> struct StorageOf<DataType::kHALF> { using type = Half; };
template <> struct StorageOf<DataType::kBF16> { using type = BFloat16; };
template <> struct StorageOf<DataType::kFP8> { using type = Fp8E4M3; };
template <> struct StorageOf<DataType::kINT8> { using type = int8_t; };
template <> struct StorageOf<DataType::kUINT8> { using type = uint8_t; };
template <> struct StorageOf<DataType::kINT32> { using type = int32_t; };
template <> struct StorageOf<DataType::kINT64> { using type = int64_t; };
template <> struct StorageOf<DataType::kBOOL> { using type = bool; };
template <> struct StorageOf<DataType::kFLOAT64> { using type = double; };
template <> struct StorageOf<DataType::kINT16> { using type = int16_t; };
template <> struct StorageOf<DataType::kUINT16> { using type = uint16_t; };
template <> struct StorageOf<DataType::kUINT32> { using type = uint32_t; };
template <> struct StorageOf<DataType::kUINT64> { using type = uint64_t; };

/// True for storage types whose arithmetic is done in floating point.
template <typename T>
inline constexpr bool kIsFloatStorage = std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
                                        std::is_same_v<T, BFloat16> || std::is_same_v<T, Fp8E4M3>;

/// Calls f(T{}) with T the storage type of `t`; returns an error Status for types Kiln cannot store.
/// f must return Status.
template <typename F>
Status dispatchType(DataType t, F&& f) {
  switch (t) {
    case DataType::kFLOAT: return f(float{});
    case DataType::kHALF: return f(Half{});
    case DataType::kBF16: return f(BFloat16{});
    case DataType::kFP8: return f(Fp8E4M3{});
    case DataType::kINT8: return f(int8_t{});
    case DataType::kUINT8: return f(uint8_t{});
    case DataType::kINT32: return f(int32_t{});
    case DataType::kINT64: return f(int64_t{});
    case DataType::kBOOL: return f(bool{});
    case DataType::kFLOAT64: return f(double{});
    case DataType::kINT16: return f(int16_t{});
    case DataType::kUINT16: return f(uint16_t{});
    case DataType::kUINT32: return f(uint32_t{});
    case DataType::kUINT64: return f(uint64_t{});
    case DataType::kINT4:
    case DataType::kFP4:
    case DataType::kE8M0: break;
  }
  return unsupported("data type ", dataTypeName(t), " is not supported here");
}

}  // namespace kiln
