// gpu tests of the vectorized GEMM epilogue (gemm_epilogue.cu) called directly: both bias maps, the residual (apart
// and in y's own memory), compiled-in and run-time activations, the scalar tail, both grid sizings, against host
// math; the compiled-in GELU erf's error bound; and its refusals, which need no device.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "backends/cuda/cuda_test_util.h"
#include "backends/cuda/gemm_epilogue_kernels.h"
#include "backends/reference/activation_math.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers
using cuda::GemmEpilogue;

int32_t code(DataType t) { return static_cast<int32_t>(t); }
int64_t widthOf(DataType t) { return 16 / static_cast<int64_t>(dataTypeSize(t)); }

struct Case {
  DataType type = DataType::kFLOAT;
  int64_t count = 0;
  int64_t biasPeriod = 0;  // 0: no bias
  int64_t biasRow = 1;
  enum Residual { kNone, kApart, kInPlace } residual = kNone;
  ActivationType activation = ActivationType::kRELU;
  bool activated = false;
  float alpha = 0.f, beta = 0.f;
  int vectorsPerThread = 4;
};

// Runs c on the device over y with 16 poisoned guard elements either side; returns y's buffer (guards included)
// after the pass, and checks the result against host math in double and that the guards are untouched.
std::optional<HostTensor> runCase(Case const& c) {
  SCOPED_TRACE(strCat(dataTypeName(c.type), " count ", c.count, " bias ", c.biasPeriod, "/", c.biasRow, " residual ",
                      static_cast<int>(c.residual), " act ", c.activated ? static_cast<int>(c.activation) : -1,
                      " vectors/thread ", c.vectorsPerThread));
  int64_t const pad = 16;
  size_t const es = dataTypeSize(c.type);
  HostTensor y0 = randomTensor(c.type, {c.count + 2 * pad}, 81, -3, 3);
  HostTensor r0 = randomTensor(c.type, {c.count + pad}, 82, -2, 2);
  HostTensor b0 = randomTensor(c.type, {c.biasPeriod + pad}, 83, -1, 1);
  void *dy = nullptr, *dr = nullptr, *db = nullptr;
  EXPECT_EQ(cudaMalloc(&dy, y0.bytes()), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dr, r0.bytes()), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&db, b0.bytes()), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dy, y0.data(), y0.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dr, r0.data(), r0.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(db, b0.data(), b0.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  void* y = static_cast<char*>(dy) + pad * es;
  GemmEpilogue e;
  if (c.biasPeriod > 0) {
    e.bias = db;
    e.biasPeriod = c.biasPeriod;
    e.biasRow = c.biasRow;
  }
  e.residual = c.residual == Case::kApart ? dr : c.residual == Case::kInPlace ? y : nullptr;
  e.activation = c.activated ? static_cast<int32_t>(c.activation) : -1;
  e.alpha = c.alpha;
  e.beta = c.beta;
  e.vectorsPerThread = c.vectorsPerThread;
  EXPECT_TRUE(cuda::gemmEpilogueFits(y, code(c.type), e));
  EXPECT_TRUE(cuda::launchGemmEpilogue(y, code(c.type), c.count, e, nullptr));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  HostTensor got = randomTensor(c.type, {c.count + 2 * pad}, 84);
  EXPECT_EQ(cudaMemcpy(got.mutableData(), dy, got.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(dy);
  cudaFree(dr);
  cudaFree(db);

  std::vector<double> w(static_cast<size_t>(c.count));
  for (int64_t i = 0; i < c.count; ++i) {
    double v = y0.doubleAt(pad + i);
    if (c.biasPeriod > 0) v += b0.doubleAt(i / c.biasRow % c.biasPeriod);
    if (c.residual == Case::kApart) v += r0.doubleAt(i);
    if (c.residual == Case::kInPlace) v += y0.doubleAt(pad + i);
    if (c.activated) v = backends::reference::applyActivation(c.activation, v, c.alpha, c.beta);
    w[static_cast<size_t>(i)] = v;
  }
  HostTensor const want = HostTensor::fromVector(c.type, makeDims({c.count}), w);
  HostTensor have = *HostTensor::allocate(c.type, makeDims({c.count}), "result");
  std::memcpy(have.mutableData(), static_cast<char const*>(got.data()) + pad * es, have.bytes());
  EXPECT_LE(normRelativeError(have, want), defaultTolerance(c.type));
  for (int64_t i = 0; i < y0.count(); ++i) {
    if (i >= pad && i < pad + c.count) continue;
    EXPECT_EQ(
        std::memcmp(static_cast<char const*>(got.data()) + i * es, static_cast<char const*>(y0.data()) + i * es, es), 0)
        << "element " << i - pad << " outside y was written";
  }
  return got;
}

// Every bias map, residual and activation kind, on whole vectors and with a tail (count % width elements), each at
// both grid sizings, whose results must agree bit for bit (each element's math is the same whichever thread runs
// it).
TEST(CudaGemmEpilogue, BiasMapsResidualActivationsAndTail) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
    int64_t const w = widthOf(t);
    for (int64_t extra : {int64_t{0}, w - 1}) {
      std::vector<Case> cases;
      Case alongN;  // a bias along the last dim (3 rows of 6 vectors), compiled-in GELU
      alongN.type = t;
      alongN.count = 3 * 6 * w + extra;
      alongN.biasPeriod = 6 * w;
      alongN.activation = ActivationType::kGELU_TANH;
      alongN.activated = true;
      cases.push_back(alongN);
      Case perRow = alongN;  // one bias value per row of 2 vectors, 5 channels repeating (a row-major conv output)
      perRow.count = 4 * 5 * 2 * w + extra;
      perRow.biasPeriod = 5;
      perRow.biasRow = 2 * w;
      perRow.activation = ActivationType::kCLIP;
      perRow.alpha = -0.5f;
      perRow.beta = 1.5f;
      cases.push_back(perRow);
      Case residual = perRow;  // + a residual, which takes the run-time activation
      residual.residual = Case::kApart;
      residual.activation = ActivationType::kSIGMOID;
      cases.push_back(residual);
      Case inPlace = alongN;  // the residual in y's own memory, no activation
      inPlace.residual = Case::kInPlace;
      inPlace.activated = false;
      cases.push_back(inPlace);
      Case runTime = alongN;  // an activation with no kernel of its own: the per-element switch
      runTime.activation = ActivationType::kSELU;
      runTime.alpha = 1.6732632f;
      runTime.beta = 1.0507010f;
      cases.push_back(runTime);
      Case bare;  // nothing but the activation
      bare.type = t;
      bare.count = 1000 * w + extra;
      bare.activation = ActivationType::kLEAKY_RELU;
      bare.activated = true;
      bare.alpha = 0.1f;
      cases.push_back(bare);
      Case tiny = bare;  // fewer elements than one vector: the tail alone
      tiny.count = w - 1;
      tiny.biasPeriod = 1;
      tiny.biasRow = w;
      tiny.residual = Case::kApart;
      cases.push_back(tiny);
      for (Case c : cases) {
        c.vectorsPerThread = 4;
        auto four = runCase(c);
        c.vectorsPerThread = 1;
        auto one = runCase(c);
        ASSERT_TRUE(four && one);
        EXPECT_EQ(std::memcmp(four->data(), one->data(), four->bytes()), 0) << "the grid sizings disagree";
      }
    }
  }
}

// The compiled-in GELU erf (x (1 + erf(x / sqrt 2)) / 2 through erff) element by element over [-10, 10] in fp32,
// against the formula in double: a relative error of a few ulps where the sum does not cancel, and below -3, where
// it does, an absolute error of erff's ulp at -1 scaled by |x| / 2 (no NaN, no sign flip); the tail included.
TEST(CudaGemmEpilogue, GeluErfErrorBound) {
  KILN_REQUIRE_GPU();
  int64_t const count = 20001;  // 0.001 apart, not whole vectors
  std::vector<float> x(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) x[static_cast<size_t>(i)] = -10.f + 0.001f * static_cast<float>(i);
  void* dy = nullptr;
  ASSERT_EQ(cudaMalloc(&dy, x.size() * 4), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dy, x.data(), x.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  GemmEpilogue e;
  e.activation = static_cast<int32_t>(ActivationType::kGELU_ERF);
  ASSERT_TRUE(cuda::launchGemmEpilogue(dy, code(DataType::kFLOAT), count, e, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> got(x.size());
  ASSERT_EQ(cudaMemcpy(got.data(), dy, got.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(dy);
  for (size_t i = 0; i < x.size(); ++i) {
    double const v = x[i];
    double const want = backends::reference::applyActivation(ActivationType::kGELU_ERF, v, 0, 0);
    double const err = std::fabs(static_cast<double>(got[i]) - want);
    ASSERT_LE(err, 1e-7 * std::fabs(v) + 5e-7 * std::fabs(want)) << "x " << v << " got " << got[i] << " want " << want;
    if (want != 0 && got[i] != 0) {
      EXPECT_EQ(got[i] < 0, want < 0) << "x " << v;
    }
  }
}

// What the launcher refuses (nothing is launched, and no device is needed to ask).
TEST(CudaGemmEpilogue, Refusals) {
  auto at = [](uintptr_t a) { return reinterpret_cast<void*>(a); };
  int32_t const f16 = code(DataType::kHALF), f32 = code(DataType::kFLOAT);
  GemmEpilogue ok;
  ok.bias = at(512);
  ok.biasPeriod = 64;
  EXPECT_TRUE(cuda::gemmEpilogueFits(at(256), f16, ok));
  EXPECT_FALSE(cuda::gemmEpilogueFits(at(258), f16, ok)) << "y misaligned";
  EXPECT_FALSE(cuda::gemmEpilogueFits(at(256), code(DataType::kINT32), ok)) << "int32";
  EXPECT_FALSE(cuda::gemmEpilogueFits(at(256), code(DataType::kFLOAT64), ok)) << "fp64";
  GemmEpilogue e = ok;
  e.bias = at(514);
  EXPECT_FALSE(cuda::gemmEpilogueFits(at(256), f16, e)) << "bias misaligned";
  e = ok;
  e.biasPeriod = 60;
  EXPECT_FALSE(cuda::gemmEpilogueFits(at(256), f16, e)) << "bias not whole vectors";
  EXPECT_TRUE(cuda::gemmEpilogueFits(at(256), f32, e)) << "60 fp32 elements are 15 vectors";
  e.biasPeriod = 0;
  EXPECT_FALSE(cuda::gemmEpilogueFits(at(256), f16, e)) << "empty bias";
  e = ok;
  e.bias = at(514);  // one value per row: any alignment
  e.biasRow = 16;
  EXPECT_TRUE(cuda::gemmEpilogueFits(at(256), f16, e));
  e.biasRow = 12;
  EXPECT_FALSE(cuda::gemmEpilogueFits(at(256), f16, e)) << "rows not whole vectors";
  e = ok;
  e.residual = at(1030);
  EXPECT_FALSE(cuda::gemmEpilogueFits(at(256), f16, e)) << "residual misaligned";
  e = ok;
  for (int v : {0, 2, 8}) {
    e.vectorsPerThread = v;
    EXPECT_FALSE(cuda::gemmEpilogueFits(at(256), f16, e)) << v << " vectors per thread";
  }
  EXPECT_FALSE(cuda::launchGemmEpilogue(at(258), f16, 64, ok, nullptr)) << "refused before any launch";
  EXPECT_FALSE(cuda::launchGemmEpilogue(at(256), f16, -1, ok, nullptr)) << "negative count";

  for (ActivationType a :
       {ActivationType::kRELU, ActivationType::kSIGMOID, ActivationType::kTANH, ActivationType::kLEAKY_RELU,
        ActivationType::kCLIP, ActivationType::kGELU_ERF, ActivationType::kGELU_TANH}) {
    EXPECT_TRUE(cuda::gemmEpilogueCompiled(static_cast<int32_t>(a), false)) << static_cast<int>(a);
    EXPECT_FALSE(cuda::gemmEpilogueCompiled(static_cast<int32_t>(a), true)) << static_cast<int>(a);
  }
  EXPECT_TRUE(cuda::gemmEpilogueCompiled(-1, false));
  EXPECT_FALSE(cuda::gemmEpilogueCompiled(static_cast<int32_t>(ActivationType::kSELU), false));
}

}  // namespace
}  // namespace kiln
