// Tests of kiln-plugin-check's checks themselves: a correct plugin passes, and plugins with one defect each
// (unwritten output bytes, symbolic shapes that disagree with constant ones, a clone or a deserialized copy that
// computes something else, output types that contradict the accepted formats) are reported; the same for V3
// plugins (fields that do not rebuild the plugin, a tactic that computes something else, ...), including V3 plugins
// with a size tensor (a correct one passes; a size past its upper bound, an actual shape that does not fit the
// declared upper-bound shape are reported).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "check.h"
#include "device.h"
#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/testing.h"

namespace kiln::plugincheck {
namespace {

using plugin::BuiltinCreator;
using plugin::BuiltinPlugin;
using plugin::ByteReader;
using plugin::ByteWriter;
using plugin::FieldReader;

enum class Defect : int32_t { kNone, kUnwritten, kSymbolicShape, kCloneForgets, kDeserializeForgets, kOutputType };

// y = x * factor, with the defect chosen by the "defect" field.
class Scale final : public BuiltinPlugin {
 public:
  static constexpr char const* kName = "KilnCheckScale";
  static constexpr char const* kVersion = "1";
  Scale(float factor, Defect d) : BuiltinPlugin(kName, kVersion), factor_(factor), defect_(d) {}
  static std::vector<PluginField> fieldList() { return {}; }
  static Scale* create(FieldReader& f) {
    int32_t d = 0;
    float factor = 2.f;
    f.getInt("defect", d);
    f.getFloat("factor", factor);
    return new Scale(factor, static_cast<Defect>(d));
  }
  static Scale* deserialize(ByteReader& r) {
    float factor = 0;
    int32_t d = 0;
    if (!r.get(factor) || !r.get(d)) return nullptr;
    auto defect = static_cast<Defect>(d);
    return new Scale(defect == Defect::kDeserializeForgets ? 1.f : factor, defect);
  }
  int32_t getNbOutputs() const noexcept override { return 1; }
  IPluginV2DynamicExt* clone() const noexcept override {
    return finishClone(new Scale(defect_ == Defect::kCloneForgets ? 1.f : factor_, defect_));
  }
  DimsExprs getOutputDimensions(int32_t, DimsExprs const* in, int32_t, IExprBuilder& b) noexcept override {
    DimsExprs out = in[0];
    if (defect_ == Defect::kSymbolicShape && !in[0].d[0]->isConstant()) {
      out.d[0] = b.operation(DimensionOperation::kSUM, *in[0].d[0], *b.constant(1));
    }
    return out;
  }
  DataType getOutputDataType(int32_t, DataType const* t, int32_t) const noexcept override {
    return defect_ == Defect::kOutputType ? DataType::kHALF : t[0];
  }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* io, int32_t, int32_t) noexcept override {
    return io[pos].format == TensorFormat::kLINEAR && io[pos].type == DataType::kFLOAT;
  }

 protected:
  void writeParams(ByteWriter& w) const override {
    w.put(factor_);
    w.put(static_cast<int32_t>(defect_));
  }
  std::string hostCompute(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                          void* const* outputs, void*) override {
    int64_t n = plugin::volume(in[0].dims);
    if (defect_ == Defect::kUnwritten) n /= 2;
    auto const* x = static_cast<float const*>(inputs[0]);
    auto* y = static_cast<float*>(outputs[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * factor_;
    return "";
  }

 private:
  float factor_;
  Defect defect_;
};

Report check(Defect d) {
  BuiltinCreator<Scale> creator;
  FieldSet fields;
  fields.add("defect", static_cast<int32_t>(d)).add("factor", 3.f);
  Sample sample;
  std::string err;
  EXPECT_TRUE(sampleFromSpec("2-5x3", sample, err)) << err;
  Options options;
  options.shapes = 3;
  return checkCreator(creator, fields.get(), sample, options);
}

TEST(PluginCheck, CorrectPluginPasses) {
  Report r = check(Defect::kNone);
  EXPECT_TRUE(r.passed()) << (r.failures.empty() ? "" : r.failures[0]);
  EXPECT_EQ(r.combinations, 1);
}

TEST(PluginCheck, ReportsEachDefect) {
  for (Defect d : {Defect::kUnwritten, Defect::kSymbolicShape, Defect::kCloneForgets, Defect::kDeserializeForgets,
                   Defect::kOutputType}) {
    Report r = check(d);
    EXPECT_FALSE(r.passed()) << "defect " << static_cast<int>(d) << " not reported";
  }
}

// V3: y = x * factor, two tactics (both correct unless the defect says otherwise), with the defect chosen by the
// "defect" field.
enum class DefectV3 : int32_t { kNone, kFieldsForget, kTacticDisagrees, kUnwritten, kSymbolicShape, kCloneForgets };

class ScaleV3 final : public IPluginV3,
                      public IPluginV3OneCore,
                      public IPluginV3OneBuild,
                      public IPluginV3OneRuntime,
                      public IPluginHostExecution {
 public:
  ScaleV3(float factor, DefectV3 d) : factor_(factor), defect_(d) {}
  IPluginCapability* getCapabilityInterface(PluginCapabilityType type) noexcept override {
    switch (type) {
      case PluginCapabilityType::kCORE: return static_cast<IPluginV3OneCore*>(this);
      case PluginCapabilityType::kBUILD: return static_cast<IPluginV3OneBuild*>(this);
      case PluginCapabilityType::kRUNTIME: return static_cast<IPluginV3OneRuntime*>(this);
    }
    return nullptr;
  }
  IPluginV3* clone() noexcept override {
    auto* c = new ScaleV3(defect_ == DefectV3::kCloneForgets ? 1.f : factor_, defect_);
    c->tactic_ = tactic_;
    return c;
  }
  char const* getPluginName() const noexcept override { return "KilnCheckScaleV3"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  char const* getPluginNamespace() const noexcept override { return ""; }
  int32_t configurePlugin(DynamicPluginTensorDesc const*, int32_t, DynamicPluginTensorDesc const*, int32_t) noexcept override {
    return 0;
  }
  int32_t getOutputDataTypes(DataType* out, int32_t, DataType const* in, int32_t) const noexcept override {
    out[0] = in[0];
    return 0;
  }
  int32_t getOutputShapes(DimsExprs const* in, int32_t nbIn, DimsExprs const*, int32_t, DimsExprs* out, int32_t nbOut,
                          IExprBuilder& b) noexcept override {
    if (nbIn != 1 || nbOut != 1) return 1;
    out[0] = in[0];
    if (defect_ == DefectV3::kSymbolicShape && !in[0].d[0]->isConstant())
      out[0].d[0] = b.operation(DimensionOperation::kSUM, *in[0].d[0], *b.constant(1));
    return 0;
  }
  bool supportsFormatCombination(int32_t pos, DynamicPluginTensorDesc const* io, int32_t, int32_t) noexcept override {
    return io[pos].desc.format == TensorFormat::kLINEAR && io[pos].desc.type == DataType::kFLOAT;
  }
  int32_t getNbOutputs() const noexcept override { return 1; }
  size_t getWorkspaceSize(DynamicPluginTensorDesc const*, int32_t, DynamicPluginTensorDesc const*, int32_t) const noexcept override {
    return 0;
  }
  int32_t getNbTactics() noexcept override { return 2; }
  int32_t getValidTactics(int32_t* t, int32_t n) noexcept override {
    if (n != 2) return 1;
    t[0] = 1;
    t[1] = 2;
    return 0;
  }
  int32_t setTactic(int32_t tactic) noexcept override {
    tactic_ = tactic;
    return tactic == 1 || tactic == 2 ? 0 : 1;
  }
  int32_t onShapeChange(PluginTensorDesc const*, int32_t, PluginTensorDesc const*, int32_t) noexcept override { return 0; }
  int32_t enqueue(PluginTensorDesc const*, PluginTensorDesc const*, void const* const*, void* const*, void*,
                  cudaStream_t) noexcept override {
    return 1;  // host only: the checks run on the cpu backend
  }
  int32_t enqueueHost(PluginTensorDesc const* in, PluginTensorDesc const*, void const* const* inputs,
                      void* const* outputs, void*) noexcept override {
    int64_t n = plugin::volume(in[0].dims);
    if (defect_ == DefectV3::kUnwritten) n /= 2;
    float add = defect_ == DefectV3::kTacticDisagrees && tactic_ == 2 ? 1.f : 0.f;
    auto const* x = static_cast<float const*>(inputs[0]);
    auto* y = static_cast<float*>(outputs[0]);
    // Tactic 2 walks backwards: another order, the same result.
    for (int64_t i = 0; i < n; ++i) {
      int64_t k = tactic_ == 2 ? n - 1 - i : i;
      y[k] = x[k] * factor_ + add;
    }
    return 0;
  }
  IPluginV3* attachToContext(IPluginResourceContext*) noexcept override { return clone(); }
  PluginFieldCollection const* getFieldsToSerialize() noexcept override {
    fields_.clear();
    if (defect_ != DefectV3::kFieldsForget) fields_.emplace_back("factor", &factor_, PluginFieldType::kFLOAT32, 1);
    defectValue_ = static_cast<int32_t>(defect_);
    fields_.emplace_back("defect", &defectValue_, PluginFieldType::kINT32, 1);
    fc_.nbFields = static_cast<int32_t>(fields_.size());
    fc_.fields = fields_.data();
    return &fc_;
  }

 private:
  float factor_;
  DefectV3 defect_;
  int32_t defectValue_ = 0;
  int32_t tactic_ = 0;
  std::vector<PluginField> fields_;
  PluginFieldCollection fc_{};
};

class ScaleV3Creator final : public IPluginCreatorV3One {
 public:
  IPluginV3* createPlugin(char const*, PluginFieldCollection const* fc, TensorRTPhase) noexcept override {
    float factor = 1.f;
    int32_t defect = 0;
    for (int32_t i = 0; fc && i < fc->nbFields; ++i) {
      if (!std::strcmp(fc->fields[i].name, "factor")) factor = *static_cast<float const*>(fc->fields[i].data);
      if (!std::strcmp(fc->fields[i].name, "defect")) defect = *static_cast<int32_t const*>(fc->fields[i].data);
    }
    return new ScaleV3(factor, static_cast<DefectV3>(defect));
  }
  PluginFieldCollection const* getFieldNames() noexcept override { return &fc_; }
  char const* getPluginName() const noexcept override { return "KilnCheckScaleV3"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  char const* getPluginNamespace() const noexcept override { return ""; }

 private:
  PluginFieldCollection fc_{};
};

Report checkV3(DefectV3 d) {
  ScaleV3Creator creator;
  FieldSet fields;
  fields.add("defect", static_cast<int32_t>(d)).add("factor", 3.f);
  Sample sample;
  std::string err;
  EXPECT_TRUE(sampleFromSpec("2-5x3", sample, err)) << err;
  Options options;
  options.shapes = 3;
  return checkCreatorV3(creator, fields.get(), sample, options);
}

TEST(PluginCheck, CorrectV3PluginPasses) {
  Report r = checkV3(DefectV3::kNone);
  EXPECT_TRUE(r.passed()) << (r.failures.empty() ? "" : r.failures[0]);
  EXPECT_EQ(r.combinations, 1);
}

TEST(PluginCheck, ReportsEachV3Defect) {
  struct Case {
    DefectV3 defect;
    char const* expect;  // part of the first failure
  };
  for (Case c : {Case{DefectV3::kFieldsForget, "rebuilt from its fields"}, Case{DefectV3::kTacticDisagrees, "than tactic 1"},
                 Case{DefectV3::kUnwritten, "two runs differ"}, Case{DefectV3::kSymbolicShape, "symbolic dims"},
                 Case{DefectV3::kCloneForgets, "clone"}}) {
    Report r = checkV3(c.defect);
    ASSERT_FALSE(r.passed()) << "defect " << static_cast<int>(c.defect) << " not reported";
    EXPECT_NE(r.failures[0].find(c.expect), std::string::npos)
        << "defect " << static_cast<int>(c.defect) << ": " << r.failures[0];
  }
}

// V3 with a size tensor: x [a, b] float32 -> out0 [K] float32, the positive elements of x in order, and out1, K as a
// 0-D int32 size tensor declared with opt n / 2 and upper bound n = a * b. Two tactics (tactic 2 counts first, then
// fills backwards: another order, the same result). Defects: the size written is past the upper bound; out0 is
// declared [n - K] (the non-positive elements), a shape that is empty at the upper bound K = n, so the actual shape
// does not fit it.
enum class SelectDefect : int32_t { kNone, kSizeAboveUpper, kShapeExceedsUpper };

class SelectV3 final : public IPluginV3,
                       public IPluginV3OneCore,
                       public IPluginV3OneBuild,
                       public IPluginV3OneRuntime,
                       public IPluginHostExecution {
 public:
  explicit SelectV3(SelectDefect d) : defect_(d) {}
  IPluginCapability* getCapabilityInterface(PluginCapabilityType type) noexcept override {
    switch (type) {
      case PluginCapabilityType::kCORE:
        return static_cast<IPluginV3OneCore*>(this);
      case PluginCapabilityType::kBUILD:
        return static_cast<IPluginV3OneBuild*>(this);
      case PluginCapabilityType::kRUNTIME:
        return static_cast<IPluginV3OneRuntime*>(this);
    }
    return nullptr;
  }
  IPluginV3* clone() noexcept override {
    auto* c = new SelectV3(defect_);
    c->tactic_ = tactic_;
    return c;
  }
  char const* getPluginName() const noexcept override { return "KilnCheckSelectV3"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  char const* getPluginNamespace() const noexcept override { return ""; }
  int32_t configurePlugin(DynamicPluginTensorDesc const*, int32_t, DynamicPluginTensorDesc const* out,
                          int32_t nbOut) noexcept override {
    // Kiln's build describes the data-dependent output with -1 and its upper bound as max.
    if (nbOut != 2 || out[0].desc.dims.nbDims != 1 || out[0].desc.dims.d[0] != -1 || out[0].max.d[0] < 0) return 1;
    return 0;
  }
  int32_t getOutputDataTypes(DataType* out, int32_t n, DataType const*, int32_t) const noexcept override {
    if (n != 2) return 1;
    out[0] = DataType::kFLOAT;
    out[1] = DataType::kINT32;
    return 0;
  }
  int32_t getOutputShapes(DimsExprs const* in, int32_t nbIn, DimsExprs const*, int32_t, DimsExprs* out, int32_t nbOut,
                          IExprBuilder& b) noexcept override {
    if (nbIn != 1 || nbOut != 2) return 1;
    IDimensionExpr const* n = b.constant(1);
    for (int32_t i = 0; i < in[0].nbDims; ++i) n = b.operation(DimensionOperation::kPROD, *n, *in[0].d[i]);
    IDimensionExpr const* k =
        b.declareSizeTensor(1, *b.operation(DimensionOperation::kFLOOR_DIV, *n, *b.constant(2)), *n);
    if (!k) return 2;
    out[0].nbDims = 1;
    out[0].d[0] = defect_ == SelectDefect::kShapeExceedsUpper ? b.operation(DimensionOperation::kSUB, *n, *k) : k;
    out[1].nbDims = 0;
    return 0;
  }
  bool supportsFormatCombination(int32_t pos, DynamicPluginTensorDesc const* io, int32_t, int32_t) noexcept override {
    return io[pos].desc.format == TensorFormat::kLINEAR &&
           io[pos].desc.type == (pos == 2 ? DataType::kINT32 : DataType::kFLOAT);
  }
  int32_t getNbOutputs() const noexcept override { return 2; }
  int32_t getNbTactics() noexcept override { return 2; }
  int32_t getValidTactics(int32_t* t, int32_t n) noexcept override {
    if (n != 2) return 1;
    t[0] = 1;
    t[1] = 2;
    return 0;
  }
  int32_t setTactic(int32_t tactic) noexcept override {
    tactic_ = tactic;
    return tactic == 1 || tactic == 2 ? 0 : 1;
  }
  int32_t onShapeChange(PluginTensorDesc const*, int32_t, PluginTensorDesc const*, int32_t) noexcept override {
    return 0;
  }
  int32_t enqueue(PluginTensorDesc const*, PluginTensorDesc const*, void const* const*, void* const*, void*,
                  cudaStream_t) noexcept override {
    return 1;  // host only
  }
  int32_t enqueueHost(PluginTensorDesc const* in, PluginTensorDesc const* outDesc, void const* const* inputs,
                      void* const* outputs, void*) noexcept override {
    int64_t n = plugin::volume(in[0].dims);
    if (outDesc[0].dims.nbDims != 1 || outDesc[0].dims.d[0] < 0) return 3;
    bool positives = defect_ != SelectDefect::kShapeExceedsUpper;
    auto const* x = static_cast<float const*>(inputs[0]);
    std::vector<float> picked;
    if (tactic_ == 2) {
      for (int64_t i = n; i-- > 0;)
        if ((x[i] > 0) == positives) picked.push_back(x[i]);
      std::reverse(picked.begin(), picked.end());
    } else {
      for (int64_t i = 0; i < n; ++i)
        if ((x[i] > 0) == positives) picked.push_back(x[i]);
    }
    // Never past the buffer, even when defective: the checker must see the defect, not a heap overrun.
    size_t fits = std::min(picked.size(), static_cast<size_t>(outDesc[0].dims.d[0]));
    if (fits) std::memcpy(outputs[0], picked.data(), fits * sizeof(float));
    auto k = static_cast<int64_t>(picked.size());
    if (!positives) k = n - k;  // the size tensor is K, the count of positives
    if (defect_ == SelectDefect::kSizeAboveUpper) k = n + 1;
    *static_cast<int32_t*>(outputs[1]) = static_cast<int32_t>(k);
    return 0;
  }
  IPluginV3* attachToContext(IPluginResourceContext*) noexcept override { return clone(); }
  PluginFieldCollection const* getFieldsToSerialize() noexcept override {
    defectValue_ = static_cast<int32_t>(defect_);
    field_ = PluginField("defect", &defectValue_, PluginFieldType::kINT32, 1);
    fc_.nbFields = 1;
    fc_.fields = &field_;
    return &fc_;
  }

 private:
  SelectDefect defect_;
  int32_t defectValue_ = 0;
  int32_t tactic_ = 0;
  PluginField field_{};
  PluginFieldCollection fc_{};
};

class SelectV3Creator final : public IPluginCreatorV3One {
 public:
  IPluginV3* createPlugin(char const*, PluginFieldCollection const* fc, TensorRTPhase) noexcept override {
    int32_t defect = 0;
    for (int32_t i = 0; fc && i < fc->nbFields; ++i)
      if (!std::strcmp(fc->fields[i].name, "defect")) defect = *static_cast<int32_t const*>(fc->fields[i].data);
    return new SelectV3(static_cast<SelectDefect>(defect));
  }
  PluginFieldCollection const* getFieldNames() noexcept override { return &fc_; }
  char const* getPluginName() const noexcept override { return "KilnCheckSelectV3"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  char const* getPluginNamespace() const noexcept override { return ""; }

 private:
  PluginFieldCollection fc_{};
};

Report checkSelect(SelectDefect d) {
  SelectV3Creator creator;
  FieldSet fields;
  fields.add("defect", static_cast<int32_t>(d));
  Sample sample;
  std::string err;
  EXPECT_TRUE(sampleFromSpec("2-5x3", sample, err)) << err;
  Options options;
  options.shapes = 3;
  return checkCreatorV3(creator, fields.get(), sample, options);
}

TEST(PluginCheck, CorrectSizeTensorV3PluginPasses) {
  Report r = checkSelect(SelectDefect::kNone);
  EXPECT_TRUE(r.passed()) << (r.failures.empty() ? "" : r.failures[0]);
  EXPECT_EQ(r.combinations, 1);
  bool noted = false;
  for (auto const& n : r.notes) noted = noted || n.find("size tensor") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(PluginCheck, ReportsEachSizeTensorDefect) {
  struct Case {
    SelectDefect defect;
    char const* expect;  // part of the first failure
  };
  for (Case c : {Case{SelectDefect::kSizeAboveUpper, "outside [0, "},
                 Case{SelectDefect::kShapeExceedsUpper, "does not fit its declared upper bound [0]"}}) {
    Report r = checkSelect(c.defect);
    ASSERT_FALSE(r.passed()) << "defect " << static_cast<int>(c.defect) << " not reported";
    EXPECT_NE(r.failures[0].find(c.expect), std::string::npos)
        << "defect " << static_cast<int>(c.defect) << ": " << r.failures[0];
  }
}

// An expression builder misuse is reported: a size tensor declared twice.
TEST(PluginCheck, ExprBuilderRecordsSizeTensorMisuse) {
  plugin::ShapeExprBuilder b;
  auto const* n = b.symbol(0, 0);
  auto const* k = b.declareSizeTensor(1, *n, *n);
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(k->isSizeTensor());
  EXPECT_FALSE(k->isConstant());
  EXPECT_EQ(b.error(), "");
  b.declareSizeTensor(2, *k, *n);  // an opt over a size tensor
  EXPECT_NE(b.error().find("depends on a size tensor"), std::string::npos) << b.error();
  plugin::ShapeExprBuilder c;
  auto const* m = c.constant(4);
  c.declareSizeTensor(0, *m, *m);
  c.declareSizeTensor(0, *m, *m);
  EXPECT_NE(c.error().find("twice"), std::string::npos) << c.error();
  plugin::SizeValues v;
  v.mode = plugin::SizeValues::Mode::kValue;
  v.values = {-1, 3};
  auto const* sum = b.operation(DimensionOperation::kSUM, *k, *b.constant(1));
  EXPECT_EQ(plugin::ShapeExprBuilder::evaluate(sum, {}, v), 4);
  v.mode = plugin::SizeValues::Mode::kUpper;
  EXPECT_EQ(plugin::ShapeExprBuilder::evaluate(sum, {plugin::testing::dims({7})}, v), 8);
  EXPECT_EQ(plugin::ShapeExprBuilder::evaluate(sum, {plugin::testing::dims({7})}), std::nullopt);
}

TEST(PluginCheck, CudaBackendWithoutDeviceIsAFailure) {
  std::string why;
  if (device::available(why)) GTEST_SKIP() << "a CUDA device is present";
  BuiltinCreator<Scale> creator;
  FieldSet fields;
  Sample sample;
  std::string err;
  ASSERT_TRUE(sampleFromSpec("2x3", sample, err));
  Options options;
  options.cuda = true;
  Report r = checkCreator(creator, fields.get(), sample, options);
  ASSERT_FALSE(r.passed());
  EXPECT_NE(r.failures[0].find("--backend=cuda"), std::string::npos);
}

TEST(PluginCheck, SpecsParse) {
  Sample s;
  std::string err;
  EXPECT_FALSE(sampleFromSpec("2xq", s, err));
  EXPECT_NE(err.find("bad dimension"), std::string::npos);
  EXPECT_FALSE(sampleFromSpec("2x3:f64", s, err));
  FieldSet f;
  EXPECT_TRUE(addFieldSetting("a=1,2,3", f, err));
  EXPECT_TRUE(addFieldSetting("b=0.5", f, err));
  EXPECT_TRUE(addFieldSetting("c=s:text", f, err));
  EXPECT_FALSE(addFieldSetting("d=x", f, err));
  EXPECT_FALSE(addFieldSetting("noequals", f, err));
  EXPECT_EQ(f.get()->nbFields, 3);
}

}  // namespace
}  // namespace kiln::plugincheck
