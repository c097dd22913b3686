// The instruction program of a PointwiseFused node (builder/passes/fuse_pointwise.cc makes it): its encoding in
// node attributes, and the validation every reader runs first (shape inference, the kernels, plans on load).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/attributes.h"
#include "kiln/kiln.h"

namespace kiln::ir {

/// Version written as program[0]; readers refuse others.
inline constexpr int64_t kPointwiseProgramVersion = 1;
/// Limits a program may not pass (a corrupt plan cannot make a kernel allocate without bound).
inline constexpr int32_t kPointwiseMaxInstructions = 256;
inline constexpr int32_t kPointwiseMaxInputs = 32;
inline constexpr int32_t kPointwiseMaxImmediates = 1024;

/// What an instruction computes. Values are float (computed in fp32 by the device kernels, fp64 by the
/// reference) or bool (0/1).
enum class PwOpcode : int32_t {
  kElementWise = 0,  // param: ElementWiseOperation; operands a, b
  kUnary = 1,        // param: UnaryOperation; operand a
  kActivation = 2,   // param: ActivationType, with alpha and beta; operand a
  kCast = 3,         // param: DataType (kFLOAT, kHALF, kBF16: rounds as that type; kBOOL: a != 0); operand a
  kSelect = 4,       // operands cond (bool), then, else (one kind)
};

/// Where an operand comes from.
enum class PwSource : int32_t { kNone = 0, kInput = 1, kInstruction = 2, kImmediate = 3 };

struct PwOperand {
  PwSource source = PwSource::kNone;
  int32_t index = 0;  // input, earlier instruction or immediate index
};

/// One decoded, validated instruction.
struct PwInstruction {
  PwOpcode opcode = PwOpcode::kElementWise;
  int32_t param = 0;
  std::array<PwOperand, 3> operands{};
  int32_t numOperands = 0;
  float alpha = 0.0f;
  float beta = 0.0f;
  bool resultIsBool = false;
};

/// A validated program: the result is the last instruction's value, stored as the node's output type.
struct PointwiseProgram {
  int32_t numInputs = 0;
  std::vector<PwInstruction> instructions;
  std::vector<float> immediates;
};

/// The attribute encoding (ops.def's PointwiseFused): `program:ints` = [version, instruction count, then per
/// instruction opcode, param, a, b, c]; an operand code o is input o (0 <= o < inputs), instruction o - inputs
/// (earlier ones only), immediate -2 - o (o <= -2), or -1 (unused). `program_floats:floats` = per instruction
/// alpha, beta, then the immediates.
void encodePointwiseProgram(PointwiseProgram const& p, Attributes& attrs);

/// Decodes and validates the program of a node with these input types and output type: version, counts and
/// limits, opcodes and params, operand indices (earlier instructions only), operand kinds (float/bool) and
/// types (float inputs fp32/fp16/bf16, bool), the result's kind against `outType`, and the attribute `to` equal
/// to `outType`. Errors say what and where
/// (prefixed with `what`).
Result<PointwiseProgram> decodePointwiseProgram(Attributes const& attrs, std::vector<DataType> const& inputTypes,
                                                DataType outType, std::string const& what);

/// True for the float storage types a program's inputs and output may have (fp32, fp16, bf16).
bool isPointwiseFloatType(DataType t);

/// Whether an ElementWise / Unary / Activation with operands of these kinds is admitted, and the result's kind.
/// (Exposed for the pass, which asks before it fuses.)
bool pointwiseElementWiseAdmits(ElementWiseOperation op, bool operandsBool, bool* resultBool);
bool pointwiseUnaryAdmits(UnaryOperation op, bool operandBool, bool* resultBool);

/// Readable form of a program ("t0 = sum(x0, 1.5); t1 = relu(t0); ...") for logs and tests.
std::string pointwiseProgramToString(PointwiseProgram const& p);

}  // namespace kiln::ir
