// Region_TRT (version 1, YOLOv2): per anchor of [N, num * (coords + 1 + classes), H, W], the logistic of the box
// x/y and of the objectness, the softmax over the class scores; other box coordinates pass through. Fields:
// num (int, anchors per cell), coords (int, box values per anchor, >= 2), classes (int), all required and
// positive. The YOLO9000 softmax tree (smTree) is not offered: a creator field smTree is refused. fp32.
#include <cmath>

#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"
#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

class Region final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = "Region_TRT";
  static constexpr char const* kVersion = "1";
  Region(int32_t num, int32_t coords, int32_t classes)
      : BuiltinPlugin(kName, kVersion), num_(num), coords_(coords), classes_(classes) {}

  static std::vector<PluginField> fieldList() {
    return {fieldSpec("num", PluginFieldType::kINT32), fieldSpec("coords", PluginFieldType::kINT32),
            fieldSpec("classes", PluginFieldType::kINT32), fieldSpec("smTree", PluginFieldType::kUNKNOWN, 0)};
  }
  static bool valid(int32_t num, int32_t coords, int32_t classes) { return num > 0 && coords >= 2 && classes > 0; }
  static Region* create(FieldReader& f) {
    int32_t num = 0, coords = 0, classes = 0;
    bool a = f.getInt("num", num), b = f.getInt("coords", coords), c = f.getInt("classes", classes);
    f.require(a && b && c, "fields 'num', 'coords' and 'classes' are required");
    f.require(valid(num, coords, classes), "num and classes must be positive and coords >= 2, got num " +
                                               std::to_string(num) + ", coords " + std::to_string(coords) +
                                               ", classes " + std::to_string(classes));
    std::vector<float> tree;
    f.require(!f.getFloats("smTree", tree) || tree.empty(), "the softmax tree (smTree) is not supported");
    return f.ok() ? new Region(num, coords, classes) : nullptr;
  }
  static Region* deserialize(ByteReader& r) {
    int32_t num = 0, coords = 0, classes = 0;
    return r.get(num) && r.get(coords) && r.get(classes) && valid(num, coords, classes) ? new Region(num, coords, classes)
                                                                                         : nullptr;
  }

  int32_t getNbOutputs() const noexcept override { return 1; }
  IPluginV2DynamicExt* clone() const noexcept override {
    return finishClone(new (std::nothrow) Region(num_, coords_, classes_));
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
    w.put(num_);
    w.put(coords_);
    w.put(classes_);
  }
  std::string checkShape(Dims const& d) const {
    int64_t per = coords_ + 1 + classes_;
    if (d.nbDims != 4 || d.d[1] != num_ * per) {
      return "the input must be [N, num * (coords + 1 + classes) = " + std::to_string(num_ * per) + ", H, W], got " +
             dimsString(d);
    }
    return "";
  }
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*) override {
    Dims const& d = in[0].dims;
    if (auto err = checkShape(d); !err.empty()) return err;
    int64_t hw = d.d[2] * d.d[3], per = coords_ + 1 + classes_;
    auto const* x = static_cast<float const*>(inputs[0]);
    auto* y = static_cast<float*>(outputs[0]);
    auto logistic = [](float v) { return 1.f / (1.f + std::exp(-v)); };
    for (int64_t b = 0; b < d.d[0]; ++b) {
      for (int64_t a = 0; a < num_; ++a) {
        int64_t base = (b * num_ + a) * per * hw;
        for (int64_t p = 0; p < hw; ++p) {
          for (int64_t k = 0; k < coords_; ++k) {
            float v = x[base + k * hw + p];
            y[base + k * hw + p] = k < 2 ? logistic(v) : v;
          }
          y[base + coords_ * hw + p] = logistic(x[base + coords_ * hw + p]);
          int64_t cls = base + (coords_ + 1) * hw + p;
          float m = x[cls];
          for (int64_t k = 1; k < classes_; ++k) m = std::max(m, x[cls + k * hw]);
          float sum = 0.f;
          for (int64_t k = 0; k < classes_; ++k) sum += std::exp(x[cls + k * hw] - m);
          for (int64_t k = 0; k < classes_; ++k) y[cls + k * hw] = std::exp(x[cls + k * hw] - m) / sum;
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
    return cuda::launchRegion(static_cast<float const*>(inputs[0]), static_cast<float*>(outputs[0]), d.d[0], num_, coords_,
                              classes_, d.d[2] * d.d[3], stream);
  }
#endif

 private:
  int32_t num_, coords_, classes_;
};

}  // namespace

std::unique_ptr<IPluginCreator> makeRegionCreator() { return std::make_unique<BuiltinCreator<Region>>(); }

}  // namespace kiln::plugin
