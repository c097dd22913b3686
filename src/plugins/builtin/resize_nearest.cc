// ResizeNearest_TRT (version 1): nearest-neighbour upsampling of the last two dimensions of [..., H, W] by
// `scale` (float field, > 0, required): output [..., floor(H * scale), floor(W * scale)], output (y, x) taken
// from input (min(floor(y / scale), H - 1), likewise x). fp32.
#include <algorithm>
#include <cmath>

#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"
#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

class ResizeNearest final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = "ResizeNearest_TRT";
  static constexpr char const* kVersion = "1";
  explicit ResizeNearest(float scale) : BuiltinPlugin(kName, kVersion), scale_(scale) {}

  static std::vector<PluginField> fieldList() { return {fieldSpec("scale", PluginFieldType::kFLOAT32)}; }
  static ResizeNearest* create(FieldReader& f) {
    float scale = 0;
    bool have = f.getFloat("scale", scale);
    f.require(have, "field 'scale' is required");
    f.require(scale > 0.f && std::isfinite(scale), "scale must be positive, got " + std::to_string(scale));
    return f.ok() ? new ResizeNearest(scale) : nullptr;
  }
  static ResizeNearest* deserialize(ByteReader& r) {
    float scale = 0;
    return r.get(scale) && scale > 0.f ? new ResizeNearest(scale) : nullptr;
  }

  int32_t getNbOutputs() const noexcept override { return 1; }
  IPluginV2DynamicExt* clone() const noexcept override { return finishClone(new (std::nothrow) ResizeNearest(scale_)); }
  DimsExprs getOutputDimensions(int32_t, DimsExprs const* inputs, int32_t, IExprBuilder& b) noexcept override {
    DimsExprs out = inputs[0];
    if (out.nbDims < 2) return out;
    // floor(d * scale) as an expression: exact for integral scales and for scale = p / 2^20 in general.
    constexpr int64_t kDen = 1 << 20;
    auto num = static_cast<int64_t>(std::llround(static_cast<double>(scale_) * kDen));
    for (int32_t i = out.nbDims - 2; i < out.nbDims; ++i) {
      out.d[i] = b.operation(DimensionOperation::kFLOOR_DIV,
                             *b.operation(DimensionOperation::kPROD, *inputs[0].d[i], *b.constant(num)),
                             *b.constant(kDen));
    }
    return out;
  }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    return nbInputs == 1 && nbOutputs == 1 && pos >= 0 && pos < 2 && linearFloat(inOut[pos], false);
  }
  bool hasCuda() const noexcept override { return KILN_PLUGINS_HAVE_CUDA != 0; }

 protected:
  void writeParams(ByteWriter& w) const override { w.put(scale_); }
  std::string checkShape(PluginTensorDesc const* in, PluginTensorDesc const* out) const {
    Dims const& d = in[0].dims;
    Dims const& o = out[0].dims;
    if (d.nbDims < 2 || o.nbDims != d.nbDims) return "the input must have rank >= 2, got " + dimsString(d);
    return "";
  }
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const* out, void const* const* inputs,
                          void* const* outputs, void*) override {
    if (auto err = checkShape(in, out); !err.empty()) return err;
    Dims const& d = in[0].dims;
    Dims const& o = out[0].dims;
    int64_t ih = d.d[d.nbDims - 2], iw = d.d[d.nbDims - 1], oh = o.d[o.nbDims - 2], ow = o.d[o.nbDims - 1];
    int64_t planes = (ih * iw != 0) ? volume(d) / (ih * iw) : 0;
    auto const* x = static_cast<float const*>(inputs[0]);
    auto* y = static_cast<float*>(outputs[0]);
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t r = 0; r < oh; ++r) {
        int64_t sr = std::min(static_cast<int64_t>(static_cast<float>(r) / scale_), ih - 1);
        for (int64_t c = 0; c < ow; ++c) {
          int64_t sc = std::min(static_cast<int64_t>(static_cast<float>(c) / scale_), iw - 1);
          y[(p * oh + r) * ow + c] = x[(p * ih + sr) * iw + sc];
        }
      }
    }
    return "";
  }
#if KILN_PLUGINS_HAVE_CUDA
  std::string cudaCompute(PluginTensorDesc const* in, PluginTensorDesc const* out, void const* const* inputs,
                          void* const* outputs, void*, cudaStream_t stream) override {
    if (auto err = checkShape(in, out); !err.empty()) return err;
    Dims const& d = in[0].dims;
    Dims const& o = out[0].dims;
    int64_t ih = d.d[d.nbDims - 2], iw = d.d[d.nbDims - 1];
    int64_t planes = (ih * iw != 0) ? volume(d) / (ih * iw) : 0;
    return cuda::launchResizeNearest(static_cast<float const*>(inputs[0]), static_cast<float*>(outputs[0]), planes,
                                     ih, iw, o.d[o.nbDims - 2], o.d[o.nbDims - 1], scale_, stream);
  }
#endif

 private:
  float scale_;
};

}  // namespace

std::unique_ptr<IPluginCreator> makeResizeNearestCreator() {
  return std::make_unique<BuiltinCreator<ResizeNearest>>();
}

}  // namespace kiln::plugin
