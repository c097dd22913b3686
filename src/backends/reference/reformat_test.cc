// Tests of the Reformat reference kernel: kLINEAR <-> kHWC by hand-computed positions, a round trip in every
// storable type, same-format copies, and refusals (ranks, unknown formats).
#include <gtest/gtest.h>

#include "backends/reference/kernel_test_util.h"

namespace kiln {
namespace {

using namespace reftest;

ir::Attributes formats(TensorFormat from, TensorFormat to) {
  return attrs({{"from", static_cast<int64_t>(from)}, {"to", static_cast<int64_t>(to)}});
}

TEST(ReformatReference, LinearToHwcAndBack) {
  // x[n][c][h][w] = 1000n + 100c + 10h + w, N=2, C=3, H=2, W=2.
  std::vector<double> v;
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int h = 0; h < 2; ++h)
        for (int w = 0; w < 2; ++w) v.push_back(1000 * n + 100 * c + 10 * h + w);
  HostTensor x = tensor(DataType::kFLOAT, {2, 3, 2, 2}, v);
  RunResult hwc = runNode(OpType::kReformat, formats(TensorFormat::kLINEAR, TensorFormat::kHWC), {var(x)});
  ASSERT_TRUE(hwc.status.isOk()) << hwc.status.toString();
  EXPECT_EQ(dimsToVector(hwc.shape), (std::vector<int64_t>{2, 3, 2, 2}));  // the logical shape is kept
  std::vector<double> got = doubles(hwc.out), want;
  for (int n = 0; n < 2; ++n)
    for (int h = 0; h < 2; ++h)
      for (int w = 0; w < 2; ++w)
        for (int c = 0; c < 3; ++c) want.push_back(1000 * n + 100 * c + 10 * h + w);
  EXPECT_EQ(got, want);
  RunResult back = runNode(OpType::kReformat, formats(TensorFormat::kHWC, TensorFormat::kLINEAR), {var(hwc.out)});
  ASSERT_TRUE(back.status.isOk()) << back.status.toString();
  EXPECT_EQ(doubles(back.out), v);
}

TEST(ReformatReference, EveryTypeRoundTrips) {
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kINT32,
                     DataType::kINT64, DataType::kBOOL, DataType::kUINT8}) {
    std::vector<double> v;
    for (int i = 0; i < 1 * 5 * 3 * 1; ++i) v.push_back(t == DataType::kBOOL ? i % 2 : i % 7);
    HostTensor x = tensor(t, {1, 5, 3, 1}, v);
    RunResult hwc = runNode(OpType::kReformat, formats(TensorFormat::kLINEAR, TensorFormat::kHWC), {var(x)});
    ASSERT_TRUE(hwc.status.isOk()) << dataTypeName(t);
    RunResult back = runNode(OpType::kReformat, formats(TensorFormat::kHWC, TensorFormat::kLINEAR), {var(hwc.out)});
    ASSERT_TRUE(back.status.isOk()) << dataTypeName(t);
    EXPECT_TRUE(back.out.sameContents(x)) << dataTypeName(t);
    RunResult same = runNode(OpType::kReformat, formats(TensorFormat::kLINEAR, TensorFormat::kLINEAR), {var(x)});
    ASSERT_TRUE(same.status.isOk()) << dataTypeName(t);
    EXPECT_TRUE(same.out.sameContents(x)) << dataTypeName(t);
  }
}

TEST(ReformatReference, Refusals) {
  HostTensor x3 = tensor(DataType::kFLOAT, {2, 3, 4}, std::vector<double>(24, 1.0));
  EXPECT_FALSE(runNode(OpType::kReformat, formats(TensorFormat::kLINEAR, TensorFormat::kHWC), {var(x3)}).status.isOk());
  HostTensor x4 = tensor(DataType::kFLOAT, {1, 2, 2, 2}, std::vector<double>(8, 1.0));
  RunResult bad = runNode(OpType::kReformat, formats(TensorFormat::kLINEAR, TensorFormat::kCHW32), {var(x4)});
  EXPECT_FALSE(bad.status.isOk());
}

}  // namespace
}  // namespace kiln
