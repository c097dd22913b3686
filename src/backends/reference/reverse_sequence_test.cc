// Tests of ReverseSequence: ONNX's two examples (hand-computed), every axis pair of a rank-3 tensor against a
// naive loop, lengths 0 and full, every type, and bad input.
#include "backends/reference/select_test_util.h"

namespace kiln {
namespace {

using namespace selecttest;
using ir::OpType;

ir::Attributes rsAttrs(int64_t b, int64_t s) { return attrs({{"batch_axis", b}, {"sequence_axis", s}}); }

TEST(ReverseSequenceReference, OnnxExamples) {
  // time_axis 0, batch_axis 1.
  std::vector<double> x{0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15};
  RunResult r = runNode(OpType::kReverseSequence, rsAttrs(1, 0),
                        {var(tensor(DataType::kFLOAT, {4, 4}, x)), var(tensor(DataType::kINT64, {4}, std::vector<double>{4, 3, 2, 1}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(doubles(r.out[0]), (std::vector<double>{3, 6, 9, 12, 2, 5, 8, 13, 1, 4, 10, 14, 0, 7, 11, 15}));
  // batch_axis 0, time_axis 1.
  std::vector<double> y{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  r = runNode(OpType::kReverseSequence, rsAttrs(0, 1),
              {var(tensor(DataType::kINT32, {4, 4}, y)), var(tensor(DataType::kINT32, {4}, std::vector<double>{1, 2, 3, 4}))});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(doubles(r.out[0]), (std::vector<double>{0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12}));
}

TEST(ReverseSequenceReference, EveryAxisPairAgainstNaive) {
  Ints shape{3, 4, 2};
  std::vector<double> x;
  for (int i = 0; i < 24; ++i) x.push_back(i + 1);
  std::vector<DataType> types = numericTypes();
  for (DataType t : types) {
    for (int64_t b = -3; b < 3; ++b)
      for (int64_t s = -3; s < 3; ++s) {
        int64_t bn = b < 0 ? b + 3 : b, sn = s < 0 ? s + 3 : s;
        if (bn == sn) continue;
        SCOPED_TRACE(strCat(dataTypeName(t), " batch ", b, " seq ", s));
        Ints lens;
        for (int64_t i = 0; i < shape[bn]; ++i) lens.push_back((i * 3) % (shape[sn] + 1));  // includes 0 and full
        RunResult r = runNode(OpType::kReverseSequence, rsAttrs(b, s),
                              {var(tensor(t, shape, x)), var(tensor(DataType::kINT64, {shape[bn]}, lens))});
        ASSERT_TRUE(r.status.isOk()) << r.status.toString();
        std::vector<double> got = doubles(r.out[0]);
        for (int64_t i0 = 0; i0 < 3; ++i0)
          for (int64_t i1 = 0; i1 < 4; ++i1)
            for (int64_t i2 = 0; i2 < 2; ++i2) {
              int64_t o[3] = {i0, i1, i2};
              int64_t src[3] = {i0, i1, i2};
              int64_t l = lens[o[bn]];
              if (o[sn] < l) src[sn] = l - 1 - o[sn];
              EXPECT_EQ(got[(i0 * 4 + i1) * 2 + i2], x[(src[0] * 4 + src[1]) * 2 + src[2]]);
            }
      }
  }
}

TEST(ReverseSequenceReference, BadInput) {
  HostTensor x = tensor(DataType::kFLOAT, {2, 3}, std::vector<double>(6, 1));
  auto run = [&](int64_t b, int64_t s, HostTensor lens) {
    return runNode(OpType::kReverseSequence, rsAttrs(b, s), {var(x), var(std::move(lens))}).status.isOk();
  };
  EXPECT_TRUE(run(1, 0, tensor(DataType::kINT32, {3}, std::vector<double>{2, 0, 1})));
  EXPECT_FALSE(run(1, 1, tensor(DataType::kINT32, {3}, std::vector<double>{2, 0, 1})));     // same axes
  EXPECT_FALSE(run(1, 0, tensor(DataType::kINT32, {2}, std::vector<double>{2, 0})));        // wrong count
  EXPECT_FALSE(run(1, 0, tensor(DataType::kINT32, {3}, std::vector<double>{3, 0, 1})));     // length > T
  EXPECT_FALSE(run(1, 0, tensor(DataType::kINT32, {3}, std::vector<double>{-1, 0, 1})));    // negative
  EXPECT_FALSE(run(1, 0, tensor(DataType::kFLOAT, {3}, std::vector<double>{1, 0, 1})));     // float lens
  EXPECT_FALSE(runNode(OpType::kReverseSequence, rsAttrs(1, 0),
                       {var(tensor(DataType::kFLOAT, {3}, std::vector<double>{1, 2, 3})),
                        var(tensor(DataType::kINT32, {3}, std::vector<double>{1, 1, 1}))})
                   .status.isOk());  // rank 1
}

}  // namespace
}  // namespace kiln
