// Tests of the host graph interpreter on small graphs written in the IR text form.
#include "backends/reference/graph_interpreter.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/text.h"
#include "kiln/kiln.h"

namespace kiln::backends {
namespace {

std::unique_ptr<ir::Graph> parse(std::string_view text) {
  auto g = ir::parseGraph(text);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  return g.isOk() ? std::move(g).value() : nullptr;
}

// y = relu(x + c), z = x * 2 (c broadcast over rows), then Shape of x; x has a dynamic batch dim.
constexpr char kGraph[] =
    "graph {\n"
    "  input x: f32[-1,3]\n"
    "  c: f32[3] = Constant \"c\" () {data=[1.0,-2.0,0.5]}\n"
    "  two: f32[1] = Constant \"two\" () {data=[2.0]}\n"
    "  s: f32[-1,3] = ElementWise \"add\" (x, c) {op=0}\n"
    "  y: f32[-1,3] = Activation \"relu\" (s) {type=0}\n"
    "  z: f32[-1,3] = ElementWise \"mul\" (x, two) {op=1}\n"
    "  sh: i64[2] = Shape \"shape\" (x)\n"
    "  output z\n"
    "  output y\n"
    "  output sh\n"
    "}\n";

TEST(GraphInterpreter, RunsEveryNodeAndReturnsOutputsInOrder) {
  auto g = parse(kGraph);
  ASSERT_TRUE(g);
  for (int64_t rows : {1, 2, 5}) {
    std::vector<float> xv;
    for (int64_t i = 0; i < rows * 3; ++i) xv.push_back(static_cast<float>(i) * 0.75f - 2.0f);
    HostTensor x = HostTensor::fromVector(DataType::kFLOAT, makeDims({rows, 3}), xv);
    auto r = runGraphOnHost(*g, {x});
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    ASSERT_EQ(r->size(), 3u);
    HostTensor const& z = (*r)[0];
    HostTensor const& y = (*r)[1];
    HostTensor const& sh = (*r)[2];
    EXPECT_TRUE(dimsEqual(z.shape(), makeDims({rows, 3})));
    EXPECT_TRUE(dimsEqual(y.shape(), makeDims({rows, 3})));
    float const c[3] = {1.0f, -2.0f, 0.5f};
    for (int64_t i = 0; i < rows * 3; ++i) {
      EXPECT_EQ(z.as<float>()[i], xv[i] * 2.0f);
      EXPECT_EQ(y.as<float>()[i], std::max(0.0f, xv[i] + c[i % 3]));
    }
    EXPECT_EQ(sh.toInt64Vector(), (std::vector<int64_t>{rows, 3}));
  }
}

TEST(GraphInterpreter, WorksOnGraphsWhoseNodesAreOutOfOrder) {
  // Nodes appended out of topological order through the API: the interpreter sorts a clone.
  ir::Graph g;
  ir::Value* x = *g.addInput("x", DataType::kFLOAT, makeDims({2}));
  ir::Node* second = g.addNode(ir::OpType::kActivation, "relu", {x});
  second->attrs.setInt("type", 0);
  ir::Node* first = g.addNode(ir::OpType::kUnary, "neg", {x});
  first->attrs.setInt("op", static_cast<int64_t>(UnaryOperation::kNEG));
  second->inputs[0] = first->outputs[0];
  g.markOutput(second->outputs[0]);
  auto r = runGraphOnHost(g, {HostTensor::fromVector<float>(DataType::kFLOAT, makeDims({2}), {1.5f, -2.5f})});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].as<float>()[0], 0.0f);
  EXPECT_EQ((*r)[0].as<float>()[1], 2.5f);
  EXPECT_EQ(g.nodes()[0].get(), second);  // the caller's graph is untouched
}

TEST(GraphInterpreter, OutputsThatAreInputsOrConstantsAreCopies) {
  auto g = parse(
      "graph {\n  input x: i32[2]\n  c: i64[2] = Constant \"c\" () {data=[7,-9]}\n  output x\n  output c\n}\n");
  ASSERT_TRUE(g);
  HostTensor x = HostTensor::fromVector<int>(DataType::kINT32, makeDims({2}), {3, 4});
  auto r = runGraphOnHost(*g, {x});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].toInt64Vector(), (std::vector<int64_t>{3, 4}));
  EXPECT_NE((*r)[0].data(), x.data());
  EXPECT_EQ((*r)[1].toInt64Vector(), (std::vector<int64_t>{7, -9}));
  EXPECT_NE((*r)[1].data(), g->findNode("c")->constant->data());
}

TEST(GraphInterpreter, ZeroSizedInputs) {
  auto g = parse(kGraph);
  ASSERT_TRUE(g);
  HostTensor x = HostTensor::fromVector<float>(DataType::kFLOAT, makeDims({0, 3}), {});
  auto r = runGraphOnHost(*g, {x});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].count(), 0);
  EXPECT_EQ((*r)[2].toInt64Vector(), (std::vector<int64_t>{0, 3}));
}

TEST(GraphInterpreter, BadInputsAreErrors) {
  auto g = parse(kGraph);
  ASSERT_TRUE(g);
  auto none = runGraphOnHost(*g, {});
  EXPECT_FALSE(none.isOk());
  EXPECT_NE(none.status().message().find("1 inputs but 0"), std::string::npos) << none.status().message();
  auto wrongType = runGraphOnHost(*g, {HostTensor::fromVector<int>(DataType::kINT32, makeDims({1, 3}), {1, 2, 3})});
  EXPECT_FALSE(wrongType.isOk());
  EXPECT_NE(wrongType.status().message().find("'x'"), std::string::npos);
  auto wrongShape =
      runGraphOnHost(*g, {HostTensor::fromVector<float>(DataType::kFLOAT, makeDims({1, 4}), {1, 2, 3, 4})});
  EXPECT_FALSE(wrongShape.isOk());
  EXPECT_NE(wrongShape.status().message().find("does not fit"), std::string::npos);
  auto wrongRank = runGraphOnHost(*g, {HostTensor::fromVector<float>(DataType::kFLOAT, makeDims({3}), {1, 2, 3})});
  EXPECT_FALSE(wrongRank.isOk());
}

TEST(GraphInterpreter, ShapeErrorsNameTheLayer) {
  auto g = parse(
      "graph {\n  input x: f32[-1]\n  c: f32[3] = Constant \"c\" () {data=[1.0,2.0,3.0]}\n"
      "  y: f32[-1] = ElementWise \"bad_add\" (x, c) {op=0}\n  output y\n}\n");
  ASSERT_TRUE(g);
  auto r = runGraphOnHost(*g, {HostTensor::fromVector<float>(DataType::kFLOAT, makeDims({2}), {1, 2})});
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("bad_add"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace kiln::backends
