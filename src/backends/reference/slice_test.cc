// Tests of Slice (TensorRT 10's ISliceLayer): static and dynamic parameters, axes, every sample mode, negative
// strides, any type, zero-size and bad input, against hand-computed values and a naive reading loop.
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

ir::Attributes sliceAttrs(Ints start, Ints size, Ints stride, SampleMode mode = SampleMode::kSTRICT_BOUNDS) {
  return attrs({{"start", start}, {"size", size}, {"stride", stride}, {"mode", static_cast<int64_t>(mode)}});
}

HostTensor ints(DataType t, Ints shape, Ints v) { return tensor(t, shape, v); }

TEST(SliceReference, TensorRtDocumentationExamples) {
  // input {{0,2,4},{1,3,5}}, start {1,0}, size {1,2}, stride {1,2} -> {{1,5}}.
  HostTensor x = ints(DataType::kINT32, {2, 3}, {0, 2, 4, 1, 3, 5});
  RunResult r = runNode(OpType::kSlice, sliceAttrs({1, 0}, {1, 2}, {1, 2}), {var(x)});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(dimsToVector(r.shape), (Ints{1, 2}));
  EXPECT_EQ(r.out.toInt64Vector(), (Ints{1, 5}));
  // With axes {1}: start {1}, size {2}, stride {1} -> {{2,4},{3,5}}; axis -1 is the same.
  for (int64_t axis : {1, -1}) {
    ir::Attributes a = sliceAttrs({1}, {2}, {1});
    a.setInts("axes", {axis});
    RunResult ra = runNode(OpType::kSlice, a, {var(x)});
    ASSERT_TRUE(ra.status.isOk()) << ra.status.toString();
    EXPECT_EQ(dimsToVector(ra.shape), (Ints{2, 2}));
    EXPECT_EQ(ra.out.toInt64Vector(), (Ints{2, 4, 3, 5}));
  }
}

TEST(SliceReference, NaiveLoopEveryTypeWithNegativeStride) {
  // x [3,4,5]; start {2,1,4}, size {2,2,3}, stride {-1,2,-2}.
  std::vector<double> v;
  for (int i = 0; i < 60; ++i)
    v.push_back(i % 50);
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kUINT8,
                     DataType::kINT32, DataType::kINT64}) {
    SCOPED_TRACE(dataTypeName(t));
    HostTensor x = tensor(t, {3, 4, 5}, v);
    RunResult r = runNode(OpType::kSlice, sliceAttrs({2, 1, 4}, {2, 2, 3}, {-1, 2, -2}), {var(x)});
    ASSERT_TRUE(r.status.isOk()) << r.status.toString();
    ASSERT_EQ(dimsToVector(r.shape), (Ints{2, 2, 3}));
    EXPECT_EQ(r.dtype, t);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        for (int k = 0; k < 3; ++k)
          EXPECT_EQ(r.out.doubleAt((i * 2 + j) * 3 + k), x.doubleAt(((2 - i) * 4 + (1 + 2 * j)) * 5 + (4 - 2 * k)));
  }
}

TEST(SliceReference, SampleModesOutOfBounds) {
  // x = {10,11,12,13}; coordinates -3..6.
  HostTensor x = ints(DataType::kINT64, {4}, {10, 11, 12, 13});
  struct Case {
    SampleMode mode;
    Ints want;
  } cases[] = {
      {SampleMode::kWRAP, {11, 12, 13, 10, 11, 12, 13, 10, 11, 12}},
      {SampleMode::kCLAMP, {10, 10, 10, 10, 11, 12, 13, 13, 13, 13}},
      {SampleMode::kFILL, {0, 0, 0, 10, 11, 12, 13, 0, 0, 0}},
      {SampleMode::kREFLECT, {13, 12, 11, 10, 11, 12, 13, 12, 11, 10}},
  };
  for (Case const& c : cases) {
    SCOPED_TRACE(static_cast<int>(c.mode));
    RunResult r = runNode(OpType::kSlice, sliceAttrs({-3}, {10}, {1}, c.mode), {var(x)});
    ASSERT_TRUE(r.status.isOk()) << r.status.toString();
    EXPECT_EQ(r.out.toInt64Vector(), c.want);
  }
  // Reflection repeats with period 2*(n-1); a single element repeats.
  RunResult far = runNode(OpType::kSlice, sliceAttrs({-9}, {3}, {7}, SampleMode::kREFLECT), {var(x)});
  ASSERT_TRUE(far.status.isOk());
  EXPECT_EQ(far.out.toInt64Vector(), (Ints{13, 12, 11}));  // -9 -> 3, -2 -> 2, 5 -> 1
  HostTensor one = ints(DataType::kINT32, {1, 2}, {7, 8});
  RunResult single = runNode(OpType::kSlice, sliceAttrs({-2, 0}, {3, 2}, {1, 1}, SampleMode::kREFLECT), {var(one)});
  ASSERT_TRUE(single.status.isOk());
  EXPECT_EQ(single.out.toInt64Vector(), (Ints{7, 8, 7, 8, 7, 8}));
}

// plan_fuzz: an empty output with one huge extent ([0, 2^40] here) built a table of 2^40 source coordinates
// before finding that nothing was to be written; now nothing is built.
TEST(SliceReference, EmptyOutputWithAHugeExtentBuildsNoCoordinates) {
  HostTensor x = ints(DataType::kINT32, {0, 4}, {});
  RunResult r = runNode(OpType::kSlice, sliceAttrs({0, 0}, {0, int64_t{1} << 40}, {1, 0}), {var(x)});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(dimsToVector(r.shape), (Ints{0, int64_t{1} << 40}));
}

TEST(SliceReference, FillValueInput) {
  HostTensor x = tensor(DataType::kHALF, {2, 2}, std::vector<double>{1, 2, 3, 4});
  ir::Attributes a = sliceAttrs({-1, 0}, {3, 3}, {1, 1}, SampleMode::kFILL);
  RunResult r = runNode(OpType::kSlice, a,
                        {var(x), none(), none(), none(), cst(tensor(DataType::kFLOAT, {}, std::vector<double>{-2.5}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(doubles(r.out), (std::vector<double>{-2.5, -2.5, -2.5, 1, 2, -2.5, 3, 4, -2.5}));
  // Fill into a bool tensor and an empty input axis.
  HostTensor e = ints(DataType::kBOOL, {0, 2}, {});
  RunResult b = runNode(OpType::kSlice, a, {var(e), none(), none(), none(), var(ints(DataType::kBOOL, {}, {1}))});
  ASSERT_TRUE(b.status.isOk()) << b.status.toString();
  EXPECT_EQ(b.out.toInt64Vector(), (Ints{1, 1, 1, 1, 1, 1, 1, 1, 1}));
  // A fill value outside kFILL is an error.
  EXPECT_FALSE(runNode(OpType::kSlice, sliceAttrs({0, 0}, {1, 1}, {1, 1}, SampleMode::kCLAMP),
                       {var(x), none(), none(), none(), cst(tensor(DataType::kHALF, {}, std::vector<double>{0}))})
                   .status.isOk());
}

TEST(SliceReference, DynamicParameters) {
  HostTensor x = ints(DataType::kINT32, {4, 6},
                      {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15, 20, 21, 22, 23, 24, 25, 30, 31, 32, 33, 34, 35});
  // Constants: known during inference, so the output dims are concrete.
  RunResult r = runNode(OpType::kSlice, {},
                        {var(x), cst(ints(DataType::kINT64, {2}, {1, 5})), cst(ints(DataType::kINT32, {2}, {2, 3})),
                         cst(ints(DataType::kINT64, {2}, {2, -2}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(dimsToVector(r.shape), (Ints{2, 3}));
  EXPECT_EQ(r.out.toInt64Vector(), (Ints{15, 13, 11, 35, 33, 31}));
  // Axes from input 5, negative; stride defaults to 1.
  RunResult ax = runNode(OpType::kSlice, {},
                         {var(x), cst(ints(DataType::kINT32, {1}, {2})), cst(ints(DataType::kINT32, {1}, {2})), none(),
                          none(), cst(ints(DataType::kINT32, {1}, {-2}))});
  ASSERT_TRUE(ax.status.isOk()) << ax.status.toString();
  EXPECT_EQ(dimsToVector(ax.shape), (Ints{2, 6}));
  EXPECT_EQ(ax.out.toInt64Vector(), (Ints{20, 21, 22, 23, 24, 25, 30, 31, 32, 33, 34, 35}));
  // Size unknown during inference: -1 on the sliced axes only.
  RunResult u = runNode(OpType::kSlice, attrs({{"start", Ints{0}}, {"axes", Ints{1}}}),
                        {var(x), none(), var(ints(DataType::kINT64, {1}, {2}))}, /*execute=*/false);
  ASSERT_TRUE(u.status.isOk()) << u.status.toString();
  EXPECT_EQ(dimsToVector(u.shape), (Ints{4, -1}));
  // Start unknown during inference but size known: concrete dims; the kernel reads the start at run time.
  RunResult s = runNode(OpType::kSlice, attrs({{"size", Ints{2, 1}}, {"stride", Ints{1, 1}}}),
                        {var(x), var(ints(DataType::kINT32, {2}, {2, 4}))});
  ASSERT_TRUE(s.status.isOk()) << s.status.toString();
  EXPECT_EQ(s.out.toInt64Vector(), (Ints{24, 34}));
  // kSTRICT_BOUNDS out of bounds at run time (start known only then) is an error naming the layer.
  RunResult oob = runNode(OpType::kSlice, attrs({{"size", Ints{2, 1}}, {"stride", Ints{1, 1}}}),
                          {var(x), var(ints(DataType::kINT32, {2}, {3, 0}))});
  EXPECT_FALSE(oob.status.isOk());
  EXPECT_NE(oob.status.message().find("node"), std::string::npos) << oob.status.message();
  RunResult neg = runNode(OpType::kSlice, attrs({{"size", Ints{1, 1}}, {"stride", Ints{1, 1}}}),
                          {var(x), var(ints(DataType::kINT32, {2}, {-1, 0}))});
  EXPECT_FALSE(neg.status.isOk());
}

TEST(SliceReference, EdgeShapes) {
  HostTensor x = tensor(DataType::kFLOAT, {3}, std::vector<double>{1, 2, 3});
  RunResult z = runNode(OpType::kSlice, sliceAttrs({5}, {0}, {1}), {var(x)});
  ASSERT_TRUE(z.status.isOk()) << z.status.toString();
  EXPECT_EQ(dimsToVector(z.shape), (Ints{0}));
  // Rank 0: nothing to slice.
  HostTensor s = tensor(DataType::kBF16, {}, std::vector<double>{4});
  RunResult r0 = runNode(OpType::kSlice, sliceAttrs({}, {}, {}), {var(s)});
  ASSERT_TRUE(r0.status.isOk()) << r0.status.toString();
  EXPECT_EQ(r0.shape.nbDims, 0);
  EXPECT_EQ(r0.out.doubleAt(0), 4);
  // Stride 0 repeats one element.
  RunResult rep = runNode(OpType::kSlice, sliceAttrs({1}, {4}, {0}), {var(x)});
  ASSERT_TRUE(rep.status.isOk());
  EXPECT_EQ(doubles(rep.out), (std::vector<double>{2, 2, 2, 2}));
  // An empty axis can only be read in kFILL mode.
  HostTensor e = tensor(DataType::kFLOAT, {0}, std::vector<double>{});
  for (SampleMode m : {SampleMode::kWRAP, SampleMode::kCLAMP, SampleMode::kREFLECT, SampleMode::kSTRICT_BOUNDS})
    EXPECT_FALSE(runNode(OpType::kSlice, sliceAttrs({0}, {2}, {1}, m), {var(e)}).status.isOk());
  RunResult ef = runNode(OpType::kSlice, sliceAttrs({0}, {2}, {1}, SampleMode::kFILL), {var(e)});
  ASSERT_TRUE(ef.status.isOk());
  EXPECT_EQ(doubles(ef.out), (std::vector<double>{0, 0}));
}

TEST(SliceReference, BadInputIsAnError) {
  HostTensor x = tensor(DataType::kFLOAT, {2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6});
  RunResult r = runNode(OpType::kSlice, sliceAttrs({0, 2}, {1, 2}, {1, 1}), {var(x)});  // strict, out of bounds
  EXPECT_FALSE(r.status.isOk());
  EXPECT_NE(r.status.message().find("node"), std::string::npos);
  EXPECT_FALSE(runNode(OpType::kSlice, sliceAttrs({0}, {1, 1}, {1, 1}), {var(x)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kSlice, sliceAttrs({0, 0}, {1, -1}, {1, 1}), {var(x)}).status.isOk());
  ir::Attributes rep = sliceAttrs({0, 0}, {1, 1}, {1, 1});
  rep.setInts("axes", {1, -1});
  EXPECT_FALSE(runNode(OpType::kSlice, rep, {var(x)}).status.isOk());
  ir::Attributes far = sliceAttrs({0}, {1}, {1});
  far.setInts("axes", {2});
  EXPECT_FALSE(runNode(OpType::kSlice, far, {var(x)}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kSlice, attrs({{"size", Ints{1, 1}}}), {var(x)}).status.isOk());  // no start
  EXPECT_FALSE(
      runNode(OpType::kSlice, attrs({{"mode", int64_t{7}}, {"start", Ints{0, 0}}, {"size", Ints{1, 1}}}), {var(x)})
          .status.isOk());
  EXPECT_FALSE(runNode(OpType::kSlice, {},
                       {var(x), cst(tensor(DataType::kFLOAT, {2}, std::vector<double>{0, 0})),
                        cst(ints(DataType::kINT32, {2}, {1, 1}))})
                   .status.isOk());
}

}  // namespace
}  // namespace kiln
