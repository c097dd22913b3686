// CustomSkipLayerNormPluginDynamic (version 1, BERT): y = LayerNorm(input + skip + bias) * gamma + beta over
// the hidden dimension of `ld` values ([S, B, ld, 1, 1] as TensorRT's BERT uses it, or any shape whose
// trailing dims hold ld values). Fields: ld (int; inferred from beta when absent), type_id (int: 0 fp32,
// 1 fp16; the tensors' type), beta and gamma (weights, ld values, required), bias (weights, optional).
#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"
#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

constexpr float kLayerNormEps = 1e-5f;  // fixed, as in TensorRT's BERT plugins

class SkipLayerNorm final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = "CustomSkipLayerNormPluginDynamic";
  static constexpr char const* kVersion = "1";
  SkipLayerNorm(int32_t ld, int32_t typeId, std::vector<float> beta, std::vector<float> gamma, std::vector<float> bias)
      : BuiltinPlugin(kName, kVersion), ld_(ld), typeId_(typeId), beta_(std::move(beta)), gamma_(std::move(gamma)),
        bias_(std::move(bias)) {}

  static std::vector<PluginField> fieldList() {
    return {fieldSpec("ld", PluginFieldType::kINT32), fieldSpec("type_id", PluginFieldType::kINT32),
            fieldSpec("beta", PluginFieldType::kFLOAT32, 0), fieldSpec("gamma", PluginFieldType::kFLOAT32, 0),
            fieldSpec("bias", PluginFieldType::kFLOAT32, 0)};
  }
  static std::string check(int32_t ld, int32_t typeId, std::vector<float> const& beta, std::vector<float> const& gamma,
                           std::vector<float> const& bias) {
    if (typeId != 0 && typeId != 1) {
      return "type_id " + std::to_string(typeId) + " is not supported (0: fp32, 1: fp16; int8 is not offered)";
    }
    if (ld <= 0) return "ld must be positive (or given through beta's length), got " + std::to_string(ld);
    auto n = static_cast<size_t>(ld);
    if (beta.size() != n || gamma.size() != n) {
      return "beta and gamma must hold ld = " + std::to_string(ld) + " values, got " + std::to_string(beta.size()) +
             " and " + std::to_string(gamma.size());
    }
    if (!bias.empty() && bias.size() != n) {
      return "bias must hold ld = " + std::to_string(ld) + " values, got " + std::to_string(bias.size());
    }
    return "";
  }
  static SkipLayerNorm* create(FieldReader& f) {
    int32_t ld = 0, typeId = 0;
    std::vector<float> beta, gamma, bias;
    bool haveLd = f.getInt("ld", ld);
    f.getInt("type_id", typeId);
    f.getFloats("beta", beta);
    f.getFloats("gamma", gamma);
    f.getFloats("bias", bias);
    if (!haveLd) ld = static_cast<int32_t>(beta.size());
    if (f.ok()) {
      std::string err = check(ld, typeId, beta, gamma, bias);
      f.require(err.empty(), err);
    }
    return f.ok() ? new SkipLayerNorm(ld, typeId, std::move(beta), std::move(gamma), std::move(bias)) : nullptr;
  }
  static SkipLayerNorm* deserialize(ByteReader& r) {
    int32_t ld = 0, typeId = 0;
    std::vector<float> beta, gamma, bias;
    if (!r.get(ld) || !r.get(typeId) || !r.getFloats(beta) || !r.getFloats(gamma) || !r.getFloats(bias)) return nullptr;
    if (!check(ld, typeId, beta, gamma, bias).empty()) return nullptr;
    return new SkipLayerNorm(ld, typeId, std::move(beta), std::move(gamma), std::move(bias));
  }

  int32_t getNbOutputs() const noexcept override { return 1; }
  IPluginV2DynamicExt* clone() const noexcept override {
    return finishClone(new (std::nothrow) SkipLayerNorm(ld_, typeId_, beta_, gamma_, bias_));
  }
  DimsExprs getOutputDimensions(int32_t, DimsExprs const* inputs, int32_t, IExprBuilder&) noexcept override {
    return inputs[0];
  }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    if (nbInputs != 2 || nbOutputs != 1 || pos < 0 || pos > 2) return false;
    DataType want = typeId_ == 1 ? DataType::kHALF : DataType::kFLOAT;
    return inOut[pos].format == TensorFormat::kLINEAR && inOut[pos].type == want;
  }
  bool hasCuda() const noexcept override { return KILN_PLUGINS_HAVE_CUDA != 0; }

 protected:
  void writeParams(ByteWriter& w) const override {
    w.put(ld_);
    w.put(typeId_);
    w.putFloats(beta_);
    w.putFloats(gamma_);
    w.putFloats(bias_);
  }
  std::string checkShape(PluginTensorDesc const* in) const {
    Dims const& d = in[0].dims;
    int64_t suffix = 1;
    bool found = false;
    for (int32_t i = d.nbDims - 1; i >= 1 && !found; --i) {
      suffix *= d.d[i];
      found = suffix == ld_;
    }
    if (!found) {
      return "the input's trailing dimensions must hold ld = " + std::to_string(ld_) + " values, got " + dimsString(d);
    }
    Dims const& s = in[1].dims;
    bool same = s.nbDims == d.nbDims;
    for (int32_t i = 0; same && i < d.nbDims; ++i) same = s.d[i] == d.d[i];
    if (!same) return "skip must have the input's shape " + dimsString(d) + ", got " + dimsString(s);
    return "";
  }
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const* out, void const* const* inputs,
                          void* const* outputs, void*) override {
    if (auto err = checkShape(in); !err.empty()) return err;
    int64_t n = volume(in[0].dims);
    std::vector<float> x = loadFloats(in[0].type, inputs[0], n);
    std::vector<float> s = loadFloats(in[1].type, inputs[1], n);
    for (int64_t i = 0; i < n; ++i) x[i] += s[i] + (bias_.empty() ? 0.f : bias_[static_cast<size_t>(i % ld_)]);
    if (n > 0) segmentNormHost(x.data(), n / ld_, ld_, 1, ld_, gamma_.data(), beta_.data(), kLayerNormEps, false, 0.f);
    storeFloats(out[0].type, x.data(), n, outputs[0]);
    return "";
  }
#if KILN_PLUGINS_HAVE_CUDA
  std::string cudaCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*, cudaStream_t stream) override {
    if (auto err = checkShape(in); !err.empty()) return err;
    int64_t n = volume(in[0].dims);
    if (n == 0) return "";
    std::string err;
    size_t bytes = static_cast<size_t>(ld_) * sizeof(float);
    void const* g = gammaDev_.get(gamma_.data(), bytes, err);
    void const* b = g ? betaDev_.get(beta_.data(), bytes, err) : nullptr;
    void const* pb = (b && !bias_.empty()) ? biasDev_.get(bias_.data(), bytes, err) : nullptr;
    if (!g || !b || (!bias_.empty() && !pb)) return err;
    cuda::SegmentNormArgs a;
    a.in = inputs[0];
    a.skip = inputs[1];
    a.preBias = static_cast<float const*>(pb);
    a.gamma = g;
    a.beta = b;
    a.out = outputs[0];
    a.length = ld_;
    a.segments = n / ld_;
    a.inner = 1;
    a.channels = ld_;
    a.eps = kLayerNormEps;
    a.half = in[0].type == DataType::kHALF;
    return cuda::launchSegmentNorm(a, stream);
  }
#endif

 private:
  int32_t ld_, typeId_;
  std::vector<float> beta_, gamma_, bias_;
  DeviceWeights gammaDev_, betaDev_, biasDev_;
};

}  // namespace

std::unique_ptr<IPluginCreator> makeSkipLayerNormCreator() {
  return std::make_unique<BuiltinCreator<SkipLayerNorm>>();
}

}  // namespace kiln::plugin
