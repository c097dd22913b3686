// ONNX Col2Im (opset 18): rearranges columns [N, C * prod(block), L] into an image [N, C, image...], summing
// overlapping blocks. Composed as a reshape to [N, C * K, blocks...] (K = prod(block)), a grouped deconvolution
// (groups = C) whose constant weights [C * K, 1, block...] put input channel c * K + j at kernel position j (one-hot),
// with the strides and dilations; then a kFILL slice takes the image from the padded canvas (dropping the begin
// pads; the end rows no block reached are zeros). 1-D images run as 2-D with a unit trailing axis.
#include <cstring>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importCol2Im(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> image, constantInts(ctx, node, 1));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> block, constantInts(ctx, node, 2));
  size_t const n = image.size();
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> st, attrInts(node, "strides", std::vector<int64_t>(n, 1)));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> pads, attrInts(node, "pads", std::vector<int64_t>(2 * n, 0)));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> dil, attrInts(node, "dilations", std::vector<int64_t>(n, 1)));
  if (n < 1 || n > 3 || block.size() != n || st.size() != n || pads.size() != 2 * n || dil.size() != n) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "image_shape, block_shape, strides, pads and ",
                                    "dilations must describe the same 1 to 3 spatial axes");
  }
  Dims const in = x->getDimensions();
  if (in.nbDims != 3 || in.d[1] < 0 || in.d[2] < 0) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_SHAPE, node, "input ", dimsString(in),
                                    " must be [N, C * prod(block_shape), L] with static C and L");
  }
  int64_t k = 1, blocks = 1;
  int32_t const r = n == 1 ? 2 : static_cast<int32_t>(n);
  Dims kernel{r, {}}, strides{r, {}}, dilations{r, {}}, grid{r, {}};
  for (int32_t i = 0; i < r; ++i) kernel.d[i] = strides.d[i] = dilations.d[i] = grid.d[i] = 1;
  for (size_t i = 0; i < n; ++i) {
    if (image[i] <= 0 || block[i] <= 0 || st[i] <= 0 || dil[i] <= 0 || pads[i] < 0 || pads[i + n] < 0 ||
        block[i] > (int64_t{1} << 20)) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "invalid image, block, stride, dilation or pad");
    }
    int64_t const span = dil[i] * (block[i] - 1) + 1;
    int64_t const padded = image[i] + pads[i] + pads[i + n];
    if (padded < span) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "block larger than the padded image");
    }
    grid.d[i] = (padded - span) / st[i] + 1;
    k *= block[i];
    blocks *= grid.d[i];
    kernel.d[i] = block[i];
    strides.d[i] = st[i];
    dilations.d[i] = dil[i];
  }
  if (in.d[1] % k != 0 || in.d[2] != blocks) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input ", dimsString(in), " does not hold ", blocks,
                                    " blocks of ", k, " values per channel");
  }
  int64_t const c = in.d[1] / k;
  if (c * k * k > kMaxConstantElements) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_SHAPE, node, "the one-hot weights would be too large");
  }
  Dims shaped{r + 2, {0, in.d[1]}};
  for (int32_t i = 0; i < r; ++i) shaped.d[2 + i] = grid.d[i];
  KO_ASSIGN_OR_RETURN(ITensor * cols, reshape(ctx, node, x, shaped));
  Dims wdims{r + 2, {c * k, 1}};
  for (int32_t i = 0; i < r; ++i) wdims.d[2 + i] = kernel.d[i];
  KO_ASSIGN_OR_RETURN(Constant * w, ctx.newConstant(DataType::kFLOAT, wdims));
  float const one = 1.0F;
  for (int64_t ch = 0; ch < c * k; ++ch) {
    std::memcpy(w->bytes.data() + (ch * k + ch % k) * 4, &one, 4);  // [ch, 0, j] with j = ch mod K
  }
  // Weights are set after the group count: their shape [C * K, C / groups = 1, block...] depends on it.
  IDeconvolutionLayer* l = ctx.network().addDeconvolutionNd(*cols, c, kernel, Weights{DataType::kFLOAT, nullptr, 0},
                                                            Weights{DataType::kFLOAT, nullptr, 0});
  KO_RETURN_IF_ERROR(ctx.check(l, node, "col2im"));
  l->setNbGroups(c);
  l->setKernelWeights(w->weights());
  l->setStrideNd(strides);
  l->setDilationNd(dilations);
  // Canvas [N, C, padded - remainder...] -> image: start at the begin pads, read image extents (zeros past the end).
  Dims start{r + 2, {0, 0}}, size{r + 2, {in.d[0], c}}, step{r + 2, {1, 1}};
  for (int32_t i = 0; i < r; ++i) {
    bool const real = static_cast<size_t>(i) < n;
    start.d[2 + i] = real ? pads[static_cast<size_t>(i)] : 0;
    size.d[2 + i] = real ? image[static_cast<size_t>(i)] : 1;
    step.d[2 + i] = 1;
  }
  if (in.d[0] < 0) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node, "the batch extent is dynamic");
  }
  ISliceLayer* s = ctx.network().addSlice(*l->getOutput(0), start, size, step);
  KO_RETURN_IF_ERROR(ctx.check(s, node, "col2im_crop"));
  s->setMode(SampleMode::kFILL);
  ITensor* y = s->getOutput(0);
  if (n == 1) {
    KO_ASSIGN_OR_RETURN(y, reshape(ctx, node, y, Dims{3, {0, 0, 0}}));
  }
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "Col2Im", importCol2Im);

}  // namespace
}  // namespace kiln::onnx
