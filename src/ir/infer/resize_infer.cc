// Shape inference of Resize (TensorRT's IResizeLayer): the output shape comes from input 1 (sizes: int32/int64
// shape tensor; scales: float, out = floor(in * scale)), else from output_dims, else from scales; y keeps x's
// type. Checks the enum attributes and, for kCUBIC, that only the two innermost axes change.
#include <cmath>

#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

bool isIntType(DataType t) { return t == DataType::kINT32 || t == DataType::kINT64; }

Status inferResize(InferContext& ctx) {
  if (ctx.numInputs() < 1 || ctx.numInputs() > 2 || !ctx.present(0))
    return ctx.error("needs input x and optional sizes or scales");
  Node const& node = ctx.node;
  Dims const& x = ctx.in[0].shape;
  int32_t rank = x.nbDims;
  if (rank < 1) return ctx.error("input must have rank >= 1, got ", dimsToString(x));
  int64_t mode = node.attrs.getInt("mode", 0);
  if (mode < 0 || mode >= EnumMax<InterpolationMode>()) return ctx.error("unknown mode ", mode);
  int64_t ct = node.attrs.getInt("coordinate_transformation", 1);
  if (ct < 0 || ct >= EnumMax<ResizeCoordinateTransformation>())
    return ctx.error("unknown coordinate_transformation ", ct);
  int64_t sel = node.attrs.getInt("selector", 0);
  if (sel < 0 || sel >= EnumMax<ResizeSelector>()) return ctx.error("unknown selector ", sel);
  int64_t rnd = node.attrs.getInt("nearest_rounding", 2);
  if (rnd < 0 || rnd >= EnumMax<ResizeRoundMode>()) return ctx.error("unknown nearest_rounding ", rnd);

  Dims y = x;
  auto fromScales = [&](std::vector<double> const& s) -> Status {
    if (static_cast<int32_t>(s.size()) != rank) return ctx.error(s.size(), " scales for an input of rank ", rank);
    for (int32_t i = 0; i < rank; ++i) {
      if (!(s[i] > 0.0) || !std::isfinite(s[i]))
        return ctx.error("scale[", i, "] = ", s[i], " must be positive and finite");
      double const extent = std::floor(static_cast<double>(x.d[i]) * s[i]);
      // Checked before converting: a double past int64's range converts to nothing (found by plan_fuzz).
      if (x.d[i] >= 0 && !(extent < 9.2e18))
        return ctx.error("scale[", i, "] = ", s[i], " makes dim ", i, " of ", x.d[i], " larger than int64");
      y.d[i] = x.d[i] < 0 ? -1 : static_cast<int64_t>(extent);
    }
    return Status::ok();
  };
  if (ctx.present(1)) {
    Dims const& s = ctx.in[1].shape;
    DataType st = ctx.in[1].dtype;
    if (s.nbDims != 1 || (s.d[0] >= 0 && s.d[0] != rank))
      return ctx.error("input 1 must be 1-D with ", rank, " entries, got ", dimsToString(s));
    HostTensor const* v = ctx.inValues.size() > 1 ? ctx.inValues[1] : nullptr;
    if (isIntType(st)) {
      for (int32_t i = 0; i < rank; ++i) y.d[i] = -1;
      if (v) {
        for (int32_t i = 0; i < rank; ++i) {
          y.d[i] = v->intAt(i);
          if (y.d[i] < 0) return ctx.error("output size ", y.d[i], " of axis ", i, " is negative");
        }
      }
    } else if (st == DataType::kFLOAT || st == DataType::kHALF || st == DataType::kBF16 || st == DataType::kFLOAT64) {
      if (v) {
        std::vector<double> sc;
        for (int32_t i = 0; i < rank; ++i) sc.push_back(v->doubleAt(i));
        KILN_RETURN_IF_ERROR(fromScales(sc));
      } else {
        for (int32_t i = 0; i < rank; ++i) y.d[i] = -1;
      }
    } else {
      return ctx.error("input 1 must be int32/int64 sizes or float scales, got ", dataTypeName(st));
    }
  } else if (node.attrs.has("output_dims")) {
    std::vector<int64_t> od = node.attrs.getInts("output_dims");
    if (static_cast<int32_t>(od.size()) != rank)
      return ctx.error("output_dims has ", od.size(), " entries for an input of rank ", rank);
    for (int32_t i = 0; i < rank; ++i) {
      if (od[i] < 0) return ctx.error("output_dims[", i, "] = ", od[i], " is negative");
      y.d[i] = od[i];
    }
  } else if (node.attrs.has("scales")) {
    KILN_RETURN_IF_ERROR(fromScales(node.attrs.getFloats("scales")));
  } else {
    return ctx.error("needs output_dims, scales or input 1");
  }
  for (int32_t i = 0; i < rank; ++i)
    if (y.d[i] > 0 && x.d[i] == 0) return ctx.error("axis ", i, " of extent 0 cannot be resized to ", y.d[i]);
  if (static_cast<InterpolationMode>(mode) == InterpolationMode::kCUBIC) {
    for (int32_t i = 0; i + 2 < rank; ++i)
      if (x.d[i] >= 0 && y.d[i] >= 0 && x.d[i] != y.d[i])
        return ctx.error("kCUBIC resizes only the two innermost axes, but axis ", i, " changes from ", x.d[i], " to ",
                         y.d[i]);
  }
  ctx.out[0] = {ctx.in[0].dtype, y};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kResize, inferResize);

}  // namespace kiln::ir
