// EfficientNMS_TRT (version 1): batched multi-class NMS with an optional fused box decoder.
// Inputs: boxes [N, B, 4] or [N, B, C, 4], scores [N, B, C], optional anchors [1 or N, B, 4] (fp32 or fp16,
// one type). Outputs: num_detections [N, 1] int32, detection_boxes [N, M, 4] (corners), detection_scores [N, M],
// detection_classes [N, M] int32, M = max_output_boxes, zero-padded past num_detections.
// Fields: score_threshold (float, default 0.5; candidates need a score >= it, after the sigmoid when
// score_activation), iou_threshold (float, default 0.5; a box is suppressed by a kept box of its class whose
// IoU is >= it, as TensorRT's), max_output_boxes (int, default 100), background_class (int, default -1: none),
// score_activation (bool as int), class_agnostic (bool as int), box_coding (int: 0 corners, 1 center-size).
// No candidate limit (TensorRT's CUDA path considers the 4,096 best). The CUDA path (cuda/nms.cu) selects the
// same detections as the host path.
#include <algorithm>
#include <cmath>

#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/nms.h"
#include "plugins/builtin/common/plugin_common.h"
#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

struct EfficientNmsParams {
  float scoreThreshold = 0.5f;
  float iouThreshold = 0.5f;
  int32_t maxOutputBoxes = 100;
  int32_t backgroundClass = -1;
  int32_t scoreActivation = 0;
  int32_t classAgnostic = 0;
  int32_t boxCoding = 0;
};

class EfficientNms final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = "EfficientNMS_TRT";
  static constexpr char const* kVersion = "1";
  EfficientNms(EfficientNmsParams p, int32_t nbInputs) : BuiltinPlugin(kName, kVersion), p_(p), nbInputs_(nbInputs) {}

  static std::vector<PluginField> fieldList() {
    return {fieldSpec("score_threshold", PluginFieldType::kFLOAT32),
            fieldSpec("iou_threshold", PluginFieldType::kFLOAT32),
            fieldSpec("max_output_boxes", PluginFieldType::kINT32),
            fieldSpec("background_class", PluginFieldType::kINT32),
            fieldSpec("score_activation", PluginFieldType::kINT32),
            fieldSpec("class_agnostic", PluginFieldType::kINT32),
            fieldSpec("box_coding", PluginFieldType::kINT32)};
  }
  static std::string check(EfficientNmsParams const& p) {
    if (p.maxOutputBoxes <= 0) return "max_output_boxes must be positive, got " + std::to_string(p.maxOutputBoxes);
    if (!(p.iouThreshold >= 0.f && p.iouThreshold <= 1.f)) {
      return "iou_threshold must be in [0, 1], got " + std::to_string(p.iouThreshold);
    }
    if (std::isnan(p.scoreThreshold)) return "score_threshold is NaN";
    if (p.boxCoding != 0 && p.boxCoding != 1) {
      return "box_coding must be 0 (corners) or 1 (center-size), got " + std::to_string(p.boxCoding);
    }
    if (p.backgroundClass < -1) return "background_class must be >= -1, got " + std::to_string(p.backgroundClass);
    return "";
  }
  static EfficientNms* create(FieldReader& f) {
    EfficientNmsParams p;
    f.getFloat("score_threshold", p.scoreThreshold);
    f.getFloat("iou_threshold", p.iouThreshold);
    f.getInt("max_output_boxes", p.maxOutputBoxes);
    f.getInt("background_class", p.backgroundClass);
    f.getInt("score_activation", p.scoreActivation);
    f.getInt("class_agnostic", p.classAgnostic);
    f.getInt("box_coding", p.boxCoding);
    if (f.ok()) f.require(check(p).empty(), check(p));
    return f.ok() ? new EfficientNms(p, 2) : nullptr;
  }
  static EfficientNms* deserialize(ByteReader& r) {
    EfficientNmsParams p;
    if (!r.get(p.scoreThreshold) || !r.get(p.iouThreshold) || !r.get(p.maxOutputBoxes) || !r.get(p.backgroundClass) ||
        !r.get(p.scoreActivation) || !r.get(p.classAgnostic) || !r.get(p.boxCoding) || !check(p).empty()) {
      return nullptr;
    }
    int32_t nbInputs = 0;
    if (!r.get(nbInputs) || nbInputs < 2 || nbInputs > 3) return nullptr;
    return new EfficientNms(p, nbInputs);
  }

  int32_t getNbOutputs() const noexcept override { return 4; }
  IPluginV2DynamicExt* clone() const noexcept override { return finishClone(new (std::nothrow) EfficientNms(p_, nbInputs_)); }
  DimsExprs getOutputDimensions(int32_t index, DimsExprs const* inputs, int32_t nbInputs,
                                IExprBuilder& b) noexcept override {
    DimsExprs out{};
    if (nbInputs < 2 || nbInputs > 3 || index < 0 || index > 3 || inputs[0].nbDims < 1) {
      out.nbDims = -1;
      return out;
    }
    nbInputs_ = nbInputs;  // two inputs, or three with anchors (the fused box decoder)
    out.d[0] = inputs[0].d[0];
    if (index == 0) {
      out.nbDims = 2;
      out.d[1] = b.constant(1);
    } else {
      out.nbDims = index == 1 ? 3 : 2;
      out.d[1] = b.constant(p_.maxOutputBoxes);
      if (index == 1) out.d[2] = b.constant(4);
    }
    return out;
  }
  DataType getOutputDataType(int32_t index, DataType const* inputTypes, int32_t nbInputs) const noexcept override {
    return (index == 0 || index == 3) ? DataType::kINT32 : (nbInputs > 0 ? inputTypes[0] : DataType::kFLOAT);
  }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    if (nbInputs < 2 || nbInputs > 3 || nbOutputs != 4 || pos < 0 || pos >= nbInputs + nbOutputs) return false;
    nbInputs_ = nbInputs;
    PluginTensorDesc const& d = inOut[pos];
    if (d.format != TensorFormat::kLINEAR) return false;
    if (pos == 0) return d.type == DataType::kFLOAT || d.type == DataType::kHALF;
    int32_t o = pos - nbInputs;
    if (o == 0 || o == 3) return d.type == DataType::kINT32;
    return d.type == inOut[0].type;
  }

 protected:
  void writeParams(ByteWriter& w) const override {
    w.put(p_.scoreThreshold);
    w.put(p_.iouThreshold);
    w.put(p_.maxOutputBoxes);
    w.put(p_.backgroundClass);
    w.put(p_.scoreActivation);
    w.put(p_.classAgnostic);
    w.put(p_.boxCoding);
    w.put(nbInputs_);
  }
  void configurePlugin(DynamicPluginTensorDesc const*, int32_t nbInputs, DynamicPluginTensorDesc const*,
                       int32_t) noexcept override {
    if (nbInputs == 2 || nbInputs == 3) nbInputs_ = nbInputs;
  }
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const* out, void const* const* inputs,
                          void* const* outputs, void*) override;
  std::string checkShapes(PluginTensorDesc const* in) const;

 public:
  bool hasCuda() const noexcept override { return KILN_PLUGINS_HAVE_CUDA != 0; }
#if KILN_PLUGINS_HAVE_CUDA
  size_t getWorkspaceSize(PluginTensorDesc const* in, int32_t, PluginTensorDesc const*, int32_t) const noexcept override {
    std::string err;
    return cuda::efficientNmsWorkspace(in[1].dims.d[0], in[1].dims.d[1], in[1].dims.d[2], p_.maxOutputBoxes, &err);
  }

 protected:
  std::string cudaCompute(PluginTensorDesc const* in, PluginTensorDesc const* out, void const* const* inputs,
                          void* const* outputs, void* workspace, cudaStream_t stream) override {
    if (auto err = checkShapes(in); !err.empty()) return err;
    cuda::EfficientNmsArgs a;
    a.boxes = inputs[0];
    a.scores = inputs[1];
    a.anchors = nbInputs_ == 3 ? inputs[2] : nullptr;
    a.anchorBatch = nbInputs_ == 3 ? in[2].dims.d[0] : 1;
    a.perClassBoxes = in[0].dims.nbDims == 4;
    a.half = in[0].type == DataType::kHALF;
    a.n = in[1].dims.d[0];
    a.nb = in[1].dims.d[1];
    a.nc = in[1].dims.d[2];
    a.scoreThreshold = p_.scoreThreshold;
    a.iouThreshold = p_.iouThreshold;
    a.maxOut = p_.maxOutputBoxes;
    a.background = p_.backgroundClass;
    a.sigmoid = p_.scoreActivation != 0;
    a.classAgnostic = p_.classAgnostic != 0;
    a.centerSize = p_.boxCoding == 1;
    a.outCounts = static_cast<int32_t*>(outputs[0]);
    a.outBoxes = outputs[1];
    a.outScores = outputs[2];
    a.outClasses = static_cast<int32_t*>(outputs[3]);
    return cuda::launchEfficientNms(a, workspace, getWorkspaceSize(in, nbInputs_, out, 4), stream);
  }
#endif

 private:
  EfficientNmsParams p_;
  int32_t nbInputs_;  // learnt from getOutputDimensions / supportsFormatCombination / configurePlugin
};

std::string EfficientNms::checkShapes(PluginTensorDesc const* in) const {
  Dims const& bd = in[0].dims;
  Dims const& sd = in[1].dims;
  if (sd.nbDims != 3) return "scores must be [batch, boxes, classes], got " + dimsString(sd);
  int64_t n = sd.d[0], nb = sd.d[1], nc = sd.d[2];
  bool perClass = bd.nbDims == 4;
  if (!((bd.nbDims == 3 && bd.d[0] == n && bd.d[1] == nb && bd.d[2] == 4) ||
        (perClass && bd.d[0] == n && bd.d[1] == nb && bd.d[2] == nc && bd.d[3] == 4))) {
    return "boxes must be [" + std::to_string(n) + ", " + std::to_string(nb) + ", 4] or [" + std::to_string(n) + ", " +
           std::to_string(nb) + ", " + std::to_string(nc) + ", 4] to match scores " + dimsString(sd) + ", got " +
           dimsString(bd);
  }
  if (nbInputs_ == 3) {
    Dims const& ad = in[2].dims;
    if (ad.nbDims != 3 || (ad.d[0] != 1 && ad.d[0] != n) || ad.d[1] != nb || ad.d[2] != 4) {
      return "anchors must be [1 or " + std::to_string(n) + ", " + std::to_string(nb) + ", 4], got " + dimsString(ad);
    }
  }
  return "";
}

CornerBox toCorners(float const* v, int32_t coding) {
  if (coding == 1) return {v[0] - v[2] * 0.5f, v[1] - v[3] * 0.5f, v[0] + v[2] * 0.5f, v[1] + v[3] * 0.5f};
  return {v[0], v[1], v[2], v[3]};
}

std::string EfficientNms::hostCompute(PluginTensorDesc const* in, PluginTensorDesc const* out,
                                      void const* const* inputs, void* const* outputs, void*) {
  if (auto err = checkShapes(in); !err.empty()) return err;
  Dims const& bd = in[0].dims;
  Dims const& sd = in[1].dims;
  int64_t n = sd.d[0], nb = sd.d[1], nc = sd.d[2];
  bool perClass = bd.nbDims == 4;
  int64_t anchorBatch = 0;
  std::vector<float> anchors;
  bool haveAnchors = nbInputs_ == 3;
  if (haveAnchors) {
    Dims const& ad = in[2].dims;
    anchorBatch = ad.d[0];
    anchors = loadFloats(in[2].type, inputs[2], volume(ad));
  }
  std::vector<float> boxes = loadFloats(in[0].type, inputs[0], volume(bd));
  std::vector<float> scores = loadFloats(in[1].type, inputs[1], volume(sd));
  int64_t m = p_.maxOutputBoxes;
  std::vector<int32_t> counts(static_cast<size_t>(n), 0);
  std::vector<float> outBoxes(static_cast<size_t>(n * m * 4), 0.f), outScores(static_cast<size_t>(n * m), 0.f);
  std::vector<int32_t> outClasses(static_cast<size_t>(n * m), 0);
  for (int64_t b = 0; b < n; ++b) {
    std::vector<NmsCandidate> cand;
    for (int64_t i = 0; i < nb; ++i) {
      for (int64_t c = 0; c < nc; ++c) {
        if (c == p_.backgroundClass) continue;
        float s = scores[(b * nb + i) * nc + c];
        if (p_.scoreActivation) s = 1.f / (1.f + std::exp(-s));
        if (!(s >= p_.scoreThreshold)) continue;
        float const* raw = perClass ? &boxes[((b * nb + i) * nc + c) * 4] : &boxes[(b * nb + i) * 4];
        float v[4] = {raw[0], raw[1], raw[2], raw[3]};
        if (haveAnchors) {
          float const* a = &anchors[((anchorBatch == 1 ? 0 : b) * nb + i) * 4];
          if (p_.boxCoding == 1) {
            v[0] = v[0] * a[2] + a[0];
            v[1] = v[1] * a[3] + a[1];
            v[2] = std::exp(v[2]) * a[2];
            v[3] = std::exp(v[3]) * a[3];
          } else {
            for (int k = 0; k < 4; ++k) v[k] += a[k];
          }
        }
        cand.push_back({s, static_cast<int32_t>(c), i * nc + c, toCorners(v, p_.boxCoding)});
      }
    }
    auto kept = greedyNms(std::move(cand), p_.iouThreshold, 0.f, p_.classAgnostic != 0, m, true);
    counts[b] = static_cast<int32_t>(kept.size());
    for (size_t k = 0; k < kept.size(); ++k) {
      size_t o = static_cast<size_t>(b * m) + k;
      outScores[o] = kept[k].score;
      outClasses[o] = kept[k].cls;
      outBoxes[o * 4 + 0] = kept[k].box.x1;
      outBoxes[o * 4 + 1] = kept[k].box.y1;
      outBoxes[o * 4 + 2] = kept[k].box.x2;
      outBoxes[o * 4 + 3] = kept[k].box.y2;
    }
  }
  std::memcpy(outputs[0], counts.data(), counts.size() * sizeof(int32_t));
  storeFloats(out[1].type, outBoxes.data(), static_cast<int64_t>(outBoxes.size()), outputs[1]);
  storeFloats(out[2].type, outScores.data(), static_cast<int64_t>(outScores.size()), outputs[2]);
  std::memcpy(outputs[3], outClasses.data(), outClasses.size() * sizeof(int32_t));
  return "";
}

}  // namespace

std::unique_ptr<IPluginCreator> makeEfficientNmsCreator() { return std::make_unique<BuiltinCreator<EfficientNms>>(); }

}  // namespace kiln::plugin
