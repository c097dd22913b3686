// GridAnchor_TRT and GridAnchorRect_TRT (version 1): the SSD (TensorFlow object detection API) anchor grids of
// every feature map at once. No inputs; one output per layer, [2, H * W * numPriors * 4, 1] fp32: channel 0 the
// boxes (x_min, y_min, x_max, y_max; cell centres at ((w + 0.5) / W, (h + 0.5) / H)), channel 1 the variances.
// Layer scale s_i = minSize + (maxSize - minSize) * i / (numLayers - 1) (minSize when there is one layer; TensorRT
// divides by zero there). Layer 0 has the first three aspect ratios with scales 0.1, s_0, s_0; every other layer
// all ratios at s_i plus ratio 1 at sqrt(s_i * s_{i+1}) (s_{numLayers} = 1). A box of scale s and ratio r is
// s * sqrt(r) wide and s / sqrt(r) high. Fields: minSize, maxSize (float, default 0.2 and 0.95), aspectRatios
// (float array, >= 3 values), featureMapShapes (int array: one size per layer, square maps; H, W pairs for
// GridAnchorRect_TRT), variance (4 floats, required), numLayers (int, default 6).
#include <cmath>

#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"
#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

struct GridAnchorParams {
  float minSize = 0.2f, maxSize = 0.95f;
  std::vector<float> aspectRatios;
  std::vector<int32_t> shapes;  // H, W per layer
  std::vector<float> variance;
  int32_t numLayers = 6;
};

std::string checkParams(GridAnchorParams const& p) {
  if (p.numLayers <= 0) return "numLayers must be positive, got " + std::to_string(p.numLayers);
  if (p.aspectRatios.size() < 3) {
    return "aspectRatios needs at least 3 values (the first layer uses the first three), got " +
           std::to_string(p.aspectRatios.size());
  }
  for (float r : p.aspectRatios) {
    if (!(r > 0.f)) return "aspect ratios must be positive";
  }
  if (p.variance.size() != 4) return "variance must hold 4 values, got " + std::to_string(p.variance.size());
  if (p.shapes.size() != static_cast<size_t>(p.numLayers) * 2) return "featureMapShapes must give every layer's size";
  for (int32_t s : p.shapes) {
    if (s <= 0) return "feature map sizes must be positive";
  }
  if (!(p.minSize > 0.f) || !(p.maxSize >= p.minSize)) return "need 0 < minSize <= maxSize";
  return "";
}

template <bool kRect>
class GridAnchor final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = kRect ? "GridAnchorRect_TRT" : "GridAnchor_TRT";
  static constexpr char const* kVersion = "1";
  explicit GridAnchor(GridAnchorParams p) : BuiltinPlugin(kName, kVersion), p_(std::move(p)) {}

  static std::vector<PluginField> fieldList() {
    return {fieldSpec("minSize", PluginFieldType::kFLOAT32), fieldSpec("maxSize", PluginFieldType::kFLOAT32),
            fieldSpec("aspectRatios", PluginFieldType::kFLOAT32, 0),
            fieldSpec("featureMapShapes", PluginFieldType::kINT32, 0),
            fieldSpec("variance", PluginFieldType::kFLOAT32, 4), fieldSpec("numLayers", PluginFieldType::kINT32)};
  }
  static GridAnchor* create(FieldReader& f) {
    GridAnchorParams p;
    std::vector<int32_t> shapes;
    f.getFloat("minSize", p.minSize);
    f.getFloat("maxSize", p.maxSize);
    f.getFloats("aspectRatios", p.aspectRatios);
    f.getInts("featureMapShapes", shapes);
    f.getFloats("variance", p.variance);
    f.getInt("numLayers", p.numLayers);
    size_t want = static_cast<size_t>(std::max(p.numLayers, 0)) * (kRect ? 2 : 1);
    f.require(shapes.size() == want, "featureMapShapes must hold " + std::to_string(want) + " values (" +
                                         (kRect ? "H, W per layer" : "one per layer") + "), got " +
                                         std::to_string(shapes.size()));
    if (f.ok()) {
      for (size_t i = 0; i < static_cast<size_t>(p.numLayers); ++i) {
        p.shapes.push_back(kRect ? shapes[2 * i] : shapes[i]);
        p.shapes.push_back(kRect ? shapes[2 * i + 1] : shapes[i]);
      }
      f.require(checkParams(p).empty(), checkParams(p));
    }
    return f.ok() ? new GridAnchor(std::move(p)) : nullptr;
  }
  static GridAnchor* deserialize(ByteReader& r) {
    GridAnchorParams p;
    bool ok = r.get(p.minSize) && r.get(p.maxSize) && r.getFloats(p.aspectRatios) && r.getInts(p.shapes) &&
              r.getFloats(p.variance) && r.get(p.numLayers);
    return ok && checkParams(p).empty() ? new GridAnchor(std::move(p)) : nullptr;
  }

  int64_t numPriors(int32_t layer) const {
    return layer == 0 ? 3 : static_cast<int64_t>(p_.aspectRatios.size()) + 1;
  }
  int32_t getNbOutputs() const noexcept override { return p_.numLayers; }
  IPluginV2DynamicExt* clone() const noexcept override { return this->finishClone(new (std::nothrow) GridAnchor(p_)); }
  DimsExprs getOutputDimensions(int32_t index, DimsExprs const*, int32_t nbInputs, IExprBuilder& b) noexcept override {
    DimsExprs out{};
    if (nbInputs != 0 || index < 0 || index >= p_.numLayers) {
      out.nbDims = -1;
      return out;
    }
    out.nbDims = 3;
    out.d[0] = b.constant(2);
    out.d[1] = b.constant(int64_t{p_.shapes[2 * index]} * p_.shapes[2 * index + 1] * numPriors(index) * 4);
    out.d[2] = b.constant(1);
    return out;
  }
  DataType getOutputDataType(int32_t, DataType const*, int32_t) const noexcept override { return DataType::kFLOAT; }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    return nbInputs == 0 && nbOutputs == p_.numLayers && pos >= 0 && pos < nbOutputs && linearFloat(inOut[pos], false);
  }
  bool hasCuda() const noexcept override { return KILN_PLUGINS_HAVE_CUDA != 0; }

 protected:
  void writeParams(ByteWriter& w) const override {
    w.put(p_.minSize);
    w.put(p_.maxSize);
    w.putFloats(p_.aspectRatios);
    w.putInts(p_.shapes);
    w.putFloats(p_.variance);
    w.put(p_.numLayers);
  }
  float scale(int32_t layer) const {
    if (layer >= p_.numLayers) return 1.f;
    if (p_.numLayers == 1) return p_.minSize;
    return p_.minSize + (p_.maxSize - p_.minSize) * static_cast<float>(layer) / static_cast<float>(p_.numLayers - 1);
  }
  std::vector<float> layerAnchors(int32_t layer) const {
    std::vector<float> scales, ratios;
    if (layer == 0) {
      scales = {0.1f, scale(0), scale(0)};
      ratios.assign(p_.aspectRatios.begin(), p_.aspectRatios.begin() + 3);
    } else {
      ratios = p_.aspectRatios;
      scales.assign(ratios.size(), scale(layer));
      ratios.push_back(1.f);
      scales.push_back(std::sqrt(scale(layer) * scale(layer + 1)));
    }
    int64_t h = p_.shapes[2 * layer], w = p_.shapes[2 * layer + 1], np = static_cast<int64_t>(ratios.size());
    int64_t total = h * w * np * 4;
    std::vector<float> v(static_cast<size_t>(total * 2));
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        float cy = (static_cast<float>(y) + 0.5f) / static_cast<float>(h);
        float cx = (static_cast<float>(x) + 0.5f) / static_cast<float>(w);
        for (int64_t a = 0; a < np; ++a) {
          float sq = std::sqrt(ratios[static_cast<size_t>(a)]);
          float bw = scales[static_cast<size_t>(a)] * sq, bh = scales[static_cast<size_t>(a)] / sq;
          size_t o = static_cast<size_t>(((y * w + x) * np + a) * 4);
          v[o] = cx - 0.5f * bw;
          v[o + 1] = cy - 0.5f * bh;
          v[o + 2] = cx + 0.5f * bw;
          v[o + 3] = cy + 0.5f * bh;
          for (size_t k = 0; k < 4; ++k) v[static_cast<size_t>(total) + o + k] = p_.variance[k];
        }
      }
    }
    return v;
  }
  std::string hostCompute(PluginTensorDesc const*, PluginTensorDesc const*, void const* const*, void* const* outputs,
                          void*) override {
    for (int32_t l = 0; l < p_.numLayers; ++l) {
      std::vector<float> v = layerAnchors(l);
      std::memcpy(outputs[l], v.data(), v.size() * sizeof(float));
    }
    return "";
  }
#if KILN_PLUGINS_HAVE_CUDA
  // The anchors depend on the fields only: computed once, kept on the device, copied on the stream.
  std::string cudaCompute(PluginTensorDesc const*, PluginTensorDesc const*, void const* const*, void* const* outputs,
                          void*, cudaStream_t stream) override {
    if (device_.empty()) device_ = std::vector<DeviceWeights>(static_cast<size_t>(p_.numLayers));
    for (int32_t l = 0; l < p_.numLayers; ++l) {
      std::vector<float> v = layerAnchors(l);
      std::string err;
      void const* d = device_[static_cast<size_t>(l)].get(v.data(), v.size() * sizeof(float), err);
      if (!d) return err;
      err = cuda::copyDeviceAsync(outputs[l], d, v.size() * sizeof(float), stream);
      if (!err.empty()) return err;
    }
    return "";
  }
#endif

 private:
  GridAnchorParams p_;
  std::vector<DeviceWeights> device_;
};

}  // namespace

std::unique_ptr<IPluginCreator> makeGridAnchorCreator() { return std::make_unique<BuiltinCreator<GridAnchor<false>>>(); }
std::unique_ptr<IPluginCreator> makeGridAnchorRectCreator() {
  return std::make_unique<BuiltinCreator<GridAnchor<true>>>();
}

}  // namespace kiln::plugin
