// Helpers for driving a V2 dynamic plugin outside an engine (the built-in plugins' tests and kiln-plugin-check):
// building PluginFieldCollections, creating plugins through their creators, evaluating output shapes with
// ShapeExprBuilder, and running enqueueHost on host tensors. Header-only; public Kiln headers plus
// expr_builder.h.
#pragma once

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln_plugin.h"
#include "plugins/builtin/common/expr_builder.h"

namespace kiln::plugin::testing {

/// Owns field values and the PluginFieldCollection pointing at them.
class FieldSet {
 public:
  FieldSet& add(std::string name, float v) { return addRaw(std::move(name), PluginFieldType::kFLOAT32, &v, 1, 4); }
  FieldSet& add(std::string name, int32_t v) { return addRaw(std::move(name), PluginFieldType::kINT32, &v, 1, 4); }
  FieldSet& add(std::string name, std::vector<float> const& v) {
    return addRaw(std::move(name), PluginFieldType::kFLOAT32, v.data(), static_cast<int32_t>(v.size()), 4);
  }
  FieldSet& add(std::string name, std::vector<int32_t> const& v) {
    return addRaw(std::move(name), PluginFieldType::kINT32, v.data(), static_cast<int32_t>(v.size()), 4);
  }
  /// A field of any type: `length` elements of `elementBytes` bytes at `data`.
  FieldSet& addRaw(std::string name, PluginFieldType type, void const* data, int32_t length, size_t elementBytes) {
    auto e = std::make_unique<Entry>();
    e->name = std::move(name);
    e->bytes.resize(static_cast<size_t>(length) * elementBytes);
    if (!e->bytes.empty()) std::memcpy(e->bytes.data(), data, e->bytes.size());
    e->type = type;
    e->length = length;
    entries_.push_back(std::move(e));
    return *this;
  }
  /// The collection (valid while this FieldSet lives and is not changed).
  PluginFieldCollection const* get() {
    fields_.clear();
    for (auto& e : entries_) fields_.emplace_back(e->name.c_str(), e->bytes.data(), e->type, e->length);
    fc_.nbFields = static_cast<int32_t>(fields_.size());
    fc_.fields = fields_.data();
    return &fc_;
  }

 private:
  struct Entry {
    std::string name;
    std::vector<char> bytes;
    PluginFieldType type;
    int32_t length;
  };
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<PluginField> fields_;
  PluginFieldCollection fc_{};
};

/// Releases plugins with destroy().
struct PluginDeleter {
  void operator()(IPluginV2* p) const {
    if (p) p->destroy();
  }
};
using PluginPtr = std::unique_ptr<IPluginV2DynamicExt, PluginDeleter>;

/// createPlugin through `creator`, as an IPluginV2DynamicExt (null when refused or of another kind).
inline PluginPtr createPlugin(IPluginCreator& creator, PluginFieldCollection const* fc, char const* name = "test") {
  IPluginV2* p = creator.createPlugin(name, fc);
  auto* d = dynamic_cast<IPluginV2DynamicExt*>(p);
  if (!d && p) p->destroy();
  return PluginPtr(d);
}

/// Serializes `p` and rebuilds it through `creator`'s deserializePlugin (null when that fails).
inline PluginPtr reserialize(IPluginCreator& creator, IPluginV2DynamicExt const& p, std::vector<char>* bytes = nullptr) {
  std::vector<char> buf(p.getSerializationSize());
  p.serialize(buf.data());
  IPluginV2* q = creator.deserializePlugin("test", buf.data(), buf.size());
  if (bytes) *bytes = buf;
  auto* d = dynamic_cast<IPluginV2DynamicExt*>(q);
  if (!d && q) q->destroy();
  return PluginPtr(d);
}

/// A clone as a PluginPtr.
inline PluginPtr clonePlugin(IPluginV2DynamicExt const& p) { return PluginPtr(p.clone()); }

/// The serialized bytes of `p`.
inline std::vector<char> serialized(IPluginV2DynamicExt const& p) {
  std::vector<char> buf(p.getSerializationSize());
  p.serialize(buf.data());
  return buf;
}

/// Output shapes for concrete input shapes (constant expressions); nbDims -1 for one that did not evaluate.
inline std::vector<Dims> outputShapes(IPluginV2DynamicExt& p, std::vector<Dims> const& inputs) {
  ShapeExprBuilder b;
  std::vector<DimsExprs> in;
  for (auto const& d : inputs) in.push_back(b.constants(d));
  std::vector<Dims> out;
  for (int32_t i = 0; i < p.getNbOutputs(); ++i) {
    out.push_back(ShapeExprBuilder::evaluate(
        p.getOutputDimensions(i, in.data(), static_cast<int32_t>(in.size()), b), inputs));
  }
  return out;
}

/// Output shapes from symbolic inputs (each input dimension a symbol), evaluated at `inputs`.
inline std::vector<Dims> symbolicOutputShapes(IPluginV2DynamicExt& p, std::vector<Dims> const& inputs) {
  ShapeExprBuilder b;
  std::vector<DimsExprs> in;
  for (size_t i = 0; i < inputs.size(); ++i) in.push_back(b.symbols(static_cast<int32_t>(i), inputs[i].nbDims));
  std::vector<Dims> out;
  for (int32_t i = 0; i < p.getNbOutputs(); ++i) {
    out.push_back(ShapeExprBuilder::evaluate(
        p.getOutputDimensions(i, in.data(), static_cast<int32_t>(in.size()), b), inputs));
  }
  return out;
}

/// Bytes per element of the types the built-ins use.
inline size_t elementSize(DataType t) {
  if (t == DataType::kHALF || t == DataType::kBF16) return 2;
  if (t == DataType::kINT8 || t == DataType::kUINT8 || t == DataType::kBOOL || t == DataType::kFP8) return 1;
  if (t == DataType::kINT64) return 8;
  return 4;
}

/// A host tensor: descriptor plus bytes.
struct HostTensor {
  PluginTensorDesc desc{};
  std::vector<char> bytes;
  HostTensor() = default;
  HostTensor(Dims d, DataType t) {
    desc.dims = d;
    desc.type = t;
    desc.format = TensorFormat::kLINEAR;
    desc.scale = -1.f;
    int64_t n = 1;
    for (int32_t i = 0; i < d.nbDims; ++i) n *= d.d[i] > 0 ? d.d[i] : 0;
    bytes.assign(static_cast<size_t>(n) * elementSize(t), 0);
  }
  int64_t count() const { return static_cast<int64_t>(bytes.size() / elementSize(desc.type)); }
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(bytes.data());
  }
  template <typename T>
  T const* as() const {
    return reinterpret_cast<T const*>(bytes.data());
  }
};

/// Shorthand Dims.
inline Dims dims(std::initializer_list<int64_t> v) {
  Dims d{};
  d.nbDims = static_cast<int32_t>(v.size());
  int32_t i = 0;
  for (int64_t x : v) d.d[i++] = x;
  return d;
}

/// An fp32 tensor holding `values`.
inline HostTensor floats(Dims d, std::vector<float> const& values) {
  HostTensor t(d, DataType::kFLOAT);
  std::memcpy(t.bytes.data(), values.data(), std::min(t.bytes.size(), values.size() * sizeof(float)));
  return t;
}
/// An int32 tensor holding `values`.
inline HostTensor ints(Dims d, std::vector<int32_t> const& values) {
  HostTensor t(d, DataType::kINT32);
  std::memcpy(t.bytes.data(), values.data(), std::min(t.bytes.size(), values.size() * sizeof(int32_t)));
  return t;
}

/// Output tensors (shapes from outputShapes, types from getOutputDataType) for `inputs`.
inline std::vector<HostTensor> makeOutputs(IPluginV2DynamicExt& p, std::vector<HostTensor> const& inputs) {
  std::vector<Dims> in;
  std::vector<DataType> types;
  for (auto const& t : inputs) {
    in.push_back(t.desc.dims);
    types.push_back(t.desc.type);
  }
  std::vector<Dims> shapes = outputShapes(p, in);
  std::vector<HostTensor> out;
  for (int32_t i = 0; i < p.getNbOutputs(); ++i) {
    out.emplace_back(shapes[static_cast<size_t>(i)],
                     p.getOutputDataType(i, types.data(), static_cast<int32_t>(types.size())));
  }
  return out;
}

/// configurePlugin with the tensors' exact shapes.
inline void configure(IPluginV2DynamicExt& p, std::vector<HostTensor> const& in, std::vector<HostTensor> const& out) {
  auto desc = [](HostTensor const& t) {
    DynamicPluginTensorDesc d{};
    d.desc = t.desc;
    d.min = d.max = d.opt = t.desc.dims;
    return d;
  };
  std::vector<DynamicPluginTensorDesc> a, b;
  for (auto const& t : in) a.push_back(desc(t));
  for (auto const& t : out) b.push_back(desc(t));
  p.configurePlugin(a.data(), static_cast<int32_t>(a.size()), b.data(), static_cast<int32_t>(b.size()));
}

/// Runs enqueueHost of `p` (which must implement IPluginHostExecution) on `inputs` into `outputs` (allocated
/// with makeOutputs when empty); returns its status (-1 when the plugin has no host execution).
inline int32_t runHost(IPluginV2DynamicExt& p, std::vector<HostTensor> const& inputs, std::vector<HostTensor>& outputs) {
  auto* host = dynamic_cast<IPluginHostExecution*>(&p);
  if (!host) return -1;
  if (outputs.empty()) outputs = makeOutputs(p, inputs);
  configure(p, inputs, outputs);
  std::vector<PluginTensorDesc> id, od;
  std::vector<void const*> ip;
  std::vector<void*> op;
  for (auto const& t : inputs) {
    id.push_back(t.desc);
    ip.push_back(t.bytes.data());
  }
  for (auto& t : outputs) {
    od.push_back(t.desc);
    op.push_back(t.bytes.data());
  }
  size_t ws = p.getWorkspaceSize(id.data(), static_cast<int32_t>(id.size()), od.data(), static_cast<int32_t>(od.size()));
  std::vector<char> workspace(ws);
  return host->enqueueHost(id.data(), od.data(), ip.data(), op.data(), ws ? workspace.data() : nullptr);
}

/// Uniform random floats in [lo, hi).
inline std::vector<float> randomFloats(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

}  // namespace kiln::plugin::testing
