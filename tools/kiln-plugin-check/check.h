// The checks kiln-plugin-check runs on one V2 dynamic plugin creator: creation from fields, symbolic vs actual
// output shapes over random input shapes, every accepted format combination, serialize/deserialize and clone
// round trips, repeated runs identical, and with the cuda backend CPU vs GPU agreement and CUDA-graph capture.
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

}  // namespace kiln::plugincheck
