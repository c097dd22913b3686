// Kiln's types beyond TensorRT's (float64, int16, uint16, uint32, uint64) on the reference backend: float64
// runs every float op (compared with the same graph in float32), the integer types run exact integer ops,
// and data movement keeps every bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "backends/reference/graph_interpreter.h"
#include "ir/text.h"

namespace kiln::backends {
namespace {

std::vector<HostTensor> run(std::string const& text, std::vector<HostTensor> const& inputs) {
  auto g = ir::parseGraph(text);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  if (!g.isOk()) return {};
  auto r = runGraphOnHost(**g, inputs);
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  return r.isOk() ? std::move(r).value() : std::vector<HostTensor>{};
}

std::string replaceAll(std::string s, std::string const& from, std::string const& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

// A small CNN/transformer mix written for T (f32 or f64).
constexpr char kFloatNet[] =
    "graph {\n"
    "  input x: T[1,2,4,4]\n"
    "  w: T[3,2,3,3] = Constant \"w\" () {data=random(3)}\n"
    "  c: T[1,3,4,4] = Convolution \"conv\" (x, w, _) {dilations=[1,1], groups=1, kernel_shape=[3,3], "
    "num_output_maps=3, pads_begin=[1,1], pads_end=[1,1], strides=[1,1]}\n"
    "  a: T[1,3,4,4] = Activation \"gelu\" (c) {type=12}\n"
    "  s: T[1,3,4,4] = SoftMax \"sm\" (a) {axis=3}\n"
    "  m: T[1,3,4,4] = MatrixMultiply \"mm\" (s, a) {op_a=0, op_b=1}\n"
    "  r: T[1,3,1,1] = Reduce \"mean\" (m) {axes=[2,3], keep_dims=1, op=4}\n"
    "  y: T[1,3,4,4] = ElementWise \"sub\" (m, r) {op=4}\n"
    "  output y\n"
    "}\n";

TEST(ExtensionTypes, Float64RunsFloatOpsLikeFloat32) {
  HostTensor x64 = *ir::makeRandomTensor(DataType::kFLOAT64, makeDims({1, 2, 4, 4}), 11);
  HostTensor x32 = *HostTensor::allocate(DataType::kFLOAT, x64.shape(), "x32");
  for (int64_t i = 0; i < x64.count(); ++i) static_cast<float*>(x32.mutableData())[i] = static_cast<float>(x64.as<double>()[i]);
  auto y64 = run(replaceAll(kFloatNet, "T[", "f64["), {x64});
  auto y32 = run(replaceAll(kFloatNet, "T[", "f32["), {x32});
  ASSERT_EQ(y64.size(), 1u);
  ASSERT_EQ(y32.size(), 1u);
  EXPECT_EQ(y64[0].dtype(), DataType::kFLOAT64);
  double num = 0, den = 0;
  for (int64_t i = 0; i < y64[0].count(); ++i) {
    double d = y64[0].as<double>()[i] - y32[0].as<float>()[i];
    num += d * d;
    den += y64[0].as<double>()[i] * y64[0].as<double>()[i];
  }
  EXPECT_LT(std::sqrt(num / den), 1e-6);
}

TEST(ExtensionTypes, IntegerTypesComputeExactly) {
  for (char const* t : {"i16", "u16", "u32"}) {
    std::string net = replaceAll(
        "graph {\n"
        "  input a: T[4]\n"
        "  input b: T[4]\n"
        "  s: T[4] = ElementWise \"add\" (a, b) {op=0}\n"
        "  p: T[4] = ElementWise \"mul\" (s, b) {op=1}\n"
        "  r: T[1] = Reduce \"sum\" (p) {axes=[0], keep_dims=1, op=0}\n"
        "  output r\n"
        "}\n",
        "T[", std::string(t) + "[");
    DataType dt = *parseDataType(t);
    HostTensor a = HostTensor::fromVector(dt, makeDims({4}), std::vector<int64_t>{1, 2, 300, 40});
    HostTensor b = HostTensor::fromVector(dt, makeDims({4}), std::vector<int64_t>{5, 6, 7, 100});
    auto r = run(net, {a, b});
    ASSERT_EQ(r.size(), 1u) << t;
    // (1+5)*5 + (2+6)*6 + (300+7)*7 + (40+100)*100
    EXPECT_EQ(r[0].intAt(0), 30 + 48 + 2149 + 14000) << t;
    EXPECT_EQ(r[0].dtype(), dt);
  }
}

TEST(ExtensionTypes, Uint64MovesEveryBit) {
  std::string net =
      "graph {\n"
      "  input a: u64[2,2]\n"
      "  t: u64[2,2] = Shuffle \"tr\" (a) {first_perm=[1,0]}\n"
      "  c: u64[4,2] = Concatenation \"cat\" (a, t) {axis=0}\n"
      "  d: f64[4,2] = Cast \"tod\" (c) {to=100}\n"
      "  output c\n"
      "  output d\n"
      "}\n";
  uint64_t big = 0xF000000000000001ull;
  HostTensor a = *HostTensor::allocate(DataType::kUINT64, makeDims({2, 2}), "a");
  auto* pa = static_cast<uint64_t*>(a.mutableData());
  pa[0] = big;
  pa[1] = 1;
  pa[2] = 2;
  pa[3] = 3;
  auto r = run(net, {a});
  ASSERT_EQ(r.size(), 2u);
  std::vector<uint64_t> expect = {big, 1, 2, 3, big, 2, 1, 3};
  for (size_t i = 0; i < expect.size(); ++i) EXPECT_EQ(r[0].as<uint64_t>()[i], expect[i]) << i;
  EXPECT_EQ(r[1].as<double>()[0], static_cast<double>(big));
}

}  // namespace
}  // namespace kiln::backends
