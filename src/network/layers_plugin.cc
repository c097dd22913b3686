// Plugin layers: addPluginV2 / addPluginV3 (factories declared in network/layer_factories.h) and IPluginV2Layer /
// IPluginV3Layer. The node holds the network's clone of the plugin (ir::PluginInstance); shapes and types come
// from the plugin through shape inference (ir/infer/plugin_infer.cc).
#include "network/layer_factories.h"
#include "network/layers.h"

namespace kiln::network {
namespace {

template <typename L>
L* reject(NetworkImpl& net, char const* api, LayerType type, std::string const& msg) {
  net.reporter().fail(invalidArgument(api, ": layer '", net.nextLayerName(type), "': ", msg));
  return nullptr;
}

class PluginV2Layer final : public LayerBase<IPluginV2Layer> {
 public:
  PluginV2Layer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kPLUGIN_V2, node) {}
  IPluginV2& getPlugin() noexcept override { return *node_->plugin->v2(); }

 protected:
  bool acceptsInput(int32_t index) const override { return index >= 0 && index < doGetNbInputs(); }
};

class PluginV3Layer final : public LayerBase<IPluginV3Layer> {
 public:
  PluginV3Layer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kPLUGIN_V3, node) {}
  IPluginV3& getPlugin() noexcept override { return *node_->plugin->v3(); }

 protected:
  bool acceptsInput(int32_t index) const override { return index >= 0 && index < doGetNbInputs(); }
};

// The graph values of `n` tensors; false (reported) for a null one or a foreign one.
bool collect(NetworkImpl& net, char const* api, LayerType type, ITensor* const* ts, int32_t n, char const* what,
             std::vector<ir::Value*>& out) {
  if (n < 0) return reject<void>(net, api, type, strCat("negative number of ", what, "s (", n, ")")), false;
  if (n > 0 && !ts) return reject<void>(net, api, type, strCat("no ", what, " array for ", n, " ", what, "s")), false;
  for (int32_t i = 0; i < n; ++i) {
    if (!ts[i]) return reject<void>(net, api, type, strCat(what, " ", i, " is null")), false;
    TensorImpl* t = net.own(*ts[i], api);
    if (!t) return false;
    out.push_back(t->value());
  }
  return true;
}

}  // namespace

IPluginV2Layer* addPluginV2Layer(NetworkImpl& net, ITensor* const* inputs, int32_t nbInputs, IPluginV2& plugin) {
  constexpr char const* kApi = "addPluginV2";
  constexpr LayerType kType = LayerType::kPLUGIN_V2;
  std::vector<ir::Value*> vals;
  if (!collect(net, kApi, kType, inputs, nbInputs, "input", vals)) return nullptr;
  auto* dyn = dynamic_cast<IPluginV2DynamicExt*>(&plugin);
  if (!dyn)
    return reject<IPluginV2Layer>(net, kApi, kType,
                                  strCat("plugin '", plugin.getPluginType() ? plugin.getPluginType() : "",
                                         "' is not an IPluginV2DynamicExt (the implicit-batch plugin generations "
                                         "IPluginV2, IPluginV2Ext and IPluginV2IOExt are not supported)"));
  IPluginV2DynamicExt* clone = dyn->clone();
  if (!clone) return reject<IPluginV2Layer>(net, kApi, kType, "the plugin's clone() returned null");
  std::string ns = plugin.getPluginNamespace() ? plugin.getPluginNamespace() : "";
  if (!ns.empty()) clone->setPluginNamespace(ns.c_str());
  auto inst = ir::PluginInstance::adoptV2(clone, net.nextLayerName(kType));
  if (!inst) return reject<IPluginV2Layer>(net, kApi, kType, inst.status().message());
  ir::Node* n = net.addLayerNode(ir::OpType::kPluginV2, kType, vals, (*inst)->nbOutputs());
  n->plugin = std::move(inst).value();
  return net.adoptLayer(std::make_unique<PluginV2Layer>(net, n));
}

IPluginV3Layer* addPluginV3Layer(NetworkImpl& net, ITensor* const* inputs, int32_t nbInputs, ITensor* const* shapeInputs,
                                 int32_t nbShapeInputs, IPluginV3& plugin) {
  constexpr char const* kApi = "addPluginV3";
  constexpr LayerType kType = LayerType::kPLUGIN_V3;
  std::vector<ir::Value*> vals;
  if (!collect(net, kApi, kType, inputs, nbInputs, "input", vals)) return nullptr;
  if (!collect(net, kApi, kType, shapeInputs, nbShapeInputs, "shape input", vals)) return nullptr;
  for (int32_t i = 0; i < nbShapeInputs; ++i) {
    DataType t = shapeInputs[i]->getType();
    if (t != DataType::kINT32 && t != DataType::kINT64)
      return reject<IPluginV3Layer>(net, kApi, kType,
                                    strCat("shape input ", i, " must be int32 or int64, not ", dataTypeName(t)));
  }
  IPluginV3* clone = plugin.clone();
  if (!clone) return reject<IPluginV3Layer>(net, kApi, kType, "the plugin's clone() returned null");
  auto inst = ir::PluginInstance::adoptV3(clone, net.nextLayerName(kType), TensorRTPhase::kBUILD);
  if (!inst) return reject<IPluginV3Layer>(net, kApi, kType, inst.status().message());
  ir::Node* n = net.addLayerNode(ir::OpType::kPluginV3, kType, vals, (*inst)->nbOutputs());
  n->attrs.setInt("num_shape_inputs", nbShapeInputs);
  n->plugin = std::move(inst).value();
  return net.adoptLayer(std::make_unique<PluginV3Layer>(net, n));
}

}  // namespace kiln::network
