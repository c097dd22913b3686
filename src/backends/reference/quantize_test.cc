// Tests of Quantize, Dequantize and DynamicQuantize: hand-computed ONNX QuantizeLinear/DequantizeLinear values
// (round half to even, saturation, zero points), per-tensor/per-axis/per-block scales, fp8, 16-bit outputs,
// DynamicQuantize block scales from the absolute maximum (with and without a double-quantization scale), empty
// tensors and errors (including the "not supported yet" int4/fp4/e8m0 types).
#include <cmath>

#include "backends/reference/index_test_util.h"

namespace kiln {
namespace {

using namespace indextest;
using ir::OpType;

ir::Attributes qAttrs(DataType to, int64_t axis = 0, Ints block = {}) {
  ir::Attributes a = attrs({{"to", static_cast<int64_t>(to)}, {"axis", axis}});
  if (!block.empty()) a.setInts("block_shape", block);
  return a;
}

TEST(QuantizeReference, PerTensorRoundsHalfToEvenAndSaturates) {
  HostTensor x = tensor(DataType::kFLOAT, {8}, Doubles{0.25, 0.75, 1.25, -0.25, -0.75, 100, -100, 0.3});
  HostTensor s = tensor(DataType::kFLOAT, {}, Doubles{0.5});
  RunResult r = runNode(OpType::kQuantize, qAttrs(DataType::kINT8), {var(x), var(s)});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(r.dtypes[0], DataType::kINT8);
  // 0.5->0, 1.5->2, 2.5->2, -0.5->0, -1.5->-2, 200->127, -200->-128, 0.6->1.
  EXPECT_EQ(r.out().toInt64Vector(), (Ints{0, 2, 2, 0, -2, 127, -128, 1}));
  // uint8 with zero point 128: -0.75/0.5 = -1.5 -> -2 + 128 = 126; 100 -> 255; -100 -> 0.
  HostTensor zp = tensor(DataType::kUINT8, {}, Ints{128});
  RunResult u = runNode(OpType::kQuantize, qAttrs(DataType::kUINT8), {var(x), var(s), var(zp)});
  ASSERT_TRUE(u.status.isOk()) << u.status.toString();
  EXPECT_EQ(u.out().toInt64Vector(), (Ints{128, 130, 130, 128, 126, 255, 0, 129}));
  // int8 zero point -10 and a 16-bit input.
  HostTensor xh = tensor(DataType::kHALF, {3}, Doubles{1.5, -126, 300});
  RunResult h =
      runNode(OpType::kQuantize, qAttrs(DataType::kINT8),
              {var(xh), var(tensor(DataType::kFLOAT, {1}, Doubles{1})), var(tensor(DataType::kINT8, {1}, Ints{-10}))});
  ASSERT_TRUE(h.status.isOk()) << h.status.toString();
  EXPECT_EQ(h.out().toInt64Vector(), (Ints{-8, -128, 127}));  // 1.5 -> 2 - 10; -136; 290
}

TEST(QuantizeReference, Fp8SaturatesAndRoundsToNearestEven) {
  HostTensor x = tensor(DataType::kFLOAT, {5}, Doubles{1000, -1000, 2, 0.5, 17});
  RunResult r =
      runNode(OpType::kQuantize, qAttrs(DataType::kFP8), {var(x), var(tensor(DataType::kFLOAT, {}, Doubles{0.5}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  // 2000 -> 448, -2000 -> -448, 4, 1, 34 (between 32 and 36: tie -> 32, the even mantissa).
  EXPECT_EQ(doubles(r.out()), (Doubles{448, -448, 4, 1, 32}));
}

TEST(QuantizeReference, PerAxisAndPerBlock) {
  HostTensor x = tensor(DataType::kFLOAT, {2, 4}, Doubles{1, 2, 3, 4, -5, 6, -7, 8});
  // Per axis 1: scales [1, 2, 4, 8].
  HostTensor s = tensor(DataType::kFLOAT, {4}, Doubles{1, 2, 4, 8});
  RunResult r = runNode(OpType::kQuantize, qAttrs(DataType::kINT8, -1), {var(x), var(s)});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  // 1, 1, 0.75->1, 0.5->0 ; -5, 3, -1.75->-2, 1
  EXPECT_EQ(r.out().toInt64Vector(), (Ints{1, 1, 1, 0, -5, 3, -2, 1}));
  // Per axis 0 with zero points.
  RunResult a0 = runNode(
      OpType::kQuantize, qAttrs(DataType::kINT8, 0),
      {var(x), var(tensor(DataType::kFLOAT, {2}, Doubles{2, 1})), var(tensor(DataType::kINT8, {2}, Ints{1, -1}))});
  ASSERT_TRUE(a0.status.isOk()) << a0.status.toString();
  // row 0: 0.5->0+1, 1+1, 1.5->2+1, 2+1; row 1: -6, 5, -8, 7
  EXPECT_EQ(a0.out().toInt64Vector(), (Ints{1, 2, 3, 3, -6, 5, -8, 7}));
  // Blocks [1, 2]: scale [2, 2] = [[1, 2], [4, 0.5]].
  RunResult b = runNode(OpType::kQuantize, qAttrs(DataType::kINT8, 0, {1, 2}),
                        {var(x), var(tensor(DataType::kFLOAT, {2, 2}, Doubles{1, 2, 4, 0.5}))});
  ASSERT_TRUE(b.status.isOk()) << b.status.toString();
  // 1, 2, 1.5->2, 2 ; -1.25->-1, 1.5->2, -14, 16
  EXPECT_EQ(b.out().toInt64Vector(), (Ints{1, 2, 2, 2, -1, 2, -14, 16}));
  // Blocks of 3 over 4 columns (-1 on rows): ceil(4/3) = 2 scales per row.
  RunResult c = runNode(OpType::kQuantize, qAttrs(DataType::kINT8, 0, {-1, 3}),
                        {var(x), var(tensor(DataType::kFLOAT, {1, 2}, Doubles{1, 4}))});
  ASSERT_TRUE(c.status.isOk()) << c.status.toString();
  EXPECT_EQ(c.out().toInt64Vector(), (Ints{1, 2, 3, 1, -5, 6, -7, 2}));
}

TEST(DequantizeReference, HandComputed) {
  HostTensor x = tensor(DataType::kINT8, {3}, Ints{-128, 0, 127});
  RunResult r =
      runNode(OpType::kDequantize, qAttrs(DataType::kFLOAT),
              {var(x), var(tensor(DataType::kFLOAT, {}, Doubles{0.5})), var(tensor(DataType::kINT8, {}, Ints{-1}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(doubles(r.out()), (Doubles{-63.5, 0.5, 64}));
  // uint8 per axis 1 into float16; bf16 output rounds once.
  HostTensor u = tensor(DataType::kUINT8, {2, 2}, Ints{0, 255, 10, 20});
  RunResult h = runNode(
      OpType::kDequantize, qAttrs(DataType::kHALF, 1),
      {var(u), var(tensor(DataType::kFLOAT, {2}, Doubles{1, 0.25})), var(tensor(DataType::kUINT8, {2}, Ints{128, 0}))});
  ASSERT_TRUE(h.status.isOk()) << h.status.toString();
  EXPECT_EQ(h.dtypes[0], DataType::kHALF);
  EXPECT_EQ(doubles(h.out()), (Doubles{-128, 63.75, -118, 5}));
  RunResult bf = runNode(OpType::kDequantize, qAttrs(DataType::kBF16),
                         {var(tensor(DataType::kINT8, {1}, Ints{3})), var(tensor(DataType::kFLOAT, {}, Doubles{0.1}))});
  ASSERT_TRUE(bf.status.isOk());
  float f = 3.0f * 0.1f;
  EXPECT_EQ(bf.out().doubleAt(0), static_cast<double>(bf16ToFloat(floatToBf16(f))));
  // fp8 input, block scales.
  HostTensor x8 = tensor(DataType::kFP8, {2, 2}, Doubles{1, -2, 448, 0.5});
  RunResult b = runNode(OpType::kDequantize, qAttrs(DataType::kFLOAT, 0, {2, 1}),
                        {var(x8), var(tensor(DataType::kFLOAT, {1, 2}, Doubles{2, 0.5}))});
  ASSERT_TRUE(b.status.isOk()) << b.status.toString();
  EXPECT_EQ(doubles(b.out()), (Doubles{2, -1, 896, 0.25}));
  // int32 input (ONNX allows it).
  RunResult i32 =
      runNode(OpType::kDequantize, qAttrs(DataType::kFLOAT),
              {var(tensor(DataType::kINT32, {1}, Ints{1000})), var(tensor(DataType::kFLOAT, {}, Doubles{0.5}))});
  ASSERT_TRUE(i32.status.isOk());
  EXPECT_EQ(i32.out().doubleAt(0), 500);
}

TEST(QuantizeReference, RoundTripAgainstNaive) {
  Doubles xv;
  for (int i = 0; i < 24; ++i) xv.push_back((i * 37 % 29 - 14) * 0.37);
  HostTensor x = tensor(DataType::kFLOAT, {2, 3, 4}, xv);
  HostTensor s = tensor(DataType::kFLOAT, {3}, Doubles{0.1, 0.05, 0.2});
  RunResult q = runNode(OpType::kQuantize, qAttrs(DataType::kINT8, 1), {var(x), var(s)});
  ASSERT_TRUE(q.status.isOk()) << q.status.toString();
  RunResult d = runNode(OpType::kDequantize, qAttrs(DataType::kFLOAT, 1), {var(q.out()), var(s)});
  ASSERT_TRUE(d.status.isOk());
  for (int64_t i = 0; i < 24; ++i) {
    float sc = static_cast<float>(s.doubleAt(i / 4 % 3));
    float v = static_cast<float>(x.doubleAt(i)) / sc;
    double want = std::fmin(127, std::fmax(-128, std::nearbyint(v)));
    EXPECT_EQ(q.out().intAt(i), static_cast<int64_t>(want)) << i;
    EXPECT_EQ(d.out().doubleAt(i), static_cast<double>(static_cast<float>(want) * sc)) << i;
  }
}

TEST(QuantizeReference, EmptyAndErrors) {
  RunResult e =
      runNode(OpType::kQuantize, qAttrs(DataType::kINT8),
              {var(tensor(DataType::kFLOAT, {0, 3}, Doubles{})), var(tensor(DataType::kFLOAT, {}, Doubles{1}))});
  ASSERT_TRUE(e.status.isOk()) << e.status.toString();
  EXPECT_EQ(dimsToVector(e.shape()), (Ints{0, 3}));
  HostTensor x = tensor(DataType::kFLOAT, {2, 3}, Doubles{1, 2, 3, 4, 5, 6});
  HostTensor s = tensor(DataType::kFLOAT, {}, Doubles{1});
  // Unsupported-yet types.
  for (DataType t : {DataType::kINT4, DataType::kFP4}) {
    RunResult r = runNode(OpType::kQuantize, qAttrs(t), {var(x), var(s)});
    EXPECT_EQ(r.status.code(), StatusCode::kUnsupported) << r.status.toString();
    EXPECT_NE(r.status.message().find("not supported yet"), std::string::npos);
  }
  std::vector<RunResult> bad{
      runNode(OpType::kQuantize, qAttrs(DataType::kINT32), {var(x), var(s)}),
      runNode(OpType::kQuantize, qAttrs(DataType::kINT8), {var(tensor(DataType::kINT32, {1}, Ints{1})), var(s)}),
      runNode(OpType::kQuantize, qAttrs(DataType::kINT8, 1),
              {var(x), var(tensor(DataType::kFLOAT, {2}, Doubles{1, 1}))}),
      runNode(OpType::kQuantize, qAttrs(DataType::kINT8, 2),
              {var(x), var(tensor(DataType::kFLOAT, {3}, Doubles{1, 1, 1}))}),
      runNode(OpType::kQuantize, qAttrs(DataType::kINT8),
              {var(x), var(tensor(DataType::kFLOAT, {2, 3}, Doubles(6, 1)))}),
      runNode(OpType::kQuantize, qAttrs(DataType::kINT8, 0, {1, 2}),
              {var(x), var(tensor(DataType::kFLOAT, {2, 1}, Doubles(2, 1)))}),
      runNode(OpType::kQuantize, qAttrs(DataType::kINT8, 0, {0, 2}),
              {var(x), var(tensor(DataType::kFLOAT, {2, 2}, Doubles(4, 1)))}),
      runNode(OpType::kQuantize, qAttrs(DataType::kINT8), {var(x), var(s), var(tensor(DataType::kUINT8, {}, Ints{0}))}),
      runNode(OpType::kQuantize, qAttrs(DataType::kINT8), {var(x), var(s), var(tensor(DataType::kINT8, {1}, Ints{0}))}),
      runNode(OpType::kQuantize, qAttrs(DataType::kINT8), {var(x), var(tensor(DataType::kINT32, {}, Ints{1}))}),
      runNode(OpType::kDequantize, qAttrs(DataType::kINT8), {var(tensor(DataType::kINT8, {1}, Ints{1})), var(s)}),
      runNode(OpType::kDequantize, qAttrs(DataType::kFLOAT), {var(x), var(s)}),
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_FALSE(bad[i].status.isOk()) << i;
    EXPECT_TRUE(namesNode(bad[i].status)) << i << bad[i].status.message();
  }
}

ir::Attributes dqAttrs(DataType to, DataType st, Ints block) {
  ir::Attributes a = attrs({{"to", static_cast<int64_t>(to)}, {"scale_type", static_cast<int64_t>(st)}});
  a.setInts("block_shape", block);
  return a;
}

TEST(DynamicQuantizeReference, BlockScalesFromAbsMax) {
  // Two blocks of 4 along axis 1: absmax 448 -> scale 1; absmax 0 -> scale 0, y 0.
  HostTensor x = tensor(DataType::kFLOAT, {1, 8}, Doubles{448, 1, -2, 0.5, 0, 0, 0, 0});
  RunResult r = runNode(OpType::kDynamicQuantize, dqAttrs(DataType::kFP8, DataType::kFP8, {1, 4}), {var(x)}, 2);
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(dimsToVector(r.shapes[1]), (Ints{1, 2}));
  EXPECT_EQ(r.dtypes[0], DataType::kFP8);
  EXPECT_EQ(doubles(r.outs[0]), (Doubles{448, 1, -2, 0.5, 0, 0, 0, 0}));
  EXPECT_EQ(doubles(r.outs[1]), (Doubles{1, 0}));
  // int8 (Kiln extension): absmax 254 -> scale 2; with axis/block_size attributes instead of block_shape.
  HostTensor xi = tensor(DataType::kHALF, {2, 2}, Doubles{254, -3, 5, -127});
  ir::Attributes a = attrs({{"to", static_cast<int64_t>(DataType::kINT8)},
                            {"scale_type", static_cast<int64_t>(DataType::kFLOAT)},
                            {"axis", int64_t{-1}},
                            {"block_size", int64_t{2}}});
  RunResult ri = runNode(OpType::kDynamicQuantize, a, {var(xi)}, 2);
  ASSERT_TRUE(ri.status.isOk()) << ri.status.toString();
  EXPECT_EQ(dimsToVector(ri.shapes[1]), (Ints{2, 1}));
  EXPECT_EQ(ri.outs[0].toInt64Vector(), (Ints{127, -2, 5, -127}));  // -1.5 -> -2 (half to even)
  EXPECT_EQ(doubles(ri.outs[1]), (Doubles{2, 1}));
  // Double quantization: stored scale = (absmax / 448) / dq; y uses stored * dq.
  HostTensor x2 = tensor(DataType::kFLOAT, {4}, Doubles{896, 2, -4, 1});
  RunResult d = runNode(OpType::kDynamicQuantize, dqAttrs(DataType::kFP8, DataType::kFP8, {4}),
                        {var(x2), var(tensor(DataType::kFLOAT, {}, Doubles{0.5}))}, 2);
  ASSERT_TRUE(d.status.isOk()) << d.status.toString();
  EXPECT_EQ(doubles(d.outs[1]), (Doubles{4}));
  EXPECT_EQ(doubles(d.outs[0]), (Doubles{448, 1, -2, 0.5}));
}

TEST(DynamicQuantizeReference, ErrorsAndUnsupported) {
  HostTensor x = tensor(DataType::kFLOAT, {2, 6}, Doubles(12, 1));
  RunResult fp4 = runNode(OpType::kDynamicQuantize, dqAttrs(DataType::kFP4, DataType::kFP8, {1, 2}), {var(x)}, 2);
  EXPECT_EQ(fp4.status.code(), StatusCode::kUnsupported);
  RunResult e8 = runNode(OpType::kDynamicQuantize, dqAttrs(DataType::kFP8, DataType::kE8M0, {1, 2}), {var(x)}, 2);
  EXPECT_EQ(e8.status.code(), StatusCode::kUnsupported);
  std::vector<RunResult> bad{
      runNode(OpType::kDynamicQuantize, dqAttrs(DataType::kFP8, DataType::kFP8, {1, 4}), {var(x)}, 2),  // 6 % 4
      runNode(OpType::kDynamicQuantize, dqAttrs(DataType::kFP8, DataType::kFP8, {4}), {var(x)}, 2),     // rank
      runNode(OpType::kDynamicQuantize, dqAttrs(DataType::kUINT8, DataType::kFP8, {1, 2}), {var(x)}, 2),
      runNode(OpType::kDynamicQuantize, dqAttrs(DataType::kFP8, DataType::kINT8, {1, 2}), {var(x)}, 2),
      runNode(OpType::kDynamicQuantize, dqAttrs(DataType::kFP8, DataType::kFP8, {1, 2}),
              {var(tensor(DataType::kINT32, {2}, Ints{1, 2}))}, 2),
      runNode(OpType::kDynamicQuantize, dqAttrs(DataType::kFP8, DataType::kFP8, {1, 2}), {var(x)}, 1),
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_FALSE(bad[i].status.isOk()) << i;
    EXPECT_TRUE(namesNode(bad[i].status)) << i << bad[i].status.message();
  }
  RunResult empty = runNode(OpType::kDynamicQuantize, dqAttrs(DataType::kFP8, DataType::kFP8, {1, 2}),
                            {var(tensor(DataType::kFLOAT, {0, 4}, Doubles{}))}, 2);
  ASSERT_TRUE(empty.status.isOk()) << empty.status.toString();
  EXPECT_EQ(dimsToVector(empty.shapes[1]), (Ints{0, 2}));
}

}  // namespace
}  // namespace kiln
