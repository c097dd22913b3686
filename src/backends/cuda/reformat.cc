// Reformat on the GPU: the same logical tensor between two memory layouts (any 1/2/4/8-byte type). kLINEAR <->
// kHWC of a 4-D tensor (the channels-last moves inside GPU engines) is a batched transpose of the [C, H*W] planes
// (the strided copy where the tiled grid would not fit); every other pair (kDHWC and the vectorized kCHW2/4/16/32,
// kHWC8/16, kDHWC8, kCDHW32 at network I/O) runs the position-decoding kernel of reformat.cu, which writes padding
// channels as zeros. A converting Reformat (attribute `dtype`: a float Cast the builder folded into a kLINEAR <-> kHWC
// move) is the same batched transpose converting each element as the Cast kernels do.
#include "backends/cuda/copy_host.h"
#include "backends/cuda/reformat_kernels.h"
#include "core/tensor_format.h"

namespace kiln::cuda {
namespace {

// The converting Reformat's one form: kLINEAR <-> kHWC between two float types.
bool convertsBetween(TensorFormat from, TensorFormat to, DataType in, DataType out) {
  bool const linearHwc = (from == TensorFormat::kLINEAR && to == TensorFormat::kHWC) ||
                         (from == TensorFormat::kHWC && to == TensorFormat::kLINEAR);
  return linearHwc && isCudaFloat(in) && isCudaFloat(out);
}

class ReformatKernel final : public backends::Kernel {
 public:
  ReformatKernel(TensorFormat from, TensorFormat to, std::string what) : from_(from), to_(to), what_(std::move(what)) {}

  Status enqueue(backends::LaunchContext const& ctx) const override {
    auto const& x = ctx.inputs[0];
    auto const& y = ctx.outputs[0];
    if (!dimsEqual(x.shape, y.shape))
      return invalidArgument(what_, ": output ", dimsToString(y.shape), " differs from input ", dimsToString(x.shape));
    Dims const& shape = x.shape;
    if (x.dtype != y.dtype) return convertingTranspose(x, y, streamOf(ctx));
    auto lin = formatLayout(from_, shape.nbDims);
    if (!lin) return lin.status().withContext(strCat(what_, ", shape ", dimsToString(shape)));
    auto lout = formatLayout(to_, shape.nbDims);
    if (!lout) return lout.status().withContext(strCat(what_, ", shape ", dimsToString(shape)));
    KILN_ASSIGN_OR_RETURN(int64_t inCount, formatVolume(shape, *lin));
    KILN_ASSIGN_OR_RETURN(int64_t outCount, formatVolume(shape, *lout));
    cudaStream_t stream = streamOf(ctx);
    size_t elem = dataTypeSize(x.dtype);
    if (from_ == to_) {
      if (inCount && x.data != y.data)
        KILN_CUDA_RETURN_IF_ERROR(
            cudaMemcpyAsync(y.data, x.data, static_cast<size_t>(inCount) * elem, cudaMemcpyDeviceToDevice, stream),
            what_);
      return Status::ok();
    }
    if (outCount == 0) return Status::ok();
    if (x.data == y.data) return invalidArgument(what_, ": cannot reformat in place");
    bool linearHwc = (from_ == TensorFormat::kLINEAR && to_ == TensorFormat::kHWC) ||
                     (from_ == TensorFormat::kHWC && to_ == TensorFormat::kLINEAR);
    if (linearHwc && shape.nbDims == 4) return linearHwc4d(x.data, y.data, x.dtype, shape, stream);
    ReformatPlan p;
    p.rank = shape.nbDims;
    for (int32_t i = 0; i < shape.nbDims; ++i) p.dims[i] = shape.d[i];
    p.in = side(*lin);
    p.out = side(*lout);
    p.outCount = outCount;
    KILN_CUDA_RETURN_IF_ERROR(launchReformat(x.data, y.data, static_cast<int32_t>(elem), p, stream), what_);
    return Status::ok();
  }

 private:
  static ReformatSide side(FormatLayout const& l) {
    ReformatSide s;
    s.vecDim = l.vecDim;
    s.components = l.components;
    s.minor = l.vectorMinor ? 1 : 0;
    return s;
  }

  // The converting form (a float Cast folded in by the builder): kLINEAR <-> kHWC of a 4-D tensor between
  // float32, float16 and bfloat16, one pass (ResNet-50's fp32 input to the fp16 channels-last stem).
  Status convertingTranspose(backends::TensorView const& x, backends::TensorView const& y, cudaStream_t stream) const {
    Dims const& shape = x.shape;
    if (!convertsBetween(from_, to_, x.dtype, y.dtype) || shape.nbDims != 4)
      return invalidArgument(what_, ": converts ", dataTypeName(x.dtype), " to ", dataTypeName(y.dtype),
                             " only between kLINEAR and kHWC of a 4-D tensor of float32, float16 or bfloat16; got ",
                             dimsToString(shape));
    if (x.data == y.data) return invalidArgument(what_, ": cannot reformat in place");
    int64_t n = shape.d[0], c = shape.d[1], hw = shape.d[2] * shape.d[3];
    int64_t const rows = to_ == TensorFormat::kHWC ? c : hw, cols = to_ == TensorFormat::kHWC ? hw : c;
    KILN_CUDA_RETURN_IF_ERROR(launchBatchedTransposeConvert(x.data, static_cast<int32_t>(x.dtype), y.data,
                                                            static_cast<int32_t>(y.dtype), n, rows, cols, stream),
                              what_);
    return Status::ok();
  }

  Status linearHwc4d(void const* in, void* out, DataType t, Dims const& shape, cudaStream_t stream) const {
    int64_t n = shape.d[0], c = shape.d[1], h = shape.d[2], w = shape.d[3];
    // A batched transpose of [C, H*W] planes: coalesced on both sides (the strided copy below decodes 64-bit
    // coordinates per element: ResNet-50's 256 x 3 x 224 x 224 fp16 input took it 0.23 ms, ~0.7 TB/s).
    int64_t const rows = to_ == TensorFormat::kHWC ? c : h * w, cols = to_ == TensorFormat::kHWC ? h * w : c;
    if (batchedTransposeFits(n, rows, cols)) {
      KILN_CUDA_RETURN_IF_ERROR(
          launchBatchedTranspose(in, out, static_cast<int32_t>(dataTypeSize(t)), n, rows, cols, stream), what_);
      return Status::ok();
    }
    CopyPlan p;
    p.rank = 4;
    if (to_ == TensorFormat::kHWC) {
      // Output order n, h, w, c; the input is row-major [N, C, H, W].
      int64_t dims[4] = {n, h, w, c}, strides[4] = {c * h * w, w, 1, h * w};
      for (int i = 0; i < 4; ++i) {
        p.dims[i] = dims[i];
        p.inStrides[i] = strides[i];
      }
    } else {
      // Output order n, c, h, w; the input is [N, H, W, C].
      int64_t dims[4] = {n, c, h, w}, strides[4] = {h * w * c, 1, w * c, c};
      for (int i = 0; i < 4; ++i) {
        p.dims[i] = dims[i];
        p.inStrides[i] = strides[i];
      }
    }
    int64_t s = 1;
    for (int i = 3; i >= 0; --i) {
      p.outStrides[i] = s;
      s *= p.dims[i];
    }
    return runCopyPlan(in, out, t, p, stream, what_);
  }

  TensorFormat from_, to_;
  std::string what_;
};

// Every layout but the DLA ones (no DLA) and values outside the enum.
bool isSupportedFormat(int64_t f) {
  return f >= 0 && f < EnumMax<TensorFormat>() && formatLayout(static_cast<TensorFormat>(f), Dims::MAX_DIMS).isOk();
}

backends::Tactic makeReformat() {
  backends::Tactic t;
  t.name = "reformat_cuda_strided";
  t.op = ir::OpType::kReformat;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& node, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    if (in.size() != 1 || out.size() != 1) return false;
    int64_t from = node.attrs.getInt("from", 0), to = node.attrs.getInt("to", 0);
    if (in[0].dtype != out[0].dtype)
      return isSupportedFormat(from) && isSupportedFormat(to) &&
             convertsBetween(static_cast<TensorFormat>(from), static_cast<TensorFormat>(to), in[0].dtype,
                             out[0].dtype) &&
             (in[0].shape.nbDims < 0 || in[0].shape.nbDims == 4);
    if (!isByteCopyable(in[0].dtype)) return false;
    if (!isSupportedFormat(from) || !isSupportedFormat(to)) return false;
    // Unknown ranks are checked when the kernel runs.
    int32_t rank = in[0].shape.nbDims;
    return rank < 0 || (formatLayout(static_cast<TensorFormat>(from), rank).isOk() &&
                        formatLayout(static_cast<TensorFormat>(to), rank).isOk());
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
