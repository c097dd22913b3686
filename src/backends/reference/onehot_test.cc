// Tests of OneHot: every axis position (negative too) against a naive loop, negative indices wrapping,
// out-of-range indices (all off), every value type, float/int index and depth types, and bad input.
#include "backends/reference/select_test_util.h"

namespace kiln {
namespace {

using namespace selecttest;
using ir::OpType;

TEST(OneHotReference, EveryAxisAgainstNaive) {
  Ints ishape{2, 3};
  std::vector<double> idx{0, 3, -1, -4, 4, 2};  // depth 4: -1 -> 3, -4 -> 0, 4 out of range
  int64_t depth = 4;
  for (DataType vt : numericTypes()) {
    for (DataType it : {DataType::kINT32, DataType::kINT64, DataType::kFLOAT}) {
      for (int64_t axis : {0, 1, 2, -1, -2, -3}) {
        SCOPED_TRACE(strCat(dataTypeName(vt), " ", dataTypeName(it), " axis ", axis));
        RunResult r = runNode(OpType::kOneHot, attrs({{"axis", axis}}),
                              {var(tensor(it, ishape, idx)), var(tensor(vt, {2}, std::vector<double>{2, 5})),
                               cst(scalar(DataType::kINT64, static_cast<double>(depth)))});
        ASSERT_TRUE(r.status.isOk()) << r.status.toString();
        int64_t a = axis < 0 ? axis + 3 : axis;
        Ints want = ishape;
        want.insert(want.begin() + a, depth);
        ASSERT_EQ(dimsToVector(r.out[0].shape()), want);
        EXPECT_EQ(r.out[0].dtype(), vt);
        std::vector<double> got = doubles(r.out[0]);
        for (int64_t o0 = 0; o0 < want[0]; ++o0)
          for (int64_t o1 = 0; o1 < want[1]; ++o1)
            for (int64_t o2 = 0; o2 < want[2]; ++o2) {
              int64_t o[3] = {o0, o1, o2};
              int64_t j = o[a];
              Ints rest;
              for (int d = 0; d < 3; ++d)
                if (d != a) rest.push_back(o[d]);
              auto k = static_cast<int64_t>(idx[rest[0] * 3 + rest[1]]);
              if (k < 0) k += depth;
              EXPECT_EQ(got[(o0 * want[1] + o1) * want[2] + o2], k == j ? 5 : 2);
            }
      }
    }
  }
}

TEST(OneHotReference, ScalarIndicesRuntimeDepthAndEmpty) {
  RunResult r = runNode(OpType::kOneHot, attrs({{"axis", int64_t{-1}}}),
                        {var(scalar(DataType::kINT32, 1)), var(tensor(DataType::kBOOL, {2}, std::vector<double>{0, 1})),
                         cst(scalar(DataType::kFLOAT, 3))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(doubles(r.out[0]), (std::vector<double>{0, 1, 0}));
  r = runNode(OpType::kOneHot, attrs({{"axis", int64_t{0}}}),
              {var(tensor(DataType::kINT64, {0}, std::vector<double>{})), var(tensor(DataType::kFLOAT, {2}, std::vector<double>{0, 1})),
               cst(scalar(DataType::kINT32, 2))});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(dimsToVector(r.out[0].shape()), (Ints{2, 0}));
  // Depth known only at run time: the inferred extent is unknown.
  r = runNode(OpType::kOneHot, attrs({{"axis", int64_t{0}}}),
              {var(scalar(DataType::kINT32, 1)), var(tensor(DataType::kFLOAT, {2}, std::vector<double>{0, 1})),
               var(scalar(DataType::kINT32, 2))},
              1, false);
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(r.inferred[0].shape.d[0], -1);
}

TEST(OneHotReference, BadInput) {
  auto run = [](int64_t axis, HostTensor values, HostTensor depth) {
    return runNode(OpType::kOneHot, attrs({{"axis", axis}}),
                   {var(tensor(DataType::kINT32, {2}, std::vector<double>{0, 1})), var(std::move(values)), cst(std::move(depth))})
        .status.isOk();
  };
  HostTensor v = tensor(DataType::kFLOAT, {2}, std::vector<double>{0, 1});
  EXPECT_TRUE(run(1, v, scalar(DataType::kINT32, 2)));
  EXPECT_FALSE(run(2, v, scalar(DataType::kINT32, 2)));
  EXPECT_FALSE(run(-3, v, scalar(DataType::kINT32, 2)));
  EXPECT_FALSE(run(0, tensor(DataType::kFLOAT, {3}, std::vector<double>{0, 1, 2}), scalar(DataType::kINT32, 2)));
  EXPECT_FALSE(run(0, v, scalar(DataType::kINT32, 0)));
  EXPECT_FALSE(run(0, v, tensor(DataType::kINT32, {2}, std::vector<double>{2, 2})));
}

}  // namespace
}  // namespace kiln
