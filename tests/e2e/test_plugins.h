// Plugins the plugin end-to-end tests run, written as TensorRT users write them (public API only), each with a
// creator: a V2 "scaled add" (fp32 only), a V3 one (fp32 or fp16, a shape expression per output, fields of
// several types), and a V2 plugin without host execution. Every one checks that no object runs from two
// threads at once and counts its calls.
#pragma once

#include <kiln/kiln_plugin.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace kiln_test {

/// Calls observed across all plugin objects (reset by the tests).
struct PluginCounters {
  std::atomic<int> enqueues{0};
  std::atomic<int> concurrentRuns{0};  // a plugin object entered while it was already running
  std::atomic<int> configures{0};
  std::atomic<int> shapeChanges{0};
  std::atomic<int> attaches{0};
  std::atomic<int> initializes{0};
  std::atomic<int> terminates{0};
  std::atomic<int> live{0};  // plugin objects alive
  std::atomic<size_t> lastWorkspace{0};
  std::atomic<int> lastTactic{-1};  // the V3 tactic of the last enqueueHost
};
inline PluginCounters& counters() {
  static PluginCounters c;
  return c;
}

inline float halfToFloat(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 31, man = h & 1023;
  float v = exp == 0 ? std::ldexp(static_cast<float>(man), -24)
                     : exp == 31 ? INFINITY : std::ldexp(static_cast<float>(man | 1024), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}
inline uint16_t floatToHalf(float f) {
  // Enough for the test values (normal range, round to nearest).
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  float a = std::fabs(f);
  if (a == 0) return static_cast<uint16_t>(sign);
  int e;
  float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int he = e + 14;
  if (he <= 0) return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::lround(a * 16777216.0f)));
  uint32_t hm = static_cast<uint32_t>(std::lround((m * 2 - 1) * 1024));
  if (hm == 1024) {
    hm = 0;
    ++he;
  }
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(he) << 10) | hm);
}

// Marks a plugin object busy while it runs.
class RunGuard {
 public:
  explicit RunGuard(std::atomic<bool>& busy) : busy_(busy) {
    if (busy_.exchange(true)) ++counters().concurrentRuns;
    ++counters().enqueues;
  }
  ~RunGuard() { busy_.store(false); }

 private:
  std::atomic<bool>& busy_;
};

inline int64_t volumeOf(kiln::Dims const& d) {
  int64_t n = 1;
  for (int32_t i = 0; i < d.nbDims; ++i) n *= d.d[i];
  return n;
}

// The math of both plugins: out0 = alpha * a + b + beta (same shape), out1 = a stacked on b along axis 0
// ([a.d0 + b.d0, rest]). The scaled a goes through the workspace.
template <typename Load, typename Store>
void scaledAdd(int64_t n, float alpha, float beta, Load load, Store store, float* ws) {
  for (int64_t i = 0; i < n; ++i) ws[i] = alpha * load(0, i);
  for (int64_t i = 0; i < n; ++i) store(0, i, ws[i] + load(1, i) + beta);
  for (int64_t i = 0; i < n; ++i) store(1, i, load(0, i));
  for (int64_t i = 0; i < n; ++i) store(1, n + i, load(1, i));
}

inline int32_t runScaledAdd(kiln::PluginTensorDesc const* in, void const* const* inputs, void* const* outputs,
                            void* workspace, float alpha, float beta) {
  int64_t n = volumeOf(in[0].dims);
  if (!workspace && n > 0) return 2;
  auto* ws = static_cast<float*>(workspace);
  if (in[0].type == kiln::DataType::kFLOAT) {
    auto load = [&](int k, int64_t i) { return static_cast<float const*>(inputs[k])[i]; };
    auto store = [&](int k, int64_t i, float v) { static_cast<float*>(outputs[k])[i] = v; };
    scaledAdd(n, alpha, beta, load, store, ws);
    return 0;
  }
  if (in[0].type == kiln::DataType::kHALF) {
    auto load = [&](int k, int64_t i) { return halfToFloat(static_cast<uint16_t const*>(inputs[k])[i]); };
    auto store = [&](int k, int64_t i, float v) { static_cast<uint16_t*>(outputs[k])[i] = floatToHalf(v); };
    scaledAdd(n, alpha, beta, load, store, ws);
    return 0;
  }
  return 3;
}

// Output shapes: out0 = a's shape, out1 = [a.d0 + b.d0, a.d1...].
inline kiln::DimsExprs scaledAddShape(int32_t index, kiln::DimsExprs const* inputs, kiln::IExprBuilder& eb) {
  kiln::DimsExprs out = inputs[0];
  if (index == 1) out.d[0] = eb.operation(kiln::DimensionOperation::kSUM, *inputs[0].d[0], *inputs[1].d[0]);
  return out;
}

//
// V2: "KilnTestScaledAddV2" version "1", float32 only, field alpha (kFLOAT32), host and "device" execution.
//

class ScaledAddV2 : public kiln::IPluginV2DynamicExt, public kiln::IPluginHostExecution {
 public:
  explicit ScaledAddV2(float alpha) : alpha_(alpha) { ++counters().live; }
  ScaledAddV2(ScaledAddV2 const& o) : kiln::IPluginV2DynamicExt(o), kiln::IPluginHostExecution(o), alpha_(o.alpha_), ns_(o.ns_) {
    ++counters().live;
  }
  ~ScaledAddV2() override { --counters().live; }

  char const* getPluginType() const noexcept override { return "KilnTestScaledAddV2"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  int32_t getNbOutputs() const noexcept override { return 2; }
  int32_t initialize() noexcept override {
    ++counters().initializes;
    return 0;
  }
  void terminate() noexcept override { ++counters().terminates; }
  size_t getSerializationSize() const noexcept override { return sizeof(float); }
  void serialize(void* buffer) const noexcept override { std::memcpy(buffer, &alpha_, sizeof(float)); }
  void destroy() noexcept override { delete this; }
  kiln::IPluginV2DynamicExt* clone() const noexcept override { return new ScaledAddV2(*this); }
  void setPluginNamespace(char const* ns) noexcept override { ns_ = ns ? ns : ""; }
  char const* getPluginNamespace() const noexcept override { return ns_.c_str(); }
  kiln::DataType getOutputDataType(int32_t, kiln::DataType const*, int32_t) const noexcept override {
    return kiln::DataType::kFLOAT;
  }
  kiln::DimsExprs getOutputDimensions(int32_t outputIndex, kiln::DimsExprs const* inputs, int32_t,
                                      kiln::IExprBuilder& eb) noexcept override {
    return scaledAddShape(outputIndex, inputs, eb);
  }
  bool supportsFormatCombination(int32_t pos, kiln::PluginTensorDesc const* inOut, int32_t, int32_t) noexcept override {
    return inOut[pos].type == kiln::DataType::kFLOAT && inOut[pos].format == kiln::TensorFormat::kLINEAR;
  }
  void configurePlugin(kiln::DynamicPluginTensorDesc const*, int32_t, kiln::DynamicPluginTensorDesc const*,
                       int32_t) noexcept override {
    ++counters().configures;
  }
  size_t getWorkspaceSize(kiln::PluginTensorDesc const* inputs, int32_t, kiln::PluginTensorDesc const*,
                          int32_t) const noexcept override {
    size_t ws = static_cast<size_t>(volumeOf(inputs[0].dims)) * sizeof(float);
    counters().lastWorkspace = ws;
    return ws;
  }
  int32_t enqueue(kiln::PluginTensorDesc const* inputDesc, kiln::PluginTensorDesc const*, void const* const* inputs,
                  void* const* outputs, void* workspace, cudaStream_t) noexcept override {
    return 7;  // no device code in the tests
  }
  int32_t enqueueHost(kiln::PluginTensorDesc const* inputDesc, kiln::PluginTensorDesc const*, void const* const* inputs,
                      void* const* outputs, void* workspace) noexcept override {
    RunGuard g(busy_);
    return runScaledAdd(inputDesc, inputs, outputs, workspace, alpha_, 0.0f);
  }
  void attachToContext(cudnnContext*, cublasContext*, kiln::IGpuAllocator*) noexcept override { ++counters().attaches; }

 private:
  float alpha_;
  std::string ns_;
  std::atomic<bool> busy_{false};
};

/// A V2 plugin without host execution (GPU-only): a CPU build must refuse it.
class GpuOnlyV2 final : public kiln::IPluginV2DynamicExt {
 public:
  char const* getPluginType() const noexcept override { return "KilnTestGpuOnly"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  int32_t getNbOutputs() const noexcept override { return 1; }
  int32_t initialize() noexcept override { return 0; }
  void terminate() noexcept override {}
  size_t getSerializationSize() const noexcept override { return 0; }
  void serialize(void*) const noexcept override {}
  void destroy() noexcept override { delete this; }
  kiln::IPluginV2DynamicExt* clone() const noexcept override { return new GpuOnlyV2(); }
  void setPluginNamespace(char const*) noexcept override {}
  char const* getPluginNamespace() const noexcept override { return ""; }
  kiln::DataType getOutputDataType(int32_t, kiln::DataType const* t, int32_t) const noexcept override { return t[0]; }
  kiln::DimsExprs getOutputDimensions(int32_t, kiln::DimsExprs const* inputs, int32_t, kiln::IExprBuilder&) noexcept override {
    return inputs[0];
  }
  bool supportsFormatCombination(int32_t pos, kiln::PluginTensorDesc const* inOut, int32_t, int32_t) noexcept override {
    return inOut[pos].type == kiln::DataType::kFLOAT;
  }
  void configurePlugin(kiln::DynamicPluginTensorDesc const*, int32_t, kiln::DynamicPluginTensorDesc const*,
                       int32_t) noexcept override {}
  size_t getWorkspaceSize(kiln::PluginTensorDesc const*, int32_t, kiln::PluginTensorDesc const*, int32_t) const noexcept override {
    return 0;
  }
  int32_t enqueue(kiln::PluginTensorDesc const*, kiln::PluginTensorDesc const*, void const* const*, void* const*, void*,
                  cudaStream_t) noexcept override {
    return 0;
  }
};

class ScaledAddV2Creator final : public kiln::IPluginCreator {
 public:
  ScaledAddV2Creator() {
    fields_.emplace_back("alpha", nullptr, kiln::PluginFieldType::kFLOAT32, 1);
    fc_.nbFields = static_cast<int32_t>(fields_.size());
    fc_.fields = fields_.data();
  }
  char const* getPluginName() const noexcept override { return "KilnTestScaledAddV2"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  kiln::PluginFieldCollection const* getFieldNames() noexcept override { return &fc_; }
  kiln::IPluginV2* createPlugin(char const*, kiln::PluginFieldCollection const* fc) noexcept override {
    float alpha = 1.0f;
    for (int32_t i = 0; fc && i < fc->nbFields; ++i) {
      auto const& f = fc->fields[i];
      if (std::strcmp(f.name, "alpha") != 0) continue;
      if (f.type == kiln::PluginFieldType::kFLOAT32 && f.length >= 1) alpha = *static_cast<float const*>(f.data);
      else if (f.type == kiln::PluginFieldType::kFLOAT64 && f.length >= 1)
        alpha = static_cast<float>(*static_cast<double const*>(f.data));
      else return nullptr;
    }
    auto* p = new ScaledAddV2(alpha);
    p->setPluginNamespace(ns_.c_str());
    return p;
  }
  kiln::IPluginV2* deserializePlugin(char const*, void const* data, size_t length) noexcept override {
    if (length != sizeof(float)) return nullptr;
    float alpha;
    std::memcpy(&alpha, data, sizeof(float));
    auto* p = new ScaledAddV2(alpha);
    p->setPluginNamespace(ns_.c_str());
    return p;
  }
  void setPluginNamespace(char const* ns) noexcept override { ns_ = ns ? ns : ""; }
  char const* getPluginNamespace() const noexcept override { return ns_.c_str(); }

 private:
  std::vector<kiln::PluginField> fields_;
  kiln::PluginFieldCollection fc_{};
  std::string ns_;
};

//
// V3: "KilnTestScaledAddV3" version "2" namespace "kiln.test", float32 or float16 (all tensors one type),
// fields alpha (kFLOAT32), beta (kFLOAT64), tag (kCHAR), shape (kDIMS, checked on rebuild).
//

class ScaledAddV3 final : public kiln::IPluginV3,
                          public kiln::IPluginV3OneCore,
                          public kiln::IPluginV3OneBuild,
                          public kiln::IPluginV3OneRuntime,
                          public kiln::IPluginHostExecution {
 public:
  ScaledAddV3(float alpha, double beta, std::string tag) : alpha_(alpha), beta_(beta), tag_(std::move(tag)) {
    ++counters().live;
    dims_.nbDims = 2;
    dims_.d[0] = 3;
    dims_.d[1] = -7;
  }
  ~ScaledAddV3() override { --counters().live; }

  kiln::IPluginCapability* getCapabilityInterface(kiln::PluginCapabilityType type) noexcept override {
    switch (type) {
      case kiln::PluginCapabilityType::kCORE: return static_cast<kiln::IPluginV3OneCore*>(this);
      case kiln::PluginCapabilityType::kBUILD: return static_cast<kiln::IPluginV3OneBuild*>(this);
      case kiln::PluginCapabilityType::kRUNTIME: return static_cast<kiln::IPluginV3OneRuntime*>(this);
    }
    return nullptr;
  }
  kiln::IPluginV3* clone() noexcept override { return new ScaledAddV3(alpha_, beta_, tag_); }
  char const* getPluginName() const noexcept override { return "KilnTestScaledAddV3"; }
  char const* getPluginVersion() const noexcept override { return "2"; }
  char const* getPluginNamespace() const noexcept override { return "kiln.test"; }

  int32_t configurePlugin(kiln::DynamicPluginTensorDesc const*, int32_t, kiln::DynamicPluginTensorDesc const*,
                          int32_t) noexcept override {
    ++counters().configures;
    return 0;
  }
  int32_t getOutputDataTypes(kiln::DataType* out, int32_t nbOutputs, kiln::DataType const* in, int32_t) const noexcept override {
    for (int32_t i = 0; i < nbOutputs; ++i) out[i] = in[0];
    return 0;
  }
  int32_t getOutputShapes(kiln::DimsExprs const* inputs, int32_t nbInputs, kiln::DimsExprs const*, int32_t,
                          kiln::DimsExprs* outputs, int32_t nbOutputs, kiln::IExprBuilder& eb) noexcept override {
    if (nbInputs != 2 || nbOutputs != 2) return 1;
    outputs[0] = scaledAddShape(0, inputs, eb);
    outputs[1] = scaledAddShape(1, inputs, eb);
    return 0;
  }
  bool supportsFormatCombination(int32_t pos, kiln::DynamicPluginTensorDesc const* inOut, int32_t, int32_t) noexcept override {
    auto t = inOut[pos].desc.type;
    bool ok = (t == kiln::DataType::kFLOAT || t == kiln::DataType::kHALF) &&
              inOut[pos].desc.format == kiln::TensorFormat::kLINEAR;
    return ok && (pos == 0 || t == inOut[0].desc.type);
  }
  int32_t getNbOutputs() const noexcept override { return 2; }
  size_t getWorkspaceSize(kiln::DynamicPluginTensorDesc const* inputs, int32_t, kiln::DynamicPluginTensorDesc const*,
                          int32_t) const noexcept override {
    return static_cast<size_t>(volumeOf(inputs[0].max)) * sizeof(float);
  }
  // Two tactics: 1 is slow (it waits 2 ms), 2 is fast; the builder times them above level 0.
  int32_t getNbTactics() noexcept override { return 2; }
  int32_t getValidTactics(int32_t* tactics, int32_t n) noexcept override {
    if (n != 2) return 1;
    tactics[0] = 1;
    tactics[1] = 2;
    return 0;
  }
  // Timing caching on, keyed by the tag, except for the tag "uncached" (nullptr: TensorRT's way to turn it off).
  char const* getTimingCacheID() noexcept override { return tag_ == "uncached" ? nullptr : tag_.c_str(); }
  int32_t setTactic(int32_t tactic) noexcept override {
    if (tactic != 1 && tactic != 2) return 1;
    tactic_ = tactic;
    return 0;
  }
  int32_t onShapeChange(kiln::PluginTensorDesc const*, int32_t, kiln::PluginTensorDesc const*, int32_t) noexcept override {
    ++counters().shapeChanges;
    return 0;
  }
  int32_t enqueue(kiln::PluginTensorDesc const*, kiln::PluginTensorDesc const*, void const* const*, void* const*, void*,
                  cudaStream_t) noexcept override {
    return 7;
  }
  int32_t enqueueHost(kiln::PluginTensorDesc const* inputDesc, kiln::PluginTensorDesc const*, void const* const* inputs,
                      void* const* outputs, void* workspace) noexcept override {
    RunGuard g(busy_);
    counters().lastTactic = tactic_;
    if (tactic_ == 1) {
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
    return runScaledAdd(inputDesc, inputs, outputs, workspace, alpha_, static_cast<float>(beta_));
  }
  kiln::IPluginV3* attachToContext(kiln::IPluginResourceContext*) noexcept override {
    ++counters().attaches;
    return clone();
  }
  kiln::PluginFieldCollection const* getFieldsToSerialize() noexcept override {
    fields_.clear();
    fields_.emplace_back("alpha", &alpha_, kiln::PluginFieldType::kFLOAT32, 1);
    fields_.emplace_back("beta", &beta_, kiln::PluginFieldType::kFLOAT64, 1);
    fields_.emplace_back("tag", tag_.c_str(), kiln::PluginFieldType::kCHAR, static_cast<int32_t>(tag_.size()));
    fields_.emplace_back("shape", &dims_, kiln::PluginFieldType::kDIMS, 1);
    fc_.nbFields = static_cast<int32_t>(fields_.size());
    fc_.fields = fields_.data();
    return &fc_;
  }

 private:
  float alpha_;
  double beta_;
  std::string tag_;
  kiln::Dims dims_{};
  int32_t tactic_ = 0;
  std::vector<kiln::PluginField> fields_;
  kiln::PluginFieldCollection fc_{};
  std::atomic<bool> busy_{false};
};

class ScaledAddV3Creator final : public kiln::IPluginCreatorV3One {
 public:
  ScaledAddV3Creator() {
    fields_.emplace_back("alpha", nullptr, kiln::PluginFieldType::kFLOAT32, 1);
    fields_.emplace_back("beta", nullptr, kiln::PluginFieldType::kFLOAT64, 1);
    fields_.emplace_back("tag", nullptr, kiln::PluginFieldType::kCHAR, 0);
    fc_.nbFields = static_cast<int32_t>(fields_.size());
    fc_.fields = fields_.data();
  }
  kiln::IPluginV3* createPlugin(char const*, kiln::PluginFieldCollection const* fc, kiln::TensorRTPhase phase) noexcept override {
    float alpha = 1.0f;
    double beta = 0.0;
    std::string tag;
    bool sawShape = false;
    for (int32_t i = 0; fc && i < fc->nbFields; ++i) {
      auto const& f = fc->fields[i];
      if (!std::strcmp(f.name, "alpha")) {
        if (f.type == kiln::PluginFieldType::kFLOAT32) alpha = *static_cast<float const*>(f.data);
        else if (f.type == kiln::PluginFieldType::kFLOAT64) alpha = static_cast<float>(*static_cast<double const*>(f.data));
        else return nullptr;
      } else if (!std::strcmp(f.name, "beta")) {
        if (f.type == kiln::PluginFieldType::kFLOAT64) beta = *static_cast<double const*>(f.data);
        else if (f.type == kiln::PluginFieldType::kFLOAT32) beta = *static_cast<float const*>(f.data);
        else return nullptr;
      } else if (!std::strcmp(f.name, "tag")) {
        if (f.type != kiln::PluginFieldType::kCHAR) return nullptr;
        tag.assign(static_cast<char const*>(f.data), static_cast<size_t>(f.length));
      } else if (!std::strcmp(f.name, "shape")) {
        if (f.type != kiln::PluginFieldType::kDIMS || f.length != 1) return nullptr;
        auto const* d = static_cast<kiln::Dims const*>(f.data);
        if (d->nbDims != 2 || d->d[0] != 3 || d->d[1] != -7) return nullptr;
        sawShape = true;
      }
    }
    // Rebuilt plugins come with every serialized field.
    if (phase == kiln::TensorRTPhase::kRUNTIME && !sawShape) return nullptr;
    return new ScaledAddV3(alpha, beta, tag);
  }
  kiln::PluginFieldCollection const* getFieldNames() noexcept override { return &fc_; }
  char const* getPluginName() const noexcept override { return "KilnTestScaledAddV3"; }
  char const* getPluginVersion() const noexcept override { return "2"; }
  char const* getPluginNamespace() const noexcept override { return "kiln.test"; }

 private:
  std::vector<kiln::PluginField> fields_;
  kiln::PluginFieldCollection fc_{};
};

//
// V3 with a shape input: "KilnTestShapeFill" version "1" namespace "kiln.test": input x (float32, any shape),
// shape input s (1-D int32/int64 of 2 values); output [s0, s1] float32 with out[i] = x[0] + i.
//

class ShapeFillV3 final : public kiln::IPluginV3,
                          public kiln::IPluginV3OneCore,
                          public kiln::IPluginV3OneBuild,
                          public kiln::IPluginV3OneRuntime,
                          public kiln::IPluginHostExecution {
 public:
  kiln::IPluginCapability* getCapabilityInterface(kiln::PluginCapabilityType type) noexcept override {
    switch (type) {
      case kiln::PluginCapabilityType::kCORE: return static_cast<kiln::IPluginV3OneCore*>(this);
      case kiln::PluginCapabilityType::kBUILD: return static_cast<kiln::IPluginV3OneBuild*>(this);
      case kiln::PluginCapabilityType::kRUNTIME: return static_cast<kiln::IPluginV3OneRuntime*>(this);
    }
    return nullptr;
  }
  kiln::IPluginV3* clone() noexcept override { return new ShapeFillV3(); }
  char const* getPluginName() const noexcept override { return "KilnTestShapeFill"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  char const* getPluginNamespace() const noexcept override { return "kiln.test"; }
  int32_t configurePlugin(kiln::DynamicPluginTensorDesc const*, int32_t, kiln::DynamicPluginTensorDesc const*,
                          int32_t) noexcept override {
    return 0;
  }
  int32_t getOutputDataTypes(kiln::DataType* out, int32_t, kiln::DataType const*, int32_t nbInputs) const noexcept override {
    out[0] = kiln::DataType::kFLOAT;
    return nbInputs == 1 ? 0 : 1;  // the shape input is not among the inputs
  }
  int32_t getOutputShapes(kiln::DimsExprs const*, int32_t nbInputs, kiln::DimsExprs const* shapeInputs,
                          int32_t nbShapeInputs, kiln::DimsExprs* outputs, int32_t, kiln::IExprBuilder&) noexcept override {
    if (nbInputs != 1 || nbShapeInputs != 1 || shapeInputs[0].nbDims != 2) return 1;
    outputs[0].nbDims = 2;
    outputs[0].d[0] = shapeInputs[0].d[0];
    outputs[0].d[1] = shapeInputs[0].d[1];
    return 0;
  }
  bool supportsFormatCombination(int32_t pos, kiln::DynamicPluginTensorDesc const* inOut, int32_t, int32_t) noexcept override {
    return inOut[pos].desc.type == kiln::DataType::kFLOAT;
  }
  int32_t getNbOutputs() const noexcept override { return 1; }
  int32_t onShapeChange(kiln::PluginTensorDesc const*, int32_t nbInputs, kiln::PluginTensorDesc const*, int32_t) noexcept override {
    return nbInputs == 1 ? 0 : 1;
  }
  int32_t enqueue(kiln::PluginTensorDesc const*, kiln::PluginTensorDesc const*, void const* const*, void* const*, void*,
                  cudaStream_t) noexcept override {
    return 7;
  }
  int32_t enqueueHost(kiln::PluginTensorDesc const*, kiln::PluginTensorDesc const* outputDesc, void const* const* inputs,
                      void* const* outputs, void*) noexcept override {
    float x0 = static_cast<float const*>(inputs[0])[0];
    int64_t n = volumeOf(outputDesc[0].dims);
    for (int64_t i = 0; i < n; ++i) static_cast<float*>(outputs[0])[i] = x0 + static_cast<float>(i);
    return 0;
  }
  kiln::IPluginV3* attachToContext(kiln::IPluginResourceContext*) noexcept override { return clone(); }
  kiln::PluginFieldCollection const* getFieldsToSerialize() noexcept override { return &fc_; }

 private:
  kiln::PluginFieldCollection fc_{};
};

class ShapeFillV3Creator final : public kiln::IPluginCreatorV3One {
 public:
  kiln::IPluginV3* createPlugin(char const*, kiln::PluginFieldCollection const*, kiln::TensorRTPhase) noexcept override {
    return new ShapeFillV3();
  }
  kiln::PluginFieldCollection const* getFieldNames() noexcept override { return &fc_; }
  char const* getPluginName() const noexcept override { return "KilnTestShapeFill"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  char const* getPluginNamespace() const noexcept override { return "kiln.test"; }

 private:
  kiln::PluginFieldCollection fc_{};
};

}  // namespace kiln_test
