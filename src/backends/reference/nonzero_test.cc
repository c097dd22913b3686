// Tests of NonZero: coordinates in row-major order against a naive scan for every type, rank 0/1/3, all zero,
// empty input, NaN and -0.0, int64 output, and that a preallocated output of the wrong size is an error.
#include <cmath>

#include "backends/reference/select_test_util.h"

namespace kiln {
namespace {

using namespace selecttest;
using ir::OpType;

ir::Attributes nzAttrs(DataType it = DataType::kINT32) { return attrs({{"indices_type", static_cast<int64_t>(it)}}); }

TEST(NonZeroReference, EveryTypeAgainstNaive) {
  Ints shape{2, 3, 4};
  std::vector<double> v;
  for (int i = 0; i < 24; ++i) v.push_back(i % 3 == 0 || i % 5 == 0 ? 0 : (i % 7) + 1);
  std::vector<DataType> types = numericTypes();
  types.push_back(DataType::kBOOL);
  for (DataType t : types) {
    for (DataType it : {DataType::kINT32, DataType::kINT64}) {
      SCOPED_TRACE(strCat(dataTypeName(t), " ", dataTypeName(it)));
      RunResult r = runNode(OpType::kNonZero, nzAttrs(it), {var(tensor(t, shape, v))});
      ASSERT_TRUE(r.status.isOk()) << r.status.toString();
      EXPECT_EQ(r.inferred[0].shape.d[0], 3);
      EXPECT_EQ(r.inferred[0].shape.d[1], -1);
      Ints rows[3];
      for (int64_t a = 0; a < 2; ++a)
        for (int64_t b = 0; b < 3; ++b)
          for (int64_t c = 0; c < 4; ++c)
            if (v[(a * 3 + b) * 4 + c] != 0) {
              rows[0].push_back(a);
              rows[1].push_back(b);
              rows[2].push_back(c);
            }
      Ints want = rows[0];
      want.insert(want.end(), rows[1].begin(), rows[1].end());
      want.insert(want.end(), rows[2].begin(), rows[2].end());
      EXPECT_EQ(dimsToVector(r.out[0].shape()), (Ints{3, static_cast<int64_t>(rows[0].size())}));
      EXPECT_EQ(r.out[0].dtype(), it);
      EXPECT_EQ(ints(r.out[0]), want);
    }
  }
}

TEST(NonZeroReference, EdgeShapes) {
  RunResult r = runNode(OpType::kNonZero, nzAttrs(), {var(tensor(DataType::kFLOAT, {5}, std::vector<double>{0, NAN, -0.0, 2, 0}))});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(dimsToVector(r.out[0].shape()), (Ints{1, 2}));
  EXPECT_EQ(ints(r.out[0]), (Ints{1, 3}));
  r = runNode(OpType::kNonZero, nzAttrs(), {var(tensor(DataType::kINT8, {2, 2}, std::vector<double>{0, 0, 0, 0}))});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(dimsToVector(r.out[0].shape()), (Ints{2, 0}));
  r = runNode(OpType::kNonZero, nzAttrs(), {var(tensor(DataType::kFLOAT, {3, 0}, std::vector<double>{}))});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(dimsToVector(r.inferred[0].shape), (Ints{2, 0}));  // known empty at build time
  EXPECT_EQ(dimsToVector(r.out[0].shape()), (Ints{2, 0}));
  r = runNode(OpType::kNonZero, nzAttrs(), {var(scalar(DataType::kFLOAT, 3))});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(dimsToVector(r.out[0].shape()), (Ints{0, 1}));
}

TEST(NonZeroReference, BadInput) {
  EXPECT_FALSE(runNode(OpType::kNonZero, nzAttrs(DataType::kFLOAT), {var(scalar(DataType::kFLOAT, 3))}).status.isOk());
  // evaluateOnHost (no allocateOutput) with a preallocated output of the wrong count.
  ir::Graph g;
  ir::Value* x = *g.addInput("x", DataType::kFLOAT, makeDims({3}));
  ir::Node* n = g.addNode(OpType::kNonZero, "nz", {x});
  n->attrs = nzAttrs();
  HostTensor in = tensor(DataType::kFLOAT, {3}, std::vector<double>{1, 0, 1});
  std::vector<HostTensor> out{tensor(DataType::kINT32, {1, 3}, std::vector<double>{0, 0, 0})};
  EXPECT_FALSE(backends::evaluateOnHost(*n, {&in}, out).isOk());
  out = {tensor(DataType::kINT32, {1, 2}, std::vector<double>{0, 0})};
  ASSERT_TRUE(backends::evaluateOnHost(*n, {&in}, out).isOk());
  EXPECT_EQ(ints(out[0]), (Ints{0, 2}));
}

}  // namespace
}  // namespace kiln

#include "backends/reference/graph_interpreter.h"

namespace kiln {
namespace {

using namespace selecttest;

// The host interpreter runs data-dependent nodes, pins their observed shapes and infers what follows again:
// x -> NonZero -> Cast(float) -> Shape, with NonZero's output also a graph output.
TEST(NonZeroReference, GraphInterpreterPinsObservedShapes) {
  ir::Graph g;
  ir::Value* x = *g.addInput("x", DataType::kINT32, makeDims({2, 3}));
  ir::Node* nz = g.addNode(ir::OpType::kNonZero, "nz", {x});
  nz->attrs.setInt("indices_type", static_cast<int64_t>(DataType::kINT64));
  ir::Node* cast = g.addNode(ir::OpType::kCast, "cast", {nz->output(0)});
  cast->attrs.setInt("to", static_cast<int64_t>(DataType::kFLOAT));
  ir::Node* shape = g.addNode(ir::OpType::kShape, "shape", {cast->output(0)});
  g.markOutput(nz->output(0));
  g.markOutput(cast->output(0));
  g.markOutput(shape->output(0));
  for (auto const& [vals, count] : std::vector<std::pair<std::vector<double>, int64_t>>{
           {{0, 1, 0, 2, 0, 3}, 3}, {{0, 0, 0, 0, 0, 0}, 0}, {{1, 1, 1, 1, 1, 1}, 6}}) {
    Result<std::vector<HostTensor>> r = backends::runGraphOnHost(g, {tensor(DataType::kINT32, {2, 3}, vals)});
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    ASSERT_EQ(r->size(), 3u);
    EXPECT_EQ(dimsToVector((*r)[0].shape()), (Ints{2, count}));
    EXPECT_EQ(dimsToVector((*r)[1].shape()), (Ints{2, count}));
    EXPECT_EQ(ints((*r)[2]), (Ints{2, count}));
    Ints want;
    for (int pass = 0; pass < 2; ++pass)
      for (int i = 0; i < 6; ++i)
        if (vals[i] != 0) want.push_back(pass == 0 ? i / 3 : i % 3);
    EXPECT_EQ(ints((*r)[0]), want);
  }
}

// Assertion nodes (no outputs) run in the interpreter too.
TEST(NonZeroReference, GraphInterpreterRunsAssertions) {
  ir::Graph g;
  ir::Value* c = *g.addInput("c", DataType::kBOOL, makeDims({2}));
  ir::Value* x = *g.addInput("x", DataType::kFLOAT, makeDims({2}));
  ir::Node* a = g.addNode(ir::OpType::kAssertion, "check", {c}, 0);
  a->attrs.setString("message", "c is false somewhere");
  ir::Node* id = g.addNode(ir::OpType::kIdentity, "id", {x});
  g.markOutput(id->output(0));
  HostTensor xv = tensor(DataType::kFLOAT, {2}, std::vector<double>{1, 2});
  EXPECT_TRUE(backends::runGraphOnHost(g, {tensor(DataType::kBOOL, {2}, std::vector<double>{1, 1}), xv}).isOk());
  Result<std::vector<HostTensor>> r = backends::runGraphOnHost(g, {tensor(DataType::kBOOL, {2}, std::vector<double>{1, 0}), xv});
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().toString().find("c is false somewhere"), std::string::npos);
}

}  // namespace
}  // namespace kiln
