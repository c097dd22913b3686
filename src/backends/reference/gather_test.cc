// Tests of Gather: kDEFAULT on every axis (negative too) against a naive loop, int32/int64 and negative indices,
// element-wise leading dim, any data type, zero-size and rank-0 indices, bad input; kELEMENT and kND (with batch
// dims) against naive loops and hand-computed values.
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

using Ints = std::vector<int64_t>;

ir::Attributes gatherAttrs(int64_t axis, int64_t ne = 0) {
  return attrs({{"axis", axis}, {"num_elementwise_dims", ne}, {"mode", static_cast<int64_t>(GatherMode::kDEFAULT)}});
}

TEST(GatherReference, EveryAxisAgainstNaiveLoop) {
  std::vector<double> v;
  for (int i = 0; i < 24; ++i)
    v.push_back(i * 3 % 101);
  Ints dataShape{2, 3, 4};
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kINT64}) {
    for (DataType it : {DataType::kINT32, DataType::kINT64}) {
      for (int axis = 0; axis < 3; ++axis) {
        SCOPED_TRACE(strCat(dataTypeName(t), " ", dataTypeName(it), " axis ", axis));
        HostTensor data = tensor(t, dataShape, v);
        int64_t n = dataShape[axis];
        Ints idx{n - 1, 0, -1, 1 - n, 0, n - 1};  // shape [2,3], negatives wrap
        HostTensor indices = tensor(it, {2, 3}, idx);
        RunResult r = runNode(OpType::kGather, gatherAttrs(axis - (axis == 2 ? 3 : 0)), {var(data), var(indices)});
        ASSERT_TRUE(r.status.isOk()) << r.status.toString();
        Ints want;
        for (int d = 0; d < axis; ++d)
          want.push_back(dataShape[d]);
        want.push_back(2);
        want.push_back(3);
        for (int d = axis + 1; d < 3; ++d)
          want.push_back(dataShape[d]);
        ASSERT_EQ(dimsToVector(r.shape), want);
        EXPECT_EQ(r.dtype, t);
        // Naive: outer positions x the 6 indices x inner positions, in output order.
        std::vector<double> got = doubles(r.out);
        size_t o = 0;
        int64_t outer = 1, inner = 1;
        for (int d = 0; d < axis; ++d)
          outer *= dataShape[d];
        for (int d = axis + 1; d < 3; ++d)
          inner *= dataShape[d];
        for (int64_t p = 0; p < outer; ++p)
          for (int64_t j = 0; j < 6; ++j)
            for (int64_t q = 0; q < inner; ++q) {
              int64_t k = idx[j] < 0 ? idx[j] + n : idx[j];
              EXPECT_EQ(got[o++], data.doubleAt((p * n + k) * inner + q));
            }
      }
    }
  }
}

TEST(GatherReference, HandComputedAndRankZeroIndices) {
  HostTensor data = tensor(DataType::kINT32, {3, 2}, Ints{1, 2, 3, 4, 5, 6});
  RunResult rows =
      runNode(OpType::kGather, gatherAttrs(0), {var(data), var(tensor(DataType::kINT64, {2}, Ints{2, -3}))});
  ASSERT_TRUE(rows.status.isOk()) << rows.status.toString();
  EXPECT_EQ(dimsToVector(rows.shape), (Ints{2, 2}));
  EXPECT_EQ(rows.out.toInt64Vector(), (Ints{5, 6, 1, 2}));
  RunResult col = runNode(OpType::kGather, gatherAttrs(-1), {var(data), var(tensor(DataType::kINT32, {}, Ints{1}))});
  ASSERT_TRUE(col.status.isOk());
  EXPECT_EQ(dimsToVector(col.shape), (Ints{3}));
  EXPECT_EQ(col.out.toInt64Vector(), (Ints{2, 4, 6}));
  // 1-D data with a scalar index gives a scalar.
  RunResult sc =
      runNode(OpType::kGather, gatherAttrs(0),
              {var(tensor(DataType::kBOOL, {3}, Ints{0, 1, 0})), var(tensor(DataType::kINT32, {}, Ints{-2}))});
  ASSERT_TRUE(sc.status.isOk());
  EXPECT_EQ(sc.shape.nbDims, 0);
  EXPECT_EQ(sc.out.intAt(0), 1);
}

TEST(GatherReference, ElementWiseLeadingDim) {
  // data [2,3,2], indices [2,2], axis 1, one element-wise dim: out[b,j,:] = data[b, idx[b,j], :].
  HostTensor data = tensor(DataType::kFLOAT, {2, 3, 2}, std::vector<double>{0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15});
  HostTensor idx = tensor(DataType::kINT32, {2, 2}, Ints{2, 0, 1, -1});
  RunResult r = runNode(OpType::kGather, gatherAttrs(1, 1), {var(data), var(idx)});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(dimsToVector(r.shape), (Ints{2, 2, 2}));
  EXPECT_EQ(doubles(r.out), (std::vector<double>{4, 5, 0, 1, 12, 13, 14, 15}));
  // Rank check: rank(data) + rank(indices) - 1 - 1.
  HostTensor idx1 = tensor(DataType::kINT64, {2}, Ints{1, 0});
  RunResult r1 = runNode(OpType::kGather, gatherAttrs(2, 1), {var(data), var(idx1)});
  ASSERT_TRUE(r1.status.isOk()) << r1.status.toString();
  EXPECT_EQ(dimsToVector(r1.shape), (Ints{2, 3}));
  EXPECT_EQ(doubles(r1.out), (std::vector<double>{1, 3, 5, 10, 12, 14}));
  // The leading dims must match; the axis cannot be the element-wise dim.
  EXPECT_FALSE(
      runNode(OpType::kGather, gatherAttrs(1, 1), {var(data), var(tensor(DataType::kINT32, {3, 1}, Ints{0, 0, 0}))})
          .status.isOk());
  EXPECT_FALSE(runNode(OpType::kGather, gatherAttrs(0, 1), {var(data), var(idx)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kGather, gatherAttrs(1, 2), {var(data), var(idx)}).status.isOk());
}

TEST(GatherReference, ZeroSize) {
  HostTensor data = tensor(DataType::kHALF, {3, 4}, std::vector<double>(12, 1.0));
  RunResult r = runNode(OpType::kGather, gatherAttrs(0), {var(data), var(tensor(DataType::kINT32, {0}, Ints{}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(dimsToVector(r.shape), (Ints{0, 4}));
  HostTensor empty = tensor(DataType::kHALF, {0, 4}, std::vector<double>{});
  RunResult e = runNode(OpType::kGather, gatherAttrs(1), {var(empty), var(tensor(DataType::kINT32, {2}, Ints{3, 0}))});
  ASSERT_TRUE(e.status.isOk()) << e.status.toString();
  EXPECT_EQ(dimsToVector(e.shape), (Ints{0, 2}));
  // Any index into an empty axis is out of range.
  EXPECT_FALSE(runNode(OpType::kGather, gatherAttrs(0), {var(empty), var(tensor(DataType::kINT32, {1}, Ints{0}))})
                   .status.isOk());
}

TEST(GatherReference, BadInputIsAnError) {
  HostTensor data = tensor(DataType::kFLOAT, {3, 2}, std::vector<double>{1, 2, 3, 4, 5, 6});
  for (int64_t bad : {3, -4, 100}) {
    RunResult r =
        runNode(OpType::kGather, gatherAttrs(0), {var(data), var(tensor(DataType::kINT64, {2}, Ints{0, bad}))});
    EXPECT_FALSE(r.status.isOk()) << bad;
    EXPECT_NE(r.status.message().find("layer 'node'"), std::string::npos) << r.status.message();
  }
  EXPECT_FALSE(
      runNode(OpType::kGather, gatherAttrs(0), {var(data), var(tensor(DataType::kFLOAT, {1}, std::vector<double>{0}))})
          .status.isOk());
  EXPECT_FALSE(
      runNode(OpType::kGather, gatherAttrs(2), {var(data), var(tensor(DataType::kINT32, {1}, Ints{0}))}).status.isOk());
  EXPECT_FALSE(
      runNode(OpType::kGather, gatherAttrs(0),
              {var(tensor(DataType::kFLOAT, {}, std::vector<double>{1})), var(tensor(DataType::kINT32, {1}, Ints{0}))})
          .status.isOk());
  RunResult badMode = runNode(OpType::kGather, attrs({{"mode", int64_t{3}}}),
                              {var(data), var(tensor(DataType::kINT32, {1}, Ints{0}))});
  EXPECT_FALSE(badMode.status.isOk());
  EXPECT_FALSE(runNode(OpType::kGather, gatherAttrs(0), {var(data)}).status.isOk());
}

using Doubles = std::vector<double>;

ir::Attributes modeAttrs(GatherMode mode, int64_t axis, int64_t ne = 0) {
  return attrs({{"axis", axis}, {"num_elementwise_dims", ne}, {"mode", static_cast<int64_t>(mode)}});
}

TEST(GatherReference, ElementModeAgainstNaiveLoop) {
  // data [3,4,2]; indices [2,4,2] on axis 0, [3,3,2] on axis 1, [3,4,1] on axis 2 (smaller than data elsewhere ok).
  Ints ds{3, 4, 2};
  std::vector<double> v;
  for (int i = 0; i < 24; ++i)
    v.push_back(i * 7 % 23 - 5);
  for (DataType t : {DataType::kFLOAT, DataType::kBF16, DataType::kINT8, DataType::kUINT16, DataType::kUINT64,
                     DataType::kFLOAT64, DataType::kBOOL, DataType::kINT16, DataType::kUINT32}) {
    HostTensor data = tensor(t, ds, v);
    for (int axis = 0; axis < 3; ++axis) {
      SCOPED_TRACE(strCat(dataTypeName(t), " axis ", axis));
      Ints is = ds;
      is[axis] = axis == 2 ? 1 : ds[axis] - 1;
      if (axis == 0)
        is[1] = 3;  // fewer than the data's extent on a non-axis dim
      int64_t cnt = is[0] * is[1] * is[2];
      int64_t n = ds[axis];
      Ints idx;
      for (int64_t i = 0; i < cnt; ++i)
        idx.push_back((i * 5 + 1) % (2 * n) - n);  // covers [-n, n)
      RunResult r = runNode(OpType::kGather, modeAttrs(GatherMode::kELEMENT, axis - 3),
                            {var(data), var(tensor(DataType::kINT64, is, idx))});
      ASSERT_TRUE(r.status.isOk()) << r.status.toString();
      ASSERT_EQ(dimsToVector(r.shape), is);
      for (int64_t a = 0; a < is[0]; ++a)
        for (int64_t b = 0; b < is[1]; ++b)
          for (int64_t c = 0; c < is[2]; ++c) {
            int64_t lin = (a * is[1] + b) * is[2] + c;
            int64_t k = idx[lin] < 0 ? idx[lin] + n : idx[lin];
            int64_t p[3] = {a, b, c};
            p[axis] = k;
            EXPECT_EQ(r.out.doubleAt(lin), data.doubleAt((p[0] * ds[1] + p[1]) * ds[2] + p[2]));
          }
    }
  }
}

TEST(GatherReference, ElementModeHandComputedAndErrors) {
  // ONNX GatherElements example: data [[1,2],[3,4]], indices [[0,0],[1,0]], axis 1 -> [[1,1],[4,3]].
  HostTensor data = tensor(DataType::kINT32, {2, 2}, Ints{1, 2, 3, 4});
  RunResult r = runNode(OpType::kGather, modeAttrs(GatherMode::kELEMENT, 1),
                        {var(data), var(tensor(DataType::kINT32, {2, 2}, Ints{0, 0, 1, -2}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(r.out.toInt64Vector(), (Ints{1, 1, 4, 3}));
  // Out of range, rank mismatch, element-wise dims, indices larger than the data off the axis.
  RunResult oor = runNode(OpType::kGather, modeAttrs(GatherMode::kELEMENT, 0),
                          {var(data), var(tensor(DataType::kINT32, {1, 2}, Ints{0, 2}))});
  EXPECT_FALSE(oor.status.isOk());
  EXPECT_NE(oor.status.message().find("'node'"), std::string::npos) << oor.status.message();
  EXPECT_FALSE(runNode(OpType::kGather, modeAttrs(GatherMode::kELEMENT, 0),
                       {var(data), var(tensor(DataType::kINT32, {2}, Ints{0, 1}))})
                   .status.isOk());
  EXPECT_FALSE(runNode(OpType::kGather, modeAttrs(GatherMode::kELEMENT, 1, 1),
                       {var(data), var(tensor(DataType::kINT32, {2, 2}, Ints{0, 0, 0, 0}))})
                   .status.isOk());
  EXPECT_FALSE(runNode(OpType::kGather, modeAttrs(GatherMode::kELEMENT, 1),
                       {var(data), var(tensor(DataType::kINT32, {3, 1}, Ints{0, 0, 0}))})
                   .status.isOk());
  // Empty indices give an empty output.
  RunResult e = runNode(OpType::kGather, modeAttrs(GatherMode::kELEMENT, 0),
                        {var(data), var(tensor(DataType::kINT32, {0, 2}, Ints{}))});
  ASSERT_TRUE(e.status.isOk()) << e.status.toString();
  EXPECT_EQ(dimsToVector(e.shape), (Ints{0, 2}));
}

TEST(GatherReference, NdModeHandComputed) {
  // ONNX GatherND examples.
  HostTensor d2 = tensor(DataType::kINT32, {2, 2}, Ints{0, 1, 2, 3});
  RunResult a = runNode(OpType::kGather, modeAttrs(GatherMode::kND, 0),
                        {var(d2), var(tensor(DataType::kINT64, {2, 2}, Ints{0, 0, 1, -1}))});
  ASSERT_TRUE(a.status.isOk()) << a.status.toString();
  EXPECT_EQ(dimsToVector(a.shape), (Ints{2}));
  EXPECT_EQ(a.out.toInt64Vector(), (Ints{0, 3}));
  RunResult b = runNode(OpType::kGather, modeAttrs(GatherMode::kND, 0),
                        {var(d2), var(tensor(DataType::kINT64, {2, 1}, Ints{1, 0}))});
  ASSERT_TRUE(b.status.isOk());
  EXPECT_EQ(dimsToVector(b.shape), (Ints{2, 2}));
  EXPECT_EQ(b.out.toInt64Vector(), (Ints{2, 3, 0, 1}));
  HostTensor d3 = tensor(DataType::kFLOAT, {2, 2, 2}, Doubles{0, 1, 2, 3, 4, 5, 6, 7});
  RunResult c = runNode(OpType::kGather, modeAttrs(GatherMode::kND, 0),
                        {var(d3), var(tensor(DataType::kINT32, {2, 1, 2}, Ints{0, 1, 1, 0}))});
  ASSERT_TRUE(c.status.isOk());
  EXPECT_EQ(dimsToVector(c.shape), (Ints{2, 1, 2}));
  EXPECT_EQ(doubles(c.out), (Doubles{2, 3, 4, 5}));
  // batch_dims = 1: indices [[1],[0]] -> [[2,3],[4,5]].
  RunResult bd = runNode(OpType::kGather, modeAttrs(GatherMode::kND, 0, 1),
                         {var(d3), var(tensor(DataType::kINT32, {2, 1}, Ints{1, 0}))});
  ASSERT_TRUE(bd.status.isOk()) << bd.status.toString();
  EXPECT_EQ(dimsToVector(bd.shape), (Ints{2, 2}));
  EXPECT_EQ(doubles(bd.out), (Doubles{2, 3, 4, 5}));
  // Full tuples with batch dims: [2,1,2] indices with batch 1 -> output [2,1].
  RunResult full = runNode(OpType::kGather, modeAttrs(GatherMode::kND, 0, 1),
                           {var(d3), var(tensor(DataType::kINT32, {2, 1, 2}, Ints{1, 0, 0, 1}))});
  ASSERT_TRUE(full.status.isOk()) << full.status.toString();
  EXPECT_EQ(dimsToVector(full.shape), (Ints{2, 1}));
  EXPECT_EQ(doubles(full.out), (Doubles{2, 5}));
}

TEST(GatherReference, NdModeEveryTypeAndErrors) {
  std::vector<double> v{1, 2, 3, 4, 5, 6};
  for (DataType t : {DataType::kHALF, DataType::kINT64, DataType::kUINT8, DataType::kFLOAT64, DataType::kINT16,
                     DataType::kUINT32, DataType::kUINT64, DataType::kUINT16, DataType::kBOOL}) {
    HostTensor d = tensor(t, {3, 2}, v);
    RunResult r = runNode(OpType::kGather, modeAttrs(GatherMode::kND, 0),
                          {var(d), var(tensor(DataType::kINT32, {2, 1}, Ints{-1, 0}))});
    ASSERT_TRUE(r.status.isOk()) << dataTypeName(t) << r.status.toString();
    EXPECT_EQ(doubles(r.out), (Doubles{d.doubleAt(4), d.doubleAt(5), d.doubleAt(0), d.doubleAt(1)}));
  }
  HostTensor d = tensor(DataType::kFLOAT, {3, 2}, v);
  RunResult oor = runNode(OpType::kGather, modeAttrs(GatherMode::kND, 0),
                          {var(d), var(tensor(DataType::kINT32, {1, 2}, Ints{0, 2}))});
  EXPECT_FALSE(oor.status.isOk());
  EXPECT_NE(oor.status.message().find("'node'"), std::string::npos) << oor.status.message();
  // Tuples longer than the rank, batch dims too large, batch extents differing.
  EXPECT_FALSE(runNode(OpType::kGather, modeAttrs(GatherMode::kND, 0),
                       {var(d), var(tensor(DataType::kINT32, {1, 3}, Ints{0, 0, 0}))})
                   .status.isOk());
  EXPECT_FALSE(runNode(OpType::kGather, modeAttrs(GatherMode::kND, 0, 2),
                       {var(d), var(tensor(DataType::kINT32, {3, 2}, Ints{0, 0, 0, 0, 0, 0}))})
                   .status.isOk());
  EXPECT_FALSE(runNode(OpType::kGather, modeAttrs(GatherMode::kND, 0, 1),
                       {var(d), var(tensor(DataType::kINT32, {2, 1}, Ints{0, 0}))})
                   .status.isOk());
  // Zero tuples, and zero-size data slabs.
  RunResult e = runNode(OpType::kGather, modeAttrs(GatherMode::kND, 0),
                        {var(d), var(tensor(DataType::kINT32, {0, 1}, Ints{}))});
  ASSERT_TRUE(e.status.isOk()) << e.status.toString();
  EXPECT_EQ(dimsToVector(e.shape), (Ints{0, 2}));
  RunResult z = runNode(OpType::kGather, modeAttrs(GatherMode::kND, 0),
                        {var(tensor(DataType::kFLOAT, {2, 0}, Doubles{})),
                         var(tensor(DataType::kINT32, {1, 1}, Ints{1}))});
  ASSERT_TRUE(z.status.isOk()) << z.status.toString();
  EXPECT_EQ(dimsToVector(z.shape), (Ints{1, 0}));
}

}  // namespace
}  // namespace kiln
