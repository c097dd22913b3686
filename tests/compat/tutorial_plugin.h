// A plugin written the way TensorRT tutorials teach (IPluginV2DynamicExt + IPluginCreator in namespace
// nvinfer1::plugin, REGISTER_TENSORRT_PLUGIN), compiled against Kiln through the compat headers with no change
// but the include path. Its kernel launcher is declared here and defined by whoever links it.
#pragma once

#include <NvInfer.h>

#include <cstdint>
#include <string>
#include <vector>

/// Launches the clip kernel (y = min(max(x, lo), hi)) on `stream`; defined outside the plugin.
void clipKernelLauncher(float const* in, float* out, int64_t n, float lo, float hi, cudaStream_t stream);

namespace nvinfer1 {
namespace plugin {

class TutorialClipPlugin : public IPluginV2DynamicExt {
 public:
  TutorialClipPlugin(std::string const& name, float clipMin, float clipMax);
  TutorialClipPlugin(std::string const& name, void const* data, size_t length);
  TutorialClipPlugin() = delete;

  // IPluginV2DynamicExt
  IPluginV2DynamicExt* clone() const noexcept override;
  DimsExprs getOutputDimensions(int32_t outputIndex, DimsExprs const* inputs, int32_t nbInputs,
                                IExprBuilder& exprBuilder) noexcept override;
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override;
  void configurePlugin(DynamicPluginTensorDesc const* in, int32_t nbInputs, DynamicPluginTensorDesc const* out,
                       int32_t nbOutputs) noexcept override;
  size_t getWorkspaceSize(PluginTensorDesc const* inputs, int32_t nbInputs, PluginTensorDesc const* outputs,
                          int32_t nbOutputs) const noexcept override;
  int32_t enqueue(PluginTensorDesc const* inputDesc, PluginTensorDesc const* outputDesc, void const* const* inputs,
                  void* const* outputs, void* workspace, cudaStream_t stream) noexcept override;

  // IPluginV2Ext
  DataType getOutputDataType(int32_t index, DataType const* inputTypes, int32_t nbInputs) const noexcept override;

  // IPluginV2
  char const* getPluginType() const noexcept override;
  char const* getPluginVersion() const noexcept override;
  int32_t getNbOutputs() const noexcept override;
  int32_t initialize() noexcept override;
  void terminate() noexcept override;
  size_t getSerializationSize() const noexcept override;
  void serialize(void* buffer) const noexcept override;
  void destroy() noexcept override;
  void setPluginNamespace(char const* pluginNamespace) noexcept override;
  char const* getPluginNamespace() const noexcept override;

 private:
  std::string mLayerName;
  std::string mNamespace;
  float mClipMin;
  float mClipMax;
};

class TutorialClipPluginCreator : public IPluginCreator {
 public:
  TutorialClipPluginCreator();
  char const* getPluginName() const noexcept override;
  char const* getPluginVersion() const noexcept override;
  PluginFieldCollection const* getFieldNames() noexcept override;
  IPluginV2* createPlugin(char const* name, PluginFieldCollection const* fc) noexcept override;
  IPluginV2* deserializePlugin(char const* name, void const* serialData, size_t serialLength) noexcept override;
  void setPluginNamespace(char const* pluginNamespace) noexcept override;
  char const* getPluginNamespace() const noexcept override;

 private:
  static PluginFieldCollection mFC;
  static std::vector<PluginField> mPluginAttributes;
  std::string mNamespace;
};

}  // namespace plugin
}  // namespace nvinfer1
