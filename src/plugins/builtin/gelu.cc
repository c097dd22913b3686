// CustomGeluPluginDynamic (version 1): GELU (tanh approximation) of x + bias, the bias (optional, per element of
// the last dimension) fused in. Fields: type_id (int: 0 fp32, 1 fp16; the tensors' type), bias (weights,
// optional). fp16 tensors are computed in fp32 on the host.
#include <cmath>

#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"
#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

class Gelu final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = "CustomGeluPluginDynamic";
  static constexpr char const* kVersion = "1";
  Gelu(int32_t typeId, std::vector<float> bias) : BuiltinPlugin(kName, kVersion), typeId_(typeId), bias_(std::move(bias)) {}

  static std::vector<PluginField> fieldList() {
    return {fieldSpec("type_id", PluginFieldType::kINT32), fieldSpec("bias", PluginFieldType::kFLOAT32, 0)};
  }
  static Gelu* create(FieldReader& f) {
    int32_t typeId = 0;
    std::vector<float> bias;
    f.getInt("type_id", typeId);
    f.getFloats("bias", bias);
    f.require(typeId == 0 || typeId == 1,
              "type_id " + std::to_string(typeId) + " is not supported (0: fp32, 1: fp16; int8 is not offered)");
    return f.ok() ? new Gelu(typeId, std::move(bias)) : nullptr;
  }
  static Gelu* deserialize(ByteReader& r) {
    int32_t typeId = 0;
    std::vector<float> bias;
    if (!r.get(typeId) || !r.getFloats(bias) || (typeId != 0 && typeId != 1)) return nullptr;
    return new Gelu(typeId, std::move(bias));
  }

  int32_t getNbOutputs() const noexcept override { return 1; }
  IPluginV2DynamicExt* clone() const noexcept override {
    return finishClone(new (std::nothrow) Gelu(typeId_, bias_));
  }
  DimsExprs getOutputDimensions(int32_t, DimsExprs const* inputs, int32_t, IExprBuilder&) noexcept override {
    return inputs[0];
  }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    if (nbInputs != 1 || nbOutputs != 1 || pos < 0 || pos > 1) return false;
    DataType want = typeId_ == 1 ? DataType::kHALF : DataType::kFLOAT;
    return inOut[pos].format == TensorFormat::kLINEAR && inOut[pos].type == want;
  }
  bool hasCuda() const noexcept override { return KILN_PLUGINS_HAVE_CUDA != 0; }

 protected:
  void writeParams(ByteWriter& w) const override {
    w.put(typeId_);
    w.putFloats(bias_);
  }
  std::string checkShape(Dims const& d) const {
    if (!bias_.empty() && (d.nbDims < 1 || d.d[d.nbDims - 1] != static_cast<int64_t>(bias_.size()))) {
      return "the input's last dimension must equal the bias length " + std::to_string(bias_.size()) + ", got " +
             dimsString(d);
    }
    return "";
  }
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const* out, void const* const* inputs,
                          void* const* outputs, void*) override {
    if (auto err = checkShape(in[0].dims); !err.empty()) return err;
    int64_t n = volume(in[0].dims);
    std::vector<float> x = loadFloats(in[0].type, inputs[0], n);
    size_t nb = bias_.size();
    for (int64_t i = 0; i < n; ++i) {
      float v = x[i] + (nb ? bias_[static_cast<size_t>(i) % nb] : 0.f);
      x[i] = 0.5f * v * (1.f + std::tanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
    }
    storeFloats(out[0].type, x.data(), n, outputs[0]);
    return "";
  }
#if KILN_PLUGINS_HAVE_CUDA
  std::string cudaCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*, cudaStream_t stream) override {
    if (auto err = checkShape(in[0].dims); !err.empty()) return err;
    std::string err;
    void const* bias = nullptr;
    if (!bias_.empty()) {
      bias = deviceBias_.get(bias_.data(), bias_.size() * sizeof(float), err);
      if (!bias) return err;
    }
    return cuda::launchActivation(cuda::Activation::kGeluTanh, 0.f, 0.f, static_cast<float const*>(bias),
                                  static_cast<int64_t>(bias_.size()), inputs[0], outputs[0], volume(in[0].dims),
                                  in[0].type == DataType::kHALF, stream);
  }
#endif

 private:
  int32_t typeId_;
  std::vector<float> bias_;
  DeviceWeights deviceBias_;
};

}  // namespace

std::unique_ptr<IPluginCreator> makeGeluCreator() { return std::make_unique<BuiltinCreator<Gelu>>(); }

}  // namespace kiln::plugin
