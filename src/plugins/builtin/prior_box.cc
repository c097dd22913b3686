// PriorBox_TRT (version 1): SSD prior (anchor) boxes for one feature map. Inputs: the feature map [N, C, H, W]
// and the image [N, C', imgH, imgW] (only their shapes are read). Output [2, H * W * numPriors * 4, 1] fp32:
// channel 0 the boxes (x_min, y_min, x_max, y_max, scaled to [0, 1]), channel 1 the variances repeated.
// Per cell, per minSize: the min-size square, then (with maxSize) the sqrt(min * max) square, then one box per
// aspect ratio other than 1 (with flip also 1 / ratio): numPriors = numMinSize * (1 + ratios) + numMaxSize.
// Fields: minSize (float array, required), maxSize (float array, empty or as long as minSize), aspectRatios
// (float array), flip (int, default 1), clip (int, default 0), variance (4 floats, default 0.1, 0.1, 0.2, 0.2),
// imgH / imgW (int, 0: the image input's), stepH / stepW (float, 0: img / feature), offset (float, default 0.5).
#include <cmath>

#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"
#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

struct PriorBoxParams {
  std::vector<float> minSize, maxSize, aspectRatios;  // aspectRatios: the expanded list, 1 first
  int32_t flip = 1, clip = 0;
  std::vector<float> variance{0.1f, 0.1f, 0.2f, 0.2f};
  int32_t imgH = 0, imgW = 0;
  float stepH = 0.f, stepW = 0.f, offset = 0.5f;
};

std::string checkParams(PriorBoxParams const& p) {
  if (p.minSize.empty()) return "field 'minSize' is required (one or more sizes)";
  for (float s : p.minSize) {
    if (!(s > 0.f)) return "minSize values must be positive";
  }
  if (!p.maxSize.empty() && p.maxSize.size() != p.minSize.size()) {
    return "maxSize must be empty or hold as many values as minSize (" + std::to_string(p.minSize.size()) + ")";
  }
  for (size_t i = 0; i < p.maxSize.size(); ++i) {
    if (!(p.maxSize[i] > p.minSize[i])) return "each maxSize must exceed its minSize";
  }
  for (float r : p.aspectRatios) {
    if (!(r > 0.f)) return "aspect ratios must be positive";
  }
  if (p.variance.size() != 4) return "variance must hold 4 values, got " + std::to_string(p.variance.size());
  if (p.imgH < 0 || p.imgW < 0 || p.stepH < 0.f || p.stepW < 0.f) return "imgH/imgW/stepH/stepW must be >= 0";
  return "";
}

class PriorBox final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = "PriorBox_TRT";
  static constexpr char const* kVersion = "1";
  explicit PriorBox(PriorBoxParams p) : BuiltinPlugin(kName, kVersion), p_(std::move(p)) {}

  static std::vector<PluginField> fieldList() {
    return {fieldSpec("minSize", PluginFieldType::kFLOAT32, 0), fieldSpec("maxSize", PluginFieldType::kFLOAT32, 0),
            fieldSpec("aspectRatios", PluginFieldType::kFLOAT32, 0), fieldSpec("flip", PluginFieldType::kINT32),
            fieldSpec("clip", PluginFieldType::kINT32), fieldSpec("variance", PluginFieldType::kFLOAT32, 4),
            fieldSpec("imgH", PluginFieldType::kINT32), fieldSpec("imgW", PluginFieldType::kINT32),
            fieldSpec("stepH", PluginFieldType::kFLOAT32), fieldSpec("stepW", PluginFieldType::kFLOAT32),
            fieldSpec("offset", PluginFieldType::kFLOAT32)};
  }
  static PriorBox* create(FieldReader& f) {
    PriorBoxParams p;
    std::vector<float> ratios;
    f.getFloats("minSize", p.minSize);
    f.getFloats("maxSize", p.maxSize);
    f.getFloats("aspectRatios", ratios);
    f.getInt("flip", p.flip);
    f.getInt("clip", p.clip);
    f.getFloats("variance", p.variance);
    f.getInt("imgH", p.imgH);
    f.getInt("imgW", p.imgW);
    f.getFloat("stepH", p.stepH);
    f.getFloat("stepW", p.stepW);
    f.getFloat("offset", p.offset);
    // The ratios used: 1, then each distinct given ratio (and its inverse with flip).
    p.aspectRatios = {1.f};
    for (float r : ratios) {
      bool seen = false;
      for (float q : p.aspectRatios) seen = seen || std::fabs(q - r) < 1e-6f;
      if (seen) continue;
      p.aspectRatios.push_back(r);
      if (p.flip && r > 0.f) p.aspectRatios.push_back(1.f / r);
    }
    if (f.ok()) f.require(checkParams(p).empty(), checkParams(p));
    return f.ok() ? new PriorBox(std::move(p)) : nullptr;
  }
  static PriorBox* deserialize(ByteReader& r) {
    PriorBoxParams p;
    bool ok = r.getFloats(p.minSize) && r.getFloats(p.maxSize) && r.getFloats(p.aspectRatios) && r.get(p.flip) &&
              r.get(p.clip) && r.getFloats(p.variance) && r.get(p.imgH) && r.get(p.imgW) && r.get(p.stepH) &&
              r.get(p.stepW) && r.get(p.offset);
    return ok && checkParams(p).empty() && !p.aspectRatios.empty() ? new PriorBox(std::move(p)) : nullptr;
  }

  int64_t numPriors() const {
    return static_cast<int64_t>(p_.minSize.size() * p_.aspectRatios.size() + p_.maxSize.size());
  }
  int32_t getNbOutputs() const noexcept override { return 1; }
  IPluginV2DynamicExt* clone() const noexcept override { return finishClone(new (std::nothrow) PriorBox(p_)); }
  DimsExprs getOutputDimensions(int32_t, DimsExprs const* inputs, int32_t nbInputs, IExprBuilder& b) noexcept override {
    DimsExprs out{};
    if (nbInputs != 2 || inputs[0].nbDims != 4) {
      out.nbDims = -1;
      return out;
    }
    out.nbDims = 3;
    out.d[0] = b.constant(2);
    out.d[1] = b.operation(DimensionOperation::kPROD, *b.operation(DimensionOperation::kPROD, *inputs[0].d[2], *inputs[0].d[3]),
                           *b.constant(numPriors() * 4));
    out.d[2] = b.constant(1);
    return out;
  }
  DataType getOutputDataType(int32_t, DataType const*, int32_t) const noexcept override { return DataType::kFLOAT; }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    if (nbInputs != 2 || nbOutputs != 1 || pos < 0 || pos > 2) return false;
    if (pos < 2) return inOut[pos].format == TensorFormat::kLINEAR && isHostFloat(inOut[pos].type);  // shapes only
    return linearFloat(inOut[pos], false);
  }
  bool hasCuda() const noexcept override { return KILN_PLUGINS_HAVE_CUDA != 0; }

 protected:
  void writeParams(ByteWriter& w) const override {
    w.putFloats(p_.minSize);
    w.putFloats(p_.maxSize);
    w.putFloats(p_.aspectRatios);
    w.put(p_.flip);
    w.put(p_.clip);
    w.putFloats(p_.variance);
    w.put(p_.imgH);
    w.put(p_.imgW);
    w.put(p_.stepH);
    w.put(p_.stepW);
    w.put(p_.offset);
  }
  // The generated priors (channel 0 then channel 1) for the input shapes.
  std::string generate(PluginTensorDesc const* in, std::vector<float>& outv) const {
    Dims const& f = in[0].dims;
    Dims const& im = in[1].dims;
    if (f.nbDims != 4 || im.nbDims != 4) {
      return "inputs must be the feature map and the image, both [N, C, H, W]; got " + dimsString(f) + " and " +
             dimsString(im);
    }
    int64_t h = f.d[2], w = f.d[3];
    float imgH = p_.imgH ? static_cast<float>(p_.imgH) : static_cast<float>(im.d[2]);
    float imgW = p_.imgW ? static_cast<float>(p_.imgW) : static_cast<float>(im.d[3]);
    if (h <= 0 || w <= 0 || !(imgH > 0.f) || !(imgW > 0.f)) return "feature map and image sizes must be positive";
    float stepH = p_.stepH > 0.f ? p_.stepH : imgH / static_cast<float>(h);
    float stepW = p_.stepW > 0.f ? p_.stepW : imgW / static_cast<float>(w);
    int64_t np = numPriors(), total = h * w * np * 4;
    outv.assign(static_cast<size_t>(total * 2), 0.f);
    int64_t o = 0;
    auto put = [&](float cx, float cy, float bw, float bh) {
      float v[4] = {(cx - bw / 2.f) / imgW, (cy - bh / 2.f) / imgH, (cx + bw / 2.f) / imgW, (cy + bh / 2.f) / imgH};
      for (int k = 0; k < 4; ++k) {
        outv[static_cast<size_t>(o)] = p_.clip ? std::min(std::max(v[k], 0.f), 1.f) : v[k];
        outv[static_cast<size_t>(total + o)] = p_.variance[static_cast<size_t>(k)];
        ++o;
      }
    };
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        float cx = (static_cast<float>(x) + p_.offset) * stepW, cy = (static_cast<float>(y) + p_.offset) * stepH;
        for (size_t s = 0; s < p_.minSize.size(); ++s) {
          float mn = p_.minSize[s];
          put(cx, cy, mn, mn);
          if (!p_.maxSize.empty()) {
            float side = std::sqrt(mn * p_.maxSize[s]);
            put(cx, cy, side, side);
          }
          for (size_t r = 1; r < p_.aspectRatios.size(); ++r) {
            float sq = std::sqrt(p_.aspectRatios[r]);
            put(cx, cy, mn * sq, mn / sq);
          }
        }
      }
    }
    return "";
  }
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const*,
                          void* const* outputs, void*) override {
    std::vector<float> v;
    if (auto err = generate(in, v); !err.empty()) return err;
    std::memcpy(outputs[0], v.data(), v.size() * sizeof(float));
    return "";
  }
#if KILN_PLUGINS_HAVE_CUDA
  // The priors depend on shapes only: generated on the host once per shape, kept on the device, copied into
  // the output on the stream (capturable; the first enqueue for a shape uploads synchronously).
  std::string cudaCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const*,
                          void* const* outputs, void*, cudaStream_t stream) override {
    std::vector<float> v;
    if (auto err = generate(in, v); !err.empty()) return err;
    if (v != cached_) {
      cached_ = v;
      device_.reset();
    }
    std::string err;
    void const* d = device_.get(cached_.data(), cached_.size() * sizeof(float), err);
    if (!d) return err;
    return cuda::copyDeviceAsync(outputs[0], d, cached_.size() * sizeof(float), stream);
  }
#endif

 private:
  PriorBoxParams p_;
  std::vector<float> cached_;
  DeviceWeights device_;
};

}  // namespace

std::unique_ptr<IPluginCreator> makePriorBoxCreator() { return std::make_unique<BuiltinCreator<PriorBox>>(); }

}  // namespace kiln::plugin
