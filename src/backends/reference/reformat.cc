// Reference kernel of Reformat: the same logical [N, C, H, W] tensor moved between row-major (kLINEAR) and
// channels-last (kHWC) memory, as byte moves (any storable type). It also packs weights for channels-last
// convolutions when the builder folds a Reformat of a constant.
#include <cstring>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

Tactic reformatTactic() {
  return makeTactic(
      "reformat_reference", ir::OpType::kReformat,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        auto from = static_cast<TensorFormat>(node.attrs.getInt("from", 0));
        auto to = static_cast<TensorFormat>(node.attrs.getInt("to", 0));
        std::string what = node.describe();
        for (TensorFormat f : {from, to})
          if (f != TensorFormat::kLINEAR && f != TensorFormat::kHWC)
            return unsupported(what, ": only kLINEAR and kHWC layouts are implemented, not format ", static_cast<int>(f));
        return makeKernel([from, to, what](LaunchContext const& ctx) -> Status {
          TensorView const& x = ctx.inputs[0];
          TensorView const& y = ctx.outputs[0];
          if (x.dtype != y.dtype || !dimsEqual(x.shape, y.shape))
            return invalidArgument(what, ": output ", dimsToString(y.shape), " differs from input ", dimsToString(x.shape));
          size_t elem = dataTypeSize(x.dtype);
          size_t bytes = static_cast<size_t>(x.count()) * elem;
          if (from == to) {
            if (bytes && x.data != y.data) std::memmove(y.data, x.data, bytes);
            return Status::ok();
          }
          if (x.shape.nbDims != 4) return invalidArgument(what, ": kHWC needs a 4-D tensor, got ", dimsToString(x.shape));
          if (x.data == y.data && bytes) return invalidArgument(what, ": cannot reformat in place");
          int64_t n = x.shape.d[0], c = x.shape.d[1], hw = x.shape.d[2] * x.shape.d[3];
          auto const* src = static_cast<unsigned char const*>(x.data);
          auto* dst = static_cast<unsigned char*>(y.data);
          bool toHwc = to == TensorFormat::kHWC;
          for (int64_t b = 0; b < n; ++b)
            for (int64_t ch = 0; ch < c; ++ch)
              for (int64_t s = 0; s < hw; ++s) {
                int64_t linear = (b * c + ch) * hw + s, hwc = (b * hw + s) * c + ch;
                int64_t i = toHwc ? linear : hwc, o = toHwc ? hwc : linear;
                std::memcpy(dst + static_cast<size_t>(o) * elem, src + static_cast<size_t>(i) * elem, elem);
              }
          return Status::ok();
        });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return in.size() == 1 && out.size() == 1 && in[0].dtype == out[0].dtype && dataTypeSize(in[0].dtype) > 0;
      });
}

KILN_REGISTER_TACTIC(reformatTactic);

}  // namespace
}  // namespace kiln::backends::reference
