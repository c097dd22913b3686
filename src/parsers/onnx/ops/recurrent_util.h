// Shared import of the ONNX recurrent ops (RNN, GRU, LSTM): inputs, directions, layouts, activations,
// sequence_lens masking and outputs. Each op supplies its cell equations; the sequence runs in an ILoop over the
// time axis (so the sequence length may change between runs), with the input projections X*W^T computed for all
// steps before the loop.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {

/// What a cell sees at one time step of one direction. Tensors are [batch, hidden].
class RecurrentStep {
 public:
  virtual ~RecurrentStep() = default;
  /// X_t * W_g^T + Wb_g (+ Rb_g unless the op keeps gate g's recurrence bias separate).
  virtual ITensor* x(int32_t gate) const = 0;
  /// Previous hidden state H_{t-1}.
  virtual ITensor* h() const = 0;
  /// Previous cell state C_{t-1} (LSTM only).
  virtual ITensor* c() const = 0;
  /// v * R_g^T.
  virtual Result<ITensor*> timesR(ITensor* v, int32_t gate) = 0;
  /// The recurrence bias Rb_g as [1, hidden], or nullptr when B is omitted.
  virtual ITensor* rb(int32_t gate) const = 0;
  /// Peephole weights P_k as [1, hidden] (k: 0 input, 1 output, 2 forget), or nullptr when P is omitted.
  virtual ITensor* p(int32_t k) const = 0;
  /// The direction's activation `k` (0: f, 1: g, 2: h) of `v`, after clipping to the clip attribute.
  virtual Result<ITensor*> act(int32_t k, ITensor* v) = 0;
  virtual Result<ITensor*> add(ITensor* a, ITensor* b) = 0;
  virtual Result<ITensor*> sub(ITensor* a, ITensor* b) = 0;
  virtual Result<ITensor*> mul(ITensor* a, ITensor* b) = 0;
  /// 1 - v.
  virtual Result<ITensor*> oneMinus(ITensor* v) = 0;
};

/// The next states a cell computes (c: LSTM only).
struct CellState {
  ITensor* h = nullptr;
  ITensor* c = nullptr;
};

/// One recurrent op's shape of things.
struct RecurrentOp {
  int32_t gates = 1;                            ///< Gates stacked in W, R and B (RNN 1, GRU 3, LSTM 4).
  std::vector<std::string> defaultActivations;  ///< Per direction (RNN: Tanh; GRU: Sigmoid, Tanh; ...).
  bool hasCell = false;                         ///< LSTM: initial_c (input 6), P (input 7), Y_c (output 2).
  int32_t separateRbGate = -1;                  ///< Gate whose Rb stays out of x() (GRU linear_before_reset).
  std::function<Result<CellState>(RecurrentStep&)> cell;
};

/// Imports an RNN/GRU/LSTM node with the cell of `op`.
Status importRecurrent(ImportContext& ctx, ::onnx::NodeProto const& node, RecurrentOp const& op);

}  // namespace kiln::onnx
