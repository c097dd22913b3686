// LReLU_TRT (version 1): leaky ReLU, y = x >= 0 ? x : negSlope * x, fp32. Field: negSlope (float, default 0.01).
#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"
#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

class LRelu final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = "LReLU_TRT";
  static constexpr char const* kVersion = "1";
  explicit LRelu(float slope) : BuiltinPlugin(kName, kVersion), slope_(slope) {}

  static std::vector<PluginField> fieldList() { return {fieldSpec("negSlope", PluginFieldType::kFLOAT32)}; }
  static LRelu* create(FieldReader& f) {
    float slope = 0.01f;
    f.getFloat("negSlope", slope);
    return f.ok() ? new LRelu(slope) : nullptr;
  }
  static LRelu* deserialize(ByteReader& r) {
    float slope = 0;
    return r.get(slope) ? new LRelu(slope) : nullptr;
  }

  int32_t getNbOutputs() const noexcept override { return 1; }
  IPluginV2DynamicExt* clone() const noexcept override { return finishClone(new (std::nothrow) LRelu(slope_)); }
  DimsExprs getOutputDimensions(int32_t, DimsExprs const* inputs, int32_t, IExprBuilder&) noexcept override {
    return inputs[0];
  }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    return nbInputs == 1 && nbOutputs == 1 && pos >= 0 && pos < 2 && linearFloat(inOut[pos], false);
  }
  bool hasCuda() const noexcept override { return KILN_PLUGINS_HAVE_CUDA != 0; }

 protected:
  void writeParams(ByteWriter& w) const override { w.put(slope_); }
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*) override {
    int64_t n = volume(in[0].dims);
    auto const* x = static_cast<float const*>(inputs[0]);
    auto* y = static_cast<float*>(outputs[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] >= 0.f ? x[i] : slope_ * x[i];
    return "";
  }
#if KILN_PLUGINS_HAVE_CUDA
  std::string cudaCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*, cudaStream_t stream) override {
    return cuda::launchActivation(cuda::Activation::kLeakyRelu, slope_, 0.f, nullptr, 0, inputs[0], outputs[0],
                                  volume(in[0].dims), false, stream);
  }
#endif

 private:
  float slope_;
};

}  // namespace

std::unique_ptr<IPluginCreator> makeLReluCreator() { return std::make_unique<BuiltinCreator<LRelu>>(); }

}  // namespace kiln::plugin
