// Plugin layers in the build: each build gets its own plugin clones; types are negotiated with the plugin's
// supportsFormatCombination (casts inserted around it where it needs other types); plugins are configured
// with every optimization profile's bounds; a CPU build refuses plugins without host execution; V3 plugins' own
// tactics are timed (on the host or the GPU) and the fastest kept.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::backends {
class DeviceBackend;
}  // namespace kiln::backends

namespace kiln::builder {

class TimingCacheImpl;

/// Replaces every plugin node's instance by a clone of its own (the network's plugin objects stay as the user
/// configured them, and two builds never share one).
Status clonePlugins(ir::Graph& g);

/// For every plugin node (shapes and types inferred): picks kLINEAR types its supportsFormatCombination accepts,
/// input by input (the type the input has first, then float32, float16, bfloat16, int32, int64, int8, uint8,
/// bool, fp8), then output by output (the plugin's getOutputDataType first); inserts Casts where an input or
/// output type changes, so the rest of the graph sees the types it had; records the choice in the node's
/// in_types/out_types. On DeviceType::kCPU a plugin without kiln::IPluginHostExecution is an error naming it.
Status negotiatePlugins(ir::Graph& g, DeviceType device);

/// configurePlugin on every plugin node with each profile's min/opt/max shapes (states[profile][0 min, 1 opt,
/// 2 max]), profile by profile; outputs sized by size tensors get min = sizes 0, opt = the declared opt and max =
/// the declared upper bound (after capturePluginShapes).
Status configurePlugins(ir::Graph const& g, std::vector<std::array<ir::ShapeState, 3>> const& states);

/// V3 plugin nodes (subgraphs too): getOutputShapes captured as expression trees (PluginInstance::captureShapes)
/// over the build's input dims (-1 where profiles vary) and the values of constant shape inputs, checked against
/// the concrete inference at every top-level profile bound (an error naming the plugin when they differ), with size
/// tensors of int32/int64 type; kept on the instance (inference evaluates it from then on) and in the node
/// attribute plugin_shapes, which the plan stores so that the runtime never calls the build capability.
Status capturePluginShapes(ir::Graph& g, std::vector<std::array<ir::ShapeState, 3>> const& states);

/// V3 plugin nodes: the workspace the runtime gives them, as TensorRT sizes it: the largest getWorkspaceSize over
/// the profiles, each asked with its min/opt/max bounds (node attribute plugin_workspace).
Status sizePluginWorkspaces(ir::Graph& g, std::vector<std::array<ir::ShapeState, 3>> const& states);

/// On GPU builds, records the builder's tactic sources on every V2 plugin node (attribute tactic_sources): its
/// execution-context copies are attached with a cuDNN handle only where kCUDNN is on, a cuBLAS one only where
/// kCUBLAS is.
Status recordPluginTacticSources(ir::Graph& g, TacticSources sources);

/// How choosePluginTactics chooses.
struct PluginTacticOptions {
  int32_t optimizationLevel = 0;
  DeviceType device = DeviceType::kCPU;
  backends::DeviceBackend* gpu = nullptr;  ///< the device of kGPU builds (null: tactics are not timed)
  void* stream = nullptr;                  ///< the stream GPU timing runs on (null: the legacy default stream)
  int32_t iterations = 5;                  ///< timed GPU runs per tactic at most (after one warm-up)
  TimingCacheImpl* cache = nullptr;        ///< may be null
  std::string target;                      ///< the plan target, part of the cache key
};

/// V3 plugins that offer tactics (getNbTactics() > 0): at level 0 the first valid tactic is taken; above level 0
/// each is timed on a context copy (attachToContext, setTactic, onShapeChange) at the first profile's opt shapes
/// and the fastest kept: through enqueueHost on kCPU builds, through enqueue on the device (event-timed, median)
/// on kGPU builds. Outputs sized by size tensors get memory and descriptions of their declared upper bound (the
/// shape program at kUpper), and every run the node's stored workspace (plugin_workspace), as at run time. A tactic
/// whose run fails is an error naming the layer, the plugin and the tactic. The choice becomes the node's plugin_tactic
/// attribute, which each execution context's copy gets through setTactic(). A plugin whose getTimingCacheID() is not
/// null has its choice kept in `options.cache` under the target, the plugin's identity, its I/O types and opt shapes,
/// its tactics and that ID, and a later build with the same key takes it without timing. `log` (may be null) receives
/// the timings, the choice and cache hits.
Status choosePluginTactics(ir::Graph& g, std::vector<std::array<ir::ShapeState, 3>> const& states,
                           PluginTacticOptions const& options, std::vector<std::string>* log);

/// PluginTensorDesc of a tensor in the linear format (scale -1).
PluginTensorDesc linearDesc(DataType type, Dims const& dims);

}  // namespace kiln::builder
