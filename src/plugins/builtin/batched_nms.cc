// BatchedNMSDynamic_TRT and BatchedNMS_TRT (version 1; one implementation, both with explicit batch
// dimensions): per-class NMS, then the best keepTopK detections of all classes per image.
// Inputs: boxes [N, B, 1 or C, 4] (1 when shareLocation), scores [N, B, C] or [N, B, C, 1], fp32 or fp16.
// Outputs: num_detections [N, 1] int32, nmsed_boxes [N, K, 4], nmsed_scores [N, K], nmsed_classes [N, K]
// (float class ids, -1 past num_detections; boxes and scores 0 there), K = keepTopK.
// Fields: shareLocation, isNormalized, clipBoxes (bool as int, default 1), caffeSemantics (default 1: with
// unnormalized boxes, widths and heights count one more), backgroundLabelId (int, -1: none), numClasses (int,
// required), topK (int: candidates per class after the score threshold, no upper limit), keepTopK (int,
// required, <= topK), scoreThreshold (float, candidates need a score >= it), iouThreshold (float, suppression
// above it), scoreBits (int, accepted for compatibility; both paths sort exact fp32 scores). The CUDA path
// (cuda/nms.cu) selects the same detections as the host path.
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

struct BatchedNmsParams {
  int32_t shareLocation = 1;
  int32_t backgroundLabelId = -1;
  int32_t numClasses = 0;
  int32_t topK = 0;
  int32_t keepTopK = 0;
  float scoreThreshold = 0.f;
  float iouThreshold = 0.5f;
  int32_t isNormalized = 1;
  int32_t clipBoxes = 1;
  int32_t scoreBits = 16;
  int32_t caffeSemantics = 1;
};

std::string checkParams(BatchedNmsParams const& p) {
  if (p.numClasses <= 0) return "numClasses must be positive, got " + std::to_string(p.numClasses);
  if (p.topK <= 0) return "topK must be positive, got " + std::to_string(p.topK);
  if (p.keepTopK <= 0 || p.keepTopK > p.topK) {
    return "keepTopK must be in [1, topK = " + std::to_string(p.topK) + "], got " + std::to_string(p.keepTopK);
  }
  if (p.backgroundLabelId < -1 || p.backgroundLabelId >= p.numClasses) {
    return "backgroundLabelId must be -1 or a class in [0, numClasses), got " + std::to_string(p.backgroundLabelId);
  }
  if (!(p.iouThreshold >= 0.f && p.iouThreshold <= 1.f)) {
    return "iouThreshold must be in [0, 1], got " + std::to_string(p.iouThreshold);
  }
  if (std::isnan(p.scoreThreshold)) return "scoreThreshold is NaN";
  if (p.scoreBits < 1 || p.scoreBits > 16) return "scoreBits must be in [1, 16], got " + std::to_string(p.scoreBits);
  return "";
}

template <bool kDynamic>
class BatchedNms final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = kDynamic ? "BatchedNMSDynamic_TRT" : "BatchedNMS_TRT";
  static constexpr char const* kVersion = "1";
  explicit BatchedNms(BatchedNmsParams p) : BuiltinPlugin(kName, kVersion), p_(p) {}

  static std::vector<PluginField> fieldList() {
    return {fieldSpec("shareLocation", PluginFieldType::kINT32),
            fieldSpec("backgroundLabelId", PluginFieldType::kINT32),
            fieldSpec("numClasses", PluginFieldType::kINT32),
            fieldSpec("topK", PluginFieldType::kINT32),
            fieldSpec("keepTopK", PluginFieldType::kINT32),
            fieldSpec("scoreThreshold", PluginFieldType::kFLOAT32),
            fieldSpec("iouThreshold", PluginFieldType::kFLOAT32),
            fieldSpec("isNormalized", PluginFieldType::kINT32),
            fieldSpec("clipBoxes", PluginFieldType::kINT32),
            fieldSpec("scoreBits", PluginFieldType::kINT32),
            fieldSpec("caffeSemantics", PluginFieldType::kINT32)};
  }
  static BatchedNms* create(FieldReader& f) {
    BatchedNmsParams p;
    f.getInt("shareLocation", p.shareLocation);
    f.getInt("backgroundLabelId", p.backgroundLabelId);
    f.getInt("numClasses", p.numClasses);
    f.getInt("topK", p.topK);
    f.getInt("keepTopK", p.keepTopK);
    f.getFloat("scoreThreshold", p.scoreThreshold);
    f.getFloat("iouThreshold", p.iouThreshold);
    f.getInt("isNormalized", p.isNormalized);
    f.getInt("clipBoxes", p.clipBoxes);
    f.getInt("scoreBits", p.scoreBits);
    f.getInt("caffeSemantics", p.caffeSemantics);
    if (f.ok()) f.require(checkParams(p).empty(), checkParams(p));
    return f.ok() ? new BatchedNms(p) : nullptr;
  }
  static BatchedNms* deserialize(ByteReader& r) {
    BatchedNmsParams p;
    bool ok = r.get(p.shareLocation) && r.get(p.backgroundLabelId) && r.get(p.numClasses) && r.get(p.topK) &&
              r.get(p.keepTopK) && r.get(p.scoreThreshold) && r.get(p.iouThreshold) && r.get(p.isNormalized) &&
              r.get(p.clipBoxes) && r.get(p.scoreBits) && r.get(p.caffeSemantics);
    return ok && checkParams(p).empty() ? new BatchedNms(p) : nullptr;
  }

  int32_t getNbOutputs() const noexcept override { return 4; }
  IPluginV2DynamicExt* clone() const noexcept override { return this->finishClone(new (std::nothrow) BatchedNms(p_)); }
  DimsExprs getOutputDimensions(int32_t index, DimsExprs const* inputs, int32_t nbInputs,
                                IExprBuilder& b) noexcept override {
    DimsExprs out{};
    if (nbInputs != 2 || index < 0 || index > 3 || inputs[0].nbDims < 1) {
      out.nbDims = -1;
      return out;
    }
    out.d[0] = inputs[0].d[0];
    out.nbDims = index == 1 ? 3 : 2;
    out.d[1] = b.constant(index == 0 ? 1 : p_.keepTopK);
    if (index == 1) out.d[2] = b.constant(4);
    return out;
  }
  DataType getOutputDataType(int32_t index, DataType const* inputTypes, int32_t nbInputs) const noexcept override {
    return index == 0 ? DataType::kINT32 : (nbInputs > 0 ? inputTypes[0] : DataType::kFLOAT);
  }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    if (nbInputs != 2 || nbOutputs != 4 || pos < 0 || pos >= 6) return false;
    PluginTensorDesc const& d = inOut[pos];
    if (d.format != TensorFormat::kLINEAR) return false;
    if (pos == 0) return d.type == DataType::kFLOAT || d.type == DataType::kHALF;
    if (pos == 2) return d.type == DataType::kINT32;
    return d.type == inOut[0].type;
  }

 protected:
  void writeParams(ByteWriter& w) const override {
    w.put(p_.shareLocation);
    w.put(p_.backgroundLabelId);
    w.put(p_.numClasses);
    w.put(p_.topK);
    w.put(p_.keepTopK);
    w.put(p_.scoreThreshold);
    w.put(p_.iouThreshold);
    w.put(p_.isNormalized);
    w.put(p_.clipBoxes);
    w.put(p_.scoreBits);
    w.put(p_.caffeSemantics);
  }
  std::string checkShapes(PluginTensorDesc const* in) const {
    Dims const& bd = in[0].dims;
    Dims const& sd = in[1].dims;
    int64_t nc = p_.numClasses;
    int64_t locClasses = p_.shareLocation ? 1 : nc;
    if (sd.nbDims < 3 || sd.nbDims > 4 || sd.d[2] != nc || (sd.nbDims == 4 && sd.d[3] != 1)) {
      return "scores must be [batch, boxes, numClasses = " + std::to_string(nc) + "] (or with a trailing 1), got " +
             dimsString(sd);
    }
    int64_t n = sd.d[0], nb = sd.d[1];
    if (bd.nbDims != 4 || bd.d[0] != n || bd.d[1] != nb || bd.d[2] != locClasses || bd.d[3] != 4) {
      return "boxes must be [" + std::to_string(n) + ", " + std::to_string(nb) + ", " + std::to_string(locClasses) +
             ", 4] (shareLocation " + std::to_string(p_.shareLocation) + "), got " + dimsString(bd);
    }
    return "";
  }

 public:
  bool hasCuda() const noexcept override { return KILN_PLUGINS_HAVE_CUDA != 0; }
#if KILN_PLUGINS_HAVE_CUDA
  size_t getWorkspaceSize(PluginTensorDesc const* in, int32_t, PluginTensorDesc const*, int32_t) const noexcept override {
    std::string err;
    return cuda::batchedNmsWorkspace(in[1].dims.d[0], in[1].dims.d[1], p_.numClasses, p_.topK, &err);
  }

 protected:
  std::string cudaCompute(PluginTensorDesc const* in, PluginTensorDesc const* out, void const* const* inputs,
                          void* const* outputs, void* workspace, cudaStream_t stream) override {
    if (auto err = checkShapes(in); !err.empty()) return err;
    cuda::BatchedNmsArgs a;
    a.boxes = inputs[0];
    a.scores = inputs[1];
    a.half = in[0].type == DataType::kHALF;
    a.shareLocation = p_.shareLocation != 0;
    a.n = in[1].dims.d[0];
    a.nb = in[1].dims.d[1];
    a.nc = p_.numClasses;
    a.topK = p_.topK;
    a.keepTopK = p_.keepTopK;
    a.background = p_.backgroundLabelId;
    a.scoreThreshold = p_.scoreThreshold;
    a.iouThreshold = p_.iouThreshold;
    a.offset = (!p_.isNormalized && p_.caffeSemantics) ? 1.f : 0.f;
    a.clip = p_.clipBoxes != 0;
    a.outCounts = static_cast<int32_t*>(outputs[0]);
    a.outBoxes = outputs[1];
    a.outScores = outputs[2];
    a.outClasses = outputs[3];
    if (a.nb == 0) {
      return "the CUDA path needs at least one box";
    }
    return cuda::launchBatchedNms(a, workspace, getWorkspaceSize(in, 2, out, 4), stream);
  }
#endif

 protected:
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const* out, void const* const* inputs,
                          void* const* outputs, void*) override {
    if (auto err = checkShapes(in); !err.empty()) return err;
    Dims const& bd = in[0].dims;
    Dims const& sd = in[1].dims;
    int64_t nc = p_.numClasses;
    int64_t locClasses = p_.shareLocation ? 1 : nc;
    int64_t n = sd.d[0], nb = sd.d[1];
    std::vector<float> boxes = loadFloats(in[0].type, inputs[0], volume(bd));
    std::vector<float> scores = loadFloats(in[1].type, inputs[1], volume(sd));
    float offset = (!p_.isNormalized && p_.caffeSemantics) ? 1.f : 0.f;
    int64_t k = p_.keepTopK;
    std::vector<int32_t> counts(static_cast<size_t>(n), 0);
    std::vector<float> oBoxes(static_cast<size_t>(n * k * 4), 0.f), oScores(static_cast<size_t>(n * k), 0.f),
        oClasses(static_cast<size_t>(n * k), -1.f);
    for (int64_t b = 0; b < n; ++b) {
      std::vector<NmsCandidate> all =
          perClassNms(&boxes[static_cast<size_t>(b * nb * locClasses * 4)], &scores[static_cast<size_t>(b * nb * nc)], nb, nc,
                      p_.shareLocation != 0, p_.backgroundLabelId, p_.topK, k, p_.scoreThreshold, false, p_.iouThreshold,
                      offset);
      int64_t count = std::min<int64_t>(k, static_cast<int64_t>(all.size()));
      counts[b] = static_cast<int32_t>(count);
      for (int64_t j = 0; j < count; ++j) {
        size_t o = static_cast<size_t>(b * k + j);
        NmsCandidate const& d = all[static_cast<size_t>(j)];
        float v[4] = {d.box.x1, d.box.y1, d.box.x2, d.box.y2};
        for (int q = 0; q < 4; ++q) oBoxes[o * 4 + q] = p_.clipBoxes ? std::min(std::max(v[q], 0.f), 1.f) : v[q];
        oScores[o] = d.score;
        oClasses[o] = static_cast<float>(d.cls);
      }
    }
    std::memcpy(outputs[0], counts.data(), counts.size() * sizeof(int32_t));
    storeFloats(out[1].type, oBoxes.data(), static_cast<int64_t>(oBoxes.size()), outputs[1]);
    storeFloats(out[2].type, oScores.data(), static_cast<int64_t>(oScores.size()), outputs[2]);
    storeFloats(out[3].type, oClasses.data(), static_cast<int64_t>(oClasses.size()), outputs[3]);
    return "";
  }

 private:
  BatchedNmsParams p_;
};

}  // namespace

std::unique_ptr<IPluginCreator> makeBatchedNmsDynamicCreator() {
  return std::make_unique<BuiltinCreator<BatchedNms<true>>>();
}
std::unique_ptr<IPluginCreator> makeBatchedNmsCreator() { return std::make_unique<BuiltinCreator<BatchedNms<false>>>(); }

}  // namespace kiln::plugin
