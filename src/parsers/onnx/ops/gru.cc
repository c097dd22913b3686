// ONNX GRU (opsets 7 and 14), gates in ONNX order z, r, h; linear_before_reset applies the reset gate after the
// recurrence (and its bias) of the h gate. Through the shared recurrent import.
#include "parsers/onnx/ops/recurrent_util.h"

namespace kiln::onnx {
namespace {

Status importGru(ImportContext& ctx, ::onnx::NodeProto const& node) {
  KO_ASSIGN_OR_RETURN(int64_t lbr, attrInt(node, "linear_before_reset", 0));
  RecurrentOp op;
  op.gates = 3;
  op.defaultActivations = {"Sigmoid", "Tanh"};
  op.separateRbGate = lbr != 0 ? 2 : -1;
  op.cell = [lbr](RecurrentStep& s) -> Result<CellState> {
    KO_ASSIGN_OR_RETURN(ITensor * zr, s.timesR(s.h(), 0));
    KO_ASSIGN_OR_RETURN(ITensor * zp, s.add(s.x(0), zr));
    KO_ASSIGN_OR_RETURN(ITensor * z, s.act(0, zp));
    KO_ASSIGN_OR_RETURN(ITensor * rr, s.timesR(s.h(), 1));
    KO_ASSIGN_OR_RETURN(ITensor * rp, s.add(s.x(1), rr));
    KO_ASSIGN_OR_RETURN(ITensor * r, s.act(0, rp));
    ITensor* hp = nullptr;
    if (lbr != 0) {
      // r (.) (H_{t-1}*Rh^T + Rbh)
      KO_ASSIGN_OR_RETURN(ITensor * hr, s.timesR(s.h(), 2));
      if (s.rb(2) != nullptr) {
        KO_ASSIGN_OR_RETURN(hr, s.add(hr, s.rb(2)));
      }
      KO_ASSIGN_OR_RETURN(ITensor * gated, s.mul(r, hr));
      KO_ASSIGN_OR_RETURN(hp, s.add(s.x(2), gated));
    } else {
      // (r (.) H_{t-1}) * Rh^T
      KO_ASSIGN_OR_RETURN(ITensor * rh, s.mul(r, s.h()));
      KO_ASSIGN_OR_RETURN(ITensor * hr, s.timesR(rh, 2));
      KO_ASSIGN_OR_RETURN(hp, s.add(s.x(2), hr));
    }
    KO_ASSIGN_OR_RETURN(ITensor * hh, s.act(1, hp));
    // H_t = (1 - z) (.) hh + z (.) H_{t-1}
    KO_ASSIGN_OR_RETURN(ITensor * keep, s.oneMinus(z));
    KO_ASSIGN_OR_RETURN(ITensor * a, s.mul(keep, hh));
    KO_ASSIGN_OR_RETURN(ITensor * bb, s.mul(z, s.h()));
    KO_ASSIGN_OR_RETURN(ITensor * h, s.add(a, bb));
    return CellState{h, nullptr};
  };
  return importRecurrent(ctx, node, op);
}

}  // namespace

KILN_ONNX_REGISTER("", "GRU", importGru);

}  // namespace kiln::onnx
