// Plugin nodes on the GPU: the plugin's own enqueue(..., stream) with device pointers, on the context's own plugin
// copy (backends/plugin_kernel.h). V2 copies are attached with cuDNN and cuBLAS handles of their execution context
// (as TensorRT's are; the builder's tactic sources say which), bound to the launch's stream before each enqueue.
// Outputs sized by size tensors are staged in stream-ordered device scratch (kCudaPluginOps).
#include <cublas_v2.h>
#include <cudnn.h>

#include "backends/cuda/cuda_libs.h"
#include "backends/cuda/cuda_util.h"
#include "backends/plugin_kernel.h"

namespace kiln::cuda {
namespace {

// One execution context's handles for one V2 plugin layer. Kiln's own per-thread handles (cuda_libs.h) cannot serve: a
// context may run on any thread, and what a plugin sets on its handles (math mode, pointer mode) must not leak into
// Kiln's tactics.
class CudaPluginHandles final : public backends::PluginHandles {
 public:
  ~CudaPluginHandles() override {
    if (cublas_) cublasDestroy(cublas_);
    if (cudnn_) cudnnDestroy(cudnn_);
  }
  static Result<std::unique_ptr<backends::PluginHandles>> make(bool cudnn, bool cublas) {
    auto h = std::make_unique<CudaPluginHandles>();
    if (cudnn) KILN_CUDNN_RETURN_IF_ERROR(cudnnCreate(&h->cudnn_), "creating the execution context's cuDNN handle");
    if (cublas)
      KILN_CUBLAS_RETURN_IF_ERROR(cublasCreate(&h->cublas_), "creating the execution context's cuBLAS handle");
    return std::unique_ptr<backends::PluginHandles>(std::move(h));
  }
  cudnnContext* cudnn() const override { return cudnn_; }
  cublasContext* cublas() const override { return cublas_; }
  Status setStream(void* stream) override {
    auto* s = static_cast<cudaStream_t>(stream);
    if (cudnn_) KILN_CUDNN_RETURN_IF_ERROR(cudnnSetStream(cudnn_, s), "cudnnSetStream on the context's cuDNN handle");
    if (cublas_)
      KILN_CUBLAS_RETURN_IF_ERROR(cublasSetStream(cublas_, s), "cublasSetStream on the context's cuBLAS handle");
    return Status::ok();
  }

 private:
  cudnnHandle_t cudnn_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
};

// Device memory for plugin outputs sized by size tensors (backends::PluginKernel::enqueueDataDependent).
// Through the backend's tracked allocations, so that the device fault hook and the resource accounting see them.
Result<void*> pluginAllocate(size_t bytes, void* stream) {
  return trackedMallocAsync(bytes, static_cast<cudaStream_t>(stream), false, "plugin output scratch allocation");
}
void pluginRelease(void* p, void* stream) { trackedFreeAsync(p, static_cast<cudaStream_t>(stream)); }
Status pluginCopy(void* dst, void const* src, size_t bytes, bool toHost, void* stream) {
  KILN_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, bytes, toHost ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice,
                                            static_cast<cudaStream_t>(stream)),
                            "plugin output copy");
  return Status::ok();
}
Status pluginSynchronize(void* stream) {
  KILN_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)),
                            "waiting for a plugin's size tensor");
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
    bool v2 = n.op == ir::OpType::kPluginV2;
    auto k = std::make_unique<backends::PluginKernel>(
        n.plugin, backends::pluginRegularInputs(n), false, backends::pluginTactic(n), &CudaPluginHandles::make,
        v2 && backends::pluginWantsCudnn(n), v2 && backends::pluginWantsCublas(n));
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
