// Tests of PluginShapeProgram and SymbolicExprBuilder: every DimensionOperation evaluated over symbolic leaves,
// constant folding and pruning while capturing, size tensors in every evaluation mode, encode/decode round trips,
// and the errors of malformed programs and of evaluation.
#include "ir/plugin_shapes.h"

#include <gtest/gtest.h>

#include <limits>

#include "core/dims.h"

namespace kiln::ir {
namespace {

using Op = DimensionOperation;
using K = ShapeExprNode::Kind;

// Captures one output [op(a, b)] over input 0 = [a, b] (both symbolic).
PluginShapeProgram binary(Op op) {
  SymbolicExprBuilder eb(1, 0);
  DimsExprs out{};
  out.nbDims = 1;
  out.d[0] = eb.operation(op, *eb.inputDim(0, 0, -1), *eb.inputDim(0, 1, -1));
  auto p = eb.finish(&out, 1);
  EXPECT_TRUE(p.isOk()) << p.status().message();
  return p.isOk() ? *p : PluginShapeProgram{};
}

int64_t eval1(PluginShapeProgram const& p, int64_t a, int64_t b) {
  EvalInputs ev;
  ev.inputs = {makeDims({a, b})};
  auto r = p.evaluateNodes(ev);
  EXPECT_TRUE(r.isOk()) << r.status().message();
  return r.isOk() && (*r)[p.outputs[0][0]] ? *(*r)[p.outputs[0][0]] : std::numeric_limits<int64_t>::min();
}

TEST(PluginShapes, EveryDimensionOperationEvaluates) {
  struct Case {
    Op op;
    int64_t a, b, want;
  };
  Case const cases[] = {
      {Op::kSUM, 7, 3, 10},       {Op::kPROD, 7, 3, 21},      {Op::kMAX, 7, 3, 7},         {Op::kMIN, 7, 3, 3},
      {Op::kSUB, 3, 7, -4},       {Op::kEQUAL, 4, 4, 1},      {Op::kEQUAL, 4, 5, 0},       {Op::kLESS, 4, 5, 1},
      {Op::kLESS, 5, 4, 0},       {Op::kFLOOR_DIV, 7, 2, 3},  {Op::kFLOOR_DIV, -7, 2, -4}, {Op::kFLOOR_DIV, 6, 3, 2},
      {Op::kCEIL_DIV, 7, 2, 4},   {Op::kCEIL_DIV, -7, 2, -3}, {Op::kCEIL_DIV, 6, 3, 2},    {Op::kFLOOR_DIV, 7, -2, -4},
      {Op::kCEIL_DIV, 7, -2, -3},
  };
  for (auto const& c : cases) {
    auto direct = applyDimensionOperation(c.op, c.a, c.b);
    ASSERT_TRUE(direct.isOk()) << direct.status().message();
    EXPECT_EQ(*direct, c.want) << static_cast<int>(c.op) << " " << c.a << " " << c.b;
    if (c.a < 0 || c.b < 0) continue;  // input dims are never negative: the rest goes through a captured program
    PluginShapeProgram p = binary(c.op);
    // Round trip through the plan encoding too.
    auto d = PluginShapeProgram::decode(p.encode(), 1, 0, 1);
    ASSERT_TRUE(d.isOk()) << d.status().message();
    EXPECT_EQ(eval1(p, c.a, c.b), c.want) << static_cast<int>(c.op) << " " << c.a << " " << c.b;
    EXPECT_EQ(eval1(*d, c.a, c.b), c.want) << static_cast<int>(c.op);
  }
  EXPECT_EQ(EnumMax<DimensionOperation>(), 9);  // a new operation needs a case above
}

TEST(PluginShapes, EvaluationErrors) {
  EvalInputs ev;
  ev.inputs = {makeDims({5, 0})};
  auto r = binary(Op::kFLOOR_DIV).evaluate(ev);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("divides a dimension expression by zero"), std::string::npos);
  ev.inputs = {makeDims({std::numeric_limits<int64_t>::max(), 2})};
  r = binary(Op::kPROD).evaluate(ev);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("overflows"), std::string::npos);
  ev.inputs = {makeDims({3})};  // dimension 1 of a rank-1 input
  r = binary(Op::kSUM).evaluate(ev);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("read dimension 1 of input 0, which has rank 1"), std::string::npos);
  ev.inputs = {makeDims({2, 5})};
  r = binary(Op::kSUB).evaluate(ev);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("negative"), std::string::npos);
  // Unknown dims stay unknown; 0 * unknown is 0.
  ev.inputs = {makeDims({-1, 4})};
  r = binary(Op::kSUM).evaluate(ev);
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ((*r)[0].d[0], -1);
  ev.inputs = {makeDims({0, -1})};
  r = binary(Op::kPROD).evaluate(ev);
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ((*r)[0].d[0], 0);
}

TEST(PluginShapes, CaptureFoldsConstantsAndKeepsOnlyWhatOutputsReach) {
  SymbolicExprBuilder eb(2, 1);
  auto const* a = eb.inputDim(0, 0, -1);
  auto const* c = eb.inputDim(1, 0, 6);  // known while building: a constant
  EXPECT_FALSE(a->isConstant());
  ASSERT_TRUE(c->isConstant());
  EXPECT_EQ(c->getConstantValue(), 6);
  auto const* folded = eb.operation(Op::kPROD, *c, *eb.constant(2));
  ASSERT_TRUE(folded->isConstant());
  EXPECT_EQ(folded->getConstantValue(), 12);
  (void)eb.operation(Op::kSUM, *a, *a);  // unused: pruned
  auto const* s = eb.shapeValue(0, 1, std::nullopt);
  DimsExprs out{};
  out.nbDims = 2;
  out.d[0] = eb.operation(Op::kSUM, *a, *folded);
  out.d[1] = s;
  auto p = eb.finish(&out, 1);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_EQ(p->nodes.size(), 4u);  // a, 12, a + 12, s[1]
  EvalInputs ev;
  ev.inputs = {makeDims({3}), makeDims({6})};
  ev.shapeValues = {std::vector<int64_t>{9, 11}};
  auto d = p->evaluate(ev);
  ASSERT_TRUE(d.isOk()) << d.status().message();
  EXPECT_TRUE(dimsEqual((*d)[0], makeDims({15, 11})));
  ev.shapeValues = {std::nullopt};  // contents unknown: that dimension too
  d = p->evaluate(ev);
  ASSERT_TRUE(d.isOk());
  EXPECT_TRUE(dimsEqual((*d)[0], makeDims({15, -1})));
  ev.shapeValues = {std::vector<int64_t>{9}};
  EXPECT_FALSE(p->evaluate(ev).isOk());  // element 1 of a 1-element shape input
}

// out0 = [2, k] where k is size tensor output 1 (opt = n / 2, upper = n, n = a * b); out1 0-D.
Result<PluginShapeProgram> nonZeroLike(int32_t sizeOutput, int32_t sizeRank) {
  SymbolicExprBuilder eb(1, 0);
  auto const* n = eb.operation(Op::kPROD, *eb.inputDim(0, 0, -1), *eb.inputDim(0, 1, -1));
  auto const* opt = eb.operation(Op::kFLOOR_DIV, *n, *eb.constant(2));
  auto const* k = eb.declareSizeTensor(sizeOutput, *opt, *n);
  EXPECT_TRUE(k->isSizeTensor());
  EXPECT_FALSE(k->isConstant());
  DimsExprs out[2]{};
  out[0].nbDims = 2;
  out[0].d[0] = eb.constant(2);
  out[0].d[1] = k;
  out[1].nbDims = sizeRank;
  for (int32_t i = 0; i < sizeRank; ++i) out[1].d[i] = n;
  return eb.finish(out, 2);
}

TEST(PluginShapes, SizeTensorsInEveryMode) {
  auto p = nonZeroLike(1, 0);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_TRUE(p->hasDataDependentOutputs());
  auto sizes = p->sizeTensors();
  ASSERT_EQ(sizes.size(), 1u);
  EXPECT_EQ(sizes[0].output, 1);
  EvalInputs ev;
  ev.inputs = {makeDims({3, 5})};
  auto at = [&](SizeTensorMode m) {
    ev.sizeMode = m;
    auto d = p->evaluate(ev);
    EXPECT_TRUE(d.isOk());
    return d.isOk() ? (*d)[0].d[1] : -2;
  };
  EXPECT_EQ(at(SizeTensorMode::kUnknown), -1);
  EXPECT_EQ(at(SizeTensorMode::kZero), 0);
  EXPECT_EQ(at(SizeTensorMode::kOpt), 7);
  EXPECT_EQ(at(SizeTensorMode::kUpper), 15);
  ev.sizes = {-1, 4};
  EXPECT_EQ(at(SizeTensorMode::kValue), 4);
  auto d = PluginShapeProgram::decode(p->encode(), 1, 0, 2);
  ASSERT_TRUE(d.isOk()) << d.status().message();
  EXPECT_EQ(d->sizeTensors().size(), 1u);
}

TEST(PluginShapes, SizeTensorRulesAreChecked) {
  auto notScalar = nonZeroLike(1, 1);
  ASSERT_FALSE(notScalar.isOk());
  EXPECT_NE(notScalar.status().message().find("size tensor output 1 is not 0-D"), std::string::npos);
  auto outOfRange = nonZeroLike(5, 0);
  ASSERT_FALSE(outOfRange.isOk());
  EXPECT_NE(outOfRange.status().message().find("declares output 5 a size tensor"), std::string::npos);
  // Declared twice.
  SymbolicExprBuilder eb(1, 0);
  auto const* n = eb.inputDim(0, 0, -1);
  auto const* k = eb.declareSizeTensor(1, *n, *n);
  (void)eb.declareSizeTensor(1, *n, *n);
  DimsExprs out[2]{};
  out[0].nbDims = 1;
  out[0].d[0] = k;
  auto twice = eb.finish(out, 2);
  ASSERT_FALSE(twice.isOk());
  EXPECT_NE(twice.status().message().find("declared a size tensor twice"), std::string::npos);
  // opt depending on a size tensor.
  SymbolicExprBuilder eb2(1, 0);
  auto const* m = eb2.inputDim(0, 0, -1);
  auto const* k1 = eb2.declareSizeTensor(1, *m, *m);
  auto const* k2 = eb2.declareSizeTensor(2, *eb2.operation(Op::kSUM, *k1, *m), *m);
  DimsExprs out3[3]{};
  out3[0].nbDims = 2;
  out3[0].d[0] = k1;
  out3[0].d[1] = k2;
  auto dep = eb2.finish(out3, 3);
  ASSERT_FALSE(dep.isOk());
  EXPECT_NE(dep.status().message().find("depends on a size tensor"), std::string::npos);
}

TEST(PluginShapes, ForeignExpressionsAndBadOperationsAreErrors) {
  SymbolicExprBuilder eb(1, 0);
  SymbolicExprBuilder other(1, 0);
  EXPECT_EQ(eb.operation(static_cast<Op>(42), *eb.constant(1), *eb.constant(2)), nullptr);
  DimsExprs out{};
  out.nbDims = 1;
  out.d[0] = eb.operation(Op::kSUM, *other.constant(1), *eb.constant(2));
  auto p = eb.finish(&out, 1);
  ASSERT_FALSE(p.isOk());
  EXPECT_NE(p.status().message().find("did not create"), std::string::npos);
  SymbolicExprBuilder eb3(1, 0);
  out.d[0] = other.constant(3);
  p = eb3.finish(&out, 1);
  ASSERT_FALSE(p.isOk());
  EXPECT_NE(p.status().message().find("not an expression from the IExprBuilder"), std::string::npos);
}

TEST(PluginShapes, DecodeIsBoundedWithoutRecursion) {
  // A long chain (each node the sum of the previous and a leaf) evaluates in one pass; past the node limit the
  // program is refused before anything is evaluated.
  PluginShapeProgram p;
  p.nbInputs = 1;
  p.nodes.push_back({K::kInputDim, 0, 0, 0});
  for (int64_t i = 1; i < kMaxShapeExprNodes; ++i) p.nodes.push_back({K::kOperation, 0, i - 1, 0});
  p.outputs = {{static_cast<int32_t>(p.nodes.size() - 1)}};
  auto d = PluginShapeProgram::decode(p.encode(), 1, 0, 1);
  ASSERT_TRUE(d.isOk()) << d.status().message();
  EvalInputs ev;
  ev.inputs = {makeDims({1})};
  auto r = d->evaluate(ev);
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ((*r)[0].d[0], kMaxShapeExprNodes);
  p.nodes.push_back({K::kConstant, 1, 0, 0});
  auto big = PluginShapeProgram::decode(p.encode(), 1, 0, 1);
  ASSERT_FALSE(big.isOk());
  EXPECT_NE(big.status().message().find("expression nodes (at most"), std::string::npos);
}

}  // namespace
}  // namespace kiln::ir
