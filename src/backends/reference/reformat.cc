// Reference kernel of Reformat: the same logical tensor moved between two memory layouts (kLINEAR, kHWC, kDHWC
// and the vectorized kCHW2/4/16/32, kHWC8/16, kDHWC8, kCDHW32; core/tensor_format.h), as byte moves (any
// storable type). Padding channels of a vectorized output are written as zeros. It also packs weights for
// channels-last convolutions when the builder folds a Reformat of a constant. A converting Reformat (attribute
// `dtype`: a float Cast the builder folded in) rounds each element as Cast does.
#include <cstring>

#include "backends/reference/reference_util.h"
#include "core/tensor_format.h"

namespace kiln::backends::reference {
namespace {

// The converting form: float32/float16/bfloat16 to another of them, element by element (padding channels 0).
Status convert(TensorView const& x, TensorView const& y, FormatLayout const& lin, FormatLayout const& lout,
               std::string const& what) {
  if (!isComputeFloat(x.dtype) || !isComputeFloat(y.dtype))
    return invalidArgument(what, ": converts between float32, float16 and bfloat16 only, not ", dataTypeName(x.dtype),
                           " to ", dataTypeName(y.dtype));
  Dims const& shape = x.shape;
  KILN_ASSIGN_OR_RETURN(int64_t outCount, formatVolume(shape, lout));
  int64_t count = x.count();
  for (int64_t i = count; i < outCount; ++i) storeFromDouble(y, i, 0.0);
  if (count == 0) return Status::ok();
  int64_t coord[Dims::MAX_DIMS] = {};
  for (int64_t i = 0; i < count; ++i) {
    storeFromDouble(y, formatOffset(shape, lout, coord), loadAsDouble(x, formatOffset(shape, lin, coord)));
    for (int32_t d = shape.nbDims - 1; d >= 0; --d) {
      if (++coord[d] < shape.d[d]) break;
      coord[d] = 0;
    }
  }
  return Status::ok();
}

Tactic reformatTactic() {
  return makeTactic(
      "reformat_reference", ir::OpType::kReformat,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        auto from = static_cast<TensorFormat>(node.attrs.getInt("from", 0));
        auto to = static_cast<TensorFormat>(node.attrs.getInt("to", 0));
        std::string what = node.describe();
        // The rank is only known at run time; the DLA and unknown formats are refused now (rank 8 takes all).
        for (TensorFormat f : {from, to}) {
          auto l = formatLayout(f, Dims::MAX_DIMS);
          if (!l) return l.status().withContext(what);
        }
        return makeKernel([from, to, what](LaunchContext const& ctx) -> Status {
          TensorView const& x = ctx.inputs[0];
          TensorView const& y = ctx.outputs[0];
          if (!dimsEqual(x.shape, y.shape))
            return invalidArgument(what, ": output ", dimsToString(y.shape), " differs from input ",
                                   dimsToString(x.shape));
          Dims const& shape = x.shape;
          auto lin = formatLayout(from, shape.nbDims);
          if (!lin) return lin.status().withContext(strCat(what, ", shape ", dimsToString(shape)));
          auto lout = formatLayout(to, shape.nbDims);
          if (!lout) return lout.status().withContext(strCat(what, ", shape ", dimsToString(shape)));
          if (x.dtype != y.dtype) return convert(x, y, *lin, *lout, what);
          size_t elem = dataTypeSize(x.dtype);
          KILN_ASSIGN_OR_RETURN(int64_t inCount, formatVolume(shape, *lin));
          KILN_ASSIGN_OR_RETURN(int64_t outCount, formatVolume(shape, *lout));
          int64_t count = x.count();
          if (from == to) {
            if (inCount && x.data != y.data) std::memmove(y.data, x.data, static_cast<size_t>(inCount) * elem);
            return Status::ok();
          }
          if (x.data == y.data && count) return invalidArgument(what, ": cannot reformat in place");
          auto const* src = static_cast<unsigned char const*>(x.data);
          auto* dst = static_cast<unsigned char*>(y.data);
          if (outCount > count) std::memset(dst, 0, static_cast<size_t>(outCount) * elem);  // padding channels
          if (count == 0) return Status::ok();
          int64_t coord[Dims::MAX_DIMS] = {};
          for (int64_t i = 0; i < count; ++i) {
            int64_t o = formatOffset(shape, *lout, coord), s = formatOffset(shape, *lin, coord);
            std::memcpy(dst + static_cast<size_t>(o) * elem, src + static_cast<size_t>(s) * elem, elem);
            for (int32_t d = shape.nbDims - 1; d >= 0; --d) {  // next coordinate, row-major
              if (++coord[d] < shape.d[d]) break;
              coord[d] = 0;
            }
          }
          return Status::ok();
        });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        if (in.size() != 1 || out.size() != 1) return false;
        if (in[0].dtype != out[0].dtype) return isComputeFloat(in[0].dtype) && isComputeFloat(out[0].dtype);
        return dataTypeSize(in[0].dtype) > 0;
      });
}

KILN_REGISTER_TACTIC(reformatTactic);

}  // namespace
}  // namespace kiln::backends::reference
