// Shape inference of Slice (TensorRT 10's ISliceLayer): start/size/stride from attributes or from the 1-D shape
// tensors of inputs 1..3, optionally on a subset of axes (attribute `axes` or input 5, negative allowed).
// Output dims are the sizes; a size whose value is not known here gives -1.
#include <optional>
#include <vector>

#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

// One parameter vector: its length (-1 if unknown) and, when known, its values.
struct Param {
  int64_t length = -1;
  std::optional<std::vector<int64_t>> values;
};

Result<Param> readParam(InferContext const& ctx, size_t input, char const* name, std::optional<int64_t> fillLength) {
  Param p;
  if (ctx.present(input)) {
    TensorInfo const& t = ctx.in[input];
    if (t.dtype != DataType::kINT32 && t.dtype != DataType::kINT64)
      return ctx.error(name, " tensor must be int32 or int64, not ", dataTypeName(t.dtype));
    if (t.shape.nbDims != 1)
      return ctx.error(name, " tensor must be 1-D, not ", dimsToString(t.shape));
    p.length = t.shape.d[0];
    if (ctx.inValues[input])
      p.values = ctx.inValues[input]->toInt64Vector();
  } else if (ctx.node.attrs.has(name)) {
    p.values = ctx.node.attrs.getInts(name);
    p.length = static_cast<int64_t>(p.values->size());
  } else if (fillLength) {
    if (*fillLength >= 0)
      p.values = std::vector<int64_t>(static_cast<size_t>(*fillLength), 1);
    p.length = *fillLength;
  } else {
    return ctx.error("has no ", name, " (attribute or input ", input, ")");
  }
  return p;
}

Status inferSlice(InferContext& ctx) {
  if (ctx.numInputs() < 1 || ctx.numInputs() > 6 || !ctx.present(0))
    return ctx.error("needs 1 to 6 inputs");
  Dims const& in = ctx.in[0].shape;
  int32_t rank = in.nbDims;
  int64_t modeValue = ctx.node.attrs.getInt("mode", 0);
  if (modeValue < 0 || modeValue >= EnumMax<SampleMode>())
    return ctx.error("has an invalid mode ", modeValue);
  auto mode = static_cast<SampleMode>(modeValue);
  if (ctx.present(4)) {
    if (mode != SampleMode::kFILL)
      return ctx.error("has a fill value (input 4) but its mode is not kFILL");
    if (dimsKnown(ctx.in[4].shape) && volume(ctx.in[4].shape) != 1)
      return ctx.error("fill value must have one element, not shape ", dimsToString(ctx.in[4].shape));
  }

  // The axes the parameters apply to (all of them, in order, by default).
  Param axes;
  if (ctx.present(5) || ctx.node.attrs.has("axes")) {
    KILN_ASSIGN_OR_RETURN(axes, readParam(ctx, 5, "axes", std::nullopt));
  } else {
    axes.length = rank;
    axes.values = std::vector<int64_t>();
    for (int32_t i = 0; i < rank; ++i)
      axes.values->push_back(i);
  }
  if (axes.values) {
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int64_t& a : *axes.values) {
      Result<int32_t> n = normalizeAxis(a, rank);
      if (!n.isOk())
        return ctx.error("slice axis: ", n.status().message());
      if (seen[static_cast<size_t>(*n)])
        return ctx.error("slice axis ", a, " is repeated");
      seen[static_cast<size_t>(*n)] = true;
      a = *n;
    }
  }
  KILN_ASSIGN_OR_RETURN(Param start, readParam(ctx, 1, "start", std::nullopt));
  KILN_ASSIGN_OR_RETURN(Param size, readParam(ctx, 2, "size", std::nullopt));
  KILN_ASSIGN_OR_RETURN(Param stride, readParam(ctx, 3, "stride", axes.length));
  for (Param const* p : {&start, &size, &stride}) {
    if (p->length >= 0 && axes.length >= 0 && p->length != axes.length)
      return ctx.error("start, size and stride need ", axes.length, " entries (one per sliced axis), got ",
                       start.length, ", ", size.length, " and ", stride.length);
  }
  if (size.values)
    for (int64_t s : *size.values)
      if (s < 0)
        return ctx.error("slice size ", s, " is negative");

  Dims out = in;
  if (!axes.values) {
    for (int32_t i = 0; i < rank; ++i)
      out.d[i] = -1;  // which dims change is not known yet
  } else {
    for (size_t k = 0; k < axes.values->size(); ++k) {
      int32_t ax = static_cast<int32_t>((*axes.values)[k]);
      int64_t n = in.d[ax];
      int64_t sz = size.values ? (*size.values)[k] : -1;
      out.d[ax] = sz;
      if (n < 0 || sz <= 0)
        continue;
      if (n == 0 && mode != SampleMode::kFILL)
        return ctx.error("cannot read ", sz, " elements from empty axis ", ax, " in this mode");
      if (mode == SampleMode::kSTRICT_BOUNDS && start.values && stride.values) {
        int64_t first = (*start.values)[k], step = (*stride.values)[k];
        // last = first + (sz-1)*step, checked in double first so that huge values cannot overflow.
        double last = static_cast<double>(first) + static_cast<double>(sz - 1) * static_cast<double>(step);
        if (first < 0 || first >= n || last < 0 || last >= static_cast<double>(n))
          return ctx.error("slice of axis ", ax, " (start ", first, ", size ", sz, ", stride ", step,
                           ") is out of bounds for dim ", n);
      }
    }
  }
  ctx.out[0] = {ctx.in[0].dtype, out};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kSlice, inferSlice);

}  // namespace kiln::ir
