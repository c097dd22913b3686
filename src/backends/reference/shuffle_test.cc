// Tests of Shuffle (transpose -> reshape -> transpose) against naive index loops, reshape dims from the attribute
// and from a shape tensor, rank 0, any type, bad input; and host evaluation of a shape-tensor chain
// (Shape -> Gather -> ElementWise -> Concatenation -> Shuffle) through inferGraphInPlace.
#include <gtest/gtest.h>

#include <cstdint>

#include "backends/backend.h"
#include "backends/reference/kernel_test_util.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using ir::OpType;

using namespace reftest;  // NOLINT: test helpers


}  // namespace
namespace {

std::vector<double> iota(int64_t n, double scale = 1.0) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i)
    v.push_back(static_cast<double>(i) * scale);
  return v;
}

TEST(ShuffleReference, TransposeMatchesNaiveLoop) {
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kINT64}) {
    SCOPED_TRACE(dataTypeName(t));
    HostTensor x = tensor(t, {2, 3, 5}, iota(30));
    RunResult r = runNode(OpType::kShuffle, attrs({{"first_perm", std::vector<int64_t>{2, 0, 1}}}), {var(x)});
    ASSERT_TRUE(r.status.isOk()) << r.status.toString();
    ASSERT_EQ(dimsToVector(r.shape), (std::vector<int64_t>{5, 2, 3}));
    EXPECT_EQ(r.dtype, t);
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 2; ++j)
        for (int k = 0; k < 3; ++k)
          EXPECT_EQ(r.out.doubleAt((i * 2 + j) * 3 + k), x.doubleAt((j * 3 + k) * 5 + i));
  }
}

TEST(ShuffleReference, TransposeReshapeTranspose) {
  // x [2,3,4] -> perm {1,0,2} -> [3,2,4] -> reshape {0,-1} -> [3,8] -> perm {1,0} -> [8,3].
  HostTensor x = tensor(DataType::kFLOAT, {2, 3, 4}, iota(24));
  RunResult r = runNode(OpType::kShuffle,
                        attrs({{"first_perm", std::vector<int64_t>{1, 0, 2}},
                               {"reshape", std::vector<int64_t>{0, -1}},
                               {"second_perm", std::vector<int64_t>{1, 0}},
                               {"zero_is_placeholder", int64_t{1}}}),
                        {var(x)});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  ASSERT_EQ(dimsToVector(r.shape), (std::vector<int64_t>{8, 3}));
  for (int a = 0; a < 3; ++a)  // t = [3,2,4], t[a][b][c] = x[b][a][c]; reshaped m[a][b*4+c]
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 4; ++c)
        EXPECT_EQ(r.out.doubleAt((b * 4 + c) * 3 + a), x.doubleAt((b * 3 + a) * 4 + c));
}

TEST(ShuffleReference, ReshapeRules) {
  HostTensor x = tensor(DataType::kINT32, {2, 3, 4}, iota(24));
  struct Case {
    std::vector<int64_t> reshape;
    int64_t zeroIsPlaceholder;
    std::vector<int64_t> want;
  } cases[] = {{{-1}, 1, {24}},       {{0, 0, -1}, 1, {2, 3, 4}},        {{4, -1, 2}, 1, {4, 3, 2}},
               {{0, 12}, 1, {2, 12}}, {{1, 1, 24, 1}, 0, {1, 1, 24, 1}}, {{6, 0, -1}, 1, {6, 3, -1}}};
  for (Case const& c : cases) {
    ir::Attributes a = attrs({{"reshape", c.reshape}, {"zero_is_placeholder", c.zeroIsPlaceholder}});
    if (c.want.back() == -1) {  // {6, 0 -> 3, -1}: 24 / 18 does not divide
      EXPECT_FALSE(runNode(OpType::kShuffle, a, {var(x)}).status.isOk());
      continue;
    }
    RunResult r = runNode(OpType::kShuffle, a, {var(x)});
    ASSERT_TRUE(r.status.isOk()) << r.status.toString();
    EXPECT_EQ(dimsToVector(r.shape), c.want);
    EXPECT_EQ(r.out.toInt64Vector(), x.toInt64Vector());  // a reshape keeps row-major order
  }
  // Zero as a real dim when zero_is_placeholder is off.
  HostTensor e = tensor(DataType::kFLOAT, {0, 3}, std::vector<double>{});
  RunResult z =
      runNode(OpType::kShuffle,
              attrs({{"reshape", std::vector<int64_t>{3, 0, 7}}, {"zero_is_placeholder", int64_t{0}}}), {var(e)});
  ASSERT_TRUE(z.status.isOk()) << z.status.toString();
  EXPECT_EQ(dimsToVector(z.shape), (std::vector<int64_t>{3, 0, 7}));
  RunResult zi = runNode(OpType::kShuffle, attrs({{"reshape", std::vector<int64_t>{0, -1}}}), {var(e)});
  EXPECT_FALSE(zi.status.isOk());  // 0 * -1 is ambiguous for an empty input
  RunResult ok0 = runNode(OpType::kShuffle, attrs({{"reshape", std::vector<int64_t>{-1, 3}}}), {var(e)});
  ASSERT_TRUE(ok0.status.isOk());
  EXPECT_EQ(dimsToVector(ok0.shape), (std::vector<int64_t>{0, 3}));
}

TEST(ShuffleReference, RankZero) {
  HostTensor s = tensor(DataType::kHALF, {}, std::vector<double>{1.5});
  RunResult up = runNode(OpType::kShuffle, attrs({{"reshape", std::vector<int64_t>{1, 1}}}), {var(s)});
  ASSERT_TRUE(up.status.isOk()) << up.status.toString();
  EXPECT_EQ(dimsToVector(up.shape), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(up.out.doubleAt(0), 1.5);
  HostTensor one = tensor(DataType::kBOOL, {1}, std::vector<int64_t>{1});
  RunResult down = runNode(OpType::kShuffle, attrs({{"reshape", std::vector<int64_t>{}}}), {var(one)});
  ASSERT_TRUE(down.status.isOk()) << down.status.toString();
  EXPECT_EQ(down.shape.nbDims, 0);
  EXPECT_EQ(down.out.intAt(0), 1);
  RunResult same = runNode(OpType::kShuffle, {}, {var(s)});
  ASSERT_TRUE(same.status.isOk());
  EXPECT_EQ(same.shape.nbDims, 0);
}

TEST(ShuffleReference, ReshapeFromShapeTensor) {
  HostTensor x = tensor(DataType::kBF16, {4, 6}, iota(24, 0.5));
  // Known at inference (a constant): concrete dims.
  for (DataType st : {DataType::kINT32, DataType::kINT64}) {
    RunResult r = runNode(OpType::kShuffle, attrs({{"zero_is_placeholder", int64_t{1}}}),
                          {var(x), cst(tensor(st, {3}, std::vector<int64_t>{2, 0, -1}))});
    ASSERT_TRUE(r.status.isOk()) << r.status.toString();
    EXPECT_EQ(dimsToVector(r.shape), (std::vector<int64_t>{2, 6, 2}));
    EXPECT_EQ(doubles(r.out), doubles(x));
  }
  // Unknown at inference (a graph input): -1 dims of the tensor's length.
  RunResult u =
      runNode(OpType::kShuffle, {}, {var(x), var(tensor(DataType::kINT64, {3}, std::vector<int64_t>{3, 4, 2}))},
              /*execute=*/false);
  ASSERT_TRUE(u.status.isOk()) << u.status.toString();
  EXPECT_EQ(dimsToVector(u.shape), (std::vector<int64_t>{-1, -1, -1}));
  // The shape tensor overrides the attribute; it must be a 1-D int tensor.
  RunResult o = runNode(OpType::kShuffle, attrs({{"reshape", std::vector<int64_t>{24}}}),
                        {var(x), cst(tensor(DataType::kINT32, {2}, std::vector<int64_t>{6, 4}))});
  ASSERT_TRUE(o.status.isOk());
  EXPECT_EQ(dimsToVector(o.shape), (std::vector<int64_t>{6, 4}));
  EXPECT_FALSE(runNode(OpType::kShuffle, {}, {var(x), cst(tensor(DataType::kFLOAT, {2}, std::vector<double>{6, 4}))})
                   .status.isOk());
  EXPECT_FALSE(
      runNode(OpType::kShuffle, {}, {var(x), cst(tensor(DataType::kINT32, {1, 2}, std::vector<int64_t>{6, 4}))})
          .status.isOk());
}

TEST(ShuffleReference, BadInputIsAnError) {
  HostTensor x = tensor(DataType::kFLOAT, {2, 3}, iota(6));
  RunResult r = runNode(OpType::kShuffle, attrs({{"first_perm", std::vector<int64_t>{0, 0}}}), {var(x)});
  EXPECT_FALSE(r.status.isOk());
  EXPECT_NE(r.status.message().find("node"), std::string::npos);
  EXPECT_FALSE(
      runNode(OpType::kShuffle, attrs({{"first_perm", std::vector<int64_t>{0, 1, 2}}}), {var(x)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kShuffle, attrs({{"reshape", std::vector<int64_t>{4, 2}}}), {var(x)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kShuffle, attrs({{"reshape", std::vector<int64_t>{-1, -1}}}), {var(x)}).status.isOk());
  EXPECT_FALSE(
      runNode(OpType::kShuffle, attrs({{"reshape", std::vector<int64_t>{1, 1, 0, 6}}}), {var(x)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kShuffle, attrs({{"reshape", std::vector<int64_t>{-2, -3}}}), {var(x)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kShuffle,
                       attrs({{"reshape", std::vector<int64_t>{6}}, {"second_perm", std::vector<int64_t>{1, 0}}}),
                       {var(x)})
                   .status.isOk());
  // The kernel checks volumes itself.
  ir::Node n;
  n.op = OpType::kShuffle;
  n.name = "direct";
  std::vector<HostTensor> outs{*HostTensor::allocate(DataType::kFLOAT, makeDims({7}), "out")};
  EXPECT_FALSE(backends::evaluateOnHost(n, {&x}, outs).isOk());
}

TEST(ShapeTensorEvaluation, ShapeGatherProdConcatReshape) {
  // y = reshape(x, concat(shape(x)[0:1], shape(x)[1] * shape(x)[2])): [2,3,4] -> [2,12], known only by
  // evaluating the int64 chain on the host during inference.
  ir::Graph g;
  ir::Value* x = *g.addInput("x", DataType::kFLOAT, makeDims({2, 3, 4}));
  ir::Node* shape = g.addNode(OpType::kShape, "shape", {x});
  auto gatherAt = [&](char const* name, int64_t i) {
    ir::Node* idx = g.addConstant(strCat(name, "_idx"), tensor(DataType::kINT64, {1}, std::vector<int64_t>{i}));
    ir::Node* n = g.addNode(OpType::kGather, name, {shape->output(0), idx->output(0)});
    n->attrs.setInt("axis", 0);
    return n->output(0);
  };
  ir::Value* d0 = gatherAt("g0", 0);
  ir::Value* d1 = gatherAt("g1", 1);
  ir::Value* d2 = gatherAt("g2", -1);
  ir::Node* prod = g.addNode(OpType::kElementWise, "prod", {d1, d2});
  prod->attrs.setInt("op", static_cast<int64_t>(ElementWiseOperation::kPROD));
  ir::Node* cat = g.addNode(OpType::kConcatenation, "cat", {d0, prod->output(0)});
  cat->attrs.setInt("axis", 0);
  ir::Node* shuffle = g.addNode(OpType::kShuffle, "reshape", {x, cat->output(0)});
  g.markOutput(shuffle->output(0));

  ASSERT_TRUE(ir::inferGraphInPlace(g, nullptr).isOk());
  EXPECT_EQ(dimsToVector(shuffle->output(0)->shape), (std::vector<int64_t>{-1, -1}));
  ir::HostEvaluator eval = backends::referenceEvaluator();
  Status s = ir::inferGraphInPlace(g, &eval);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(dimsToVector(cat->output(0)->shape), (std::vector<int64_t>{2}));
  EXPECT_EQ(cat->output(0)->dtype, DataType::kINT64);
  EXPECT_EQ(dimsToVector(shuffle->output(0)->shape), (std::vector<int64_t>{2, 12}));

  // The same chain through per-run state, with another input shape.
  ir::ShapeState state;
  state.resize(g.values().size());
  state.info[x->id] = {DataType::kFLOAT, makeDims({5, 2, 7})};
  ASSERT_TRUE(ir::inferShapes(g, state, &eval).isOk());
  EXPECT_EQ(dimsToVector(state.info[shuffle->output(0)->id].shape), (std::vector<int64_t>{5, 14}));
  ASSERT_TRUE(state.values[cat->output(0)->id].has_value());
  EXPECT_EQ(state.values[cat->output(0)->id]->toInt64Vector(), (std::vector<int64_t>{5, 14}));
}

}  // namespace
}  // namespace kiln
