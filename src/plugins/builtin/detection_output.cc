// NMS_TRT and NMSDynamic_TRT (version 1; SSD's DetectionOutput, one implementation with explicit batch):
// decodes the location predictions against the priors, then per-class NMS and the best keepTopK of the image.
// Inputs (in the order inputOrder gives): loc [N, P * L * 4, 1, 1] (L = 1 with shareLocation, else numClasses),
// conf [N, P * numClasses, 1, 1], priors [N or 1, 2, P * 4, 1] (boxes, then variances). Outputs: detections
// [N, 1, keepTopK, 7] of (image id, label, confidence, x_min, y_min, x_max, y_max), boxes clipped to [0, 1], past
// keepCount rows (image id, -1, 0, 0, 0, 0, 0); keepCount [N, 1, 1, 1] int32. fp32.
// Fields: shareLocation (default 1), varianceEncodedInTarget (default 0: multiply by the variances),
// backgroundLabelId (default 0), numClasses, topK, keepTopK (required; topK per class, no upper limit),
// confidenceThreshold (float; candidates need a confidence strictly above it), nmsThreshold (float, default 0.5),
// inputOrder (3 ints, default 0, 1, 2), confSigmoid (default 0), isNormalized (default 1; unnormalized boxes
// count one more pixel per side, as Caffe), codeType (0 corner, 1 center-size (default), 2 corner-size,
// 3 TF center: y, x, h, w), scoreBits (accepted, no effect), isBatchAgnostic (accepted; priors of batch 1 are
// shared either way).
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

struct DetectionParams {
  int32_t shareLocation = 1, varianceEncoded = 0, background = 0, numClasses = 0, topK = 0, keepTopK = 0;
  float confidenceThreshold = 0.f, nmsThreshold = 0.5f;
  std::vector<int32_t> inputOrder{0, 1, 2};
  int32_t confSigmoid = 0, isNormalized = 1, codeType = 1, scoreBits = 16, isBatchAgnostic = 1;
};

std::string checkParams(DetectionParams const& p) {
  if (p.numClasses <= 0) return "numClasses must be positive, got " + std::to_string(p.numClasses);
  if (p.topK <= 0) return "topK must be positive, got " + std::to_string(p.topK);
  if (p.keepTopK <= 0) return "keepTopK must be positive, got " + std::to_string(p.keepTopK);
  if (p.background < -1 || p.background >= p.numClasses) {
    return "backgroundLabelId must be -1 or a class in [0, numClasses), got " + std::to_string(p.background);
  }
  if (p.codeType < 0 || p.codeType > 3) return "codeType must be 0..3, got " + std::to_string(p.codeType);
  std::vector<int32_t> o = p.inputOrder;
  std::sort(o.begin(), o.end());
  if (o != std::vector<int32_t>{0, 1, 2}) return "inputOrder must be a permutation of 0, 1, 2";
  if (!(p.nmsThreshold >= 0.f && p.nmsThreshold <= 1.f)) return "nmsThreshold must be in [0, 1]";
  if (std::isnan(p.confidenceThreshold)) return "confidenceThreshold is NaN";
  return "";
}

// Decodes one encoded box against its prior and variances (SSD's four code types).
void decodeBox(float const* l, float const* pr, float const* var, int32_t code, bool varianceEncoded, float* out) {
  float v[4] = {1.f, 1.f, 1.f, 1.f};
  if (!varianceEncoded) std::copy(var, var + 4, v);
  float pw = pr[2] - pr[0], ph = pr[3] - pr[1], pcx = (pr[0] + pr[2]) / 2.f, pcy = (pr[1] + pr[3]) / 2.f;
  if (code == 0) {
    for (int k = 0; k < 4; ++k) out[k] = pr[k] + v[k] * l[k];
  } else if (code == 2) {
    out[0] = pr[0] + v[0] * l[0] * pw;
    out[1] = pr[1] + v[1] * l[1] * ph;
    out[2] = pr[2] + v[2] * l[2] * pw;
    out[3] = pr[3] + v[3] * l[3] * ph;
  } else {
    float cx, cy, w, h;
    if (code == 1) {
      cx = v[0] * l[0] * pw + pcx;
      cy = v[1] * l[1] * ph + pcy;
      w = std::exp(v[2] * l[2]) * pw;
      h = std::exp(v[3] * l[3]) * ph;
    } else {  // TF center: y, x, h, w
      cy = v[0] * l[0] * ph + pcy;
      cx = v[1] * l[1] * pw + pcx;
      h = std::exp(v[2] * l[2]) * ph;
      w = std::exp(v[3] * l[3]) * pw;
    }
    out[0] = cx - w / 2.f;
    out[1] = cy - h / 2.f;
    out[2] = cx + w / 2.f;
    out[3] = cy + h / 2.f;
  }
}

template <bool kDynamic>
class DetectionOutput final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = kDynamic ? "NMSDynamic_TRT" : "NMS_TRT";
  static constexpr char const* kVersion = "1";
  explicit DetectionOutput(DetectionParams p) : BuiltinPlugin(kName, kVersion), p_(std::move(p)) {}

  static std::vector<PluginField> fieldList() {
    std::vector<PluginField> v;
    for (char const* n : {"shareLocation", "varianceEncodedInTarget", "backgroundLabelId", "numClasses", "topK",
                          "keepTopK"}) {
      v.push_back(fieldSpec(n, PluginFieldType::kINT32));
    }
    v.push_back(fieldSpec("confidenceThreshold", PluginFieldType::kFLOAT32));
    v.push_back(fieldSpec("nmsThreshold", PluginFieldType::kFLOAT32));
    v.push_back(fieldSpec("inputOrder", PluginFieldType::kINT32, 3));
    for (char const* n : {"confSigmoid", "isNormalized", "codeType", "scoreBits", "isBatchAgnostic"}) {
      v.push_back(fieldSpec(n, PluginFieldType::kINT32));
    }
    return v;
  }
  static DetectionOutput* create(FieldReader& f) {
    DetectionParams p;
    f.getInt("shareLocation", p.shareLocation);
    f.getInt("varianceEncodedInTarget", p.varianceEncoded);
    f.getInt("backgroundLabelId", p.background);
    f.getInt("numClasses", p.numClasses);
    f.getInt("topK", p.topK);
    f.getInt("keepTopK", p.keepTopK);
    f.getFloat("confidenceThreshold", p.confidenceThreshold);
    f.getFloat("nmsThreshold", p.nmsThreshold);
    f.getInts("inputOrder", p.inputOrder);
    f.getInt("confSigmoid", p.confSigmoid);
    f.getInt("isNormalized", p.isNormalized);
    f.getInt("codeType", p.codeType);
    f.getInt("scoreBits", p.scoreBits);
    f.getInt("isBatchAgnostic", p.isBatchAgnostic);
    if (f.ok()) f.require(checkParams(p).empty(), checkParams(p));
    return f.ok() ? new DetectionOutput(std::move(p)) : nullptr;
  }
  static DetectionOutput* deserialize(ByteReader& r) {
    DetectionParams p;
    bool ok = r.get(p.shareLocation) && r.get(p.varianceEncoded) && r.get(p.background) && r.get(p.numClasses) &&
              r.get(p.topK) && r.get(p.keepTopK) && r.get(p.confidenceThreshold) && r.get(p.nmsThreshold) &&
              r.getInts(p.inputOrder) && r.get(p.confSigmoid) && r.get(p.isNormalized) && r.get(p.codeType) &&
              r.get(p.scoreBits) && r.get(p.isBatchAgnostic);
    return ok && checkParams(p).empty() ? new DetectionOutput(std::move(p)) : nullptr;
  }

  int32_t getNbOutputs() const noexcept override { return 2; }
  IPluginV2DynamicExt* clone() const noexcept override {
    return this->finishClone(new (std::nothrow) DetectionOutput(p_));
  }
  DimsExprs getOutputDimensions(int32_t index, DimsExprs const* inputs, int32_t nbInputs,
                                IExprBuilder& b) noexcept override {
    DimsExprs out{};
    int32_t loc = p_.inputOrder[0];
    if (nbInputs != 3 || index < 0 || index > 1 || inputs[loc].nbDims < 1) {
      out.nbDims = -1;
      return out;
    }
    out.nbDims = 4;
    out.d[0] = inputs[loc].d[0];
    out.d[1] = b.constant(1);
    out.d[2] = b.constant(index == 0 ? p_.keepTopK : 1);
    out.d[3] = b.constant(index == 0 ? 7 : 1);
    return out;
  }
  DataType getOutputDataType(int32_t index, DataType const*, int32_t) const noexcept override {
    return index == 1 ? DataType::kINT32 : DataType::kFLOAT;
  }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    if (nbInputs != 3 || nbOutputs != 2 || pos < 0 || pos > 4) return false;
    if (inOut[pos].format != TensorFormat::kLINEAR) return false;
    return inOut[pos].type == (pos == 4 ? DataType::kINT32 : DataType::kFLOAT);
  }
  bool hasCuda() const noexcept override { return KILN_PLUGINS_HAVE_CUDA != 0; }

 protected:
  void writeParams(ByteWriter& w) const override {
    w.put(p_.shareLocation);
    w.put(p_.varianceEncoded);
    w.put(p_.background);
    w.put(p_.numClasses);
    w.put(p_.topK);
    w.put(p_.keepTopK);
    w.put(p_.confidenceThreshold);
    w.put(p_.nmsThreshold);
    w.putInts(p_.inputOrder);
    w.put(p_.confSigmoid);
    w.put(p_.isNormalized);
    w.put(p_.codeType);
    w.put(p_.scoreBits);
    w.put(p_.isBatchAgnostic);
  }
  struct Geometry {
    int64_t n, priors, locClasses, priorBatch;
  };
  std::string geometry(PluginTensorDesc const* in, Geometry& g) const {
    Dims const& loc = in[p_.inputOrder[0]].dims;
    Dims const& conf = in[p_.inputOrder[1]].dims;
    Dims const& pri = in[p_.inputOrder[2]].dims;
    if (pri.nbDims < 3 || pri.d[1] != 2 || pri.d[2] % 4 != 0) {
      return "priors must be [N or 1, 2, numPriors * 4, 1], got " + dimsString(pri);
    }
    g.priors = pri.d[2] / 4;
    g.priorBatch = pri.d[0];
    g.locClasses = p_.shareLocation ? 1 : p_.numClasses;
    g.n = loc.nbDims >= 1 ? loc.d[0] : -1;
    int64_t locPer = loc.nbDims >= 1 && loc.d[0] > 0 ? volume(loc) / loc.d[0] : -1;
    int64_t confPer = conf.nbDims >= 1 && conf.d[0] > 0 ? volume(conf) / conf.d[0] : -1;
    if (g.n <= 0 || locPer != g.priors * g.locClasses * 4) {
      return "loc must be [N, numPriors * " + std::to_string(g.locClasses) + " * 4, 1, 1] with numPriors " +
             std::to_string(g.priors) + " from the priors, got " + dimsString(loc);
    }
    if (conf.d[0] != g.n || confPer != g.priors * p_.numClasses) {
      return "conf must be [" + std::to_string(g.n) + ", numPriors * numClasses = " +
             std::to_string(g.priors * p_.numClasses) + ", 1, 1], got " + dimsString(conf);
    }
    if (g.priorBatch != 1 && g.priorBatch != g.n) return "priors must have batch 1 or N, got " + dimsString(pri);
    return "";
  }
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*) override {
    Geometry g{};
    if (auto err = geometry(in, g); !err.empty()) return err;
    auto const* loc = static_cast<float const*>(inputs[p_.inputOrder[0]]);
    auto const* conf = static_cast<float const*>(inputs[p_.inputOrder[1]]);
    auto const* pri = static_cast<float const*>(inputs[p_.inputOrder[2]]);
    auto* det = static_cast<float*>(outputs[0]);
    auto* count = static_cast<int32_t*>(outputs[1]);
    int64_t np = g.priors, nc = p_.numClasses, lc = g.locClasses, k = p_.keepTopK;
    float offset = p_.isNormalized ? 0.f : 1.f;
    std::vector<float> boxes(static_cast<size_t>(np * lc * 4)), scores(static_cast<size_t>(np * nc));
    for (int64_t b = 0; b < g.n; ++b) {
      float const* pb = pri + (g.priorBatch == 1 ? 0 : b) * 2 * np * 4;
      for (int64_t i = 0; i < np; ++i) {
        for (int64_t c = 0; c < lc; ++c) {
          decodeBox(&loc[((b * np + i) * lc + c) * 4], &pb[i * 4], &pb[np * 4 + i * 4], p_.codeType,
                    p_.varianceEncoded != 0, &boxes[static_cast<size_t>((i * lc + c) * 4)]);
        }
        for (int64_t c = 0; c < nc; ++c) {
          float s = conf[(b * np + i) * nc + c];
          scores[static_cast<size_t>(i * nc + c)] = p_.confSigmoid ? 1.f / (1.f + std::exp(-s)) : s;
        }
      }
      auto kept = perClassNms(boxes.data(), scores.data(), np, nc, p_.shareLocation != 0, p_.background, p_.topK, k,
                              p_.confidenceThreshold, true, p_.nmsThreshold, offset);
      count[b] = static_cast<int32_t>(kept.size());
      for (int64_t j = 0; j < k; ++j) {
        float* d = det + (b * k + j) * 7;
        d[0] = static_cast<float>(b);
        if (j < static_cast<int64_t>(kept.size())) {
          auto const& e = kept[static_cast<size_t>(j)];
          float v[4] = {e.box.x1, e.box.y1, e.box.x2, e.box.y2};
          d[1] = static_cast<float>(e.cls);
          d[2] = e.score;
          for (int q = 0; q < 4; ++q) d[3 + q] = std::min(std::max(v[q], 0.f), 1.f);
        } else {
          d[1] = -1.f;
          for (int q = 2; q < 7; ++q) d[q] = 0.f;
        }
      }
    }
    return "";
  }
#if KILN_PLUGINS_HAVE_CUDA
 public:
  size_t getWorkspaceSize(PluginTensorDesc const* in, int32_t, PluginTensorDesc const*, int32_t) const noexcept override {
    Geometry g{};
    if (!geometry(in, g).empty()) return 0;
    std::string err;
    return cuda::detectionOutputWorkspace(g.n, g.priors, p_.numClasses, g.locClasses, p_.topK, p_.keepTopK, &err);
  }

 protected:
  std::string cudaCompute(PluginTensorDesc const* in, PluginTensorDesc const* out, void const* const* inputs,
                          void* const* outputs, void* workspace, cudaStream_t stream) override {
    Geometry g{};
    if (auto err = geometry(in, g); !err.empty()) return err;
    cuda::DetectionOutputArgs a;
    a.loc = static_cast<float const*>(inputs[p_.inputOrder[0]]);
    a.conf = static_cast<float const*>(inputs[p_.inputOrder[1]]);
    a.priors = static_cast<float const*>(inputs[p_.inputOrder[2]]);
    a.n = g.n;
    a.priorCount = g.priors;
    a.priorBatch = g.priorBatch;
    a.nc = p_.numClasses;
    a.shareLocation = p_.shareLocation != 0;
    a.varianceEncoded = p_.varianceEncoded != 0;
    a.codeType = p_.codeType;
    a.sigmoid = p_.confSigmoid != 0;
    a.topK = p_.topK;
    a.keepTopK = p_.keepTopK;
    a.background = p_.background;
    a.threshold = p_.confidenceThreshold;
    a.iouThreshold = p_.nmsThreshold;
    a.offset = p_.isNormalized ? 0.f : 1.f;
    a.detections = static_cast<float*>(outputs[0]);
    a.keepCount = static_cast<int32_t*>(outputs[1]);
    return cuda::launchDetectionOutput(a, workspace, getWorkspaceSize(in, 3, out, 2), stream);
  }
#endif

 private:
  DetectionParams p_;
};

}  // namespace

std::unique_ptr<IPluginCreator> makeNmsCreator() { return std::make_unique<BuiltinCreator<DetectionOutput<false>>>(); }
std::unique_ptr<IPluginCreator> makeNmsDynamicCreator() {
  return std::make_unique<BuiltinCreator<DetectionOutput<true>>>();
}

}  // namespace kiln::plugin
