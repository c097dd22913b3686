// Tests of plugin records in plans: a plugin node's kind, type, version, namespace and bytes round trip (the read
// node holds them unresolved until the runtime's registry lookup), the summary lists them, and a plugin node
// without a record is refused; a V3 node's stored shape expressions (format 1.3) are decoded on read, and malformed
// ones are refused with the node named.
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

// out0 = [x.d0 * 2, x.d1], out1 = [x.d1 - 1]: a valid program for one input and two outputs.
std::vector<int64_t> validShapes() {
  ir::PluginShapeProgram p;
  p.nbInputs = 1;
  using K = ir::ShapeExprNode::Kind;
  p.nodes = {{K::kInputDim, 0, 0, 0}, {K::kConstant, 2, 0, 0}, {K::kOperation, 1, 0, 1}, {K::kInputDim, 0, 1, 0},
             {K::kConstant, 1, 0, 0}, {K::kOperation, 4, 3, 4}};
  p.outputs = {{2, 3}, {5}};
  return p.encode();
}

Result<PlanInfo> withShapes(std::vector<int64_t> const& data) {
  PlanInfo p = pluginPlan(true);
  p.graph->findNode("custom")->attrs.setInts("plugin_shapes", data);
  KILN_ASSIGN_OR_RETURN(HostBuffer bytes, writePlan(p));
  return readPlan(bytes.data(), bytes.size());
}

TEST(PlanPlugins, StoredShapeExpressionsAreDecodedOnRead) {
  auto r = withShapes(validShapes());
  ASSERT_TRUE(r.isOk()) << r.status().message();
  auto program = r->graph->findNode("custom")->plugin->shapeProgram();
  ASSERT_NE(program, nullptr);
  ir::EvalInputs ev;
  ev.inputs = {makeDims({5, 7})};
  auto d = program->evaluate(ev);
  ASSERT_TRUE(d.isOk()) << d.status().message();
  EXPECT_TRUE(dimsEqual((*d)[0], makeDims({10, 7})));
  EXPECT_TRUE(dimsEqual((*d)[1], makeDims({6})));
}

TEST(PlanPlugins, MalformedShapeExpressionsAreRefusedNamingTheNode) {
  std::vector<int64_t> good = validShapes();
  std::vector<std::pair<std::vector<int64_t>, char const*>> cases;
  auto edit = [&](size_t at, int64_t v, char const* why) {
    auto d = good;
    d[at] = v;
    cases.push_back({d, why});
  };
  edit(0, 42, "not a stored shape program");
  edit(1, 3, "written for 3 inputs");
  edit(4, 1000000, "expression nodes");
  edit(4, 7, "truncated");
  edit(5 + 2 * 4 + 2, 2, "earlier nodes expected");   // node 2's operand refers to itself
  edit(5 + 2 * 4 + 1, 99, "unknown operation");
  edit(5 + 0 * 4 + 1, 5, "reads dimension 0 of input 5");
  edit(5 + 0 * 4 + 0, 9, "unknown kind");
  edit(5 + 6 * 4, 9, "has rank 9");
  edit(5 + 6 * 4 + 1, 6, "refers to node 6");
  cases.push_back({std::vector<int64_t>(good.begin(), good.end() - 1), "truncated"});
  auto longer = good;
  longer.push_back(0);
  cases.push_back({longer, "left over"});
  cases.push_back({{}, "not a stored shape program"});
  for (auto const& [data, why] : cases) {
    auto r = withShapes(data);
    ASSERT_FALSE(r.isOk()) << why;
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("custom"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("plugin_shapes"), std::string::npos) << r.status().message();
  }
}

TEST(PlanPlugins, NegativeStoredWorkspaceIsRefused) {
  PlanInfo p = pluginPlan(true);
  p.graph->findNode("custom")->attrs.setInt("plugin_workspace", -5);
  auto bytes = writePlan(p);
  ASSERT_TRUE(bytes.isOk());
  auto r = readPlan(bytes->data(), bytes->size());
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("plugin_workspace"), std::string::npos) << r.status().message();
}

TEST(PlanPlugins, PluginNodeWithoutPluginCannotBeWritten) {
  auto bytes = writePlan(pluginPlan(false));
  ASSERT_FALSE(bytes.isOk());
  EXPECT_NE(bytes.status().message().find("has no plugin object"), std::string::npos) << bytes.status().message();
}

}  // namespace
}  // namespace kiln::plan
