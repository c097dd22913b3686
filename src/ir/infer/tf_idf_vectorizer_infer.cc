// Shape inference of TfIdfVectorizer: a kINT32/kINT64 input [C] or [N, C] gives a float32 output [columns] or
// [N, columns], columns = max(ngram_indexes) + 1; the attributes are checked as a whole.
#include "ir/infer/tf_idf_vectorizer_util.h"
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferTfIdfVectorizer(InferContext& ctx) {
  if (ctx.numInputs() != 1 || !ctx.present(0)) return ctx.error("needs exactly one input");
  TensorInfo const& x = ctx.in[0];
  if (x.dtype != DataType::kINT32 && x.dtype != DataType::kINT64)
    return ctx.error("input must be int32 or int64, not ", dataTypeName(x.dtype));
  int32_t rank = x.shape.nbDims;
  if (rank != 1 && rank != 2) return ctx.error("input must be [C] or [N, C], not of rank ", rank);
  Result<TfIdfVectorizerSpec> spec = readTfIdfVectorizer(ctx.node.attrs);
  if (!spec.isOk()) return ctx.error(spec.status().message());
  Dims out = x.shape;
  out.d[rank - 1] = spec->numColumns;
  ctx.out[0] = {DataType::kFLOAT, out};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kTfIdfVectorizer, inferTfIdfVectorizer);

}  // namespace kiln::ir
