// Fast CPU Slice tactic (slice_cpu_strided): fp32 slices in kSTRICT_BOUNDS mode (any strides, negative included;
// parameters from the attributes or from shape-tensor inputs read at enqueue) as strided row copies, a memcpy
// per output row where the last axis is contiguous, rows split over the runtime's threads for large outputs. The
// other sample modes (fill, wrap, clamp, reflect) stay on the reference.
#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "backends/backend.h"
#include "kiln/kiln.h"

namespace kiln::backends::cpu {
namespace {

using ir::OpType;

// An integer parameter: input `input` when the node has it (a 1-D int32/int64 host tensor), else the attribute,
// else `def`.
Result<std::vector<int64_t>> param(LaunchContext const& ctx, ir::Attributes const& attrs, size_t input,
                                   char const* name, std::optional<std::vector<int64_t>> def, std::string const& who) {
  if (input < ctx.inputs.size() && ctx.inputs[input].data) {
    TensorView const& t = ctx.inputs[input];
    if (t.shape.nbDims != 1 || (t.dtype != DataType::kINT32 && t.dtype != DataType::kINT64))
      return invalidArgument(who, ": ", name, " must be a 1-D int32/int64 tensor");
    std::vector<int64_t> v(static_cast<size_t>(t.shape.d[0]));
    for (int64_t i = 0; i < t.shape.d[0]; ++i)
      v[static_cast<size_t>(i)] = t.dtype == DataType::kINT32 ? t.as<int32_t>()[i] : t.as<int64_t>()[i];
    return v;
  }
  if (attrs.has(name))
    return attrs.getInts(name);
  if (def)
    return *def;
  return invalidArgument(who, ": has no ", name);
}

class StridedSliceKernel final : public Kernel {
 public:
  StridedSliceKernel(std::string who, ir::Attributes attrs) : who_(std::move(who)), attrs_(std::move(attrs)) {}

  Status enqueue(LaunchContext const& ctx) const override {
    TensorView const& x = ctx.inputs[0];
    TensorView const& y = ctx.outputs[0];
    Dims const& in = x.shape;
    Dims const& out = y.shape;
    int32_t rank = in.nbDims;
    if (out.nbDims != rank || rank < 1)
      return invalidArgument(who_, ": output ", dimsToString(out), " does not fit input ", dimsToString(in));
    std::vector<int64_t> all;
    for (int32_t i = 0; i < rank; ++i)
      all.push_back(i);
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, param(ctx, attrs_, 5, "axes", all, who_));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> start, param(ctx, attrs_, 1, "start", std::nullopt, who_));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> size, param(ctx, attrs_, 2, "size", std::nullopt, who_));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> stride,
                          param(ctx, attrs_, 3, "stride", std::vector<int64_t>(axes.size(), 1), who_));
    if (start.size() != axes.size() || size.size() != axes.size() || stride.size() != axes.size())
      return invalidArgument(who_, ": start, size and stride need ", axes.size(), " entries");
    std::vector<int64_t> first(static_cast<size_t>(rank), 0), step(static_cast<size_t>(rank), 1);
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
      if (a < 0 || a >= rank || seen[static_cast<size_t>(a)])
        return invalidArgument(who_, ": slice axis ", axes[k], " is out of range or repeated");
      seen[static_cast<size_t>(a)] = true;
      if (size[k] != out.d[a])
        return invalidArgument(who_, ": size ", size[k], " on axis ", a, " but the output dim is ", out.d[a]);
      first[static_cast<size_t>(a)] = start[k];
      step[static_cast<size_t>(a)] = stride[k];
    }
    for (int32_t d = 0; d < rank; ++d) {
      if (!seen[static_cast<size_t>(d)] && out.d[d] != in.d[d])
        return invalidArgument(who_, ": output dim ", d, " is ", out.d[d], " but axis ", d, " is not sliced");
      if (out.d[d] == 0)
        return Status::ok();
      // Strict bounds: the first and last coordinates (the sequence is monotone) must lie inside.
      int64_t lo = first[static_cast<size_t>(d)], hi = lo + (out.d[d] - 1) * step[static_cast<size_t>(d)];
      if (lo < 0 || lo >= in.d[d] || hi < 0 || hi >= in.d[d])
        return invalidArgument(who_, ": coordinates on axis ", d, " run from ", lo, " to ", hi, ", outside [0, ",
                               in.d[d], ")");
    }
    // Element strides of x, the offset of the first element read and the step per output index.
    std::vector<int64_t> xs(static_cast<size_t>(rank), 1);
    for (int32_t d = rank - 1; d > 0; --d)
      xs[static_cast<size_t>(d - 1)] = xs[static_cast<size_t>(d)] * in.d[d];
    int64_t base = 0;
    std::vector<int64_t> inc(static_cast<size_t>(rank));
    for (int32_t d = 0; d < rank; ++d) {
      base += first[static_cast<size_t>(d)] * xs[static_cast<size_t>(d)];
      inc[static_cast<size_t>(d)] = step[static_cast<size_t>(d)] * xs[static_cast<size_t>(d)];
    }
    int64_t rowLen = out.d[rank - 1], rows = y.count() / rowLen;
    auto const* src = static_cast<float const*>(x.data);
    auto* dst = static_cast<float*>(y.data);
    auto copyRows = [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        // Output row r's coordinates over the leading rank-1 dims.
        int64_t off = base, rem = r;
        for (int32_t d = rank - 2; d >= 0; --d) {
          off += (rem % out.d[d]) * inc[static_cast<size_t>(d)];
          rem /= out.d[d];
        }
        float* o = dst + r * rowLen;
        int64_t s = inc[static_cast<size_t>(rank - 1)];
        if (s == 1) {
          std::memcpy(o, src + off, static_cast<size_t>(rowLen) * sizeof(float));
        } else {
          for (int64_t i = 0; i < rowLen; ++i)
            o[i] = src[off + i * s];
        }
      }
    };
    // Small slices stay on the calling thread (waking workers would cost more than the copy).
    if (ctx.pool && y.count() >= (int64_t{1} << 18))
      ctx.pool->parallelFor(rows, std::max<int64_t>(1, (int64_t{1} << 14) / rowLen), copyRows);
    else
      copyRows(0, rows);
    return Status::ok();
  }

 private:
  std::string who_;
  ir::Attributes attrs_;
};

Tactic sliceTactic() {
  Tactic t;
  t.name = "slice_cpu_strided";
  t.op = OpType::kSlice;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kONEDNN;  // the fast CPU backend's source (no library call needed for copies)
  t.priority = 10;
  t.supports = [](ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
    return !in.empty() && out.size() == 1 && in[0].dtype == DataType::kFLOAT && out[0].dtype == DataType::kFLOAT &&
           in[0].shape.nbDims >= 1 &&
           node.attrs.getInt("mode", static_cast<int64_t>(SampleMode::kSTRICT_BOUNDS)) ==
               static_cast<int64_t>(SampleMode::kSTRICT_BOUNDS);
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<StridedSliceKernel>(node.describe(), node.attrs));
  };
  return t;
}

KILN_REGISTER_TACTIC(sliceTactic);

}  // namespace
}  // namespace kiln::backends::cpu
