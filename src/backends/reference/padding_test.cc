// Tests of Padding: shape inference and its errors, and the reference kernel against a naive padded copy, with
// crops, zero-size results and every dtype (float types, integers copied exactly).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/backend.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"
#include "backends/reference/spatial_test_util.h"

namespace kiln {
namespace {

using ir::OpType;

using namespace spatialtest;  // NOLINT: test helpers

// Naive padding of a rank-r tensor on its last pb.size() axes.
std::vector<double> naivePad(std::vector<int64_t> const& shape, std::vector<double> const& x,
                             std::vector<int64_t> const& pb, std::vector<int64_t> const& pe,
                             std::vector<int64_t>* outShape) {
  size_t r = shape.size(), n = pb.size();
  std::vector<int64_t> os = shape;
  for (size_t i = 0; i < n; ++i) os[r - n + i] += pb[i] + pe[i];
  *outShape = os;
  int64_t total = 1;
  for (int64_t d : os) total *= d;
  std::vector<double> y;
  for (int64_t lin = 0; lin < total; ++lin) {
    int64_t rem = lin, off = 0, mul = 1;
    bool inside = true;
    for (size_t a = r; a-- > 0;) {
      int64_t i = rem % os[a];
      rem /= os[a];
      int64_t p = a >= r - n ? i - pb[a - (r - n)] : i;
      if (p < 0 || p >= shape[a]) inside = false;
      off += p * mul;
      mul *= shape[a];
    }
    y.push_back(inside ? x[static_cast<size_t>(off)] : 0.0);
  }
  return y;
}

ir::Node* addPad(ir::Graph& g, ir::Value* x, std::vector<int64_t> pb, std::vector<int64_t> pe) {
  ir::Node* n = g.addNode(OpType::kPadding, "pad", {x});
  n->attrs.setInts("pads_begin", std::move(pb));
  n->attrs.setInts("pads_end", std::move(pe));
  return n;
}

TEST(PaddingInfer, ShapesAndErrors) {
  ir::Graph g;
  ir::Value* x = constant(g, "x", DataType::kHALF, {2, 3, 4, 5}, std::vector<double>(120, 1.0));
  ir::Node* n = addPad(g, x, {1, -1}, {2, 0});
  ASSERT_TRUE(ir::inferGraphInPlace(g, nullptr));
  EXPECT_EQ(dimsToString(n->output(0)->shape), dimsToString(makeDims({2, 3, 7, 4})));
  EXPECT_EQ(n->output(0)->dtype, DataType::kHALF);

  ir::Node* n3 = addPad(g, x, {1, 0, 0}, {0, 0, 1});
  ASSERT_TRUE(ir::inferGraphInPlace(g, nullptr));
  EXPECT_EQ(dimsToString(n3->output(0)->shape), dimsToString(makeDims({2, 4, 4, 6})));

  ir::Graph g2;
  addPad(g2, constant(g2, "x", DataType::kFLOAT, {2, 3}, std::vector<double>(6, 0)), {1}, {1, 1});
  EXPECT_FALSE(ir::inferGraphInPlace(g2, nullptr));
  ir::Graph g3;
  addPad(g3, constant(g3, "x", DataType::kFLOAT, {2, 3}, std::vector<double>(6, 0)), {0, 0, 0}, {0, 0, 0});
  EXPECT_FALSE(ir::inferGraphInPlace(g3, nullptr));
  ir::Graph g4;
  addPad(g4, constant(g4, "x", DataType::kFLOAT, {2, 3}, std::vector<double>(6, 0)), {-2}, {-2});
  Status s = ir::inferGraphInPlace(g4, nullptr);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("pad"), std::string::npos);
}

TEST(PaddingReference, MatchesNaiveForEveryType) {
  struct Case {
    std::vector<int64_t> shape, pb, pe;
  };
  std::vector<Case> cases = {{{1, 2, 3, 3}, {1, 2}, {2, 1}},
                             {{2, 3, 4, 5}, {-1, 1}, {0, -2}},
                             {{1, 1, 1, 1}, {0, 0}, {0, 0}},
                             {{3, 5}, {2}, {-3}},
                             {{2, 2, 3, 4}, {1, -1, 0}, {0, 1, -4}}};
  std::vector<DataType> types = {DataType::kFLOAT, DataType::kHALF,  DataType::kBF16, DataType::kFLOAT64,
                                 DataType::kINT32, DataType::kINT64, DataType::kINT8, DataType::kBOOL};
  for (DataType dt : types) {
    for (auto const& c : cases) {
      int64_t count = 1;
      for (int64_t d : c.shape) count *= d;
      std::vector<double> xv = randomValues(count, 3);
      if (dt == DataType::kINT32 || dt == DataType::kINT64 || dt == DataType::kINT8)
        for (auto& v : xv) v = std::round(v * 4);
      if (dt == DataType::kBOOL)
        for (auto& v : xv) v = v > 0 ? 1 : 0;
      ir::Graph g;
      ir::Node* n = addPad(g, constant(g, "x", dt, c.shape, xv), c.pb, c.pe);
      auto out = run(g, n);
      ASSERT_TRUE(out.isOk()) << out.status().toString();
      std::vector<int64_t> os;
      std::vector<double> ref = naivePad(c.shape, xv, c.pb, c.pe, &os);
      EXPECT_EQ(dimsToString(out->shape()), dimsToString(makeDims(os)));
      EXPECT_EQ(values(*out), ref) << dataTypeName(dt);
    }
  }
}

TEST(PaddingReference, Int64CopiedExactlyAndZeroSize) {
  ir::Graph g;
  int64_t big = (int64_t{1} << 60) + 7;
  std::vector<int64_t> raw{big, -big};  // borrowed as is (fromVector would go through double)
  ir::Value* x = g.addConstant("x", HostTensor::borrow(DataType::kINT64, makeDims({1, 2}), raw.data()))->output(0);
  ir::Node* n = addPad(g, x, {1}, {0});
  auto out = run(g, n);
  ASSERT_TRUE(out.isOk());
  ASSERT_EQ(out->count(), 3);
  EXPECT_EQ(out->intAt(0), 0);
  EXPECT_EQ(out->intAt(1), big);
  EXPECT_EQ(out->intAt(2), -big);

  ir::Graph g2;  // cropped to zero extent
  ir::Node* n2 = addPad(g2, constant(g2, "x", DataType::kFLOAT, {2, 3}, std::vector<double>(6, 1)), {-1}, {-2});
  auto out2 = run(g2, n2);
  ASSERT_TRUE(out2.isOk());
  EXPECT_EQ(dimsToString(out2->shape()), dimsToString(makeDims({2, 0})));

  ir::Graph g3;  // zero-size input padded: all zeros
  ir::Node* n3 = addPad(g3, constant(g3, "x", DataType::kFLOAT, {2, 0}, {}), {1}, {1});
  auto out3 = run(g3, n3);
  ASSERT_TRUE(out3.isOk());
  EXPECT_EQ(values(*out3), std::vector<double>(4, 0.0));
}

}  // namespace
}  // namespace kiln
