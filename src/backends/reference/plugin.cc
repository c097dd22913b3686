// Plugin nodes on the CPU: the plugin's kiln::IPluginHostExecution::enqueueHost on the context's own plugin copy
// (backends/plugin_kernel.h). Only plugins that offer host execution are supported.
#include "backends/plugin_kernel.h"

namespace kiln::backends {
namespace {

Tactic makePluginHost(ir::OpType op, char const* name) {
  Tactic t;
  t.name = name;
  t.op = op;
  t.device = DeviceType::kCPU;
  t.source = TacticSource::kREFERENCE;
  t.supports = [](ir::Node const& n, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
    return n.plugin && n.plugin->hostExecution() && pluginTypesMatch(n, in, out);
  };
  t.create = [](ir::Node const& n) -> Result<std::unique_ptr<Kernel>> {
    if (!n.plugin) return invalidGraph(n.describe(), " has no plugin object");
    if (!n.plugin->hostExecution())
      return unsupported(n.describe(), ": ", n.plugin->describe(),
                         " has no host execution (kiln::IPluginHostExecution): it cannot run on the CPU");
    auto k = std::make_unique<PluginKernel>(n.plugin, pluginRegularInputs(n), true, pluginTactic(n));
    k->setStoredWorkspace(pluginStoredWorkspace(n));
    return std::unique_ptr<Kernel>(std::move(k));
  };
  return t;
}

Tactic makePluginV2Host() { return makePluginHost(ir::OpType::kPluginV2, "pluginv2_reference_host"); }
Tactic makePluginV3Host() { return makePluginHost(ir::OpType::kPluginV3, "pluginv3_reference_host"); }

}  // namespace

KILN_REGISTER_TACTIC(makePluginV2Host);
KILN_REGISTER_TACTIC(makePluginV3Host);

}  // namespace kiln::backends
