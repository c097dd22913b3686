// Deconvolution (transposed convolution) geometry shared by its shape inference and its reference kernel.
#pragma once

#include "ir/infer/window_util.h"

namespace kiln::ir {

/// TensorRT's deconvolution output size and effective padding along one spatial dim, DK = dilation *
/// (kernel - 1) + 1: explicit modes out = (in - 1) * stride + DK - padBegin - padEnd; kSAME_* out =
/// min(in * stride, (in - 1) * stride + DK) with total padding P = max(DK - stride, 0), split P / 2 (rounded
/// down) before and the rest after (kSAME_UPPER) or the other way round (kSAME_LOWER). `in` < 0 gives all -1;
/// in == 0 gives out == 0.
WindowDim deconvWindowDim(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin,
                          int64_t padEnd, PaddingMode mode);

}  // namespace kiln::ir
