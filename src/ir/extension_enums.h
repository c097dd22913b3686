// Validity of enum values that Kiln extends past TensorRT's range (ElementWiseOperation, UnaryOperation): the
// TensorRT values below EnumMax<E>() plus Kiln's extension values (api-notes.md lists them).
#pragma once

#include <cstdint>

#include "kiln/kiln.h"

namespace kiln::ir {

/// True if `v` is a TensorRT ElementWiseOperation or one of Kiln's bitwise extensions.
inline bool isValidElementWiseOperation(int64_t v) {
  return (v >= 0 && v < EnumMax<ElementWiseOperation>()) ||
         v == static_cast<int64_t>(ElementWiseOperation::kBITWISE_AND) ||
         v == static_cast<int64_t>(ElementWiseOperation::kBITWISE_OR) ||
         v == static_cast<int64_t>(ElementWiseOperation::kBITWISE_XOR);
}

/// True if `v` is a TensorRT UnaryOperation or Kiln's kBITWISE_NOT.
inline bool isValidUnaryOperation(int64_t v) {
  return (v >= 0 && v < EnumMax<UnaryOperation>()) || v == static_cast<int64_t>(UnaryOperation::kBITWISE_NOT);
}

/// True for the integer types bitwise operations accept (every signed and unsigned width).
inline bool isBitwiseType(DataType t) {
  switch (t) {
    case DataType::kINT8:
    case DataType::kUINT8:
    case DataType::kINT16:
    case DataType::kUINT16:
    case DataType::kINT32:
    case DataType::kUINT32:
    case DataType::kINT64:
    case DataType::kUINT64:
      return true;
    case DataType::kFLOAT:
    case DataType::kHALF:
    case DataType::kBOOL:
    case DataType::kFP8:
    case DataType::kBF16:
    case DataType::kINT4:
    case DataType::kFP4:
    case DataType::kE8M0:
    case DataType::kFLOAT64:
      return false;
  }
  return false;
}

}  // namespace kiln::ir
