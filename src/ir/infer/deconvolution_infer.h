// Deconvolution (transposed convolution) geometry shared by its shape inference and its reference kernel.
#pragma once

#include "ir/infer/window_util.h"

namespace kiln::ir {

/// TensorRT's deconvolution output size and effective padding along one spatial dim, DK = dilation *
/// (kernel - 1) + 1: explicit modes out = (in - 1) * stride + DK - padBegin - padEnd; kSAME_* out = in * stride
/// with total padding P = max(0, (in - 1) * stride + DK - out) split as for convolution (kSAME_UPPER puts the
/// odd unit at the end). `in` < 0 gives all -1; in == 0 gives out == 0.
WindowDim deconvWindowDim(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin,
                          int64_t padEnd, PaddingMode mode);

}  // namespace kiln::ir
