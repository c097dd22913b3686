// Tests of kiln-plugin-check's checks themselves: a correct plugin passes, and plugins with one defect each
// (unwritten output bytes, symbolic shapes that disagree with constant ones, a clone or a deserialized copy that
// computes something else, output types that contradict the accepted formats) are reported.
#include <gtest/gtest.h>

#include "check.h"
#include "device.h"
#include "plugins/builtin/common/plugin_common.h"

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
