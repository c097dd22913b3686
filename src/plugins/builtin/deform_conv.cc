// ModulatedDeformConv2d (version 1, DCNv2 as in mmcv): a 2-D convolution whose kernel taps are moved by learned
// offsets and scaled by a learned mask. Inputs: x [N, Cin, H, W], offset [N, 2 * dg * kh * kw, Ho, Wo] (per
// deformable group g and tap k: channel 2 * (g * K + k) the row shift, + 1 the column shift), mask
// [N, dg * kh * kw, Ho, Wo], weight [Cout, Cin / group, kh, kw], optional bias [Cout]; one float type (fp32 or
// fp16, fp32 math). Output [N, Cout, Ho, Wo], Ho = (H + 2 * pad - dilation * (kh - 1) - 1) / stride + 1. A tap
// samples x bilinearly at (oh * stride - pad + i * dilation + dy, ...); samples outside the image read 0.
// Fields: stride, padding, dilation (2 ints each; defaults 1, 0, 1), group, deformable_group (int, default 1).
#include <cmath>

#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"
#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

struct DeformParams {
  std::vector<int32_t> stride{1, 1}, padding{0, 0}, dilation{1, 1};
  int32_t group = 1, deformableGroup = 1;
};

std::string checkParams(DeformParams const& p) {
  if (p.stride.size() != 2 || p.padding.size() != 2 || p.dilation.size() != 2) {
    return "stride, padding and dilation must hold 2 values each";
  }
  if (p.stride[0] < 1 || p.stride[1] < 1 || p.dilation[0] < 1 || p.dilation[1] < 1) {
    return "stride and dilation must be >= 1";
  }
  if (p.padding[0] < 0 || p.padding[1] < 0) return "padding must be >= 0";
  if (p.group < 1 || p.deformableGroup < 1) return "group and deformable_group must be >= 1";
  return "";
}

// Bilinear sample of an h x w plane at (y, x); corners outside the plane read 0, points beyond (-1, h) x (-1, w)
// give 0.
float sample(float const* plane, int64_t h, int64_t w, float y, float x) {
  if (y <= -1.f || y >= static_cast<float>(h) || x <= -1.f || x >= static_cast<float>(w)) return 0.f;
  int64_t y0 = static_cast<int64_t>(std::floor(y)), x0 = static_cast<int64_t>(std::floor(x));
  float ly = y - static_cast<float>(y0), lx = x - static_cast<float>(x0), hy = 1.f - ly, hx = 1.f - lx;
  auto at = [&](int64_t r, int64_t c) { return (r >= 0 && r < h && c >= 0 && c < w) ? plane[r * w + c] : 0.f; };
  return hy * hx * at(y0, x0) + hy * lx * at(y0, x0 + 1) + ly * hx * at(y0 + 1, x0) + ly * lx * at(y0 + 1, x0 + 1);
}

class DeformConv final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = "ModulatedDeformConv2d";
  static constexpr char const* kVersion = "1";
  DeformConv(DeformParams p, int32_t nbInputs) : BuiltinPlugin(kName, kVersion), p_(std::move(p)), nbInputs_(nbInputs) {}

  static std::vector<PluginField> fieldList() {
    return {fieldSpec("stride", PluginFieldType::kINT32, 2), fieldSpec("padding", PluginFieldType::kINT32, 2),
            fieldSpec("dilation", PluginFieldType::kINT32, 2), fieldSpec("group", PluginFieldType::kINT32),
            fieldSpec("deformable_group", PluginFieldType::kINT32)};
  }
  static DeformConv* create(FieldReader& f) {
    DeformParams p;
    f.getInts("stride", p.stride);
    f.getInts("padding", p.padding);
    f.getInts("dilation", p.dilation);
    f.getInt("group", p.group);
    f.getInt("deformable_group", p.deformableGroup);
    if (f.ok()) f.require(checkParams(p).empty(), checkParams(p));
    return f.ok() ? new DeformConv(std::move(p), 4) : nullptr;
  }
  static DeformConv* deserialize(ByteReader& r) {
    DeformParams p;
    int32_t nbInputs = 0;
    bool ok = r.getInts(p.stride) && r.getInts(p.padding) && r.getInts(p.dilation) && r.get(p.group) &&
              r.get(p.deformableGroup) && r.get(nbInputs) && (nbInputs == 4 || nbInputs == 5);
    return ok && checkParams(p).empty() ? new DeformConv(std::move(p), nbInputs) : nullptr;
  }

  int32_t getNbOutputs() const noexcept override { return 1; }
  IPluginV2DynamicExt* clone() const noexcept override { return finishClone(new (std::nothrow) DeformConv(p_, nbInputs_)); }
  DimsExprs getOutputDimensions(int32_t, DimsExprs const* inputs, int32_t nbInputs, IExprBuilder& b) noexcept override {
    DimsExprs out{};
    if ((nbInputs != 4 && nbInputs != 5) || inputs[0].nbDims != 4 || inputs[3].nbDims != 4) {
      out.nbDims = -1;
      return out;
    }
    nbInputs_ = nbInputs;  // 5 with a bias
    out.nbDims = 4;
    out.d[0] = inputs[0].d[0];
    out.d[1] = inputs[3].d[0];
    for (int32_t k = 0; k < 2; ++k) {
      // (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1
      auto const* span = b.operation(DimensionOperation::kPROD, *b.constant(p_.dilation[k]),
                                     *b.operation(DimensionOperation::kSUB, *inputs[3].d[2 + k], *b.constant(1)));
      auto const* num = b.operation(DimensionOperation::kSUB,
                                    *b.operation(DimensionOperation::kSUM, *inputs[0].d[2 + k], *b.constant(2 * p_.padding[k] - 1)),
                                    *span);
      out.d[2 + k] = b.operation(DimensionOperation::kSUM,
                                 *b.operation(DimensionOperation::kFLOOR_DIV, *num, *b.constant(p_.stride[k])),
                                 *b.constant(1));
    }
    return out;
  }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    if ((nbInputs != 4 && nbInputs != 5) || nbOutputs != 1 || pos < 0 || pos > nbInputs) return false;
    nbInputs_ = nbInputs;
    return linearFloat(inOut[pos], true) && inOut[pos].type == inOut[0].type;
  }
  bool hasCuda() const noexcept override { return KILN_PLUGINS_HAVE_CUDA != 0; }

 protected:
  void writeParams(ByteWriter& w) const override {
    w.putInts(p_.stride);
    w.putInts(p_.padding);
    w.putInts(p_.dilation);
    w.put(p_.group);
    w.put(p_.deformableGroup);
    w.put(nbInputs_);
  }
  struct Geo {
    int64_t n, cin, h, w, cout, kh, kw, ho, wo;
  };
  std::string geometry(PluginTensorDesc const* in, PluginTensorDesc const* out, bool bias, Geo& g) const {
    Dims const& x = in[0].dims;
    Dims const& wt = in[3].dims;
    if (x.nbDims != 4 || wt.nbDims != 4) return "x and weight must be 4-D, got " + dimsString(x) + ", " + dimsString(wt);
    g = {x.d[0], x.d[1], x.d[2], x.d[3], wt.d[0], wt.d[2], wt.d[3], out[0].dims.d[2], out[0].dims.d[3]};
    if (g.cin % p_.group != 0 || g.cout % p_.group != 0 || wt.d[1] != g.cin / p_.group) {
      return "weight must be [Cout, Cin / group = " + std::to_string(g.cin / p_.group) + ", kh, kw] with Cin and Cout "
             "divisible by group " + std::to_string(p_.group) + ", got " + dimsString(wt) + " for x " + dimsString(x);
    }
    if (g.cin % p_.deformableGroup != 0) {
      return "Cin (" + std::to_string(g.cin) + ") must be divisible by deformable_group " +
             std::to_string(p_.deformableGroup);
    }
    if (g.ho <= 0 || g.wo <= 0) return "the output would be empty for x " + dimsString(x);
    int64_t taps = p_.deformableGroup * g.kh * g.kw;
    Dims const& off = in[1].dims;
    Dims const& m = in[2].dims;
    auto is = [&](Dims const& d, int64_t c) {
      return d.nbDims == 4 && d.d[0] == g.n && d.d[1] == c && d.d[2] == g.ho && d.d[3] == g.wo;
    };
    if (!is(off, 2 * taps)) {
      return "offset must be [" + std::to_string(g.n) + ", " + std::to_string(2 * taps) + ", " + std::to_string(g.ho) +
             ", " + std::to_string(g.wo) + "], got " + dimsString(off);
    }
    if (!is(m, taps)) {
      return "mask must be [" + std::to_string(g.n) + ", " + std::to_string(taps) + ", " + std::to_string(g.ho) + ", " +
             std::to_string(g.wo) + "], got " + dimsString(m);
    }
    if (bias && volume(in[4].dims) != g.cout) return "bias must hold Cout = " + std::to_string(g.cout) + " values";
    return "";
  }
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const* out, void const* const* inputs,
                          void* const* outputs, void*) override {
    bool bias = nbInputs_ == 5;
    Geo g{};
    if (auto err = geometry(in, out, bias, g); !err.empty()) return err;
    std::vector<float> x = loadFloats(in[0].type, inputs[0], volume(in[0].dims));
    std::vector<float> off = loadFloats(in[1].type, inputs[1], volume(in[1].dims));
    std::vector<float> mask = loadFloats(in[2].type, inputs[2], volume(in[2].dims));
    std::vector<float> wt = loadFloats(in[3].type, inputs[3], volume(in[3].dims));
    std::vector<float> bs = bias ? loadFloats(in[4].type, inputs[4], g.cout) : std::vector<float>(static_cast<size_t>(g.cout), 0.f);
    std::vector<float> y(static_cast<size_t>(g.n * g.cout * g.ho * g.wo));
    int64_t cinG = g.cin / p_.group, coutG = g.cout / p_.group, chPerDg = g.cin / p_.deformableGroup, kk = g.kh * g.kw;
    int64_t plane = g.ho * g.wo;
    for (int64_t b = 0; b < g.n; ++b) {
      for (int64_t co = 0; co < g.cout; ++co) {
        int64_t grp = co / coutG;
        for (int64_t oh = 0; oh < g.ho; ++oh) {
          for (int64_t ow = 0; ow < g.wo; ++ow) {
            float acc = bs[static_cast<size_t>(co)];
            for (int64_t ci = 0; ci < cinG; ++ci) {
              int64_t c = grp * cinG + ci, dg = c / chPerDg;
              float const* xp = &x[static_cast<size_t>((b * g.cin + c) * g.h * g.w)];
              for (int64_t i = 0; i < g.kh; ++i) {
                for (int64_t j = 0; j < g.kw; ++j) {
                  int64_t tap = dg * kk + i * g.kw + j;
                  float dy = off[static_cast<size_t>(((b * 2 * p_.deformableGroup * kk + 2 * tap) * plane) + oh * g.wo + ow)];
                  float dx = off[static_cast<size_t>(((b * 2 * p_.deformableGroup * kk + 2 * tap + 1) * plane) + oh * g.wo + ow)];
                  float mk = mask[static_cast<size_t>((b * p_.deformableGroup * kk + tap) * plane + oh * g.wo + ow)];
                  float yy = static_cast<float>(oh * p_.stride[0] - p_.padding[0] + i * p_.dilation[0]) + dy;
                  float xx = static_cast<float>(ow * p_.stride[1] - p_.padding[1] + j * p_.dilation[1]) + dx;
                  acc += wt[static_cast<size_t>(((co * cinG + ci) * g.kh + i) * g.kw + j)] * sample(xp, g.h, g.w, yy, xx) * mk;
                }
              }
            }
            y[static_cast<size_t>(((b * g.cout + co) * g.ho + oh) * g.wo + ow)] = acc;
          }
        }
      }
    }
    storeFloats(out[0].type, y.data(), static_cast<int64_t>(y.size()), outputs[0]);
    return "";
  }
#if KILN_PLUGINS_HAVE_CUDA
  std::string cudaCompute(PluginTensorDesc const* in, PluginTensorDesc const* out, void const* const* inputs,
                          void* const* outputs, void*, cudaStream_t stream) override {
    bool bias = nbInputs_ == 5;
    Geo g{};
    if (auto err = geometry(in, out, bias, g); !err.empty()) return err;
    cuda::DeformConvArgs a;
    a.x = inputs[0];
    a.offset = inputs[1];
    a.mask = inputs[2];
    a.weight = inputs[3];
    a.bias = bias ? inputs[4] : nullptr;
    a.out = outputs[0];
    a.n = g.n;
    a.cin = g.cin;
    a.h = g.h;
    a.w = g.w;
    a.cout = g.cout;
    a.kh = g.kh;
    a.kw = g.kw;
    a.ho = g.ho;
    a.wo = g.wo;
    a.strideH = p_.stride[0];
    a.strideW = p_.stride[1];
    a.padH = p_.padding[0];
    a.padW = p_.padding[1];
    a.dilH = p_.dilation[0];
    a.dilW = p_.dilation[1];
    a.group = p_.group;
    a.deformableGroup = p_.deformableGroup;
    a.half = in[0].type == DataType::kHALF;
    return cuda::launchDeformConv(a, stream);
  }
#endif

 public:
  void configurePlugin(DynamicPluginTensorDesc const*, int32_t nbInputs, DynamicPluginTensorDesc const*,
                       int32_t) noexcept override {
    if (nbInputs == 4 || nbInputs == 5) nbInputs_ = nbInputs;
  }

 private:
  DeformParams p_;
  int32_t nbInputs_;  // 5 with a bias; learnt from getOutputDimensions / supportsFormatCombination / configurePlugin
};

}  // namespace

std::unique_ptr<IPluginCreator> makeDeformConvCreator() { return std::make_unique<BuiltinCreator<DeformConv>>(); }

}  // namespace kiln::plugin
