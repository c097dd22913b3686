// Reference kernel of Unary: float math in double rounded once on store; kABS/kNEG/kSIGN also exact on signed
// integers (wrapping: |INT_MIN| stays INT_MIN as in two's complement); kNOT on bool; kISINF/kISNAN give bool;
// Kiln's kBITWISE_NOT on every integer type.
#include <cmath>
#include <cstdint>

#include "backends/reference/reference_util.h"
#include "ir/extension_enums.h"

namespace kiln::backends::reference {
namespace {

using Op = UnaryOperation;

// Round half to even, independent of the floating-point environment's rounding mode.
double roundHalfEven(double x) {
  if (!std::isfinite(x))
    return x;
  double f = std::floor(x);
  double frac = x - f;
  if (frac < 0.5)
    return f;
  if (frac > 0.5)
    return f + 1.0;
  return std::fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

double floatOp(Op op, double x) {
  switch (op) {
    case Op::kEXP:
      return std::exp(x);
    case Op::kLOG:
      return std::log(x);
    case Op::kSQRT:
      return std::sqrt(x);
    case Op::kRECIP:
      return 1.0 / x;
    case Op::kABS:
      return std::fabs(x);
    case Op::kNEG:
      return -x;
    case Op::kSIN:
      return std::sin(x);
    case Op::kCOS:
      return std::cos(x);
    case Op::kTAN:
      return std::tan(x);
    case Op::kSINH:
      return std::sinh(x);
    case Op::kCOSH:
      return std::cosh(x);
    case Op::kASIN:
      return std::asin(x);
    case Op::kACOS:
      return std::acos(x);
    case Op::kATAN:
      return std::atan(x);
    case Op::kASINH:
      return std::asinh(x);
    case Op::kACOSH:
      return std::acosh(x);
    case Op::kATANH:
      return std::atanh(x);
    case Op::kCEIL:
      return std::ceil(x);
    case Op::kFLOOR:
      return std::floor(x);
    case Op::kERF:
      return std::erf(x);
    case Op::kNOT:
      return x == 0.0 ? 1.0 : 0.0;
    case Op::kSIGN:
      return std::isnan(x) ? x : (x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : 0.0));
    case Op::kROUND:
      return roundHalfEven(x);
    case Op::kISINF:
      return std::isinf(x) ? 1.0 : 0.0;
    case Op::kISNAN:
      return std::isnan(x) ? 1.0 : 0.0;
    case Op::kBITWISE_NOT:
      break;  // integers only (outputType refuses floats)
  }
  return x;
}

int64_t intOp(Op op, int64_t x) {
  uint64_t neg = 0 - static_cast<uint64_t>(x);  // wrapping negation, no overflow UB
  switch (op) {
    case Op::kABS:
      return x < 0 ? static_cast<int64_t>(neg) : x;
    case Op::kNEG:
      return static_cast<int64_t>(neg);
    case Op::kSIGN:
      return x > 0 ? 1 : (x < 0 ? -1 : 0);
    case Op::kNOT:
      return x == 0 ? 1 : 0;
    case Op::kBITWISE_NOT:
      return ~x;  // the store narrows to the storage type's bits
    case Op::kEXP:
    case Op::kLOG:
    case Op::kSQRT:
    case Op::kRECIP:
    case Op::kSIN:
    case Op::kCOS:
    case Op::kTAN:
    case Op::kSINH:
    case Op::kCOSH:
    case Op::kASIN:
    case Op::kACOS:
    case Op::kATAN:
    case Op::kASINH:
    case Op::kACOSH:
    case Op::kATANH:
    case Op::kCEIL:
    case Op::kFLOOR:
    case Op::kERF:
    case Op::kROUND:
    case Op::kISINF:
    case Op::kISNAN:
      break;
  }
  return x;
}

// The output type the reference produces for `op` on `t`, or nullopt when it does not run it.
std::optional<DataType> outputType(Op op, DataType t) {
  bool isFloat = isComputeFloat(t);
  bool isSignedInt = typeIn(t, {DataType::kINT8, DataType::kINT16, DataType::kINT32, DataType::kINT64});
  switch (op) {
    case Op::kNOT:
      return t == DataType::kBOOL ? std::optional<DataType>(t) : std::nullopt;
    case Op::kBITWISE_NOT:
      return ir::isBitwiseType(t) ? std::optional<DataType>(t) : std::nullopt;
    case Op::kABS:
    case Op::kNEG:
    case Op::kSIGN:
      return (isFloat || isSignedInt) ? std::optional<DataType>(t) : std::nullopt;
    case Op::kISINF:
    case Op::kISNAN:
      return isFloat ? std::optional<DataType>(DataType::kBOOL) : std::nullopt;
    case Op::kEXP:
    case Op::kLOG:
    case Op::kSQRT:
    case Op::kRECIP:
    case Op::kSIN:
    case Op::kCOS:
    case Op::kTAN:
    case Op::kSINH:
    case Op::kCOSH:
    case Op::kASIN:
    case Op::kACOS:
    case Op::kATAN:
    case Op::kASINH:
    case Op::kACOSH:
    case Op::kATANH:
    case Op::kCEIL:
    case Op::kFLOOR:
    case Op::kERF:
    case Op::kROUND:
      return isFloat ? std::optional<DataType>(t) : std::nullopt;
  }
  return std::nullopt;
}

bool validOp(int64_t v) { return ir::isValidUnaryOperation(v); }

Tactic unaryTactic() {
  return makeTactic(
      "unary_reference", ir::OpType::kUnary,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        int64_t v = node.attrs.getInt("op", -1);
        if (!validOp(v))
          return invalidGraph(node.describe(), ": invalid unary operation ", v);
        auto op = static_cast<Op>(v);
        std::string what = node.describe();
        return makeKernel([op, what](LaunchContext const& ctx) -> Status {
          TensorView const& x = ctx.inputs[0];
          TensorView const& y = ctx.outputs[0];
          std::optional<DataType> t = outputType(op, x.dtype);
          if (!t || *t != y.dtype)
            return unsupported(what, ": no reference unary for these types");
          if (!dimsEqual(x.shape, y.shape))
            return invalidArgument(what, ": output shape ", dimsToString(y.shape), " differs from input shape ",
                                   dimsToString(x.shape));
          int64_t n = x.count();
          if (isFloatType(x.dtype)) {
            for (int64_t i = 0; i < n; ++i)
              storeFromDouble(y, i, floatOp(op, loadAsDouble(x, i)));
          } else {
            for (int64_t i = 0; i < n; ++i)
              storeFromInt(y, i, intOp(op, loadAsInt(x, i)));
          }
          return Status::ok();
        });
      },
      [](ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        int64_t v = node.attrs.getInt("op", -1);
        if (!validOp(v) || in.size() != 1 || out.size() != 1)
          return false;
        std::optional<DataType> t = outputType(static_cast<Op>(v), in[0].dtype);
        return t && *t == out[0].dtype;
      });
}

KILN_REGISTER_TACTIC(unaryTactic);

}  // namespace
}  // namespace kiln::backends::reference
