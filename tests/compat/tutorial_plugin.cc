// The tutorial-style plugin of tutorial_plugin.h: TensorRT-style code, only the include path points at Kiln.
#include "tutorial_plugin.h"

#include <NvInferPlugin.h>

#include <cstring>

using namespace nvinfer1;
using nvinfer1::plugin::TutorialClipPlugin;
using nvinfer1::plugin::TutorialClipPluginCreator;

namespace {
char const* const kCLIP_PLUGIN_VERSION{"1"};
char const* const kCLIP_PLUGIN_NAME{"TutorialClipPlugin"};

template <typename T>
void writeToBuffer(char*& buffer, T const& val) {
  std::memcpy(buffer, &val, sizeof(T));
  buffer += sizeof(T);
}

template <typename T>
T readFromBuffer(char const*& buffer) {
  T val;
  std::memcpy(&val, buffer, sizeof(T));
  buffer += sizeof(T);
  return val;
}
}  // namespace

PluginFieldCollection TutorialClipPluginCreator::mFC{};
std::vector<PluginField> TutorialClipPluginCreator::mPluginAttributes;

REGISTER_TENSORRT_PLUGIN(TutorialClipPluginCreator);

TutorialClipPlugin::TutorialClipPlugin(std::string const& name, float clipMin, float clipMax)
    : mLayerName(name), mClipMin(clipMin), mClipMax(clipMax) {}

TutorialClipPlugin::TutorialClipPlugin(std::string const& name, void const* data, size_t length) : mLayerName(name) {
  char const* d = static_cast<char const*>(data);
  char const* a = d;
  mClipMin = readFromBuffer<float>(d);
  mClipMax = readFromBuffer<float>(d);
  (void)a;
  (void)length;
}

char const* TutorialClipPlugin::getPluginType() const noexcept { return kCLIP_PLUGIN_NAME; }
char const* TutorialClipPlugin::getPluginVersion() const noexcept { return kCLIP_PLUGIN_VERSION; }
int32_t TutorialClipPlugin::getNbOutputs() const noexcept { return 1; }

DimsExprs TutorialClipPlugin::getOutputDimensions(int32_t outputIndex, DimsExprs const* inputs, int32_t nbInputs,
                                                  IExprBuilder& exprBuilder) noexcept {
  // Same shape as the input, written out through the expression builder as tutorials show.
  DimsExprs output(inputs[0]);
  output.d[0] = exprBuilder.operation(DimensionOperation::kPROD, *inputs[0].d[0], *exprBuilder.constant(1));
  return output;
}

int32_t TutorialClipPlugin::initialize() noexcept { return 0; }
void TutorialClipPlugin::terminate() noexcept {}

size_t TutorialClipPlugin::getWorkspaceSize(PluginTensorDesc const* inputs, int32_t nbInputs,
                                            PluginTensorDesc const* outputs, int32_t nbOutputs) const noexcept {
  return 0;
}

int32_t TutorialClipPlugin::enqueue(PluginTensorDesc const* inputDesc, PluginTensorDesc const* outputDesc,
                                    void const* const* inputs, void* const* outputs, void* workspace,
                                    cudaStream_t stream) noexcept {
  int64_t volume = 1;
  for (int32_t i = 0; i < inputDesc[0].dims.nbDims; ++i) volume *= inputDesc[0].dims.d[i];
  clipKernelLauncher(static_cast<float const*>(inputs[0]), static_cast<float*>(outputs[0]), volume, mClipMin, mClipMax,
                     stream);
  return 0;
}

size_t TutorialClipPlugin::getSerializationSize() const noexcept { return 2 * sizeof(float); }

void TutorialClipPlugin::serialize(void* buffer) const noexcept {
  char* d = static_cast<char*>(buffer);
  writeToBuffer(d, mClipMin);
  writeToBuffer(d, mClipMax);
}

bool TutorialClipPlugin::supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                                   int32_t nbOutputs) noexcept {
  return inOut[pos].format == TensorFormat::kLINEAR && inOut[pos].type == DataType::kFLOAT;
}

void TutorialClipPlugin::configurePlugin(DynamicPluginTensorDesc const* in, int32_t nbInputs,
                                         DynamicPluginTensorDesc const* out, int32_t nbOutputs) noexcept {}

DataType TutorialClipPlugin::getOutputDataType(int32_t index, DataType const* inputTypes,
                                               int32_t nbInputs) const noexcept {
  return inputTypes[0];
}

void TutorialClipPlugin::destroy() noexcept { delete this; }

IPluginV2DynamicExt* TutorialClipPlugin::clone() const noexcept {
  auto* plugin = new TutorialClipPlugin(mLayerName, mClipMin, mClipMax);
  plugin->setPluginNamespace(mNamespace.c_str());
  return plugin;
}

void TutorialClipPlugin::setPluginNamespace(char const* libNamespace) noexcept { mNamespace = libNamespace; }
char const* TutorialClipPlugin::getPluginNamespace() const noexcept { return mNamespace.c_str(); }

TutorialClipPluginCreator::TutorialClipPluginCreator() {
  mPluginAttributes.clear();
  mPluginAttributes.emplace_back(PluginField("clipMin", nullptr, PluginFieldType::kFLOAT32, 1));
  mPluginAttributes.emplace_back(PluginField("clipMax", nullptr, PluginFieldType::kFLOAT32, 1));
  mFC.nbFields = static_cast<int32_t>(mPluginAttributes.size());
  mFC.fields = mPluginAttributes.data();
}

char const* TutorialClipPluginCreator::getPluginName() const noexcept { return kCLIP_PLUGIN_NAME; }
char const* TutorialClipPluginCreator::getPluginVersion() const noexcept { return kCLIP_PLUGIN_VERSION; }
PluginFieldCollection const* TutorialClipPluginCreator::getFieldNames() noexcept { return &mFC; }

IPluginV2* TutorialClipPluginCreator::createPlugin(char const* name, PluginFieldCollection const* fc) noexcept {
  float clipMin = 0.f, clipMax = 0.f;
  PluginField const* fields = fc->fields;
  for (int32_t i = 0; i < fc->nbFields; ++i) {
    char const* attrName = fields[i].name;
    if (!std::strcmp(attrName, "clipMin")) {
      clipMin = *static_cast<float const*>(fields[i].data);
    } else if (!std::strcmp(attrName, "clipMax")) {
      clipMax = *static_cast<float const*>(fields[i].data);
    }
  }
  return new TutorialClipPlugin(name, clipMin, clipMax);
}

IPluginV2* TutorialClipPluginCreator::deserializePlugin(char const* name, void const* serialData,
                                                        size_t serialLength) noexcept {
  return new TutorialClipPlugin(name, serialData, serialLength);
}

void TutorialClipPluginCreator::setPluginNamespace(char const* libNamespace) noexcept { mNamespace = libNamespace; }
char const* TutorialClipPluginCreator::getPluginNamespace() const noexcept { return mNamespace.c_str(); }
