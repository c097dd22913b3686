// Tests of ir/plugin: field encoding round trips (every PluginFieldType) and refusals, and shape inference of
// plugin nodes through the IExprBuilder (every DimensionOperation, unknown dims, refusals).
#include "ir/plugin.h"

#include <gtest/gtest.h>

#include <cstring>

#include "ir/graph.h"
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

TEST(PluginFields, EveryTypeRoundTrips) {
  float f32[2] = {1.5f, -2.0f};
  double f64[1] = {3.25};
  int8_t i8[3] = {-1, 2, 3};
  int16_t i16[2] = {-300, 300};
  int32_t i32[2] = {7, -7};
  int64_t i64[1] = {int64_t{1} << 40};
  uint16_t f16[2] = {0x3c00, 0xc000};
  uint16_t bf[1] = {0x3f80};
  uint8_t fp8[2] = {0x38, 0x40};
  uint8_t i4[2] = {0x21, 0x03};  // three 4-bit values
  char const* text = "hello";
  Dims d{};
  d.nbDims = 3;
  d.d[0] = 1;
  d.d[1] = -1;
  d.d[2] = 5;
  uint8_t opaque[4] = {0, 1, 2, 255};
  std::vector<PluginField> fs = {
      {"f32", f32, PluginFieldType::kFLOAT32, 2}, {"f64", f64, PluginFieldType::kFLOAT64, 1},
      {"i8", i8, PluginFieldType::kINT8, 3},      {"i16", i16, PluginFieldType::kINT16, 2},
      {"i32", i32, PluginFieldType::kINT32, 2},   {"i64", i64, PluginFieldType::kINT64, 1},
      {"f16", f16, PluginFieldType::kFLOAT16, 2}, {"bf16", bf, PluginFieldType::kBF16, 1},
      {"fp8", fp8, PluginFieldType::kFP8, 2},     {"i4", i4, PluginFieldType::kINT4, 3},
      {"s", text, PluginFieldType::kCHAR, 5},     {"dims", &d, PluginFieldType::kDIMS, 1},
      {"raw", opaque, PluginFieldType::kUNKNOWN, 4}, {"empty", nullptr, PluginFieldType::kINT32, 0}};
  PluginFieldCollection fc{static_cast<int32_t>(fs.size()), fs.data()};
  auto bytes = encodePluginFields(fc);
  ASSERT_TRUE(bytes.isOk()) << bytes.status().message();
  auto decoded = decodePluginFields(bytes->data(), bytes->size());
  ASSERT_TRUE(decoded.isOk()) << decoded.status().message();
  PluginFieldCollection const* out = decoded->collection();
  ASSERT_EQ(out->nbFields, fc.nbFields);
  for (int32_t i = 0; i < fc.nbFields; ++i) {
    SCOPED_TRACE(fs[i].name);
    EXPECT_STREQ(out->fields[i].name, fs[i].name);
    EXPECT_EQ(out->fields[i].type, fs[i].type);
    EXPECT_EQ(out->fields[i].length, fs[i].length);
    size_t n = *pluginFieldBytes(fs[i].type, fs[i].length);
    if (n) {
      ASSERT_NE(out->fields[i].data, nullptr);
      EXPECT_EQ(std::memcmp(out->fields[i].data, fs[i].data, n), 0);
    }
  }
  EXPECT_EQ(*pluginFieldBytes(PluginFieldType::kINT4, 3), 2u);
  EXPECT_EQ(*pluginFieldBytes(PluginFieldType::kDIMS, 2), 2 * sizeof(Dims));
}

TEST(PluginFields, MalformedInputIsRefused) {
  int32_t v = 3;
  PluginField bad[] = {{nullptr, &v, PluginFieldType::kINT32, 1}};
  PluginFieldCollection fc{1, bad};
  EXPECT_FALSE(encodePluginFields(fc).isOk());
  PluginField noData[] = {{"x", nullptr, PluginFieldType::kINT32, 2}};
  fc.fields = noData;
  auto e = encodePluginFields(fc);
  ASSERT_FALSE(e.isOk());
  EXPECT_NE(e.status().message().find("'x'"), std::string::npos) << e.status().message();
  PluginField badType[] = {{"t", &v, static_cast<PluginFieldType>(99), 1}};
  fc.fields = badType;
  EXPECT_FALSE(encodePluginFields(fc).isOk());

  PluginField ok[] = {{"x", &v, PluginFieldType::kINT32, 1}};
  fc.fields = ok;
  auto bytes = encodePluginFields(fc);
  ASSERT_TRUE(bytes.isOk());
  // Every truncation is refused, never read past the end.
  for (size_t n = 0; n < bytes->size(); ++n) EXPECT_FALSE(decodePluginFields(bytes->data(), n).isOk()) << n;
  std::vector<uint8_t> longer = *bytes;
  longer.push_back(0);
  EXPECT_FALSE(decodePluginFields(longer.data(), longer.size()).isOk());
  std::vector<uint8_t> wrongMagic = *bytes;
  wrongMagic[0] = 'X';
  EXPECT_FALSE(decodePluginFields(wrongMagic.data(), wrongMagic.size()).isOk());
}

// Outputs exercise each DimensionOperation on the input's dims (x: [d0, d1]).
class ExprPlugin final : public IPluginV2DynamicExt {
 public:
  explicit ExprPlugin(bool sizeTensor = false, bool foreign = false) : sizeTensor_(sizeTensor), foreign_(foreign) {}
  char const* getPluginType() const noexcept override { return "Expr"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  int32_t getNbOutputs() const noexcept override { return 3; }
  int32_t initialize() noexcept override { return 0; }
  void terminate() noexcept override {}
  size_t getSerializationSize() const noexcept override { return 0; }
  void serialize(void*) const noexcept override {}
  void destroy() noexcept override { delete this; }
  IPluginV2DynamicExt* clone() const noexcept override { return new ExprPlugin(sizeTensor_, foreign_); }
  void setPluginNamespace(char const*) noexcept override {}
  char const* getPluginNamespace() const noexcept override { return ""; }
  DataType getOutputDataType(int32_t i, DataType const* t, int32_t) const noexcept override {
    return i == 2 ? DataType::kINT32 : t[0];
  }
  DimsExprs getOutputDimensions(int32_t i, DimsExprs const* in, int32_t, IExprBuilder& eb) noexcept override {
    auto const& d0 = *in[0].d[0];
    auto const& d1 = *in[0].d[1];
    DimsExprs o{};
    if (i == 0) {
      o.nbDims = 8;
      o.d[0] = eb.operation(DimensionOperation::kSUM, d0, d1);
      o.d[1] = eb.operation(DimensionOperation::kPROD, d0, d1);
      o.d[2] = eb.operation(DimensionOperation::kMAX, d0, d1);
      o.d[3] = eb.operation(DimensionOperation::kMIN, d0, d1);
      o.d[4] = eb.operation(DimensionOperation::kSUB, d1, d0);
      o.d[5] = eb.operation(DimensionOperation::kEQUAL, d0, *eb.constant(2));
      o.d[6] = eb.operation(DimensionOperation::kFLOOR_DIV, d1, *eb.constant(3));
      o.d[7] = eb.operation(DimensionOperation::kCEIL_DIV, d1, *eb.constant(3));
    } else if (i == 1) {
      o.nbDims = 2;
      o.d[0] = eb.operation(DimensionOperation::kPROD, d0, *eb.constant(0));  // 0 even when d0 is unknown
      o.d[1] = eb.operation(DimensionOperation::kLESS, d0, d1);
      if (foreign_) o.d[1] = &fake_;
    } else {
      o.nbDims = 0;
      if (sizeTensor_) (void)eb.declareSizeTensor(2, *eb.constant(4), *eb.constant(8));
    }
    return o;
  }
  bool supportsFormatCombination(int32_t, PluginTensorDesc const*, int32_t, int32_t) noexcept override { return true; }
  void configurePlugin(DynamicPluginTensorDesc const*, int32_t, DynamicPluginTensorDesc const*, int32_t) noexcept override {}
  size_t getWorkspaceSize(PluginTensorDesc const*, int32_t, PluginTensorDesc const*, int32_t) const noexcept override {
    return 0;
  }
  int32_t enqueue(PluginTensorDesc const*, PluginTensorDesc const*, void const* const*, void* const*, void*,
                  cudaStream_t) noexcept override {
    return 1;
  }

 private:
  class Fake final : public IDimensionExpr {
   public:
    bool isConstant() const noexcept override { return true; }
    int64_t getConstantValue() const noexcept override { return 1; }
    bool isSizeTensor() const noexcept override { return false; }
  };
  bool sizeTensor_, foreign_;
  Fake fake_;
};

Result<ShapeState> inferWith(IPluginV2DynamicExt* p, Dims x) {
  Graph g;
  Value* in = *g.addInput("x", DataType::kFLOAT, x);
  Node* n = g.addNode(OpType::kPluginV2, "p", {in}, 3);
  KILN_ASSIGN_OR_RETURN(n->plugin, PluginInstance::adoptV2(p, "p"));
  for (Value* v : n->outputs) g.markOutput(v);
  KILN_RETURN_IF_ERROR(g.renumber());
  ShapeState st;
  st.resize(g.values().size());
  st.info[in->id] = {DataType::kFLOAT, x};
  KILN_RETURN_IF_ERROR(inferShapes(g, st, nullptr));
  return st;
}

TEST(PluginInference, DimensionOperationsOverConcreteDims) {
  auto st = inferWith(new ExprPlugin, makeDims({2, 7}));
  ASSERT_TRUE(st.isOk()) << st.status().message();
  // Values: 0 = x, then the three outputs.
  EXPECT_EQ(dimsToString(st->info[1].shape), "[9,14,7,2,5,1,2,3]");
  EXPECT_EQ(dimsToString(st->info[2].shape), "[0,1]");
  EXPECT_EQ(st->info[3].shape.nbDims, 0);
  EXPECT_EQ(st->info[3].dtype, DataType::kINT32);
}

TEST(PluginInference, UnknownDimsGiveUnknownResults) {
  auto st = inferWith(new ExprPlugin, makeDims({-1, 7}));
  ASSERT_TRUE(st.isOk()) << st.status().message();
  EXPECT_EQ(dimsToString(st->info[1].shape), "[-1,-1,-1,-1,-1,-1,2,3]");
  EXPECT_EQ(dimsToString(st->info[2].shape), "[0,-1]");
}

TEST(PluginInference, SizeTensorsAndForeignExpressionsAreRefused) {
  auto st = inferWith(new ExprPlugin(true, false), makeDims({2, 7}));
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.status().message().find("declareSizeTensor"), std::string::npos) << st.status().message();
  EXPECT_NE(st.status().message().find("only IPluginV3 plugins may"), std::string::npos) << st.status().message();
  EXPECT_NE(st.status().message().find("plugin 'Expr'"), std::string::npos) << st.status().message();
  auto st2 = inferWith(new ExprPlugin(false, true), makeDims({2, 7}));
  ASSERT_FALSE(st2.isOk());
  EXPECT_NE(st2.status().message().find("not an expression from the IExprBuilder"), std::string::npos)
      << st2.status().message();
}

TEST(PluginInstance, RecordOfAnUnresolvedPlanPluginSaysSo) {
  PluginRecord r;
  r.type = "T";
  r.version = "3";
  r.ns = "n";
  r.data = {1, 2};
  auto p = PluginInstance::fromRecord(r, "layer");
  EXPECT_FALSE(p->resolved());
  EXPECT_EQ(p->describe(), "plugin 'T' version '3' namespace 'n'");
  auto back = p->record();
  ASSERT_TRUE(back.isOk());
  EXPECT_EQ(back->data, r.data);
  EXPECT_FALSE(p->clone().isOk());
}

}  // namespace
}  // namespace kiln::ir
