// GroupNormalizationPlugin (version 1): normalization over groups of C / num_groups channels of [N, C, ...],
// then per-channel scale and bias taken from the second and third inputs ([C] each). Fields: eps (float,
// default 1e-5), num_groups (int, required, dividing C). fp32 and fp16 (all tensors one type; fp32 math).
#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"
#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

class GroupNorm final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = "GroupNormalizationPlugin";
  static constexpr char const* kVersion = "1";
  GroupNorm(float eps, int32_t groups) : BuiltinPlugin(kName, kVersion), eps_(eps), groups_(groups) {}

  static std::vector<PluginField> fieldList() {
    return {fieldSpec("eps", PluginFieldType::kFLOAT32), fieldSpec("num_groups", PluginFieldType::kINT32)};
  }
  static GroupNorm* create(FieldReader& f) {
    float eps = 1e-5f;
    int32_t groups = 0;
    f.getFloat("eps", eps);
    bool have = f.getInt("num_groups", groups);
    f.require(have, "field 'num_groups' is required");
    f.require(groups > 0, "num_groups must be positive, got " + std::to_string(groups));
    f.require(eps >= 0.f, "eps must be >= 0, got " + std::to_string(eps));
    return f.ok() ? new GroupNorm(eps, groups) : nullptr;
  }
  static GroupNorm* deserialize(ByteReader& r) {
    float eps = 0;
    int32_t groups = 0;
    return r.get(eps) && r.get(groups) && groups > 0 ? new GroupNorm(eps, groups) : nullptr;
  }

  int32_t getNbOutputs() const noexcept override { return 1; }
  IPluginV2DynamicExt* clone() const noexcept override {
    return finishClone(new (std::nothrow) GroupNorm(eps_, groups_));
  }
  DimsExprs getOutputDimensions(int32_t, DimsExprs const* inputs, int32_t, IExprBuilder&) noexcept override {
    return inputs[0];
  }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    if (nbInputs != 3 || nbOutputs != 1 || pos < 0 || pos > 3) return false;
    return linearFloat(inOut[pos], true) && inOut[pos].type == inOut[0].type;
  }
  bool hasCuda() const noexcept override { return KILN_PLUGINS_HAVE_CUDA != 0; }

 protected:
  void writeParams(ByteWriter& w) const override {
    w.put(eps_);
    w.put(groups_);
  }
  std::string checkShape(PluginTensorDesc const* in) const {
    Dims const& d = in[0].dims;
    if (d.nbDims < 2 || d.d[1] % groups_ != 0) {
      return "the input must be [N, C, ...] with C divisible by num_groups " + std::to_string(groups_) + ", got " +
             dimsString(d);
    }
    if (volume(in[1].dims) != d.d[1] || volume(in[2].dims) != d.d[1]) {
      return "scale and bias must hold C = " + std::to_string(d.d[1]) + " values, got " + dimsString(in[1].dims) +
             " and " + dimsString(in[2].dims);
    }
    return "";
  }
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const* out, void const* const* inputs,
                          void* const* outputs, void*) override {
    if (auto err = checkShape(in); !err.empty()) return err;
    Dims const& d = in[0].dims;
    int64_t n = volume(d);
    int64_t c = d.d[1];
    if (n == 0) return "";
    std::vector<float> x = loadFloats(in[0].type, inputs[0], n);
    std::vector<float> g = loadFloats(in[1].type, inputs[1], c);
    std::vector<float> b = loadFloats(in[2].type, inputs[2], c);
    int64_t inner = n / (d.d[0] * c);
    int64_t length = inner * (c / groups_);
    segmentNormHost(x.data(), n / length, length, inner, c, g.data(), b.data(), eps_, false, 0.f);
    storeFloats(out[0].type, x.data(), n, outputs[0]);
    return "";
  }
#if KILN_PLUGINS_HAVE_CUDA
  std::string cudaCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*, cudaStream_t stream) override {
    if (auto err = checkShape(in); !err.empty()) return err;
    Dims const& d = in[0].dims;
    int64_t n = volume(d);
    if (n == 0) return "";
    cuda::SegmentNormArgs a;
    a.in = inputs[0];
    a.gamma = inputs[1];
    a.beta = inputs[2];
    a.out = outputs[0];
    a.channels = d.d[1];
    a.inner = n / (d.d[0] * a.channels);
    a.length = a.inner * (a.channels / groups_);
    a.segments = n / a.length;
    a.eps = eps_;
    a.half = in[0].type == DataType::kHALF;
    a.affineHalf = a.half;
    return cuda::launchSegmentNorm(a, stream);
  }
#endif

 private:
  float eps_;
  int32_t groups_;
};

}  // namespace

std::unique_ptr<IPluginCreator> makeGroupNormCreator() { return std::make_unique<BuiltinCreator<GroupNorm>>(); }

}  // namespace kiln::plugin
