// InstanceNormalization_TRT (versions 1 and 2, the same computation): per-(sample, channel) normalization of [N, C, H, W] or [N, C, D, H, W]
// with per-channel scale and bias, optionally followed by a leaky ReLU. Fields: epsilon (float, default 1e-5),
// scales and bias (float arrays of C values, required), relu (int, 0/1), alpha (float, the ReLU's negative
// slope). fp32 and fp16 (computed in fp32 on the host).
#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"
#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

template <int V>
class InstanceNorm final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = "InstanceNormalization_TRT";
  static constexpr char const* kVersion = V == 1 ? "1" : "2";
  InstanceNorm(float eps, std::vector<float> scales, std::vector<float> bias, int32_t relu, float alpha)
      : BuiltinPlugin(kName, kVersion), eps_(eps), scales_(std::move(scales)), bias_(std::move(bias)), relu_(relu),
        alpha_(alpha) {}

  static std::vector<PluginField> fieldList() {
    return {fieldSpec("epsilon", PluginFieldType::kFLOAT32), fieldSpec("scales", PluginFieldType::kFLOAT32, 0),
            fieldSpec("bias", PluginFieldType::kFLOAT32, 0), fieldSpec("relu", PluginFieldType::kINT32),
            fieldSpec("alpha", PluginFieldType::kFLOAT32)};
  }
  static std::string check(float eps, std::vector<float> const& s, std::vector<float> const& b) {
    if (!(eps >= 0.f)) return "epsilon must be >= 0, got " + std::to_string(eps);
    if (s.empty()) return "field 'scales' is required (one value per channel)";
    if (s.size() != b.size()) {
      return "'scales' has " + std::to_string(s.size()) + " values but 'bias' has " + std::to_string(b.size());
    }
    return "";
  }
  static InstanceNorm* create(FieldReader& f) {
    float eps = 1e-5f, alpha = 0.f;
    int32_t relu = 0;
    std::vector<float> s, b;
    f.getFloat("epsilon", eps);
    f.getFloats("scales", s);
    f.getFloats("bias", b);
    f.getInt("relu", relu);
    f.getFloat("alpha", alpha);
    if (f.ok()) f.require(check(eps, s, b).empty(), check(eps, s, b));
    f.require(relu == 0 || relu == 1, "relu must be 0 or 1, got " + std::to_string(relu));
    return f.ok() ? new InstanceNorm(eps, std::move(s), std::move(b), relu, alpha) : nullptr;
  }
  static InstanceNorm* deserialize(ByteReader& r) {
    float eps = 0, alpha = 0;
    int32_t relu = 0;
    std::vector<float> s, b;
    if (!r.get(eps) || !r.getFloats(s) || !r.getFloats(b) || !r.get(relu) || !r.get(alpha)) return nullptr;
    if (!check(eps, s, b).empty()) return nullptr;
    return new InstanceNorm(eps, std::move(s), std::move(b), relu, alpha);
  }

  int32_t getNbOutputs() const noexcept override { return 1; }
  IPluginV2DynamicExt* clone() const noexcept override {
    return this->finishClone(new (std::nothrow) InstanceNorm(eps_, scales_, bias_, relu_, alpha_));
  }
  DimsExprs getOutputDimensions(int32_t, DimsExprs const* inputs, int32_t, IExprBuilder&) noexcept override {
    return inputs[0];
  }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    if (nbInputs != 1 || nbOutputs != 1 || pos < 0 || pos > 1) return false;
    return linearFloat(inOut[pos], true) && inOut[pos].type == inOut[0].type;
  }
  bool hasCuda() const noexcept override { return KILN_PLUGINS_HAVE_CUDA != 0; }

 protected:
  void writeParams(ByteWriter& w) const override {
    w.put(eps_);
    w.putFloats(scales_);
    w.putFloats(bias_);
    w.put(relu_);
    w.put(alpha_);
  }
  std::string checkShape(Dims const& d) const {
    if (d.nbDims < 3 || d.nbDims > 5 || d.d[1] != static_cast<int64_t>(scales_.size())) {
      return "the input must be [N, C, H, W] or [N, C, D, H, W] with C = " + std::to_string(scales_.size()) +
             " (the number of scales), got " + dimsString(d);
    }
    return "";
  }
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const* out, void const* const* inputs,
                          void* const* outputs, void*) override {
    Dims const& d = in[0].dims;
    if (auto err = checkShape(d); !err.empty()) return err;
    int64_t n = volume(d);
    if (n == 0) return "";
    int64_t plane = n / (d.d[0] * d.d[1]);
    std::vector<float> x = loadFloats(in[0].type, inputs[0], n);
    segmentNormHost(x.data(), n / plane, plane, plane, d.d[1], scales_.data(), bias_.data(), eps_, relu_ != 0,
                    alpha_);
    storeFloats(out[0].type, x.data(), n, outputs[0]);
    return "";
  }
#if KILN_PLUGINS_HAVE_CUDA
  std::string cudaCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*, cudaStream_t stream) override {
    Dims const& d = in[0].dims;
    if (auto err = checkShape(d); !err.empty()) return err;
    int64_t n = volume(d);
    if (n == 0) return "";
    std::string err;
    void const* g = scalesDev_.get(scales_.data(), scales_.size() * sizeof(float), err);
    void const* b = g ? biasDev_.get(bias_.data(), bias_.size() * sizeof(float), err) : nullptr;
    if (!g || !b) return err;
    cuda::SegmentNormArgs a;
    a.in = inputs[0];
    a.gamma = g;
    a.beta = b;
    a.out = outputs[0];
    a.length = n / (d.d[0] * d.d[1]);
    a.segments = n / a.length;
    a.inner = a.length;
    a.channels = d.d[1];
    a.eps = eps_;
    a.relu = relu_ != 0;
    a.alpha = alpha_;
    a.half = in[0].type == DataType::kHALF;
    return cuda::launchSegmentNorm(a, stream);
  }
#endif

 private:
  float eps_;
  std::vector<float> scales_, bias_;
  int32_t relu_;
  float alpha_;
  DeviceWeights scalesDev_, biasDev_;
};

}  // namespace

std::unique_ptr<IPluginCreator> makeInstanceNormCreator() { return std::make_unique<BuiltinCreator<InstanceNorm<1>>>(); }
std::unique_ptr<IPluginCreator> makeInstanceNormV2Creator() {
  return std::make_unique<BuiltinCreator<InstanceNorm<2>>>();
}

}  // namespace kiln::plugin
