// The checks kiln-plugin-check runs on one V2 dynamic plugin creator or one IPluginCreatorV3One: creation from
// fields, symbolic vs actual output shapes over random input shapes, every accepted format combination,
// serialize/deserialize (V3: fields -> createPlugin(kRUNTIME)) and clone round trips, every V3 tactic, repeated
// runs identical, and with the cuda backend CPU vs GPU agreement and CUDA-graph capture.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/kiln_plugin.h"
#include "samples.h"

namespace kiln::plugincheck {

/// What to check and how hard.
struct Options {
  bool cuda = false;   ///< also run the plugin's enqueue on the GPU (--backend=cuda)
  int32_t shapes = 6;  ///< random input shapes tried
  uint32_t seed = 1;   ///< random seed
};

/// The outcome for one creator.
struct Report {
  std::vector<std::string> failures;  ///< empty when every check passed
  std::vector<std::string> notes;     ///< what was exercised, and things not exercised
  int32_t combinations = 0;           ///< distinct format combinations run
  bool passed() const { return failures.empty(); }
};

/// Runs every check on `creator` with plugins built from `fields` and inputs from `sample`.
Report checkCreator(IPluginCreator& creator, PluginFieldCollection const* fields, Sample const& sample,
                    Options const& options);

/// Runs every check on a V3 creator: the plugin from `fields` (TensorRTPhase::kBUILD), inputs from `sample`; each
/// of its tactics (getValidTactics) runs on a context copy (attachToContext, setTactic, onShapeChange) and must
/// compute what the first does; getFieldsToSerialize() -> createPlugin(kRUNTIME) and clone() must compute the same
/// outputs and give the same fields. Outputs sized by size tensors (IExprBuilder::declareSizeTensor) are written
/// into buffers of their declared upper bound; the size read back must lie in [0, upper], the actual shape must fit
/// the upper-bound shape, and runs are compared on the size and the first `size` elements. Shape inputs are not
/// exercised.
Report checkCreatorV3(IPluginCreatorV3One& creator, PluginFieldCollection const* fields, Sample const& sample,
                      Options const& options);

}  // namespace kiln::plugincheck
