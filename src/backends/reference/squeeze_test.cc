// Tests of Squeeze and Unsqueeze: hand-computed shapes, negative axes, unordered axes, every data type's bytes
// kept, empty tensors, axes known only at run time (rank from their count), and errors (repeated axes, extents
// other than 1, ranks).
#include "backends/reference/index_test_util.h"

namespace kiln {
namespace {

using namespace indextest;
using ir::OpType;

RunResult squeeze(OpType op, HostTensor x, Ints axes, DataType at = DataType::kINT64, bool constant = true) {
  HostTensor a = tensor(at, {static_cast<int64_t>(axes.size())}, axes);
  return runNode(op, {}, {var(std::move(x)), constant ? cst(a) : var(a)});
}

TEST(SqueezeReference, Shapes) {
  HostTensor x = tensor(DataType::kFLOAT, {1, 3, 1, 2}, Doubles{1, 2, 3, 4, 5, 6});
  struct Case {
    Ints axes;
    Ints want;
  };
  for (Case const& c : {Case{{0}, {3, 1, 2}}, Case{{2}, {1, 3, 2}}, Case{{-2, 0}, {3, 2}}, Case{{2, -4}, {3, 2}},
                        Case{{}, {1, 3, 1, 2}}}) {
    RunResult r = squeeze(OpType::kSqueeze, x, c.axes);
    ASSERT_TRUE(r.status.isOk()) << r.status.toString();
    EXPECT_EQ(dimsToVector(r.shape()), c.want);
    EXPECT_EQ(doubles(r.out()), (Doubles{1, 2, 3, 4, 5, 6}));
  }
  // To a scalar.
  RunResult s = squeeze(OpType::kSqueeze, tensor(DataType::kINT32, {1, 1}, Ints{7}), {0, 1}, DataType::kINT32);
  ASSERT_TRUE(s.status.isOk());
  EXPECT_EQ(s.shape().nbDims, 0);
  EXPECT_EQ(s.out().intAt(0), 7);
}

TEST(SqueezeReference, UnsqueezeShapes) {
  HostTensor x = tensor(DataType::kINT16, {3, 2}, Ints{1, 2, 3, 4, 5, 6});
  struct Case {
    Ints axes;
    Ints want;
  };
  for (Case const& c : {Case{{0}, {1, 3, 2}}, Case{{-1}, {3, 2, 1}}, Case{{1}, {3, 1, 2}}, Case{{3, 0}, {1, 3, 2, 1}},
                        Case{{-1, -2, 0}, {1, 3, 2, 1, 1}}}) {
    RunResult r = squeeze(OpType::kUnsqueeze, x, c.axes);
    ASSERT_TRUE(r.status.isOk()) << r.status.toString();
    EXPECT_EQ(dimsToVector(r.shape()), c.want);
    EXPECT_EQ(r.out().toInt64Vector(), (Ints{1, 2, 3, 4, 5, 6}));
  }
  RunResult s = squeeze(OpType::kUnsqueeze, tensor(DataType::kFLOAT, {}, Doubles{2}), {0, -1});
  ASSERT_TRUE(s.status.isOk());
  EXPECT_EQ(dimsToVector(s.shape()), (Ints{1, 1}));
}

TEST(SqueezeReference, EveryTypeAndEmpty) {
  for (DataType t : allStorableTypes()) {
    HostTensor x = tensor(t, {2, 1}, Doubles{1, 0});
    RunResult r = squeeze(OpType::kSqueeze, x, {1});
    ASSERT_TRUE(r.status.isOk()) << dataTypeName(t) << r.status.toString();
    EXPECT_TRUE(r.out().sameContents(tensor(t, {2}, Doubles{1, 0}))) << dataTypeName(t);
    RunResult u = squeeze(OpType::kUnsqueeze, x, {0});
    ASSERT_TRUE(u.status.isOk()) << dataTypeName(t);
    EXPECT_EQ(dimsToVector(u.shape()), (Ints{1, 2, 1}));
  }
  RunResult e = squeeze(OpType::kSqueeze, tensor(DataType::kFLOAT, {0, 1}, Doubles{}), {1});
  ASSERT_TRUE(e.status.isOk());
  EXPECT_EQ(dimsToVector(e.shape()), (Ints{0}));
  RunResult ue = squeeze(OpType::kUnsqueeze, tensor(DataType::kFLOAT, {0}, Doubles{}), {1});
  ASSERT_TRUE(ue.status.isOk());
  EXPECT_EQ(dimsToVector(ue.shape()), (Ints{0, 1}));
}

TEST(SqueezeReference, Errors) {
  HostTensor x = tensor(DataType::kFLOAT, {1, 3}, Doubles{1, 2, 3});
  std::vector<RunResult> bad{
      squeeze(OpType::kSqueeze, x, {1}),                      // extent 3
      squeeze(OpType::kSqueeze, x, {2}),                      // out of range
      squeeze(OpType::kSqueeze, x, {0, -2}),                  // repeated
      squeeze(OpType::kUnsqueeze, x, {3}),                    // out of range of the output rank 3
      squeeze(OpType::kUnsqueeze, x, {1, 1}),                 // repeated
      squeeze(OpType::kUnsqueeze, x, {0, 1, 2, 3, 4, 5, 6}),  // rank 9
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_FALSE(bad[i].status.isOk()) << i;
    EXPECT_TRUE(namesNode(bad[i].status)) << bad[i].status.message();
  }
  EXPECT_FALSE(runNode(OpType::kSqueeze, {}, {var(x), cst(tensor(DataType::kFLOAT, {1}, Doubles{0}))}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kSqueeze, {}, {var(x), cst(tensor(DataType::kINT32, {1, 1}, Ints{0}))}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kSqueeze, {}, {var(x)}).status.isOk());
}

TEST(SqueezeReference, RunTimeAxes) {
  // Axes that are a graph input: the output rank follows from their count, the dims come once they are known.
  HostTensor x = tensor(DataType::kFLOAT, {1, 3, 1}, Doubles{1, 2, 3});
  HostTensor two = tensor(DataType::kINT64, {2}, Ints{0, 2});
  RunResult s = runNode(OpType::kSqueeze, {}, {var(x), var(two)}, 1, false);
  ASSERT_TRUE(s.status.isOk()) << s.status.toString();
  EXPECT_EQ(dimsToVector(s.shape()), (Ints{-1}));
  RunResult u = runNode(OpType::kUnsqueeze, {}, {var(x), var(two)}, 1, false);
  ASSERT_TRUE(u.status.isOk()) << u.status.toString();
  EXPECT_EQ(dimsToVector(u.shape()), (Ints{-1, -1, -1, -1, -1}));
  // More axes than the input has dims, or an output rank above 8, is an error even before the values exist.
  HostTensor four = tensor(DataType::kINT32, {4}, Ints{0, 1, 2, 3});
  RunResult bad = runNode(OpType::kSqueeze, {}, {var(x), var(four)}, 1, false);
  EXPECT_FALSE(bad.status.isOk());
  EXPECT_TRUE(namesNode(bad.status)) << bad.status.message();
  HostTensor six = tensor(DataType::kINT32, {6}, Ints{0, 1, 2, 3, 4, 5});
  EXPECT_FALSE(runNode(OpType::kUnsqueeze, {}, {var(x), var(six)}, 1, false).status.isOk());
  // Once known (a constant here), the values decide.
  RunResult k = runNode(OpType::kSqueeze, {}, {var(x), cst(two)});
  ASSERT_TRUE(k.status.isOk()) << k.status.toString();
  EXPECT_EQ(dimsToVector(k.shape()), (Ints{3}));
}

}  // namespace
}  // namespace kiln
