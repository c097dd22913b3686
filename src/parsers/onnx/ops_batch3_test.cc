// Tests of the third batch of ONNX op importers (Compress, Trilu, EyeLike, Size, Shrink, Det, BitShift, Mod, Pow
// with mixed types, the cosine windows, MelWeightMatrix): tiny models parsed, built for the CPU reference backend
// and run; expected values computed independently with numpy (noted per test).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "onnx_test_util.h"

namespace {

using namespace kiln::onnx::test;  // NOLINT: test helpers
using kiln::Dims;
using TP = ::onnx::TensorProto;

TEST(OnnxOpsBatch3, CompressAlongAxisAndFlattened) {
  // numpy: np.compress([0,1,1], x, axis=0), np.compress([1,0,1,1], x, axis=-1), np.compress([0,1,0,0,1], x)
  ModelBuilder m;
  m.input("x", {3, 4}).input("c0", {3}, TP::INT64).input("c1", {4}, TP::INT64).input("c2", {5}, TP::INT64);
  m.output("a").output("b").output("f");
  attr(m.node("Cast", {"c0"}, {"b0"}), "to", int64_t{TP::BOOL});
  attr(m.node("Cast", {"c1"}, {"b1"}), "to", int64_t{TP::BOOL});
  attr(m.node("Cast", {"c2"}, {"b2"}), "to", int64_t{TP::BOOL});
  attr(m.node("Compress", {"x", "b0"}, {"a"}), "axis", int64_t{0});
  attr(m.node("Compress", {"x", "b1"}, {"b"}), "axis", int64_t{-1});
  m.node("Compress", {"x", "b2"}, {"f"});
  auto outs = run(
      m.bytes(), {{"x", {dimsOf({3, 4}), iota(12, 1)}}},
      {{"c0", {dimsOf({3}), {0, 1, 1}}}, {"c1", {dimsOf({4}), {1, 0, 1, 1}}}, {"c2", {dimsOf({5}), {0, 1, 0, 0, 1}}}});
  ASSERT_FALSE(outs.empty());
  EXPECT_EQ(outs["a"].dims.nbDims, 2);
  EXPECT_EQ(outs["a"].dims.d[0], 2);
  expectNear(outs["a"].v, {5, 6, 7, 8, 9, 10, 11, 12});
  EXPECT_EQ(outs["b"].dims.d[1], 3);
  expectNear(outs["b"].v, {1, 3, 4, 5, 7, 8, 9, 11, 12});
  EXPECT_EQ(outs["f"].dims.nbDims, 1);
  expectNear(outs["f"].v, {2, 5});
}

TEST(OnnxOpsBatch3, TriluConstantAndRunTimeK) {
  // numpy: np.triu(x, 1), np.tril(x, -1) for x = 1..12 as 3x4; np.triu(y, -1) for y = 1..24 as 2x3x4.
  ModelBuilder m;
  m.input("x", {3, 4}).input("y", {2, 3, 4}).input("k", {}, TP::INT64).initI("one", {}, {1});
  m.initI("minus1", {}, {-1});
  m.output("u").output("l").output("r").output("d");
  m.node("Trilu", {"x", "one"}, {"u"});
  attr(m.node("Trilu", {"x", "minus1"}, {"l"}), "upper", int64_t{0});
  m.node("Trilu", {"y", "k"}, {"r"});
  attr(m.node("Trilu", {"x"}, {"d"}), "upper", int64_t{0});
  auto outs = run(m.bytes(), {{"x", {dimsOf({3, 4}), iota(12, 1)}}, {"y", {dimsOf({2, 3, 4}), iota(24, 1)}}},
                  {{"k", {dimsOf({}), {-1}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["u"].v, {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12});
  expectNear(outs["l"].v, {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0});
  expectNear(outs["r"].v, {1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 0, 22, 23, 24});
  expectNear(outs["d"].v, {1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0});
}

TEST(OnnxOpsBatch3, TriluZeroSize) {
  ModelBuilder m;
  m.input("x", {3, 0, 5}).output("y");
  m.node("Trilu", {"x"}, {"y"});
  auto outs = run(m.bytes(), {{"x", {dimsOf({3, 0, 5}), {}}}});
  ASSERT_FALSE(outs.empty());
  EXPECT_EQ(outs["y"].dims.nbDims, 3);
  EXPECT_EQ(outs["y"].dims.d[1], 0);
  EXPECT_TRUE(outs["y"].v.empty());
}

TEST(OnnxOpsBatch3, EyeLikeWithKAndDtype) {
  // numpy: np.eye(3, 4, k=1) as float32, np.eye(3, 4, k=-2) as int64
  ModelBuilder m;
  m.input("x", {3, 4}).output("a").output("b", {}, TP::INT64);
  attr(m.node("EyeLike", {"x"}, {"a"}), "k", int64_t{1});
  auto& b = m.node("EyeLike", {"x"}, {"b"});
  attr(b, "k", int64_t{-2});
  attr(b, "dtype", int64_t{TP::INT64});
  auto outs = run(m.bytes(), {{"x", {dimsOf({3, 4}), iota(12)}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["a"].v, {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
  expectNear(outs["b"].v, {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0});
}

TEST(OnnxOpsBatch3, SizeStaticAndDynamic) {
  ModelBuilder m;
  m.input("x", {2, 3, 4}).input("y", {-1, 5}).output("a", {}, TP::INT64).output("b", {}, TP::INT64);
  m.node("Size", {"x"}, {"a0"});
  m.node("Identity", {"a0"}, {"a"});
  m.node("Size", {"y"}, {"b"});
  auto outs = run(m.bytes(), {{"x", {dimsOf({2, 3, 4}), iota(24)}}, {"y", {dimsOf({3, 5}), iota(15)}}});
  ASSERT_FALSE(outs.empty());
  EXPECT_EQ(outs["a"].dims.nbDims, 0);
  expectNear(outs["a"].v, {24});
  EXPECT_EQ(outs["b"].dims.nbDims, 0);
  expectNear(outs["b"].v, {15});
}

TEST(OnnxOpsBatch3, Shrink) {
  // numpy: np.where(x < -1, x + 0.25, np.where(x > 1, x - 0.25, 0))
  ModelBuilder m;
  m.input("x", {6}).output("y");
  auto& n = m.node("Shrink", {"x"}, {"y"});
  attr(n, "lambd", 1.0F);
  attr(n, "bias", 0.25F);
  auto outs = run(m.bytes(), {{"x", {dimsOf({6}), {-2, -0.5F, 0, 0.3F, 1.5F, 3}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {-1.75, 0, 0, 0, 1.25, 2.75});
}

TEST(OnnxOpsBatch3, ShrinkOnUint8SaturatesTheNegativeBound) {
  // numpy: np.where(x < -2, x, np.where(x > 2, x, 0)) on uint8 [0, 1, 2, 3, 200] = [0, 0, 0, 3, 200]; the bound -2
  // becomes the uint8 constant 0 (saturated, not an out-of-range conversion).
  ModelBuilder m;
  m.input("x", {5}).output("y", {}, TP::UINT8);
  attr(m.node("Cast", {"x"}, {"x8"}), "to", int64_t{TP::UINT8});
  attr(m.node("Shrink", {"x8"}, {"y"}), "lambd", 2.0F);
  auto outs = run(m.bytes(), {{"x", {dimsOf({5}), {0, 1, 2, 3, 200}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {0, 0, 0, 3, 200});
}

TEST(OnnxOpsBatch3, DetSingleAndBatched) {
  // numpy: np.linalg.det([[2,-1,.5],[1,3,2],[0,1,4]]) = 24.5; det of [[1,2],[3,4]] and [[0,5],[2,1]] = -2, -10
  ModelBuilder m;
  m.input("a", {3, 3}).input("b", {2, 2, 2}).output("da").output("db");
  m.node("Det", {"a"}, {"da"});
  m.node("Det", {"b"}, {"db"});
  auto outs = run(m.bytes(), {{"a", {dimsOf({3, 3}), {2, -1, 0.5F, 1, 3, 2, 0, 1, 4}}},
                              {"b", {dimsOf({2, 2, 2}), {1, 2, 3, 4, 0, 5, 2, 1}}}});
  ASSERT_FALSE(outs.empty());
  EXPECT_EQ(outs["da"].dims.nbDims, 0);
  expectNear(outs["da"].v, {24.5});
  EXPECT_EQ(outs["db"].dims.nbDims, 1);
  expectNear(outs["db"].v, {-2, -10});
}

TEST(OnnxOpsBatch3, DetByPivotedEliminationAboveOrderSix) {
  // numpy.linalg.det of the float32-rounded inputs; the second 8x8 matrix is singular (row 5 = 2 * row 2).
  std::vector<float> a{0.2F,   0.83F,  -0.84F, 0.04F,  1.57F,  1.59F,  -1.5F,  -1.17F, -1.79F, -0.24F,
                       -1.88F, -0.17F, 0.6F,   -0.89F, 0.71F,  0.36F,  -1.9F,  0.24F,  -0.96F, -0.34F,
                       -0.87F, 0.77F,  -0.24F, -1.37F, 0.18F,  1.12F,  -0.77F, -1.11F, -0.45F, 1.75F,
                       1.9F,   0.69F,  1.61F,  1.38F,  -0.49F, -1.63F, 0.61F,  0.23F,  -0.55F, -1.1F,
                       -0.37F, -0.12F, -0.92F, -0.83F, -0.17F, 1.44F,  0.35F,  -0.87F, -0.89F};
  std::vector<float> b{-0.1F,  0.39F,  -1.73F, -1.71F, -1.2F,  -1.39F, -1.6F,  -1.48F, 0.99F,  0.76F,  0.76F,  -0.51F,
                       0.67F,  -0.64F, 0.29F,  -0.7F,  -0.18F, -1.18F, -1.19F, 0.06F,  -1.65F, -0.07F, -0.55F, 0.83F,
                       -0.22F, -1.75F, -1.03F, 1.89F,  -1.08F, 0.77F,  0.6F,   0.9F,   0.21F,  -1.25F, 1.81F,  0.73F,
                       0.16F,  0.83F,  -0.94F, 1.71F,  1.36F,  0.91F,  -0.08F, 1.37F,  0.98F,  0.64F,  1.66F,  0.53F,
                       -0.54F, 0.21F,  -1.21F, -1.23F, 0.9F,   1.14F,  1.89F,  1.4F,   0.17F,  -1.64F, -0.04F, 1.71F,
                       1.15F,  -0.06F, -0.18F, -1.13F, -1.29F, -1.71F, 1.57F,  0.56F,  -1.43F, -0.34F, -1.8F,  -1.16F,
                       0.92F,  0.6F,   -0.08F, -0.9F,  0.61F,  1.83F,  -0.26F, -1.72F, -1.77F, -1.67F, 1.84F,  0.16F,
                       1.35F,  -1.32F, -0.96F, 0.77F,  1.58F,  -0.64F, -1.74F, 1.46F,  -0.84F, 0.96F,  -1.37F, 0.78F,
                       1.37F,  0.91F,  -0.56F, 0.91F,  -1.44F, -0.74F, -0.32F, 1.51F,  -3.54F, -3.34F, 3.68F,  0.32F,
                       2.7F,   -2.64F, -1.92F, 1.54F,  1.86F,  0.8F,   -0.07F, -0.85F, 1.33F,  1.49F,  -1.63F, -1.14F,
                       1.33F,  1.39F,  -0.74F, -0.88F, -0.28F, 0.16F,  -1.62F, 1.35F};
  ModelBuilder m;
  m.input("a", {7, 7}).input("b", {2, 8, 8}).output("da").output("db");
  m.node("Det", {"a"}, {"da"});
  m.node("Det", {"b"}, {"db"});
  auto outs = run(m.bytes(), {{"a", {dimsOf({7, 7}), a}}, {"b", {dimsOf({2, 8, 8}), b}}});
  ASSERT_FALSE(outs.empty());
  EXPECT_EQ(outs["da"].dims.nbDims, 0);
  expectNear(outs["da"].v, {-85.56527833034632});
  ASSERT_EQ(outs["db"].dims.nbDims, 1);
  expectNear(outs["db"].v, {34.61888613135921, 0.0});
}

TEST(OnnxOpsBatch3, BitShiftUint8AndUint64) {
  // By hand: uint8 16 << {1, 4, 8} = {32, 0 (256 wraps), 0}; 200 >> {1, 3, 9} = {100, 25, 0};
  // uint64 (2^63 + 6) >> 1 = 2^62 + 3 and 3 << 62 = 2^63 + 2^62.
  ModelBuilder m;
  initTyped<uint8_t>(m, "x8", TP::UINT8, {3}, {16, 16, 16});
  initTyped<uint8_t>(m, "s8", TP::UINT8, {3}, {1, 4, 8});
  initTyped<uint8_t>(m, "r8", TP::UINT8, {3}, {200, 200, 200});
  initTyped<uint8_t>(m, "t8", TP::UINT8, {3}, {1, 3, 9});
  initTyped<uint64_t>(m, "x64", TP::UINT64, {2}, {(uint64_t{1} << 63) + 6, 3});
  initTyped<uint64_t>(m, "s64", TP::UINT64, {2}, {1, 62});
  m.input("dummy", {1}).output("dout");  // a run-time input keeps the network from being all constants
  m.node("Identity", {"dummy"}, {"dout"});
  m.output("l8", {}, TP::UINT8)
      .output("rr8", {}, TP::UINT8)
      .output("r64", {}, TP::UINT64)
      .output("l64", {}, TP::UINT64);
  attr(m.node("BitShift", {"x8", "s8"}, {"l8"}), "direction", std::string("LEFT"));
  attr(m.node("BitShift", {"r8", "t8"}, {"rr8"}), "direction", std::string("RIGHT"));
  attr(m.node("BitShift", {"x64", "s64"}, {"r64"}), "direction", std::string("RIGHT"));
  attr(m.node("BitShift", {"x64", "s64"}, {"l64"}), "direction", std::string("LEFT"));
  auto outs = run(m.bytes(), {{"dummy", {dimsOf({1}), {0}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["l8"].v, {32, 0, 0});
  expectNear(outs["rr8"].v, {100, 25, 0});
  // doubles hold these exactly: 2^62 + 3 is not, so compare the parts that are.
  EXPECT_EQ(outs["r64"].v[1], 0.0);  // 3 >> 62
  EXPECT_EQ(outs["l64"].v[1], static_cast<double>(uint64_t{3} << 62));
  EXPECT_EQ(outs["r64"].v[0], static_cast<double>((uint64_t{1} << 62) + 3));
}

TEST(OnnxOpsBatch3, ModFloatSignsAndFloat64) {
  // numpy: np.mod([-7.5, 7.5, -3, 3], [2, -2, 2, 2]) = [0.5, -0.5, 1, 1]; np.fmod(...) = [-1.5, 1.5, -1, 1]
  ModelBuilder m;
  m.input("a", {4}).input("b", {4}).output("m").output("f");
  m.node("Mod", {"a", "b"}, {"m"});
  attr(m.node("Mod", {"a", "b"}, {"f"}), "fmod", int64_t{1});
  auto outs = run(m.bytes(), {{"a", {dimsOf({4}), {-7.5F, 7.5F, -3, 3}}}, {"b", {dimsOf({4}), {2, -2, 2, 2}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["m"].v, {0.5, -0.5, 1, 1});
  expectNear(outs["f"].v, {-1.5, 1.5, -1, 1});

  ModelBuilder d;
  d.input("a", {4}).input("b", {4}).output("m", {}, TP::DOUBLE);
  attr(d.node("Cast", {"a"}, {"a64"}), "to", int64_t{TP::DOUBLE});
  attr(d.node("Cast", {"b"}, {"b64"}), "to", int64_t{TP::DOUBLE});
  d.node("Mod", {"a64", "b64"}, {"m"});
  auto o64 = run(d.bytes(), {{"a", {dimsOf({4}), {-7.5F, 7.5F, -3, 3}}}, {"b", {dimsOf({4}), {2, -2, 2, 2}}}});
  ASSERT_FALSE(o64.empty());
  expectNear(o64["m"].v, {0.5, -0.5, 1, 1});
}

TEST(OnnxOpsBatch3, PowMixedTypes) {
  // numpy: np.power([2, 3, 4] (int32), [0.5, 2, 1.5] (float32)).astype(int32) = [1, 9, 8];
  // [1.5, 2, -3] (float32) ** [2, 3, 3] (int64) = [2.25, 8, -27]
  ModelBuilder m;
  initTyped<int32_t>(m, "ib", TP::INT32, {3}, {2, 3, 4});
  initTyped<int64_t>(m, "ie", TP::INT64, {3}, {2, 3, 3});
  m.input("fe", {3}).input("fb", {3}).output("a", {}, TP::INT32).output("b");
  m.node("Pow", {"ib", "fe"}, {"a"});
  m.node("Pow", {"fb", "ie"}, {"b"});
  auto outs = run(m.bytes(), {{"fe", {dimsOf({3}), {0.5F, 2, 1.5F}}}, {"fb", {dimsOf({3}), {1.5F, 2, -3}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["a"].v, {1, 9, 8});
  expectNear(outs["b"].v, {2.25, 8, -27});
}

TEST(OnnxOpsBatch3, CosineWindowsOfRunTimeLength) {
  // numpy (pi, float64): hann symmetric 5 = 0.5 - 0.5 cos(2 pi n / 4); hamming periodic 4 =
  // 25/46 - 21/46 cos(2 pi n / 4); blackman periodic 6 = 0.42 - 0.5 cos(2 pi n / 6) + 0.08 cos(4 pi n / 6)
  ModelBuilder m;
  m.input("n5", {}, TP::INT64).input("n4", {}, TP::INT64).input("n6", {}, TP::INT64);
  m.output("hann", {-1}).output("hamming", {-1}, TP::DOUBLE).output("blackman", {-1});
  attr(m.node("HannWindow", {"n5"}, {"hann"}), "periodic", int64_t{0});
  attr(m.node("HammingWindow", {"n4"}, {"hamming"}), "output_datatype", int64_t{TP::DOUBLE});
  m.node("BlackmanWindow", {"n6"}, {"blackman"});
  auto outs = run(m.bytes(), {}, {{"n5", {dimsOf({}), {5}}}, {"n4", {dimsOf({}), {4}}}, {"n6", {dimsOf({}), {6}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["hann"].v, {0.0, 0.5, 1.0, 0.5, 0.0}, 1e-6);
  expectNear(outs["hamming"].v, {0.08695652173913043, 0.5434782608695652, 1.0, 0.5434782608695653}, 1e-12);
  expectNear(outs["blackman"].v, {0.0, 0.13, 0.63, 1.0, 0.63, 0.13}, 1e-6);
}

TEST(OnnxOpsBatch3, MelWeightMatrixOfRunTimeSizes) {
  // ONNX's reference loop in numpy: 3 mel bins, dft_length 20, sample rate 1000, 100..480 Hz; band edges
  // [2, 3, 4, 6, 8] in spectrogram bins.
  ModelBuilder m;
  m.input("nb", {}, TP::INT64).input("len", {}, TP::INT64).input("rate", {}, TP::INT64);
  m.input("lo", {}).input("hi", {}).output("w", {-1, -1});
  m.node("MelWeightMatrix", {"nb", "len", "rate", "lo", "hi"}, {"w"});
  auto outs = run(m.bytes(), {{"lo", {dimsOf({}), {100}}}, {"hi", {dimsOf({}), {480}}}},
                  {{"nb", {dimsOf({}), {3}}}, {"len", {dimsOf({}), {20}}}, {"rate", {dimsOf({}), {1000}}}});
  ASSERT_FALSE(outs.empty());
  ASSERT_EQ(outs["w"].dims.nbDims, 2);
  EXPECT_EQ(outs["w"].dims.d[0], 11);
  EXPECT_EQ(outs["w"].dims.d[1], 3);
  expectNear(outs["w"].v,
             {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0.5, 0.5, 0, 0, 1, 0, 0, 0.5, 0, 0, 0, 0, 0, 0, 0, 0, 0});
}

}  // namespace

namespace {

TEST(OnnxOpsBatch3, BadInputsAreParseErrorsNamingTheNode) {
  struct Case {
    char const* op;
    std::vector<int64_t> shape;
    int32_t type;
    char const* needle;
  } cases[] = {
      {"Trilu", {4}, TP::FLOAT, "rank >= 2"},   {"Det", {2, 3}, TP::FLOAT, "square"},
      {"Det", {65, 65}, TP::FLOAT, "order 65"}, {"EyeLike", {2, 2, 2}, TP::FLOAT, "2-D"},
      {"BitShift", {3}, TP::INT32, "unsigned"},
  };
  for (Case const& c : cases) {
    SCOPED_TRACE(c.op);
    ModelBuilder m;
    m.input("x", c.shape, c.type).output("y", {}, c.type);
    auto& n = m.node(
        c.op, std::string(c.op) == "BitShift" ? std::vector<std::string>{"x", "x"} : std::vector<std::string>{"x"},
        {"y"}, "bad_node");
    if (std::string(c.op) == "BitShift") {
      attr(n, "direction", std::string("LEFT"));
    }
    ParseResult r = parseOnly(m.bytes());
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.desc.find(c.needle), std::string::npos) << r.desc;
    EXPECT_NE(r.desc.find("bad_node"), std::string::npos) << r.desc;
  }
  ModelBuilder m;
  m.input("x", {2, 3}).input("c", {2, 3}, TP::BOOL).output("y");
  m.node("Compress", {"x", "c"}, {"y"}, "bad_compress");
  ParseResult r = parseOnly(m.bytes());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.desc.find("1-D"), std::string::npos) << r.desc;
}

TEST(OnnxOpsBatch3, EmptyWindowAndNegativeLengthDoNotCrash) {
  ModelBuilder m;
  m.input("n", {}, TP::INT64).output("w", {-1});
  m.node("HannWindow", {"n"}, {"w"});
  auto outs = run(m.bytes(), {}, {{"n", {dimsOf({}), {0}}}});
  ASSERT_FALSE(outs.empty());
  EXPECT_EQ(outs["w"].dims.d[0], 0);
  // A negative length fails the run with a message (run() reports it as a test failure).
  std::string const bytes = m.bytes();
  EXPECT_NONFATAL_FAILURE(run(bytes, {}, {{"n", {dimsOf({}), {-3}}}}), "must be >= 0");
}

}  // namespace
