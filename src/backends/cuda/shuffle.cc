// Shuffle on the GPU: transpose, reshape, transpose as one strided gather-copy (any 1/2/4/8-byte type). The
// reshape is free in row-major memory; the optional reshape-dims input is only read by shape inference.
#include <vector>

#include "backends/cuda/copy_host.h"

namespace kiln::cuda {
namespace {

bool validPerm(std::vector<int64_t> const& perm, int32_t rank) {
  if (perm.empty()) return true;
  if (static_cast<int64_t>(perm.size()) != rank) return false;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[static_cast<size_t>(p)]) return false;
    seen[static_cast<size_t>(p)] = true;
  }
  return true;
}

bool isIdentityPerm(std::vector<int64_t> const& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

int64_t permAt(std::vector<int64_t> const& perm, int32_t i) { return perm.empty() ? i : perm[static_cast<size_t>(i)]; }

class ShuffleKernel final : public backends::Kernel {
 public:
  ShuffleKernel(std::vector<int64_t> p1, std::vector<int64_t> p2, std::string what)
      : perm1_(std::move(p1)), perm2_(std::move(p2)), what_(std::move(what)) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& y = ctx.outputs[0];
    Dims const& s = x.shape;
    Dims const& o = y.shape;
    if (x.dtype != y.dtype) return invalidArgument(what_, ": output type differs from input type");
    if (!validPerm(perm1_, s.nbDims)) return invalidArgument(what_, ": first_perm does not fit rank ", s.nbDims);
    if (!validPerm(perm2_, o.nbDims)) return invalidArgument(what_, ": second_perm does not fit rank ", o.nbDims);
    int64_t n = volume(s);
    if (n != volume(o)) return invalidArgument(what_, ": cannot shuffle ", dimsToString(s), " into ", dimsToString(o));
    if (n == 0) return Status::ok();
    cudaStream_t stream = streamOf(ctx);
    bool id1 = isIdentityPerm(perm1_), id2 = isIdentityPerm(perm2_);
    if (id1 && id2) {
      if (x.data != y.data)
        KILN_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(y.data, x.data, static_cast<size_t>(n) * dataTypeSize(x.dtype),
                                                  cudaMemcpyDeviceToDevice, stream),
                                  what_);
      return Status::ok();
    }
    int64_t sStrides[kCopyMaxRank], oStrides[kCopyMaxRank];
    denseStrides(s, sStrides);
    denseStrides(o, oStrides);
    CopyPlan p;
    if (id2) {
      // Output order is the first transpose's order: walk its dims, read through the permuted input strides.
      p.rank = s.nbDims;
      int64_t t = 1;
      for (int32_t i = s.nbDims - 1; i >= 0; --i) {
        p.dims[i] = s.d[permAt(perm1_, i)];
        p.inStrides[i] = sStrides[permAt(perm1_, i)];
        p.outStrides[i] = t;
        t *= p.dims[i];
      }
      return runCopyPlan(x.data, y.data, x.dtype, p, stream, what_);
    }
    // r: the reshaped dims before the second transpose; output coordinate -> linear index of r (== linear index
    // of the first transpose's result) -> input offset.
    Dims r = o;
    for (int32_t i = 0; i < o.nbDims; ++i) r.d[permAt(perm2_, i)] = o.d[i];
    int64_t rStrides[kCopyMaxRank];
    denseStrides(r, rStrides);
    p.rank = o.nbDims;
    for (int32_t i = 0; i < o.nbDims; ++i) {
      p.dims[i] = o.d[i];
      p.inStrides[i] = rStrides[permAt(perm2_, i)];
      p.outStrides[i] = oStrides[i];
    }
    if (!id1) {
      p.rank2 = s.nbDims;
      for (int32_t i = 0; i < s.nbDims; ++i) {
        p.dims2[i] = s.d[permAt(perm1_, i)];
        p.strides2[i] = sStrides[permAt(perm1_, i)];
      }
    }
    return runCopyPlan(x.data, y.data, x.dtype, p, stream, what_);
  }

 private:
  std::vector<int64_t> perm1_, perm2_;
  std::string what_;
};

backends::Tactic makeShuffle() {
  backends::Tactic t;
  t.name = "shuffle_cuda_strided";
  t.op = ir::OpType::kShuffle;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const&, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    return !in.empty() && out.size() == 1 && in[0].dtype == out[0].dtype && isByteCopyable(in[0].dtype) &&
           in[0].shape.nbDims <= kCopyMaxRank && out[0].shape.nbDims <= kCopyMaxRank;
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    return std::unique_ptr<backends::Kernel>(
        new ShuffleKernel(node.attrs.getInts("first_perm"), node.attrs.getInts("second_perm"), node.describe()));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeShuffle);

}  // namespace
}  // namespace kiln::cuda
