// ScatterND (version 1): out = data with slices replaced by updates at the int32 index tuples of `indices`
// (ONNX ScatterND without reduction). Inputs: data (fp32, fp16 or int32), indices (int32, [..., k]), updates
// (data's type, indices.shape[:-1] + data.shape[k:]). No fields. An index outside data fails the run.
#include "plugins/builtin/builtin_list.h"
#include "plugins/builtin/common/plugin_common.h"
#if KILN_PLUGINS_HAVE_CUDA
#include "plugins/builtin/cuda/launch.h"
#endif

namespace kiln::plugin {
namespace {

struct ScatterGeometry {
  int32_t k = 0;
  int64_t nUpdates = 0;
  int64_t slice = 1;
  int64_t dataVolume = 0;
  int64_t dims[Dims::MAX_DIMS]{};
  int64_t strides[Dims::MAX_DIMS]{};
};

int32_t elementBytes(DataType t) { return t == DataType::kHALF ? 2 : 4; }

class ScatterNd final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = "ScatterND";
  static constexpr char const* kVersion = "1";
  ScatterNd() : BuiltinPlugin(kName, kVersion) {}

  static std::vector<PluginField> fieldList() { return {}; }
  static ScatterNd* create(FieldReader& f) { return f.ok() ? new ScatterNd() : nullptr; }
  static ScatterNd* deserialize(ByteReader&) { return new ScatterNd(); }

  int32_t getNbOutputs() const noexcept override { return 1; }
  IPluginV2DynamicExt* clone() const noexcept override { return finishClone(new (std::nothrow) ScatterNd()); }
  DimsExprs getOutputDimensions(int32_t, DimsExprs const* inputs, int32_t, IExprBuilder&) noexcept override {
    return inputs[0];
  }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    if (nbInputs != 3 || nbOutputs != 1 || pos < 0 || pos > 3) return false;
    PluginTensorDesc const& d = inOut[pos];
    if (d.format != TensorFormat::kLINEAR) return false;
    if (pos == 1) return d.type == DataType::kINT32;
    if (pos == 0) return d.type == DataType::kFLOAT || d.type == DataType::kHALF || d.type == DataType::kINT32;
    return d.type == inOut[0].type;
  }
  bool hasCuda() const noexcept override { return KILN_PLUGINS_HAVE_CUDA != 0; }

 protected:
  void writeParams(ByteWriter&) const override {}
  static std::string geometry(PluginTensorDesc const* in, ScatterGeometry& g) {
    Dims const& data = in[0].dims;
    Dims const& idx = in[1].dims;
    Dims const& upd = in[2].dims;
    if (idx.nbDims < 1) return "indices must have rank >= 1, got " + dimsString(idx);
    g.k = static_cast<int32_t>(idx.d[idx.nbDims - 1]);
    if (g.k < 1 || g.k > data.nbDims) {
      return "the last dimension of indices (" + std::to_string(g.k) + ") must be in [1, rank(data) = " +
             std::to_string(data.nbDims) + "]";
    }
    // updates.shape == indices.shape[:-1] + data.shape[k:]
    Dims want{};
    want.nbDims = idx.nbDims - 1 + data.nbDims - g.k;
    int32_t j = 0;
    for (int32_t i = 0; i + 1 < idx.nbDims; ++i) want.d[j++] = idx.d[i];
    for (int32_t i = g.k; i < data.nbDims; ++i) want.d[j++] = data.d[i];
    bool same = upd.nbDims == want.nbDims;
    for (int32_t i = 0; same && i < want.nbDims; ++i) same = upd.d[i] == want.d[i];
    if (!same) return "updates must have shape " + dimsString(want) + ", got " + dimsString(upd);
    g.dataVolume = volume(data);
    g.nUpdates = volume(idx) / g.k;
    g.slice = 1;
    for (int32_t i = g.k; i < data.nbDims; ++i) g.slice *= data.d[i];
    int64_t stride = g.slice;
    for (int32_t i = g.k - 1; i >= 0; --i) {
      g.dims[i] = data.d[i];
      g.strides[i] = stride;
      stride *= data.d[i];
    }
    return "";
  }
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*) override {
    ScatterGeometry g;
    if (auto err = geometry(in, g); !err.empty()) return err;
    size_t eb = static_cast<size_t>(elementBytes(in[0].type));
    auto* out = static_cast<char*>(outputs[0]);
    if (outputs[0] != inputs[0]) std::memcpy(out, inputs[0], static_cast<size_t>(g.dataVolume) * eb);
    auto const* idx = static_cast<int32_t const*>(inputs[1]);
    auto const* upd = static_cast<char const*>(inputs[2]);
    for (int64_t u = 0; u < g.nUpdates; ++u) {
      int64_t offset = 0;
      for (int32_t i = 0; i < g.k; ++i) {
        int64_t v = idx[u * g.k + i];
        if (v < 0) v += g.dims[i];
        if (v < 0 || v >= g.dims[i]) {
          return "index " + std::to_string(idx[u * g.k + i]) + " of update " + std::to_string(u) + " is outside data dimension " +
                 std::to_string(i) + " (size " + std::to_string(g.dims[i]) + ")";
        }
        offset += v * g.strides[i];
      }
      std::memcpy(out + offset * eb, upd + u * g.slice * eb, static_cast<size_t>(g.slice) * eb);
    }
    return "";
  }
#if KILN_PLUGINS_HAVE_CUDA
  std::string cudaCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*, cudaStream_t stream) override {
    ScatterGeometry g;
    if (auto err = geometry(in, g); !err.empty()) return err;
    return cuda::launchScatterNd(inputs[0], static_cast<int32_t const*>(inputs[1]), inputs[2], outputs[0],
                                 g.dataVolume, g.nUpdates, g.k, g.dims, g.strides, g.slice,
                                 elementBytes(in[0].type), stream);
  }
#endif
};

}  // namespace

std::unique_ptr<IPluginCreator> makeScatterNdCreator() { return std::make_unique<BuiltinCreator<ScatterNd>>(); }

}  // namespace kiln::plugin
