// DynamicQuantize on the GPU (TensorRT's block quantization): float32/16/bf16 input, fp8 or int8 output, scales
// in float32/16/bf16/fp8 from each block's absolute maximum, optional double-quantization scale (float types),
// any block shape the reference accepts.
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/dynamic_quantize_kernels.h"
#include "ir/infer/quantize_util.h"

namespace kiln::cuda {
namespace {

bool dqScaleType(DataType t) { return isCudaFloat(t) || t == DataType::kFP8; }

class DynamicQuantizeKernel final : public backends::Kernel {
 public:
  DynamicQuantizeKernel(std::string who, ir::Attributes attrs) : who_(std::move(who)), attrs_(std::move(attrs)) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& y = ctx.outputs[0];
    auto const& sc = ctx.outputs[1];
    Result<std::vector<int64_t>> block = ir::dynamicQuantizeBlocks(attrs_, x.shape);
    if (!block.isOk()) return block.status().withContext(who_);
    Dims expect = x.shape;
    for (int32_t i = 0; i < x.shape.nbDims; ++i)
      expect.d[i] = (*block)[static_cast<size_t>(i)] > 0 ? x.shape.d[i] / (*block)[static_cast<size_t>(i)] : 0;
    if (dimsToVector(y.shape) != dimsToVector(x.shape) || dimsToVector(sc.shape) != dimsToVector(expect))
      return invalidArgument(who_, ": outputs ", dimsToString(y.shape), " and ", dimsToString(sc.shape),
                             " do not fit input ", dimsToString(x.shape));
    int64_t numScales = sc.count(), blockVolume = 1;
    DynamicQuantizeShape s;
    s.rank = x.shape.nbDims;
    int64_t stride = 1;
    for (int32_t i = s.rank - 1; i >= 0; --i) {
      s.x[i] = x.shape.d[i];
      s.block[i] = (*block)[static_cast<size_t>(i)];
      s.scale[i] = expect.d[i];
      s.stride[i] = stride;
      stride *= x.shape.d[i];
      blockVolume *= s.block[i];
    }
    if (numScales <= 0 || x.count() <= 0) return Status::ok();
    bool hasDq = ctx.inputs.size() > 1 && ctx.inputs[1].data != nullptr;
    int32_t dqType = hasDq ? static_cast<int32_t>(ctx.inputs[1].dtype) : 0;
    if (!launchDynamicQuantize(static_cast<int32_t>(x.dtype), static_cast<int32_t>(y.dtype),
                               static_cast<int32_t>(sc.dtype), dqType, s, numScales, blockVolume, x.data,
                               hasDq ? ctx.inputs[1].data : nullptr, y.data, sc.data, streamOf(ctx)))
      return unsupported(who_, ": no GPU DynamicQuantize for these types");
    return launchStatus(who_);
  }

 private:
  std::string who_;
  ir::Attributes attrs_;
};

backends::Tactic makeDynamicQuantize() {
  backends::Tactic t;
  t.name = "dynamic_quantize_cuda_block";
  t.op = ir::OpType::kDynamicQuantize;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const&, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    if (in.empty() || in.size() > 2 || out.size() != 2 || !isCudaFloat(in[0].dtype) ||
        (out[0].dtype != DataType::kFP8 && out[0].dtype != DataType::kINT8) || !dqScaleType(out[1].dtype))
      return false;
    // The double-quantization scale, when present, is a float32/16/bf16 scalar.
    return in.size() < 2 || in[1].shape.nbDims < 0 || isCudaFloat(in[1].dtype);
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    return std::unique_ptr<backends::Kernel>(new DynamicQuantizeKernel(node.describe(), node.attrs));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeDynamicQuantize);

}  // namespace
}  // namespace kiln::cuda
