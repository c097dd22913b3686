// The build: network -> verified, optimized IR with a tactic per node, planned memory -> plan bytes.
#pragma once

#include <array>
#include <map>
#include <vector>

#include "builder/builder_config.h"
#include "core/logging.h"
#include "core/memory.h"
#include "ir/graph.h"
#include "ir/shape_inference.h"
#include "plan/plan.h"

namespace kiln::builder {

struct BuildEnv {
  Reporter const* reporter = nullptr;
  MemoryBudget* budget = nullptr;
  int32_t maxThreads = 1;
};

struct NetworkView {
  ir::Graph const* graph = nullptr;
  std::string name;
  bool stronglyTyped = false;
  /// ITensor::setAllowedFormats of the network's inputs and outputs, by tensor name (absent: every format).
  std::map<std::string, TensorFormats> allowedFormats;
};

/// Replaces by Constants the values whose contents shape inference knows, identically, in every one of `states`
/// (per profile: min, opt, max; indexed by the renumbered graph's value ids): the shape arithmetic of a network
/// with dynamic dims built for fixed shapes. Assertions on such values are decided (a false one is an error
/// quoting its message). Returns the number of changes: when not 0, the graph needs renumbering and its dead
/// layers remain for dead-layer elimination.
Result<int> foldProfileConstants(ir::Graph& g, std::vector<std::array<ir::ShapeState, 3>> const& states,
                                 MemoryBudget* budget);

/// Builds the plan of a network. Errors name the layer or tensor at fault.
Result<plan::PlanInfo> buildPlanInfo(NetworkView const& network, BuilderConfigImpl const& config, BuildEnv const& env);

}  // namespace kiln::builder
