// The graph-pass interface of the builder and small helpers that several passes share (constant lookup,
// single-use checks, fusion bookkeeping, removing a node while keeping graph output names).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/memory.h"
#include "ir/graph.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::builder {

/// What every pass may use. Pointers are borrowed and may be null (no evaluator: passes that need one do nothing).
struct PassContext {
  int optimizationLevel = 3;
  ir::HostEvaluator const* evaluator = nullptr;
  MemoryBudget* budget = nullptr;
  std::vector<std::string>* log = nullptr;  // one line per rewrite, for verbose builder logs
  bool cpuTarget = false;                    // the build is for the CPU (CPU-only fusions may run)
  /// The graph inputs' dims (in g.inputs() order) at every optimization profile's min, opt and max, for passes
  /// that run after the profiles are known (null before): a dim the IR leaves -1 but every profile fixes.
  std::vector<std::vector<Dims>> const* profileInputs = nullptr;
  bool cpuFusedAttention = false;            // CPU builds: a fast fused fp32 Attention kernel may run it
};

/// A graph rewrite. Precondition: the graph went through ir::inferGraphInPlace. A pass keeps the graph valid,
/// keeps graph inputs, outputs and their names, and records merged layers in the survivor's fusedFrom.
class Pass {
 public:
  virtual ~Pass() = default;
  /// Stable name ("fold_constants") for logs.
  virtual char const* name() const = 0;
  /// Rewrites `g`; returns whether anything changed, or an error naming the layer.
  virtual Result<bool> run(ir::Graph& g, PassContext const& ctx) = 0;
};

/// The passes (one per file).
std::unique_ptr<Pass> createEliminateDeadLayersPass();
std::unique_ptr<Pass> createFoldConstantsPass();
std::unique_ptr<Pass> createEliminateIdentityPass();
std::unique_ptr<Pass> createFoldScaleIntoConvolutionPass();
std::unique_ptr<Pass> createFuseBiasActivationPass();
std::unique_ptr<Pass> createEliminateCommonSubexpressionsPass();
/// Any target: And with a constant true everywhere (Or: false everywhere) becomes its other operand, and an
/// Expand (wrapping Slice from 0, unit steps, static shapes) its input, where the layers reading the smaller
/// tensor are pointwise up to where the broadcast is restored.
std::unique_ptr<Pass> createEliminateBroadcastsPass();
std::unique_ptr<Pass> createFuseGeluPass();
/// An ElementWise kSUM of two same-shape tensors read only by a Normalization (as x) becomes its residual input.
std::unique_ptr<Pass> createFuseResidualLayerNormPass();
/// Swaps the last two axes of a Shuffle feeding a MatrixMultiply operand into the operand's transpose flag.
std::unique_ptr<Pass> createFoldTransposeIntoMatmulPass();
/// GPU builds, and fp32 in CPU builds with PassContext::cpuFusedAttention: MatMul(q, k) -> [scale] -> [+ mask] ->
/// SoftMax -> [NaN -> 0] -> MatMul(p, v) becomes one Attention node (scalar factors on q and k fold into its scale).
std::unique_ptr<Pass> createFuseAttentionPass();
/// Any target: a layout 0 self-attention whose q, k and v are data movement (Slice/Gather/Shuffle/...) of one
/// [S, B, 3E] or [B, S, 3E] tensor (torch.nn.MultiheadAttention's in_proj) and whose y reaches a head-merged view
/// through data movement reads that tensor packed (layout 2 or 1) and writes y in that order; every chain proven
/// on an index tensor at static shapes or at shapes every profile fixes (profileInputs).
std::unique_ptr<Pass> createAbsorbAttentionViewsPass();
/// Any target: a Shuffle swapping axes 0 and 1 (torch.nn.MultiheadAttention's [B, S, E] -> [S, B, E]) followed by
/// single-reader row-wise layers (MatrixMultiply by a shared constant weight, ElementWise with an operand shared
/// by every token, Activation/Unary/Cast/Identity, reshapes keeping tokens whole) and packed head-major Attentions
/// up to the Shuffle swapping them back: both swaps go, the layers run on the other order and each Attention
/// takes the other layout (2 <-> 1). Static shapes only.
std::unique_ptr<Pass> createAbsorbBatchTransposesPass();
/// Any target: the Q, K and V MatrixMultiply nodes (one input, constant weights of one shape, one epilogue) of a
/// layout 1 or 2 Attention, each read through a reshape-only Shuffle, become one MatrixMultiply on the
/// concatenated weights whose output the Attention reads packed (packed_qkv 1).
std::unique_ptr<Pass> createMergeQkvProjectionsPass();
/// CPU builds only (PassContext::cpuTarget): x * sigmoid(x) after a Convolution becomes its `cpu_swish`
/// attribute (the CPU kernels apply it after the activation; the CUDA ones do not read it).
std::unique_ptr<Pass> createFuseCpuSwishPass();
/// GPU builds, level >= 1, run once after precision and the attention re-run (build_engine.cc): maximal connected
/// groups of at least two ElementWise / Unary / Activation / Cast / Select layers on float or bool values, with one
/// sink and no other value read outside the group or marked as a graph output, become one PointwiseFused node
/// named "PWN(<layer names>)"; one-element float constants become immediates.
std::unique_ptr<Pass> createFusePointwisePass();
/// Runs after tactic selection on CPU builds (it reads Node::tactic): records `format` (a
/// backends::cpu::ActFormat value: 1 channels-last, 8 / 16 nChw8c / nChw16c; 0 does nothing) as the memory format
/// of the activations passed only between oneDNN convolutions and poolings.
std::unique_ptr<Pass> createAssignCpuFormatsPass(int64_t format);

namespace passutil {

/// The data of `v` when a Constant node produces it; null otherwise.
inline HostTensor const* constantData(ir::Value const* v) {
  if (!v || !v->producer || v->producer->op != ir::OpType::kConstant || !v->producer->constant) return nullptr;
  return &*v->producer->constant;
}

/// False for nodes whose outputs are not decided by their inputs and attributes alone: random fills, and plugins
/// (their parameters live in the plugin object, and they run when the engine runs). Such nodes are neither
/// merged with their twins nor folded into constants.
inline bool outputsFollowFromInputs(ir::Node const& n) {
  if (n.op == ir::OpType::kPluginV2 || n.op == ir::OpType::kPluginV3) return false;
  if (n.op == ir::OpType::kFill) {
    auto op = static_cast<FillOperation>(n.attrs.getInt("op", 0));
    if (op == FillOperation::kRANDOM_UNIFORM || op == FillOperation::kRANDOM_NORMAL) return false;
  }
  return true;
}

/// True when `v` is read by exactly one node, once, and is not a graph output.
inline bool hasSingleUse(ir::Graph const& g, ir::Value const* v) {
  if (v->isOutput) return false;
  std::vector<ir::Node*> users = g.users(v);
  if (users.size() != 1) return false;
  int reads = 0;
  for (ir::Value const* in : users[0]->inputs) reads += in == v;
  return reads == 1;
}

/// The only reader of `v` when hasSingleUse; null otherwise.
inline ir::Node* singleUser(ir::Graph const& g, ir::Value const* v) {
  return hasSingleUse(g, v) ? g.users(v)[0] : nullptr;
}

/// Records that `merged` was folded into `survivor` (survivor's own name first, once).
inline void recordFusion(ir::Node& survivor, ir::Node const& merged) {
  if (survivor.fusedFrom.empty()) survivor.fusedFrom.push_back(survivor.name);
  if (merged.fusedFrom.empty()) {
    survivor.fusedFrom.push_back(merged.name);
  } else {
    for (auto const& n : merged.fusedFrom) survivor.fusedFrom.push_back(n);
  }
}

/// Makes every reader of `from` read `to` instead. When `from` is a graph output, `to` takes its place and its
/// name; if `to` is a graph input or already an output, an Identity node named after `from`'s producer produces
/// the output instead (so graph outputs keep their names and never alias inputs or each other).
inline void replaceValue(ir::Graph& g, ir::Value* from, ir::Value* to) {
  if (from->isOutput && (to->isInput || to->isOutput)) {
    std::string base = from->producer ? from->producer->name : from->name;
    ir::Node* id = g.addNode(ir::OpType::kIdentity, g.uniqueNodeName(base + "_identity"), {to});
    id->outputs[0]->dtype = to->dtype;
    id->outputs[0]->shape = to->shape;
    to = id->outputs[0];
  }
  g.replaceAllUses(from, to);
}

/// True when `perm` maps each axis to itself (an empty permutation included: absent means identity).
inline bool isIdentityPermutation(std::vector<int64_t> const& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

/// A layer parameter given either as a constant int input or as an int-list attribute (Slice's start/size/stride):
/// the constant at `input` when that input is present, else the attribute `name`; nullopt when the input is not
/// a constant int32/int64 tensor, or neither is given.
inline std::optional<std::vector<int64_t>> constantInts(ir::Node const& n, size_t input, char const* name) {
  if (ir::Value const* v = n.input(input)) {
    HostTensor const* c = constantData(v);
    if (!c || (c->dtype() != DataType::kINT32 && c->dtype() != DataType::kINT64)) return std::nullopt;
    return c->toInt64Vector();
  }
  if (!n.attrs.has(name)) return std::nullopt;
  return n.attrs.getInts(name);
}

/// Appends a line to the pass log when there is one.
inline void log(PassContext const& ctx, std::string line) {
  if (ctx.log) ctx.log->push_back(std::move(line));
}

}  // namespace passutil
}  // namespace kiln::builder
