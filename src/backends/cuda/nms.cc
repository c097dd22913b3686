// NMS on the GPU (ONNX NonMaxSuppression semantics, as the reference): boxes and scores in float32/16/bf16,
// corner or center box formats, per-class boxes, max_output_boxes_per_class (int32/int64) and thresholds read on
// the device. The row count K is known only after the suppression: this op synchronizes its stream to read it,
// allocates selected_indices [K, 3], then writes the rows (int32 or int64) and num_selected.
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/nms_kernels.h"
#include "kiln/kiln.h"

namespace kiln::cuda {
namespace {

bool threshType(ir::TensorInfo const& t) { return t.shape.nbDims < 0 || isCudaFloat(t.dtype); }

class NmsKernel final : public backends::Kernel {
 public:
  NmsKernel(std::string who, bool centerSizes, int64_t limit)
      : who_(std::move(who)), centerSizes_(centerSizes), limit_(limit) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& boxes = ctx.inputs[0];
    auto const& scores = ctx.inputs[1];
    auto const& y = ctx.outputs[0];
    cudaStream_t stream = streamOf(ctx);
    if (scores.shape.nbDims != 3 || (boxes.shape.nbDims != 3 && boxes.shape.nbDims != 4))
      return invalidArgument(who_, ": bad boxes ", dimsToString(boxes.shape), " or scores ",
                             dimsToString(scores.shape));
    NmsProblem p;
    p.batches = scores.shape.d[0];
    p.boxes = scores.shape.d[1];
    p.classes = scores.shape.d[2];
    p.perClassBoxes = boxes.shape.nbDims == 4;
    if (boxes.shape.d[0] != p.batches || boxes.shape.d[1] != p.boxes || boxes.shape.d[boxes.shape.nbDims - 1] != 4 ||
        (p.perClassBoxes && boxes.shape.d[2] != p.classes))
      return invalidArgument(who_, ": boxes ", dimsToString(boxes.shape), " do not fit scores ",
                             dimsToString(scores.shape));
    if (p.boxes >= (int64_t{1} << 31)) return unsupported(who_, ": too many boxes for the GPU NMS");
    p.centerSizes = centerSizes_;
    p.topkLimit = limit_;
    p.boxType = static_cast<int32_t>(boxes.dtype);
    p.scoreType = static_cast<int32_t>(scores.dtype);
    p.boxesData = boxes.data;
    p.scoresData = scores.data;
    p.maxOut = ctx.inputs[2].data;
    p.maxOutType = static_cast<int32_t>(ctx.inputs[2].dtype);
    if (ctx.inputs.size() > 3 && ctx.inputs[3].data) {
      p.iouThreshold = ctx.inputs[3].data;
      p.iouType = static_cast<int32_t>(ctx.inputs[3].dtype);
    }
    if (ctx.inputs.size() > 4 && ctx.inputs[4].data) {
      p.scoreThreshold = ctx.inputs[4].data;
      p.scoreThresholdType = static_cast<int32_t>(ctx.inputs[4].dtype);
    }
    if (!p.maxOut) return invalidArgument(who_, ": max_output_boxes_per_class is missing");
    bool out64 = y.dtype == DataType::kINT64;
    void* numSelected = ctx.outputs.size() > 1 ? ctx.outputs[1].data : nullptr;
    StreamScratch scratch(stream);
    int64_t k = 0;
    bool any = p.batches * p.classes > 0 && p.boxes > 0;
    if (any) {
      KILN_RETURN_IF_ERROR(scratch.allocate(nmsScratchBytes(p), who_));
      int64_t* total = nullptr;
      if (!launchNmsSelect(p, scratch.data(), &total, stream))
        return unsupported(who_, ": no GPU NMS for these input types");
      KILN_RETURN_IF_ERROR(launchStatus(who_));
      KILN_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(&k, total, sizeof(int64_t), cudaMemcpyDeviceToHost, stream),
                                who_ + ": reading the row count");
      KILN_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), who_ + ": waiting for the row count");
    }
    Dims shape = makeDims({k, 3});
    void* out = y.data;
    if (dimsKnown(y.shape) && y.shape.nbDims == 2 && y.shape.d[0] == k && y.shape.d[1] == 3) {
      // Already allocated with this shape.
    } else if (ctx.allocateOutput) {
      KILN_ASSIGN_OR_RETURN(out, ctx.allocateOutput(0, shape));
    } else {
      return invalidArgument(who_, ": output ", dimsToString(y.shape), " does not fit ", dimsToString(shape),
                             " and cannot be allocated here");
    }
    if (any) {
      launchNmsWrite(p, scratch.data(), out, numSelected, out64, stream);
      return launchStatus(who_);
    }
    if (numSelected)
      KILN_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(numSelected, 0, dataTypeSize(ctx.outputs[1].dtype), stream),
                                who_ + ": num_selected");
    return Status::ok();
  }

 private:
  std::string who_;
  bool centerSizes_;
  int64_t limit_;
};

backends::Tactic makeNms() {
  backends::Tactic t;
  t.name = "nms_cuda_greedy";
  t.op = ir::OpType::kNMS;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const&, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    if (in.size() < 3 || in.size() > 5 || out.size() != 2 || !isCudaFloat(in[0].dtype) || !isCudaFloat(in[1].dtype) ||
        (in[2].dtype != DataType::kINT32 && in[2].dtype != DataType::kINT64))
      return false;
    for (size_t i = 3; i < in.size(); ++i)
      if (!threshType(in[i])) return false;
    return (out[0].dtype == DataType::kINT32 || out[0].dtype == DataType::kINT64) && out[1].dtype == out[0].dtype;
  };
  t.create = [](ir::Node const& node) -> Result<std::unique_ptr<backends::Kernel>> {
    bool center = node.attrs.getInt("box_format", 0) == static_cast<int64_t>(BoundingBoxFormat::kCENTER_SIZES);
    return std::unique_ptr<backends::Kernel>(
        new NmsKernel(node.describe(), center, node.attrs.getInt("topk_box_limit", 5000)));
  };
  return t;
}
KILN_REGISTER_CUDA_TACTIC(makeNms);

}  // namespace
}  // namespace kiln::cuda
