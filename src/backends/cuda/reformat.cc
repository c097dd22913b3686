// Reformat on the GPU: a 4-D [N, C, H, W] tensor between row-major (kLINEAR) and channels-last (kHWC) memory,
// as one strided copy (any 1/2/4/8-byte type), walking the output in its memory order.
#include "backends/cuda/copy_host.h"

namespace kiln::cuda {
namespace {

class ReformatKernel final : public backends::Kernel {
 public:
  ReformatKernel(TensorFormat from, TensorFormat to, std::string what) : from_(from), to_(to), what_(std::move(what)) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& y = ctx.outputs[0];
    if (x.dtype != y.dtype || !dimsEqual(x.shape, y.shape))
      return invalidArgument(what_, ": output ", dimsToString(y.shape), " differs from input ", dimsToString(x.shape));
    int64_t count = x.count();
    if (count == 0) return Status::ok();
    cudaStream_t stream = streamOf(ctx);
    if (from_ == to_) {
      if (x.data != y.data)
        KILN_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(y.data, x.data, static_cast<size_t>(count) * dataTypeSize(x.dtype),
                                                  cudaMemcpyDeviceToDevice, stream),
                                  what_);
      return Status::ok();
    }
    if (x.shape.nbDims != 4) return invalidArgument(what_, ": kHWC needs a 4-D tensor, got ", dimsToString(x.shape));
    int64_t n = x.shape.d[0], c = x.shape.d[1], h = x.shape.d[2], w = x.shape.d[3];
    CopyPlan p;
    p.rank = 4;
    if (to_ == TensorFormat::kHWC) {
      // Output order n, h, w, c; the input is row-major [N, C, H, W].
      int64_t dims[4] = {n, h, w, c}, in[4] = {c * h * w, w, 1, h * w};
      for (int i = 0; i < 4; ++i) {
        p.dims[i] = dims[i];
        p.inStrides[i] = in[i];
      }
    } else {
      // Output order n, c, h, w; the input is [N, H, W, C].
      int64_t dims[4] = {n, c, h, w}, in[4] = {h * w * c, 1, w * c, c};
      for (int i = 0; i < 4; ++i) {
        p.dims[i] = dims[i];
        p.inStrides[i] = in[i];
      }
    }
    int64_t s = 1;
    for (int i = 3; i >= 0; --i) {
      p.outStrides[i] = s;
      s *= p.dims[i];
    }
    return runCopyPlan(x.data, y.data, x.dtype, p, stream, what_);
  }

 private:
  TensorFormat from_, to_;
  std::string what_;
};

bool isSupportedFormat(int64_t f) {
  return f == static_cast<int64_t>(TensorFormat::kLINEAR) || f == static_cast<int64_t>(TensorFormat::kHWC);
}

backends::Tactic makeReformat() {
  backends::Tactic t;
  t.name = "reformat_cuda_strided";
  t.op = ir::OpType::kReformat;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    return in.size() == 1 && out.size() == 1 && in[0].dtype == out[0].dtype && isByteCopyable(in[0].dtype) &&
           isSupportedFormat(node.attrs.getInt("from", 0)) && isSupportedFormat(node.attrs.getInt("to", 0));
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    return std::unique_ptr<backends::Kernel>(new ReformatKernel(static_cast<TensorFormat>(node.attrs.getInt("from", 0)),
                                                                static_cast<TensorFormat>(node.attrs.getInt("to", 0)),
                                                                node.describe()));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeReformat);

}  // namespace
}  // namespace kiln::cuda
