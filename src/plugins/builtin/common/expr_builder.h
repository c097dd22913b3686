// A small IExprBuilder for driving getOutputDimensions / getOutputShapes outside the builder (the plugin tests and
// kiln-plugin-check): expressions are constants, symbols standing for input dimensions, operations on them, or size
// tensors (IExprBuilder::declareSizeTensor, V3), and evaluate() computes their value for given input shapes and a
// way of valuing size tensors. Header-only.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "kiln/kiln_plugin.h"

namespace kiln::plugin {

/// One expression node owned by a ShapeExprBuilder.
class ShapeExpr final : public IDimensionExpr {
 public:
  enum class Kind { kConst, kSymbol, kOp, kSizeTensor };
  Kind kind = Kind::kConst;
  int64_t value = 0;               // kConst
  int32_t input = 0, dim = 0;      // kSymbol: dimension `dim` of input `input`; kSizeTensor: `input` is the output
  DimensionOperation op{};         // kOp
  ShapeExpr const* a = nullptr;    // kOp operands; kSizeTensor: a = opt, b = upper
  ShapeExpr const* b = nullptr;
  bool sizeDependent = false;  // a size tensor or an operation on one

  bool isConstant() const noexcept override { return kind == Kind::kConst; }
  int64_t getConstantValue() const noexcept override {
    return kind == Kind::kConst ? value : std::numeric_limits<int64_t>::min();
  }
  bool isSizeTensor() const noexcept override { return kind == Kind::kSizeTensor; }
};

/// How evaluate() values size tensors (as Kiln's shape program does, ir::SizeTensorMode).
struct SizeValues {
  enum class Mode {
    kUnknown,  ///< no value: expressions over size tensors evaluate to nullopt
    kZero,     ///< 0 (the smallest extent)
    kOpt,      ///< the declared opt
    kUpper,    ///< the declared upper bound: the allocation a plugin writes into
    kValue,    ///< `values[output]`: what the plugin wrote into that size-tensor output
  };
  Mode mode = Mode::kUnknown;
  std::vector<int64_t> values;  ///< kValue: per output index (missing or negative: unknown)
};

/// A declared size tensor: output `output` holds the value of `size`, whose opt and upper bound are `opt`, `upper`.
struct SizeTensorDeclaration {
  int32_t output = -1;
  ShapeExpr const* size = nullptr;
  ShapeExpr const* opt = nullptr;
  ShapeExpr const* upper = nullptr;
};

/// Applies `op` to two values; nullopt for a division by zero.
inline std::optional<int64_t> applyDimensionOperation(DimensionOperation op, int64_t x, int64_t y) {
  switch (op) {
    case DimensionOperation::kSUM: return x + y;
    case DimensionOperation::kPROD: return x * y;
    case DimensionOperation::kMAX: return x > y ? x : y;
    case DimensionOperation::kMIN: return x < y ? x : y;
    case DimensionOperation::kSUB: return x - y;
    case DimensionOperation::kEQUAL: return x == y ? 1 : 0;
    case DimensionOperation::kLESS: return x < y ? 1 : 0;
    case DimensionOperation::kFLOOR_DIV: {
      if (y == 0) return std::nullopt;
      int64_t q = x / y;
      return (q * y != x && ((x < 0) != (y < 0))) ? q - 1 : q;
    }
    case DimensionOperation::kCEIL_DIV: {
      if (y == 0) return std::nullopt;
      int64_t q = x / y;
      return (q * y != x && ((x < 0) == (y < 0))) ? q + 1 : q;
    }
  }
  return std::nullopt;
}

/// Builds and evaluates ShapeExprs. Constant operands fold at once, as in the builder.
class ShapeExprBuilder final : public IExprBuilder {
 public:
  IDimensionExpr const* constant(int64_t value) noexcept override {
    ShapeExpr& e = add();
    e.kind = ShapeExpr::Kind::kConst;
    e.value = value;
    return &e;
  }
  /// An expression standing for dimension `dim` of input `input` (not constant).
  IDimensionExpr const* symbol(int32_t input, int32_t dim) {
    ShapeExpr& e = add();
    e.kind = ShapeExpr::Kind::kSymbol;
    e.input = input;
    e.dim = dim;
    return &e;
  }
  IDimensionExpr const* operation(DimensionOperation op, IDimensionExpr const& first,
                                  IDimensionExpr const& second) noexcept override {
    if (static_cast<int32_t>(op) < 0 || static_cast<int32_t>(op) >= EnumMax<DimensionOperation>()) return nullptr;
    if (!owns(&first) || !owns(&second)) {
      fail("passed IExprBuilder::operation an expression this builder did not create");
      return nullptr;
    }
    auto const& a = static_cast<ShapeExpr const&>(first);
    auto const& b = static_cast<ShapeExpr const&>(second);
    if (a.isConstant() && b.isConstant()) {
      if (auto v = applyDimensionOperation(op, a.value, b.value)) return constant(*v);
    }
    ShapeExpr& e = add();
    e.kind = ShapeExpr::Kind::kOp;
    e.op = op;
    e.a = &a;
    e.b = &b;
    e.sizeDependent = a.sizeDependent || b.sizeDependent;
    return &e;
  }
  /// A size tensor for output `outputIndex` (V3): an expression that is neither constant nor known until the plugin
  /// has run. Declaring an output twice, or an opt or upper bound over a size tensor, is recorded in error().
  IDimensionExpr const* declareSizeTensor(int32_t outputIndex, IDimensionExpr const& opt,
                                          IDimensionExpr const& upper) override {
    if (!owns(&opt) || !owns(&upper)) {
      fail("passed IExprBuilder::declareSizeTensor an expression this builder did not create");
      return nullptr;
    }
    auto const& o = static_cast<ShapeExpr const&>(opt);
    auto const& u = static_cast<ShapeExpr const&>(upper);
    if (outputIndex < 0) fail("declared a size tensor for output " + std::to_string(outputIndex));
    if (o.sizeDependent || u.sizeDependent)
      fail("declared size tensor output " + std::to_string(outputIndex) +
           " with an opt or upper bound that depends on a size tensor");
    for (auto const& d : sizeTensors_)
      if (d.output == outputIndex) fail("declared output " + std::to_string(outputIndex) + " a size tensor twice");
    ShapeExpr& e = add();
    e.kind = ShapeExpr::Kind::kSizeTensor;
    e.input = outputIndex;
    e.a = &o;
    e.b = &u;
    e.sizeDependent = true;
    sizeTensors_.push_back({outputIndex, &e, &o, &u});
    return &e;
  }
  /// The size tensors declared so far, in declaration order.
  std::vector<SizeTensorDeclaration> const& sizeTensors() const { return sizeTensors_; }
  /// The first misuse of the builder ("" when none).
  std::string const& error() const { return error_; }

  /// DimsExprs of constants for `d`.
  DimsExprs constants(Dims const& d) {
    DimsExprs e{};
    e.nbDims = d.nbDims;
    for (int32_t i = 0; i < d.nbDims; ++i) e.d[i] = constant(d.d[i]);
    return e;
  }
  /// DimsExprs of symbols for input `input` of rank `rank`.
  DimsExprs symbols(int32_t input, int32_t rank) {
    DimsExprs e{};
    e.nbDims = rank;
    for (int32_t i = 0; i < rank; ++i) e.d[i] = symbol(input, i);
    return e;
  }

  /// Value of `e` when input i has shape inputs[i], size tensors valued as `sizes` says; nullopt for a null
  /// expression, an out-of-range symbol, a size tensor without a value or a division by zero.
  static std::optional<int64_t> evaluate(IDimensionExpr const* e, std::vector<Dims> const& inputs,
                                         SizeValues const& sizes = {}) {
    if (!e) return std::nullopt;
    auto const& x = *static_cast<ShapeExpr const*>(e);
    switch (x.kind) {
      case ShapeExpr::Kind::kSizeTensor:
        switch (sizes.mode) {
          case SizeValues::Mode::kUnknown:
            return std::nullopt;
          case SizeValues::Mode::kZero:
            return 0;
          case SizeValues::Mode::kOpt:
            return evaluate(x.a, inputs, sizes);
          case SizeValues::Mode::kUpper:
            return evaluate(x.b, inputs, sizes);
          case SizeValues::Mode::kValue:
            if (x.input < 0 || static_cast<size_t>(x.input) >= sizes.values.size() || sizes.values[x.input] < 0)
              return std::nullopt;
            return sizes.values[x.input];
        }
        return std::nullopt;
      case ShapeExpr::Kind::kConst: return x.value;
      case ShapeExpr::Kind::kSymbol:
        if (x.input < 0 || x.input >= static_cast<int32_t>(inputs.size()) || x.dim < 0 ||
            x.dim >= inputs[x.input].nbDims) {
          return std::nullopt;
        }
        return inputs[x.input].d[x.dim];
      case ShapeExpr::Kind::kOp: {
        auto a = evaluate(x.a, inputs, sizes);
        auto b = evaluate(x.b, inputs, sizes);
        if (!a || !b) return std::nullopt;
        return applyDimensionOperation(x.op, *a, *b);
      }
    }
    return std::nullopt;
  }
  /// Dims of `e` for the given input shapes (and size-tensor values); nbDims -1 when any dimension cannot be
  /// evaluated.
  static Dims evaluate(DimsExprs const& e, std::vector<Dims> const& inputs, SizeValues const& sizes = {}) {
    Dims d{};
    if (e.nbDims < 0 || e.nbDims > Dims::MAX_DIMS) {
      d.nbDims = -1;
      return d;
    }
    d.nbDims = e.nbDims;
    for (int32_t i = 0; i < e.nbDims; ++i) {
      auto v = evaluate(e.d[i], inputs, sizes);
      if (!v) {
        d.nbDims = -1;
        return d;
      }
      d.d[i] = *v;
    }
    return d;
  }

  /// True when `e` is (or is an operation on) a size tensor: a data-dependent extent.
  static bool sizeDependent(IDimensionExpr const* e) { return e && static_cast<ShapeExpr const*>(e)->sizeDependent; }

 private:
  ShapeExpr& add() {
    ShapeExpr& e = nodes_.emplace_back();
    mine_.insert(&e);
    return e;
  }
  bool owns(IDimensionExpr const* e) const { return mine_.count(e) != 0; }
  void fail(std::string m) {
    if (error_.empty()) error_ = std::move(m);
  }

  std::deque<ShapeExpr> nodes_;  // stable addresses
  std::unordered_set<IDimensionExpr const*> mine_;
  std::vector<SizeTensorDeclaration> sizeTensors_;
  std::string error_;
};

}  // namespace kiln::plugin
