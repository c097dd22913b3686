// Shape inference of Scatter (ONNX ScatterElements for kELEMENT, ScatterND for kND): the output has the data's
// type and shape; the indices and updates must fit the mode (checked where dims are known).
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

Status inferScatter(InferContext& ctx) {
  if (ctx.numInputs() != 3 || !ctx.present(0) || !ctx.present(1) || !ctx.present(2))
    return ctx.error("needs exactly three inputs (data, indices, updates)");
  Attributes const& a = ctx.node.attrs;
  int64_t mode = a.getInt("mode", 0);
  if (mode < 0 || mode >= EnumMax<ScatterMode>()) return ctx.error("has an invalid mode ", mode);
  int64_t reduction = a.getInt("reduction", 0);
  if (reduction < 0 || reduction >= EnumMax<ScatterReduction>())
    return ctx.error("has an invalid reduction ", reduction);
  Dims const& data = ctx.in[0].shape;
  Dims const& idx = ctx.in[1].shape;
  Dims const& upd = ctx.in[2].shape;
  if (ctx.in[1].dtype != DataType::kINT32 && ctx.in[1].dtype != DataType::kINT64)
    return ctx.error("indices must be int32 or int64, not ", dataTypeName(ctx.in[1].dtype));
  if (ctx.in[2].dtype != ctx.in[0].dtype)
    return ctx.error("updates of type ", dataTypeName(ctx.in[2].dtype), " differ from data of type ",
                     dataTypeName(ctx.in[0].dtype));
  if (data.nbDims < 1) return ctx.error("cannot scatter into a rank-0 tensor");
  auto mismatch = [&]() {
    return ctx.error("indices ", dimsToString(idx), " and updates ", dimsToString(upd), " do not fit data ",
                     dimsToString(data));
  };
  switch (static_cast<ScatterMode>(mode)) {
    case ScatterMode::kELEMENT: {
      Result<int32_t> axis = normalizeAxis(a.getInt("axis", 0), data.nbDims);
      if (!axis.isOk()) return ctx.error(axis.status().message());
      if (idx.nbDims != data.nbDims || upd.nbDims != data.nbDims) return mismatch();
      for (int32_t i = 0; i < data.nbDims; ++i) {
        if (idx.d[i] >= 0 && upd.d[i] >= 0 && idx.d[i] != upd.d[i]) return mismatch();
        if (i != *axis && data.d[i] >= 0 && idx.d[i] > data.d[i]) return mismatch();
      }
      break;
    }
    case ScatterMode::kND: {
      if (idx.nbDims < 1) return ctx.error("kND mode needs indices of rank >= 1");
      int64_t k = idx.d[idx.nbDims - 1];
      if (k >= 0) {
        if (k < 1 || k > data.nbDims)
          return ctx.error("index tuples of length ", k, " do not fit data ", dimsToString(data));
        // updates: indices[:-1] + data[k:]
        if (upd.nbDims != idx.nbDims - 1 + data.nbDims - k) return mismatch();
        int32_t u = 0;
        for (int32_t i = 0; i + 1 < idx.nbDims; ++i, ++u)
          if (idx.d[i] >= 0 && upd.d[u] >= 0 && idx.d[i] != upd.d[u]) return mismatch();
        for (int64_t i = k; i < data.nbDims; ++i, ++u)
          if (data.d[i] >= 0 && upd.d[u] >= 0 && data.d[i] != upd.d[u]) return mismatch();
      }
      break;
    }
  }
  ctx.out[0] = {ctx.in[0].dtype, data};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kScatter, inferScatter);

}  // namespace kiln::ir
