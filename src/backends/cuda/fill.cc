// Fill on the GPU: kLINSPACE for float, half, bf16, fp8 and int8/uint8/int32/int64 outputs (exact integer
// arithmetic when the output and alpha/beta are integers), and the reference's seeded counter-based
// kRANDOM_UNIFORM / kRANDOM_NORMAL for float/half/bf16 (same seed, same values). alpha and beta given as tensors
// must be constants (read at create); the shape input only restates the output's dims.
#include <optional>
#include <vector>

#include "backends/cuda/copy_host.h"
#include "backends/cuda/fill_kernels.h"

namespace kiln::cuda {
namespace {

bool linspaceType(DataType t) {
  return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16 || t == DataType::kFP8 ||
         t == DataType::kINT8 || t == DataType::kUINT8 || t == DataType::kINT32 || t == DataType::kINT64;
}

class FillKernel final : public backends::Kernel {
 public:
  int32_t op = 0;
  double alpha = 0, beta = 1;
  int64_t alphaInt = 0, betaInt = 1;
  bool intAlpha = false, intBeta = false;
  std::optional<HostTensor> betaTensor, shapeTensor;  // constant inputs 2 and 0
  uint64_t seed = 0;
  std::string what;

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& y = ctx.outputs[0];
    int32_t rank = y.shape.nbDims;
    if (rank > kCopyMaxRank) return unsupported(what, ": rank ", rank, " is above 8");
    if (shapeTensor) {
      bool fits = shapeTensor->count() == rank;
      for (int32_t d = 0; fits && d < rank; ++d) fits = shapeTensor->intAt(d) == y.shape.d[d];
      if (!fits) return invalidArgument(what, ": output ", dimsToString(y.shape), " does not match the shape input");
    }
    FillPlan p;
    p.rank = rank;
    p.op = op;
    for (int32_t d = 0; d < rank; ++d) {
      p.dims[d] = y.shape.d[d];
      p.steps[d] = intBeta ? static_cast<double>(betaInt) : beta;
      p.intSteps[d] = betaInt;
    }
    double b = intBeta ? static_cast<double>(betaInt) : beta;
    if (betaTensor) {
      bool perAxis = betaTensor->shape().nbDims == 1;
      if (perAxis && betaTensor->count() != rank)
        return invalidArgument(what, ": beta has ", betaTensor->count(), " steps for an output of rank ", rank);
      for (int32_t d = 0; d < rank; ++d) {
        int64_t j = perAxis ? d : 0;
        p.intSteps[d] = intBeta ? betaTensor->intAt(j) : 0;
        p.steps[d] = intBeta ? static_cast<double>(p.intSteps[d]) : betaTensor->doubleAt(j);
      }
      // Random fills take the first step (the reference's beta), in its integer form when integer.
      b = intBeta ? static_cast<double>(rank > 0 ? p.intSteps[0] : betaInt) : betaTensor->doubleAt(0);
    }
    p.alpha = intAlpha ? static_cast<double>(alphaInt) : alpha;
    p.alphaInt = alphaInt;
    if (op == static_cast<int32_t>(FillOperation::kLINSPACE)) {
      p.exact = !isFloatType(y.dtype) && intAlpha && intBeta ? 1 : 0;
    } else {
      if (!isFloatType(y.dtype))
        return unsupported(what, ": random fills of ", dataTypeName(y.dtype), " tensors are not supported yet");
      p.beta = b;
      p.key = splitMix64(seed);
    }
    KILN_CUDA_RETURN_IF_ERROR(launchFill(y.data, static_cast<int32_t>(y.dtype), p, streamOf(ctx)), what);
    return Status::ok();
  }

  static uint64_t splitMix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

backends::Tactic makeFill() {
  backends::Tactic t;
  t.name = "fill_cuda_direct";
  t.op = ir::OpType::kFill;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const&, std::vector<ir::TensorInfo> const& out) {
    int64_t op = node.attrs.getInt("op", 0);
    if (out.size() != 1 || op < 0 || op >= EnumMax<FillOperation>()) return false;
    if ((hasInput(node, 1) && !constantInput(node, 1)) || (hasInput(node, 2) && !constantInput(node, 2))) return false;
    if (op == static_cast<int64_t>(FillOperation::kLINSPACE)) return linspaceType(out[0].dtype);
    return isCudaFloat(out[0].dtype);
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    auto k = std::make_unique<FillKernel>();
    k->what = node.describe();
    int64_t op = node.attrs.getInt("op", 0);
    if (op < 0 || op >= EnumMax<FillOperation>()) return invalidGraph(k->what, ": unknown fill operation");
    k->op = static_cast<int32_t>(op);
    k->alpha = node.attrs.getFloat("alpha", 0.0);
    k->beta = node.attrs.getFloat("beta", 1.0);
    k->alphaInt = node.attrs.getInt("alpha_int", 0);
    k->betaInt = node.attrs.getInt("beta_int", 1);
    k->intAlpha = k->intBeta = node.attrs.getInt("alpha_beta_int64", 0) != 0;
    k->seed = static_cast<uint64_t>(node.attrs.getInt("seed", 0));
    if (hasInput(node, 0))
      if (HostTensor const* s = constantInput(node, 0)) k->shapeTensor = *s;
    if (hasInput(node, 1)) {
      HostTensor const* a = constantInput(node, 1);
      if (!a) return unsupported(k->what, ": a run-time alpha is not supported on the GPU");
      k->intAlpha = !isFloatType(a->dtype());
      k->alpha = a->doubleAt(0);
      k->alphaInt = k->intAlpha ? a->intAt(0) : 0;
    }
    if (hasInput(node, 2)) {
      HostTensor const* b = constantInput(node, 2);
      if (!b) return unsupported(k->what, ": a run-time beta is not supported on the GPU");
      k->intBeta = !isFloatType(b->dtype());
      k->beta = b->doubleAt(0);
      k->betaTensor = *b;
    }
    return std::unique_ptr<backends::Kernel>(std::move(k));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeFill);

}  // namespace
}  // namespace kiln::cuda
