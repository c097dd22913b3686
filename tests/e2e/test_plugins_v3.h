// V3 plugins for the run-time tests, written as TensorRT users write them: created for TensorRTPhase::kRUNTIME they
// offer no build capability (and count any build call anyway); one computes its second output's shape with every
// DimensionOperation, one selects the positive elements of its input (a size tensor and a data-dependent output;
// optionally with two tactics, one slow).
#pragma once

#include <kiln/kiln_plugin.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace kiln_test {

/// Build-capability calls made on plugin objects created for TensorRTPhase::kRUNTIME (must stay 0).
inline std::atomic<int>& runtimeBuildCalls() {
  static std::atomic<int> n{0};
  return n;
}

/// The tactic of the last SelectPositive run (0: the default).
inline std::atomic<int>& selectLastTactic() {
  static std::atomic<int> t{0};
  return t;
}

inline int64_t countOf(kiln::Dims const& d) {
  int64_t n = 1;
  for (int32_t i = 0; i < d.nbDims; ++i) n *= d.d[i];
  return n;
}

// Shared plumbing: capabilities by phase, identity, fields (one int32 "mode").
template <typename Self>
class RuntimeV3Base : public kiln::IPluginV3,
                      public kiln::IPluginV3OneCore,
                      public kiln::IPluginV3OneBuild,
                      public kiln::IPluginV3OneRuntime,
                      public kiln::IPluginHostExecution {
 public:
  RuntimeV3Base(int32_t mode, bool runtimeOnly) : mode_(mode), runtimeOnly_(runtimeOnly) {}
  kiln::IPluginCapability* getCapabilityInterface(kiln::PluginCapabilityType type) noexcept override {
    switch (type) {
      case kiln::PluginCapabilityType::kCORE:
        return static_cast<kiln::IPluginV3OneCore*>(this);
      case kiln::PluginCapabilityType::kBUILD:
        if (runtimeOnly_) {
          ++runtimeBuildCalls();
          return nullptr;
        }
        return static_cast<kiln::IPluginV3OneBuild*>(this);
      case kiln::PluginCapabilityType::kRUNTIME:
        return static_cast<kiln::IPluginV3OneRuntime*>(this);
    }
    return nullptr;
  }
  kiln::IPluginV3* clone() noexcept override { return new Self(mode_, runtimeOnly_); }
  char const* getPluginVersion() const noexcept override { return "1"; }
  char const* getPluginNamespace() const noexcept override { return "kiln.test"; }
  int32_t configurePlugin(kiln::DynamicPluginTensorDesc const*, int32_t, kiln::DynamicPluginTensorDesc const*,
                          int32_t) noexcept override {
    return build("configurePlugin");
  }
  bool supportsFormatCombination(int32_t pos, kiln::DynamicPluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t) noexcept override {
    build("supportsFormatCombination");
    return inOut[pos].desc.format == kiln::TensorFormat::kLINEAR &&
           inOut[pos].desc.type == static_cast<Self const*>(this)->typeAt(pos - nbInputs);
  }
  int32_t onShapeChange(kiln::PluginTensorDesc const*, int32_t, kiln::PluginTensorDesc const*,
                        int32_t) noexcept override {
    return 0;
  }
  int32_t enqueue(kiln::PluginTensorDesc const*, kiln::PluginTensorDesc const*, void const* const*, void* const*, void*,
                  cudaStream_t) noexcept override {
    return 7;  // the CPU tests run enqueueHost
  }
  kiln::IPluginV3* attachToContext(kiln::IPluginResourceContext*) noexcept override { return clone(); }
  kiln::PluginFieldCollection const* getFieldsToSerialize() noexcept override {
    field_ = kiln::PluginField("mode", &mode_, kiln::PluginFieldType::kINT32, 1);
    fc_.nbFields = 1;
    fc_.fields = &field_;
    return &fc_;
  }

 protected:
  // Counts a build-capability method reached on a run-time object (only possible by calling through a pointer
  // obtained some other way than getCapabilityInterface).
  int32_t build(char const*) const {
    if (runtimeOnly_) ++runtimeBuildCalls();
    return 0;
  }
  int32_t mode_;
  bool runtimeOnly_;
  kiln::PluginField field_{};
  kiln::PluginFieldCollection fc_{};
};

//
// "KilnTestRuntimeShapes" version "1": input x [a, b] float32; out0 = 2 * x; out1 float32 of shape
// [max(a,b) - min(a,b) + 1, floor(a*b/2) + ceil(a/2) + (a == b) + (a < b)] filled with 0, 1, 2, ... (workspace: the
// plugin stages out0 there and checks the workspace is at least max(a) * max(b) floats).
//
class RuntimeShapesV3 final : public RuntimeV3Base<RuntimeShapesV3> {
 public:
  using RuntimeV3Base::RuntimeV3Base;
  char const* getPluginName() const noexcept override { return "KilnTestRuntimeShapes"; }
  int32_t getNbOutputs() const noexcept override {
    build("getNbOutputs");
    return 2;
  }
  kiln::DataType typeAt(int32_t) const { return kiln::DataType::kFLOAT; }
  int32_t getOutputDataTypes(kiln::DataType* out, int32_t n, kiln::DataType const*, int32_t) const noexcept override {
    build("getOutputDataTypes");
    for (int32_t i = 0; i < n; ++i) out[i] = kiln::DataType::kFLOAT;
    return 0;
  }
  int32_t getOutputShapes(kiln::DimsExprs const* in, int32_t nbInputs, kiln::DimsExprs const*, int32_t,
                          kiln::DimsExprs* out, int32_t, kiln::IExprBuilder& eb) noexcept override {
    build("getOutputShapes");
    if (nbInputs != 1 || in[0].nbDims != 2) return 1;
    using Op = kiln::DimensionOperation;
    auto const& a = *in[0].d[0];
    auto const& b = *in[0].d[1];
    auto const* one = eb.constant(1);
    auto const* two = eb.constant(2);
    out[0] = in[0];
    out[1].nbDims = 2;
    out[1].d[0] = eb.operation(
        Op::kSUM, *eb.operation(Op::kSUB, *eb.operation(Op::kMAX, a, b), *eb.operation(Op::kMIN, a, b)), *one);
    auto const* half = eb.operation(Op::kFLOOR_DIV, *eb.operation(Op::kPROD, a, b), *two);
    auto const* ceil = eb.operation(Op::kCEIL_DIV, a, *two);
    auto const* flags = eb.operation(Op::kSUM, *eb.operation(Op::kEQUAL, a, b), *eb.operation(Op::kLESS, a, b));
    out[1].d[1] = eb.operation(Op::kSUM, *eb.operation(Op::kSUM, *half, *ceil), *flags);
    return 0;
  }
  size_t getWorkspaceSize(kiln::DynamicPluginTensorDesc const* in, int32_t, kiln::DynamicPluginTensorDesc const*,
                          int32_t) const noexcept override {
    build("getWorkspaceSize");
    return static_cast<size_t>(countOf(in[0].max)) * sizeof(float);
  }
  int32_t enqueueHost(kiln::PluginTensorDesc const* inDesc, kiln::PluginTensorDesc const* outDesc,
                      void const* const* inputs, void* const* outputs, void* workspace) noexcept override {
    int64_t n = countOf(inDesc[0].dims);
    if (n > 0 && !workspace) return 2;
    auto* ws = static_cast<float*>(workspace);
    for (int64_t i = 0; i < n; ++i) ws[i] = 2.0f * static_cast<float const*>(inputs[0])[i];
    std::memcpy(outputs[0], ws, static_cast<size_t>(n) * sizeof(float));
    int64_t m = countOf(outDesc[1].dims);
    for (int64_t i = 0; i < m; ++i) static_cast<float*>(outputs[1])[i] = static_cast<float>(i);
    return 0;
  }
};

//
// "KilnTestSelectPositive" version "1": input x float32 (any shape); out0 [K] float32: the positive elements of x
// in order; out1: K, a 0-D size tensor (int32, or int64 with mode bit 1) declared with opt = n / 2 and upper = n,
// the element count of x. Mode bit 2 makes the plugin report K + n + 1 (past the upper bound). Mode bit 4 offers
// tactics 1 (slow: it waits 2 ms before selecting) and 2 (fast); each run records its tactic in selectLastTactic().
// The plugin checks that it is given the upper-bound allocation (outputDesc[0] holds n elements). SelectPositiveT
// holds the build side and the math; the final classes run it on the host (here) or the GPU (tests/gpu).
//
template <typename Self>
class SelectPositiveT : public RuntimeV3Base<Self> {
 public:
  using RuntimeV3Base<Self>::RuntimeV3Base;
  int32_t getNbOutputs() const noexcept override {
    this->build("getNbOutputs");
    return 2;
  }
  kiln::DataType typeAt(int32_t out) const {
    if (out != 1) return kiln::DataType::kFLOAT;
    return (this->mode_ & 1) ? kiln::DataType::kINT64 : kiln::DataType::kINT32;
  }
  int32_t getOutputDataTypes(kiln::DataType* out, int32_t n, kiln::DataType const*, int32_t) const noexcept override {
    this->build("getOutputDataTypes");
    if (n != 2) return 1;
    out[0] = typeAt(0);
    out[1] = typeAt(1);
    return 0;
  }
  int32_t getOutputShapes(kiln::DimsExprs const* in, int32_t nbInputs, kiln::DimsExprs const*, int32_t,
                          kiln::DimsExprs* out, int32_t, kiln::IExprBuilder& eb) noexcept override {
    this->build("getOutputShapes");
    if (nbInputs != 1) return 1;
    kiln::IDimensionExpr const* n = eb.constant(1);
    for (int32_t i = 0; i < in[0].nbDims; ++i) n = eb.operation(kiln::DimensionOperation::kPROD, *n, *in[0].d[i]);
    auto const* opt = eb.operation(kiln::DimensionOperation::kFLOOR_DIV, *n, *eb.constant(2));
    out[0].nbDims = 1;
    out[0].d[0] = eb.declareSizeTensor(1, *opt, *n);
    out[1].nbDims = 0;
    return 0;
  }
  int32_t getNbTactics() noexcept override {
    this->build("getNbTactics");
    return (this->mode_ & 4) ? 2 : 0;
  }
  int32_t getValidTactics(int32_t* tactics, int32_t n) noexcept override {
    this->build("getValidTactics");
    if (!(this->mode_ & 4) || n != 2) return 1;
    tactics[0] = 1;  // the slow one first: level 0 takes it
    tactics[1] = 2;
    return 0;
  }
  int32_t setTactic(int32_t tactic) noexcept override {
    if (tactic != 0 && (!(this->mode_ & 4) || (tactic != 1 && tactic != 2))) return 1;
    tactic_ = tactic;
    return 0;
  }

 protected:
  // The selection on host memory: y gets the positive elements of x[0..n), *size the count (as mode says).
  int32_t select(kiln::PluginTensorDesc const* inDesc, kiln::PluginTensorDesc const* outDesc, float const* x, float* y,
                 void* size) const {
    int64_t n = countOf(inDesc[0].dims);
    if (outDesc[0].dims.nbDims != 1 || outDesc[0].dims.d[0] < n) return 3;  // the upper-bound allocation
    selectLastTactic() = tactic_;
    if (tactic_ == 1) {
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
    int64_t k = 0;
    for (int64_t i = 0; i < n; ++i)
      if (x[i] > 0) y[k++] = x[i];
    if (this->mode_ & 2) k += n + 1;
    if (this->mode_ & 1)
      *static_cast<int64_t*>(size) = k;
    else
      *static_cast<int32_t*>(size) = static_cast<int32_t>(k);
    return 0;
  }

  int32_t tactic_ = 0;  // set on context copies (attachToContext clones, then setTactic)
};

class SelectPositiveV3 final : public SelectPositiveT<SelectPositiveV3> {
 public:
  using SelectPositiveT::SelectPositiveT;
  char const* getPluginName() const noexcept override { return "KilnTestSelectPositive"; }
  int32_t enqueueHost(kiln::PluginTensorDesc const* inDesc, kiln::PluginTensorDesc const* outDesc,
                      void const* const* inputs, void* const* outputs, void*) noexcept override {
    return select(inDesc, outDesc, static_cast<float const*>(inputs[0]), static_cast<float*>(outputs[0]), outputs[1]);
  }
};

// One creator for both: kBUILD objects have every capability, kRUNTIME objects no build capability.
template <typename P>
class RuntimeV3Creator final : public kiln::IPluginCreatorV3One {
 public:
  explicit RuntimeV3Creator(char const* name) : name_(name) {
    field_ = kiln::PluginField("mode", nullptr, kiln::PluginFieldType::kINT32, 1);
    fc_.nbFields = 1;
    fc_.fields = &field_;
  }
  kiln::IPluginV3* createPlugin(char const*, kiln::PluginFieldCollection const* fc,
                                kiln::TensorRTPhase phase) noexcept override {
    int32_t mode = 0;
    for (int32_t i = 0; fc && i < fc->nbFields; ++i)
      if (!std::strcmp(fc->fields[i].name, "mode") && fc->fields[i].type == kiln::PluginFieldType::kINT32)
        mode = *static_cast<int32_t const*>(fc->fields[i].data);
    return new P(mode, phase == kiln::TensorRTPhase::kRUNTIME);
  }
  kiln::PluginFieldCollection const* getFieldNames() noexcept override { return &fc_; }
  char const* getPluginName() const noexcept override { return name_.c_str(); }
  char const* getPluginVersion() const noexcept override { return "1"; }
  char const* getPluginNamespace() const noexcept override { return "kiln.test"; }

 private:
  std::string name_;
  kiln::PluginField field_{};
  kiln::PluginFieldCollection fc_{};
};

class RuntimeShapesV3Creator final : public kiln::IPluginCreatorV3One {
 public:
  kiln::IPluginV3* createPlugin(char const* n, kiln::PluginFieldCollection const* fc,
                                kiln::TensorRTPhase p) noexcept override {
    return inner_.createPlugin(n, fc, p);
  }
  kiln::PluginFieldCollection const* getFieldNames() noexcept override { return inner_.getFieldNames(); }
  char const* getPluginName() const noexcept override { return "KilnTestRuntimeShapes"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  char const* getPluginNamespace() const noexcept override { return "kiln.test"; }

 private:
  RuntimeV3Creator<RuntimeShapesV3> inner_{"KilnTestRuntimeShapes"};
};

class SelectPositiveV3Creator final : public kiln::IPluginCreatorV3One {
 public:
  kiln::IPluginV3* createPlugin(char const* n, kiln::PluginFieldCollection const* fc,
                                kiln::TensorRTPhase p) noexcept override {
    return inner_.createPlugin(n, fc, p);
  }
  kiln::PluginFieldCollection const* getFieldNames() noexcept override { return inner_.getFieldNames(); }
  char const* getPluginName() const noexcept override { return "KilnTestSelectPositive"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  char const* getPluginNamespace() const noexcept override { return "kiln.test"; }

 private:
  RuntimeV3Creator<SelectPositiveV3> inner_{"KilnTestSelectPositive"};
};

}  // namespace kiln_test
