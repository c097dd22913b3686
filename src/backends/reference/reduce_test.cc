// Tests of Reduce: output shapes with keep_dims both ways, errors, and the reference kernel for every operation
// against a naive reduction, in float32/float16/bfloat16 and exact int32/int64 arithmetic.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/backend.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"
#include "backends/reference/spatial_test_util.h"

namespace kiln {
namespace {

using ir::OpType;
using namespace spatialtest;  // NOLINT: test helpers

int64_t count(std::vector<int64_t> const& s) {
  int64_t n = 1;
  for (auto v : s)
    n *= v;
  return n;
}

// Naive: groups elements by their coordinates with the reduced axes removed.
std::vector<double> naiveReduce(std::vector<int64_t> const& shape, std::vector<double> const& x,
                                std::vector<int32_t> const& axes, int op) {
  std::vector<int64_t> outShape;
  for (size_t d = 0; d < shape.size(); ++d)
    if (std::find(axes.begin(), axes.end(), static_cast<int32_t>(d)) == axes.end())
      outShape.push_back(shape[d]);
  int64_t outCount = count(outShape);
  std::vector<std::vector<double>> groups(static_cast<size_t>(outCount));
  for (int64_t i = 0; i < count(shape); ++i) {
    int64_t rem = i, o = 0, mul = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      int64_t c = rem % shape[d];
      rem /= shape[d];
      if (std::find(axes.begin(), axes.end(), static_cast<int32_t>(d)) == axes.end()) {
        o += c * mul;
        mul *= shape[d];
      }
    }
    groups[o].push_back(x[i]);
  }
  std::vector<double> y;
  for (auto const& gr : groups) {
    double r = op == 1 ? 1 : 0;
    if (op == 2)
      r = -INFINITY;
    if (op == 3)
      r = INFINITY;
    for (double v : gr) {
      if (op == 0 || op == 4)
        r += v;
      if (op == 1)
        r *= v;
      if (op == 2)
        r = std::max(r, v);
      if (op == 3)
        r = std::min(r, v);
    }
    if (op == 4)
      r /= static_cast<double>(gr.size());
    y.push_back(r);
  }
  return y;
}

Result<HostTensor> runReduce(DataType dt, std::vector<int64_t> const& xs, std::vector<double> const& xv, int op,
                             std::vector<int64_t> const& axes, bool keep) {
  ir::Graph g;
  ir::Node* n = g.addNode(OpType::kReduce, "red", {constant(g, "x", dt, xs, xv)});
  n->attrs.setInt("op", op);
  n->attrs.setInts("axes", axes);
  n->attrs.setInt("keep_dims", keep ? 1 : 0);
  return run(g, n);
}

class ReduceTypes : public ::testing::TestWithParam<DataType> {};

TEST_P(ReduceTypes, EveryOpAndAxisSet) {
  DataType dt = GetParam();
  std::vector<int64_t> xs{2, 3, 4};
  auto xv = randomValues(24, 1);
  struct AxisCase {
    std::vector<int64_t> axes;
    std::vector<int32_t> norm;
    char const* keep;
    char const* drop;
  };
  std::vector<AxisCase> cases = {{{1}, {1}, "[2,1,4]", "[2,4]"},
                                 {{0, 2}, {0, 2}, "[1,3,1]", "[3]"},
                                 {{2, 0, 1}, {0, 1, 2}, "[1,1,1]", "[]"},
                                 {{-1}, {2}, "[2,3,1]", "[2,3]"},
                                 {{}, {}, "[2,3,4]", "[2,3,4]"}};
  for (auto const& c : cases)
    for (int op = 0; op < 5; ++op)
      for (bool keep : {true, false}) {
        auto out = runReduce(dt, xs, xv, op, c.axes, keep);
        ASSERT_TRUE(out.isOk()) << out.status().toString();
        EXPECT_EQ(dimsToString(out->shape()), keep ? c.keep : c.drop);
        auto ref = naiveReduce(xs, xv, c.norm, op);
        if (op == 1 && dt != DataType::kFLOAT) {
          // Products of up to 24 values: compare relative to magnitude only.
          for (size_t i = 0; i < ref.size(); ++i)
            EXPECT_NEAR(out->doubleAt(static_cast<int64_t>(i)), ref[i], 1e-2 * std::fabs(ref[i]) + 1e-30);
        } else {
          expectClose(*out, ref, dt);
        }
      }
}

INSTANTIATE_TEST_SUITE_P(AllFloat, ReduceTypes, ::testing::Values(DataType::kFLOAT, DataType::kHALF, DataType::kBF16),
                         [](auto const& pi) { return std::string(dataTypeShortName(pi.param)); });

TEST(Reduce, IntegersAreExact) {
  for (DataType dt : {DataType::kINT32, DataType::kINT64}) {
    std::vector<double> xv{-7, 2, 5, 3, -4, 6};
    auto sum = runReduce(dt, {2, 3}, xv, 0, {1}, false);
    ASSERT_TRUE(sum.isOk()) << sum.status().toString();
    EXPECT_EQ(sum->dtype(), dt);
    EXPECT_EQ(sum->toInt64Vector(), (std::vector<int64_t>{0, 5}));
    auto avg = runReduce(dt, {2, 3}, xv, 4, {0}, true);  // (-7+3)/2 = -2, (2-4)/2 = -1, (5+6)/2 = 5 (truncated)
    ASSERT_TRUE(avg.isOk());
    EXPECT_EQ(avg->toInt64Vector(), (std::vector<int64_t>{-2, -1, 5}));
    auto avg2 = runReduce(dt, {1, 2}, {-7, 2}, 4, {1}, false);  // -5 / 2 truncates toward zero
    ASSERT_TRUE(avg2.isOk());
    EXPECT_EQ(avg2->toInt64Vector(), (std::vector<int64_t>{-2}));
    auto prod = runReduce(dt, {2, 3}, xv, 1, {0, 1}, false);
    ASSERT_TRUE(prod.isOk());
    EXPECT_EQ(prod->toInt64Vector(), (std::vector<int64_t>{-7 * 2 * 5 * 3 * -4 * 6}));
    auto mx = runReduce(dt, {2, 3}, xv, 2, {1}, false);
    auto mn = runReduce(dt, {2, 3}, xv, 3, {1}, false);
    ASSERT_TRUE(mx.isOk() && mn.isOk());
    EXPECT_EQ(mx->toInt64Vector(), (std::vector<int64_t>{5, 6}));
    EXPECT_EQ(mn->toInt64Vector(), (std::vector<int64_t>{-7, -4}));
  }
  // int64 sums past 2^53 stay exact (a double accumulator would round).
  int64_t big = (int64_t{1} << 53) + 1;
  auto alloc = HostTensor::allocate(DataType::kINT64, makeDims({2}), "test");  // fromVector goes through double
  ASSERT_TRUE(alloc.isOk());
  HostTensor x = *alloc;
  static_cast<int64_t*>(x.mutableData())[0] = big;
  static_cast<int64_t*>(x.mutableData())[1] = 2;
  ir::Graph g;
  ir::Node* n = g.addNode(OpType::kReduce, "red", {g.addConstant("x", x)->output(0)});
  n->attrs.setInt("op", 0);
  n->attrs.setInts("axes", {0});
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk());
  EXPECT_EQ(out->toInt64Vector(), (std::vector<int64_t>{big + 2}));
}

// kMAX is "any" and kMIN "all" on bool (ONNX ReduceMax/ReduceMin-20); over an empty set false and true.
TEST(Reduce, BoolMaxAndMin) {
  std::vector<double> xv{0, 1, 0, 0, 0, 0};  // [[F, T, F], [F, F, F]]
  auto mx = runReduce(DataType::kBOOL, {2, 3}, xv, 2, {1}, false);
  ASSERT_TRUE(mx.isOk()) << mx.status().toString();
  EXPECT_EQ(mx->dtype(), DataType::kBOOL);
  EXPECT_EQ(mx->toInt64Vector(), (std::vector<int64_t>{1, 0}));
  auto mn = runReduce(DataType::kBOOL, {2, 3}, {1, 1, 0, 1, 1, 1}, 3, {1}, true);
  ASSERT_TRUE(mn.isOk()) << mn.status().toString();
  EXPECT_EQ(dimsToString(mn->shape()), "[2,1]");
  EXPECT_EQ(mn->toInt64Vector(), (std::vector<int64_t>{0, 1}));
  auto any0 = runReduce(DataType::kBOOL, {2, 0}, {}, 2, {1}, false);
  auto all0 = runReduce(DataType::kBOOL, {2, 0}, {}, 3, {1}, false);
  ASSERT_TRUE(any0.isOk() && all0.isOk());
  EXPECT_EQ(any0->toInt64Vector(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(all0->toInt64Vector(), (std::vector<int64_t>{1, 1}));
}

TEST(Reduce, ZeroSizedOutputAndNaN) {
  auto out = runReduce(DataType::kFLOAT, {0, 3}, {}, 0, {1}, true);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  EXPECT_EQ(dimsToString(out->shape()), "[0,1]");
  auto nan = runReduce(DataType::kFLOAT, {3}, {1, NAN, 2}, 2, {0}, false);
  ASSERT_TRUE(nan.isOk());
  EXPECT_TRUE(std::isnan(nan->doubleAt(0)));
}

TEST(Reduce, Errors) {
  EXPECT_FALSE(runReduce(DataType::kFLOAT, {2, 3}, randomValues(6, 1), 0, {2}, false).isOk());
  EXPECT_FALSE(runReduce(DataType::kFLOAT, {2, 3}, randomValues(6, 1), 0, {-3}, false).isOk());
  EXPECT_FALSE(runReduce(DataType::kFLOAT, {2, 3}, randomValues(6, 1), 0, {1, -1}, false).isOk());  // twice
  EXPECT_FALSE(runReduce(DataType::kFLOAT, {2, 3}, randomValues(6, 1), 5, {1}, false).isOk());      // bad op
  EXPECT_FALSE(runReduce(DataType::kBOOL, {2}, {1, 0}, 0, {0}, false).isOk());                      // no bool kernel
  ir::Graph g;
  auto x = g.addInput("x", DataType::kINT32, makeDims({-1, 4, 5}));
  ASSERT_TRUE(x.isOk());
  ir::Node* n = g.addNode(OpType::kReduce, "red", {*x});
  n->attrs.setInts("axes", {1});
  ASSERT_TRUE(ir::inferGraphInPlace(g, nullptr).isOk());
  EXPECT_EQ(dimsToString(n->output(0)->shape), "[-1,5]");
  EXPECT_EQ(n->output(0)->dtype, DataType::kINT32);
}

// Axes from input 1 (Kiln extension) replace the attribute; the kernel reads them when it runs.
TEST(Reduce, AxesInput) {
  std::vector<int64_t> xs{2, 3, 4};
  auto xv = randomValues(24, 3);
  for (DataType at : {DataType::kINT32, DataType::kINT64}) {
    for (bool keep : {true, false}) {
      ir::Graph g;
      ir::Node* n = g.addNode(OpType::kReduce, "red",
                              {constant(g, "x", DataType::kFLOAT, xs, xv), constant(g, "axes", at, {2}, {-1, 0})});
      n->attrs.setInt("op", 0);
      n->attrs.setInts("axes", {1});  // ignored: input 1 wins
      n->attrs.setInt("keep_dims", keep ? 1 : 0);
      auto out = run(g, n);
      ASSERT_TRUE(out.isOk()) << out.status().toString();
      EXPECT_EQ(dimsToString(out->shape()), keep ? "[1,3,1]" : "[3]");
      expectClose(*out, naiveReduce(xs, xv, {0, 2}, 0), DataType::kFLOAT);
    }
  }
  // An empty axes tensor reduces nothing (as an empty attribute does).
  ir::Graph g;
  ir::Node* n = g.addNode(OpType::kReduce, "red",
                          {constant(g, "x", DataType::kFLOAT, {2, 2}, {1, 2, 3, 4}),
                           constant(g, "axes", DataType::kINT64, {0}, {})});
  n->attrs.setInt("op", 2);
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  EXPECT_EQ(dimsToString(out->shape()), "[2,2]");
  expectClose(*out, {1, 2, 3, 4}, DataType::kFLOAT);
}

TEST(Reduce, RunTimeAxesShapes) {
  // Axes that are a graph input: keep_dims keeps the rank; otherwise it drops one axis per entry.
  for (bool keep : {true, false}) {
    ir::Graph g;
    auto x = g.addInput("x", DataType::kFLOAT, makeDims({2, 3, 4}));
    auto a = g.addInput("axes", DataType::kINT64, makeDims({2}));
    ASSERT_TRUE(x.isOk() && a.isOk());
    ir::Node* n = g.addNode(OpType::kReduce, "red", {*x, *a});
    n->attrs.setInt("keep_dims", keep ? 1 : 0);
    ASSERT_TRUE(ir::inferGraphInPlace(g, nullptr).isOk());
    EXPECT_EQ(dimsToString(n->output(0)->shape), keep ? "[-1,-1,-1]" : "[-1]");
  }
  // Without keep_dims the number of axes must be known and fit the rank.
  for (int64_t len : {-1, 4}) {
    ir::Graph g;
    auto x = g.addInput("x", DataType::kFLOAT, makeDims({2, 3, 4}));
    auto a = g.addInput("axes", DataType::kINT64, makeDims({len}));
    ASSERT_TRUE(x.isOk() && a.isOk());
    g.addNode(OpType::kReduce, "red", {*x, *a});
    Status s = ir::inferGraphInPlace(g, nullptr);
    EXPECT_FALSE(s.isOk()) << len;
    EXPECT_NE(s.message().find("red"), std::string::npos) << s.message();
  }
  // Float axes are refused.
  ir::Graph g;
  auto x = g.addInput("x", DataType::kFLOAT, makeDims({2, 3}));
  auto a = g.addInput("axes", DataType::kFLOAT, makeDims({1}));
  ASSERT_TRUE(x.isOk() && a.isOk());
  g.addNode(OpType::kReduce, "red", {*x, *a});
  EXPECT_FALSE(ir::inferGraphInPlace(g, nullptr).isOk());
}

}  // namespace
}  // namespace kiln
