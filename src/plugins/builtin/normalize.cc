// Normalize_TRT (version 1, SSD): L2 normalization of [N, C, H, W] across channels at each position (or, with
// acrossSpatial, over all of C * H * W per sample), y = x / sqrt(sum x^2 + eps) * scale, scale weights[c] or
// weights[0] when channelShared. Fields: weights (float array: C values, or 1 when channelShared; required),
// nbWeights (int, must equal the weights' length when given), acrossSpatial (int, default 0), channelShared (int,
// default 0), eps (float, default 1e-10). fp32.
#include <cmath>

#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"
#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

class Normalize final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = "Normalize_TRT";
  static constexpr char const* kVersion = "1";
  Normalize(std::vector<float> weights, int32_t acrossSpatial, int32_t channelShared, float eps)
      : BuiltinPlugin(kName, kVersion), weights_(std::move(weights)), acrossSpatial_(acrossSpatial),
        channelShared_(channelShared), eps_(eps) {}

  static std::vector<PluginField> fieldList() {
    return {fieldSpec("weights", PluginFieldType::kFLOAT32, 0), fieldSpec("acrossSpatial", PluginFieldType::kINT32),
            fieldSpec("channelShared", PluginFieldType::kINT32), fieldSpec("nbWeights", PluginFieldType::kINT32),
            fieldSpec("eps", PluginFieldType::kFLOAT32)};
  }
  static std::string check(std::vector<float> const& w, int32_t shared, float eps) {
    if (w.empty()) return "field 'weights' is required";
    if (shared && w.size() != 1) return "with channelShared, weights must hold 1 value, got " + std::to_string(w.size());
    if (!(eps >= 0.f)) return "eps must be >= 0";
    return "";
  }
  static Normalize* create(FieldReader& f) {
    std::vector<float> w;
    int32_t across = 0, shared = 0, nb = -1;
    float eps = 1e-10f;
    f.getFloats("weights", w);
    f.getInt("acrossSpatial", across);
    f.getInt("channelShared", shared);
    f.getInt("nbWeights", nb);
    f.getFloat("eps", eps);
    f.require(nb < 0 || nb == static_cast<int32_t>(w.size()),
              "nbWeights (" + std::to_string(nb) + ") differs from the number of weights (" + std::to_string(w.size()) + ")");
    if (f.ok()) f.require(check(w, shared, eps).empty(), check(w, shared, eps));
    return f.ok() ? new Normalize(std::move(w), across, shared, eps) : nullptr;
  }
  static Normalize* deserialize(ByteReader& r) {
    std::vector<float> w;
    int32_t across = 0, shared = 0;
    float eps = 0;
    if (!r.getFloats(w) || !r.get(across) || !r.get(shared) || !r.get(eps) || !check(w, shared, eps).empty()) return nullptr;
    return new Normalize(std::move(w), across, shared, eps);
  }

  int32_t getNbOutputs() const noexcept override { return 1; }
  IPluginV2DynamicExt* clone() const noexcept override {
    return finishClone(new (std::nothrow) Normalize(weights_, acrossSpatial_, channelShared_, eps_));
  }
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
    w.putFloats(weights_);
    w.put(acrossSpatial_);
    w.put(channelShared_);
    w.put(eps_);
  }
  std::string checkShape(Dims const& d) const {
    if (d.nbDims != 4) return "the input must be [N, C, H, W], got " + dimsString(d);
    if (!channelShared_ && d.d[1] != static_cast<int64_t>(weights_.size())) {
      return "the input has " + std::to_string(d.d[1]) + " channels but there are " + std::to_string(weights_.size()) +
             " weights";
    }
    return "";
  }
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*) override {
    Dims const& d = in[0].dims;
    if (auto err = checkShape(d); !err.empty()) return err;
    int64_t n = d.d[0], c = d.d[1], hw = d.d[2] * d.d[3];
    auto const* x = static_cast<float const*>(inputs[0]);
    auto* y = static_cast<float*>(outputs[0]);
    for (int64_t b = 0; b < n; ++b) {
      float const* xs = x + b * c * hw;
      float* ys = y + b * c * hw;
      if (acrossSpatial_) {
        double sq = 0;
        for (int64_t i = 0; i < c * hw; ++i) sq += static_cast<double>(xs[i]) * xs[i];
        float inv = static_cast<float>(1.0 / std::sqrt(sq + eps_));
        for (int64_t i = 0; i < c * hw; ++i) ys[i] = xs[i] * inv * weights_[channelShared_ ? 0 : static_cast<size_t>(i / hw)];
      } else {
        for (int64_t p = 0; p < hw; ++p) {
          double sq = 0;
          for (int64_t ch = 0; ch < c; ++ch) sq += static_cast<double>(xs[ch * hw + p]) * xs[ch * hw + p];
          float inv = static_cast<float>(1.0 / std::sqrt(sq + eps_));
          for (int64_t ch = 0; ch < c; ++ch) {
            ys[ch * hw + p] = xs[ch * hw + p] * inv * weights_[channelShared_ ? 0 : static_cast<size_t>(ch)];
          }
        }
      }
    }
    return "";
  }
#if KILN_PLUGINS_HAVE_CUDA
  std::string cudaCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*, cudaStream_t stream) override {
    Dims const& d = in[0].dims;
    if (auto err = checkShape(d); !err.empty()) return err;
    std::string err;
    void const* w = weightsDev_.get(weights_.data(), weights_.size() * sizeof(float), err);
    if (!w) return err;
    return cuda::launchL2Normalize(static_cast<float const*>(inputs[0]), static_cast<float*>(outputs[0]),
                                   static_cast<float const*>(w), d.d[0], d.d[1], d.d[2] * d.d[3], acrossSpatial_ != 0,
                                   channelShared_ != 0, eps_, stream);
  }
#endif

 private:
  std::vector<float> weights_;
  int32_t acrossSpatial_, channelShared_;
  float eps_;
  DeviceWeights weightsDev_;
};

}  // namespace

std::unique_ptr<IPluginCreator> makeNormalizeCreator() { return std::make_unique<BuiltinCreator<Normalize>>(); }

}  // namespace kiln::plugin
