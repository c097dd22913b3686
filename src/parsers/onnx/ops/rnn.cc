// ONNX RNN (opsets 7 and 14): H_t = f(X_t*W^T + H_{t-1}*R^T + Wb + Rb), through the shared recurrent import.
#include "parsers/onnx/ops/recurrent_util.h"

namespace kiln::onnx {
namespace {

Status importRnn(ImportContext& ctx, ::onnx::NodeProto const& node) {
  RecurrentOp op;
  op.gates = 1;
  op.defaultActivations = {"Tanh"};
  op.cell = [](RecurrentStep& s) -> Result<CellState> {
    KO_ASSIGN_OR_RETURN(ITensor * hr, s.timesR(s.h(), 0));
    KO_ASSIGN_OR_RETURN(ITensor * pre, s.add(s.x(0), hr));
    KO_ASSIGN_OR_RETURN(ITensor * h, s.act(0, pre));
    return CellState{h, nullptr};
  };
  return importRecurrent(ctx, node, op);
}

}  // namespace

KILN_ONNX_REGISTER("", "RNN", importRnn);

}  // namespace kiln::onnx
