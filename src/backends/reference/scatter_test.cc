// Tests of Scatter: kELEMENT and kND against naive loops and ONNX's examples, every reduction with duplicate
// indices, every storable data type, negative indices, empty tensors, and errors naming the layer.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/reference/index_test_util.h"

namespace kiln {
namespace {

using namespace indextest;
using ir::OpType;

ir::Attributes scatterAttrs(ScatterMode mode, int64_t axis = 0, ScatterReduction red = ScatterReduction::kNONE) {
  return attrs({{"mode", static_cast<int64_t>(mode)}, {"axis", axis}, {"reduction", static_cast<int64_t>(red)}});
}

double naiveCombine(double a, double b, ScatterReduction r) {
  switch (r) {
    case ScatterReduction::kNONE:
      return b;
    case ScatterReduction::kADD:
      return a + b;
    case ScatterReduction::kMUL:
      return a * b;
    case ScatterReduction::kMAX:
      return std::max(a, b);
    case ScatterReduction::kMIN:
      return std::min(a, b);
  }
  return b;
}

constexpr ScatterReduction kAllReductions[] = {ScatterReduction::kNONE, ScatterReduction::kADD, ScatterReduction::kMUL,
                                               ScatterReduction::kMAX, ScatterReduction::kMIN};

TEST(ScatterReference, OnnxElementExamples) {
  // ScatterElements with axis 1: data [[1,2,3,4,5]], indices [[1,3]], updates [[1.1,2.1]].
  HostTensor data = tensor(DataType::kFLOAT, {1, 5}, Doubles{1, 2, 3, 4, 5});
  RunResult r = runNode(OpType::kScatter, scatterAttrs(ScatterMode::kELEMENT, 1),
                        {var(data), var(tensor(DataType::kINT64, {1, 2}, Ints{1, -2})),
                         var(tensor(DataType::kFLOAT, {1, 2}, Doubles{1.5, 2.5}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(dimsToVector(r.shape()), (Ints{1, 5}));
  EXPECT_EQ(doubles(r.out()), (Doubles{1, 1.5, 3, 2.5, 5}));
  // axis 0 on [3,3] with indices [[1,0,2],[0,2,1]].
  HostTensor z = tensor(DataType::kINT32, {3, 3}, Ints(9, 0));
  RunResult r0 = runNode(OpType::kScatter, scatterAttrs(ScatterMode::kELEMENT, 0),
                         {var(z), var(tensor(DataType::kINT32, {2, 3}, Ints{1, 0, 2, 0, 2, 1})),
                          var(tensor(DataType::kINT32, {2, 3}, Ints{1, 2, 3, 4, 5, 6}))});
  ASSERT_TRUE(r0.status.isOk()) << r0.status.toString();
  EXPECT_EQ(r0.out().toInt64Vector(), (Ints{4, 2, 0, 1, 0, 6, 0, 5, 3}));
}

TEST(ScatterReference, ElementDuplicatesWithEveryReduction) {
  // data [1,5] = [1,2,3,4,5]; indices [[1,-4,3]]: position 1 gets two updates (3 then 0.5), position 3 one.
  for (ScatterReduction red : kAllReductions) {
    SCOPED_TRACE(static_cast<int>(red));
    HostTensor data = tensor(DataType::kFLOAT, {1, 5}, Doubles{1, 2, 3, 4, 5});
    RunResult r = runNode(OpType::kScatter, scatterAttrs(ScatterMode::kELEMENT, 1, red),
                          {var(data), var(tensor(DataType::kINT32, {1, 3}, Ints{1, -4, 3})),
                           var(tensor(DataType::kFLOAT, {1, 3}, Doubles{3, 0.5, 7}))});
    ASSERT_TRUE(r.status.isOk()) << r.status.toString();
    double at1 = naiveCombine(naiveCombine(2, 3, red), 0.5, red);
    EXPECT_EQ(doubles(r.out()), (Doubles{1, at1, 3, naiveCombine(4, 7, red), 5}));
  }
  // Hand-computed: add -> 2+3+0.5 = 5.5; mul -> 3; max -> 3; min -> 0.5; none -> 0.5 (last wins).
  EXPECT_EQ(naiveCombine(naiveCombine(2, 3, ScatterReduction::kADD), 0.5, ScatterReduction::kADD), 5.5);
}

TEST(ScatterReference, ElementAgainstNaiveLoopEveryType) {
  Ints ds{3, 4};
  std::vector<double> dv;
  for (int i = 0; i < 12; ++i) dv.push_back(i % 5 + 1);
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kFLOAT64, DataType::kINT8,
                     DataType::kUINT8, DataType::kINT16, DataType::kUINT16, DataType::kINT32, DataType::kUINT32,
                     DataType::kINT64, DataType::kUINT64}) {
    for (int axis = 0; axis < 2; ++axis) {
      for (ScatterReduction red : kAllReductions) {
        SCOPED_TRACE(strCat(dataTypeName(t), " axis ", axis, " reduction ", static_cast<int>(red)));
        Ints is{3, 3};
        int64_t n = ds[axis];
        Ints idx;
        std::vector<double> uv;
        for (int i = 0; i < 9; ++i) {
          idx.push_back((i * 3) % (2 * n) - n);
          uv.push_back(i % 3 + 1);
        }
        HostTensor data = tensor(t, ds, dv);
        RunResult r = runNode(OpType::kScatter, scatterAttrs(ScatterMode::kELEMENT, axis - 2, red),
                              {var(data), var(tensor(DataType::kINT64, is, idx)), var(tensor(t, is, uv))});
        ASSERT_TRUE(r.status.isOk()) << r.status.toString();
        std::vector<double> want = dv;
        for (int64_t a = 0; a < 3; ++a)
          for (int64_t b = 0; b < 3; ++b) {
            int64_t k = idx[a * 3 + b];
            k = k < 0 ? k + n : k;
            int64_t p = axis == 0 ? k * 4 + b : a * 4 + k;
            want[p] = naiveCombine(want[p], uv[a * 3 + b], red);
          }
        EXPECT_EQ(doubles(r.out()), want);
      }
    }
  }
}

TEST(ScatterReference, BoolAndIntegerWrap) {
  // bool: add is or, mul is and.
  HostTensor b = tensor(DataType::kBOOL, {3}, Ints{0, 1, 1});
  RunResult add =
      runNode(OpType::kScatter, scatterAttrs(ScatterMode::kELEMENT, 0, ScatterReduction::kADD),
              {var(b), var(tensor(DataType::kINT32, {2}, Ints{0, 1})), var(tensor(DataType::kBOOL, {2}, Ints{1, 0}))});
  ASSERT_TRUE(add.status.isOk()) << add.status.toString();
  EXPECT_EQ(add.out().toInt64Vector(), (Ints{1, 1, 1}));
  RunResult mul =
      runNode(OpType::kScatter, scatterAttrs(ScatterMode::kELEMENT, 0, ScatterReduction::kMUL),
              {var(b), var(tensor(DataType::kINT32, {2}, Ints{2, 1})), var(tensor(DataType::kBOOL, {2}, Ints{0, 1}))});
  ASSERT_TRUE(mul.status.isOk());
  EXPECT_EQ(mul.out().toInt64Vector(), (Ints{0, 1, 0}));
  // uint64 max keeps values above 2^63 exact.
  std::vector<uint64_t> big{(uint64_t{1} << 63) + 5, 7};
  HostTensor u = *HostTensor::allocate(DataType::kUINT64, makeDims({2}), "test");
  std::memcpy(u.mutableData(), big.data(), sizeof(uint64_t) * 2);
  RunResult mx =
      runNode(OpType::kScatter, scatterAttrs(ScatterMode::kELEMENT, 0, ScatterReduction::kMAX),
              {var(u), var(tensor(DataType::kINT32, {1}, Ints{0})), var(tensor(DataType::kUINT64, {1}, Doubles{9}))});
  ASSERT_TRUE(mx.status.isOk());
  EXPECT_EQ(mx.out().as<uint64_t>()[0], big[0]);
}

TEST(ScatterReference, OnnxNdExamples) {
  // ScatterND example 1: data [1..8], indices [[4],[3],[1],[7]], updates [9,10,11,12].
  HostTensor data = tensor(DataType::kFLOAT, {8}, Doubles{1, 2, 3, 4, 5, 6, 7, 8});
  RunResult r = runNode(OpType::kScatter, scatterAttrs(ScatterMode::kND),
                        {var(data), var(tensor(DataType::kINT64, {4, 1}, Ints{4, 3, 1, -1})),
                         var(tensor(DataType::kFLOAT, {4}, Doubles{9, 10, 11, 12}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(doubles(r.out()), (Doubles{1, 11, 3, 10, 9, 6, 7, 12}));
  // Slices: data [2,2,2], indices [[0],[1]] replace whole [2,2] slabs; a full tuple replaces one element.
  HostTensor d3 = tensor(DataType::kINT16, {2, 2, 2}, Ints{1, 2, 3, 4, 5, 6, 7, 8});
  RunResult s = runNode(OpType::kScatter, scatterAttrs(ScatterMode::kND),
                        {var(d3), var(tensor(DataType::kINT32, {1, 1}, Ints{1})),
                         var(tensor(DataType::kINT16, {1, 2, 2}, Ints{-1, -2, -3, -4}))});
  ASSERT_TRUE(s.status.isOk()) << s.status.toString();
  EXPECT_EQ(s.out().toInt64Vector(), (Ints{1, 2, 3, 4, -1, -2, -3, -4}));
  RunResult e = runNode(OpType::kScatter, scatterAttrs(ScatterMode::kND),
                        {var(d3), var(tensor(DataType::kINT32, {2, 3}, Ints{0, 1, 1, 1, 0, 0})),
                         var(tensor(DataType::kINT16, {2}, Ints{40, 50}))});
  ASSERT_TRUE(e.status.isOk()) << e.status.toString();
  EXPECT_EQ(e.out().toInt64Vector(), (Ints{1, 2, 3, 40, 50, 6, 7, 8}));
}

TEST(ScatterReference, NdDuplicatesWithEveryReduction) {
  for (ScatterReduction red : kAllReductions) {
    SCOPED_TRACE(static_cast<int>(red));
    HostTensor data = tensor(DataType::kINT64, {2, 2}, Ints{1, 2, 3, 4});
    // Row 1 twice ([5,6] then [7,1]), row 0 once ([2,2]).
    RunResult r = runNode(OpType::kScatter, scatterAttrs(ScatterMode::kND, 0, red),
                          {var(data), var(tensor(DataType::kINT32, {3, 1}, Ints{1, -1, 0})),
                           var(tensor(DataType::kINT64, {3, 2}, Ints{5, 6, 7, 1, 2, 2}))});
    ASSERT_TRUE(r.status.isOk()) << r.status.toString();
    Ints want{static_cast<int64_t>(naiveCombine(1, 2, red)), static_cast<int64_t>(naiveCombine(2, 2, red)),
              static_cast<int64_t>(naiveCombine(naiveCombine(3, 5, red), 7, red)),
              static_cast<int64_t>(naiveCombine(naiveCombine(4, 6, red), 1, red))};
    EXPECT_EQ(r.out().toInt64Vector(), want);
  }
}

TEST(ScatterReference, EmptyTensors) {
  HostTensor data = tensor(DataType::kFLOAT, {2, 3}, Doubles{1, 2, 3, 4, 5, 6});
  RunResult e = runNode(
      OpType::kScatter, scatterAttrs(ScatterMode::kELEMENT, 1),
      {var(data), var(tensor(DataType::kINT32, {2, 0}, Ints{})), var(tensor(DataType::kFLOAT, {2, 0}, Doubles{}))});
  ASSERT_TRUE(e.status.isOk()) << e.status.toString();
  EXPECT_EQ(doubles(e.out()), (Doubles{1, 2, 3, 4, 5, 6}));
  RunResult nd = runNode(
      OpType::kScatter, scatterAttrs(ScatterMode::kND),
      {var(data), var(tensor(DataType::kINT32, {0, 1}, Ints{})), var(tensor(DataType::kFLOAT, {0, 3}, Doubles{}))});
  ASSERT_TRUE(nd.status.isOk()) << nd.status.toString();
  EXPECT_EQ(doubles(nd.out()), (Doubles{1, 2, 3, 4, 5, 6}));
  RunResult empty =
      runNode(OpType::kScatter, scatterAttrs(ScatterMode::kND),
              {var(tensor(DataType::kFLOAT, {0, 3}, Doubles{})), var(tensor(DataType::kINT32, {0, 1}, Ints{})),
               var(tensor(DataType::kFLOAT, {0, 3}, Doubles{}))});
  ASSERT_TRUE(empty.status.isOk()) << empty.status.toString();
  EXPECT_EQ(dimsToVector(empty.shape()), (Ints{0, 3}));
}

TEST(ScatterReference, ErrorsNameTheLayer) {
  HostTensor data = tensor(DataType::kFLOAT, {2, 3}, Doubles{1, 2, 3, 4, 5, 6});
  for (int64_t bad : {3, -4}) {
    RunResult r = runNode(OpType::kScatter, scatterAttrs(ScatterMode::kELEMENT, 1),
                          {var(data), var(tensor(DataType::kINT32, {1, 1}, Ints{bad})),
                           var(tensor(DataType::kFLOAT, {1, 1}, Doubles{0}))});
    EXPECT_FALSE(r.status.isOk());
    EXPECT_TRUE(namesNode(r.status)) << r.status.message();
    RunResult n = runNode(OpType::kScatter, scatterAttrs(ScatterMode::kND),
                          {var(data), var(tensor(DataType::kINT32, {1, 2}, Ints{0, bad})),
                           var(tensor(DataType::kFLOAT, {1}, Doubles{0}))});
    EXPECT_FALSE(n.status.isOk());
    EXPECT_TRUE(namesNode(n.status)) << n.status.message();
  }
  // Shape mismatches, wrong index/update types, bad mode/reduction, rank-0 data.
  auto idx = tensor(DataType::kINT32, {1, 1}, Ints{0});
  EXPECT_FALSE(runNode(OpType::kScatter, scatterAttrs(ScatterMode::kELEMENT),
                       {var(data), var(idx), var(tensor(DataType::kFLOAT, {1, 2}, Doubles{0, 0}))})
                   .status.isOk());
  EXPECT_FALSE(runNode(OpType::kScatter, scatterAttrs(ScatterMode::kELEMENT),
                       {var(data), var(tensor(DataType::kFLOAT, {1, 1}, Doubles{0})),
                        var(tensor(DataType::kFLOAT, {1, 1}, Doubles{0}))})
                   .status.isOk());
  EXPECT_FALSE(runNode(OpType::kScatter, scatterAttrs(ScatterMode::kELEMENT),
                       {var(data), var(idx), var(tensor(DataType::kHALF, {1, 1}, Doubles{0}))})
                   .status.isOk());
  EXPECT_FALSE(runNode(OpType::kScatter, scatterAttrs(ScatterMode::kND),
                       {var(data), var(tensor(DataType::kINT32, {1, 3}, Ints{0, 0, 0})),
                        var(tensor(DataType::kFLOAT, {1}, Doubles{0}))})
                   .status.isOk());
  EXPECT_FALSE(runNode(OpType::kScatter, scatterAttrs(ScatterMode::kND),
                       {var(data), var(tensor(DataType::kINT32, {1, 1}, Ints{0})),
                        var(tensor(DataType::kFLOAT, {1, 2}, Doubles{0, 0}))})
                   .status.isOk());
  EXPECT_FALSE(runNode(OpType::kScatter, attrs({{"mode", int64_t{2}}}), {var(data), var(idx), var(idx)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kScatter, attrs({{"reduction", int64_t{5}}}),
                       {var(data), var(idx), var(tensor(DataType::kFLOAT, {1, 1}, Doubles{0}))})
                   .status.isOk());
  EXPECT_FALSE(runNode(OpType::kScatter, scatterAttrs(ScatterMode::kELEMENT), {var(data), var(idx)}).status.isOk());
}

}  // namespace
}  // namespace kiln
