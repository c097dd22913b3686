// TensorFormat layouts (see tensor_format.h): one description per format, from which sizes, strides, offsets
// and the I/O type rules follow.
#include "core/tensor_format.h"

#include "core/dims.h"
#include "core/dtype.h"

namespace kiln {
namespace {

struct FormatInfo {
  bool known = false;  // a layout Kiln can build (not DLA, inside the enum)
  int32_t components = 1;
  bool vectorMinor = false;
  int32_t fromLast = 0;  // the vectorized dim, counted from the last (3: third to last); 0 for kLINEAR
};

FormatInfo infoOf(TensorFormat f) {
  switch (f) {
    case TensorFormat::kLINEAR:
      return {true, 1, false, 0};
    case TensorFormat::kCHW2:
      return {true, 2, false, 3};
    case TensorFormat::kHWC8:
      return {true, 8, true, 3};
    case TensorFormat::kCHW4:
      return {true, 4, false, 3};
    case TensorFormat::kCHW16:
      return {true, 16, false, 3};
    case TensorFormat::kCHW32:
      return {true, 32, false, 3};
    case TensorFormat::kDHWC8:
      return {true, 8, true, 4};
    case TensorFormat::kCDHW32:
      return {true, 32, false, 4};
    case TensorFormat::kHWC:
      return {true, 1, true, 3};
    case TensorFormat::kDLA_LINEAR:
      return {};
    case TensorFormat::kDLA_HWC4:
      return {};
    case TensorFormat::kHWC16:
      return {true, 16, true, 3};
    case TensorFormat::kDHWC:
      return {true, 1, true, 4};
  }
  return {};
}

bool isDla(TensorFormat f) { return f == TensorFormat::kDLA_LINEAR || f == TensorFormat::kDLA_HWC4; }

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// TensorRT's spelling of types in format descriptions.
std::string typeWord(DataType t) {
  if (t == DataType::kFLOAT) return "FP32";
  if (t == DataType::kHALF) return "FP16";
  if (t == DataType::kBF16) return "BF16";
  if (t == DataType::kINT8) return "Int8";
  if (t == DataType::kUINT8) return "UInt8";
  if (t == DataType::kINT32) return "Int32";
  if (t == DataType::kINT64) return "Int64";
  if (t == DataType::kBOOL) return "Bool";
  if (t == DataType::kFP8) return "FP8";
  return dataTypeName(t);
}

}  // namespace

std::string formatName(TensorFormat f) {
  switch (f) {
    case TensorFormat::kLINEAR:
      return "kLINEAR";
    case TensorFormat::kCHW2:
      return "kCHW2";
    case TensorFormat::kHWC8:
      return "kHWC8";
    case TensorFormat::kCHW4:
      return "kCHW4";
    case TensorFormat::kCHW16:
      return "kCHW16";
    case TensorFormat::kCHW32:
      return "kCHW32";
    case TensorFormat::kDHWC8:
      return "kDHWC8";
    case TensorFormat::kCDHW32:
      return "kCDHW32";
    case TensorFormat::kHWC:
      return "kHWC";
    case TensorFormat::kDLA_LINEAR:
      return "kDLA_LINEAR";
    case TensorFormat::kDLA_HWC4:
      return "kDLA_HWC4";
    case TensorFormat::kHWC16:
      return "kHWC16";
    case TensorFormat::kDHWC:
      return "kDHWC";
  }
  return strCat("TensorFormat(", static_cast<int32_t>(f), ")");
}

std::string formatSetToString(TensorFormats formats) {
  std::string s;
  for (int32_t i = 0; i < 32; ++i)
    if (formats & (1U << i)) s += strCat(s.empty() ? "" : " | ", formatName(static_cast<TensorFormat>(i)));
  return s.empty() ? "none" : s;
}

Result<FormatLayout> formatLayout(TensorFormat f, int32_t rank) {
  if (isDla(f))
    return unsupported(formatName(f), " is a DLA format and Kiln has no DLA (use kLINEAR or a GPU vectorized format)");
  FormatInfo i = infoOf(f);
  if (!i.known) return invalidArgument("unknown tensor format ", static_cast<int32_t>(f));
  if (rank < i.fromLast)
    return invalidArgument(formatName(f), " needs a tensor of at least ", i.fromLast, " dimensions, not ", rank);
  FormatLayout l;
  l.rank = rank;
  l.components = i.components;
  l.vectorMinor = i.vectorMinor;
  l.vecDim = i.fromLast == 0 ? -1 : rank - i.fromLast;
  return l;
}

Status checkIOFormat(TensorFormat f, DataType t, int32_t rank) {
  KILN_RETURN_IF_ERROR(formatLayout(f, rank).status());
  bool half = t == DataType::kHALF, bf16 = t == DataType::kBF16, int8 = t == DataType::kINT8;
  bool ok = true;
  char const* needs = "";
  switch (f) {
    case TensorFormat::kLINEAR:
    case TensorFormat::kCHW32:
      break;
    case TensorFormat::kCHW2:
    case TensorFormat::kHWC8:
    case TensorFormat::kDHWC8:
      ok = half || bf16;
      needs = "FP16 or BF16";
      break;
    case TensorFormat::kCHW4:
    case TensorFormat::kCHW16:
    case TensorFormat::kCDHW32:
      ok = half || int8;
      needs = "INT8 or FP16";
      break;
    case TensorFormat::kHWC16:
      ok = half;
      needs = "FP16";
      break;
    case TensorFormat::kHWC:
      ok = t == DataType::kFLOAT || t == DataType::kUINT8;
      needs = "FP32 or UINT8";
      break;
    case TensorFormat::kDHWC:
      ok = t == DataType::kFLOAT;
      needs = "FP32";
      break;
    case TensorFormat::kDLA_LINEAR:
    case TensorFormat::kDLA_HWC4:
      ok = false;
      break;  // refused by formatLayout above
  }
  if (!ok) return invalidArgument(formatName(f), " requires ", needs, ", not ", dataTypeName(t));
  if (dataTypeSize(t) == 0) return invalidArgument(formatName(f), " cannot hold ", dataTypeName(t), " elements");
  return Status::ok();
}

Result<int64_t> formatVolume(Dims const& shape, FormatLayout const& l) {
  int64_t n = 1;
  for (int32_t i = 0; i < shape.nbDims; ++i) {
    int64_t d = shape.d[i];
    if (d < 0) return invalidArgument("formatVolume: unknown dim in ", dimsToString(shape));
    if (i == l.vecDim) d = ceilDiv(d, l.components) * l.components;
    KILN_ASSIGN_OR_RETURN(n, checkedMul(n, d));
  }
  return n;
}

Result<int64_t> formatBytes(Dims const& shape, DataType dtype, TensorFormat f) {
  KILN_ASSIGN_OR_RETURN(FormatLayout l, formatLayout(f, shape.nbDims));
  KILN_ASSIGN_OR_RETURN(int64_t n, formatVolume(shape, l));
  KILN_ASSIGN_OR_RETURN(size_t b, checkedBytes(n, dataTypeSize(dtype)));
  return static_cast<int64_t>(b);
}

Dims formatStrides(Dims const& shape, FormatLayout const& l) {
  Dims s = shape;
  int32_t r = shape.nbDims;
  int32_t k = l.vecDim;
  int64_t vectors = k >= 0 ? ceilDiv(shape.d[k], l.components) : 0;  // vectors along the channel dim
  int64_t step = 1;
  if (l.vectorMinor) {
    s.d[k] = 1;
    step = vectors;
    for (int32_t i = r - 1; i >= 0; --i) {
      if (i == k) continue;
      s.d[i] = step;
      step *= shape.d[i];
    }
    return s;
  }
  for (int32_t i = r - 1; i >= 0; --i) {
    s.d[i] = step;
    step *= i == k ? vectors : shape.d[i];
  }
  return s;
}

int64_t formatOffset(Dims const& shape, FormatLayout const& l, int64_t const* coord) {
  int32_t k = l.vecDim;
  int64_t v = l.components;
  int64_t idx = 0;
  if (l.vectorMinor) {
    for (int32_t i = 0; i < shape.nbDims; ++i)
      if (i != k) idx = idx * shape.d[i] + coord[i];
    return idx * (ceilDiv(shape.d[k], v) * v) + coord[k];
  }
  for (int32_t i = 0; i < shape.nbDims; ++i)
    idx = i == k ? idx * ceilDiv(shape.d[i], v) + coord[i] / v : idx * shape.d[i] + coord[i];
  return k >= 0 ? idx * v + coord[k] % v : idx;
}

std::string formatDescription(TensorFormat f, DataType dtype) {
  std::string t = typeWord(dtype);
  std::string what;
  switch (f) {
    case TensorFormat::kLINEAR:
      what = strCat("Row major linear ", t, " format");
      break;
    case TensorFormat::kCHW2:
      what = strCat("Two wide channel vectorized row major ", t, " format");
      break;
    case TensorFormat::kCHW4:
      what = strCat("Four wide channel vectorized row major ", t, " format");
      break;
    case TensorFormat::kCHW16:
      what = strCat("Sixteen wide channel vectorized row major ", t, " format");
      break;
    case TensorFormat::kCHW32:
      what = strCat("Thirty-two wide channel vectorized row major ", t, " format");
      break;
    case TensorFormat::kCDHW32:
      what = strCat("Thirty-two wide channel vectorized row major ", t, " format with 3 spatial dimensions");
      break;
    case TensorFormat::kHWC8:
      what = strCat("Channel major ", t, " format where channel % 8 == 0");
      break;
    case TensorFormat::kHWC16:
      what = strCat("Channel major ", t, " format where channel % 16 == 0");
      break;
    case TensorFormat::kDHWC8:
      what = strCat("Channel major ", t, " format with 3 spatial dimensions where channel % 8 == 0");
      break;
    case TensorFormat::kHWC:
      what = strCat("Channel major ", t, " format");
      break;
    case TensorFormat::kDHWC:
      what = strCat("Channel major ", t, " format with 3 spatial dimensions");
      break;
    case TensorFormat::kDLA_LINEAR:
      what = strCat("DLA planar ", t, " format");
      break;
    case TensorFormat::kDLA_HWC4:
      what = strCat("DLA image ", t, " format");
      break;
  }
  if (what.empty()) what = strCat("Unknown ", t, " format");
  return strCat(what, " (", formatName(f), ")");
}

}  // namespace kiln
