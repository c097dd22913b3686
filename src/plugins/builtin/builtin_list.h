// The list of built-in plugin creators, one factory per plugin file; kiln_plugins.cc registers them.
#pragma once

#include <memory>
#include <vector>

#include "kiln/kiln_plugin.h"

namespace kiln::plugin {

/// One new instance of every built-in creator (namespace ""), most used first.
std::vector<std::unique_ptr<IPluginCreator>> makeBuiltinCreators();

/// Factories, defined next to each plugin.
std::unique_ptr<IPluginCreator> makeEfficientNmsCreator();
std::unique_ptr<IPluginCreator> makeBatchedNmsDynamicCreator();
std::unique_ptr<IPluginCreator> makeBatchedNmsCreator();
std::unique_ptr<IPluginCreator> makeNmsCreator();
std::unique_ptr<IPluginCreator> makeNmsDynamicCreator();
std::unique_ptr<IPluginCreator> makeInstanceNormCreator();
std::unique_ptr<IPluginCreator> makeInstanceNormV2Creator();
std::unique_ptr<IPluginCreator> makeGroupNormCreator();
std::unique_ptr<IPluginCreator> makeSkipLayerNormCreator();
std::unique_ptr<IPluginCreator> makeGeluCreator();
std::unique_ptr<IPluginCreator> makeLReluCreator();
std::unique_ptr<IPluginCreator> makeClipCreator();
std::unique_ptr<IPluginCreator> makeScatterNdCreator();
std::unique_ptr<IPluginCreator> makeRoiAlignCreator();
std::unique_ptr<IPluginCreator> makeResizeNearestCreator();
std::unique_ptr<IPluginCreator> makePriorBoxCreator();
std::unique_ptr<IPluginCreator> makeGridAnchorCreator();
std::unique_ptr<IPluginCreator> makeGridAnchorRectCreator();
std::unique_ptr<IPluginCreator> makeNormalizeCreator();
std::unique_ptr<IPluginCreator> makeReorgCreator();
std::unique_ptr<IPluginCreator> makeReorgV1Creator();
std::unique_ptr<IPluginCreator> makeRegionCreator();
std::unique_ptr<IPluginCreator> makeDeformConvCreator();
std::unique_ptr<IPluginCreator> makeRproiCreator();

}  // namespace kiln::plugin
