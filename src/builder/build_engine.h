// The build: network -> verified, optimized IR with a tactic per node, planned memory -> plan bytes.
#pragma once

#include <map>

#include "builder/builder_config.h"
#include "core/logging.h"
#include "core/memory.h"
#include "ir/graph.h"
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

/// Builds the plan of a network. Errors name the layer or tensor at fault.
Result<plan::PlanInfo> buildPlanInfo(NetworkView const& network, BuilderConfigImpl const& config, BuildEnv const& env);

}  // namespace kiln::builder
