// The oneDNN tactics in bf16 (convolution_onednn_direct, matrix_multiply_onednn_gemm, pooling_onednn_direct with
// bf16 data, fp32 accumulation; the pointwise ops; shuffle_onednn_reorder moving bf16; cast_onednn_reorder) against the
// reference kernels on the same bf16 inputs, over edge shapes, recorded formats, fused bias/residual/activations and
// threads; the types they refuse; and the builder's question before it casts the weights (bf16 data with the float32
// constant weights still in the graph).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iterator>

#include "backends/cpu/cpu_test_util.h"
#include "backends/cpu/onednn_util.h"

namespace kiln {
namespace {

using namespace cputest;  // NOLINT: test helpers
using V = std::vector<int64_t>;

constexpr char kConv[] = "convolution_onednn_direct";
constexpr char kMatMul[] = "matrix_multiply_onednn_gemm";
constexpr char kPool[] = "pooling_onednn_direct";
// Both sides round the output to bf16 (8 significant bits) from the same bf16 inputs: they agree except where the fp32
// and fp64 sums fall on either side of a rounding boundary (norm-relative errors 0 to 5e-6 here, one bf16 step is
// 4e-3 relative); a wrong layout or weight gives errors near 1.
constexpr double kTol = 1e-3;

HostTensor bf16(HostTensor const& t) { return convertType(t, DataType::kBF16); }
HostTensor randomBf16(V const& shape, uint32_t seed) { return bf16(randomTensor(shape, seed)); }

struct ConvCase {
  V x{}, w{};
  V strides{}, pads{};
  int64_t groups = 1;
  bool bias = false, residual = false;
  int64_t activation = -1;
};

ir::Attributes convAttrs(ConvCase const& c) {
  ir::Attributes a;
  V kernel(c.w.begin() + 2, c.w.end());
  size_t ns = kernel.size();
  a.set("num_output_maps", c.w[0]);
  a.set("kernel_shape", kernel);
  a.set("strides", c.strides.empty() ? V(ns, 1) : c.strides);
  a.set("pads_begin", c.pads.empty() ? V(ns, 0) : c.pads);
  a.set("pads_end", c.pads.empty() ? V(ns, 0) : c.pads);
  a.set("dilations", V(ns, 1));
  a.set("groups", c.groups);
  a.set("padding_mode", static_cast<int64_t>(PaddingMode::kEXPLICIT_ROUND_DOWN));
  if (c.activation >= 0) {
    a.set("activation", c.activation);
    a.set("act_alpha", 0.0);
    a.set("act_beta", 0.0);
  }
  return a;
}

std::vector<In> convInputs(ConvCase const& c, DataType t = DataType::kBF16) {
  auto make = [t](V const& s, uint32_t seed) { return convertType(randomTensor(s, seed), t); };
  std::vector<In> ins{var(make(c.x, 1)), cst(make(c.w, 2))};
  if (c.bias || c.residual) ins.push_back(c.bias ? cst(make({c.w[0]}, 3)) : none());
  if (c.residual) {
    OneNode n = makeNode(OpType::kConvolution, convAttrs(c), {ins[0], ins[1]});
    ins.push_back(var(make(dimsToVector(n.out[0].shape), 4)));
  }
  return ins;
}

double runConv(ConvCase const& c, int threads = 1, int64_t format = 0, int outputAt = -1) {
  std::vector<int64_t> formats;
  if (format != 0) formats = {format, 0, 0, c.residual ? format : 0};
  return compareWithReference(kConv, OpType::kConvolution, convAttrs(c), convInputs(c), threads, formats, format,
                              outputAt);
}

int64_t const kRelu = static_cast<int64_t>(ActivationType::kRELU);

// Without AVX-512 oneDNN has no bf16 primitives and the tactics refuse bf16 (TypesTakenAndRefused checks that on
// such a CPU, or under ONEDNN_MAX_CPU_ISA=AVX2): the comparisons have nothing to run there.
#define KILN_REQUIRE_ONEDNN_BF16()                                        \
  do {                                                                   \
    if (!backends::cpu::bf16Supported())                                 \
      GTEST_SKIP() << "oneDNN has no bf16 on this CPU (AVX-512 needed)"; \
  } while (0)

TEST(OnednnBf16, ConvolutionEdgeShapes) {
  KILN_REQUIRE_ONEDNN_BF16();
  EXPECT_LT(runConv({{1, 16, 8, 8}, {32, 16, 1, 1}}), kTol);                                        // 1x1
  EXPECT_LT(runConv({{1, 3, 17, 17}, {8, 3, 7, 7}, {2, 2}, {3, 3}, 1, true, false, kRelu}), kTol);  // stem
  EXPECT_LT(runConv({{2, 5, 9, 7}, {7, 5, 3, 3}, {}, {1, 1}, 1, true}), kTol);           // odd channels, batch
  EXPECT_LT(runConv({{1, 32, 10, 10}, {32, 1, 3, 3}, {}, {1, 1}, 32}), kTol);            // depthwise
  EXPECT_LT(runConv({{1, 12, 6, 6}, {18, 4, 3, 3}, {2, 2}, {1, 1}, 3, true}), kTol);     // groups, stride
  EXPECT_LT(runConv({{1, 1, 1, 1}, {1, 1, 1, 1}}), kTol);                                // one element
  EXPECT_LT(runConv({{1, 4, 5, 6, 7}, {6, 4, 3, 3, 3}, {}, {1, 1, 1}, 1, true}), kTol);  // 3-D
  EXPECT_LT(runConv({{2, 64, 14, 14}, {64, 64, 3, 3}, {}, {1, 1}, 1, true, true, kRelu}, 2), kTol);  // 2 threads
}

// The formats the builder records between oneDNN layers (bf16 activations take them as float32 ones do), with the
// residual in the same format and y over it (outputMayReuseInput).
TEST(OnednnBf16, ConvolutionFormatsAndResidual) {
  KILN_REQUIRE_ONEDNN_BF16();
  ConvCase c{{1, 32, 9, 9}, {48, 32, 3, 3}, {}, {1, 1}, 1, true, true, kRelu};
  for (int64_t f : {0, 1, 8, 16}) {
    EXPECT_LT(runConv(c, 1, f), kTol) << "format " << f;
    EXPECT_LT(runConv(c, 2, f, 3), kTol) << "format " << f << ", y over the residual";
  }
}

TEST(OnednnBf16, PoolingMaxAndAverage) {
  KILN_REQUIRE_ONEDNN_BF16();
  auto attrs = [](PoolingType type, V window, V strides, V pads) {
    ir::Attributes a;
    a.set("type", static_cast<int64_t>(type));
    a.set("window", window);
    a.set("strides", strides);
    a.set("pads_begin", pads);
    a.set("pads_end", pads);
    a.set("padding_mode", static_cast<int64_t>(PaddingMode::kEXPLICIT_ROUND_DOWN));
    a.set("exclude_padding", int64_t{1});
    a.set("blend_factor", 0.0);
    return a;
  };
  for (PoolingType type : {PoolingType::kMAX, PoolingType::kAVERAGE}) {
    EXPECT_LT(compareWithReference(kPool, OpType::kPooling, attrs(type, {3, 3}, {2, 2}, {1, 1}),
                                   {var(randomBf16({1, 16, 11, 11}, 5))}),
              kTol);
    EXPECT_LT(compareWithReference(kPool, OpType::kPooling, attrs(type, {2, 2}, {2, 2}, {0, 0}),
                                   {var(randomBf16({2, 3, 7, 5}, 6))}, 2),
              kTol);
    for (int64_t f : {1, 16})
      EXPECT_LT(compareWithReference(kPool, OpType::kPooling, attrs(type, {3, 3}, {2, 2}, {1, 1}),
                                     {var(randomBf16({1, 32, 12, 12}, 7))}, 1, {f}, f),
                kTol)
          << "format " << f;
  }
}

ir::Attributes mmAttrs(MatrixOperation a, MatrixOperation b, int64_t act = -1) {
  ir::Attributes r;
  r.set("op_a", static_cast<int64_t>(a));
  r.set("op_b", static_cast<int64_t>(b));
  if (act >= 0) {
    r.set("activation", act);
    r.set("act_alpha", 0.0);
    r.set("act_beta", 0.0);
  }
  return r;
}

constexpr MatrixOperation kN = MatrixOperation::kNONE;
constexpr MatrixOperation kT = MatrixOperation::kTRANSPOSE;

double runMatMul(V a, V b, MatrixOperation opA = kN, MatrixOperation opB = kN, int threads = 1, bool constB = false) {
  std::vector<In> ins{var(randomBf16(a, 11)), constB ? cst(randomBf16(b, 12)) : var(randomBf16(b, 12))};
  return compareWithReference(kMatMul, OpType::kMatrixMultiply, mmAttrs(opA, opB), ins, threads);
}

TEST(OnednnBf16, MatrixMultiplyShapesTransposesAndBatches) {
  KILN_REQUIRE_ONEDNN_BF16();
  EXPECT_LT(runMatMul({64, 64}, {64, 64}), kTol);
  EXPECT_LT(runMatMul({1, 1}, {1, 1}), kTol);
  EXPECT_LT(runMatMul({257, 7}, {7, 3}), kTol);
  EXPECT_LT(runMatMul({3, 513}, {513, 129}, kN, kN, 2, true), kTol);
  EXPECT_LT(runMatMul({9, 5}, {6, 9}, kT, kT), kTol);
  EXPECT_LT(runMatMul({4, 7, 5}, {5, 3}), kTol);
  EXPECT_LT(runMatMul({2, 1, 7, 5}, {1, 3, 5, 4}), kTol);
  EXPECT_LT(runMatMul({1, 33, 40}, {24, 40}, kN, kT, 2, true), kTol);  // BERT's shared, transposed B
}

// y = act(a b + bias + residual) with a constant B packed once, the collapsed 2-D product and the batched one.
TEST(OnednnBf16, MatrixMultiplyBiasResidualActivation) {
  KILN_REQUIRE_ONEDNN_BF16();
  int64_t const gelu = static_cast<int64_t>(ActivationType::kGELU_ERF);
  In a = var(randomBf16({1, 33, 40}, 31)), b = cst(randomBf16({40, 24}, 32));
  std::vector<In> ins{a, b, cst(randomBf16({24}, 33)), var(randomBf16({1, 33, 24}, 34))};
  for (int threads : {1, 2})
    EXPECT_LT(compareWithReference(kMatMul, OpType::kMatrixMultiply, mmAttrs(kN, kN, gelu), ins, threads), kTol);
  std::vector<In> batched{var(randomBf16({3, 5, 7}, 35)), var(randomBf16({3, 7, 6}, 36)), cst(randomBf16({6}, 37))};
  EXPECT_LT(compareWithReference(kMatMul, OpType::kMatrixMultiply, mmAttrs(kN, kN, kRelu), batched), kTol);
}

// Types are uniform (all bf16 or all float32; fp16 stays on the reference), except that a bf16 convolution takes
// float32 constant weights: precision assignment asks with the weights still float32, before it casts them. bf16 is
// taken only where oneDNN runs it (bf16Supported: AVX-512), by every bf16 tactic, the cast and the shuffle included.
TEST(OnednnBf16, TypesTakenAndRefused) {
  backends::Tactic const* conv = backends::TacticRegistry::instance().find(kConv);
  ASSERT_NE(conv, nullptr);
  ConvCase c{{1, 8, 6, 6}, {8, 8, 3, 3}, {}, {1, 1}, 1, true};
  OneNode f32 = makeNode(OpType::kConvolution, convAttrs(c), convInputs(c, DataType::kFLOAT));
  auto as = [](std::vector<ir::TensorInfo> v, DataType t) {
    for (auto& i : v)
      if (i.shape.nbDims >= 0) i.dtype = t;
    return v;
  };
  EXPECT_TRUE(conv->supports(*f32.node, f32.in, f32.out));
  bool const bf16 = backends::cpu::bf16Supported();  // false without AVX-512: bf16 then refused everywhere
  EXPECT_EQ(conv->supports(*f32.node, as(f32.in, DataType::kBF16), as(f32.out, DataType::kBF16)), bf16);
  EXPECT_FALSE(conv->supports(*f32.node, as(f32.in, DataType::kHALF), as(f32.out, DataType::kHALF)));
  EXPECT_FALSE(conv->supports(*f32.node, as(f32.in, DataType::kBF16), f32.out));  // mixed x and y
  // Winograd is float32 only.
  backends::Tactic const* wino = backends::TacticRegistry::instance().find("convolution_onednn_winograd_4x3");
  ASSERT_NE(wino, nullptr);
  OneNode b16 = makeNode(OpType::kConvolution, convAttrs(c), convInputs(c));
  EXPECT_FALSE(wino->supports(*b16.node, b16.in, b16.out));

  OneNode mm =
      makeNode(OpType::kMatrixMultiply, mmAttrs(kN, kN), {var(randomBf16({2, 4}, 1)), var(randomBf16({4, 3}, 2))});
  EXPECT_EQ(tacticSupports(kMatMul, mm), bf16);
  backends::Tactic const* matmul = backends::TacticRegistry::instance().find(kMatMul);
  EXPECT_FALSE(matmul->supports(*mm.node, mm.in, as(mm.out, DataType::kFLOAT)));
  EXPECT_FALSE(matmul->supports(*mm.node, as(mm.in, DataType::kHALF), as(mm.out, DataType::kHALF)));
  OneNode pool = makeNode(OpType::kPooling,
                          [] {
                            ir::Attributes a;
                            a.set("type", static_cast<int64_t>(PoolingType::kMAX));
                            a.set("window", V{2, 2});
                            a.set("strides", V{2, 2});
                            a.set("pads_begin", V{0, 0});
                            a.set("pads_end", V{0, 0});
                            a.set("blend_factor", 0.0);
                            return a;
                          }(),
                          {var(randomBf16({1, 4, 4, 4}, 3))});
  EXPECT_EQ(tacticSupports(kPool, pool), bf16);
  EXPECT_FALSE(tacticSupports(kPool, makeNode(pool.node->op, pool.node->attrs,
                                              {var(convertType(randomTensor({1, 4, 4, 4}, 3), DataType::kHALF))})));
  ir::Attributes toBf16;
  toBf16.set("to", static_cast<int64_t>(DataType::kBF16));
  EXPECT_EQ(tacticSupports("cast_onednn_reorder", makeNode(OpType::kCast, toBf16, {var(randomTensor({4, 4}, 4))})),
            bf16);
  ir::Attributes reshape;
  reshape.set("reshape", V{16});
  reshape.set("zero_is_placeholder", int64_t{0});
  EXPECT_EQ(tacticSupports("shuffle_onednn_reorder", makeNode(OpType::kShuffle, reshape, {var(randomBf16({4, 4}, 5))})),
            bf16);
}

// Shuffles move bf16 elements exactly: transposes as reorders, reshapes (and unit-axis moves) as copies, one of them
// over 32768 elements so that it is copied in chunks on both threads.
TEST(OnednnBf16, ShuffleMovesBf16Exactly) {
  KILN_REQUIRE_ONEDNN_BF16();
  struct Case {
    V x, first, reshape, second;
  };
  for (Case c : {Case{{1, 128, 768}, {}, {1, 128, 12, 64}, {0, 2, 1, 3}},
                 Case{{1, 12, 128, 64}, {0, 2, 1, 3}, {1, 128, 768}, {}}, Case{{2, 3, 4, 5}, {3, 1, 0, 2}, {}, {}},
                 Case{{2, 3, 4, 5}, {}, {6, 20}, {}}, Case{{7}, {}, {}, {}}, Case{{1, 301, 200}, {1, 0, 2}, {}, {}}}) {
    ir::Attributes a;
    if (!c.first.empty()) a.set("first_perm", c.first);
    if (!c.reshape.empty()) a.set("reshape", c.reshape);
    if (!c.second.empty()) a.set("second_perm", c.second);
    a.set("zero_is_placeholder", int64_t{0});
    EXPECT_EQ(compareWithReference("shuffle_onednn_reorder", OpType::kShuffle, a, {var(randomBf16(c.x, 6))}, 2), 0.0);
  }
}

// float32 -> bf16 rounds to nearest even as the reference does (bit for bit, ties, NaN and infinities included;
// a float32 denormal may become zero, as AVX512-BF16's conversion instruction reads it),
// bf16 -> float32 is exact; over lengths around oneDNN's vector steps, on one and two threads; fp16 and same-type
// casts stay on the reference.
TEST(OnednnBf16, CastRoundsAsTheReference) {
  KILN_REQUIRE_ONEDNN_BF16();
  auto castTo = [](DataType t) {
    ir::Attributes a;
    a.set("to", static_cast<int64_t>(t));
    return a;
  };
  for (int64_t n : {1, 15, 16, 17, 1000, 40000}) {
    HostTensor x = randomTensor({n}, static_cast<uint32_t>(n));
    auto* f = static_cast<float*>(x.mutableData());
    // Ties between two bf16 values (an odd and an even mantissa), signed zero, infinities and a NaN.
    float const specials[] = {1.00390625f, 1.01171875f, -0.0f, INFINITY, -INFINITY, NAN, 3.0e38f, 1e-40f};
    for (size_t i = 0; i < std::size(specials) && static_cast<int64_t>(i) < n; ++i) f[i] = specials[i];
    for (int threads : {1, 2}) {
      std::vector<In> ins{var(x)};  // node.ptrs point into it
      OneNode node = makeNode(OpType::kCast, castTo(DataType::kBF16), ins);
      std::vector<HostTensor> ref{*HostTensor::allocate(DataType::kBF16, x.shape(), "ref")};
      ASSERT_TRUE(backends::evaluateOnHost(*node.node, node.ptrs, ref).isOk());
      HostTensor y = *HostTensor::allocate(DataType::kBF16, x.shape(), "y");
      backends::Tactic const* t = backends::TacticRegistry::instance().find("cast_onednn_reorder");
      ASSERT_NE(t, nullptr);
      ASSERT_TRUE(t->supports(*node.node, node.in, node.out));
      auto k = t->create(*node.node);
      ASSERT_TRUE(k.isOk()) << k.status().toString();
      backends::LaunchContext ctx;
      backends::CpuStream stream;
      ctx.stream = &stream;
      std::unique_ptr<ThreadPool> pool;
      if (threads > 1) {
        pool = std::make_unique<ThreadPool>(threads);
        ctx.pool = pool.get();
      }
      ctx.inputs.push_back({x.mutableData(), x.dtype(), x.shape()});
      ctx.outputs.push_back({y.mutableData(), y.dtype(), y.shape()});
      ASSERT_TRUE((*k)->enqueue(ctx).isOk());
      auto const* got = static_cast<uint16_t const*>(y.data());
      auto const* want = static_cast<uint16_t const*>(ref[0].data());
      for (int64_t i = 0; i < n; ++i) {
        bool const nan = std::isnan(f[i]);
        // NaN: any quiet NaN (the payload may differ).
        if (nan)
          EXPECT_TRUE(std::isnan(y.doubleAt(i))) << i;
        else if (std::fpclassify(f[i]) == FP_SUBNORMAL)  // AVX512-BF16's conversion reads denormals as zero
          EXPECT_TRUE(got[i] == want[i] || y.doubleAt(i) == 0.0) << i;
        else
          ASSERT_EQ(got[i], want[i]) << "n " << n << " element " << i << " = " << f[i];
      }
    }
    // And back: bf16 -> float32 is exact.
    EXPECT_EQ(compareWithReference("cast_onednn_reorder", OpType::kCast, castTo(DataType::kFLOAT),
                                   {var(randomBf16({n}, 3))}, 2),
              0.0);
  }
  // In a recorded format shared by x and y (a bf16 region's edge between formatted layers).
  for (int64_t f : {1, 16}) {
    EXPECT_EQ(compareWithReference("cast_onednn_reorder", OpType::kCast, castTo(DataType::kFLOAT),
                                   {var(randomBf16({1, 32, 5, 7}, 4))}, 1, {f}, f),
              0.0);
    EXPECT_EQ(compareWithReference("cast_onednn_reorder", OpType::kCast, castTo(DataType::kBF16),
                                   {var(randomTensor({1, 32, 5, 7}, 5))}, 1, {f}, f),
              0.0);
  }
  EXPECT_FALSE(tacticSupports("cast_onednn_reorder",
                              makeNode(OpType::kCast, castTo(DataType::kHALF), {var(randomTensor({4}, 1))})));
  EXPECT_FALSE(tacticSupports("cast_onednn_reorder",
                              makeNode(OpType::kCast, castTo(DataType::kFLOAT), {var(randomTensor({4}, 1))})));
}

// Activations and unary ops as one eltwise step in bf16 (chains such as SELU stay float32: oneDNN would round each
// step); element-wise arithmetic with full, swapped (commutative, a broadcast) and expanded (sub/div, a broadcast)
// operands, and the 4-D recorded formats.
TEST(OnednnBf16, PointwiseOps) {
  KILN_REQUIRE_ONEDNN_BF16();
  auto act = [](ActivationType t, double alpha = 0) {
    ir::Attributes a;
    a.set("type", static_cast<int64_t>(t));
    a.set("alpha", alpha);
    a.set("beta", 0.0);
    return a;
  };
  for (auto [t, alpha] : {std::pair{ActivationType::kRELU, 0.0}, std::pair{ActivationType::kSIGMOID, 0.0},
                          std::pair{ActivationType::kTANH, 0.0}, std::pair{ActivationType::kLEAKY_RELU, 0.1},
                          std::pair{ActivationType::kGELU_ERF, 0.0}}) {
    EXPECT_LT(compareWithReference("activation_onednn_eltwise", OpType::kActivation, act(t, alpha),
                                   {var(randomBf16({2, 3, 40000}, 8))}, 2),
              kTol)
        << static_cast<int>(t);
    EXPECT_LT(compareWithReference("activation_onednn_eltwise", OpType::kActivation, act(t, alpha),
                                   {var(randomBf16({1, 32, 5, 7}, 9))}, 1, {1}, 1),
              kTol)
        << static_cast<int>(t) << " channels-last";
  }
  EXPECT_FALSE(
      tacticSupports("activation_onednn_eltwise",
                     makeNode(OpType::kActivation, act(ActivationType::kSELU, 1.67), {var(randomBf16({4, 4}, 1))})));
  EXPECT_TRUE(
      tacticSupports("activation_onednn_eltwise",
                     makeNode(OpType::kActivation, act(ActivationType::kSELU, 1.67), {var(randomTensor({4, 4}, 1))})));
  for (UnaryOperation op : {UnaryOperation::kEXP, UnaryOperation::kABS, UnaryOperation::kNEG}) {
    ir::Attributes a;
    a.set("op", static_cast<int64_t>(op));
    EXPECT_LT(compareWithReference("unary_onednn_eltwise", OpType::kUnary, a, {var(randomBf16({7, 33}, 10))}), kTol)
        << static_cast<int>(op);
  }
  struct Bin {
    ElementWiseOperation op;
    V a, b;
  };
  using E = ElementWiseOperation;
  for (Bin c : {Bin{E::kSUM, {2, 3, 5, 7}, {2, 3, 5, 7}}, Bin{E::kPROD, {1, 16, 1, 1}, {2, 16, 6, 6}},
                Bin{E::kSUB, {16, 1}, {16, 9}}, Bin{E::kDIV, {3, 128, 64}, {64}}, Bin{E::kSUM, {1, 128, 768}, {768}},
                Bin{E::kPROD, {2, 16, 6, 6}, {2, 16, 1, 1}}}) {
    ir::Attributes a;
    a.set("op", static_cast<int64_t>(c.op));
    // Divisors away from zero, so that the quotients stay in range.
    HostTensor b = randomBf16(c.b, 12);
    if (c.op == E::kDIV)
      for (int64_t i = 0; i < b.count(); ++i) static_cast<uint16_t*>(b.mutableData())[i] |= 0x3f80;  // |b| >= 1
    EXPECT_LT(compareWithReference("elementwise_onednn_binary", OpType::kElementWise, a,
                                   {var(randomBf16(c.a, 11)), var(b)}, 2),
              kTol)
        << static_cast<int>(c.op) << " " << dimsToString(makeDims(c.a));
  }
  ir::Attributes sum;
  sum.set("op", static_cast<int64_t>(E::kSUM));
  for (int64_t f : {1, 16})
    EXPECT_LT(
        compareWithReference("elementwise_onednn_binary", OpType::kElementWise, sum,
                             {var(randomBf16({1, 32, 7, 7}, 13)), var(randomBf16({1, 32, 7, 7}, 14))}, 1, {f, f}, f),
        kTol)
        << "format " << f;
}

}  // namespace
}  // namespace kiln
