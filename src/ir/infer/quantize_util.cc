// Scale layouts of the quantization ops (see quantize_util.h).
#include "ir/infer/quantize_util.h"

namespace kiln::ir {

Result<QuantLayout> resolveQuantLayout(Dims const& x, Dims const& scale, int64_t axis, bool hasBlock,
                                       std::vector<int64_t> const& blockShape) {
  QuantLayout q;
  if (hasBlock) {
    if (static_cast<int32_t>(blockShape.size()) != x.nbDims || scale.nbDims != x.nbDims)
      return invalidArgument("block shape of ", blockShape.size(), " dims and scale ", dimsToString(scale),
                             " must both have the input's rank ", x.nbDims);
    q.kind = QuantLayout::Kind::kBLOCK;
    for (int32_t i = 0; i < x.nbDims; ++i) {
      int64_t b = blockShape[static_cast<size_t>(i)];
      if (b == -1)
        b = x.d[i];
      else if (b < 1)
        return invalidArgument("block extent ", b, " on axis ", i, " must be >= 1 or -1");
      q.block.push_back(b);
      if (b > 0 && x.d[i] >= 0 && scale.d[i] >= 0 && scale.d[i] != (x.d[i] + b - 1) / b)
        return invalidArgument("scale ", dimsToString(scale), " does not fit input ", dimsToString(x),
                               " with blocks of ", b, " on axis ", i);
    }
    return q;
  }
  if (scale.nbDims == 0 || (scale.nbDims == 1 && scale.d[0] == 1 && x.nbDims == 0)) {
    q.kind = QuantLayout::Kind::kTENSOR;
    return q;
  }
  if (scale.nbDims != 1)
    return invalidArgument("scale ", dimsToString(scale),
                           " must be 0-D, 1-D (per axis) or blocked (with a block "
                           "shape)");
  if (axis < -x.nbDims || axis >= x.nbDims)
    return invalidArgument("axis ", axis, " is out of range for an input of rank ", x.nbDims);
  q.kind = QuantLayout::Kind::kAXIS;
  q.axis = static_cast<int32_t>(axis < 0 ? axis + x.nbDims : axis);
  int64_t n = x.d[q.axis];
  if (n >= 0 && scale.d[0] >= 0 && scale.d[0] != n) {
    if (scale.d[0] == 1) {
      q.kind = QuantLayout::Kind::kTENSOR;  // a one-element 1-D scale is per-tensor
      return q;
    }
    return invalidArgument("scale ", dimsToString(scale), " does not fit input ", dimsToString(x), " on axis ", q.axis);
  }
  return q;
}

std::vector<int64_t> scaleIndexMap(QuantLayout const& layout, Dims const& x, Dims const& scale) {
  int64_t n = volume(x);
  std::vector<int64_t> map(static_cast<size_t>(n > 0 ? n : 0), 0);
  if (n <= 0 || layout.kind == QuantLayout::Kind::kTENSOR) return map;
  std::vector<int64_t> idx(static_cast<size_t>(x.nbDims), 0);
  std::vector<int64_t> sStride(static_cast<size_t>(scale.nbDims), 1);
  for (int32_t i = scale.nbDims - 2; i >= 0; --i) sStride[i] = sStride[i + 1] * scale.d[i + 1];
  for (int64_t lin = 0; lin < n; ++lin) {
    int64_t s = 0;
    if (layout.kind == QuantLayout::Kind::kAXIS) {
      s = idx[static_cast<size_t>(layout.axis)];
    } else {
      for (int32_t i = 0; i < x.nbDims; ++i) s += idx[i] / layout.block[i] * sStride[i];
    }
    map[static_cast<size_t>(lin)] = s;
    for (int32_t d = x.nbDims - 1; d >= 0; --d) {
      if (++idx[d] < x.d[d]) break;
      idx[d] = 0;
    }
  }
  return map;
}

}  // namespace kiln::ir
