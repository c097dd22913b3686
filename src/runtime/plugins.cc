// Plugin layers of a loaded plan: each plan record is rebuilt by the creator the process-wide registry holds
// under its (type, version, namespace): V2 through deserializePlugin, V3 through createPlugin(kRUNTIME) with
// the fields the plan stores (the instance keeps the plan's shape expressions); a missing creator fails the load
// naming the plugin and what to load.
#include "runtime/plugins.h"

#include <cstring>

namespace kiln::runtime {
namespace {

bool creatorIs(IPluginCreatorInterface const& c, char const* kind) {
  char const* k = c.getInterfaceInfo().kind;
  return k && std::strcmp(k, kind) == 0;
}

Result<std::shared_ptr<ir::PluginInstance>> resolve(ir::Node const& n, ir::PluginRecord const& rec) {
  std::string what = strCat(n.describe(), ": ", ir::describePlugin(rec.type, rec.version, rec.ns));
  IPluginRegistry* reg = getPluginRegistry();
  IPluginCreatorInterface* c = reg ? reg->getCreator(rec.type.c_str(), rec.version.c_str(), rec.ns.c_str()) : nullptr;
  if (!c)
    return errorStatus(StatusCode::kNotFound, "the plan needs ", what, " (", n.describe(),
                       "), and no creator is registered for it: load the plugin library that provides it before "
                       "deserializing (IPluginRegistry::loadLibrary, or kilnexec --dynamicPlugins=LIBRARY / "
                       "--staticPlugins=LIBRARY)");
  if (rec.kind == ir::PluginKind::kV2) {
    if (!creatorIs(*c, "PLUGIN CREATOR_V1"))
      return invalidPlan(what, ": the plan holds a V2 plugin but the registered creator is not an IPluginCreator");
    auto* creator = static_cast<IPluginCreator*>(c);
    IPluginV2* p = creator->deserializePlugin(n.name.c_str(), rec.data.data(), rec.data.size());
    if (!p) return invalidPlan(what, ": the creator's deserializePlugin returned null for the plan's ", rec.data.size(), " bytes");
    auto* dyn = dynamic_cast<IPluginV2DynamicExt*>(p);
    if (!dyn) {
      p->destroy();
      return invalidPlan(what, ": deserializePlugin returned a plugin that is not an IPluginV2DynamicExt");
    }
    dyn->setPluginNamespace(rec.ns.c_str());
    return ir::PluginInstance::adoptV2(dyn, n.name);
  }
  if (!creatorIs(*c, "PLUGIN CREATOR_V3ONE"))
    return invalidPlan(what, ": the plan holds a V3 plugin but the registered creator is not an IPluginCreatorV3One");
  auto* creator = static_cast<IPluginCreatorV3One*>(c);
  KILN_ASSIGN_OR_RETURN(ir::OwnedFields fields, ir::withContext(ir::decodePluginFields(rec.data.data(), rec.data.size()), what));
  IPluginV3* p = creator->createPlugin(n.name.c_str(), fields.collection(), TensorRTPhase::kRUNTIME);
  if (!p) return invalidPlan(what, ": the creator's createPlugin(..., TensorRTPhase::kRUNTIME) returned null");
  return ir::PluginInstance::adoptV3(p, n.name, TensorRTPhase::kRUNTIME);
}

}  // namespace

Status resolvePlugins(ir::Graph& g) {
  for (auto const& np : g.nodes()) {
    ir::Node& n = *np;
    for (auto const& sub : n.subgraphs)
      if (sub) KILN_RETURN_IF_ERROR(resolvePlugins(*sub));
    if (!n.plugin || n.plugin->resolved()) continue;
    KILN_ASSIGN_OR_RETURN(ir::PluginRecord rec, n.plugin->record());
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<ir::PluginInstance> inst, resolve(n, rec));
    inst->setRecord(std::move(rec));
    inst->setShapeProgram(n.plugin->shapeProgram());  // the plan's expressions: inference never asks the plugin
    KILN_RETURN_IF_ERROR(inst->initialize().withContext(n.describe()));
    n.plugin = std::move(inst);
  }
  return Status::ok();
}

}  // namespace kiln::runtime
