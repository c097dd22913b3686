// MatrixMultiply on Kiln's tensor-core GEMM (matmul_mma.cu): tactics matrixmultiply_cuda_mma_{32x64,64x64,64x128}
// (the block tile), fp16 / bf16, for one row-major a against b [K, N] or [N, K] (a batch of a against a shared b
// folds into the rows), with the node's whole epilogue -- bias along N, residual, any activation -- in the kernel.
// Offered up to kMaxRows rows, where a small-tile kernel can beat cuBLASLt's; the builder's timing decides.
#include <optional>

#include "backends/cuda/cuda_util.h"
#include "backends/cuda/matmul.h"

namespace kiln::cuda::matmul {
namespace {

// Rows (after folding the batch) up to which the tactics are offered: past a few thousand rows cuBLASLt's large-tile
// kernels win by far, and timing these would only lengthen the build.
constexpr int64_t kMaxRows = 4096;

// The call for this launch shape (pointers unset), or nullopt where the kernel does not take it: a transposed or
// batched (unshared) a, a vector b, a bias that is not one vector along N, k == 0, or sizes matmulMmaFits refuses.
std::optional<MatmulMmaCall> callOf(Shape const& s, DataType dtype, bool hasBias, Attrs const& at, MatmulMmaTile tile) {
  if (s.transA || s.vecB || (hasBias && !s.biasAlongN)) return std::nullopt;
  MatmulMmaCall c;
  c.m = s.p.m;
  MatmulBatch const& b = s.batch;
  if (b.rank == 1 && b.strideB[0] == 0 && b.strideA[0] == s.p.m * s.p.k)
    c.m = s.p.m * b.dims[0];  // b shared by a contiguous batch of a: one tall GEMM (y is contiguous alike)
  else if (b.rank != 0)
    return std::nullopt;
  c.dtype = static_cast<int32_t>(dtype);
  c.n = s.p.n;
  c.k = s.p.k;
  c.transB = s.transB;
  c.activation = at.activation;
  c.alpha = static_cast<float>(at.alpha);
  c.beta = static_cast<float>(at.beta);
  c.tile = tile;
  if (!matmulMmaShapeFits(c)) return std::nullopt;  // the launch checks the pointers' alignment too
  return c;
}

class MmaKernel final : public backends::Kernel {
 public:
  MmaKernel(Attrs at, MatmulMmaTile tile) : at_(std::move(at)), tile_(tile) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    KILN_ASSIGN_OR_RETURN(Shape s, analyzeLaunch(at_, ctx));
    TensorView const& y = ctx.outputs[0];
    if (y.count() == 0) return Status::ok();
    void const* bias = ctx.inputs.size() > 2 ? ctx.inputs[2].data : nullptr;
    std::optional<MatmulMmaCall> c = callOf(s, y.dtype, bias != nullptr, at_, tile_);
    if (c) {
      c->a = ctx.inputs[0].data;
      c->b = ctx.inputs[1].data;
      c->y = y.data;
      c->bias = bias;
      c->residual = residualOf(ctx);
      if (launchMatmulMma(*c, streamOf(ctx))) return launchStatus(at_.who + ": tensor-core matmul kernel");
    }
    // A shape or alignment this kernel does not take (shapes change with the context's inputs, bindings with the
    // user's buffers): the tiled kernel computes the same node.
    return runSimt(s, at_, ctx);
  }

 private:
  Attrs at_;
  MatmulMmaTile tile_;
};

backends::Tactic makeMma(MatmulMmaTile tile, char const* name, int priority) {
  backends::Tactic t;
  t.name = strCat("matrixmultiply_cuda_mma_", name);
  t.op = ir::OpType::kMatrixMultiply;
  t.source = TacticSource::kKILN;
  t.priority = priority;  // below cuBLASLt's (the level-0 pick), above the tiled kernel's
  t.supports = [tile](ir::Node const& n, std::vector<ir::TensorInfo> const& in,
                      std::vector<ir::TensorInfo> const& out) {
    if (!supportsNode(n, in, out, /*withFloat64=*/false)) return false;
    DataType dt = out[0].dtype;
    if (dt != DataType::kHALF && dt != DataType::kBF16) return false;
    auto at = readAttrs(n);
    bool known = dimsKnown(out[0].shape);
    for (auto const& i : in) known = known && (i.shape.nbDims < 0 || dimsKnown(i.shape));
    if (!known) return true;  // the launch decides (and falls back to the tiled kernel)
    bool hasBias = in.size() > 2 && in[2].shape.nbDims >= 0;
    auto s = analyze(*at, in[0].shape, in[1].shape, hasBias ? &in[2].shape : nullptr, out[0].shape);
    if (!s.isOk()) return false;
    std::optional<MatmulMmaCall> c = callOf(*s, dt, hasBias, *at, tile);
    return c && c->m <= kMaxRows;
  };
  t.create = [tile](ir::Node const& n) -> Result<std::unique_ptr<backends::Kernel>> {
    KILN_ASSIGN_OR_RETURN(Attrs at, readAttrs(n));
    return std::unique_ptr<backends::Kernel>(new MmaKernel(std::move(at), tile));
  };
  return t;
}

backends::Tactic makeMma32x32x64() { return makeMma(MatmulMmaTile::k32x32x64, "32x32x64", 14); }
backends::Tactic makeMma32x64x32() { return makeMma(MatmulMmaTile::k32x64x32, "32x64x32", 13); }
backends::Tactic makeMma32x64x64() { return makeMma(MatmulMmaTile::k32x64x64, "32x64x64", 12); }
backends::Tactic makeMma64x64x32() { return makeMma(MatmulMmaTile::k64x64x32, "64x64x32", 11); }
KILN_REGISTER_CUDA_TACTIC(makeMma32x32x64);
KILN_REGISTER_CUDA_TACTIC(makeMma32x64x32);
KILN_REGISTER_CUDA_TACTIC(makeMma32x64x64);
KILN_REGISTER_CUDA_TACTIC(makeMma64x64x32);

}  // namespace
}  // namespace kiln::cuda::matmul
