// Reorg_TRT (versions 1 and 2): YOLOv2's space-to-depth reorganization with Darknet's index mapping:
// [N, C, H, W] -> [N, C * s * s, H / s, W / s]; output element at the flat position of input coordinates
// (n, c, h, w) reads input (n, c % C', h * s + (c / C') / s, w * s + (c / C') % s) of the input viewed as
// [N, C' = C / s^2, H * s, W * s]. Field: stride (int, default 2, >= 1; C divisible by s^2, H and W by s). fp32.
#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"
#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

template <int V>
class Reorg final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = "Reorg_TRT";
  static constexpr char const* kVersion = V == 1 ? "1" : "2";
  explicit Reorg(int32_t stride) : BuiltinPlugin(kName, kVersion), stride_(stride) {}

  static std::vector<PluginField> fieldList() { return {fieldSpec("stride", PluginFieldType::kINT32)}; }
  static Reorg* create(FieldReader& f) {
    int32_t stride = 2;
    f.getInt("stride", stride);
    f.require(stride >= 1, "stride must be >= 1, got " + std::to_string(stride));
    return f.ok() ? new Reorg(stride) : nullptr;
  }
  static Reorg* deserialize(ByteReader& r) {
    int32_t stride = 0;
    return r.get(stride) && stride >= 1 ? new Reorg(stride) : nullptr;
  }

  int32_t getNbOutputs() const noexcept override { return 1; }
  IPluginV2DynamicExt* clone() const noexcept override { return this->finishClone(new (std::nothrow) Reorg(stride_)); }
  DimsExprs getOutputDimensions(int32_t, DimsExprs const* inputs, int32_t, IExprBuilder& b) noexcept override {
    DimsExprs out = inputs[0];
    if (out.nbDims != 4) return out;
    auto const* s = b.constant(stride_);
    out.d[1] = b.operation(DimensionOperation::kPROD, *inputs[0].d[1], *b.constant(int64_t{stride_} * stride_));
    out.d[2] = b.operation(DimensionOperation::kFLOOR_DIV, *inputs[0].d[2], *s);
    out.d[3] = b.operation(DimensionOperation::kFLOOR_DIV, *inputs[0].d[3], *s);
    return out;
  }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    return nbInputs == 1 && nbOutputs == 1 && pos >= 0 && pos < 2 && linearFloat(inOut[pos], false);
  }
  bool hasCuda() const noexcept override { return KILN_PLUGINS_HAVE_CUDA != 0; }

 protected:
  void writeParams(ByteWriter& w) const override { w.put(stride_); }
  std::string checkShape(Dims const& d) const {
    int64_t s = stride_;
    if (d.nbDims != 4 || d.d[1] % (s * s) != 0 || d.d[2] % s != 0 || d.d[3] % s != 0) {
      return "the input must be [N, C, H, W] with C divisible by stride^2 = " + std::to_string(s * s) +
             " and H, W by stride " + std::to_string(s) + ", got " + dimsString(d);
    }
    return "";
  }
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*) override {
    Dims const& d = in[0].dims;
    if (auto err = checkShape(d); !err.empty()) return err;
    int64_t n = d.d[0], c = d.d[1], h = d.d[2], w = d.d[3], s = stride_, cOut = c / (s * s);
    auto const* x = static_cast<float const*>(inputs[0]);
    auto* y = static_cast<float*>(outputs[0]);
    int64_t o = 0;
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t k = 0; k < c; ++k) {
        int64_t offset = k / cOut, ic = k % cOut;
        for (int64_t r = 0; r < h; ++r) {
          int64_t ir = r * s + offset / s;
          for (int64_t q = 0; q < w; ++q, ++o) {
            int64_t iq = q * s + offset % s;
            y[o] = x[((b * cOut + ic) * h * s + ir) * w * s + iq];
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
    return cuda::launchReorg(static_cast<float const*>(inputs[0]), static_cast<float*>(outputs[0]), d.d[0], d.d[1],
                             d.d[2], d.d[3], stride_, stream);
  }
#endif

 private:
  int32_t stride_;
};

}  // namespace

std::unique_ptr<IPluginCreator> makeReorgCreator() { return std::make_unique<BuiltinCreator<Reorg<2>>>(); }
std::unique_ptr<IPluginCreator> makeReorgV1Creator() { return std::make_unique<BuiltinCreator<Reorg<1>>>(); }

}  // namespace kiln::plugin
