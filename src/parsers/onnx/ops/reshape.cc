// ONNX importer: Reshape.
#include <algorithm>
#include <cstring>
#include <limits>
#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importReshape(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  bool allowZero = false;
  if (ctx.opset() >= 14) {
    KO_ASSIGN_OR_RETURN(int64_t az, attrInt(node, "allowzero", 0));
    allowZero = az != 0;
  }
  std::vector<int64_t> shape;
  ITensor* shapeTensor = nullptr;
  if (ctx.opset() < 5) {
    KO_ASSIGN_OR_RETURN(shape, attrInts(node, "shape"));
  } else if (ctx.constant(node, 1) != nullptr) {
    KO_ASSIGN_OR_RETURN(shape, constantInts(ctx, node, 1));
  } else {
    KO_ASSIGN_OR_RETURN(shapeTensor, ctx.tensor(node, 1));
  }
  IShuffleLayer* l = ctx.network().addShuffle(*x);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "reshape"));
  l->setZeroIsPlaceholder(!allowZero);
  if (shapeTensor != nullptr) {
    l->setInput(1, *shapeTensor);
  } else {
    if (shape.size() > static_cast<size_t>(Dims::MAX_DIMS)) {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_SHAPE, node, "target rank ", shape.size(),
                                      " exceeds ", Dims::MAX_DIMS);
    }
    int minusOnes = 0;
    Dims d{static_cast<int32_t>(shape.size()), {}};
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] < -1) {
        return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "shape entry ", shape[i], " is invalid");
      }
      minusOnes += shape[i] == -1 ? 1 : 0;
      d.d[i] = shape[i];
    }
    if (minusOnes > 1) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "shape has more than one -1");
    }
    l->setReshapeDimensions(d);
  }
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "Reshape", importReshape);

}  // namespace
}  // namespace kiln::onnx
