// NonZero on the GPU: counts the non-zero elements on the device, reads the count back (this op synchronizes its
// stream, as TensorRT's data-dependent layers: its output shape [rank, count] is known only then), allocates the
// output, then writes the int32/int64 coordinates in row-major order. Every storage type the device dispatches.
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/nonzero_kernels.h"

namespace kiln::cuda {
namespace {

bool nonZeroInputType(DataType t) {
  return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16 || t == DataType::kFP8 ||
         t == DataType::kINT8 || t == DataType::kUINT8 || t == DataType::kINT32 || t == DataType::kINT64 ||
         t == DataType::kBOOL;
}

class NonZeroKernel final : public backends::Kernel {
 public:
  explicit NonZeroKernel(std::string who) : who_(std::move(who)) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& y = ctx.outputs[0];
    cudaStream_t stream = streamOf(ctx);
    int32_t rank = x.shape.nbDims;
    int64_t n = x.count();
    int64_t count = 0;
    StreamScratch scratch(stream);
    int64_t* counts = nullptr;
    if (n > 0) {
      int64_t nb = nonZeroBlocks(n);
      KILN_RETURN_IF_ERROR(scratch.allocate(static_cast<size_t>(nb + 1) * sizeof(int64_t), who_));
      counts = static_cast<int64_t*>(scratch.data());
      if (!launchNonZeroCount(static_cast<int32_t>(x.dtype), x.data, n, counts, stream))
        return unsupported(who_, ": no GPU NonZero for ", dataTypeName(x.dtype));
      KILN_RETURN_IF_ERROR(launchStatus(who_));
      KILN_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(&count, counts + nb, sizeof(int64_t), cudaMemcpyDeviceToHost, stream),
                                who_ + ": reading the count");
      KILN_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), who_ + ": waiting for the count");
    }
    Dims shape = makeDims({rank, count});
    void* out = y.data;
    if (dimsKnown(y.shape) && y.shape.nbDims == 2 && y.shape.d[0] == rank && y.shape.d[1] == count) {
      // Already allocated with this shape.
    } else if (ctx.allocateOutput) {
      KILN_ASSIGN_OR_RETURN(out, ctx.allocateOutput(0, shape));
    } else {
      return invalidArgument(who_, ": output ", dimsToString(y.shape), " does not fit ", dimsToString(shape),
                             " and cannot be allocated here");
    }
    if (count == 0 || rank == 0) return Status::ok();
    NonZeroShape s;
    s.rank = rank;
    for (int32_t d = 0; d < rank; ++d) s.d[d] = x.shape.d[d];
    if (!launchNonZeroWrite(static_cast<int32_t>(x.dtype), x.data, n, s, counts, out, y.dtype == DataType::kINT64,
                            count, stream))
      return unsupported(who_, ": no GPU NonZero for ", dataTypeName(x.dtype));
    return launchStatus(who_);
  }

 private:
  std::string who_;
};

backends::Tactic makeNonZero() {
  backends::Tactic t;
  t.name = "nonzero_cuda_compact";
  t.op = ir::OpType::kNonZero;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const&, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    return in.size() == 1 && nonZeroInputType(in[0].dtype) && out.size() == 1 &&
           (out[0].dtype == DataType::kINT32 || out[0].dtype == DataType::kINT64);
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    return std::unique_ptr<backends::Kernel>(new NonZeroKernel(node.describe()));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeNonZero);

}  // namespace
}  // namespace kiln::cuda
