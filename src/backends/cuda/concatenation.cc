// Concatenation on the GPU: one strided copy per input into its slab of the output along the axis (any 1/2/4/8-byte
// type; inputs with no elements are skipped).
#include <vector>

#include "backends/cuda/copy_host.h"

namespace kiln::cuda {
namespace {

class ConcatKernel final : public backends::Kernel {
 public:
  ConcatKernel(int64_t axis, std::string what) : axis_(axis), what_(std::move(what)) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& y = ctx.outputs[0];
    Result<int32_t> axisR = normalizeAxis(axis_, y.shape.nbDims);
    if (!axisR.isOk()) return axisR.status().withContext(what_);
    int32_t axis = *axisR;
    int64_t outer = 1, inner = 1, total = 0;
    for (int32_t d = 0; d < axis; ++d) outer *= y.shape.d[d];
    for (int32_t d = axis + 1; d < y.shape.nbDims; ++d) inner *= y.shape.d[d];
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      auto const& x = ctx.inputs[i];
      bool fits = x.dtype == y.dtype && x.shape.nbDims == y.shape.nbDims;
      for (int32_t d = 0; fits && d < y.shape.nbDims; ++d)
        if (d != axis && x.shape.d[d] != y.shape.d[d]) fits = false;
      if (!fits)
        return invalidArgument(what_, ": input ", i, " ", dimsToString(x.shape), " does not fit output ",
                               dimsToString(y.shape), " on axis ", axis);
      total += x.shape.d[axis];
    }
    if (total != y.shape.d[axis])
      return invalidArgument(what_, ": inputs add up to ", total, " along axis ", axis, ", output has ",
                             y.shape.d[axis]);
    int64_t outAxis = y.shape.d[axis], offset = 0;
    for (auto const& x : ctx.inputs) {
      int64_t len = x.shape.d[axis];
      if (len > 0 && outer > 0 && inner > 0) {
        CopyPlan p;
        p.rank = 3;
        p.dims[0] = outer, p.dims[1] = len, p.dims[2] = inner;
        p.inStrides[0] = len * inner, p.inStrides[1] = inner, p.inStrides[2] = 1;
        p.outStrides[0] = outAxis * inner, p.outStrides[1] = inner, p.outStrides[2] = 1;
        p.outOffset = offset * inner;
        KILN_RETURN_IF_ERROR(runCopyPlan(x.data, y.data, y.dtype, p, streamOf(ctx), what_));
      }
      offset += len;
    }
    return Status::ok();
  }

 private:
  int64_t axis_;
  std::string what_;
};

backends::Tactic makeConcatenation() {
  backends::Tactic t;
  t.name = "concatenation_cuda_strided";
  t.op = ir::OpType::kConcatenation;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const&, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    if (in.empty() || out.size() != 1 || !isByteCopyable(out[0].dtype)) return false;
    for (auto const& i : in)
      if (i.dtype != out[0].dtype) return false;
    return true;
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    return std::unique_ptr<backends::Kernel>(new ConcatKernel(node.attrs.getInt("axis", 0), node.describe()));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeConcatenation);

}  // namespace
}  // namespace kiln::cuda
