// Sliding-window geometry shared by Convolution and Pooling (shape inference and kernels): reading and checking
// the window attributes, and TensorRT's effective padding and output size for every PaddingMode.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "kiln/kiln.h"

namespace kiln::ir {

/// Effective padding and output size along one spatial dim; all -1 when the input size is unknown.
struct WindowDim {
  int64_t padBegin = 0;
  int64_t padEnd = 0;
  int64_t out = 0;
};

/// TensorRT's formulas with DK = dilation * (kernel - 1) + 1:
/// kEXPLICIT_ROUND_DOWN out = floor((in + padBegin + padEnd - DK) / stride) + 1;
/// kEXPLICIT_ROUND_UP   out = ceil((in + padBegin + padEnd - DK) / stride) + 1;
/// kSAME_UPPER / kSAME_LOWER out = ceil(in / stride), total padding P = max(0, (out - 1) * stride + DK - in)
/// split P/2 (rounded down) before and the rest after (upper) or the other way round (lower); the given
/// explicit pads are ignored by the SAME modes. `in` < 0 (unknown) gives all -1. The caller checks out >= 0.
WindowDim computeWindowDim(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin,
                           int64_t padEnd, PaddingMode mode);

/// The window attributes of a Convolution or Pooling node, each expanded to `nbSpatial` entries.
struct WindowParams {
  int32_t nbSpatial = 0;
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;    // default 1
  std::vector<int64_t> dilations;  // default 1 (always 1 for pooling)
  std::vector<int64_t> padsBegin;  // default 0
  std::vector<int64_t> padsEnd;    // default 0
  PaddingMode mode = PaddingMode::kEXPLICIT_ROUND_DOWN;
};

/// Reads `kernelAttr` ("kernel_shape" or "window"), strides, pads_begin, pads_end, padding_mode and (when
/// `withDilation`) dilations from `node`. `fallbackKernel` is used when the kernel attribute is absent (the
/// conv weights' spatial dims; may be empty). Errors (invalid-graph, naming the node) on a list of the wrong
/// length, a kernel/stride/dilation < 1, a negative pad or an unknown padding mode.
Result<WindowParams> readWindowParams(Node const& node, char const* kernelAttr, int32_t nbSpatial, bool withDilation,
                                      std::vector<int64_t> const& fallbackKernel = {});

/// Per spatial dim geometry for the spatial dims `in` (the trailing nbSpatial dims of the input).
std::vector<WindowDim> computeWindow(WindowParams const& p, std::vector<int64_t> const& in);

}  // namespace kiln::ir
