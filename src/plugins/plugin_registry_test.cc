// Tests of the plugin interfaces and the registry: a V2 dynamic plugin and a V3 plugin written the way
// TensorRT tutorials write them, static registration, lookup, duplicates, deregistration, listing, resources,
// concurrent registration.
#include "plugins/plugin_registry.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kiln/kiln_plugin.h"

namespace kiln {
namespace {

//
// A V2 dynamic plugin: y = x * scale, one float input, one float output.
//

constexpr char const* kScaleName = "KilnTestScale";
constexpr char const* kScaleVersion = "1";

class ScalePlugin : public IPluginV2DynamicExt {
 public:
  explicit ScalePlugin(float scale) : scale_(scale) {}
  ScalePlugin(void const* data, size_t length) {
    if (length == sizeof(float)) std::memcpy(&scale_, data, sizeof(float));
  }
  float scale() const { return scale_; }

  IPluginV2DynamicExt* clone() const noexcept override {
    auto* p = new ScalePlugin(scale_);
    p->setPluginNamespace(ns_.c_str());
    return p;
  }
  DimsExprs getOutputDimensions(int32_t outputIndex, DimsExprs const* inputs, int32_t nbInputs,
                                IExprBuilder& exprBuilder) noexcept override {
    (void)outputIndex;
    (void)nbInputs;
    DimsExprs out = inputs[0];
    // Doubles the last dimension, to exercise the expression builder.
    out.d[out.nbDims - 1] =
        exprBuilder.operation(DimensionOperation::kPROD, *inputs[0].d[out.nbDims - 1], *exprBuilder.constant(2));
    return out;
  }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override {
    (void)nbInputs;
    (void)nbOutputs;
    return inOut[pos].type == DataType::kFLOAT && inOut[pos].format == TensorFormat::kLINEAR;
  }
  void configurePlugin(DynamicPluginTensorDesc const* in, int32_t nbInputs, DynamicPluginTensorDesc const* out,
                       int32_t nbOutputs) noexcept override {
    (void)in;
    (void)nbInputs;
    (void)out;
    (void)nbOutputs;
    configured_ = true;
  }
  size_t getWorkspaceSize(PluginTensorDesc const*, int32_t, PluginTensorDesc const*, int32_t) const noexcept override {
    return 0;
  }
  // Host pointers in these tests; the count comes from the descriptor.
  int32_t enqueue(PluginTensorDesc const* inputDesc, PluginTensorDesc const* outputDesc, void const* const* inputs,
                  void* const* outputs, void* workspace, cudaStream_t stream) noexcept override {
    (void)outputDesc;
    (void)workspace;
    (void)stream;
    int64_t n = 1;
    for (int32_t i = 0; i < inputDesc[0].dims.nbDims; ++i) n *= inputDesc[0].dims.d[i];
    auto const* x = static_cast<float const*>(inputs[0]);
    auto* y = static_cast<float*>(outputs[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale_;
    return 0;
  }
  DataType getOutputDataType(int32_t index, DataType const* inputTypes, int32_t nbInputs) const noexcept override {
    (void)index;
    return nbInputs > 0 ? inputTypes[0] : DataType::kFLOAT;
  }
  char const* getPluginType() const noexcept override { return kScaleName; }
  char const* getPluginVersion() const noexcept override { return kScaleVersion; }
  int32_t getNbOutputs() const noexcept override { return 1; }
  int32_t initialize() noexcept override { return 0; }
  void terminate() noexcept override {}
  size_t getSerializationSize() const noexcept override { return sizeof(float); }
  void serialize(void* buffer) const noexcept override { std::memcpy(buffer, &scale_, sizeof(float)); }
  void destroy() noexcept override { delete this; }
  void setPluginNamespace(char const* ns) noexcept override { ns_ = ns == nullptr ? "" : ns; }
  char const* getPluginNamespace() const noexcept override { return ns_.c_str(); }
  bool configured() const { return configured_; }

 private:
  float scale_ = 1.0F;
  std::string ns_;
  bool configured_ = false;
};

class ScalePluginCreator : public IPluginCreator {
 public:
  ScalePluginCreator() {
    attributes_.emplace_back("scale", nullptr, PluginFieldType::kFLOAT32, 1);
    fc_.nbFields = static_cast<int32_t>(attributes_.size());
    fc_.fields = attributes_.data();
  }
  char const* getPluginName() const noexcept override { return kScaleName; }
  char const* getPluginVersion() const noexcept override { return kScaleVersion; }
  PluginFieldCollection const* getFieldNames() noexcept override { return &fc_; }
  IPluginV2* createPlugin(char const* name, PluginFieldCollection const* fc) noexcept override {
    (void)name;
    float scale = 1.0F;
    for (int32_t i = 0; fc != nullptr && i < fc->nbFields; ++i) {
      PluginField const& f = fc->fields[i];
      if (std::strcmp(f.name, "scale") == 0) {
        if (f.type != PluginFieldType::kFLOAT32 || f.length != 1) return nullptr;
        scale = *static_cast<float const*>(f.data);
      }
    }
    auto* p = new ScalePlugin(scale);
    p->setPluginNamespace(ns_.c_str());
    return p;
  }
  IPluginV2* deserializePlugin(char const* name, void const* data, size_t length) noexcept override {
    (void)name;
    if (length != sizeof(float)) return nullptr;
    auto* p = new ScalePlugin(data, length);
    p->setPluginNamespace(ns_.c_str());
    return p;
  }
  void setPluginNamespace(char const* ns) noexcept override { ns_ = ns == nullptr ? "" : ns; }
  char const* getPluginNamespace() const noexcept override { return ns_.c_str(); }

 private:
  std::vector<PluginField> attributes_;
  PluginFieldCollection fc_{};
  std::string ns_;
};

REGISTER_KILN_PLUGIN(ScalePluginCreator);

//
// A V3 plugin: one object implementing all three capabilities, with one int field "axis".
//

class AxisPluginV3 : public IPluginV3, public IPluginV3OneCore, public IPluginV3OneBuild, public IPluginV3OneRuntime {
 public:
  explicit AxisPluginV3(int32_t axis) : axis_(axis) {
    field_ = PluginField("axis", &axis_, PluginFieldType::kINT32, 1);
    fc_ = PluginFieldCollection{1, &field_};
  }
  int32_t axis() const { return axis_; }

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
  // getInterfaceInfo is not overridden: each base (IPluginV3, the capabilities) answers with its own kind.
  IPluginV3* clone() noexcept override { return new AxisPluginV3(axis_); }

  char const* getPluginName() const noexcept override { return "KilnTestAxisV3"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  char const* getPluginNamespace() const noexcept override { return ""; }

  int32_t configurePlugin(DynamicPluginTensorDesc const*, int32_t, DynamicPluginTensorDesc const*,
                          int32_t) noexcept override {
    return 0;
  }
  int32_t getOutputDataTypes(DataType* outputTypes, int32_t nbOutputs, DataType const* inputTypes,
                             int32_t nbInputs) const noexcept override {
    if (nbOutputs != 1 || nbInputs != 1) return 1;
    outputTypes[0] = inputTypes[0];
    return 0;
  }
  int32_t getOutputShapes(DimsExprs const* inputs, int32_t nbInputs, DimsExprs const*, int32_t, DimsExprs* outputs,
                          int32_t nbOutputs, IExprBuilder&) noexcept override {
    if (nbOutputs != 1 || nbInputs != 1) return 1;
    outputs[0] = inputs[0];
    return 0;
  }
  bool supportsFormatCombination(int32_t pos, DynamicPluginTensorDesc const* inOut, int32_t,
                                 int32_t) noexcept override {
    return inOut[pos].desc.format == TensorFormat::kLINEAR;
  }
  int32_t getNbOutputs() const noexcept override { return 1; }

  int32_t onShapeChange(PluginTensorDesc const*, int32_t, PluginTensorDesc const*, int32_t) noexcept override {
    return 0;
  }
  int32_t enqueue(PluginTensorDesc const*, PluginTensorDesc const*, void const* const*, void* const*, void*,
                  cudaStream_t) noexcept override {
    return 0;
  }
  IPluginV3* attachToContext(IPluginResourceContext*) noexcept override { return clone(); }
  PluginFieldCollection const* getFieldsToSerialize() noexcept override { return &fc_; }

 private:
  int32_t axis_;
  PluginField field_;
  PluginFieldCollection fc_{};
};

class AxisCreatorV3 : public IPluginCreatorV3One {
 public:
  explicit AxisCreatorV3(char const* ns = "", char const* version = "1") : ns_(ns), version_(version) {
    field_ = PluginField("axis", nullptr, PluginFieldType::kINT32, 1);
    fc_ = PluginFieldCollection{1, &field_};
  }
  IPluginV3* createPlugin(char const*, PluginFieldCollection const* fc, TensorRTPhase) noexcept override {
    int32_t axis = 0;
    for (int32_t i = 0; fc != nullptr && i < fc->nbFields; ++i) {
      if (std::strcmp(fc->fields[i].name, "axis") == 0) axis = *static_cast<int32_t const*>(fc->fields[i].data);
    }
    return new AxisPluginV3(axis);
  }
  PluginFieldCollection const* getFieldNames() noexcept override { return &fc_; }
  char const* getPluginName() const noexcept override { return "KilnTestAxisV3"; }
  char const* getPluginVersion() const noexcept override { return version_; }
  char const* getPluginNamespace() const noexcept override { return ns_; }

 private:
  char const* ns_;
  char const* version_;
  PluginField field_;
  PluginFieldCollection fc_{};
};

REGISTER_KILN_PLUGIN(AxisCreatorV3);

//
// Helpers
//

class CountingRecorder : public IErrorRecorder {
 public:
  int32_t getNbErrors() const noexcept override { return static_cast<int32_t>(errors.size()); }
  ErrorCode getErrorCode(int32_t i) const noexcept override { return errors.at(static_cast<size_t>(i)).first; }
  ErrorDesc getErrorDesc(int32_t i) const noexcept override { return errors.at(static_cast<size_t>(i)).second.c_str(); }
  bool hasOverflowed() const noexcept override { return false; }
  void clear() noexcept override { errors.clear(); }
  bool reportError(ErrorCode code, ErrorDesc desc) noexcept override {
    errors.emplace_back(code, desc);
    return false;
  }
  RefCount incRefCount() noexcept override { return ++refs; }
  RefCount decRefCount() noexcept override { return --refs; }
  std::vector<std::pair<ErrorCode, std::string>> errors;
  RefCount refs = 0;
};

// Constant-only expressions: enough to evaluate getOutputDimensions on known shapes.
class ConstExpr : public IDimensionExpr {
 public:
  explicit ConstExpr(int64_t v) : v_(v) {}
  bool isConstant() const noexcept override { return true; }
  int64_t getConstantValue() const noexcept override { return v_; }
  bool isSizeTensor() const noexcept override { return false; }

 private:
  int64_t v_;
};

class ConstExprBuilder : public IExprBuilder {
 public:
  IDimensionExpr const* constant(int64_t value) noexcept override {
    exprs_.push_back(std::make_unique<ConstExpr>(value));
    return exprs_.back().get();
  }
  IDimensionExpr const* operation(DimensionOperation op, IDimensionExpr const& a,
                                  IDimensionExpr const& b) noexcept override {
    int64_t const x = a.getConstantValue();
    int64_t const y = b.getConstantValue();
    switch (op) {
      case DimensionOperation::kSUM:
        return constant(x + y);
      case DimensionOperation::kPROD:
        return constant(x * y);
      case DimensionOperation::kMAX:
        return constant(x > y ? x : y);
      case DimensionOperation::kMIN:
        return constant(x < y ? x : y);
      case DimensionOperation::kSUB:
        return constant(x - y);
      case DimensionOperation::kEQUAL:
        return constant(x == y ? 1 : 0);
      case DimensionOperation::kLESS:
        return constant(x < y ? 1 : 0);
      case DimensionOperation::kFLOOR_DIV:
        return constant(x / y - ((x % y != 0 && ((x < 0) != (y < 0))) ? 1 : 0));
      case DimensionOperation::kCEIL_DIV:
        return constant(x / y + ((x % y != 0 && ((x < 0) == (y < 0))) ? 1 : 0));
    }
    return nullptr;
  }
  IDimensionExpr const* declareSizeTensor(int32_t, IDimensionExpr const&, IDimensionExpr const&) override {
    return nullptr;
  }

 private:
  std::vector<std::unique_ptr<ConstExpr>> exprs_;
};

struct PluginDeleter {
  void operator()(IPluginV2* p) const { p->destroy(); }
};
using PluginPtr = std::unique_ptr<IPluginV2, PluginDeleter>;

//
// Tests
//

TEST(PluginRegistryTest, StaticallyRegisteredCreatorIsFound) {
  IPluginRegistry* registry = getPluginRegistry();
  ASSERT_NE(registry, nullptr);
  EXPECT_EQ(registry, getPluginRegistry());
  IPluginCreatorInterface* any = registry->getCreator(kScaleName, kScaleVersion, "");
  ASSERT_NE(any, nullptr);
  EXPECT_STREQ(any->getInterfaceInfo().kind, "PLUGIN CREATOR_V1");
  IPluginCreator* v2 = registry->getPluginCreator(kScaleName, kScaleVersion);
  EXPECT_EQ(static_cast<IPluginCreatorInterface*>(v2), any);
  EXPECT_STREQ(v2->getPluginNamespace(), "");
  EXPECT_EQ(registry->getCreator(kScaleName, "2", ""), nullptr);
  EXPECT_EQ(registry->getCreator(kScaleName, kScaleVersion, "elsewhere"), nullptr);
  EXPECT_EQ(registry->getCreator(nullptr, kScaleVersion, ""), nullptr);
  // A null namespace means the empty one.
  EXPECT_EQ(registry->getCreator(kScaleName, kScaleVersion, nullptr), any);
}

TEST(PluginRegistryTest, StaticallyRegisteredV3CreatorIsFound) {
  IPluginCreatorInterface* creator = getPluginRegistry()->getCreator("KilnTestAxisV3", "1", "");
  ASSERT_NE(creator, nullptr);
  EXPECT_STREQ(creator->getInterfaceInfo().kind, "PLUGIN CREATOR_V3ONE");
  // Not a V2 creator, so the V2 lookup does not return it.
  EXPECT_EQ(getPluginRegistry()->getPluginCreator("KilnTestAxisV3", "1", ""), nullptr);
}

TEST(PluginRegistryTest, CreateCloneSerializeRoundTrip) {
  IPluginCreator* creator = getPluginRegistry()->getPluginCreator(kScaleName, kScaleVersion, "");
  ASSERT_NE(creator, nullptr);
  PluginFieldCollection const* names = creator->getFieldNames();
  ASSERT_EQ(names->nbFields, 1);
  EXPECT_STREQ(names->fields[0].name, "scale");
  EXPECT_EQ(names->fields[0].type, PluginFieldType::kFLOAT32);

  float const scale = 2.5F;
  PluginField field("scale", &scale, PluginFieldType::kFLOAT32, 1);
  PluginFieldCollection fc{1, &field};
  PluginPtr plugin(creator->createPlugin("scale_layer", &fc));
  ASSERT_NE(plugin, nullptr);
  auto* dyn = static_cast<IPluginV2DynamicExt*>(plugin.get());
  EXPECT_STREQ(dyn->getPluginType(), kScaleName);
  EXPECT_EQ(dyn->getNbOutputs(), 1);
  DataType const in[] = {DataType::kFLOAT};
  EXPECT_EQ(dyn->getOutputDataType(0, in, 1), DataType::kFLOAT);
  // The V2DynamicExt version tag: kV2_DYNAMICEXT in the upper byte, 10.16.0 below (read through the base).
  EXPECT_EQ(static_cast<IPluginV2 const*>(dyn)->getTensorRTVersion(), (3 << 24) | 101600);

  // Serialize, then rebuild through the creator.
  std::vector<char> bytes(dyn->getSerializationSize());
  ASSERT_EQ(bytes.size(), sizeof(float));
  dyn->serialize(bytes.data());
  PluginPtr restored(creator->deserializePlugin("scale_layer", bytes.data(), bytes.size()));
  ASSERT_NE(restored, nullptr);
  EXPECT_FLOAT_EQ(static_cast<ScalePlugin*>(restored.get())->scale(), 2.5F);
  EXPECT_EQ(creator->deserializePlugin("bad", bytes.data(), 3), nullptr);

  // A clone is independent of its source and computes the same thing.
  PluginPtr copy(dyn->clone());
  ASSERT_NE(copy, nullptr);
  plugin.reset();
  auto* copyDyn = static_cast<IPluginV2DynamicExt*>(copy.get());
  PluginTensorDesc desc{};
  desc.dims = Dims{2, {2, 3}};
  desc.type = DataType::kFLOAT;
  desc.format = TensorFormat::kLINEAR;
  desc.scale = -1.0F;
  EXPECT_TRUE(copyDyn->supportsFormatCombination(0, &desc, 1, 0));
  DynamicPluginTensorDesc dynDesc{desc, desc.dims, desc.dims, desc.dims};
  copyDyn->configurePlugin(&dynDesc, 1, &dynDesc, 1);
  EXPECT_TRUE(static_cast<ScalePlugin*>(copy.get())->configured());
  float const x[6] = {1, -2, 3, 0.5F, 8, -0.25F};
  float y[6] = {};
  void const* inputs[] = {x};
  void* outputs[] = {y};
  ASSERT_EQ(copyDyn->enqueue(&desc, &desc, inputs, outputs, nullptr, nullptr), 0);
  float const expected[6] = {2.5F, -5.0F, 7.5F, 1.25F, 20.0F, -0.625F};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(y[i], expected[i]) << i;

  // A wrongly typed field is refused.
  int32_t const wrong = 3;
  PluginField bad("scale", &wrong, PluginFieldType::kINT32, 1);
  PluginFieldCollection badFc{1, &bad};
  EXPECT_EQ(creator->createPlugin("bad", &badFc), nullptr);
}

TEST(PluginRegistryTest, OutputDimensionsThroughExprBuilder) {
  ScalePlugin plugin(1.0F);
  ConstExprBuilder builder;
  DimsExprs in{};
  in.nbDims = 3;
  in.d[0] = builder.constant(4);
  in.d[1] = builder.constant(5);
  in.d[2] = builder.constant(7);
  IPluginV2DynamicExt& dyn = plugin;
  DimsExprs out = dyn.getOutputDimensions(0, &in, 1, builder);
  ASSERT_EQ(out.nbDims, 3);
  EXPECT_EQ(out.d[0]->getConstantValue(), 4);
  EXPECT_EQ(out.d[1]->getConstantValue(), 5);
  EXPECT_EQ(out.d[2]->getConstantValue(), 14);
}

TEST(PluginRegistryTest, DuplicateRegistrationIsRefusedAndReported) {
  IPluginRegistry* registry = getPluginRegistry();
  CountingRecorder recorder;
  registry->setErrorRecorder(&recorder);
  EXPECT_EQ(recorder.refs, 1);
  EXPECT_EQ(registry->getErrorRecorder(), &recorder);

  ScalePluginCreator second;
  EXPECT_FALSE(registry->registerCreator(second, ""));
  ASSERT_EQ(recorder.errors.size(), 1U);
  EXPECT_EQ(recorder.errors[0].first, ErrorCode::kINVALID_ARGUMENT);
  EXPECT_NE(recorder.errors[0].second.find("KilnTestScale"), std::string::npos) << recorder.errors[0].second;
  EXPECT_NE(recorder.errors[0].second.find("already registered"), std::string::npos);
  // The registered one is untouched.
  EXPECT_NE(registry->getPluginCreator(kScaleName, kScaleVersion, ""), &second);

  // The same name and version in another namespace is a different plugin.
  EXPECT_TRUE(registry->registerCreator(second, "other_ns"));
  EXPECT_STREQ(second.getPluginNamespace(), "other_ns");
  EXPECT_EQ(registry->getPluginCreator(kScaleName, kScaleVersion, "other_ns"), &second);
  // The same object twice is refused too.
  EXPECT_FALSE(registry->registerCreator(second, "third_ns"));
  EXPECT_TRUE(registry->deregisterCreator(second));
  EXPECT_EQ(registry->getPluginCreator(kScaleName, kScaleVersion, "other_ns"), nullptr);
  EXPECT_EQ(recorder.errors.size(), 2U);

  registry->setErrorRecorder(nullptr);
  EXPECT_EQ(recorder.refs, 0);
}

TEST(PluginRegistryTest, DeregisterAndRegisterAgain) {
  PluginRegistry registry;
  CountingRecorder recorder;
  registry.setErrorRecorder(&recorder);
  ScalePluginCreator creator;
  ASSERT_TRUE(registry.registerCreator(creator, "ns"));
  EXPECT_EQ(registry.getCreator(kScaleName, kScaleVersion, "ns"), &creator);
  EXPECT_TRUE(registry.deregisterCreator(static_cast<IPluginCreatorInterface const&>(creator)));
  EXPECT_EQ(registry.getCreator(kScaleName, kScaleVersion, "ns"), nullptr);
  EXPECT_FALSE(registry.deregisterCreator(static_cast<IPluginCreatorInterface const&>(creator)));
  EXPECT_EQ(recorder.errors.size(), 1U);
  ASSERT_TRUE(registry.registerCreator(creator, "ns"));
  EXPECT_EQ(registry.getCreator(kScaleName, kScaleVersion, "ns"), &creator);
  registry.setErrorRecorder(nullptr);
}

TEST(PluginRegistryTest, GetAllCreatorsListsEveryGenerationInOrder) {
  PluginRegistry registry;
  int32_t n = -1;
  EXPECT_EQ(registry.getAllCreators(&n), nullptr);
  EXPECT_EQ(n, 0);

  ScalePluginCreator v2;
  AxisCreatorV3 v3;
  AxisCreatorV3 v3b("", "2");
  ASSERT_TRUE(registry.registerCreator(v2, ""));
  ASSERT_TRUE(registry.registerCreator(v3, ""));
  ASSERT_TRUE(registry.registerCreator(v3b, ""));
  IPluginCreatorInterface* const* all = registry.getAllCreators(&n);
  ASSERT_EQ(n, 3);
  EXPECT_EQ(all[0], &v2);
  EXPECT_EQ(all[1], &v3);
  EXPECT_EQ(all[2], &v3b);
  IPluginCreatorInterface* const* recursive = registry.getAllCreatorsRecursive(&n);
  EXPECT_EQ(n, 3);
  EXPECT_EQ(recursive[2], &v3b);

  IPluginCreator* const* v2List = registry.getPluginCreatorList(&n);
  ASSERT_EQ(n, 1);
  EXPECT_EQ(v2List[0], &v2);
  // The V2 lookup does not hand out V3 creators.
  EXPECT_EQ(registry.getPluginCreator("KilnTestAxisV3", "1", ""), nullptr);
  EXPECT_EQ(registry.getCreator("KilnTestAxisV3", "2", ""), &v3b);

  EXPECT_TRUE(registry.deregisterCreator(v3));
  all = registry.getAllCreators(&n);
  ASSERT_EQ(n, 2);
  EXPECT_EQ(all[1], &v3b);
}

TEST(PluginRegistryTest, V3CreatorCreatesPluginsWithCapabilities) {
  PluginRegistry registry;
  AxisCreatorV3 creator("kiln_ns");
  ASSERT_TRUE(registry.registerCreator(creator, ""));
  IPluginCreatorInterface* found = registry.getCreator("KilnTestAxisV3", "1", "kiln_ns");
  ASSERT_EQ(found, &creator);
  ASSERT_STREQ(found->getInterfaceInfo().kind, "PLUGIN CREATOR_V3ONE");
  auto* v3 = static_cast<IPluginCreatorV3One*>(found);

  int32_t const axis = 2;
  PluginField field("axis", &axis, PluginFieldType::kINT32, 1);
  PluginFieldCollection fc{1, &field};
  std::unique_ptr<IPluginV3> plugin(v3->createPlugin("axis_layer", &fc, TensorRTPhase::kBUILD));
  ASSERT_NE(plugin, nullptr);
  EXPECT_STREQ(plugin->getInterfaceInfo().kind, "PLUGIN");
  auto* core = static_cast<IPluginV3OneCore*>(plugin->getCapabilityInterface(PluginCapabilityType::kCORE));
  auto* build = static_cast<IPluginV3OneBuild*>(plugin->getCapabilityInterface(PluginCapabilityType::kBUILD));
  auto* runtime = static_cast<IPluginV3OneRuntime*>(plugin->getCapabilityInterface(PluginCapabilityType::kRUNTIME));
  ASSERT_TRUE(core != nullptr && build != nullptr && runtime != nullptr);
  EXPECT_STREQ(core->getInterfaceInfo().kind, "PLUGIN_V3ONE_CORE");
  EXPECT_STREQ(build->getInterfaceInfo().kind, "PLUGIN_V3ONE_BUILD");
  EXPECT_STREQ(runtime->getInterfaceInfo().kind, "PLUGIN_V3ONE_RUNTIME");
  EXPECT_STREQ(core->getPluginName(), "KilnTestAxisV3");
  EXPECT_EQ(build->getNbOutputs(), 1);
  // Defaults of the optional build methods.
  EXPECT_EQ(build->getNbTactics(), 0);
  EXPECT_EQ(build->getFormatCombinationLimit(), IPluginV3OneBuild::kDEFAULT_FORMAT_COMBINATION_LIMIT);
  EXPECT_EQ(build->getTimingCacheID(), nullptr);
  EXPECT_EQ(runtime->setTactic(0), 0);

  DataType outType = DataType::kINT8;
  DataType const inType = DataType::kHALF;
  EXPECT_EQ(build->getOutputDataTypes(&outType, 1, &inType, 1), 0);
  EXPECT_EQ(outType, DataType::kHALF);

  // The runtime fields rebuild the plugin (what deserialization will do).
  PluginFieldCollection const* saved = runtime->getFieldsToSerialize();
  ASSERT_EQ(saved->nbFields, 1);
  std::unique_ptr<IPluginV3> rebuilt(v3->createPlugin("axis_layer", saved, TensorRTPhase::kRUNTIME));
  ASSERT_NE(rebuilt, nullptr);
  EXPECT_EQ(static_cast<AxisPluginV3*>(rebuilt.get())->axis(), 2);
  std::unique_ptr<IPluginV3> copy(plugin->clone());
  EXPECT_EQ(static_cast<AxisPluginV3*>(copy.get())->axis(), 2);
}

TEST(PluginRegistryTest, V3CreatorKeepsItsOwnNamespace) {
  PluginRegistry registry;
  CountingRecorder recorder;
  registry.setErrorRecorder(&recorder);
  AxisCreatorV3 creator("own_ns");
  EXPECT_FALSE(registry.registerCreator(creator, "other_ns"));
  ASSERT_EQ(recorder.errors.size(), 1U);
  EXPECT_NE(recorder.errors[0].second.find("own_ns"), std::string::npos);
  EXPECT_TRUE(registry.registerCreator(creator, "own_ns"));
  EXPECT_EQ(registry.getCreator("KilnTestAxisV3", "1", "own_ns"), &creator);
  EXPECT_EQ(registry.getCreator("KilnTestAxisV3", "1", ""), nullptr);
  registry.setErrorRecorder(nullptr);
}

// A creator of a generation the registry does not know (e.g. a newer one).
class FutureCreator : public IPluginCreatorInterface {
 public:
  InterfaceInfo getInterfaceInfo() const noexcept override { return InterfaceInfo{"PLUGIN CREATOR_V9", 1, 0}; }
};

// A V2 creator without a name.
class NamelessCreator : public ScalePluginCreator {
 public:
  char const* getPluginName() const noexcept override { return ""; }
};

TEST(PluginRegistryTest, UnknownOrNamelessCreatorsAreRefused) {
  PluginRegistry registry;
  CountingRecorder recorder;
  registry.setErrorRecorder(&recorder);
  FutureCreator future;
  EXPECT_FALSE(registry.registerCreator(future, ""));
  NamelessCreator nameless;
  EXPECT_FALSE(registry.registerCreator(nameless, ""));
  ASSERT_EQ(recorder.errors.size(), 2U);
  EXPECT_EQ(recorder.errors[0].first, ErrorCode::kUNSUPPORTED_STATE);
  EXPECT_NE(recorder.errors[0].second.find("PLUGIN CREATOR_V9"), std::string::npos);
  EXPECT_NE(recorder.errors[1].second.find("no name"), std::string::npos);
  int32_t n = -1;
  registry.getAllCreators(&n);
  EXPECT_EQ(n, 0);
  registry.setErrorRecorder(nullptr);
}

TEST(PluginRegistryTest, ParentSearchFlagIsKept) {
  PluginRegistry registry;
  EXPECT_TRUE(registry.isParentSearchEnabled());
  registry.setParentSearchEnabled(false);
  EXPECT_FALSE(registry.isParentSearchEnabled());
}

class CountedResource : public IPluginResource {
 public:
  explicit CountedResource(int* live, int* released) : live_(live), released_(released) { ++*live_; }
  ~CountedResource() override { --*live_; }
  int32_t release() noexcept override {
    ++*released_;
    return 0;
  }
  IPluginResource* clone() noexcept override { return new CountedResource(live_, released_); }

 private:
  int* live_;
  int* released_;
};

TEST(PluginRegistryTest, PluginResourcesAreSharedAndReleasedWithTheLastReference) {
  PluginRegistry registry;
  int live = 0;
  int released = 0;
  {
    CountedResource original(&live, &released);
    IPluginResource* a = registry.acquirePluginResource("cache", &original);
    ASSERT_NE(a, nullptr);
    EXPECT_NE(a, &original);  // the registry keeps a clone
    IPluginResource* b = registry.acquirePluginResource("cache", &original);
    EXPECT_EQ(a, b);
    EXPECT_EQ(live, 2);
    EXPECT_EQ(registry.releasePluginResource("cache"), 0);
    EXPECT_EQ(live, 2);
    EXPECT_EQ(registry.releasePluginResource("cache"), 0);
    EXPECT_EQ(live, 1);
    EXPECT_EQ(released, 1);
  }
  CountingRecorder recorder;
  registry.setErrorRecorder(&recorder);
  EXPECT_EQ(registry.releasePluginResource("cache"), -1);
  EXPECT_EQ(registry.acquirePluginResource("x", nullptr), nullptr);
  EXPECT_EQ(recorder.errors.size(), 2U);
  registry.setErrorRecorder(nullptr);
}

TEST(PluginRegistryTest, ConcurrentRegistrationKeepsEveryCreator) {
  PluginRegistry registry;
  constexpr int kThreads = 8;
  constexpr int kPerThread = 25;
  std::vector<std::unique_ptr<ScalePluginCreator>> creators;
  std::vector<std::string> namespaces;
  for (int i = 0; i < kThreads * kPerThread; ++i) {
    creators.push_back(std::make_unique<ScalePluginCreator>());
    namespaces.push_back("ns" + std::to_string(i));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t * kPerThread; i < (t + 1) * kPerThread; ++i) {
        EXPECT_TRUE(registry.registerCreator(*creators[i], namespaces[i].c_str()));
        EXPECT_EQ(registry.getCreator(kScaleName, kScaleVersion, namespaces[i].c_str()), creators[i].get());
      }
    });
  }
  for (auto& th : threads) th.join();
  int32_t n = 0;
  registry.getAllCreators(&n);
  EXPECT_EQ(n, kThreads * kPerThread);
}

}  // namespace
}  // namespace kiln
