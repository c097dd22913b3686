// Reference kernel of Slice (TensorRT 10's ISliceLayer): per-axis source coordinates start + i*stride mapped
// by the sample mode (strict bounds, wrap, clamp, fill, reflect), then element copies (any type).
#include <cstring>
#include <optional>
#include <vector>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

// Values of a parameter: from its input tensor when present, else from the attribute, else `def`.
Result<std::vector<int64_t>> paramValues(LaunchContext const& ctx, ir::Attributes const& attrs, size_t input,
                                         char const* name, std::optional<std::vector<int64_t>> def,
                                         std::string const& what) {
  if (input < ctx.inputs.size() && ctx.inputs[input].data) {
    TensorView const& t = ctx.inputs[input];
    if (t.shape.nbDims != 1 || !typeIn(t.dtype, {DataType::kINT32, DataType::kINT64}))
      return invalidArgument(what, ": ", name, " must be a 1-D int32/int64 tensor");
    std::vector<int64_t> v(static_cast<size_t>(t.shape.d[0]));
    for (int64_t i = 0; i < t.shape.d[0]; ++i)
      v[static_cast<size_t>(i)] = loadAsInt(t, i);
    return v;
  }
  if (attrs.has(name))
    return attrs.getInts(name);
  if (def)
    return *def;
  return invalidArgument(what, ": has no ", name);
}

// a*b+c, or nullopt on int64 overflow.
std::optional<int64_t> mulAdd(int64_t a, int64_t b, int64_t c) {
  int64_t p, s;
  if (__builtin_mul_overflow(a, b, &p) || __builtin_add_overflow(p, c, &s))
    return std::nullopt;
  return s;
}

int64_t positiveMod(int64_t a, int64_t n) {
  int64_t m = a % n;
  return m < 0 ? m + n : m;
}

struct SliceKernel final : Kernel {
  ir::Attributes attrs;
  std::string what;
  SampleMode mode = SampleMode::kSTRICT_BOUNDS;

  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& x = ctx.inputs[0];
    TensorView const& y = ctx.outputs[0];
    Dims const& in = x.shape;
    Dims const& out = y.shape;
    int32_t rank = in.nbDims;
    if (x.dtype != y.dtype || out.nbDims != rank)
      return invalidArgument(what, ": output ", dimsToString(out), " does not fit input ", dimsToString(in));
    std::vector<int64_t> all;
    for (int32_t i = 0; i < rank; ++i)
      all.push_back(i);
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, paramValues(ctx, attrs, 5, "axes", all, what));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> start, paramValues(ctx, attrs, 1, "start", std::nullopt, what));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> size, paramValues(ctx, attrs, 2, "size", std::nullopt, what));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> stride,
                          paramValues(ctx, attrs, 3, "stride", std::vector<int64_t>(axes.size(), 1), what));
    if (start.size() != axes.size() || size.size() != axes.size() || stride.size() != axes.size())
      return invalidArgument(what, ": start, size and stride need ", axes.size(), " entries");
    // Full-rank parameters: untouched axes copy the whole dim.
    std::vector<int64_t> fullStart(static_cast<size_t>(rank), 0), fullStride(static_cast<size_t>(rank), 1);
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (size_t k = 0; k < axes.size(); ++k) {
      Result<int32_t> ax = normalizeAxis(axes[k], rank);
      if (!ax.isOk())
        return ax.status().withContext(what);
      if (seen[*ax])
        return invalidArgument(what, ": slice axis ", axes[k], " is repeated");
      seen[*ax] = true;
      if (size[k] != out.d[*ax])
        return invalidArgument(what, ": size ", size[k], " on axis ", *ax, " but the output dim is ", out.d[*ax]);
      fullStart[*ax] = start[k];
      fullStride[*ax] = stride[k];
    }
    for (int32_t d = 0; d < rank; ++d)
      if (!seen[d] && out.d[d] != in.d[d])
        return invalidArgument(what, ": output dim ", d, " is ", out.d[d], " but axis ", d, " is not sliced");
    // Nothing to write: no coordinate is needed (and an empty output may still have one huge extent, whose table of
    // coordinates below would be built for nothing: plan_fuzz, 1 GiB for [0, 134M]).
    if (y.count() == 0)
      return Status::ok();

    // Source coordinate of every output position along each axis; -1 reads the fill value.
    std::vector<std::vector<int64_t>> src(static_cast<size_t>(rank));
    for (int32_t d = 0; d < rank; ++d) {
      int64_t n = in.d[d];
      for (int64_t i = 0; i < out.d[d]; ++i) {
        std::optional<int64_t> c = mulAdd(i, fullStride[d], fullStart[d]);
        if (!c)
          return invalidArgument(what, ": slice coordinates on axis ", d, " overflow");
        int64_t s = *c;
        bool inside = s >= 0 && s < n;
        if (!inside) {
          switch (mode) {
            case SampleMode::kSTRICT_BOUNDS:
              return invalidArgument(what, ": coordinate ", s, " on axis ", d, " is out of bounds [0, ", n, ") (start ",
                                     fullStart[d], ", stride ", fullStride[d], ")");
            case SampleMode::kFILL:
              s = -1;
              break;
            case SampleMode::kWRAP:
            case SampleMode::kCLAMP:
            case SampleMode::kREFLECT:
              if (n == 0)
                return invalidArgument(what, ": cannot sample axis ", d, " of size 0 in this mode");
              if (mode == SampleMode::kWRAP) {
                s = positiveMod(s, n);
              } else if (mode == SampleMode::kCLAMP) {
                s = s < 0 ? 0 : n - 1;
              } else if (n == 1) {
                s = 0;
              } else {
                int64_t period = 2 * (n - 1);  // reflection about the middle of the edge elements
                s = positiveMod(s, period);
                if (s >= n)
                  s = period - s;
              }
              break;
          }
        }
        src[d].push_back(s);
      }
    }

    size_t elem = dataTypeSize(x.dtype);
    // The fill value in the output's type (zero bytes by default).
    alignas(8) unsigned char fill[16] = {};
    if (ctx.inputs.size() > 4 && ctx.inputs[4].data) {
      TensorView const& f = ctx.inputs[4];
      if (f.count() != 1)
        return invalidArgument(what, ": the fill value must have one element");
      TensorView fv{fill, y.dtype, makeDims({1})};
      if (isFloatType(f.dtype) || isFloatType(y.dtype))
        storeFromDouble(fv, 0, loadAsDouble(f, 0));
      else
        storeFromInt(fv, 0, loadAsInt(f, 0));
    }
    int64_t total = volume(out);
    if (total <= 0)
      return Status::ok();
    std::vector<int64_t> inStrides = rowMajorStrides(in);
    auto const* s = static_cast<unsigned char const*>(x.data);
    auto* dst = static_cast<unsigned char*>(y.data);
    if (rank == 0) {
      std::memcpy(dst, s, elem);
      return Status::ok();
    }
    // Row by row over the innermost output dim: the outer dims' source offset (or fill) once per row.
    int32_t const last = rank - 1;
    int64_t const rowLength = out.d[last];
    int64_t const rows = total / rowLength;
    std::vector<int64_t> const& lastSrc = src[last];
    int64_t const lastStride = inStrides[last];
    std::vector<int64_t> idx(static_cast<size_t>(last), 0);
    for (int64_t row = 0; row < rows; ++row) {
      int64_t off = 0;
      bool rowFill = false;
      for (int32_t d = 0; d < last; ++d) {
        int64_t c = src[d][idx[d]];
        if (c < 0)
          rowFill = true;
        else
          off += c * inStrides[d];
      }
      unsigned char* out0 = dst + static_cast<size_t>(row * rowLength) * elem;
      for (int64_t j = 0; j < rowLength; ++j) {
        int64_t c = lastSrc[static_cast<size_t>(j)];
        unsigned char const* from = rowFill || c < 0 ? fill : s + static_cast<size_t>(off + c * lastStride) * elem;
        std::memcpy(out0 + static_cast<size_t>(j) * elem, from, elem);
      }
      for (int32_t d = last - 1; d >= 0; --d) {
        if (++idx[d] < out.d[d])
          break;
        idx[d] = 0;
      }
    }
    return Status::ok();
  }
};

Tactic sliceTactic() {
  return makeTactic(
      "slice_reference", ir::OpType::kSlice,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        int64_t m = node.attrs.getInt("mode", 0);
        if (m < 0 || m >= EnumMax<SampleMode>())
          return invalidGraph(node.describe(), ": invalid slice mode ", m);
        auto k = std::make_unique<SliceKernel>();
        k->attrs = node.attrs;
        k->what = node.describe();
        k->mode = static_cast<SampleMode>(m);
        return std::unique_ptr<Kernel>(std::move(k));
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return !in.empty() && out.size() == 1 && in[0].dtype == out[0].dtype && dataTypeSize(in[0].dtype) > 0 &&
               dataTypeSize(in[0].dtype) <= 8;
      });
}

KILN_REGISTER_TACTIC(sliceTactic);

}  // namespace
}  // namespace kiln::backends::reference
