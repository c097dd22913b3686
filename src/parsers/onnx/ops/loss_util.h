// The negative log-likelihood loss shared by the NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// importers, composed from gather, select, element-wise and reduce layers.
#pragma once

#include <cstdint>
#include <string>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {

/// Attributes of an NLL-style loss node.
struct LossAttributes {
  std::string reduction = "mean";  ///< "none", "sum" or "mean".
  bool hasIgnoreIndex = false;
  int64_t ignoreIndex = 0;
};

/// Reads `reduction` (checked) and `ignore_index` of `node`.
Result<LossAttributes> lossAttributes(::onnx::NodeProto const& node);

/// ONNX NegativeLogLikelihoodLoss of `input` [N, C, d1..dk] (log-probabilities), integer `target` [N, d1..dk]
/// and optional `weight` [C] (nullptr: all ones). Targets equal to the ignore index contribute 0 and are left
/// out of the mean's denominator, which is the sum of the applied weights. Returns the loss tensor.
Result<ITensor*> negativeLogLikelihood(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* input,
                                       ITensor* target, ITensor* weight, LossAttributes const& attrs);

}  // namespace kiln::onnx
