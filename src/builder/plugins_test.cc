// Tests of the builder's plugin steps: type negotiation inserts casts around a plugin that needs other types and
// records the choice; CPU builds refuse plugins without host execution; builds clone the plugins.
#include "builder/plugins.h"

#include <gtest/gtest.h>

#include "core/dims.h"

namespace kiln::builder {
namespace {

using ir::Graph;
using ir::Node;
using ir::OpType;
using ir::Value;

// One input, one output of the input's shape; accepts only `type`; host execution when `host`.
class TypedPlugin : public IPluginV2DynamicExt {
 public:
  explicit TypedPlugin(DataType type) : type_(type) {}
  char const* getPluginType() const noexcept override { return "Typed"; }
  char const* getPluginVersion() const noexcept override { return "1"; }
  int32_t getNbOutputs() const noexcept override { return 1; }
  int32_t initialize() noexcept override { return 0; }
  void terminate() noexcept override {}
  size_t getSerializationSize() const noexcept override { return 0; }
  void serialize(void*) const noexcept override {}
  void destroy() noexcept override { delete this; }
  IPluginV2DynamicExt* clone() const noexcept override {
    ++clones;
    return new TypedPlugin(type_);
  }
  void setPluginNamespace(char const*) noexcept override {}
  char const* getPluginNamespace() const noexcept override { return ""; }
  DataType getOutputDataType(int32_t, DataType const* in, int32_t) const noexcept override { return in[0]; }
  DimsExprs getOutputDimensions(int32_t, DimsExprs const* in, int32_t, IExprBuilder&) noexcept override { return in[0]; }
  bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* io, int32_t, int32_t) noexcept override {
    return io[pos].type == type_ && io[pos].format == TensorFormat::kLINEAR;
  }
  void configurePlugin(DynamicPluginTensorDesc const* in, int32_t, DynamicPluginTensorDesc const*, int32_t) noexcept override {
    lastMax = in[0].max;
  }
  size_t getWorkspaceSize(PluginTensorDesc const*, int32_t, PluginTensorDesc const*, int32_t) const noexcept override {
    return 0;
  }
  int32_t enqueue(PluginTensorDesc const*, PluginTensorDesc const*, void const* const*, void* const*, void*,
                  cudaStream_t) noexcept override {
    return 0;
  }
  static inline int clones = 0;
  static inline Dims lastMax{};

 private:
  DataType type_;
};

class HostTypedPlugin final : public TypedPlugin, public IPluginHostExecution {
 public:
  using TypedPlugin::TypedPlugin;
  IPluginV2DynamicExt* clone() const noexcept override {
    ++clones;
    return new HostTypedPlugin(DataType::kFLOAT);
  }
  int32_t enqueueHost(PluginTensorDesc const*, PluginTensorDesc const*, void const* const*, void* const*,
                      void*) noexcept override {
    return 0;
  }
};

// x (fp16) -> plugin -> y, marked as output.
std::unique_ptr<Graph> graphWith(IPluginV2DynamicExt* p, DataType inType) {
  auto g = std::make_unique<Graph>();
  Value* x = *g->addInput("x", inType, makeDims({2, 3}));
  Node* n = g->addNode(OpType::kPluginV2, "plug", {x}, 1);
  n->plugin = *ir::PluginInstance::adoptV2(p, "plug");
  g->markOutput(n->outputs[0]);
  EXPECT_TRUE(ir::inferGraphInPlace(*g, nullptr).isOk());
  return g;
}

TEST(PluginNegotiation, CastsAroundAFloat32OnlyPlugin) {
  auto g = graphWith(new HostTypedPlugin(DataType::kFLOAT), DataType::kHALF);
  Value* y = g->outputs()[0];
  std::string const name = y->name;
  EXPECT_EQ(y->dtype, DataType::kHALF);  // the plugin's natural type for fp16 input
  ASSERT_TRUE(negotiatePlugins(*g, DeviceType::kCPU).isOk());
  ASSERT_TRUE(ir::inferGraphInPlace(*g, nullptr).isOk());
  Node* plug = g->findNode("plug");
  ASSERT_NE(plug, nullptr);
  EXPECT_EQ(plug->attrs.getInts("in_types"), std::vector<int64_t>{static_cast<int64_t>(DataType::kFLOAT)});
  EXPECT_EQ(plug->attrs.getInts("out_types"), std::vector<int64_t>{static_cast<int64_t>(DataType::kFLOAT)});
  ASSERT_NE(plug->inputs[0]->producer, nullptr);
  EXPECT_EQ(plug->inputs[0]->producer->op, OpType::kCast);
  EXPECT_EQ(plug->outputs[0]->dtype, DataType::kFLOAT);
  // The network output keeps its name and type, behind a cast back.
  Value* out = g->outputs()[0];
  EXPECT_EQ(out->name, name);
  EXPECT_EQ(out->dtype, DataType::kHALF);
  ASSERT_NE(out->producer, nullptr);
  EXPECT_EQ(out->producer->op, OpType::kCast);
  EXPECT_EQ(out->producer->inputs[0], plug->outputs[0]);
}

TEST(PluginNegotiation, NoCastWhenTheTypeIsAccepted) {
  auto g = graphWith(new HostTypedPlugin(DataType::kFLOAT), DataType::kFLOAT);
  size_t nodes = g->nodes().size();
  ASSERT_TRUE(negotiatePlugins(*g, DeviceType::kCPU).isOk());
  EXPECT_EQ(g->nodes().size(), nodes);
}

TEST(PluginNegotiation, CpuBuildRefusesAPluginWithoutHostExecution) {
  auto g = graphWith(new TypedPlugin(DataType::kFLOAT), DataType::kFLOAT);
  Status s = negotiatePlugins(*g, DeviceType::kCPU);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("plugin 'Typed'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("IPluginHostExecution"), std::string::npos) << s.message();
  EXPECT_TRUE(negotiatePlugins(*g, DeviceType::kGPU).isOk());
}

TEST(PluginNegotiation, NoAcceptedTypeIsAnError) {
  auto g = graphWith(new HostTypedPlugin(DataType::kINT4), DataType::kFLOAT);
  Status s = negotiatePlugins(*g, DeviceType::kCPU);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("accepts input 0 in none of the types"), std::string::npos) << s.message();
}

TEST(PluginNegotiation, BuildsCloneAndConfigureWithProfileBounds) {
  auto g = graphWith(new HostTypedPlugin(DataType::kFLOAT), DataType::kFLOAT);
  auto* before = g->nodes()[0]->plugin.get();
  int clones = TypedPlugin::clones;
  ASSERT_TRUE(clonePlugins(*g).isOk());
  EXPECT_EQ(TypedPlugin::clones, clones + 1);
  EXPECT_NE(g->nodes()[0]->plugin.get(), before);
  ASSERT_TRUE(g->renumber().isOk());
  std::array<ir::ShapeState, 3> st;
  for (int s = 0; s < 3; ++s) {
    st[s].resize(g->values().size());
    for (auto const& v : g->values()) st[s].info[v->id] = {DataType::kFLOAT, makeDims({2 + s, 3})};
  }
  ASSERT_TRUE(configurePlugins(*g, {st}).isOk());
  EXPECT_EQ(dimsToString(TypedPlugin::lastMax), "[4,3]");
}

}  // namespace
}  // namespace kiln::builder
