// A small IExprBuilder for driving IPluginV2DynamicExt::getOutputDimensions outside the builder (the plugin
// tests and kiln-plugin-check): expressions are constants, symbols standing for input dimensions, or
// operations on them, and evaluate() computes their value for given input shapes. Header-only.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <vector>

#include "kiln/kiln_plugin.h"

namespace kiln::plugin {

/// One expression node owned by a ShapeExprBuilder.
class ShapeExpr final : public IDimensionExpr {
 public:
  enum class Kind { kConst, kSymbol, kOp };
  Kind kind = Kind::kConst;
  int64_t value = 0;               // kConst
  int32_t input = 0, dim = 0;      // kSymbol: dimension `dim` of input `input`
  DimensionOperation op{};         // kOp
  ShapeExpr const* a = nullptr;    // kOp operands
  ShapeExpr const* b = nullptr;

  bool isConstant() const noexcept override { return kind == Kind::kConst; }
  int64_t getConstantValue() const noexcept override {
    return kind == Kind::kConst ? value : std::numeric_limits<int64_t>::min();
  }
  bool isSizeTensor() const noexcept override { return false; }
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
    ShapeExpr& e = nodes_.emplace_back();
    e.kind = ShapeExpr::Kind::kConst;
    e.value = value;
    return &e;
  }
  /// An expression standing for dimension `dim` of input `input` (not constant).
  IDimensionExpr const* symbol(int32_t input, int32_t dim) {
    ShapeExpr& e = nodes_.emplace_back();
    e.kind = ShapeExpr::Kind::kSymbol;
    e.input = input;
    e.dim = dim;
    return &e;
  }
  IDimensionExpr const* operation(DimensionOperation op, IDimensionExpr const& first,
                                  IDimensionExpr const& second) noexcept override {
    if (static_cast<int32_t>(op) < 0 || static_cast<int32_t>(op) >= EnumMax<DimensionOperation>()) return nullptr;
    auto const& a = static_cast<ShapeExpr const&>(first);
    auto const& b = static_cast<ShapeExpr const&>(second);
    if (a.isConstant() && b.isConstant()) {
      if (auto v = applyDimensionOperation(op, a.value, b.value)) return constant(*v);
    }
    ShapeExpr& e = nodes_.emplace_back();
    e.kind = ShapeExpr::Kind::kOp;
    e.op = op;
    e.a = &a;
    e.b = &b;
    return &e;
  }
  IDimensionExpr const* declareSizeTensor(int32_t, IDimensionExpr const&, IDimensionExpr const&) override {
    return nullptr;  // no built-in plugin has size-tensor outputs
  }

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

  /// Value of `e` when input i has shape inputs[i]; nullopt for a null expression, an out-of-range symbol or a
  /// division by zero.
  static std::optional<int64_t> evaluate(IDimensionExpr const* e, std::vector<Dims> const& inputs) {
    if (!e) return std::nullopt;
    auto const& x = *static_cast<ShapeExpr const*>(e);
    switch (x.kind) {
      case ShapeExpr::Kind::kConst: return x.value;
      case ShapeExpr::Kind::kSymbol:
        if (x.input < 0 || x.input >= static_cast<int32_t>(inputs.size()) || x.dim < 0 ||
            x.dim >= inputs[x.input].nbDims) {
          return std::nullopt;
        }
        return inputs[x.input].d[x.dim];
      case ShapeExpr::Kind::kOp: {
        auto a = evaluate(x.a, inputs);
        auto b = evaluate(x.b, inputs);
        if (!a || !b) return std::nullopt;
        return applyDimensionOperation(x.op, *a, *b);
      }
    }
    return std::nullopt;
  }
  /// Dims of `e` for the given input shapes; nbDims -1 when any dimension cannot be evaluated.
  static Dims evaluate(DimsExprs const& e, std::vector<Dims> const& inputs) {
    Dims d{};
    if (e.nbDims < 0 || e.nbDims > Dims::MAX_DIMS) {
      d.nbDims = -1;
      return d;
    }
    d.nbDims = e.nbDims;
    for (int32_t i = 0; i < e.nbDims; ++i) {
      auto v = evaluate(e.d[i], inputs);
      if (!v) {
        d.nbDims = -1;
        return d;
      }
      d.d[i] = *v;
    }
    return d;
  }

 private:
  std::deque<ShapeExpr> nodes_;  // stable addresses
};

}  // namespace kiln::plugin
