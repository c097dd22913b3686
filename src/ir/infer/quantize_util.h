// Scale layouts of Quantize/Dequantize/DynamicQuantize (shared by shape inference and the reference kernels):
// which scale element applies to each input element.
#pragma once

#include <cstdint>
#include <vector>

#include "core/dims.h"
#include "core/status.h"

namespace kiln::ir {

/// How a scale tensor maps onto the data: one value, one per index of `axis`, or one per block.
struct QuantLayout {
  enum class Kind { kTENSOR, kAXIS, kBLOCK };
  Kind kind = Kind::kTENSOR;
  int32_t axis = 0;            // kAXIS
  std::vector<int64_t> block;  // kBLOCK: block extent per data axis (-1 resolved to the whole extent)
};

/// The layout of `scale` for `x`: a 0-D (or one-element 1-D) scale is per-tensor; with `blockShape` given
/// (hasBlock) the scale has x's rank and ceil(x/block) extents; otherwise a 1-D scale of x's extent on `axis`.
/// Unknown (-1) dims are not checked.
Result<QuantLayout> resolveQuantLayout(Dims const& x, Dims const& scale, int64_t axis, bool hasBlock,
                                       std::vector<int64_t> const& blockShape);

/// Scale element index of every element of x (row-major), for known shapes.
std::vector<int64_t> scaleIndexMap(QuantLayout const& layout, Dims const& x, Dims const& scale);

}  // namespace kiln::ir

namespace kiln::ir {
class Attributes;
/// The block shape of a DynamicQuantize node for input dims `x` (from block_shape, or axis and block_size;
/// -1 resolved to the whole extent); each extent of x must be a multiple of its block extent.
Result<std::vector<int64_t>> dynamicQuantizeBlocks(Attributes const& a, Dims const& x);
}  // namespace kiln::ir
