// ReverseSequence on the GPU: per batch entry, the first sequence_lens[b] steps along the sequence axis reversed,
// the rest copied (raw bytes of 1/2/4/8; int32/int64 lengths). A length outside [0, steps] (an error on the host,
// which the device cannot report) leaves its batch entry copied unchanged.
#include "backends/cuda/copy_host.h"
#include "backends/cuda/index_ops_kernels.h"

namespace kiln::cuda {
namespace {

class ReverseSequenceKernel final : public backends::Kernel {
 public:
  ReverseSequenceKernel(int64_t batchAxis, int64_t seqAxis, std::string what)
      : batchAxis_(batchAxis), seqAxis_(seqAxis), what_(std::move(what)) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& lens = ctx.inputs[1];
    auto const& y = ctx.outputs[0];
    int32_t rank = x.shape.nbDims;
    int64_t ba = batchAxis_ < 0 ? batchAxis_ + rank : batchAxis_;
    int64_t sa = seqAxis_ < 0 ? seqAxis_ + rank : seqAxis_;
    if (rank < 2 || ba < 0 || ba >= rank || sa < 0 || sa >= rank || ba == sa)
      return invalidArgument(what_, ": bad batch/sequence axes for rank ", rank);
    if (y.dtype != x.dtype || y.count() != x.count()) return invalidArgument(what_, ": output does not fit the input");
    int64_t batch = x.shape.d[ba], steps = x.shape.d[sa];
    if (lens.count() != batch)
      return invalidArgument(what_, ": sequence_lens has ", lens.count(), " entries for a batch of ", batch);
    int64_t strides[kCopyMaxRank];
    denseStrides(x.shape, strides);
    KILN_CUDA_RETURN_IF_ERROR(launchReverseSequence(x.data, lens.data, lens.dtype == DataType::kINT64, y.data,
                                                    static_cast<int32_t>(dataTypeSize(x.dtype)), x.count(), batch,
                                                    strides[ba], steps, strides[sa], streamOf(ctx)),
                              what_);
    return Status::ok();
  }

 private:
  int64_t batchAxis_, seqAxis_;
  std::string what_;
};

backends::Tactic makeReverseSequence() {
  backends::Tactic t;
  t.name = "reverse_sequence_cuda_direct";
  t.op = ir::OpType::kReverseSequence;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const&, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    return in.size() == 2 && out.size() == 1 && in[0].dtype == out[0].dtype && isByteCopyable(in[0].dtype) &&
           (in[1].dtype == DataType::kINT32 || in[1].dtype == DataType::kINT64);
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    return std::unique_ptr<backends::Kernel>(new ReverseSequenceKernel(
        node.attrs.getInt("batch_axis", 1), node.attrs.getInt("sequence_axis", 0), node.describe()));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeReverseSequence);

}  // namespace
}  // namespace kiln::cuda
