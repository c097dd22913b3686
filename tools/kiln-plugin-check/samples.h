// Sample fields and random inputs for kiln-plugin-check (and the built-in plugins' GPU test): for each built-in
// plugin, fields that create it and a generator of valid inputs of random shapes; for other plugins, inputs
// described on the command line (--inputs=).
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "plugins/builtin/common/testing.h"

namespace kiln::plugincheck {

using plugin::testing::FieldSet;
using plugin::testing::HostTensor;

/// How to exercise one plugin: the fields it is created from and a generator of valid inputs (fp32 / int32
/// tensors; the checker converts them to each accepted format combination).
struct Sample {
  std::function<void(FieldSet&)> fields;
  std::function<std::vector<HostTensor>(std::mt19937&)> inputs;
  float tolerance = 1e-4f;  ///< CPU vs GPU tolerance for fp32 outputs (relative + absolute)
};

/// The sample for built-in plugin `name`/`version`; false when there is none.
bool builtinSample(std::string const& name, std::string const& version, Sample& out);

/// A sample from a command-line input spec: comma-separated tensors "DxDxD[:f32|:i32]"; dims given as "a-b"
/// draw a random extent in [a, b] per shape (the same draw for equal ranges within one shape). False with
/// `error` set when the spec does not parse.
bool sampleFromSpec(std::string const& spec, Sample& out, std::string& error);

/// Parses "name=value" field settings: value "1.5f"/"1.5" (float), "3" (int32), "1,2,3" (int32 array),
/// "1.0,2.5" (float array), "s:text" (kCHAR). False with `error` when one does not parse.
bool addFieldSetting(std::string const& setting, FieldSet& fields, std::string& error);

}  // namespace kiln::plugincheck
