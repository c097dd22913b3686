// Reference kernel of ElementWise: numpy broadcasting; floats computed in double and rounded once on store,
// integers exactly in int64 (wrapping like the storage type), uint64 exactly in uint64 (its values past 2^63 do
// not fit int64's order and division), bool for logical ops and comparisons; Kiln's bitwise extensions on every
// integer type.
#include <cmath>
#include <cstdint>

#include "backends/reference/reference_util.h"
#include "ir/extension_enums.h"

namespace kiln::backends::reference {
namespace {

using Op = ElementWiseOperation;

// Two's-complement wrapping arithmetic (no signed-overflow UB; results are narrowed to the storage type later).
int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
int64_t wrapNeg(int64_t a) { return static_cast<int64_t>(0 - static_cast<uint64_t>(a)); }

// Integer division by zero is defined as 0 here (TensorRT leaves it undefined; a reference kernel must not
// trap with SIGFPE). INT64_MIN / -1 wraps to INT64_MIN instead of trapping.
int64_t truncDiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  if (b == -1)
    return wrapNeg(a);
  return a / b;
}

int64_t floorDiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;  // defined as 0, see truncDiv
  if (b == -1)
    return wrapNeg(a);
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0)))
    --q;
  return q;
}

// a**b by squaring (wrapping). A negative exponent gives the truncated 1/a**|b|: 1 for a == 1, +-1 for a == -1,
// else 0 (0**negative, a division by zero, is defined as 0 too).
int64_t intPow(int64_t a, int64_t b) {
  if (b < 0) {
    if (a == 1)
      return 1;
    if (a == -1)
      return (b & 1) ? -1 : 1;
    return 0;
  }
  int64_t result = 1, base = a;
  while (b > 0) {
    if (b & 1)
      result = wrapMul(result, base);
    base = wrapMul(base, base);
    b >>= 1;
  }
  return result;
}

int64_t intOp(Op op, int64_t a, int64_t b) {
  switch (op) {
    case Op::kSUM:
      return wrapAdd(a, b);
    case Op::kPROD:
      return wrapMul(a, b);
    case Op::kMAX:
      return a > b ? a : b;
    case Op::kMIN:
      return a < b ? a : b;
    case Op::kSUB:
      return wrapSub(a, b);
    case Op::kDIV:
      return truncDiv(a, b);
    case Op::kPOW:
      return intPow(a, b);
    case Op::kFLOOR_DIV:
      return floorDiv(a, b);
    case Op::kAND:
      return (a != 0) && (b != 0);
    case Op::kOR:
      return (a != 0) || (b != 0);
    case Op::kXOR:
      return (a != 0) != (b != 0);
    case Op::kEQUAL:
      return a == b;
    case Op::kGREATER:
      return a > b;
    case Op::kLESS:
      return a < b;
    // On the int64 image of the value: the low bits are the storage type's bits (uint64 included), and the
    // store narrows back to them.
    case Op::kBITWISE_AND:
      return a & b;
    case Op::kBITWISE_OR:
      return a | b;
    case Op::kBITWISE_XOR:
      return a ^ b;
  }
  return 0;
}

// uint64 arithmetic: wraps modulo 2^64 as the type does; division by zero is 0 (see truncDiv); kFLOOR_DIV equals
// kDIV for unsigned values.
uint64_t uintOp(Op op, uint64_t a, uint64_t b) {
  switch (op) {
    case Op::kSUM:
      return a + b;
    case Op::kPROD:
      return a * b;
    case Op::kMAX:
      return a > b ? a : b;
    case Op::kMIN:
      return a < b ? a : b;
    case Op::kSUB:
      return a - b;
    case Op::kDIV:
    case Op::kFLOOR_DIV:
      return b == 0 ? 0 : a / b;
    case Op::kPOW: {
      uint64_t result = 1, base = a;
      while (b > 0) {
        if (b & 1)
          result *= base;
        base *= base;
        b >>= 1;
      }
      return result;
    }
    case Op::kAND:
      return (a != 0) && (b != 0);
    case Op::kOR:
      return (a != 0) || (b != 0);
    case Op::kXOR:
      return (a != 0) != (b != 0);
    case Op::kEQUAL:
      return a == b;
    case Op::kGREATER:
      return a > b;
    case Op::kLESS:
      return a < b;
    case Op::kBITWISE_AND:
      return a & b;
    case Op::kBITWISE_OR:
      return a | b;
    case Op::kBITWISE_XOR:
      return a ^ b;
  }
  return 0;
}

// kMAX/kMIN propagate NaN (IEEE 754-2019 maximum/minimum), unlike fmax/fmin.
double floatOp(Op op, double a, double b) {
  switch (op) {
    case Op::kSUM:
      return a + b;
    case Op::kPROD:
      return a * b;
    case Op::kMAX:
      return (std::isnan(a) || std::isnan(b)) ? std::nan("") : (a > b ? a : b);
    case Op::kMIN:
      return (std::isnan(a) || std::isnan(b)) ? std::nan("") : (a < b ? a : b);
    case Op::kSUB:
      return a - b;
    case Op::kDIV:
      return a / b;
    case Op::kPOW:
      return std::pow(a, b);
    case Op::kFLOOR_DIV:
      return std::floor(a / b);
    case Op::kAND:
      return (a != 0.0) && (b != 0.0);
    case Op::kOR:
      return (a != 0.0) || (b != 0.0);
    case Op::kXOR:
      return (a != 0.0) != (b != 0.0);
    case Op::kEQUAL:
      return a == b;
    case Op::kGREATER:
      return a > b;
    case Op::kLESS:
      return a < b;
    case Op::kBITWISE_AND:
    case Op::kBITWISE_OR:
    case Op::kBITWISE_XOR:
      break;  // integers only (outputType refuses floats)
  }
  return 0.0;
}

bool isArithmetic(DataType t) {
  return typeIn(t, {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kFLOAT64, DataType::kINT8,
                    DataType::kUINT8, DataType::kINT16, DataType::kUINT16, DataType::kINT32, DataType::kUINT32,
                    DataType::kINT64, DataType::kUINT64});
}

// The output type of `op` on inputs of type `t`, or nullopt when the reference does not run it.
std::optional<DataType> outputType(Op op, DataType t) {
  switch (op) {
    case Op::kSUM:
    case Op::kPROD:
    case Op::kMAX:
    case Op::kMIN:
    case Op::kSUB:
    case Op::kDIV:
    case Op::kPOW:
    case Op::kFLOOR_DIV:
      return isArithmetic(t) ? std::optional<DataType>(t) : std::nullopt;
    case Op::kAND:
    case Op::kOR:
    case Op::kXOR:
      return t == DataType::kBOOL ? std::optional<DataType>(t) : std::nullopt;
    case Op::kEQUAL:
      return (isArithmetic(t) || t == DataType::kBOOL) ? std::optional<DataType>(DataType::kBOOL) : std::nullopt;
    case Op::kGREATER:
    case Op::kLESS:
      return isArithmetic(t) ? std::optional<DataType>(DataType::kBOOL) : std::nullopt;
    case Op::kBITWISE_AND:
    case Op::kBITWISE_OR:
    case Op::kBITWISE_XOR:
      return ir::isBitwiseType(t) ? std::optional<DataType>(t) : std::nullopt;
  }
  return std::nullopt;
}

bool validOp(int64_t v) { return ir::isValidElementWiseOperation(v); }

Tactic elementWiseTactic() {
  return makeTactic(
      "elementwise_reference", ir::OpType::kElementWise,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        int64_t v = node.attrs.getInt("op", -1);
        if (!validOp(v))
          return invalidGraph(node.describe(), ": invalid elementwise operation ", v);
        auto op = static_cast<Op>(v);
        std::string what = node.describe();
        return makeKernel([op, what](LaunchContext const& ctx) -> Status {
          TensorView const& a = ctx.inputs[0];
          TensorView const& b = ctx.inputs[1];
          TensorView const& y = ctx.outputs[0];
          if (a.dtype != b.dtype)
            return invalidArgument(what, ": inputs have different types");
          std::optional<DataType> outType = outputType(op, a.dtype);
          if (!outType || *outType != y.dtype)
            return unsupported(what, ": no reference elementwise for these types");
          Result<Dims> shape = broadcastShapes(a.shape, b.shape);
          if (!shape.isOk())
            return shape.status().withContext(what);
          if (!dimsEqual(*shape, y.shape))
            return invalidArgument(what, ": output shape ", dimsToString(y.shape), " is not the broadcast shape ",
                                   dimsToString(*shape));
          std::array<std::vector<int64_t>, 2> strides{broadcastStrides(a.shape, y.shape),
                                                      broadcastStrides(b.shape, y.shape)};
          if (isFloatType(a.dtype)) {
            forEachIndex<2>(y.shape, strides, [&](int64_t lin, std::array<int64_t, 2> const& off) {
              storeFromDouble(y, lin, floatOp(op, loadAsDouble(a, off[0]), loadAsDouble(b, off[1])));
            });
          } else if (a.dtype == DataType::kUINT64) {
            auto const* pa = static_cast<uint64_t const*>(a.data);
            auto const* pb = static_cast<uint64_t const*>(b.data);
            forEachIndex<2>(y.shape, strides, [&](int64_t lin, std::array<int64_t, 2> const& off) {
              uint64_t r = uintOp(op, pa[off[0]], pb[off[1]]);
              if (y.dtype == DataType::kUINT64) {
                static_cast<uint64_t*>(y.data)[lin] = r;
              } else {
                storeFromInt(y, lin, static_cast<int64_t>(r));  // comparisons: bool 0/1
              }
            });
          } else {
            forEachIndex<2>(y.shape, strides, [&](int64_t lin, std::array<int64_t, 2> const& off) {
              storeFromInt(y, lin, intOp(op, loadAsInt(a, off[0]), loadAsInt(b, off[1])));
            });
          }
          return Status::ok();
        });
      },
      [](ir::Node const& node, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        int64_t v = node.attrs.getInt("op", -1);
        if (!validOp(v) || in.size() != 2 || out.size() != 1 || in[0].dtype != in[1].dtype)
          return false;
        std::optional<DataType> t = outputType(static_cast<Op>(v), in[0].dtype);
        return t && *t == out[0].dtype;
      });
}

KILN_REGISTER_TACTIC(elementWiseTactic);

}  // namespace
}  // namespace kiln::backends::reference
