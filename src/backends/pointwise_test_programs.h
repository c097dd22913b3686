// PointwiseFused programs the kernel tests share (reference, CPU and CUDA): one exercising every opcode with
// immediates, broadcasts and Casts inside, and one small program per admitted operation.
#pragma once

#include <string>
#include <vector>

#include "ir/attributes.h"
#include "ir/pointwise_program.h"

namespace kiln::pwtest {

inline ir::PwOperand in(int32_t i) { return {ir::PwSource::kInput, i}; }
inline ir::PwOperand tmp(int32_t i) { return {ir::PwSource::kInstruction, i}; }
inline ir::PwOperand imm(int32_t i) { return {ir::PwSource::kImmediate, i}; }

inline ir::PwInstruction instr(ir::PwOpcode op, int32_t param, std::vector<ir::PwOperand> ops, float alpha = 0,
                               float beta = 0) {
  ir::PwInstruction r;
  r.opcode = op;
  r.param = param;
  r.numOperands = static_cast<int32_t>(ops.size());
  for (size_t k = 0; k < ops.size(); ++k) r.operands[k] = ops[k];
  r.alpha = alpha;
  r.beta = beta;
  return r;
}

/// Three float inputs (x0, x1, x2): ((x0 * x1 + 0.5) -> GELU -> cast `mid` -> max with x2), negated where x0 > 0.25,
/// then tanh, times 1.5. Exercises ElementWise, Unary, Activation, Cast, Select and immediates.
inline ir::PointwiseProgram richProgram(DataType mid) {
  using ir::PwOpcode;
  ir::PointwiseProgram p;
  p.numInputs = 3;
  p.immediates = {0.5f, 0.25f, 1.5f};
  auto ew = [](ElementWiseOperation o) { return static_cast<int32_t>(o); };
  p.instructions = {
      instr(PwOpcode::kElementWise, ew(ElementWiseOperation::kPROD), {in(0), in(1)}),           // t0
      instr(PwOpcode::kElementWise, ew(ElementWiseOperation::kSUM), {tmp(0), imm(0)}),          // t1
      instr(PwOpcode::kActivation, static_cast<int32_t>(ActivationType::kGELU_ERF), {tmp(1)}),  // t2
      instr(PwOpcode::kCast, static_cast<int32_t>(mid), {tmp(2)}),                              // t3
      instr(PwOpcode::kElementWise, ew(ElementWiseOperation::kMAX), {tmp(3), in(2)}),           // t4
      instr(PwOpcode::kElementWise, ew(ElementWiseOperation::kGREATER), {in(0), imm(1)}),       // t5
      instr(PwOpcode::kUnary, static_cast<int32_t>(UnaryOperation::kNEG), {tmp(4)}),            // t6
      instr(PwOpcode::kSelect, 0, {tmp(5), tmp(6), tmp(4)}),                                    // t7
      instr(PwOpcode::kActivation, static_cast<int32_t>(ActivationType::kTANH), {tmp(7)}),      // t8
      instr(PwOpcode::kElementWise, ew(ElementWiseOperation::kPROD), {tmp(8), imm(2)}),         // t9
  };
  return p;
}

/// One program per admitted operation on input x0 (and x1 for binary ones), each followed by a sum with x1 so
/// that every program has two inputs; comparisons and logical ops feed a Select. Names say which operation.
struct NamedProgram {
  std::string name;
  ir::PointwiseProgram program;
};
inline std::vector<NamedProgram> perOperationPrograms() {
  using ir::PwOpcode;
  std::vector<NamedProgram> r;
  auto add = [&](std::string name, std::vector<ir::PwInstruction> ins) {
    ir::PointwiseProgram p;
    p.numInputs = 2;
    p.immediates = {0.0f};
    p.instructions = std::move(ins);
    r.push_back({std::move(name), std::move(p)});
  };
  auto sumWithX1 = [](int32_t t) {
    return instr(PwOpcode::kElementWise, static_cast<int32_t>(ElementWiseOperation::kSUM), {tmp(t), in(1)});
  };
  for (int32_t op = 0; op <= static_cast<int32_t>(ElementWiseOperation::kLESS); ++op) {
    bool resultBool = false;
    auto const e = static_cast<ElementWiseOperation>(op);
    if (ir::pointwiseElementWiseAdmits(e, false, &resultBool)) {
      if (!resultBool) {
        add("elementwise" + std::to_string(op), {instr(PwOpcode::kElementWise, op, {in(0), in(1)}), sumWithX1(0)});
      } else {
        add("elementwise" + std::to_string(op),
            {instr(PwOpcode::kElementWise, op, {in(0), in(1)}), instr(PwOpcode::kSelect, 0, {tmp(0), in(0), in(1)})});
      }
    } else if (ir::pointwiseElementWiseAdmits(e, true, &resultBool)) {
      // Logical ops on bools made by comparisons.
      auto gt = static_cast<int32_t>(ElementWiseOperation::kGREATER);
      add("elementwise" + std::to_string(op),
          {instr(PwOpcode::kElementWise, gt, {in(0), imm(0)}), instr(PwOpcode::kElementWise, gt, {in(1), imm(0)}),
           instr(PwOpcode::kElementWise, op, {tmp(0), tmp(1)}), instr(PwOpcode::kSelect, 0, {tmp(2), in(0), in(1)})});
    }
  }
  for (int32_t op = 0; op <= static_cast<int32_t>(UnaryOperation::kISNAN); ++op) {
    bool resultBool = false;
    auto const u = static_cast<UnaryOperation>(op);
    if (ir::pointwiseUnaryAdmits(u, false, &resultBool)) {
      if (!resultBool)
        add("unary" + std::to_string(op), {instr(PwOpcode::kUnary, op, {in(0)}), sumWithX1(0)});
      else
        add("unary" + std::to_string(op),
            {instr(PwOpcode::kUnary, op, {in(0)}), instr(PwOpcode::kSelect, 0, {tmp(0), in(0), in(1)})});
    } else if (ir::pointwiseUnaryAdmits(u, true, &resultBool)) {
      add("unary" + std::to_string(op),
          {instr(PwOpcode::kElementWise, static_cast<int32_t>(ElementWiseOperation::kLESS), {in(0), imm(0)}),
           instr(PwOpcode::kUnary, op, {tmp(0)}), instr(PwOpcode::kSelect, 0, {tmp(1), in(0), in(1)})});
    }
  }
  for (int32_t t = 0; t <= static_cast<int32_t>(ActivationType::kGELU_TANH); ++t)
    add("activation" + std::to_string(t), {instr(PwOpcode::kActivation, t, {in(0)}, 0.3f, 0.8f), sumWithX1(0)});
  for (DataType to : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kBOOL})
    add("cast" + std::to_string(static_cast<int>(to)),
        {instr(PwOpcode::kCast, static_cast<int32_t>(to), {in(0)}),
         to == DataType::kBOOL ? instr(PwOpcode::kSelect, 0, {tmp(0), in(0), in(1)}) : sumWithX1(0)});
  return r;
}

/// The node attributes of program `p` with output type `out`.
inline ir::Attributes programAttrs(ir::PointwiseProgram const& p, DataType out) {
  ir::Attributes a;
  ir::encodePointwiseProgram(p, a);
  a.setInt("to", static_cast<int64_t>(out));
  return a;
}

}  // namespace kiln::pwtest
