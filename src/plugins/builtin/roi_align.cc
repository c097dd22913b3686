// ROIAlign_TRT (version 1): ONNX RoiAlign. Inputs X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2; fp32 or fp16,
// X's type), batch_indices [R] int32. Output [R, C, output_height, output_width]. Fields:
// coordinate_transformation_mode (int, 1 = half_pixel (default): coordinates shifted by -0.5; 0 =
// output_half_pixel: no shift, ROIs at least 1x1), mode (int, 1 = avg (default), 0 = max: the largest weighted
// corner sample, as ONNX's reference), output_height / output_width (int > 0, default 1), sampling_ratio (int
// >= 0, default 0: ceil(roi size / output size) samples per bin and axis), spatial_scale (float > 0, default 1).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"
#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

struct RoiAlignParams {
  int32_t halfPixel = 1;
  int32_t avg = 1;
  int32_t outH = 1;
  int32_t outW = 1;
  int32_t samplingRatio = 0;
  float spatialScale = 1.f;
};

std::string checkParams(RoiAlignParams const& p) {
  if (p.halfPixel != 0 && p.halfPixel != 1) {
    return "coordinate_transformation_mode must be 0 or 1, got " + std::to_string(p.halfPixel);
  }
  if (p.avg != 0 && p.avg != 1) return "mode must be 0 (max) or 1 (avg), got " + std::to_string(p.avg);
  if (p.outH <= 0 || p.outW <= 0) {
    return "output_height and output_width must be positive, got " + std::to_string(p.outH) + " and " +
           std::to_string(p.outW);
  }
  if (p.samplingRatio < 0) return "sampling_ratio must be >= 0, got " + std::to_string(p.samplingRatio);
  if (!(p.spatialScale > 0.f) || !std::isfinite(p.spatialScale)) {
    return "spatial_scale must be positive, got " + std::to_string(p.spatialScale);
  }
  return "";
}

// Bilinear sample of plane `x` (h x w) at (y, xx) as ONNX does; the four weights and values go to w/v.
void bilinear(float const* plane, int64_t h, int64_t w, float y, float xx, float* wt, float* val) {
  for (int k = 0; k < 4; ++k) wt[k] = val[k] = 0.f;
  if (y < -1.f || y > static_cast<float>(h) || xx < -1.f || xx > static_cast<float>(w)) return;
  y = std::max(y, 0.f);
  xx = std::max(xx, 0.f);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(xx), y1, x1;
  if (y0 >= h - 1) {
    y0 = y1 = h - 1;
    y = static_cast<float>(y0);
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= w - 1) {
    x0 = x1 = w - 1;
    xx = static_cast<float>(x0);
  } else {
    x1 = x0 + 1;
  }
  float ly = y - static_cast<float>(y0), lx = xx - static_cast<float>(x0), hy = 1.f - ly, hx = 1.f - lx;
  wt[0] = hy * hx;
  wt[1] = hy * lx;
  wt[2] = ly * hx;
  wt[3] = ly * lx;
  val[0] = plane[y0 * w + x0];
  val[1] = plane[y0 * w + x1];
  val[2] = plane[y1 * w + x0];
  val[3] = plane[y1 * w + x1];
}

class RoiAlign final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = "ROIAlign_TRT";
  static constexpr char const* kVersion = "1";
  explicit RoiAlign(RoiAlignParams p) : BuiltinPlugin(kName, kVersion), p_(p) {}

  static std::vector<PluginField> fieldList() {
    return {fieldSpec("coordinate_transformation_mode", PluginFieldType::kINT32),
            fieldSpec("mode", PluginFieldType::kINT32),
            fieldSpec("output_height", PluginFieldType::kINT32),
            fieldSpec("output_width", PluginFieldType::kINT32),
            fieldSpec("sampling_ratio", PluginFieldType::kINT32),
            fieldSpec("spatial_scale", PluginFieldType::kFLOAT32)};
  }
  static RoiAlign* create(FieldReader& f) {
    RoiAlignParams p;
    f.getInt("coordinate_transformation_mode", p.halfPixel);
    f.getInt("mode", p.avg);
    f.getInt("output_height", p.outH);
    f.getInt("output_width", p.outW);
    f.getInt("sampling_ratio", p.samplingRatio);
    f.getFloat("spatial_scale", p.spatialScale);
    if (f.ok()) f.require(checkParams(p).empty(), checkParams(p));
    return f.ok() ? new RoiAlign(p) : nullptr;
  }
  static RoiAlign* deserialize(ByteReader& r) {
    RoiAlignParams p;
    bool ok = r.get(p.halfPixel) && r.get(p.avg) && r.get(p.outH) && r.get(p.outW) && r.get(p.samplingRatio) &&
              r.get(p.spatialScale);
    return ok && checkParams(p).empty() ? new RoiAlign(p) : nullptr;
  }

  int32_t getNbOutputs() const noexcept override { return 1; }
  IPluginV2DynamicExt* clone() const noexcept override { return finishClone(new (std::nothrow) RoiAlign(p_)); }
  DimsExprs getOutputDimensions(int32_t, DimsExprs const* inputs, int32_t nbInputs, IExprBuilder& b) noexcept override {
    DimsExprs out{};
    if (nbInputs != 3 || inputs[0].nbDims != 4 || inputs[1].nbDims != 2) {
      out.nbDims = -1;
      return out;
    }
    out.nbDims = 4;
    out.d[0] = inputs[1].d[0];
    out.d[1] = inputs[0].d[1];
    out.d[2] = b.constant(p_.outH);
    out.d[3] = b.constant(p_.outW);
    return out;
  }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    if (nbInputs != 3 || nbOutputs != 1 || pos < 0 || pos > 3) return false;
    PluginTensorDesc const& d = inOut[pos];
    if (d.format != TensorFormat::kLINEAR) return false;
    if (pos == 2) return d.type == DataType::kINT32;
    if (pos == 0) return d.type == DataType::kFLOAT || d.type == DataType::kHALF;
    return d.type == inOut[0].type;
  }
  bool hasCuda() const noexcept override { return KILN_PLUGINS_HAVE_CUDA != 0; }

 protected:
  void writeParams(ByteWriter& w) const override {
    w.put(p_.halfPixel);
    w.put(p_.avg);
    w.put(p_.outH);
    w.put(p_.outW);
    w.put(p_.samplingRatio);
    w.put(p_.spatialScale);
  }
  static std::string checkShapes(PluginTensorDesc const* in) {
    Dims const& x = in[0].dims;
    Dims const& r = in[1].dims;
    Dims const& bi = in[2].dims;
    if (x.nbDims != 4) return "X must be [N, C, H, W], got " + dimsString(x);
    if (r.nbDims != 2 || r.d[1] != 4) return "rois must be [num_rois, 4], got " + dimsString(r);
    if (bi.nbDims != 1 || bi.d[0] != r.d[0]) {
      return "batch_indices must be [num_rois = " + std::to_string(r.d[0]) + "], got " + dimsString(bi);
    }
    return "";
  }
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const* out, void const* const* inputs,
                          void* const* outputs, void*) override {
    if (auto err = checkShapes(in); !err.empty()) return err;
    Dims const& xd = in[0].dims;
    int64_t n = xd.d[0], c = xd.d[1], h = xd.d[2], w = xd.d[3], nr = in[1].dims.d[0];
    std::vector<float> x = loadFloats(in[0].type, inputs[0], volume(xd));
    std::vector<float> rois = loadFloats(in[1].type, inputs[1], nr * 4);
    auto const* bidx = static_cast<int32_t const*>(inputs[2]);
    std::vector<float> y(static_cast<size_t>(nr * c * p_.outH * p_.outW));
    float off = p_.halfPixel ? 0.5f : 0.f;
    for (int64_t r = 0; r < nr; ++r) {
      int64_t b = bidx[r];
      if (b < 0 || b >= n) {
        return "batch_indices[" + std::to_string(r) + "] = " + std::to_string(b) + " is outside [0, " +
               std::to_string(n) + ")";
      }
      float x1 = rois[r * 4] * p_.spatialScale - off, y1 = rois[r * 4 + 1] * p_.spatialScale - off;
      float x2 = rois[r * 4 + 2] * p_.spatialScale - off, y2 = rois[r * 4 + 3] * p_.spatialScale - off;
      float rw = x2 - x1, rh = y2 - y1;
      if (!p_.halfPixel) {
        rw = std::max(rw, 1.f);
        rh = std::max(rh, 1.f);
      }
      float bh = rh / static_cast<float>(p_.outH), bw = rw / static_cast<float>(p_.outW);
      int64_t gh = p_.samplingRatio > 0 ? p_.samplingRatio : static_cast<int64_t>(std::ceil(rh / p_.outH));
      int64_t gw = p_.samplingRatio > 0 ? p_.samplingRatio : static_cast<int64_t>(std::ceil(rw / p_.outW));
      gh = std::max<int64_t>(gh, 1);
      gw = std::max<int64_t>(gw, 1);
      float count = static_cast<float>(gh * gw);
      for (int64_t ch = 0; ch < c; ++ch) {
        float const* plane = &x[static_cast<size_t>((b * c + ch) * h * w)];
        for (int64_t ph = 0; ph < p_.outH; ++ph) {
          for (int64_t pw = 0; pw < p_.outW; ++pw) {
            float acc = 0.f;
            bool first = true;
            for (int64_t iy = 0; iy < gh; ++iy) {
              float yy = y1 + static_cast<float>(ph) * bh + (static_cast<float>(iy) + 0.5f) * bh / static_cast<float>(gh);
              for (int64_t ix = 0; ix < gw; ++ix) {
                float xx = x1 + static_cast<float>(pw) * bw + (static_cast<float>(ix) + 0.5f) * bw / static_cast<float>(gw);
                float wt[4], v[4];
                bilinear(plane, h, w, yy, xx, wt, v);
                if (p_.avg) {
                  acc += wt[0] * v[0] + wt[1] * v[1] + wt[2] * v[2] + wt[3] * v[3];
                } else {
                  float m = std::max(std::max(wt[0] * v[0], wt[1] * v[1]), std::max(wt[2] * v[2], wt[3] * v[3]));
                  acc = first ? m : std::max(acc, m);
                  first = false;
                }
              }
            }
            y[static_cast<size_t>(((r * c + ch) * p_.outH + ph) * p_.outW + pw)] = p_.avg ? acc / count : acc;
          }
        }
      }
    }
    storeFloats(out[0].type, y.data(), static_cast<int64_t>(y.size()), outputs[0]);
    return "";
  }
#if KILN_PLUGINS_HAVE_CUDA
  std::string cudaCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*, cudaStream_t stream) override {
    if (auto err = checkShapes(in); !err.empty()) return err;
    Dims const& xd = in[0].dims;
    cuda::RoiAlignArgs a;
    a.x = inputs[0];
    a.rois = inputs[1];
    a.batchIndices = static_cast<int32_t const*>(inputs[2]);
    a.out = outputs[0];
    a.n = xd.d[0];
    a.c = xd.d[1];
    a.h = xd.d[2];
    a.w = xd.d[3];
    a.numRois = in[1].dims.d[0];
    a.outH = p_.outH;
    a.outW = p_.outW;
    a.samplingRatio = p_.samplingRatio;
    a.spatialScale = p_.spatialScale;
    a.halfPixel = p_.halfPixel != 0;
    a.avg = p_.avg != 0;
    a.half = in[0].type == DataType::kHALF;
    return cuda::launchRoiAlign(a, stream);
  }
#endif

 private:
  RoiAlignParams p_;
};

}  // namespace

std::unique_ptr<IPluginCreator> makeRoiAlignCreator() { return std::make_unique<BuiltinCreator<RoiAlign>>(); }

}  // namespace kiln::plugin
