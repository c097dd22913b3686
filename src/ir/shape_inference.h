// Shape and type inference: one InferFn per op (registered from ir/infer/*.cc), and a driver that walks the
// graph, evaluating small tensors whose inputs are all known (shape tensors) on the host through an
// evaluator that the caller supplies (the reference backend), so that reshapes and slices driven by
// Shape/ElementWise/Gather/Concat/Slice arithmetic get concrete dims.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace kiln::ir {

struct TensorInfo {
  DataType dtype = DataType::kFLOAT;
  Dims shape{};
};

/// What an InferFn sees and fills for one node.
struct InferContext {
  Node const& node;
  std::vector<TensorInfo> in;                 // absent inputs have shape.nbDims == -1
  std::vector<HostTensor const*> inValues;    // known contents (constants, host-evaluated); null otherwise
  std::vector<TensorInfo> out;                // to fill, one per output
  std::vector<std::optional<HostTensor>> outValues;  // an InferFn may give contents (Shape does)

  bool present(size_t i) const { return i < node.inputs.size() && node.inputs[i] != nullptr; }
  size_t numInputs() const { return node.inputs.size(); }
  /// An invalid-graph Status naming the node.
  template <typename... Args>
  Status error(Args const&... args) const {
    return invalidGraph(node.describe(), ": ", args...);
  }
};

using InferFn = Status (*)(InferContext& ctx);

/// Registers the inference function of an op (one per op; a second registration is a startup bug).
struct InferRegistrar {
  InferRegistrar(OpType op, InferFn fn);
};
#define KILN_REGISTER_INFER(OP, FN) \
  static ::kiln::ir::InferRegistrar KILN_CONCAT(kiln_infer_registrar_, __LINE__)(::kiln::ir::OpType::OP, FN)

/// The inference function of an op, or null.
InferFn findInferFn(OpType op);

/// Computes the contents of a node's outputs from its inputs' contents (the reference kernels).
/// `out` comes with dtype and shape set and storage allocated.
using HostEvaluator =
    std::function<Status(Node const& node, std::vector<HostTensor const*> const& in, std::vector<HostTensor>& out)>;

/// Per-run shapes and known contents, indexed by Value::id (the graph must be renumbered).
struct ShapeState {
  std::vector<TensorInfo> info;
  std::vector<std::optional<HostTensor>> values;
  /// Per value, kPinnedShape and/or kPinnedContents: what was observed at run time (data-dependent shapes,
  /// contents of shape tensors read while running) and inference keeps.
  std::vector<uint8_t> pinned;
  void resize(size_t n) {
    info.assign(n, TensorInfo{});
    values.assign(n, std::nullopt);
    pinned.assign(n, 0);
  }
};

inline constexpr uint8_t kPinnedShape = 1;
inline constexpr uint8_t kPinnedContents = 2;

/// Largest number of elements evaluated on the host during inference.
inline constexpr int64_t kMaxHostEvalElements = 4096;

/// Infers every value's type and shape, given `state.info` of the graph inputs (other entries are
/// overwritten, except pinned ones). Data-dependent dims stay -1 (not an error). Constant contents come from the graph. With an evaluator, small outputs whose inputs are
/// all known are computed too. Errors name the node.
Status inferShapes(Graph const& g, ShapeState& state, HostEvaluator const* eval);

/// Runs inferShapes with the inputs' declared shapes and writes dtype/shape into every Value (for the
/// network API and passes). Renumbers the graph.
Status inferGraphInPlace(Graph& g, HostEvaluator const* eval);

}  // namespace kiln::ir
