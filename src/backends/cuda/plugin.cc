// Plugin nodes on the GPU: the plugin's own enqueue(..., stream) with device pointers, on the context's own plugin
// copy (backends/plugin_kernel.h). V2 plugins are attached with null cuDNN/cuBLAS handles (Kiln's handles are per
// host thread, a context may run on any thread).
#include "backends/cuda/cuda_util.h"
#include "backends/plugin_kernel.h"

namespace kiln::cuda {
namespace {

backends::Tactic makePluginCuda(ir::OpType op, char const* name) {
  backends::Tactic t;
  t.name = name;
  t.op = op;
  t.source = TacticSource::kKILN;
  t.supports = [](ir::Node const& n, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    return n.plugin != nullptr && n.plugin->resolved() && backends::pluginTypesMatch(n, in, out);
  };
  t.create = [](ir::Node const& n) -> Result<std::unique_ptr<backends::Kernel>> {
    if (!n.plugin) return invalidGraph(n.describe(), " has no plugin object");
    return std::unique_ptr<backends::Kernel>(new backends::PluginKernel(n.plugin, backends::pluginRegularInputs(n), false,
                                                                          backends::pluginTactic(n)));
  };
  return t;
}

backends::Tactic makePluginV2Cuda() { return makePluginCuda(ir::OpType::kPluginV2, "pluginv2_cuda_enqueue"); }
backends::Tactic makePluginV3Cuda() { return makePluginCuda(ir::OpType::kPluginV3, "pluginv3_cuda_enqueue"); }

KILN_REGISTER_CUDA_TACTIC(makePluginV2Cuda);
KILN_REGISTER_CUDA_TACTIC(makePluginV3Cuda);

}  // namespace
}  // namespace kiln::cuda
