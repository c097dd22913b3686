// Reference kernel of Padding: zero padding (negative values crop) of the innermost axes. Elements are copied
// as raw bytes, so every storable type with a whole-byte size is exact.
#include <cstring>
#include <vector>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

using ir::OpType;

Status runPadding(std::string const& who, std::vector<int64_t> const& pb, std::vector<int64_t> const& pe,
                  LaunchContext const& ctx) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& y = ctx.outputs[0];
  int32_t rank = x.shape.nbDims;
  int32_t n = static_cast<int32_t>(pb.size());
  if (pe.size() != pb.size() || n > rank || y.shape.nbDims != rank || x.dtype != y.dtype)
    return invalidArgument(who, ": x ", dimsToString(x.shape), " and y ", dimsToString(y.shape),
                           " do not fit the padding");
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0);
  for (int32_t a = 0; a < rank; ++a) {
    int32_t i = a - (rank - n);
    int64_t want = x.shape.d[a] + (i >= 0 ? pb[i] + pe[i] : 0);
    if (y.shape.d[a] != want)
      return invalidArgument(who, ": y ", dimsToString(y.shape), " does not match the padded input ",
                             dimsToString(x.shape));
    if (i >= 0) begin[a] = pb[i];
  }
  size_t es = dataTypeSize(x.dtype);
  if (es == 0) return unsupported(who, ": type ", dataTypeName(x.dtype), " is not supported");
  auto const* src = static_cast<unsigned char const*>(x.data);
  auto* dst = static_cast<unsigned char*>(y.data);
  int64_t total = y.count();
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  for (int64_t lin = 0; lin < total; ++lin) {
    int64_t off = 0;
    bool inside = true;
    for (int32_t a = 0; a < rank; ++a) {
      int64_t p = idx[a] - begin[a];
      if (p < 0 || p >= x.shape.d[a]) {
        inside = false;
        break;
      }
      off = off * x.shape.d[a] + p;
    }
    if (inside)
      std::memcpy(dst + static_cast<size_t>(lin) * es, src + static_cast<size_t>(off) * es, es);
    else
      std::memset(dst + static_cast<size_t>(lin) * es, 0, es);
    for (int32_t a = rank - 1; a >= 0; --a) {
      if (++idx[a] < y.shape.d[a]) break;
      idx[a] = 0;
    }
  }
  return Status::ok();
}

Tactic paddingTactic() {
  return makeTactic(
      "padding_reference", OpType::kPadding,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        std::string who = node.describe();
        std::vector<int64_t> pb = node.attrs.getInts("pads_begin"), pe = node.attrs.getInts("pads_end");
        if (pb.size() != pe.size()) return invalidGraph(who, ": pads_begin and pads_end differ in length");
        return makeKernel([who, pb, pe](LaunchContext const& ctx) { return runPadding(who, pb, pe, ctx); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return in.size() == 1 && out.size() == 1 && in[0].dtype == out[0].dtype && dataTypeSize(in[0].dtype) > 0;
      });
}

KILN_REGISTER_TACTIC(paddingTactic);

}  // namespace
}  // namespace kiln::backends::reference
