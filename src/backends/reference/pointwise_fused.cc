// Reference kernel of PointwiseFused: the program evaluated element by element in double, each input read at its
// numpy-broadcast position, rounding only at Casts and at the output's store (the oracle of the CPU and CUDA
// kernels; the unfused layers round at every store, which differs by at most the intermediate types' rounding).
#include <vector>

#include "backends/pointwise_program_math.h"
#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

Status runProgram(ir::PointwiseProgram const& p, LaunchContext const& ctx, std::string const& what) {
  TensorView const& y = ctx.outputs[0];
  size_t const numIn = ctx.inputs.size();
  if (numIn != static_cast<size_t>(p.numInputs))
    return invalidArgument(what, ": ", numIn, " inputs where the program reads ", p.numInputs);
  Dims shape = ctx.inputs[0].shape;
  for (size_t k = 1; k < numIn; ++k) {
    Result<Dims> s = broadcastShapes(shape, ctx.inputs[k].shape);
    if (!s.isOk()) return s.status().withContext(what);
    shape = *s;
  }
  if (!dimsEqual(shape, y.shape))
    return invalidArgument(what, ": output shape ", dimsToString(y.shape), " is not the inputs' broadcast shape ",
                           dimsToString(shape));
  int64_t const total = volume(y.shape);
  if (total <= 0) return Status::ok();
  std::vector<std::vector<int64_t>> strides;
  for (size_t k = 0; k < numIn; ++k) strides.push_back(broadcastStrides(ctx.inputs[k].shape, y.shape));
  int32_t const rank = y.shape.nbDims;
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0), off(numIn, 0);
  std::vector<double> in(numIn), t(p.instructions.size());
  auto operand = [&](ir::PwOperand const& o) -> double {
    switch (o.source) {
      case ir::PwSource::kNone:
        return 0.0;
      case ir::PwSource::kInput:
        return in[static_cast<size_t>(o.index)];
      case ir::PwSource::kInstruction:
        return t[static_cast<size_t>(o.index)];
      case ir::PwSource::kImmediate:
        return p.immediates[static_cast<size_t>(o.index)];
    }
    return 0.0;
  };
  for (int64_t lin = 0; lin < total; ++lin) {
    for (size_t k = 0; k < numIn; ++k) in[k] = loadAsDouble(ctx.inputs[k], off[k]);
    for (size_t i = 0; i < p.instructions.size(); ++i) {
      ir::PwInstruction const& ins = p.instructions[i];
      t[i] = pw::evalInstruction<double>(ins, operand(ins.operands[0]), operand(ins.operands[1]),
                                         operand(ins.operands[2]));
    }
    storeFromDouble(y, lin, t.back());
    for (int32_t d = rank - 1; d >= 0; --d) {
      size_t const du = static_cast<size_t>(d);
      if (++idx[du] < y.shape.d[d]) {
        for (size_t k = 0; k < numIn; ++k) off[k] += strides[k][du];
        break;
      }
      for (size_t k = 0; k < numIn; ++k) off[k] -= strides[k][du] * (y.shape.d[d] - 1);
      idx[du] = 0;
    }
  }
  return Status::ok();
}

Tactic pointwiseFusedTactic() {
  return makeTactic(
      "pointwisefused_reference", ir::OpType::kPointwiseFused,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        std::vector<DataType> types;
        for (ir::Value const* v : node.inputs) {
          if (!v) return invalidGraph(node.describe(), ": an input is absent");
          types.push_back(v->dtype);
        }
        if (node.outputs.size() != 1 || !node.outputs[0]) return invalidGraph(node.describe(), ": needs one output");
        KILN_ASSIGN_OR_RETURN(ir::PointwiseProgram p,
                              ir::decodePointwiseProgram(node.attrs, types, node.outputs[0]->dtype, node.describe()));
        std::string what = node.describe();
        return makeKernel(
            [p = std::move(p), what](LaunchContext const& ctx) -> Status { return runProgram(p, ctx, what); });
      });
}
KILN_REGISTER_TACTIC(pointwiseFusedTactic);

}  // namespace
}  // namespace kiln::backends::reference
