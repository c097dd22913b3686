// Memory layouts of TensorRT's TensorFormat values: which dim a format vectorizes, how many components a vector
// holds, the padded size, strides as ICudaEngine/IExecutionContext report them, element offsets, and which types
// and ranks a network I/O tensor may use each format with (TensorRT 10's rules).
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "kiln/kiln_base.h"

namespace kiln {

/// How a format lays out a tensor of a given rank. Every non-DLA format is one of:
/// - vector-major (kLINEAR, kCHW2/4/16/32, kCDHW32): memory [d0..][ceil(C/V)][..dn][V], C = d[vecDim];
///   kLINEAR is V = 1, so plain row-major;
/// - vector-minor (kHWC, kHWC8, kHWC16, kDHWC, kDHWC8): memory [d0..][..dn][ceil(C/V)*V], the (padded) C axis
///   moved innermost.
/// Padding channels (c >= C) hold zeros in what Kiln writes and are ignored in what it reads.
struct FormatLayout {
  int32_t vecDim = -1;       ///< index of the vectorized (channel) dim; -1 for kLINEAR
  int32_t components = 1;    ///< V: scalars per vector (1 for kLINEAR, kHWC, kDHWC)
  bool vectorMinor = false;  ///< the channel axis is innermost
  int32_t rank = 0;
};

/// TensorRT's enum spelling, e.g. "kHWC8" ("TensorFormat(N)" for values outside the enum).
std::string formatName(TensorFormat f);

/// The names of the formats set in `formats` (a TensorFormats bit set), e.g. "kHWC8 | kCHW32"; "none" if empty.
std::string formatSetToString(TensorFormats formats);

/// The layout of `f` for a tensor of rank `rank`. Fails for the DLA formats (no DLA), for values outside the
/// enum, and for a rank below what the format needs (3 for kCHW*/kHWC*, 4 for kDHWC*/kCDHW32).
Result<FormatLayout> formatLayout(TensorFormat f, int32_t rank);

/// Whether a network input/output of `dtype` and rank `rank` may use `f` (TensorRT's notes on each format:
/// kCHW2/kHWC8/kDHWC8 fp16 or bf16, kCHW4/kCHW16/kCDHW32 int8 or fp16, kHWC16 fp16, kHWC fp32 or uint8, kDHWC
/// fp32, kCHW32 any type; kLINEAR any). The error says why not.
Status checkIOFormat(TensorFormat f, DataType dtype, int32_t rank);

/// Elements (scalars, padding included) a tensor of `shape` takes in layout `l`. Overflow is an error.
Result<int64_t> formatVolume(Dims const& shape, FormatLayout const& l);

/// Bytes of a tensor of `shape` and `dtype` in format `f` (the padded size).
Result<int64_t> formatBytes(Dims const& shape, DataType dtype, TensorFormat f);

/// Strides per logical dim in units of vectors of the layout (TensorRT's getTensorStrides: for kHWC8 a stride
/// of one spans 8 scalars; the vectorized dim's stride steps one vector).
Dims formatStrides(Dims const& shape, FormatLayout const& l);

/// Offset in scalars of the logical coordinate `coord` (shape.nbDims entries) in layout `l`.
int64_t formatOffset(Dims const& shape, FormatLayout const& l, int64_t const* coord);

/// TensorRT-style description, e.g. "Channel major FP16 format where channel % 8 == 0 (kHWC8)".
std::string formatDescription(TensorFormat f, DataType dtype);

}  // namespace kiln
