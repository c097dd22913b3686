// LRN on the GPU (TensorRT's cross-channel formula over x [N, C, ...]), float types with fp32 math.
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/lrn_kernels.h"

namespace kiln::cuda {
namespace {

struct LrnParams {
  std::string who;
  int64_t window = 1;
  float alpha = 1, beta = 1, k = 1;
};

class LrnKernel final : public backends::Kernel {
 public:
  explicit LrnKernel(LrnParams p) : p_(std::move(p)) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& y = ctx.outputs[0];
    if (!dimsEqual(x.shape, y.shape) || x.shape.nbDims < 3)
      return invalidArgument(p_.who, ": y must have x's shape, of rank >= 3");
    int64_t n = x.shape.d[0], c = x.shape.d[1], inner = 1;
    for (int32_t d = 2; d < x.shape.nbDims; ++d) inner *= x.shape.d[d];
    if (n * c * inner == 0) return Status::ok();
    if (!launchLrn(static_cast<int32_t>(x.dtype), x.data, y.data, n, c, inner, p_.window, p_.alpha, p_.beta, p_.k,
                   streamOf(ctx)))
      return unsupported(p_.who, ": no GPU LRN for ", dataTypeName(x.dtype));
    return launchStatus(p_.who);
  }

 private:
  LrnParams p_;
};

backends::Tactic makeLrn() {
  backends::Tactic t;
  t.name = "lrn_cuda_direct";
  t.op = ir::OpType::kLRN;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    int64_t w = node.attrs.getInt("window", 0);
    return in.size() == 1 && out.size() == 1 && isCudaFloat(in[0].dtype) && out[0].dtype == in[0].dtype && w >= 1 &&
           w % 2 == 1;
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    LrnParams p;
    p.who = node.describe();
    p.window = node.attrs.getInt("window", 0);
    p.alpha = static_cast<float>(node.attrs.getFloat("alpha", 1.0));
    p.beta = static_cast<float>(node.attrs.getFloat("beta", 1.0));
    p.k = static_cast<float>(node.attrs.getFloat("k", 1.0));
    if (p.window < 1 || p.window % 2 == 0)
      return invalidGraph(p.who, ": window = ", p.window, " must be odd and positive");
    return std::unique_ptr<backends::Kernel>(new LrnKernel(std::move(p)));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeLrn);

}  // namespace
}  // namespace kiln::cuda
