// Plugin nodes on the GPU: the plugin's own enqueue(..., stream) with device pointers, on the context's own plugin
// copy (backends/plugin_kernel.h). V2 plugins are attached with null cuDNN/cuBLAS handles (Kiln's handles are per
// host thread, a context may run on any thread). Outputs sized by size tensors are staged in stream-ordered device
// scratch (kCudaPluginOps).
#include "backends/cuda/cuda_util.h"
#include "backends/plugin_kernel.h"

namespace kiln::cuda {
namespace {

// Device memory for plugin outputs sized by size tensors (backends::PluginKernel::enqueueDataDependent).
Result<void*> pluginAllocate(size_t bytes, void* stream) {
  void* p = nullptr;
  KILN_CUDA_RETURN_IF_ERROR(cudaMallocAsync(&p, bytes, static_cast<cudaStream_t>(stream)),
                            "plugin output scratch allocation");
  return p;
}
void pluginRelease(void* p, void* stream) { (void)cudaFreeAsync(p, static_cast<cudaStream_t>(stream)); }
Status pluginCopy(void* dst, void const* src, size_t bytes, bool toHost, void* stream) {
  KILN_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, bytes, toHost ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice,
                                            static_cast<cudaStream_t>(stream)),
                            "plugin output copy");
  return Status::ok();
}
Status pluginSynchronize(void* stream) {
  KILN_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "waiting for a plugin's size tensor");
  return Status::ok();
}
constexpr backends::PluginDeviceOps kCudaPluginOps{pluginAllocate, pluginRelease, pluginCopy, pluginSynchronize};

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
    auto k = std::make_unique<backends::PluginKernel>(n.plugin, backends::pluginRegularInputs(n), false,
                                                      backends::pluginTactic(n));
    k->setStoredWorkspace(backends::pluginStoredWorkspace(n));
    k->setDeviceOps(&kCudaPluginOps);
    return std::unique_ptr<backends::Kernel>(std::move(k));
  };
  return t;
}

backends::Tactic makePluginV2Cuda() { return makePluginCuda(ir::OpType::kPluginV2, "pluginv2_cuda_enqueue"); }
backends::Tactic makePluginV3Cuda() { return makePluginCuda(ir::OpType::kPluginV3, "pluginv3_cuda_enqueue"); }

KILN_REGISTER_CUDA_TACTIC(makePluginV2Cuda);
KILN_REGISTER_CUDA_TACTIC(makePluginV3Cuda);

}  // namespace
}  // namespace kiln::cuda
