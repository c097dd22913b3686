// Padding on the GPU: zero padding of the innermost axes (negative pads crop), as the sampled copy in fill mode
// with start -pads_begin and stride 1 (a plain strided copy when it only crops). Any 1/2/4/8-byte type.
#include <vector>

#include "backends/cuda/copy_host.h"

namespace kiln::cuda {
namespace {

class PaddingKernel final : public backends::Kernel {
 public:
  PaddingKernel(std::vector<int64_t> pb, std::vector<int64_t> pe, std::string what)
      : pb_(std::move(pb)), pe_(std::move(pe)), what_(std::move(what)) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& y = ctx.outputs[0];
    int32_t rank = x.shape.nbDims;
    int32_t n = static_cast<int32_t>(pb_.size());
    if (pe_.size() != pb_.size() || n > rank || y.shape.nbDims != rank || x.dtype != y.dtype)
      return invalidArgument(what_, ": x ", dimsToString(x.shape), " and y ", dimsToString(y.shape),
                             " do not fit the padding");
    SamplePlan p;
    p.rank = rank;
    p.mode = kSampleFill;
    for (int32_t a = 0; a < rank; ++a) {
      int32_t i = a - (rank - n);
      int64_t want = x.shape.d[a] + (i >= 0 ? pb_[i] + pe_[i] : 0);
      if (y.shape.d[a] != want)
        return invalidArgument(what_, ": y ", dimsToString(y.shape), " does not match the padded input ",
                               dimsToString(x.shape));
      p.outDims[a] = y.shape.d[a];
      p.inDims[a] = x.shape.d[a];
      p.start[a] = i >= 0 ? -pb_[i] : 0;
      p.stride[a] = 1;
    }
    return runSamplePlan(x.data, y.data, y.dtype, p, streamOf(ctx), what_);
  }

 private:
  std::vector<int64_t> pb_, pe_;
  std::string what_;
};

backends::Tactic makePadding() {
  backends::Tactic t;
  t.name = "padding_cuda_strided";
  t.op = ir::OpType::kPadding;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const&, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    return in.size() == 1 && out.size() == 1 && in[0].dtype == out[0].dtype && isByteCopyable(in[0].dtype);
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    std::vector<int64_t> pb = node.attrs.getInts("pads_begin"), pe = node.attrs.getInts("pads_end");
    if (pb.size() != pe.size()) return invalidGraph(node.describe(), ": pads_begin and pads_end differ in length");
    return std::unique_ptr<backends::Kernel>(new PaddingKernel(std::move(pb), std::move(pe), node.describe()));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makePadding);

}  // namespace
}  // namespace kiln::cuda
