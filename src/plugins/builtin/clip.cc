// Clip_TRT (version 1): y = min(max(x, clipMin), clipMax), fp32. Fields: clipMin, clipMax (float; both
// required, clipMin <= clipMax).
#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"
#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

class Clip final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = "Clip_TRT";
  static constexpr char const* kVersion = "1";
  Clip(float lo, float hi) : BuiltinPlugin(kName, kVersion), lo_(lo), hi_(hi) {}

  static std::vector<PluginField> fieldList() {
    return {fieldSpec("clipMin", PluginFieldType::kFLOAT32), fieldSpec("clipMax", PluginFieldType::kFLOAT32)};
  }
  static Clip* create(FieldReader& f) {
    float lo = 0, hi = 0;
    bool haveLo = f.getFloat("clipMin", lo);
    bool haveHi = f.getFloat("clipMax", hi);
    f.require(haveLo && haveHi, "fields 'clipMin' and 'clipMax' are required");
    f.require(!(lo > hi), "clipMin (" + std::to_string(lo) + ") must not exceed clipMax (" + std::to_string(hi) + ")");
    return f.ok() ? new Clip(lo, hi) : nullptr;
  }
  static Clip* deserialize(ByteReader& r) {
    float lo = 0, hi = 0;
    return r.get(lo) && r.get(hi) && !(lo > hi) ? new Clip(lo, hi) : nullptr;
  }

  int32_t getNbOutputs() const noexcept override { return 1; }
  IPluginV2DynamicExt* clone() const noexcept override { return finishClone(new (std::nothrow) Clip(lo_, hi_)); }
  DimsExprs getOutputDimensions(int32_t, DimsExprs const* inputs, int32_t, IExprBuilder&) noexcept override {
    return inputs[0];
  }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    return nbInputs == 1 && nbOutputs == 1 && pos >= 0 && pos < 2 && linearFloat(inOut[pos], false);
  }
  bool hasCuda() const noexcept override { return KILN_PLUGINS_HAVE_CUDA != 0; }

 protected:
  void writeParams(ByteWriter& w) const override {
    w.put(lo_);
    w.put(hi_);
  }
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*) override {
    int64_t n = volume(in[0].dims);
    auto const* x = static_cast<float const*>(inputs[0]);
    auto* y = static_cast<float*>(outputs[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] < lo_ ? lo_ : (x[i] > hi_ ? hi_ : x[i]);
    return "";
  }
#if KILN_PLUGINS_HAVE_CUDA
  std::string cudaCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*, cudaStream_t stream) override {
    return cuda::launchActivation(cuda::Activation::kClip, lo_, hi_, nullptr, 0, inputs[0], outputs[0],
                                  volume(in[0].dims), false, stream);
  }
#endif

 private:
  float lo_, hi_;
};

}  // namespace

std::unique_ptr<IPluginCreator> makeClipCreator() { return std::make_unique<BuiltinCreator<Clip>>(); }

}  // namespace kiln::plugin
