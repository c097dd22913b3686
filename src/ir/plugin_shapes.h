// A V3 plugin's output shapes as expression trees (PluginShapeProgram): captured at build time through a symbolic
// IExprBuilder, stored in the plan (node attribute plugin_shapes), evaluated at run time over the actual input dims
// and shape-input values, so that a plugin created for TensorRTPhase::kRUNTIME is never asked to build.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "kiln/kiln_plugin.h"

namespace kiln::ir {

/// `op` applied to `x` and `y` as IExprBuilder::operation defines it; errors for overflow, division by zero and an
/// unknown operation.
Result<int64_t> applyDimensionOperation(DimensionOperation op, int64_t x, int64_t y);

/// One node of a PluginShapeProgram; operands are earlier nodes (the table is in topological order, so evaluation
/// is one pass with no recursion).
struct ShapeExprNode {
  enum class Kind : int64_t {
    kConstant = 0,    ///< a: the value.
    kInputDim = 1,    ///< a: plugin input, b: dimension.
    kShapeValue = 2,  ///< a: shape input, b: element (row-major).
    kOperation = 3,   ///< a: DimensionOperation, b and c: operand nodes.
    kSizeTensor = 4,  ///< a: the output that is a size tensor, b: opt node, c: upper-bound node.
  };
  Kind kind = Kind::kConstant;
  int64_t a = 0, b = 0, c = 0;
};

/// Most nodes a stored program may have (a plan claiming more is refused).
inline constexpr int64_t kMaxShapeExprNodes = 4096;

/// What size-tensor nodes evaluate to.
enum class SizeTensorMode {
  kUnknown,  ///< unknown (-1): shape inference before the plugin ran.
  kZero,     ///< 0: the smallest extent (configurePlugin's min).
  kOpt,      ///< the declared opt expression.
  kUpper,    ///< the declared upper bound: the allocation the plugin writes into.
  kValue,    ///< the values the plugin wrote (EvalInputs::sizes).
};

/// What a program is evaluated over.
struct EvalInputs {
  std::vector<Dims> inputs;                                      ///< the plugin inputs' dims (-1: unknown)
  std::vector<std::optional<std::vector<int64_t>>> shapeValues;  ///< per shape input, its values when known
  SizeTensorMode sizeMode = SizeTensorMode::kUnknown;
  std::vector<int64_t> sizes;  ///< kValue: per output, the size tensor's value (others ignored)
};

/// A size tensor declared by the plugin (IExprBuilder::declareSizeTensor).
struct SizeTensorDecl {
  int32_t output = -1;  ///< the 0-D int32/int64 output holding the size
  int32_t node = -1;    ///< the kSizeTensor node
};

/// Every output's dims as expressions over the plugin's inputs.
class PluginShapeProgram {
 public:
  int32_t nbInputs = 0;
  int32_t nbShapeInputs = 0;
  std::vector<ShapeExprNode> nodes;
  std::vector<std::vector<int32_t>> outputs;  ///< per output, the node of each dimension (size = rank)

  /// The node attribute's encoding: "KSE1" tag, counts, the node table (4 values each), then per output its rank
  /// and nodes.
  std::vector<int64_t> encode() const;
  /// Decodes and validates a stored program for a node with these counts; errors say what is malformed (never
  /// reads past `data`, no recursion, at most kMaxShapeExprNodes nodes).
  static Result<PluginShapeProgram> decode(std::vector<int64_t> const& data, int32_t nbInputs, int32_t nbShapeInputs,
                                           int32_t nbOutputs);
  /// The structural checks decode makes: operand order, indices in range, size tensors declared once for a 0-D
  /// output, opt and upper independent of size tensors.
  Status validate() const;
  /// The declared size tensors, in output order.
  std::vector<SizeTensorDecl> sizeTensors() const;
  /// True when some output dimension depends on a size tensor.
  bool hasDataDependentOutputs() const;
  /// The value of every node (nullopt: unknown). Errors: an input of lower rank than a dimension the program
  /// reads, overflow, division by zero.
  Result<std::vector<std::optional<int64_t>>> evaluateNodes(EvalInputs const& in) const;
  /// Every output's dims (-1 where unknown); a negative known extent is an error.
  Result<std::vector<Dims>> evaluate(EvalInputs const& in) const;
};

/// An IExprBuilder whose expressions are nodes of a PluginShapeProgram: input dims and shape-input values are
/// leaves (constants where known while building), operations on constants fold. Used by PluginInstance to capture
/// getOutputShapes.
class SymbolicExprBuilder final : public IExprBuilder {
 public:
  SymbolicExprBuilder(int32_t nbInputs, int32_t nbShapeInputs);
  ~SymbolicExprBuilder();
  IDimensionExpr const* constant(int64_t value) noexcept override;
  IDimensionExpr const* operation(DimensionOperation op, IDimensionExpr const& first,
                                  IDimensionExpr const& second) noexcept override;
  IDimensionExpr const* declareSizeTensor(int32_t outputIndex, IDimensionExpr const& opt,
                                          IDimensionExpr const& upper) override;
  /// Leaves: dimension `dim` of input `input` (a constant when `known` >= 0), element `k` of shape input `i`.
  IDimensionExpr const* inputDim(int32_t input, int32_t dim, int64_t known);
  IDimensionExpr const* shapeValue(int32_t input, int32_t element, std::optional<int64_t> known);
  /// The program for these output expressions (only the nodes they reach), or the first error the plugin caused.
  Result<PluginShapeProgram> finish(DimsExprs const* outputs, int32_t nbOutputs);

 private:
  class Node;
  Node const* mine(IDimensionExpr const* e) const;
  Node const* add(ShapeExprNode n, std::optional<int64_t> value, bool sizeDependent);
  void fail(std::string m);

  int32_t nbInputs_, nbShapeInputs_;
  std::vector<std::unique_ptr<Node>> nodes_;  // the expressions handed out, by id
  std::vector<ShapeExprNode> table_;          // what each stands for, by id
  std::unordered_map<IDimensionExpr const*, Node const*> index_;
  std::string error_;
};

}  // namespace kiln::ir
