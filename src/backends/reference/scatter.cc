// Reference kernel of Scatter: kELEMENT (ONNX ScatterElements) and kND (ONNX ScatterND), with Kiln's reduction
// extension (none/add/mul/max/min), for every storable data type. Updates apply in order (a duplicate index
// with reduction none keeps the last update). Floats combine in double, integers exactly in their own type
// (add/mul wrap around), bool as or/and. Out-of-range indices are an error naming the layer.
#include <algorithm>
#include <cstring>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

template <typename T>
T combine(T a, T b, ScatterReduction r) {
  switch (r) {
    case ScatterReduction::kNONE:
      return b;
    case ScatterReduction::kADD:
      if constexpr (std::is_same_v<T, bool>)
        return a || b;
      else if constexpr (kIsFloatStorage<T>)
        return fromDouble<T>(toDouble(a) + toDouble(b));
      else
        return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    case ScatterReduction::kMUL:
      if constexpr (std::is_same_v<T, bool>)
        return a && b;
      else if constexpr (kIsFloatStorage<T>)
        return fromDouble<T>(toDouble(a) * toDouble(b));
      else
        return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    case ScatterReduction::kMAX:
      if constexpr (kIsFloatStorage<T>)
        return toDouble(b) > toDouble(a) || std::isnan(toDouble(b)) ? b : a;
      else
        return std::max(a, b);
    case ScatterReduction::kMIN:
      if constexpr (kIsFloatStorage<T>)
        return toDouble(b) < toDouble(a) || std::isnan(toDouble(b)) ? b : a;
      else
        return std::min(a, b);
  }
  return b;
}

// Calls visit(updateIndex, outputOffset) for every update element in order; returns the first error.
template <typename V>
Status forEachElementTarget(TensorView const& data, TensorView const& indices, TensorView const& updates, int32_t axis,
                            std::string const& what, V&& visit) {
  Dims const& ds = data.shape;
  if (indices.shape.nbDims != ds.nbDims || dimsToVector(indices.shape) != dimsToVector(updates.shape))
    return invalidArgument(what, ": indices ", dimsToString(indices.shape), " and updates ",
                           dimsToString(updates.shape), " do not fit data ", dimsToString(ds));
  for (int32_t i = 0; i < ds.nbDims; ++i)
    if (i != axis && indices.shape.d[i] > ds.d[i])
      return invalidArgument(what, ": indices ", dimsToString(indices.shape), " exceed data ", dimsToString(ds),
                             " on axis ", i);
  std::vector<int64_t> along = rowMajorStrides(ds);
  int64_t axisStride = along[axis];
  along[axis] = 0;
  int64_t n = ds.d[axis];
  Status st;
  forEachIndex<1>(indices.shape, {along}, [&](int64_t lin, std::array<int64_t, 1> const& off) {
    if (!st) return;
    int64_t k = loadAsInt(indices, lin);
    int64_t kk = k < 0 ? k + n : k;
    if (kk < 0 || kk >= n) {
      st = invalidArgument(what, ": index ", k, " is out of range [", -n, ", ", n, ") on axis ", axis);
      return;
    }
    visit(lin, off[0] + kk * axisStride, int64_t{1});
  });
  return st;
}

// kND: calls visit(firstUpdateIndex, outputOffset, slabLength) per index tuple, in order.
template <typename V>
Status forEachNdTarget(TensorView const& data, TensorView const& indices, TensorView const& updates,
                       std::string const& what, V&& visit) {
  Dims const& ds = data.shape;
  Dims const& is = indices.shape;
  if (is.nbDims < 1) return invalidArgument(what, ": kND mode needs indices of rank >= 1");
  int64_t k = is.d[is.nbDims - 1];
  if (k < 1 || k > ds.nbDims)
    return invalidArgument(what, ": index tuples of length ", k, " do not fit data ", dimsToString(ds));
  std::vector<int64_t> expect;
  for (int32_t i = 0; i + 1 < is.nbDims; ++i) expect.push_back(is.d[i]);
  for (int64_t i = k; i < ds.nbDims; ++i) expect.push_back(ds.d[i]);
  if (expect != dimsToVector(updates.shape))
    return invalidArgument(what, ": updates ", dimsToString(updates.shape), " do not fit data ", dimsToString(ds),
                           " and indices ", dimsToString(is));
  int64_t tuples = 1, slab = 1;
  for (int32_t i = 0; i + 1 < is.nbDims; ++i) tuples *= is.d[i];
  for (int64_t i = k; i < ds.nbDims; ++i) slab *= ds.d[i];
  std::vector<int64_t> strides = rowMajorStrides(ds);
  for (int64_t j = 0; j < tuples; ++j) {
    int64_t off = 0;
    for (int64_t t = 0; t < k; ++t) {
      int64_t n = ds.d[t];
      int64_t v = loadAsInt(indices, j * k + t);
      int64_t vv = v < 0 ? v + n : v;
      if (vv < 0 || vv >= n)
        return invalidArgument(what, ": index ", v, " is out of range [", -n, ", ", n, ") on axis ", t);
      off += vv * strides[static_cast<size_t>(t)];
    }
    visit(j * slab, off, slab);
  }
  return Status::ok();
}

Tactic scatterTactic() {
  return makeTactic(
      "scatter_reference", ir::OpType::kScatter,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        int64_t mode = node.attrs.getInt("mode", 0);
        int64_t axisAttr = node.attrs.getInt("axis", 0);
        int64_t red = node.attrs.getInt("reduction", 0);
        std::string what = node.describe();
        if (mode < 0 || mode >= EnumMax<ScatterMode>()) return invalidArgument(what, ": unknown scatter mode ", mode);
        if (red < 0 || red >= EnumMax<ScatterReduction>())
          return invalidArgument(what, ": unknown scatter reduction ", red);
        auto reduction = static_cast<ScatterReduction>(red);
        return makeKernel([mode, axisAttr, reduction, what](LaunchContext const& ctx) -> Status {
          TensorView const& data = ctx.inputs[0];
          TensorView const& indices = ctx.inputs[1];
          TensorView const& updates = ctx.inputs[2];
          TensorView const& y = ctx.outputs[0];
          if (data.shape.nbDims < 1) return invalidArgument(what, ": cannot scatter into a rank-0 tensor");
          if (y.dtype != data.dtype || updates.dtype != data.dtype || dimsToVector(y.shape) != dimsToVector(data.shape))
            return invalidArgument(what, ": output ", dimsToString(y.shape), " does not fit data ",
                                   dimsToString(data.shape));
          size_t bytes = static_cast<size_t>(data.count()) * dataTypeSize(data.dtype);
          if (bytes > 0 && y.data != data.data) std::memmove(y.data, data.data, bytes);
          return dispatchType(data.dtype, [&](auto tag) -> Status {
            using T = decltype(tag);
            T* out = y.as<T>();
            T const* upd = updates.as<T>();
            auto apply = [&](int64_t u, int64_t o, int64_t len) {
              for (int64_t e = 0; e < len; ++e) out[o + e] = combine<T>(out[o + e], upd[u + e], reduction);
            };
            if (mode == static_cast<int64_t>(ScatterMode::kND))
              return forEachNdTarget(data, indices, updates, what, apply);
            Result<int32_t> axisR = normalizeAxis(axisAttr, data.shape.nbDims);
            if (!axisR.isOk()) return axisR.status().withContext(what);
            return forEachElementTarget(data, indices, updates, *axisR, what, apply);
          });
        });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return in.size() == 3 && out.size() == 1 && in[0].dtype == out[0].dtype && in[2].dtype == in[0].dtype &&
               dataTypeSize(in[0].dtype) > 0 && isSupportedType(in[0].dtype) &&
               typeIn(in[1].dtype, {DataType::kINT32, DataType::kINT64});
      });
}

KILN_REGISTER_TACTIC(scatterTactic);

}  // namespace
}  // namespace kiln::backends::reference
