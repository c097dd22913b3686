// The TensorRT compatibility headers (include/kiln/compat): a tutorial-style TensorRT plugin
// (tutorial_plugin.cc) compiles against them unchanged, registers through REGISTER_TENSORRT_PLUGIN, and works
// through nvinfer1 names; NvInferPlugin.h's initLibNvInferPlugins registers the built-ins.
#include <NvInfer.h>
#include <NvInferPlugin.h>
#include <NvInferRuntime.h>
#include <NvOnnxParser.h>
#include <gtest/gtest.h>

#include <vector>

#include "plugins/builtin/common/expr_builder.h"
#include "tutorial_plugin.h"

// The tutorial plugin's "kernel": the unit tests run on the host, so the launcher computes in place.
void clipKernelLauncher(float const* in, float* out, int64_t n, float lo, float hi, cudaStream_t) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] < lo ? lo : (in[i] > hi ? hi : in[i]);
}

namespace {

static_assert(NV_TENSORRT_MAJOR == 10 && NV_TENSORRT_MINOR == 16 && NV_TENSORRT_PATCH == 0);
static_assert(NV_TENSORRT_VERSION == 101600);
static_assert(std::is_same_v<nvinfer1::IPluginV2DynamicExt, kiln::IPluginV2DynamicExt>);
static_assert(std::is_same_v<nvinfer1::Dims, kiln::Dims>);
static_assert(std::is_same_v<nvonnxparser::IParser, kiln::onnx::IParser>);
static_assert(NV_ONNX_PARSER_MAJOR == 10);
// nvonnxparser::createParser(INetworkDefinition&, ILogger&) with TensorRT's signature.
static_assert(std::is_same_v<decltype(&nvonnxparser::createParser),
                             nvonnxparser::IParser* (*)(nvinfer1::INetworkDefinition&, nvinfer1::ILogger&) noexcept>);

TEST(CompatHeaders, TutorialPluginRegistersAndRuns) {
  nvinfer1::IPluginCreator* creator = getPluginRegistry()->getPluginCreator("TutorialClipPlugin", "1", "");
  ASSERT_NE(creator, nullptr) << "REGISTER_TENSORRT_PLUGIN did not register the creator";
  EXPECT_EQ(creator->getFieldNames()->nbFields, 2);
  float lo = -0.5f, hi = 0.5f;
  std::vector<nvinfer1::PluginField> f{{"clipMin", &lo, nvinfer1::PluginFieldType::kFLOAT32, 1},
                                       {"clipMax", &hi, nvinfer1::PluginFieldType::kFLOAT32, 1}};
  nvinfer1::PluginFieldCollection fc{static_cast<int32_t>(f.size()), f.data()};
  auto* plugin = dynamic_cast<nvinfer1::IPluginV2DynamicExt*>(creator->createPlugin("clip", &fc));
  ASSERT_NE(plugin, nullptr);
  nvinfer1::IPluginV2 const* base = plugin;
  EXPECT_EQ(base->getTensorRTVersion() >> 24, static_cast<int32_t>(nvinfer1::PluginVersion::kV2_DYNAMICEXT));

  kiln::plugin::ShapeExprBuilder b;
  nvinfer1::Dims in{};
  in.nbDims = 2;
  in.d[0] = 2;
  in.d[1] = 3;
  nvinfer1::DimsExprs e = b.symbols(0, 2);
  nvinfer1::Dims out = kiln::plugin::ShapeExprBuilder::evaluate(plugin->getOutputDimensions(0, &e, 1, b), {in});
  ASSERT_EQ(out.nbDims, 2);
  EXPECT_EQ(out.d[0], 2);
  EXPECT_EQ(out.d[1], 3);

  std::vector<char> bytes(plugin->getSerializationSize());
  plugin->serialize(bytes.data());
  nvinfer1::IPluginV2* copy = creator->deserializePlugin("clip2", bytes.data(), bytes.size());
  ASSERT_NE(copy, nullptr);
  auto* dyn = static_cast<nvinfer1::IPluginV2DynamicExt*>(copy);
  nvinfer1::PluginTensorDesc desc{};
  desc.dims = in;
  desc.type = nvinfer1::DataType::kFLOAT;
  desc.format = nvinfer1::TensorFormat::kLINEAR;
  nvinfer1::PluginTensorDesc io[2] = {desc, desc};
  EXPECT_TRUE(dyn->supportsFormatCombination(0, io, 1, 1));
  std::vector<float> x{-1.f, -0.25f, 0.f, 0.25f, 1.f, 2.f}, y(6);
  void const* ins[] = {x.data()};
  void* outs[] = {y.data()};
  EXPECT_EQ(dyn->enqueue(&desc, &desc, ins, outs, nullptr, nullptr), 0);
  EXPECT_EQ(y, (std::vector<float>{-0.5f, -0.25f, 0.f, 0.25f, 0.5f, 0.5f}));
  copy->destroy();
  plugin->destroy();
}

TEST(CompatHeaders, InitLibNvInferPluginsRegistersBuiltins) {
  ASSERT_TRUE(initLibNvInferPlugins(nullptr, "compat_test"));
  EXPECT_NE(getPluginRegistry()->getPluginCreator("EfficientNMS_TRT", "1", "compat_test"), nullptr);
  EXPECT_NE(getPluginRegistry()->getPluginCreator("BatchedNMSDynamic_TRT", "1", "compat_test"), nullptr);
  EXPECT_GT(getInferLibVersion(), -1);
}

}  // namespace
