// PointwiseFused programs: attribute encoding, decoding and validation (one place, so that inference, every
// kernel and plan loading refuse the same malformed programs with the same messages).
#include "ir/pointwise_program.h"

#include "core/dtype.h"
#include "ir/extension_enums.h"

namespace kiln::ir {
namespace {

constexpr int64_t kHeader = 2;  // version, instruction count
constexpr int64_t kFields = 5;  // opcode, param, a, b, c
constexpr int64_t kUnused = -1;

int64_t encodeOperand(PwOperand const& o, int32_t numInputs) {
  switch (o.source) {
    case PwSource::kNone:
      return kUnused;
    case PwSource::kInput:
      return o.index;
    case PwSource::kInstruction:
      return numInputs + o.index;
    case PwSource::kImmediate:
      return -2 - int64_t{o.index};
  }
  return kUnused;
}

int32_t operandCount(PwOpcode op) {
  switch (op) {
    case PwOpcode::kElementWise:
      return 2;
    case PwOpcode::kUnary:
    case PwOpcode::kActivation:
    case PwOpcode::kCast:
      return 1;
    case PwOpcode::kSelect:
      return 3;
  }
  return 0;
}

char const* opcodeName(PwOpcode op) {
  switch (op) {
    case PwOpcode::kElementWise:
      return "elementwise";
    case PwOpcode::kUnary:
      return "unary";
    case PwOpcode::kActivation:
      return "activation";
    case PwOpcode::kCast:
      return "cast";
    case PwOpcode::kSelect:
      return "select";
  }
  return "?";
}

}  // namespace

bool isPointwiseFloatType(DataType t) { return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16; }

bool pointwiseElementWiseAdmits(ElementWiseOperation op, bool operandsBool, bool* resultBool) {
  switch (op) {
    case ElementWiseOperation::kSUM:
    case ElementWiseOperation::kPROD:
    case ElementWiseOperation::kMAX:
    case ElementWiseOperation::kMIN:
    case ElementWiseOperation::kSUB:
    case ElementWiseOperation::kDIV:
    case ElementWiseOperation::kPOW:
    case ElementWiseOperation::kFLOOR_DIV:
      *resultBool = false;
      return !operandsBool;
    case ElementWiseOperation::kGREATER:
    case ElementWiseOperation::kLESS:
      *resultBool = true;
      return !operandsBool;
    case ElementWiseOperation::kEQUAL:
      *resultBool = true;
      return true;
    case ElementWiseOperation::kAND:
    case ElementWiseOperation::kOR:
    case ElementWiseOperation::kXOR:
      *resultBool = true;
      return operandsBool;
    case ElementWiseOperation::kBITWISE_AND:
    case ElementWiseOperation::kBITWISE_OR:
    case ElementWiseOperation::kBITWISE_XOR:
      return false;  // integers only
  }
  return false;
}

bool pointwiseUnaryAdmits(UnaryOperation op, bool operandBool, bool* resultBool) {
  switch (op) {
    case UnaryOperation::kEXP:
    case UnaryOperation::kLOG:
    case UnaryOperation::kSQRT:
    case UnaryOperation::kRECIP:
    case UnaryOperation::kABS:
    case UnaryOperation::kNEG:
    case UnaryOperation::kSIN:
    case UnaryOperation::kCOS:
    case UnaryOperation::kTAN:
    case UnaryOperation::kSINH:
    case UnaryOperation::kCOSH:
    case UnaryOperation::kASIN:
    case UnaryOperation::kACOS:
    case UnaryOperation::kATAN:
    case UnaryOperation::kASINH:
    case UnaryOperation::kACOSH:
    case UnaryOperation::kATANH:
    case UnaryOperation::kCEIL:
    case UnaryOperation::kFLOOR:
    case UnaryOperation::kERF:
    case UnaryOperation::kSIGN:
    case UnaryOperation::kROUND:
      *resultBool = false;
      return !operandBool;
    case UnaryOperation::kISINF:
    case UnaryOperation::kISNAN:
      *resultBool = true;
      return !operandBool;
    case UnaryOperation::kNOT:
      *resultBool = true;
      return operandBool;
    case UnaryOperation::kBITWISE_NOT:
      return false;  // integers only
  }
  return false;
}

void encodePointwiseProgram(PointwiseProgram const& p, Attributes& attrs) {
  std::vector<int64_t> code{kPointwiseProgramVersion, static_cast<int64_t>(p.instructions.size())};
  std::vector<double> floats;
  for (PwInstruction const& in : p.instructions) {
    code.push_back(static_cast<int64_t>(in.opcode));
    code.push_back(in.param);
    for (int k = 0; k < 3; ++k)
      code.push_back(k < in.numOperands ? encodeOperand(in.operands[static_cast<size_t>(k)], p.numInputs) : kUnused);
    floats.push_back(in.alpha);
    floats.push_back(in.beta);
  }
  for (float v : p.immediates) floats.push_back(v);
  attrs.setInts("program", std::move(code));
  attrs.set("program_floats", std::move(floats));
}

Result<PointwiseProgram> decodePointwiseProgram(Attributes const& attrs, std::vector<DataType> const& inputTypes,
                                                DataType outType, std::string const& what) {
  std::vector<int64_t> const code = attrs.getInts("program");
  std::vector<double> const floats = attrs.getFloats("program_floats");
  auto bad = [&](auto const&... args) { return invalidGraph(what, ": PointwiseFused program: ", args...); };
  if (code.size() < kHeader) return bad("missing or shorter than its header (", code.size(), " entries)");
  if (code[0] != kPointwiseProgramVersion)
    return bad("version ", code[0], " is not the supported ", kPointwiseProgramVersion);
  int64_t const n = code[1];
  if (n < 1 || n > kPointwiseMaxInstructions)
    return bad("instruction count ", n, " is outside [1, ", kPointwiseMaxInstructions, "]");
  if (static_cast<int64_t>(code.size()) != kHeader + n * kFields)
    return bad(code.size(), " entries where ", n, " instructions take ", kHeader + n * kFields);
  if (static_cast<int64_t>(floats.size()) < 2 * n)
    return bad("program_floats has ", floats.size(), " entries, fewer than the ", 2 * n, " of alpha/beta pairs");
  if (inputTypes.empty() || inputTypes.size() > static_cast<size_t>(kPointwiseMaxInputs))
    return bad(inputTypes.size(), " inputs, outside [1, ", kPointwiseMaxInputs, "]");
  PointwiseProgram p;
  p.numInputs = static_cast<int32_t>(inputTypes.size());
  size_t const numImm = floats.size() - static_cast<size_t>(2 * n);
  if (numImm > static_cast<size_t>(kPointwiseMaxImmediates))
    return bad(numImm, " immediates, more than ", kPointwiseMaxImmediates);
  for (size_t i = 0; i < numImm; ++i)
    p.immediates.push_back(static_cast<float>(floats[static_cast<size_t>(2 * n) + i]));
  std::vector<bool> inputBool;
  for (size_t i = 0; i < inputTypes.size(); ++i) {
    DataType t = inputTypes[i];
    if (!isPointwiseFloatType(t) && t != DataType::kBOOL)
      return bad("input ", i, " is ", dataTypeName(t), " (float32, float16, bfloat16 or bool only)");
    inputBool.push_back(t == DataType::kBOOL);
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t const* f = &code[static_cast<size_t>(kHeader + i * kFields)];
    auto badAt = [&](auto const&... args) { return bad("instruction ", i, ": ", args...); };
    if (f[0] < 0 || f[0] > static_cast<int64_t>(PwOpcode::kSelect)) return badAt("unknown opcode ", f[0]);
    PwInstruction in;
    in.opcode = static_cast<PwOpcode>(f[0]);
    if (f[1] < INT32_MIN || f[1] > INT32_MAX) return badAt("parameter ", f[1], " out of range");
    in.param = static_cast<int32_t>(f[1]);
    in.numOperands = operandCount(in.opcode);
    in.alpha = static_cast<float>(floats[static_cast<size_t>(2 * i)]);
    in.beta = static_cast<float>(floats[static_cast<size_t>(2 * i + 1)]);
    bool kind[3] = {false, false, false};
    for (int k = 0; k < 3; ++k) {
      int64_t o = f[2 + k];
      if (k >= in.numOperands) {
        if (o != kUnused)
          return badAt(opcodeName(in.opcode), " takes ", in.numOperands, " operands; operand ", k, " is ", o,
                       ", not -1");
        continue;
      }
      PwOperand& op = in.operands[static_cast<size_t>(k)];
      if (o >= 0 && o < p.numInputs) {
        op = {PwSource::kInput, static_cast<int32_t>(o)};
        kind[k] = inputBool[static_cast<size_t>(o)];
      } else if (o >= p.numInputs && o < p.numInputs + i) {
        op = {PwSource::kInstruction, static_cast<int32_t>(o - p.numInputs)};
        kind[k] = p.instructions[static_cast<size_t>(op.index)].resultIsBool;
      } else if (o <= -2 && -2 - o < static_cast<int64_t>(numImm)) {
        op = {PwSource::kImmediate, static_cast<int32_t>(-2 - o)};
        kind[k] = false;
      } else {
        return badAt("operand ", k, " code ", o, " names no input (", p.numInputs,
                     "), earlier instruction or immediate (", numImm, ")");
      }
    }
    switch (in.opcode) {
      case PwOpcode::kElementWise: {
        if (!isValidElementWiseOperation(in.param)) return badAt("invalid elementwise operation ", in.param);
        if (kind[0] != kind[1]) return badAt("elementwise operands differ in kind (bool and float)");
        if (!pointwiseElementWiseAdmits(static_cast<ElementWiseOperation>(in.param), kind[0], &in.resultIsBool))
          return badAt("elementwise operation ", in.param, " is not admitted on ", kind[0] ? "bool" : "float",
                       " operands");
        break;
      }
      case PwOpcode::kUnary:
        if (!isValidUnaryOperation(in.param)) return badAt("invalid unary operation ", in.param);
        if (!pointwiseUnaryAdmits(static_cast<UnaryOperation>(in.param), kind[0], &in.resultIsBool))
          return badAt("unary operation ", in.param, " is not admitted on a ", kind[0] ? "bool" : "float", " operand");
        break;
      case PwOpcode::kActivation:
        if (in.param < 0 || in.param > static_cast<int32_t>(ActivationType::kGELU_TANH))
          return badAt("invalid activation type ", in.param);
        if (kind[0]) return badAt("activation of a bool operand");
        in.resultIsBool = false;
        break;
      case PwOpcode::kCast: {
        auto const t = static_cast<DataType>(in.param);
        if (!isPointwiseFloatType(t) && t != DataType::kBOOL)
          return badAt("cast to type ", in.param, " (float32, float16, bfloat16 or bool only)");
        in.resultIsBool = t == DataType::kBOOL;
        break;
      }
      case PwOpcode::kSelect:
        if (in.param != 0) return badAt("select takes parameter 0, not ", in.param);
        if (!kind[0]) return badAt("select's condition is not bool");
        if (kind[1] != kind[2]) return badAt("select's then and else differ in kind");
        in.resultIsBool = kind[1];
        break;
    }
    p.instructions.push_back(in);
  }
  if (attrs.getInt("to", -1) != static_cast<int64_t>(outType))
    return bad("the output type attribute 'to' (", attrs.getInt("to", -1), ") is not the output's type, ",
               dataTypeName(outType));
  bool const resultBool = p.instructions.back().resultIsBool;
  if (resultBool ? outType != DataType::kBOOL : !isPointwiseFloatType(outType))
    return bad("the result is ", resultBool ? "bool" : "float", " but the output type is ", dataTypeName(outType));
  return p;
}

std::string pointwiseProgramToString(PointwiseProgram const& p) {
  std::string s;
  auto operand = [&](PwOperand const& o) -> std::string {
    switch (o.source) {
      case PwSource::kNone:
        return "-";
      case PwSource::kInput:
        return strCat("x", o.index);
      case PwSource::kInstruction:
        return strCat("t", o.index);
      case PwSource::kImmediate:
        return strCat(p.immediates[static_cast<size_t>(o.index)]);
    }
    return "?";
  };
  for (size_t i = 0; i < p.instructions.size(); ++i) {
    PwInstruction const& in = p.instructions[i];
    s += strCat(i ? "; " : "", "t", i, " = ", opcodeName(in.opcode), "[", in.param, "](");
    for (int32_t k = 0; k < in.numOperands; ++k)
      s += strCat(k ? ", " : "", operand(in.operands[static_cast<size_t>(k)]));
    s += ")";
  }
  return s;
}

}  // namespace kiln::ir
