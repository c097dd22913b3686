// ONNX AveragePool: the IPoolingLayer without dilation; dilated windows are composed exactly instead: one strided
// zero-filled slice per window offset, summed, and divided by a host-computed count per output position (the
// taps inside the input for count_include_pad 0, inside the padded input for 1; ceil_mode overhang never counts).
#include <vector>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"
#include "parsers/onnx/ops/spatial_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

/// Window offsets beyond this many are refused (each is one slice layer).
constexpr int64_t kMaxWindowElements = 1024;

/// Taps of window `o` along spatial axis `i` that fall in [lo, hi) (input coordinates).
int64_t tapsWithin(spatial::WindowGeometry const& g, size_t i, int64_t o, int64_t lo, int64_t hi) {
  int64_t count = 0;
  for (int64_t j = 0; j < g.kernel[i]; ++j) {
    int64_t const pos = o * g.strides[i] - g.begin[i] + j * g.dilations[i];
    count += pos >= lo && pos < hi ? 1 : 0;
  }
  return count;
}

/// [1, 1, out...] kFLOAT constant: the divisor of every output position (the product of the per-axis counts).
Result<ITensor*> divisor(ImportContext& ctx, Node const& node, spatial::WindowGeometry const& g, bool includePad) {
  size_t const n = g.out.size();
  Dims d{static_cast<int32_t>(n + 2), {}};
  d.d[0] = 1;
  d.d[1] = 1;
  std::vector<std::vector<int64_t>> perAxis(n);
  for (size_t i = 0; i < n; ++i) {
    d.d[i + 2] = g.out[i];
    int64_t const lo = includePad ? -g.begin[i] : 0;
    int64_t const hi = includePad ? g.extent[i] + g.padEnd[i] : g.extent[i];
    for (int64_t o = 0; o < g.out[i]; ++o) {
      perAxis[i].push_back(tapsWithin(g, i, o, lo, hi));
    }
  }
  KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(DataType::kFLOAT, d));
  auto* v = reinterpret_cast<float*>(c->bytes.data());
  std::vector<int64_t> at(n, 0);
  for (int64_t e = 0; e < c->count(); ++e) {
    int64_t count = 1;
    for (size_t i = 0; i < n; ++i) {
      count *= perAxis[i][static_cast<size_t>(at[i])];
    }
    // A window wholly in padding or overhang (count 0) averages nothing: 0 / 0 would be NaN, its sum is 0.
    v[e] = static_cast<float>(count == 0 ? 1 : count);
    for (size_t i = n; i-- > 0;) {
      if (++at[i] < g.out[i]) {
        break;
      }
      at[i] = 0;
    }
  }
  return ctx.constantTensor(c, node.name() + "_divisor");
}

/// Dilated average pooling as slices + sum / count (see the file comment). Needs static input extents.
Status composedAveragePool(ImportContext& ctx, Node const& node, ITensor* x) {
  KO_ASSIGN_OR_RETURN(spatial::WindowGeometry g, spatial::windowGeometry(node, x->getDimensions(), kMaxWindowElements));
  KO_ASSIGN_OR_RETURN(int64_t includePad, attrInt(node, "count_include_pad", 0));
  DataType const t = x->getType();
  KO_ASSIGN_OR_RETURN(ITensor * zero, compose::scalar(ctx, node, t, 0, "_pad_value"));
  ITensor* sum = nullptr;
  std::vector<int64_t> offset(g.out.size(), 0);
  do {
    KO_ASSIGN_OR_RETURN(ITensor * taps, spatial::windowTaps(ctx, node, x, g, offset, zero));
    if (sum == nullptr) {
      sum = taps;
    } else {
      KO_ASSIGN_OR_RETURN(sum, compose::binary(ctx, node, sum, taps, ElementWiseOperation::kSUM));
    }
  } while (spatial::nextWindowOffset(g, offset));
  KO_ASSIGN_OR_RETURN(ITensor * count, divisor(ctx, node, g, includePad != 0));
  KO_ASSIGN_OR_RETURN(count, compose::cast(ctx, node, count, t));
  KO_ASSIGN_OR_RETURN(ITensor * y, compose::binary(ctx, node, sum, count, ElementWiseOperation::kDIV));
  return ctx.setOutput(node, 0, y);
}

Status importAveragePool(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t nbSpatial, spatial::spatialAxes(node, x));
  KO_ASSIGN_OR_RETURN(spatial::Spatial s, spatial::readSpatial(node, nbSpatial, {}));
  for (int32_t i = 0; i < s.dilations.nbDims; ++i) {
    if (s.dilations.d[i] != 1) {
      return composedAveragePool(ctx, node, x);
    }
  }
  return spatial::pool(ctx, node, PoolingType::kAVERAGE);
}

KILN_ONNX_REGISTER("", "AveragePool", importAveragePool);

}  // namespace
}  // namespace kiln::onnx
