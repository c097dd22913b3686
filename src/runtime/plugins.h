// Plugin layers of a loaded plan: their records resolved to plugin objects through the plugin registry.
#pragma once

#include "ir/graph.h"

namespace kiln::runtime {

/// Rebuilds every plugin node's plugin from its plan record with the registered creator and initializes it
/// (V2 initialize()). Fails (kNotFound) naming the plugin, its version and namespace, and saying to load its
/// library when no creator is registered; a creator that cannot rebuild the plugin fails naming it too.
Status resolvePlugins(ir::Graph& g);

}  // namespace kiln::runtime
