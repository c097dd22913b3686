// Tests of Select: three-way numpy broadcasting against a naive index computation, every type (bool too),
// rank 0 and empty shapes, and bad input (types, shapes).
#include "backends/reference/select_test_util.h"

namespace kiln {
namespace {

using namespace selecttest;
using ir::OpType;

TEST(SelectReference, BroadcastEveryTypeAgainstNaive) {
  // condition [2, 1, 4], then [3, 1], else [4]  ->  [2, 3, 4]
  std::vector<double> c{1, 0, 0, 1, 0, 1, 1, 0};
  std::vector<double> a{10, 20, 30};
  std::vector<double> b{-1, -2, -3, -4};
  std::vector<DataType> types = numericTypes();
  types.push_back(DataType::kBOOL);
  for (DataType t : types) {
    SCOPED_TRACE(dataTypeName(t));
    std::vector<double> bb = b;
    if (t == DataType::kBOOL || t == DataType::kUINT8 || t == DataType::kUINT16 || t == DataType::kUINT32 ||
        t == DataType::kUINT64)
      bb = {0, 1, 0, 1};
    std::vector<double> aa = t == DataType::kBOOL ? std::vector<double>{1, 1, 1} : a;
    RunResult r = runNode(OpType::kSelect, {},
                          {var(tensor(DataType::kBOOL, {2, 1, 4}, c)), var(tensor(t, {3, 1}, aa)), var(tensor(t, {4}, bb))});
    ASSERT_TRUE(r.status.isOk()) << r.status.toString();
    ASSERT_EQ(dimsToVector(r.out[0].shape()), (Ints{2, 3, 4}));
    EXPECT_EQ(r.out[0].dtype(), t);
    std::vector<double> got = doubles(r.out[0]);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t k = 0; k < 4; ++k)
          EXPECT_EQ(got[(i * 3 + j) * 4 + k], c[i * 4 + k] != 0 ? aa[j] : bb[k]);
  }
}

TEST(SelectReference, EdgeShapes) {
  RunResult r = runNode(OpType::kSelect, {},
                        {var(scalar(DataType::kBOOL, 0)), var(scalar(DataType::kFLOAT, 1)), var(scalar(DataType::kFLOAT, 2))});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(r.out[0].shape().nbDims, 0);
  EXPECT_EQ(doubles(r.out[0]), (std::vector<double>{2}));
  r = runNode(OpType::kSelect, {},
              {var(tensor(DataType::kBOOL, {0, 1}, std::vector<double>{})), var(tensor(DataType::kHALF, {1, 3}, std::vector<double>{1, 2, 3})),
               var(scalar(DataType::kHALF, 0))});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(dimsToVector(r.out[0].shape()), (Ints{0, 3}));
}

TEST(SelectReference, BadInput) {
  auto ok = [](HostTensor c, HostTensor a, HostTensor b) {
    return runNode(OpType::kSelect, {}, {var(std::move(c)), var(std::move(a)), var(std::move(b))}).status.isOk();
  };
  HostTensor f2 = tensor(DataType::kFLOAT, {2}, std::vector<double>{1, 2});
  EXPECT_TRUE(ok(tensor(DataType::kBOOL, {2}, std::vector<double>{1, 0}), f2, f2));
  EXPECT_FALSE(ok(tensor(DataType::kINT32, {2}, std::vector<double>{1, 0}), f2, f2));  // non-bool condition
  EXPECT_FALSE(ok(tensor(DataType::kBOOL, {2}, std::vector<double>{1, 0}), f2,
                  tensor(DataType::kHALF, {2}, std::vector<double>{1, 2})));  // type mismatch
  EXPECT_FALSE(ok(tensor(DataType::kBOOL, {3}, std::vector<double>{1, 0, 1}), f2, f2));  // no broadcast
}

}  // namespace
}  // namespace kiln
