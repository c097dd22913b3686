// Tests of Constant, Identity, Cast and Shape: inference and reference kernels, conversions against
// hand-computed values (truncation toward zero, saturation, round to nearest even), edge shapes, bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

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

ir::Attributes castTo(DataType t) { return attrs({{"to", static_cast<int64_t>(t)}}); }

TEST(IdentityReference, CopiesEveryType) {
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kUINT8,
                     DataType::kINT32, DataType::kINT64, DataType::kBOOL}) {
    SCOPED_TRACE(dataTypeName(t));
    HostTensor x = tensor(t, {2, 3}, std::vector<double>{1, 0, 3, 1, 5, 1});
    RunResult r = runNode(OpType::kIdentity, {}, {var(x)});
    ASSERT_TRUE(r.status.isOk()) << r.status.toString();
    EXPECT_EQ(r.dtype, t);
    EXPECT_EQ(dimsToVector(r.shape), (Ints{2, 3}));
    EXPECT_TRUE(r.out.sameContents(x));
  }
  RunResult z = runNode(OpType::kIdentity, {}, {var(tensor(DataType::kFLOAT, {0, 4}, std::vector<double>{}))});
  ASSERT_TRUE(z.status.isOk());
  EXPECT_EQ(dimsToVector(z.shape), (Ints{0, 4}));
  RunResult s = runNode(OpType::kIdentity, {}, {var(tensor(DataType::kINT64, {}, Ints{-9}))});
  ASSERT_TRUE(s.status.isOk());
  EXPECT_EQ(s.out.intAt(0), -9);
}

TEST(IdentityReference, RequestedOutputTypeConverts) {
  // ILayer::setOutputType on an Identity converts (the way TensorRT casts with an identity layer).
  ir::Graph g;
  ir::Value* x = *g.addInput("x", DataType::kFLOAT, makeDims({3}));
  ir::Node* n = g.addNode(OpType::kIdentity, "id", {x});
  n->output(0)->requestedType = DataType::kHALF;
  g.markOutput(n->output(0));
  ASSERT_TRUE(ir::inferGraphInPlace(g, nullptr).isOk());
  EXPECT_EQ(n->output(0)->dtype, DataType::kHALF);
  HostTensor in = tensor(DataType::kFLOAT, {3}, std::vector<double>{1.0 / 3.0, 65504.0 * 2, -2.5});
  std::vector<HostTensor> outs{*HostTensor::allocate(DataType::kHALF, makeDims({3}), "out")};
  ASSERT_TRUE(backends::evaluateOnHost(*n, {&in}, outs).isOk());
  EXPECT_EQ(outs[0].doubleAt(0), roundTo(DataType::kHALF, in.doubleAt(0)));
  EXPECT_EQ(outs[0].doubleAt(1), std::numeric_limits<double>::infinity());
  EXPECT_EQ(outs[0].doubleAt(2), -2.5);
}

TEST(CastReference, FloatToIntTruncatesAndSaturates) {
  HostTensor x = tensor(DataType::kFLOAT, {6}, std::vector<double>{2.7, -2.7, 0.5, -0.5, 1e10, -1e10});
  RunResult i32 = runNode(OpType::kCast, castTo(DataType::kINT32), {var(x)});
  ASSERT_TRUE(i32.status.isOk()) << i32.status.toString();
  EXPECT_EQ(i32.dtype, DataType::kINT32);
  EXPECT_EQ(i32.out.toInt64Vector(),
            (Ints{2, -2, 0, 0, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()}));
  RunResult i8 = runNode(OpType::kCast, castTo(DataType::kINT8), {var(x)});
  ASSERT_TRUE(i8.status.isOk());
  EXPECT_EQ(i8.out.toInt64Vector(), (Ints{2, -2, 0, 0, 127, -128}));
  RunResult u8 = runNode(OpType::kCast, castTo(DataType::kUINT8), {var(x)});
  ASSERT_TRUE(u8.status.isOk());
  EXPECT_EQ(u8.out.toInt64Vector(), (Ints{2, 0, 0, 0, 255, 0}));
  RunResult b = runNode(OpType::kCast, castTo(DataType::kBOOL), {var(x)});
  ASSERT_TRUE(b.status.isOk());
  EXPECT_EQ(b.out.toInt64Vector(), (Ints{1, 1, 1, 1, 1, 1}));
  RunResult n = runNode(OpType::kCast, castTo(DataType::kINT64),
                        {var(tensor(DataType::kHALF, {2}, std::vector<double>{std::nan(""), -0.0}))});
  ASSERT_TRUE(n.status.isOk());
  EXPECT_EQ(n.out.toInt64Vector(), (Ints{0, 0}));
}

TEST(CastReference, FloatToFloatRoundsToNearestEven) {
  // 1 + 2^-11 is halfway between two float16 values (1 and 1 + 2^-10): ties go to the even one (1).
  // 1 + 3*2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: ties go to 1 + 2^-9.
  double h1 = 1.0 + std::ldexp(1.0, -11), h2 = 1.0 + 3 * std::ldexp(1.0, -11);
  RunResult r = runNode(OpType::kCast, castTo(DataType::kHALF),
                        {var(tensor(DataType::kFLOAT, {2}, std::vector<double>{h1, h2}))});
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(doubles(r.out), (std::vector<double>{1.0, 1.0 + std::ldexp(1.0, -9)}));
  // bfloat16 keeps 8 significant bits: 1 + 2^-8 ties to 1, 1 + 3*2^-8 ties to 1 + 2^-6.
  double b1 = 1.0 + std::ldexp(1.0, -8), b2 = 1.0 + 3 * std::ldexp(1.0, -8);
  RunResult rb = runNode(OpType::kCast, castTo(DataType::kBF16),
                         {var(tensor(DataType::kFLOAT, {2}, std::vector<double>{b1, b2}))});
  ASSERT_TRUE(rb.status.isOk());
  EXPECT_EQ(doubles(rb.out), (std::vector<double>{1.0, 1.0 + std::ldexp(1.0, -6)}));
  // float16 -> bfloat16 -> float32.
  RunResult hb =
      runNode(OpType::kCast, castTo(DataType::kBF16), {var(tensor(DataType::kHALF, {1}, std::vector<double>{3.0}))});
  ASSERT_TRUE(hb.status.isOk());
  EXPECT_EQ(hb.out.doubleAt(0), 3.0);
}

TEST(CastReference, IntegerConversionsAreExact) {
  HostTensor x = tensor(DataType::kINT64, {4}, Ints{0, -1, 300, 70000});
  RunResult f = runNode(OpType::kCast, castTo(DataType::kFLOAT), {var(x)});
  ASSERT_TRUE(f.status.isOk());
  EXPECT_EQ(doubles(f.out), (std::vector<double>{0, -1, 300, 70000}));
  RunResult i32 = runNode(OpType::kCast, castTo(DataType::kINT32), {var(x)});
  ASSERT_TRUE(i32.status.isOk());
  EXPECT_EQ(i32.out.toInt64Vector(), (Ints{0, -1, 300, 70000}));
  HostTensor big = tensor(DataType::kINT64, {1}, Ints{0});
  static_cast<int64_t*>(big.mutableData())[0] = (int64_t{1} << 53) + 1;  // not representable in double
  RunResult same = runNode(OpType::kCast, castTo(DataType::kINT64), {var(big)});
  ASSERT_TRUE(same.status.isOk());
  EXPECT_EQ(same.out.as<int64_t>()[0], (int64_t{1} << 53) + 1);
  RunResult fromBool =
      runNode(OpType::kCast, castTo(DataType::kINT32), {var(tensor(DataType::kBOOL, {2}, Ints{1, 0}))});
  ASSERT_TRUE(fromBool.status.isOk());
  EXPECT_EQ(fromBool.out.toInt64Vector(), (Ints{1, 0}));
  RunResult toBool =
      runNode(OpType::kCast, castTo(DataType::kBOOL), {var(tensor(DataType::kINT8, {3}, Ints{0, -3, 2}))});
  ASSERT_TRUE(toBool.status.isOk());
  EXPECT_EQ(toBool.out.toInt64Vector(), (Ints{0, 1, 1}));
  RunResult z = runNode(OpType::kCast, castTo(DataType::kHALF), {var(tensor(DataType::kINT32, {2, 0}, Ints{}))});
  ASSERT_TRUE(z.status.isOk());
  EXPECT_EQ(dimsToVector(z.shape), (Ints{2, 0}));
}

TEST(CastReference, BadInputIsAnError) {
  HostTensor x = tensor(DataType::kFLOAT, {2}, std::vector<double>{1, 2});
  RunResult r = runNode(OpType::kCast, castTo(DataType::kINT4), {var(x)});
  EXPECT_FALSE(r.status.isOk());
  EXPECT_NE(r.status.message().find("node"), std::string::npos);
  EXPECT_FALSE(runNode(OpType::kCast, castTo(DataType::kFLOAT), {}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kCast, castTo(DataType::kFLOAT), {var(x), var(x)}).status.isOk());
}

TEST(ShapeReference, ShapeIsInt64AndKnownAtInference) {
  ir::Graph g;
  ir::Value* x = *g.addInput("x", DataType::kHALF, makeDims({2, 0, 5}));
  ir::Node* n = g.addNode(OpType::kShape, "shape", {x});
  g.markOutput(n->output(0));
  ir::ShapeState state;
  ASSERT_TRUE(g.renumber().isOk());
  state.resize(g.values().size());
  state.info[x->id] = {DataType::kHALF, x->shape};
  ASSERT_TRUE(ir::inferShapes(g, state, nullptr).isOk());
  EXPECT_EQ(state.info[n->output(0)->id].dtype, DataType::kINT64);
  EXPECT_EQ(dimsToVector(state.info[n->output(0)->id].shape), (Ints{3}));
  ASSERT_TRUE(state.values[n->output(0)->id].has_value());
  EXPECT_EQ(state.values[n->output(0)->id]->toInt64Vector(), (Ints{2, 0, 5}));
  // Unknown dims: the rank is known, the contents are not.
  state.info[x->id] = {DataType::kHALF, makeDims({-1, 3})};
  ASSERT_TRUE(ir::inferShapes(g, state, nullptr).isOk());
  EXPECT_EQ(dimsToVector(state.info[n->output(0)->id].shape), (Ints{2}));
  EXPECT_FALSE(state.values[n->output(0)->id].has_value());
}

TEST(ShapeReference, KernelWritesTheDims) {
  RunResult r = runNode(OpType::kShape, {}, {var(tensor(DataType::kINT8, {4, 1, 3}, std::vector<double>(12, 0)))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(r.out.toInt64Vector(), (Ints{4, 1, 3}));
  RunResult s = runNode(OpType::kShape, {}, {var(tensor(DataType::kFLOAT, {}, std::vector<double>{1}))});
  ASSERT_TRUE(s.status.isOk());
  EXPECT_EQ(dimsToVector(s.shape), (Ints{0}));
  EXPECT_FALSE(runNode(OpType::kShape, {}, {}).status.isOk());
}

TEST(ConstantReference, InferenceAndKernel) {
  ir::Graph g;
  HostTensor data = tensor(DataType::kBF16, {2, 2}, std::vector<double>{1, -2, 3.5, 0});
  ir::Node* c = g.addConstant("c", data);
  g.markOutput(c->output(0));
  ASSERT_TRUE(ir::inferGraphInPlace(g, nullptr).isOk());
  EXPECT_EQ(c->output(0)->dtype, DataType::kBF16);
  EXPECT_EQ(dimsToVector(c->output(0)->shape), (Ints{2, 2}));
  ir::InferFn fn = ir::findInferFn(OpType::kConstant);
  ASSERT_NE(fn, nullptr);
  std::vector<HostTensor> outs{*HostTensor::allocate(DataType::kBF16, makeDims({2, 2}), "out")};
  ASSERT_TRUE(backends::evaluateOnHost(*c, {}, outs).isOk());
  EXPECT_TRUE(outs[0].sameContents(data));
  // A Constant without data is an error, not a crash.
  ir::Node empty;
  empty.op = OpType::kConstant;
  empty.name = "nodata";
  ir::InferContext ctx{empty, {}, {}, {ir::TensorInfo{}}, {std::nullopt}};
  EXPECT_FALSE(fn(ctx).isOk());
  EXPECT_FALSE(backends::evaluateOnHost(empty, {}, outs).isOk());
  // An output that does not fit the data is an error, not an overflow.
  std::vector<HostTensor> small{*HostTensor::allocate(DataType::kBF16, makeDims({3}), "out")};
  EXPECT_FALSE(backends::evaluateOnHost(*c, {}, small).isOk());
}

TEST(BasicKernels, KernelsCheckOutputSizes) {
  HostTensor x = tensor(DataType::kFLOAT, {4}, std::vector<double>{1, 2, 3, 4});
  for (OpType op : {OpType::kIdentity, OpType::kCast, OpType::kShape}) {
    SCOPED_TRACE(ir::opName(op));
    ir::Node n;
    n.op = op;
    n.name = "direct";
    n.attrs = castTo(DataType::kINT32);
    std::vector<HostTensor> outs{
        *HostTensor::allocate(op == OpType::kShape ? DataType::kINT64 : DataType::kINT32, makeDims({3}), "out")};
    EXPECT_FALSE(backends::evaluateOnHost(n, {&x}, outs).isOk());
  }
}

}  // namespace
}  // namespace kiln
