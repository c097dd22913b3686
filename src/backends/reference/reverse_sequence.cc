// Reference kernel of ReverseSequence: for each batch entry b, the first sequence_lens[b] elements along the
// sequence axis are reversed; the rest are copied. Elements are copied exactly.
#include <cstring>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

Status runReverseSequence(LaunchContext const& ctx, int64_t batchAxis, int64_t seqAxis, std::string const& what) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& lens = ctx.inputs[1];
  TensorView const& y = ctx.outputs[0];
  int32_t rank = x.shape.nbDims;
  if (batchAxis < 0) batchAxis += rank;
  if (seqAxis < 0) seqAxis += rank;
  if (rank < 2 || batchAxis < 0 || batchAxis >= rank || seqAxis < 0 || seqAxis >= rank || batchAxis == seqAxis)
    return invalidArgument(what, ": bad batch/sequence axes for rank ", rank);
  if (y.dtype != x.dtype || y.count() != x.count()) return invalidArgument(what, ": output does not fit the input");
  int64_t batch = x.shape.d[batchAxis], steps = x.shape.d[seqAxis];
  if (lens.count() != batch)
    return invalidArgument(what, ": sequence_lens has ", lens.count(), " entries for a batch of ", batch);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t l = loadAsInt(lens, b);
    if (l < 0 || l > steps)
      return invalidArgument(what, ": sequence length ", l, " (batch ", b, ") is out of range [0, ", steps, "]");
  }
  size_t es = dataTypeSize(x.dtype);
  std::vector<int64_t> strides(static_cast<size_t>(rank), 1);
  for (int32_t d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * x.shape.d[d + 1];
  auto const* in = static_cast<unsigned char const*>(x.data);
  auto* out = static_cast<unsigned char*>(y.data);
  int64_t n = x.count();
  for (int64_t lin = 0; lin < n; ++lin) {
    int64_t b = (lin / strides[batchAxis]) % batch;
    int64_t t = (lin / strides[seqAxis]) % steps;
    int64_t l = loadAsInt(lens, b);
    int64_t src = t < l ? lin + (l - 1 - 2 * t) * strides[seqAxis] : lin;
    std::memcpy(out + lin * es, in + src * es, es);
  }
  return Status::ok();
}

Tactic reverseSequenceTactic() {
  return makeTactic(
      "reverse_sequence_reference", ir::OpType::kReverseSequence,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        int64_t b = node.attrs.getInt("batch_axis", 1);
        int64_t s = node.attrs.getInt("sequence_axis", 0);
        std::string what = node.describe();
        return makeKernel([=](LaunchContext const& ctx) { return runReverseSequence(ctx, b, s, what); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const&) {
        return in.size() == 2 && isSupportedType(in[0].dtype) && dataTypeSize(in[0].dtype) > 0 &&
               isIntegerType(in[1].dtype);
      });
}

KILN_REGISTER_TACTIC(reverseSequenceTactic);

}  // namespace
}  // namespace kiln::backends::reference
