// Channels-last 1x1 convolutions as cuBLASLt matrix multiplies: with stride 1, no padding and one group, x in
// NHWC memory is the row-major matrix [N*H*W, C], the weights [K, C] and y [N*H*W, K] = x * w^T, with the bias
// (one per output channel) in cuBLASLt's epilogue and the activation fused or run after it. Residuals stay with
// cuDNN's fused call. Timed against the cuDNN tactics like any other candidate.
#include <vector>

#include "backends/cuda/cuda_util.h"
#include "backends/cuda/matmul.h"

namespace kiln::cuda {
namespace {

// The 1x1 geometry, read from the attributes: kernel 1x1, strides 1, no padding, dilation 1, one group.
bool isPointwiseConv(ir::Node const& node) {
  if (node.attrs.getInt("groups", 1) != 1) return false;
  auto all = [&](char const* name, int64_t want, bool absentOk) {
    if (!node.attrs.has(name)) return absentOk;
    for (int64_t v : node.attrs.getInts(name))
      if (v != want) return false;
    return true;
  };
  std::vector<int64_t> k = node.attrs.getInts("kernel_shape");
  if (k.size() != 2 || k[0] != 1 || k[1] != 1) return false;
  int64_t mode = node.attrs.getInt("padding_mode", static_cast<int64_t>(PaddingMode::kEXPLICIT_ROUND_DOWN));
  bool explicitPads = mode == static_cast<int64_t>(PaddingMode::kEXPLICIT_ROUND_DOWN) ||
                      mode == static_cast<int64_t>(PaddingMode::kEXPLICIT_ROUND_UP);
  return explicitPads && all("strides", 1, true) && all("dilations", 1, true) && all("pads_begin", 0, true) &&
         all("pads_end", 0, true);
}

Dims matrix(int64_t rows, int64_t cols) {
  Dims d{};
  d.nbDims = 2;
  d.d[0] = rows;
  d.d[1] = cols;
  return d;
}

class ConvGemmKernel final : public backends::Kernel {
 public:
  ConvGemmKernel(std::unique_ptr<backends::Kernel> gemm, std::string who) : gemm_(std::move(gemm)), who_(std::move(who)) {}

  size_t workspaceSize(std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) const override {
    if (in.size() < 2 || out.empty() || !dimsKnown(in[0].shape) || !dimsKnown(out[0].shape)) return 0;
    Dims const& x = in[0].shape;
    Dims const& y = out[0].shape;
    std::vector<ir::TensorInfo> gin{{in[0].dtype, matrix(x.d[0] * x.d[2] * x.d[3], x.d[1])},
                                    {in[1].dtype, matrix(y.d[1], x.d[1])}};
    if (in.size() > 2 && in[2].shape.nbDims >= 0) gin.push_back(in[2]);
    return gemm_->workspaceSize(gin, {{out[0].dtype, matrix(y.d[0] * y.d[2] * y.d[3], y.d[1])}});
  }

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& y = ctx.outputs[0];
    if (x.shape.nbDims != 4 || y.shape.nbDims != 4 || x.shape.d[0] != y.shape.d[0] || x.shape.d[2] != y.shape.d[2] ||
        x.shape.d[3] != y.shape.d[3])
      return invalidArgument(who_, ": x ", dimsToString(x.shape), " and y ", dimsToString(y.shape),
                             " are not a 1x1 convolution's");
    int64_t rows = x.shape.d[0] * x.shape.d[2] * x.shape.d[3];
    backends::LaunchContext g = ctx;
    g.inputs = {{x.data, x.dtype, matrix(rows, x.shape.d[1])}, {ctx.inputs[1].data, ctx.inputs[1].dtype,
                                                               matrix(y.shape.d[1], x.shape.d[1])}};
    if (ctx.inputs.size() > 2 && ctx.inputs[2].data) g.inputs.push_back(ctx.inputs[2]);
    g.outputs = {{y.data, y.dtype, matrix(rows, y.shape.d[1])}};
    return gemm_->enqueue(g);
  }

 private:
  std::unique_ptr<backends::Kernel> gemm_;
  std::string who_;
};

backends::Tactic makeConvGemm(int algoIndex) {
  backends::Tactic t;
  t.name = strCat("convolution_cublaslt_1x1_algo", algoIndex);
  t.op = ir::OpType::kConvolution;
  t.source = TacticSource::kCUBLAS_LT;
  t.priority = 28 - algoIndex;
  t.formatAware = true;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    // Channels-last only (row-major x is not [N*H*W, C]); no residual.
    if (backends::nodeFormat(node) != TensorFormat::kHWC || !isPointwiseConv(node)) return false;
    if (in.size() < 2 || in.size() > 4 || out.size() != 1) return false;
    if (in.size() == 4 && in[3].shape.nbDims >= 0) return false;
    DataType dt = out[0].dtype;
    if (dt != DataType::kHALF && dt != DataType::kBF16) return false;
    for (auto const& i : in)
      if (i.shape.nbDims >= 0 && i.dtype != dt) return false;
    return in[0].shape.nbDims == 4 && in[1].shape.nbDims == 4 && out[0].shape.nbDims == 4 &&
           (in.size() < 3 || in[2].shape.nbDims < 0 || in[2].shape.nbDims == 1);
  };
  t.create = [algoIndex](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    matmul::Attrs at;
    at.who = node.describe();
    at.opA = MatrixOperation::kNONE;
    at.opB = MatrixOperation::kTRANSPOSE;
    int64_t act = node.attrs.getInt("activation", -1);
    if (act < -1 || act >= EnumMax<ActivationType>()) return invalidGraph(at.who, ": unknown activation ", act);
    at.activation = static_cast<int32_t>(act);
    at.alpha = node.attrs.getFloat("act_alpha", 0.0);
    at.beta = node.attrs.getFloat("act_beta", 0.0);
    return std::unique_ptr<backends::Kernel>(new ConvGemmKernel(matmul::makeCublasLtKernel(at, algoIndex), at.who));
  };
  return t;
}
backends::Tactic makeConvGemm0() { return makeConvGemm(0); }
backends::Tactic makeConvGemm1() { return makeConvGemm(1); }
KILN_REGISTER_CUDA_TACTIC(makeConvGemm0);
KILN_REGISTER_CUDA_TACTIC(makeConvGemm1);

}  // namespace
}  // namespace kiln::cuda
