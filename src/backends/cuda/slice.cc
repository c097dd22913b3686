// Slice (TensorRT 10's ISliceLayer) on the GPU, any 1/2/4/8-byte type: a strided copy when every coordinate lands
// inside the input, else the sampled copy (wrap, clamp, fill, reflect). Start/stride/axes given as tensors must
// be constants (read at create); run-time ones fall back to the host. The fill value is read on the device and
// must have the output's type.
#include <optional>
#include <vector>

#include "backends/cuda/copy_host.h"

namespace kiln::cuda {
namespace {

constexpr size_t kStart = 1, kSize = 2, kStride = 3, kFill = 4, kAxes = 5;

// Whether parameter input i can be known at create: absent, or a constant.
bool paramKnown(ir::Node const& n, size_t i) { return !hasInput(n, i) || constantInput(n, i) != nullptr; }

// The parameter from its constant input, else from the attribute; nullopt when neither.
std::optional<std::vector<int64_t>> paramValues(ir::Node const& n, size_t input, char const* name) {
  if (hasInput(n, input)) {
    HostTensor const* c = constantInput(n, input);
    if (!c) return std::nullopt;
    return c->toInt64Vector();
  }
  if (n.attrs.has(name)) return n.attrs.getInts(name);
  return std::nullopt;
}

class SliceKernel final : public backends::Kernel {
 public:
  std::optional<std::vector<int64_t>> axes, start, size, stride;
  int32_t mode = 0;
  std::string what;

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& y = ctx.outputs[0];
    Dims const& in = x.shape;
    Dims const& out = y.shape;
    int32_t rank = in.nbDims;
    if (x.dtype != y.dtype || out.nbDims != rank)
      return invalidArgument(what, ": output ", dimsToString(out), " does not fit input ", dimsToString(in));
    std::vector<int64_t> ax;
    if (axes) {
      ax = *axes;
    } else {
      for (int32_t i = 0; i < rank; ++i) ax.push_back(i);
    }
    if (!start) return invalidArgument(what, ": has no start");
    std::vector<int64_t> st = *start;
    std::vector<int64_t> sr = stride ? *stride : std::vector<int64_t>(ax.size(), 1);
    if (st.size() != ax.size() || sr.size() != ax.size() || (size && size->size() != ax.size()))
      return invalidArgument(what, ": start, size and stride need ", ax.size(), " entries");
    std::vector<int64_t> fullStart(static_cast<size_t>(rank), 0), fullStride(static_cast<size_t>(rank), 1);
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (size_t k = 0; k < ax.size(); ++k) {
      Result<int32_t> a = normalizeAxis(ax[k], rank);
      if (!a.isOk()) return a.status().withContext(what);
      if (seen[*a]) return invalidArgument(what, ": slice axis ", ax[k], " is repeated");
      seen[*a] = true;
      if (size && (*size)[k] != out.d[*a])
        return invalidArgument(what, ": size ", (*size)[k], " on axis ", *a, " but the output dim is ", out.d[*a]);
      fullStart[*a] = st[k];
      fullStride[*a] = sr[k];
    }
    for (int32_t d = 0; d < rank; ++d)
      if (!seen[d] && out.d[d] != in.d[d])
        return invalidArgument(what, ": output dim ", d, " is ", out.d[d], " but axis ", d, " is not sliced");
    SamplePlan p;
    p.rank = rank;
    p.mode = mode;
    for (int32_t d = 0; d < rank; ++d) {
      int64_t n = in.d[d];
      p.outDims[d] = out.d[d];
      p.inDims[d] = n;
      p.start[d] = fullStart[d];
      p.stride[d] = fullStride[d];
      if (out.d[d] <= 0) continue;
      // Coordinates are affine in the output index: checking both ends covers overflow and bounds.
      int64_t prod, last;
      if (__builtin_mul_overflow(out.d[d] - 1, fullStride[d], &prod) ||
          __builtin_add_overflow(prod, fullStart[d], &last))
        return invalidArgument(what, ": slice coordinates on axis ", d, " overflow");
      bool inside = fullStart[d] >= 0 && fullStart[d] < n && last >= 0 && last < n;
      if (inside) continue;
      if (mode == kSampleStrict)
        return invalidArgument(what, ": coordinates on axis ", d, " leave the bounds [0, ", n, ") (start ",
                               fullStart[d], ", stride ", fullStride[d], ")");
      if (mode != kSampleFill && n == 0)
        return invalidArgument(what, ": cannot sample axis ", d, " of size 0 in this mode");
    }
    if (ctx.inputs.size() > kFill && ctx.inputs[kFill].data) {
      auto const& f = ctx.inputs[kFill];
      if (f.count() != 1 || f.dtype != y.dtype)
        return invalidArgument(what, ": the fill value must have one element of the output's type");
      p.fillDevice = f.data;
    }
    return runSamplePlan(x.data, y.data, y.dtype, p, streamOf(ctx), what);
  }
};

backends::Tactic makeSlice() {
  backends::Tactic t;
  t.name = "slice_cuda_strided";
  t.op = ir::OpType::kSlice;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    int64_t mode = node.attrs.getInt("mode", 0);
    if (in.empty() || out.size() != 1 || in[0].dtype != out[0].dtype || !isByteCopyable(in[0].dtype) || mode < 0 ||
        mode >= EnumMax<SampleMode>())
      return false;
    if (!paramKnown(node, kStart) || !paramKnown(node, kStride) || !paramKnown(node, kAxes)) return false;
    // The size only restates the output's dims; a run-time one is not needed.
    if (hasInput(node, kFill) && (in.size() <= kFill || in[kFill].dtype != out[0].dtype)) return false;
    return true;
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    int64_t m = node.attrs.getInt("mode", 0);
    if (m < 0 || m >= EnumMax<SampleMode>()) return invalidGraph(node.describe(), ": invalid slice mode ", m);
    auto k = std::make_unique<SliceKernel>();
    k->what = node.describe();
    k->mode = static_cast<int32_t>(m);
    k->axes = paramValues(node, kAxes, "axes");
    k->start = paramValues(node, kStart, "start");
    k->stride = paramValues(node, kStride, "stride");
    if (!hasInput(node, kSize) || constantInput(node, kSize)) k->size = paramValues(node, kSize, "size");
    if ((hasInput(node, kStart) && !k->start) || (hasInput(node, kStride) && !k->stride) ||
        (hasInput(node, kAxes) && !k->axes))
      return unsupported(k->what, ": run-time slice parameters are not supported on the GPU");
    return std::unique_ptr<backends::Kernel>(std::move(k));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeSlice);

}  // namespace
}  // namespace kiln::cuda
