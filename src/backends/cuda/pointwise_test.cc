// gpu tests of the pointwise CUDA tactics (pointwise.cc) against the reference backend: every op x dtype they
// claim, broadcasting, odd and multi-block sizes, rank 0 and empty tensors, and the special values (NaN, inf,
// ties, saturation, integer overflow and division by zero) whose handling must match the reference exactly.
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cuda/cuda_test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers
using Shape = std::vector<int64_t>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<DataType> const kFloats{DataType::kFLOAT, DataType::kHALF, DataType::kBF16};
std::vector<DataType> const kAllTypes{DataType::kFLOAT, DataType::kHALF,  DataType::kBF16,
                                      DataType::kFP8,   DataType::kINT8,  DataType::kUINT8,
                                      DataType::kINT32, DataType::kINT64, DataType::kBOOL};

ir::AttrValue iv(int64_t v) { return ir::AttrValue(v); }
// Activation parameters come from float setters (IActivationLayer::setAlpha); the kernels hold them as float.
ir::AttrValue asFloat(double v) { return ir::AttrValue(static_cast<double>(static_cast<float>(v))); }
template <typename E>
ir::AttrValue ev(E e) {
  return ir::AttrValue(static_cast<int64_t>(e));
}

HostTensor values(DataType t, Shape const& shape, std::vector<double> const& v) {
  return HostTensor::fromVector(t, makeDims(shape), v);
}

// Random values floored to integers, for any type (exercises equality and exact integer semantics).
HostTensor intValued(DataType t, Shape const& shape, uint32_t seed, double lo, double hi) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  auto v = randomValues(static_cast<size_t>(n), seed, lo, hi);
  for (auto& x : v) x = t == DataType::kBOOL ? (x > (lo + hi) / 2 ? 1 : 0) : std::floor(x);
  return values(t, shape, v);
}

// A value range fitting each type (uint8 has no negatives).
HostTensor typed(DataType t, Shape const& shape, uint32_t seed, double lo = -20, double hi = 20) {
  if (t == DataType::kUINT8) return intValued(t, shape, seed, 0, 2 * hi);
  if (!isFloatType(t)) return intValued(t, shape, seed, lo, hi);
  return randomTensor(t, shape, seed, lo, hi);
}

// ---------------------------------------------------------------- Cast

TEST(CudaCast, EveryPairOfTypesMatchesTheReferenceExactly) {
  KILN_REQUIRE_GPU();
  for (DataType from : kAllTypes) {
    for (DataType to : kAllTypes) {
      SCOPED_TRACE(std::string(dataTypeName(from)) + " -> " + dataTypeName(to));
      HostTensor x =
          from == DataType::kFP8 ? randomTensor(from, {3, 5, 7}, 11, -400, 400) : typed(from, {3, 5, 7}, 11, -300, 300);
      expectMatchesReference({ir::OpType::kCast, attrs({{"to", ev(to)}}), {var(x)}}, 0);
    }
  }
}

TEST(CudaCast, SpecialFloatValuesTruncateSaturateAndRound) {
  KILN_REQUIRE_GPU();
  std::vector<double> v{0.0,  -0.0, 0.5,   -0.5, 1.5,   2.5,          -2.5,          127.9,  -128.9,  255.5, 256.0,
                        -1.0, 1e10, -1e10, kInf, -kInf, kNaN,         65504,         65520,  1e-8,    -1e-8, 448,
                        460,  470,  1e-3,  3e38, -3e38, 2147483647.0, -2147483649.0, 9.3e18, -9.3e18, 0.1,   300.7};
  for (DataType from : kFloats) {
    for (DataType to : kAllTypes) {
      SCOPED_TRACE(std::string(dataTypeName(from)) + " -> " + dataTypeName(to));
      expectMatchesReference(
          {ir::OpType::kCast, attrs({{"to", ev(to)}}), {var(values(from, {static_cast<int64_t>(v.size())}, v))}}, 0);
    }
  }
}

TEST(CudaCast, IntegerExtremesWrapOrRound) {
  KILN_REQUIRE_GPU();
  std::vector<double> v{0,
                        1,
                        -1,
                        127,
                        -128,
                        255,
                        256,
                        -129,
                        32767,
                        65535,
                        65536,
                        2147483647,
                        -2147483648.0,
                        4294967296.0,
                        9007199254740993.0,
                        -9007199254740993.0,
                        1e18,
                        -1e18};
  for (DataType to : kAllTypes) {
    SCOPED_TRACE(std::string("int64 -> ") + dataTypeName(to));
    expectMatchesReference({ir::OpType::kCast,
                            attrs({{"to", ev(to)}}),
                            {var(values(DataType::kINT64, {static_cast<int64_t>(v.size())}, v))}},
                           0);
  }
}

TEST(CudaCast, LargeRank0AndEmpty) {
  KILN_REQUIRE_GPU();
  expectMatchesReference({ir::OpType::kCast,
                          attrs({{"to", ev(DataType::kHALF)}}),
                          {var(randomTensor(DataType::kFLOAT, {(1 << 20) + 3}, 5, -100, 100))}},
                         0);
  expectMatchesReference(
      {ir::OpType::kCast, attrs({{"to", ev(DataType::kINT32)}}), {var(randomTensor(DataType::kFLOAT, {}, 5, -9, 9))}},
      0);
  expectMatchesReference(
      {ir::OpType::kCast, attrs({{"to", ev(DataType::kINT8)}}), {var(randomTensor(DataType::kFLOAT, {2, 0, 3}, 5))}},
      0);
  expectMatchesReference(
      {ir::OpType::kCast, attrs({{"to", ev(DataType::kFLOAT)}}), {var(randomTensor(DataType::kFLOAT, {4, 5}, 5))}}, 0);
}

// ---------------------------------------------------------------- ElementWise

using EW = ElementWiseOperation;

std::vector<EW> const kArithmetic{EW::kSUM, EW::kPROD, EW::kMAX, EW::kMIN,
                                  EW::kSUB, EW::kDIV,  EW::kPOW, EW::kFLOOR_DIV};
std::vector<DataType> const kArithTypes{DataType::kFLOAT, DataType::kHALF,  DataType::kBF16, DataType::kINT8,
                                        DataType::kUINT8, DataType::kINT32, DataType::kINT64};
std::vector<DataType> const kBitwiseTypes{DataType::kINT8, DataType::kUINT8, DataType::kINT32, DataType::kINT64};

// Shape pairs: equal (the contiguous path), numpy broadcasts of several kinds, rank 0, ranks 6 and 8.
std::vector<std::pair<Shape, Shape>> const kShapePairs{
    {{4, 33}, {4, 33}},
    {{2, 1, 5, 1}, {3, 1, 7}},
    {{6, 7}, {7}},
    {{6, 7}, {6, 1}},
    {{}, {5}},
    {{3, 1, 2, 1, 3, 1}, {1, 4, 1, 2, 1, 5}},
    {{2, 1, 2, 1, 2, 1, 2, 3}, {1, 2, 1, 2, 1, 2, 1, 3}},
    {{1}, {1}},
};

void checkElementWise(EW op, DataType t, Shape const& sa, Shape const& sb, uint32_t seed) {
  SCOPED_TRACE("op " + std::to_string(static_cast<int>(op)) + " " + dataTypeName(t) + " " + dimsToString(makeDims(sa)) +
               " x " + dimsToString(makeDims(sb)));
  HostTensor a, b;
  bool comparison = op == EW::kEQUAL || op == EW::kGREATER || op == EW::kLESS;
  if (t == DataType::kBOOL) {
    a = intValued(t, sa, seed, 0, 1);
    b = intValued(t, sb, seed + 1, 0, 1);
  } else if (comparison) {  // integer-valued, so that equal pairs occur
    a = t == DataType::kUINT8 ? intValued(t, sa, seed, 0, 4) : intValued(t, sa, seed, -3, 3);
    b = t == DataType::kUINT8 ? intValued(t, sb, seed + 1, 0, 4) : intValued(t, sb, seed + 1, -3, 3);
  } else if (op == EW::kPOW && isFloatType(t)) {
    a = randomTensor(t, sa, seed, 0.1, 3);
    b = randomTensor(t, sb, seed + 1, -2, 3);
  } else if (op == EW::kPOW) {
    a = typed(t, sa, seed, -6, 6);
    b = typed(t, sb, seed + 1, -3, 9);
  } else {
    a = typed(t, sa, seed, -20, 20);
    b = typed(t, sb, seed + 1, -20, 20);
  }
  expectMatchesReference({ir::OpType::kElementWise, attrs({{"op", ev(op)}}), {var(a), var(b)}},
                         isFloatType(t) ? -1 : 0);
}

TEST(CudaElementWise, ArithmeticEveryTypeAndBroadcast) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 1;
  for (EW op : kArithmetic)
    for (DataType t : kArithTypes)
      for (auto const& [sa, sb] : kShapePairs) checkElementWise(op, t, sa, sb, seed++);
}

TEST(CudaElementWise, ComparisonsGiveBool) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 100;
  for (EW op : {EW::kEQUAL, EW::kGREATER, EW::kLESS})
    for (DataType t : kArithTypes)
      for (auto const& [sa, sb] : kShapePairs) checkElementWise(op, t, sa, sb, seed++);
  for (auto const& [sa, sb] : kShapePairs) checkElementWise(EW::kEQUAL, DataType::kBOOL, sa, sb, seed++);
}

TEST(CudaElementWise, LogicalOnBool) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 200;
  for (EW op : {EW::kAND, EW::kOR, EW::kXOR})
    for (auto const& [sa, sb] : kShapePairs) checkElementWise(op, DataType::kBOOL, sa, sb, seed++);
}

TEST(CudaElementWise, BitwiseOnIntegers) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 300;
  for (EW op : {EW::kBITWISE_AND, EW::kBITWISE_OR, EW::kBITWISE_XOR})
    for (DataType t : kBitwiseTypes)
      for (auto const& [sa, sb] : kShapePairs) {
        SCOPED_TRACE(dataTypeName(t));
        HostTensor a = t == DataType::kUINT8 ? intValued(t, sa, seed, 0, 256) : intValued(t, sa, seed, -120, 120);
        HostTensor b =
            t == DataType::kUINT8 ? intValued(t, sb, seed + 1, 0, 256) : intValued(t, sb, seed + 1, -120, 120);
        ++seed;
        expectMatchesReference({ir::OpType::kElementWise, attrs({{"op", ev(op)}}), {var(a), var(b)}}, 0);
      }
}

TEST(CudaElementWise, IntegerEdgeCasesAsTheReference) {
  KILN_REQUIRE_GPU();
  // Division by zero gives 0, INT_MIN / -1 wraps, floor division rounds down, negative powers truncate, sums
  // wrap in the storage type.
  std::vector<double> av{7, -7, 7, -7, 0, 5, -128, -128, 127, 100, 2, -1, 1, 0, 3, -3, 100, -100};
  std::vector<double> bv{2, 2, -2, -2, 0, 0, -1, 1, 1, 100, -1, -3, -5, -2, 0, 5, 3, 7};
  Shape s{static_cast<int64_t>(av.size())};
  for (DataType t : {DataType::kINT8, DataType::kINT32, DataType::kINT64})
    for (EW op : kArithmetic) {
      SCOPED_TRACE(std::string(dataTypeName(t)) + " op " + std::to_string(static_cast<int>(op)));
      expectMatchesReference(
          {ir::OpType::kElementWise, attrs({{"op", ev(op)}}), {var(values(t, s, av)), var(values(t, s, bv))}}, 0);
    }
  std::vector<double> big{9.2e18, -9.2e18, 4611686018427387904.0, -1, 3037000500, 0};
  std::vector<double> big2{9.2e18, 1e18, 2, -1, 3037000500, -1};
  Shape s2{static_cast<int64_t>(big.size())};
  for (EW op : kArithmetic)
    expectMatchesReference({ir::OpType::kElementWise,
                            attrs({{"op", ev(op)}}),
                            {var(values(DataType::kINT64, s2, big)), var(values(DataType::kINT64, s2, big2))}},
                           0);
}

TEST(CudaElementWise, FloatNaNAndInfinities) {
  KILN_REQUIRE_GPU();
  std::vector<double> av{kNaN, 1, kInf, -kInf, 0, 1, kNaN, 2, -0.0, 5};
  std::vector<double> bv{1, kNaN, kInf, kInf, 0, 0, kNaN, -kInf, 0, -0.0};
  Shape s{static_cast<int64_t>(av.size())};
  for (DataType t : kFloats)
    for (EW op : {EW::kSUM, EW::kPROD, EW::kMAX, EW::kMIN, EW::kSUB, EW::kDIV, EW::kPOW, EW::kFLOOR_DIV, EW::kEQUAL,
                  EW::kGREATER, EW::kLESS}) {
      SCOPED_TRACE(std::string(dataTypeName(t)) + " op " + std::to_string(static_cast<int>(op)));
      expectMatchesReference(
          {ir::OpType::kElementWise, attrs({{"op", ev(op)}}), {var(values(t, s, av)), var(values(t, s, bv))}}, 0);
    }
}

TEST(CudaElementWise, LargeOddAndEmpty) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kINT32}) {
    expectMatchesReference({ir::OpType::kElementWise,
                            attrs({{"op", ev(EW::kSUM)}}),
                            {var(typed(t, {1000003}, 1)), var(typed(t, {1000003}, 2))}},
                           isFloatType(t) ? -1 : 0);
    expectMatchesReference({ir::OpType::kElementWise,
                            attrs({{"op", ev(EW::kPROD)}}),
                            {var(typed(t, {257, 1, 1031}, 3)), var(typed(t, {1, 9, 1031}, 4))}},
                           isFloatType(t) ? -1 : 0);
    expectMatchesReference(
        {ir::OpType::kElementWise, attrs({{"op", ev(EW::kSUB)}}), {var(typed(t, {0, 3}, 5)), var(typed(t, {1, 3}, 6))}},
        isFloatType(t) ? -1 : 0);
    expectMatchesReference(
        {ir::OpType::kElementWise, attrs({{"op", ev(EW::kLESS)}}), {var(typed(t, {4, 0}, 5)), var(typed(t, {1}, 6))}},
        0);
  }
  // Constant operands (weights) work the same.
  expectMatchesReference({ir::OpType::kElementWise,
                          attrs({{"op", ev(EW::kSUM)}}),
                          {var(typed(DataType::kFLOAT, {2, 3, 4}, 7)), cst(typed(DataType::kFLOAT, {3, 1}, 8))}});
}

// ---------------------------------------------------------------- Unary

using UO = UnaryOperation;

void checkUnary(UO op, HostTensor x, double tol = -1) {
  SCOPED_TRACE("unary op " + std::to_string(static_cast<int>(op)) + " " + dataTypeName(x.dtype()) + " " +
               dimsToString(x.shape()));
  expectMatchesReference({ir::OpType::kUnary, attrs({{"op", ev(op)}}), {var(std::move(x))}}, tol);
}

TEST(CudaUnary, FloatMathEveryType) {
  KILN_REQUIRE_GPU();
  struct Case {
    UO op;
    double lo, hi;
  };
  std::vector<Case> const cases{
      {UO::kEXP, -5, 5},         {UO::kLOG, 0.01, 50}, {UO::kSQRT, 0, 50},  {UO::kRECIP, -3, 3},
      {UO::kABS, -5, 5},         {UO::kNEG, -5, 5},    {UO::kSIN, -6, 6},   {UO::kCOS, -6, 6},
      {UO::kTAN, -1.5, 1.5},     {UO::kSINH, -4, 4},   {UO::kCOSH, -4, 4},  {UO::kASIN, -0.99, 0.99},
      {UO::kACOS, -0.99, 0.99},  {UO::kATAN, -8, 8},   {UO::kASINH, -8, 8}, {UO::kACOSH, 1, 8},
      {UO::kATANH, -0.95, 0.95}, {UO::kCEIL, -9, 9},   {UO::kFLOOR, -9, 9}, {UO::kERF, -3, 3},
      {UO::kSIGN, -2, 2},        {UO::kROUND, -9, 9}};
  uint32_t seed = 1;
  for (Case const& c : cases)
    for (DataType t : kFloats)
      for (Shape const& s : {Shape{3, 5, 7}, Shape{70001}, Shape{}})
        checkUnary(c.op, randomTensor(t, s, seed++, c.lo, c.hi));
}

TEST(CudaUnary, SpecialValues) {
  KILN_REQUIRE_GPU();
  std::vector<double> v{kNaN, kInf, -kInf, 0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 1, -1, 1e30, -1e30};
  Shape s{static_cast<int64_t>(v.size())};
  for (DataType t : kFloats)
    for (UO op : {UO::kISINF, UO::kISNAN, UO::kROUND, UO::kSIGN, UO::kABS, UO::kNEG, UO::kCEIL, UO::kFLOOR, UO::kEXP,
                  UO::kSQRT, UO::kLOG, UO::kRECIP})
      checkUnary(op, values(t, s, v));
}

TEST(CudaUnary, IntegerAndBool) {
  KILN_REQUIRE_GPU();
  std::vector<double> v{0, 1, -1, 5, -7, 127, -128, 100, -100, 64};
  Shape s{static_cast<int64_t>(v.size())};
  for (DataType t : {DataType::kINT8, DataType::kINT32, DataType::kINT64})
    for (UO op : {UO::kABS, UO::kNEG, UO::kSIGN, UO::kBITWISE_NOT}) {
      checkUnary(op, values(t, s, v), 0);
      checkUnary(op, intValued(t, {3, 41}, 9, -100, 100), 0);
    }
  checkUnary(UO::kABS, values(DataType::kINT32, {2}, {-2147483648.0, 2147483647.0}), 0);
  checkUnary(UO::kNEG, values(DataType::kINT64, {2}, {-9223372036854775808.0, 5}), 0);
  checkUnary(UO::kBITWISE_NOT, intValued(DataType::kUINT8, {3, 41}, 9, 0, 256), 0);
  checkUnary(UO::kNOT, intValued(DataType::kBOOL, {3, 41}, 9, 0, 1), 0);
  checkUnary(UO::kNOT, intValued(DataType::kBOOL, {0, 2}, 9, 0, 1), 0);
  checkUnary(UO::kEXP, randomTensor(DataType::kFLOAT, {5, 0}, 9));
}

// ---------------------------------------------------------------- Activation

TEST(CudaActivation, EveryTypeWithAlphaBeta) {
  KILN_REQUIRE_GPU();
  struct Case {
    ActivationType type;
    double alpha, beta;
  };
  std::vector<Case> const cases{{ActivationType::kRELU, 0, 0},
                                {ActivationType::kSIGMOID, 0, 0},
                                {ActivationType::kTANH, 0, 0},
                                {ActivationType::kLEAKY_RELU, 0.1, 0},
                                {ActivationType::kELU, 0.7, 0},
                                {ActivationType::kSELU, 1.6732632, 1.0507010},
                                {ActivationType::kSOFTSIGN, 0, 0},
                                {ActivationType::kSOFTPLUS, 1.3, 0.7},
                                {ActivationType::kSOFTPLUS, 1, 30},
                                {ActivationType::kCLIP, -0.5, 0.8},
                                {ActivationType::kHARD_SIGMOID, 0.2, 0.5},
                                {ActivationType::kSCALED_TANH, 1.7, 0.66},
                                {ActivationType::kTHRESHOLDED_RELU, 0.3, 0},
                                {ActivationType::kGELU_ERF, 0, 0},
                                {ActivationType::kGELU_TANH, 0, 0}};
  uint32_t seed = 1;
  for (Case const& c : cases)
    for (DataType t : kFloats)
      for (Shape const& s : {Shape{2, 3, 37}, Shape{65537}, Shape{}}) {
        SCOPED_TRACE("activation " + std::to_string(static_cast<int>(c.type)) + " " + dataTypeName(t));
        expectMatchesReference({ir::OpType::kActivation,
                                attrs({{"type", ev(c.type)}, {"alpha", asFloat(c.alpha)}, {"beta", asFloat(c.beta)}}),
                                {var(randomTensor(t, s, seed++, -6, 6))}});
      }
}

TEST(CudaActivation, NaNInfAndEmpty) {
  KILN_REQUIRE_GPU();
  std::vector<double> v{kNaN, kInf, -kInf, 0, 1, -1, 100, -100};
  for (int type = 0; type < EnumMax<ActivationType>(); ++type)
    for (DataType t : kFloats) {
      SCOPED_TRACE("activation " + std::to_string(type) + " " + dataTypeName(t));
      expectMatchesReference({ir::OpType::kActivation,
                              attrs({{"type", iv(type)}, {"alpha", 0.5}, {"beta", 0.75}}),
                              {var(values(t, {8}, v))}});
    }
  expectMatchesReference({ir::OpType::kActivation,
                          attrs({{"type", ev(ActivationType::kRELU)}}),
                          {var(randomTensor(DataType::kFLOAT, {0, 7}, 1))}});
}

// ---------------------------------------------------------------- Select

TEST(CudaSelect, EveryTypeAndBroadcast) {
  KILN_REQUIRE_GPU();
  struct Shapes {
    Shape c, a, b;
  };
  std::vector<Shapes> const shapes{{{4, 33}, {4, 33}, {4, 33}},
                                   {{2, 1, 4}, {3, 1}, {1}},
                                   {{5}, {2, 3, 5}, {3, 1}},
                                   {{}, {}, {}},
                                   {{1, 2, 1, 2, 1, 2}, {2, 1, 2, 1, 2, 1}, {2, 2, 2, 2, 2, 2}},
                                   {{3, 0}, {1}, {3, 1}},
                                   {{1000003}, {1000003}, {1}}};
  uint32_t seed = 1;
  for (DataType t : kAllTypes)
    for (Shapes const& s : shapes) {
      SCOPED_TRACE(std::string(dataTypeName(t)) + " " + dimsToString(makeDims(s.c)));
      expectMatchesReference({ir::OpType::kSelect,
                              {},
                              {var(intValued(DataType::kBOOL, s.c, seed, 0, 1)), var(typed(t, s.a, seed + 1)),
                               var(typed(t, s.b, seed + 2))}},
                             0);
      seed += 3;
    }
}

// ---------------------------------------------------------------- ParametricReLU

TEST(CudaParametricReLU, SlopeBroadcasts) {
  KILN_REQUIRE_GPU();
  std::vector<std::pair<Shape, Shape>> const shapes{{{2, 3, 4, 5}, {3, 1, 1}},
                                                    {{2, 3, 4, 5}, {5}},
                                                    {{2, 3, 4, 5}, {1}},
                                                    {{2, 3, 4, 5}, {2, 3, 4, 5}},
                                                    {{70001}, {70001}},
                                                    {{}, {}},
                                                    {{0, 3}, {3}}};
  uint32_t seed = 1;
  for (DataType t : kFloats)
    for (auto const& [xs, ss] : shapes) {
      SCOPED_TRACE(std::string(dataTypeName(t)) + " " + dimsToString(makeDims(xs)) + " " + dimsToString(makeDims(ss)));
      expectMatchesReference({ir::OpType::kParametricReLU,
                              {},
                              {var(randomTensor(t, xs, seed)), cst(randomTensor(t, ss, seed + 1, 0, 0.5))}});
      seed += 2;
    }
  HostTensor x = values(DataType::kFLOAT, {4}, {kNaN, -kInf, kInf, -0.0});
  expectMatchesReference({ir::OpType::kParametricReLU, {}, {var(x), var(values(DataType::kFLOAT, {1}, {0.25}))}});
}

// ---------------------------------------------------------------- Scale

TEST(CudaScale, EveryModeTypeAndCoefficientSubset) {
  KILN_REQUIRE_GPU();
  Shape xs{2, 3, 4, 5};
  uint32_t seed = 1;
  for (DataType t : kFloats)
    for (ScaleMode mode : {ScaleMode::kUNIFORM, ScaleMode::kCHANNEL, ScaleMode::kELEMENTWISE})
      for (int64_t axis : {int64_t{-100}, int64_t{1}, int64_t{2}, int64_t{-1}, int64_t{0}})
        for (int subset = 1; subset < 8; ++subset)
          for (DataType ct : {DataType::kFLOAT, t}) {
            if (mode == ScaleMode::kUNIFORM && axis != -100) continue;
            int64_t count = 1;
            if (mode != ScaleMode::kUNIFORM) {
              int64_t a = axis == -100 ? 1 : (axis < 0 ? axis + 4 : axis);
              count = xs[static_cast<size_t>(a)];
              if (mode == ScaleMode::kELEMENTWISE)
                for (size_t d = static_cast<size_t>(a) + 1; d < xs.size(); ++d) count *= xs[d];
            }
            ir::Attributes at = attrs({{"mode", ev(mode)}});
            if (axis != -100) at.set("channel_axis", axis);
            auto coef = [&](int bit, double lo, double hi) {
              return (subset & bit) ? cst(randomTensor(ct, {count}, seed + bit, lo, hi)) : none();
            };
            SCOPED_TRACE(std::string(dataTypeName(t)) + " mode " + std::to_string(static_cast<int>(mode)) + " axis " +
                         std::to_string(axis) + " subset " + std::to_string(subset) + " coef " + dataTypeName(ct));
            // Positive bases keep the power real.
            expectMatchesReference(
                {ir::OpType::kScale,
                 at,
                 {var(randomTensor(t, xs, seed, 0.5, 2)), coef(1, 0, 0.5), coef(2, 0.5, 1.5), coef(4, 0.5, 2)}});
            ++seed;
          }
}

TEST(CudaScale, RanksLargeAndEmpty) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    expectMatchesReference({ir::OpType::kScale,
                            attrs({{"mode", ev(ScaleMode::kCHANNEL)}}),
                            {var(randomTensor(t, {7}, 1)), cst(randomTensor(DataType::kFLOAT, {7}, 2)),
                             cst(randomTensor(DataType::kFLOAT, {7}, 3)), none()}});
    expectMatchesReference({ir::OpType::kScale,
                            attrs({{"mode", ev(ScaleMode::kCHANNEL)}}),
                            {var(randomTensor(t, {3, 17, 4099}, 1)), cst(randomTensor(DataType::kFLOAT, {17}, 2)),
                             cst(randomTensor(DataType::kFLOAT, {17}, 3)), none()}});
    expectMatchesReference(
        {ir::OpType::kScale,
         attrs({{"mode", ev(ScaleMode::kUNIFORM)}}),
         {var(randomTensor(t, {0, 3, 2}, 1)), cst(randomTensor(DataType::kFLOAT, {1}, 2)), none(), none()}});
  }
}

// ---------------------------------------------------------------- Quantize / Dequantize

TEST(CudaQuantize, PerTensorAndPerAxisEveryType) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 1;
  for (DataType xt : kFloats)
    for (DataType to : {DataType::kINT8, DataType::kUINT8, DataType::kFP8})
      for (DataType st : kFloats)
        for (bool zp : {false, true})
          for (int layout = 0; layout < 3; ++layout) {
            SCOPED_TRACE(std::string(dataTypeName(xt)) + " -> " + dataTypeName(to) + " scale " + dataTypeName(st) +
                         " zp " + std::to_string(zp) + " layout " + std::to_string(layout));
            Shape xs{2, 3, 33};
            Shape ss = layout == 0 ? Shape{} : (layout == 1 ? Shape{3} : Shape{33});
            int64_t axis = layout == 2 ? -1 : 1;
            // Quarter steps over a scale of 0.5 make ties (x / s = k + 0.5) common; the range saturates.
            HostTensor x = intValued(xt, xs, seed, -1200, 1200);
            std::vector<double> xv;
            for (int64_t i = 0; i < x.count(); ++i) xv.push_back(x.doubleAt(i) / 4);
            x = values(xt, xs, xv);
            int64_t sn = ss.empty() ? 1 : ss[0];
            std::vector<double> sv(static_cast<size_t>(sn), 0.5);
            for (size_t i = 1; i < sv.size(); i += 2) sv[i] = 0.75;
            In zpIn = none();
            if (zp) {
              HostTensor z = to == DataType::kFP8 ? randomTensor(to, ss, seed + 2, -2, 2)
                                                  : (to == DataType::kUINT8 ? intValued(to, ss, seed + 2, 0, 255)
                                                                            : intValued(to, ss, seed + 2, -20, 20));
              zpIn = cst(z);
            }
            expectMatchesReference({ir::OpType::kQuantize,
                                    attrs({{"axis", iv(axis)}, {"to", ev(to)}}),
                                    {var(x), cst(values(st, ss, sv)), zpIn}},
                                   0);
            ++seed;
          }
}

TEST(CudaQuantize, NaNInfAndEmpty) {
  KILN_REQUIRE_GPU();
  std::vector<double> v{kNaN, kInf, -kInf, 0.25, -0.25, 0.75, 1e9, -1e9};
  for (DataType to : {DataType::kINT8, DataType::kUINT8, DataType::kFP8}) {
    expectMatchesReference({ir::OpType::kQuantize,
                            attrs({{"axis", iv(0)}, {"to", ev(to)}}),
                            {var(values(DataType::kFLOAT, {8}, v)), cst(values(DataType::kFLOAT, {}, {0.5})), none()}},
                           0);
    expectMatchesReference(
        {ir::OpType::kQuantize,
         attrs({{"axis", iv(0)}, {"to", ev(to)}}),
         {var(randomTensor(DataType::kFLOAT, {0, 4}, 1)), cst(values(DataType::kFLOAT, {}, {0.5})), none()}},
        0);
  }
}

TEST(CudaDequantize, EveryTypeAndLayout) {
  KILN_REQUIRE_GPU();
  uint32_t seed = 1;
  for (DataType xt : {DataType::kINT8, DataType::kUINT8, DataType::kFP8, DataType::kINT32})
    for (DataType to : kFloats)
      for (DataType st : kFloats)
        for (bool zp : {false, true})
          for (int layout = 0; layout < 3; ++layout) {
            SCOPED_TRACE(std::string(dataTypeName(xt)) + " -> " + dataTypeName(to) + " scale " + dataTypeName(st) +
                         " zp " + std::to_string(zp) + " layout " + std::to_string(layout));
            Shape xs{2, 3, 33};
            Shape ss = layout == 0 ? Shape{} : (layout == 1 ? Shape{3} : Shape{33});
            int64_t axis = layout == 2 ? -1 : 1;
            HostTensor x = xt == DataType::kFP8 ? randomTensor(xt, xs, seed, -400, 400)
                                                : (xt == DataType::kUINT8 ? intValued(xt, xs, seed, 0, 256)
                                                                          : intValued(xt, xs, seed, -128, 128));
            if (xt == DataType::kINT32) x = intValued(xt, xs, seed, -3e9 / 2, 3e9 / 2);
            In zpIn = none();
            if (zp)
              zpIn = cst(xt == DataType::kFP8 ? randomTensor(xt, ss, seed + 2, -2, 2)
                                              : (xt == DataType::kUINT8 ? intValued(xt, ss, seed + 2, 0, 255)
                                                                        : intValued(xt, ss, seed + 2, -20, 20)));
            expectMatchesReference({ir::OpType::kDequantize,
                                    attrs({{"axis", iv(axis)}, {"to", ev(to)}}),
                                    {var(x), cst(randomTensor(st, ss, seed + 1, 0.01, 2)), zpIn}},
                                   0);
            ++seed;
          }
  expectMatchesReference(
      {ir::OpType::kDequantize,
       attrs({{"axis", iv(0)}, {"to", ev(DataType::kFLOAT)}}),
       {var(intValued(DataType::kINT8, {3, 0}, 1, -5, 5)), cst(values(DataType::kFLOAT, {}, {0.5})), none()}},
      0);
}

TEST(CudaQuantize, PerBlockBothDirections) {
  KILN_REQUIRE_GPU();
  struct Case {
    Shape x, block, scale;
  };
  // Whole blocks, partial last blocks (ceil), -1 (the whole extent), rank 1 to 4.
  std::vector<Case> const cases{{{4, 8}, {1, 4}, {4, 2}},
                                {{2, 4}, {-1, 3}, {1, 2}},
                                {{2, 6, 5}, {1, 4, -1}, {2, 2, 1}},
                                {{3, 5, 7, 2}, {2, 2, 3, 1}, {2, 3, 3, 2}},
                                {{37}, {8}, {5}}};
  uint32_t seed = 1;
  for (Case const& c : cases)
    for (DataType ft : kFloats)
      for (DataType qt : {DataType::kINT8, DataType::kUINT8, DataType::kFP8})
        for (bool zp : {false, true}) {
          SCOPED_TRACE(dimsToString(makeDims(c.x)) + " " + dataTypeName(ft) + " " + dataTypeName(qt) + " zp " +
                       std::to_string(zp));
          ir::Attributes qa = attrs({{"axis", iv(0)}, {"to", ev(qt)}, {"block_shape", c.block}});
          HostTensor scale = randomTensor(ft, c.scale, seed + 1, 0.05, 2);
          In zpIn = none();
          if (zp)
            zpIn = cst(qt == DataType::kFP8 ? randomTensor(qt, c.scale, seed + 2, -2, 2)
                                            : (qt == DataType::kUINT8 ? intValued(qt, c.scale, seed + 2, 0, 255)
                                                                      : intValued(qt, c.scale, seed + 2, -20, 20)));
          expectMatchesReference(
              {ir::OpType::kQuantize, qa, {var(randomTensor(ft, c.x, seed, -300, 300)), cst(scale), zpIn}}, 0);
          HostTensor q = qt == DataType::kFP8 ? randomTensor(qt, c.x, seed + 3, -400, 400)
                                              : (qt == DataType::kUINT8 ? intValued(qt, c.x, seed + 3, 0, 256)
                                                                        : intValued(qt, c.x, seed + 3, -128, 128));
          ir::Attributes da = attrs({{"axis", iv(0)}, {"to", ev(ft)}, {"block_shape", c.block}});
          expectMatchesReference({ir::OpType::kDequantize, da, {var(q), cst(scale), zpIn}}, 0);
          seed += 4;
        }
}

// Channels-last (node format kHWC): element-wise layers whose inputs have the output's shape (or one element)
// run on NHWC memory as on row-major memory; a per-channel broadcast is refused.
TEST(CudaPointwise, ChannelsLast) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kHALF, DataType::kBF16, DataType::kFLOAT}) {
    SCOPED_TRACE(dataTypeName(t));
    HostTensor a = randomTensor(t, {2, 8, 5, 3}, 31), b = randomTensor(t, {2, 8, 5, 3}, 32);
    expectMatchesReference({ir::OpType::kElementWise, attrs({{"op", int64_t{0}}}), {var(a), var(b)}, 1, true});
    expectMatchesReference({ir::OpType::kElementWise, attrs({{"op", int64_t{1}}}),
                            {var(a), cst(randomTensor(t, {1, 1, 1, 1}, 33))}, 1, true});
    expectMatchesReference({ir::OpType::kActivation, attrs({{"type", int64_t{0}}}), {var(a)}, 1, true});
    expectMatchesReference({ir::OpType::kUnary, attrs({{"op", int64_t{0}}}), {var(a)}, 1, true});
    expectMatchesReference({ir::OpType::kCast, attrs({{"to", int64_t{0}}}), {var(a)}, 1, true});
  }
  // A per-channel operand would meet the other in another order: no tactic takes it channels-last.
  ir::Graph g;
  ir::Value* x = *g.addInput("x", DataType::kHALF, makeDims({2, 8, 5, 3}));
  ir::Value* c = *g.addInput("c", DataType::kHALF, makeDims({1, 8, 1, 1}));
  ir::Node* n = g.addNode(ir::OpType::kElementWise, "add", {x, c}, 1);
  n->attrs.setInt("op", 0);
  n->attrs.setInt("format", static_cast<int64_t>(TensorFormat::kHWC));
  auto cands = backends::TacticRegistry::instance().candidates(
      *n, {{DataType::kHALF, x->shape}, {DataType::kHALF, c->shape}}, {{DataType::kHALF, x->shape}}, DeviceType::kGPU, ~0u);
  EXPECT_TRUE(cands.empty());
}

}  // namespace
}  // namespace kiln
