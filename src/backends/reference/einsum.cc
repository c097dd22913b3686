// Reference kernel of Einsum: any number of inputs, repeated labels within a term (diagonals), implicit or
// explicit output, ellipsis with broadcasting. Walks every combination of output and summed labels and adds
// the product of the inputs' elements: floats in double, integers in int64, rounded once on store.
#include <vector>

#include "backends/reference/reference_util.h"
#include "ir/infer/einsum_util.h"

namespace kiln::backends::reference {
namespace {

template <typename Acc>
Status runEinsum(LaunchContext const& ctx, ir::EinsumSpec const& spec) {
  size_t nIn = ctx.inputs.size();
  std::vector<int32_t> loop(spec.outputLabels);
  loop.insert(loop.end(), spec.summedLabels.begin(), spec.summedLabels.end());
  size_t depth = loop.size();
  std::vector<int64_t> ext(depth);
  for (size_t j = 0; j < depth; ++j) ext[j] = spec.extents[static_cast<size_t>(loop[j])];
  // strides[k][j]: element stride of input k along loop label j (summed over repeated axes; 0 when the input
  // broadcasts an extent-1 axis).
  std::vector<std::vector<int64_t>> strides(nIn, std::vector<int64_t>(depth, 0));
  for (size_t k = 0; k < nIn; ++k) {
    Dims const& s = ctx.inputs[k].shape;
    int64_t st = 1;
    for (int32_t ax = s.nbDims - 1; ax >= 0; --ax) {
      int32_t l = spec.inputLabels[k][static_cast<size_t>(ax)];
      for (size_t j = 0; j < depth; ++j)
        if (loop[j] == l && !(s.d[ax] == 1 && ext[j] != 1)) strides[k][j] += st;
      st *= s.d[ax];
    }
  }
  int64_t outCount = 1, sumCount = 1;
  for (size_t j = 0; j < depth; ++j) (j < spec.outputLabels.size() ? outCount : sumCount) *= ext[j];
  TensorView const& y = ctx.outputs[0];
  std::vector<Acc> acc(static_cast<size_t>(std::max<int64_t>(outCount, 0)), Acc(0));
  if (outCount > 0 && sumCount > 0) {
    std::vector<int64_t> idx(depth, 0), off(nIn, 0);
    int64_t total = outCount * sumCount;
    for (int64_t lin = 0; lin < total; ++lin) {
      Acc prod = Acc(1);
      for (size_t k = 0; k < nIn; ++k) {
        if constexpr (std::is_same_v<Acc, double>)
          prod *= loadAsDouble(ctx.inputs[k], off[k]);
        else
          prod =
              static_cast<Acc>(static_cast<uint64_t>(prod) * static_cast<uint64_t>(loadAsInt(ctx.inputs[k], off[k])));
      }
      Acc& a = acc[static_cast<size_t>(lin / sumCount)];
      if constexpr (std::is_same_v<Acc, double>)
        a += prod;
      else
        a = static_cast<Acc>(static_cast<uint64_t>(a) + static_cast<uint64_t>(prod));
      for (size_t j = depth; j-- > 0;) {
        if (++idx[j] < ext[j]) {
          for (size_t k = 0; k < nIn; ++k) off[k] += strides[k][j];
          break;
        }
        for (size_t k = 0; k < nIn; ++k) off[k] -= strides[k][j] * (ext[j] - 1);
        idx[j] = 0;
      }
    }
  }
  for (int64_t i = 0; i < outCount; ++i) {
    if constexpr (std::is_same_v<Acc, double>)
      storeFromDouble(y, i, acc[static_cast<size_t>(i)]);
    else
      storeFromInt(y, i, acc[static_cast<size_t>(i)]);
  }
  return Status::ok();
}

Tactic einsumTactic() {
  return makeTactic(
      "einsum_reference", ir::OpType::kEinsum,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        std::string equation = node.attrs.getString("equation");
        std::string what = node.describe();
        KILN_RETURN_IF_ERROR(ir::checkEinsumEquation(equation).withContext(what));
        return makeKernel([equation, what](LaunchContext const& ctx) -> Status {
          std::vector<Dims> shapes;
          for (TensorView const& v : ctx.inputs) {
            if (v.dtype != ctx.outputs[0].dtype) return invalidArgument(what, ": inputs and output must have one type");
            shapes.push_back(v.shape);
          }
          Result<ir::EinsumSpec> spec = ir::parseEinsum(equation, shapes);
          if (!spec.isOk()) return spec.status().withContext(what);
          Dims const& ys = ctx.outputs[0].shape;
          bool fits = ys.nbDims == static_cast<int32_t>(spec->outputLabels.size());
          for (int32_t i = 0; fits && i < ys.nbDims; ++i)
            fits = ys.d[i] == spec->extents[static_cast<size_t>(spec->outputLabels[i])];
          if (!fits)
            return invalidArgument(what, ": output ", dimsToString(ys), " does not fit the equation '", equation, "'");
          if (isFloatType(ctx.outputs[0].dtype)) return runEinsum<double>(ctx, *spec);
          return runEinsum<int64_t>(ctx, *spec);
        });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        if (in.empty() || out.size() != 1 || !isSupportedType(out[0].dtype) ||
            !(isFloatType(out[0].dtype) || isIntegerType(out[0].dtype)))
          return false;
        for (TensorInfo const& t : in)
          if (t.dtype != out[0].dtype) return false;
        return true;
      });
}

KILN_REGISTER_TACTIC(einsumTactic);

}  // namespace
}  // namespace kiln::backends::reference
