// ONNX LSTM (opsets 7 and 14), gates in ONNX order i, o, f, c and peepholes P in order i, o, f; input_forget
// couples the gates (f = 1 - i). Through the shared recurrent import.
#include "parsers/onnx/ops/recurrent_util.h"

namespace kiln::onnx {
namespace {

/// x(gate) + H_{t-1}*R_gate^T (+ P_k (.) c when peepholes are given).
Result<ITensor*> preActivation(RecurrentStep& s, int32_t gate, int32_t peephole, ITensor* c) {
  KO_ASSIGN_OR_RETURN(ITensor * hr, s.timesR(s.h(), gate));
  KO_ASSIGN_OR_RETURN(ITensor * v, s.add(s.x(gate), hr));
  if (peephole >= 0 && s.p(peephole) != nullptr) {
    KO_ASSIGN_OR_RETURN(ITensor * pc, s.mul(s.p(peephole), c));
    KO_ASSIGN_OR_RETURN(v, s.add(v, pc));
  }
  return v;
}

Status importLstm(ImportContext& ctx, ::onnx::NodeProto const& node) {
  KO_ASSIGN_OR_RETURN(int64_t inputForget, attrInt(node, "input_forget", 0));
  RecurrentOp op;
  op.gates = 4;
  op.defaultActivations = {"Sigmoid", "Tanh", "Tanh"};
  op.hasCell = true;
  op.cell = [inputForget](RecurrentStep& s) -> Result<CellState> {
    KO_ASSIGN_OR_RETURN(ITensor * ip, preActivation(s, 0, 0, s.c()));
    KO_ASSIGN_OR_RETURN(ITensor * i, s.act(0, ip));
    ITensor* f = nullptr;
    if (inputForget != 0) {
      KO_ASSIGN_OR_RETURN(f, s.oneMinus(i));
    } else {
      KO_ASSIGN_OR_RETURN(ITensor * fp, preActivation(s, 2, 2, s.c()));
      KO_ASSIGN_OR_RETURN(f, s.act(0, fp));
    }
    KO_ASSIGN_OR_RETURN(ITensor * cp, preActivation(s, 3, -1, nullptr));
    KO_ASSIGN_OR_RETURN(ITensor * cc, s.act(1, cp));
    // C_t = f (.) C_{t-1} + i (.) c
    KO_ASSIGN_OR_RETURN(ITensor * kept, s.mul(f, s.c()));
    KO_ASSIGN_OR_RETURN(ITensor * added, s.mul(i, cc));
    KO_ASSIGN_OR_RETURN(ITensor * c, s.add(kept, added));
    // The output gate's peephole sees the new cell state.
    KO_ASSIGN_OR_RETURN(ITensor * op2, preActivation(s, 1, 1, c));
    KO_ASSIGN_OR_RETURN(ITensor * o, s.act(0, op2));
    KO_ASSIGN_OR_RETURN(ITensor * hc, s.act(2, c));
    KO_ASSIGN_OR_RETURN(ITensor * h, s.mul(o, hc));
    return CellState{h, c};
  };
  return importRecurrent(ctx, node, op);
}

}  // namespace

KILN_ONNX_REGISTER("", "LSTM", importLstm);

}  // namespace kiln::onnx
