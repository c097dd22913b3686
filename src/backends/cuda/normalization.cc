// Normalization on the GPU: layer / instance norm over `axes` with scale and bias broadcast to x, and group norm
// (num_groups > 1: x viewed as [N, G, C/G, spatial...], scale/bias per group, or per channel with v2), of x or of
// x + residual (the fused residual add), float types with fp32 math; the index spaces are built here exactly as
// the reference walks them.
#include <vector>

#include "backends/cuda/cuda_util.h"
#include "backends/cuda/normalization_kernels.h"
#include "backends/normalization_view.h"

namespace kiln::cuda {
namespace {

struct NormParams {
  std::string who;
  std::vector<int64_t> axes;
  float epsilon = 1e-5f;
  int64_t groups = 1;
  bool v2 = false;
};

class NormalizationKernel final : public backends::Kernel {
 public:
  explicit NormalizationKernel(NormParams p) : p_(std::move(p)) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& scale = ctx.inputs[1];
    auto const& bias = ctx.inputs[2];
    auto const& y = ctx.outputs[0];
    if (!dimsEqual(x.shape, y.shape)) return invalidArgument(p_.who, ": y must have x's shape");
    void const* residual = nullptr;
    if (ctx.inputs.size() > 3 && ctx.inputs[3].data) {
      if (!dimsEqual(ctx.inputs[3].shape, x.shape) || ctx.inputs[3].dtype != x.dtype)
        return invalidArgument(p_.who, ": residual must have x's shape and type");
      residual = ctx.inputs[3].data;
    }
    KILN_ASSIGN_OR_RETURN(
        backends::NormalizationView view,
        backends::normalizationView(p_.who, x.shape, scale.shape, bias.shape, p_.axes, p_.groups, p_.v2));
    if (x.count() == 0) return Status::ok();
    std::vector<int64_t> const& shape = view.shape;
    int32_t n = static_cast<int32_t>(shape.size());
    int64_t const* strides[3] = {view.xStrides.data(), view.scaleStrides.data(), view.biasStrides.data()};
    bool maskB[kSpaceMaxDims] = {};
    for (int32_t d = 0; d < n; ++d) maskB[d] = view.reduced[static_cast<size_t>(d)];
    StridedSpace outer = makeSpace(n, shape.data(), maskB, false, 3, strides);
    StridedSpace inner = makeSpace(n, shape.data(), maskB, true, 3, strides);
    if (outer.count == 0 || inner.count == 0) return Status::ok();
    if (launchNormalization(static_cast<int32_t>(x.dtype), x.data, residual, y.data, scale.data,
                            static_cast<int32_t>(scale.dtype), bias.data, static_cast<int32_t>(bias.dtype), outer,
                            inner, p_.epsilon, streamOf(ctx)) == NormPath::kNone)
      return unsupported(p_.who, ": no GPU normalization for ", dataTypeName(x.dtype));
    return launchStatus(p_.who);
  }

 private:
  NormParams p_;
};

backends::Tactic makeNormalization() {
  backends::Tactic t;
  t.name = "normalization_cuda_groups";
  t.op = ir::OpType::kNormalization;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    if (in.size() < 3 || in.size() > 4 || out.size() != 1 || out[0].dtype != in[0].dtype) return false;
    for (auto const& i : in)
      if (!isCudaFloat(i.dtype)) return false;
    if (in.size() == 4 && in[3].shape.nbDims >= 0 && in[3].dtype != in[0].dtype) return false;
    return in[0].shape.nbDims <= Dims::MAX_DIMS && !node.attrs.getInts("axes").empty() &&
           node.attrs.getInt("num_groups", 1) >= 1;
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    NormParams p;
    p.who = node.describe();
    p.axes = node.attrs.getInts("axes");
    if (p.axes.empty()) return invalidGraph(p.who, ": attribute 'axes' is empty");
    p.epsilon = static_cast<float>(node.attrs.getFloat("epsilon", 1e-5));
    p.groups = node.attrs.getInt("num_groups", 1);
    if (p.groups < 1) return invalidGraph(p.who, ": num_groups must be >= 1");
    p.v2 = node.attrs.getInt("v2", 0) != 0;
    return std::unique_ptr<backends::Kernel>(new NormalizationKernel(std::move(p)));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeNormalization);

}  // namespace
}  // namespace kiln::cuda
