// RPROI_TRT (version 1): Faster R-CNN's region proposal (anchors, box decoding, NMS) fused with ROI max pooling,
// as TensorRT's nvFasterRCNN plugin, with explicit batch dimensions (TensorRT's per-sample shapes behind N).
// Inputs: scores [N, 2A, H, W] (channels [0, A) background, [A, 2A) foreground, anchor a at channel A + a),
// deltas [N, 4A, H, W] (dx, dy, dw, dh of anchor a at channels 4a .. 4a + 3), fmap [N, C, H, W] (the scores'
// grid), im_info [N, 3] (or [N, 1, 1, 3]: image height, width, scale), A = anchorsRatioCount *
// anchorsScaleCount. Outputs: rois [N, 1, nmsMaxOut, 4] (x1, y1, x2, y2 in image pixels) and pooled features
// [N, nmsMaxOut, C, poolingH, poolingW]. fp32, linear.
// Fields (all required; the counts may be left out and then come from the lists): poolingH, poolingW,
// featureStride, preNmsTop, nmsMaxOut (int > 0), iouThreshold (float in [0, 1]), minBoxSize (float >= 0),
// spatialScale (float > 0), anchorsRatioCount, anchorsScaleCount (int > 0, the lists' lengths), anchorsRatios,
// anchorsScales (floats > 0).
// Semantics, decided from TensorRT's kernels:
// - Anchors (ratio r, scale s; anchor index = ratio index * anchorsScaleCount + scale index), base size
//   b = featureStride: width round(sqrt(b * b / r)) * s, height round(that rounded width * r) * s (halves away
//   from zero), centre ((b - 1) / 2 + x * featureStride, (b - 1) / 2 + y * featureStride) at grid cell (y, x).
// - Decoding: centre += (dx * width, dy * height); size = (exp(dw) * width, exp(dh) * height); corners centre
//   -/+ size / 2 (no "+1" pixel convention), each clipped to [0, im_w - 1] / [0, im_h - 1]. fp32 arithmetic in
//   that order, exp in double rounded to float: the CUDA path computes the same bits (TensorRT uses __expf).
// - minBoxSize: a proposal with x2 - x1 + 1 or y2 - y1 + 1 below minBoxSize * im_info scale gets the score
//   -inf. As in TensorRT it is demoted, not removed: it ranks after every other proposal and can still fill
//   rois when fewer proposals survive.
// - Order: descending score, ties by anchor index (a * H * W + y * W + x), scores ordered by their bit
//   patterns as a radix sort orders floats (+0 before -0, a NaN without the sign bit first). The best
//   min(preNmsTop, A * H * W) go to a greedy NMS: a proposal is dropped when its IoU with a kept one is above
//   iouThreshold, IoU with "+1" widths and heights; at most nmsMaxOut are kept, in that order.
// - Padding: rois past the kept ones are (0, 0, 0, 0) and are pooled like the others (so their features are
//   fmap[n, c, 0, 0]), as TensorRT zero-fills before pooling.
// - ROI pooling (Fast R-CNN max pooling): roi corners times spatialScale, rounded (halves away from zero); the
//   ROI spans round(x2) - round(x1) + 1 (at least 1) cells, likewise rows; bin (ph, pw) covers rows
//   [floor(ph * h / poolingH), ceil((ph + 1) * h / poolingH)) from the ROI's start, likewise columns, clipped
//   to the map; the bin's maximum, starting from -FLT_MAX (NaN values never win); an empty bin gives 0.
// Unlike TensorRT: preNmsTop above A * H * W is fine (TensorRT reads past the image's proposals), no limit of
// 65,536 on preNmsTop nor of shared memory on the feature map; int8 feature maps are not offered.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <numeric>
#include <utility>

#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"
#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

struct RproiParams {
  int32_t poolingH = 0, poolingW = 0, featureStride = 0, preNmsTop = 0, nmsMaxOut = 0;
  float iouThreshold = 0.f, minBoxSize = 0.f, spatialScale = 0.f;
  std::vector<float> ratios, scales;
};

// Largest anchor count: 4 * A channels must stay a 32-bit extent.
constexpr int64_t kMaxAnchors = 0x1FFFFFFF;

std::string checkParams(RproiParams const& p) {
  for (auto const& [name, v] : {std::pair<char const*, int32_t>{"poolingH", p.poolingH},
                                {"poolingW", p.poolingW},
                                {"featureStride", p.featureStride},
                                {"preNmsTop", p.preNmsTop},
                                {"nmsMaxOut", p.nmsMaxOut}}) {
    if (v <= 0) return std::string(name) + " must be positive, got " + std::to_string(v);
  }
  if (!(p.iouThreshold >= 0.f && p.iouThreshold <= 1.f)) {
    return "iouThreshold must be in [0, 1], got " + std::to_string(p.iouThreshold);
  }
  if (!(p.minBoxSize >= 0.f) || !std::isfinite(p.minBoxSize)) {
    return "minBoxSize must be finite and >= 0, got " + std::to_string(p.minBoxSize);
  }
  if (!(p.spatialScale > 0.f) || !std::isfinite(p.spatialScale)) {
    return "spatialScale must be finite and positive, got " + std::to_string(p.spatialScale);
  }
  if (p.ratios.empty()) return "anchorsRatios must hold at least one ratio";
  if (p.scales.empty()) return "anchorsScales must hold at least one scale";
  for (size_t i = 0; i < p.ratios.size(); ++i) {
    if (!(p.ratios[i] > 0.f) || !std::isfinite(p.ratios[i])) {
      return "anchorsRatios[" + std::to_string(i) + "] must be finite and positive, got " + std::to_string(p.ratios[i]);
    }
  }
  for (size_t i = 0; i < p.scales.size(); ++i) {
    if (!(p.scales[i] > 0.f) || !std::isfinite(p.scales[i])) {
      return "anchorsScales[" + std::to_string(i) + "] must be finite and positive, got " + std::to_string(p.scales[i]);
    }
  }
  if (static_cast<int64_t>(p.ratios.size()) * static_cast<int64_t>(p.scales.size()) > kMaxAnchors) {
    return "anchorsRatioCount * anchorsScaleCount must be at most " + std::to_string(kMaxAnchors);
  }
  return "";
}

// The A anchors as (centre x, centre y, width, height) at grid cell (0, 0); see the file comment.
std::vector<float> makeAnchors(RproiParams const& p) {
  std::vector<float> a;
  float base = static_cast<float>(p.featureStride);
  for (float ratio : p.ratios) {
    for (float scale : p.scales) {
      float w = std::round(std::sqrt(base * base / ratio));
      float h = std::round(w * ratio);
      a.insert(a.end(), {(base - 1.f) / 2.f, (base - 1.f) / 2.f, w * scale, h * scale});
    }
  }
  return a;
}

// Ascending keys give descending scores, floats ordered by their bit patterns (the CUDA path's radix sort).
uint32_t orderKey(float s) {
  uint32_t u;
  std::memcpy(&u, &s, sizeof u);
  u = (u & 0x80000000U) ? ~u : (u | 0x80000000U);
  return ~u;
}

struct Proposal {
  float x1, y1, x2, y2;
};

// IoU with "+1" widths and heights, as TensorRT's proposal NMS (operands in this order on both paths).
float proposalIou(Proposal const& a, Proposal const& b) {
  float iw = std::fmax(std::fmin(a.x2, b.x2) - std::fmax(a.x1, b.x1) + 1.f, 0.f);
  float ih = std::fmax(std::fmin(a.y2, b.y2) - std::fmax(a.y1, b.y1) + 1.f, 0.f);
  float inter = iw * ih;
  float areaA = (a.x2 - a.x1 + 1.f) * (a.y2 - a.y1 + 1.f);
  float areaB = (b.x2 - b.x1 + 1.f) * (b.y2 - b.y1 + 1.f);
  return inter / (areaA + areaB - inter);
}

// exp in double, rounded to float (as the CUDA path: the two agree where float exps would not).
float expRounded(float v) { return static_cast<float>(std::exp(static_cast<double>(v))); }

// A ROI corner on the feature map: round(v * scale), kept within +-2^30 so that it converts to an integer.
int64_t scaledCoord(float v, float scale) {
  float r = std::round(v * scale);
  return static_cast<int64_t>(std::fmin(std::fmax(r, -1073741824.f), 1073741824.f));
}

class Rproi final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = "RPROI_TRT";
  static constexpr char const* kVersion = "1";
  explicit Rproi(RproiParams p) : BuiltinPlugin(kName, kVersion), p_(std::move(p)), anchors_(makeAnchors(p_)) {}

  static std::vector<PluginField> fieldList() {
    std::vector<PluginField> v;
    for (char const* n : {"poolingH", "poolingW", "featureStride", "preNmsTop", "nmsMaxOut", "anchorsRatioCount",
                          "anchorsScaleCount"}) {
      v.push_back(fieldSpec(n, PluginFieldType::kINT32));
    }
    for (char const* n : {"iouThreshold", "minBoxSize", "spatialScale"})
      v.push_back(fieldSpec(n, PluginFieldType::kFLOAT32));
    v.push_back(fieldSpec("anchorsRatios", PluginFieldType::kFLOAT32, 0));
    v.push_back(fieldSpec("anchorsScales", PluginFieldType::kFLOAT32, 0));
    return v;
  }
  static Rproi* create(FieldReader& f) {
    RproiParams p;
    auto required = [&f](bool present, char const* name) {
      if (!present) f.require(false, std::string("field '") + name + "' is required");
    };
    required(f.getInt("poolingH", p.poolingH), "poolingH");
    required(f.getInt("poolingW", p.poolingW), "poolingW");
    required(f.getInt("featureStride", p.featureStride), "featureStride");
    required(f.getInt("preNmsTop", p.preNmsTop), "preNmsTop");
    required(f.getInt("nmsMaxOut", p.nmsMaxOut), "nmsMaxOut");
    required(f.getFloat("iouThreshold", p.iouThreshold), "iouThreshold");
    required(f.getFloat("minBoxSize", p.minBoxSize), "minBoxSize");
    required(f.getFloat("spatialScale", p.spatialScale), "spatialScale");
    required(f.getFloats("anchorsRatios", p.ratios), "anchorsRatios");
    required(f.getFloats("anchorsScales", p.scales), "anchorsScales");
    // The counts say how many values the lists hold (TensorRT reads that many); here they must agree.
    auto count = [&f](char const* name, char const* list, size_t length) {
      int32_t v = 0;
      if (!f.getInt(name, v) || !f.ok()) return;
      f.require(v > 0, std::string(name) + " must be positive, got " + std::to_string(v));
      f.require(static_cast<size_t>(v) == length, std::string(list) + " holds " + std::to_string(length) +
                                                      " value(s) but " + name + " is " + std::to_string(v));
    };
    count("anchorsRatioCount", "anchorsRatios", p.ratios.size());
    count("anchorsScaleCount", "anchorsScales", p.scales.size());
    if (f.ok()) f.require(checkParams(p).empty(), checkParams(p));
    return f.ok() ? new Rproi(std::move(p)) : nullptr;
  }
  static Rproi* deserialize(ByteReader& r) {
    RproiParams p;
    bool ok = r.get(p.poolingH) && r.get(p.poolingW) && r.get(p.featureStride) && r.get(p.preNmsTop) &&
              r.get(p.nmsMaxOut) && r.get(p.iouThreshold) && r.get(p.minBoxSize) && r.get(p.spatialScale) &&
              r.getFloats(p.ratios) && r.getFloats(p.scales);
    return ok && checkParams(p).empty() ? new Rproi(std::move(p)) : nullptr;
  }

  int32_t getNbOutputs() const noexcept override { return 2; }
  IPluginV2DynamicExt* clone() const noexcept override {
    try {
      return finishClone(new Rproi(p_));
    } catch (...) {
      return nullptr;
    }
  }
  DimsExprs getOutputDimensions(int32_t index, DimsExprs const* inputs, int32_t nbInputs,
                                IExprBuilder& b) noexcept override {
    DimsExprs out{};
    if (nbInputs != 4 || index < 0 || index > 1 || inputs[0].nbDims < 1 || inputs[2].nbDims != 4) {
      out.nbDims = -1;
      return out;
    }
    out.d[0] = inputs[0].d[0];
    if (index == 0) {
      out.nbDims = 4;
      out.d[1] = b.constant(1);
      out.d[2] = b.constant(p_.nmsMaxOut);
      out.d[3] = b.constant(4);
    } else {
      out.nbDims = 5;
      out.d[1] = b.constant(p_.nmsMaxOut);
      out.d[2] = inputs[2].d[1];
      out.d[3] = b.constant(p_.poolingH);
      out.d[4] = b.constant(p_.poolingW);
    }
    return out;
  }
  DataType getOutputDataType(int32_t, DataType const*, int32_t) const noexcept override { return DataType::kFLOAT; }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    return nbInputs == 4 && nbOutputs == 2 && pos >= 0 && pos < 6 && linearFloat(inOut[pos], false);
  }
  bool hasCuda() const noexcept override { return KILN_PLUGINS_HAVE_CUDA != 0; }

 protected:
  void writeParams(ByteWriter& w) const override {
    w.put(p_.poolingH);
    w.put(p_.poolingW);
    w.put(p_.featureStride);
    w.put(p_.preNmsTop);
    w.put(p_.nmsMaxOut);
    w.put(p_.iouThreshold);
    w.put(p_.minBoxSize);
    w.put(p_.spatialScale);
    w.putFloats(p_.ratios);
    w.putFloats(p_.scales);
  }
  int64_t anchorCount() const { return static_cast<int64_t>(anchors_.size() / 4); }
  std::string checkShapes(PluginTensorDesc const* in) const {
    Dims const& s = in[0].dims;
    Dims const& d = in[1].dims;
    Dims const& f = in[2].dims;
    Dims const& im = in[3].dims;
    int64_t a = anchorCount();
    if (s.nbDims != 4 || s.d[1] != 2 * a) {
      return "scores must be [N, 2 * anchors = " + std::to_string(2 * a) + ", H, W], got " + dimsString(s);
    }
    int64_t n = s.d[0], h = s.d[2], w = s.d[3];
    std::string nhw = std::to_string(n) + ", ";
    if (d.nbDims != 4 || d.d[0] != n || d.d[1] != 4 * a || d.d[2] != h || d.d[3] != w) {
      return "bbox deltas must be [" + nhw + std::to_string(4 * a) + ", " + std::to_string(h) + ", " +
             std::to_string(w) + "] to match scores " + dimsString(s) + ", got " + dimsString(d);
    }
    if (f.nbDims != 4 || f.d[0] != n || f.d[2] != h || f.d[3] != w) {
      return "the feature map must be [" + nhw + "C, " + std::to_string(h) + ", " + std::to_string(w) +
             "] (the scores' grid), got " + dimsString(f);
    }
    bool infoOk = im.nbDims >= 2 && im.d[0] == n && im.d[im.nbDims - 1] == 3;
    for (int32_t i = 1; infoOk && i + 1 < im.nbDims; ++i) infoOk = im.d[i] == 1;
    if (!infoOk) return "im_info must be [" + nhw + "3] (height, width, scale), got " + dimsString(im);
    int64_t items = 1;  // N * A * H * W, without overflowing
    for (int64_t v : {n, a, h, w}) {
      if (v > 0 && items > 0x7FFFFFFF / v) return "more than 2^31 - 1 anchors in the batch";
      items *= v;
    }
    return "";
  }

  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*) override {
    if (auto err = checkShapes(in); !err.empty()) return err;
    int64_t na = anchorCount(), n = in[0].dims.d[0], h = in[0].dims.d[2], w = in[0].dims.d[3], c = in[2].dims.d[1];
    int64_t hw = h * w, per = na * hw, maxOut = p_.nmsMaxOut;
    auto const* scores = static_cast<float const*>(inputs[0]);
    auto const* deltas = static_cast<float const*>(inputs[1]);
    auto const* fmap = static_cast<float const*>(inputs[2]);
    auto const* info = static_cast<float const*>(inputs[3]);
    auto* rois = static_cast<float*>(outputs[0]);
    auto* pooled = static_cast<float*>(outputs[1]);
    std::fill(rois, rois + n * maxOut * 4, 0.f);
    std::vector<Proposal> props(static_cast<size_t>(per));
    std::vector<uint32_t> keys(static_cast<size_t>(per));
    std::vector<int64_t> order(static_cast<size_t>(per));
    for (int64_t b = 0; b < n; ++b) {
      float imH = info[b * 3], imW = info[b * 3 + 1], minSize = p_.minBoxSize * info[b * 3 + 2];
      for (int64_t r = 0; r < per; ++r) {
        int64_t k = r / hw, pos = r % hw, y = pos / w, x = pos % w;
        float const* an = &anchors_[static_cast<size_t>(k * 4)];
        float const* dl = deltas + (b * 4 * na + 4 * k) * hw + pos;
        float cx = an[0] + static_cast<float>(x * p_.featureStride);
        float cy = an[1] + static_cast<float>(y * p_.featureStride);
        cx = cx + dl[0] * an[2];
        cy = cy + dl[hw] * an[3];
        float bw = expRounded(dl[2 * hw]) * an[2], bh = expRounded(dl[3 * hw]) * an[3];
        Proposal& q = props[static_cast<size_t>(r)];
        q.x1 = std::fmin(std::fmax(cx - bw / 2.f, 0.f), imW - 1.f);
        q.y1 = std::fmin(std::fmax(cy - bh / 2.f, 0.f), imH - 1.f);
        q.x2 = std::fmin(std::fmax(cx + bw / 2.f, 0.f), imW - 1.f);
        q.y2 = std::fmin(std::fmax(cy + bh / 2.f, 0.f), imH - 1.f);
        bool small = q.x2 - q.x1 + 1.f < minSize || q.y2 - q.y1 + 1.f < minSize;
        float score = small ? -INFINITY : scores[(b * 2 * na + na + k) * hw + pos];
        keys[static_cast<size_t>(r)] = orderKey(score);
      }
      std::iota(order.begin(), order.end(), int64_t{0});
      std::sort(order.begin(), order.end(), [&keys](int64_t i, int64_t j) {
        return keys[static_cast<size_t>(i)] < keys[static_cast<size_t>(j)] ||
               (keys[static_cast<size_t>(i)] == keys[static_cast<size_t>(j)] && i < j);
      });
      int64_t limit = std::min<int64_t>(per, p_.preNmsTop);
      float* out = rois + b * maxOut * 4;
      std::vector<Proposal> kept;
      for (int64_t j = 0; j < limit && static_cast<int64_t>(kept.size()) < maxOut; ++j) {
        Proposal const& cand = props[static_cast<size_t>(order[static_cast<size_t>(j)])];
        bool suppressed = false;
        for (Proposal const& k : kept) {
          if (proposalIou(k, cand) > p_.iouThreshold) {
            suppressed = true;
            break;
          }
        }
        if (suppressed) continue;
        float* o = out + kept.size() * 4;
        o[0] = cand.x1;
        o[1] = cand.y1;
        o[2] = cand.x2;
        o[3] = cand.y2;
        kept.push_back(cand);
      }
    }
    roiPool(rois, fmap, pooled, n, c, h, w);
    return "";
  }

  // Max pooling of every roi (kept or padding) over its image's feature map.
  void roiPool(float const* rois, float const* fmap, float* pooled, int64_t n, int64_t c, int64_t h, int64_t w) const {
    int64_t ph = p_.poolingH, pw = p_.poolingW;
    for (int64_t roi = 0; roi < n * p_.nmsMaxOut; ++roi) {
      int64_t b = roi / p_.nmsMaxOut;
      float const* r = rois + roi * 4;
      int64_t x0 = scaledCoord(r[0], p_.spatialScale), y0 = scaledCoord(r[1], p_.spatialScale);
      int64_t rw = std::max<int64_t>(scaledCoord(r[2], p_.spatialScale) - x0 + 1, 1);
      int64_t rh = std::max<int64_t>(scaledCoord(r[3], p_.spatialScale) - y0 + 1, 1);
      float binH = static_cast<float>(rh) / static_cast<float>(ph),
            binW = static_cast<float>(rw) / static_cast<float>(pw);
      for (int64_t ch = 0; ch < c; ++ch) {
        float const* plane = fmap + (b * c + ch) * h * w;
        float* o = pooled + (roi * c + ch) * ph * pw;
        for (int64_t i = 0; i < ph; ++i) {
          int64_t hs = static_cast<int64_t>(std::floor(static_cast<float>(i) * binH)) + y0;
          int64_t he = static_cast<int64_t>(std::ceil(static_cast<float>(i + 1) * binH)) + y0;
          hs = std::min(std::max<int64_t>(hs, 0), h);
          he = std::min(std::max<int64_t>(he, 0), h);
          for (int64_t j = 0; j < pw; ++j) {
            int64_t ws = static_cast<int64_t>(std::floor(static_cast<float>(j) * binW)) + x0;
            int64_t we = static_cast<int64_t>(std::ceil(static_cast<float>(j + 1) * binW)) + x0;
            ws = std::min(std::max<int64_t>(ws, 0), w);
            we = std::min(std::max<int64_t>(we, 0), w);
            bool empty = he <= hs || we <= ws;
            float m = empty ? 0.f : -FLT_MAX;
            for (int64_t yy = hs; yy < he; ++yy) {
              for (int64_t xx = ws; xx < we; ++xx) {
                float v = plane[yy * w + xx];
                if (v > m) m = v;
              }
            }
            o[i * pw + j] = m;
          }
        }
      }
    }
  }

 public:
#if KILN_PLUGINS_HAVE_CUDA
  size_t getWorkspaceSize(PluginTensorDesc const* in, int32_t, PluginTensorDesc const*,
                          int32_t) const noexcept override {
    std::string err;
    return cuda::rproiWorkspace(in[0].dims.d[0], anchorCount(), in[0].dims.d[2], in[0].dims.d[3], &err);
  }

 protected:
  std::string cudaCompute(PluginTensorDesc const* in, PluginTensorDesc const* out, void const* const* inputs,
                          void* const* outputs, void* workspace, cudaStream_t stream) override {
    if (auto err = checkShapes(in); !err.empty()) return err;
    std::string err;
    void const* anchors = anchorsDev_.get(anchors_.data(), anchors_.size() * sizeof(float), err);
    if (!anchors) return err;
    cuda::RproiArgs a;
    a.scores = static_cast<float const*>(inputs[0]);
    a.deltas = static_cast<float const*>(inputs[1]);
    a.featureMap = static_cast<float const*>(inputs[2]);
    a.imInfo = static_cast<float const*>(inputs[3]);
    a.anchors = static_cast<float const*>(anchors);
    a.rois = static_cast<float*>(outputs[0]);
    a.pooled = static_cast<float*>(outputs[1]);
    a.n = in[0].dims.d[0];
    a.a = anchorCount();
    a.c = in[2].dims.d[1];
    a.h = in[0].dims.d[2];
    a.w = in[0].dims.d[3];
    a.featureStride = p_.featureStride;
    a.preNmsTop = p_.preNmsTop;
    a.nmsMaxOut = p_.nmsMaxOut;
    a.poolingH = p_.poolingH;
    a.poolingW = p_.poolingW;
    a.iouThreshold = p_.iouThreshold;
    a.minBoxSize = p_.minBoxSize;
    a.spatialScale = p_.spatialScale;
    return cuda::launchRproi(a, workspace, getWorkspaceSize(in, 4, out, 2), stream);
  }
#endif

 private:
  RproiParams p_;
  std::vector<float> anchors_;  // A x (centre x, centre y, width, height)
#if KILN_PLUGINS_HAVE_CUDA
  DeviceWeights anchorsDev_;
#endif
};

}  // namespace

std::unique_ptr<IPluginCreator> makeRproiCreator() { return std::make_unique<BuiltinCreator<Rproi>>(); }

}  // namespace kiln::plugin
