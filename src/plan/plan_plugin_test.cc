// Tests of plugin records in plans: a plugin node's kind, type, version, namespace and bytes round trip (the read
// node holds them unresolved until the runtime's registry lookup), the summary lists them, and a plugin node
// without a record is refused.
#include <gtest/gtest.h>

#include <cstring>

#include "plan/plan.h"

namespace kiln::plan {
namespace {

using ir::OpType;

PlanInfo pluginPlan(bool withRecord) {
  PlanInfo p;
  p.name = "plugins";
  p.kilnVersion = "0.1.0";
  p.graph = std::make_unique<ir::Graph>();
  ir::Value* x = *p.graph->addInput("x", DataType::kFLOAT, makeDims({2, 3}));
  ir::Node* n = p.graph->addNode(OpType::kPluginV3, "custom", {x}, 2);
  n->attrs.setInt("num_shape_inputs", 0);
  n->attrs.setInts("out_types", {0, 0});
  n->tactic = "pluginv3_reference_host";
  for (ir::Value* v : n->outputs) {
    v->shape = makeDims({2, 3});
    p.graph->markOutput(v);
  }
  if (withRecord) {
    ir::PluginRecord r;
    r.kind = ir::PluginKind::kV3;
    r.type = "MyPlugin";
    r.version = "7";
    r.ns = "my.ns";
    r.data = {0, 1, 2, 0, 255, 'K'};
    n->plugin = ir::PluginInstance::fromRecord(r, "custom");
  }
  EXPECT_TRUE(p.graph->renumber().isOk());
  p.profiles.push_back(Profile{{{"x", makeDims({2, 3}), makeDims({2, 3}), makeDims({2, 3})}}});
  for (size_t i = 0; i < p.graph->values().size(); ++i) p.placements.push_back(Placement{});
  p.workspaceOffsets = {-1};
  p.workspaceSizes = {0};
  return p;
}

TEST(PlanPlugins, RecordRoundTripsAndTheSummaryListsIt) {
  auto bytes = writePlan(pluginPlan(true));
  ASSERT_TRUE(bytes.isOk()) << bytes.status().message();
  auto r = readPlan(bytes->data(), bytes->size());
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ir::Node const* n = r->graph->findNode("custom");
  ASSERT_NE(n, nullptr);
  ASSERT_NE(n->plugin, nullptr);
  EXPECT_FALSE(n->plugin->resolved());
  auto rec = n->plugin->record();
  ASSERT_TRUE(rec.isOk());
  EXPECT_EQ(rec->kind, ir::PluginKind::kV3);
  EXPECT_EQ(rec->type, "MyPlugin");
  EXPECT_EQ(rec->version, "7");
  EXPECT_EQ(rec->ns, "my.ns");
  EXPECT_EQ(rec->data, (std::vector<uint8_t>{0, 1, 2, 0, 255, 'K'}));
  EXPECT_EQ(r->graph->findNode("custom")->attrs.getInt("num_shape_inputs", -1), 0);
  // Written again from the read plan: the same bytes.
  auto again = writePlan(*r);
  ASSERT_TRUE(again.isOk());
  ASSERT_EQ(again->size(), bytes->size());
  EXPECT_EQ(std::memcmp(again->data(), bytes->data(), bytes->size()), 0);
  auto s = readPlanSummary(bytes->data(), bytes->size());
  ASSERT_TRUE(s.isOk()) << s.status().message();
  ASSERT_EQ(s->plugins.size(), 1u);
  EXPECT_EQ(s->plugins[0], "custom: plugin 'MyPlugin' version '7' namespace 'my.ns'");
}

TEST(PlanPlugins, PluginNodeWithoutPluginCannotBeWritten) {
  auto bytes = writePlan(pluginPlan(false));
  ASSERT_FALSE(bytes.isOk());
  EXPECT_NE(bytes.status().message().find("has no plugin object"), std::string::npos) << bytes.status().message();
}

}  // namespace
}  // namespace kiln::plan
