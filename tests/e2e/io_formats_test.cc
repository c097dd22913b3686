// End to end through the public API on the CPU target: network inputs and outputs restricted with
// ITensor::setAllowedFormats (kHWC8 fp16 / kCHW32 fp32 in, kCHW4 fp16 out) are bound in those layouts, the
// engine reports them (format, vectorized dim, components, description, strides), and its results, converted
// by this test's own layout code, equal the linear engine's bit for bit. Unsatisfiable sets are refused.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "e2e/io_formats_util.h"

namespace kiln_e2e {
namespace {

using namespace io_formats;  // NOLINT: the shared network and layout helpers
using kiln::DataType;
using kiln::Dims;
using kiln::TensorFormat;

std::unique_ptr<kiln::ICudaEngine> build(kiln::IRuntime& rt, CapturingLogger& logger, DefineFn const& define,
                                         BuildOptions options) {
  auto plan = buildPlan(logger, define, options);
  if (plan.empty()) return nullptr;
  return loadEngine(rt, plan);
}

struct Case {
  DataType in;
  TensorFormat inFormat;
  Layout inLayout;
};

TEST(IOFormats, VectorizedInputsAndOutputsMatchTheLinearEngine) {
  Layout const chw4{4, false};
  for (Case k : {Case{DataType::kHALF, TensorFormat::kHWC8, {8, true}},
                 Case{DataType::kFLOAT, TensorFormat::kCHW32, {32, false}}})
    for (BuildOptions options : {BuildOptions{0, true}, BuildOptions{3, false}}) {
      SCOPED_TRACE(std::string(k.in == DataType::kHALF ? "fp16 kHWC8" : "fp32 kCHW32") + " level " +
                   std::to_string(options.optimizationLevel));
      CapturingLogger logger;
      std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
      auto linear =
          build(*rt, logger, convNet(k.in, only(TensorFormat::kLINEAR), only(TensorFormat::kLINEAR)), options);
      auto vect = build(*rt, logger, convNet(k.in, only(k.inFormat), only(TensorFormat::kCHW4)), options);
      ASSERT_NE(linear, nullptr);
      ASSERT_NE(vect, nullptr);

      // What the engine reports.
      EXPECT_EQ(linear->getTensorFormat("x"), TensorFormat::kLINEAR);
      EXPECT_EQ(linear->getTensorVectorizedDim("x"), -1);
      EXPECT_EQ(vect->getTensorFormat("x"), k.inFormat);
      EXPECT_EQ(vect->getTensorFormat("x", 0), k.inFormat);
      EXPECT_EQ(vect->getTensorFormat("y"), TensorFormat::kCHW4);
      EXPECT_EQ(vect->getTensorVectorizedDim("x"), 1);
      EXPECT_EQ(vect->getTensorVectorizedDim("y", 0), 1);
      EXPECT_EQ(vect->getTensorVectorizedDim("y", 1), -1);  // no profile 1
      EXPECT_EQ(vect->getTensorComponentsPerElement("x"), k.inLayout.v);
      EXPECT_EQ(vect->getTensorComponentsPerElement("y"), 4);
      EXPECT_EQ(vect->getTensorBytesPerComponent("y", 0), 2);
      std::string desc = vect->getTensorFormatDesc("y");
      EXPECT_NE(desc.find("Four wide channel vectorized row major FP16 format"), std::string::npos) << desc;
      EXPECT_EQ(vect->getTensorFormatDesc("nope"), nullptr);

      // Strides in vectors of the layout.
      std::unique_ptr<kiln::IExecutionContext> ctx(vect->createExecutionContext());
      ASSERT_NE(ctx, nullptr);
      Dims xs = ctx->getTensorStrides("x");
      ASSERT_EQ(xs.nbDims, 4);
      if (k.inLayout.minor) {  // [N][H][W][1 vector of 8]
        EXPECT_EQ(xs.d[0], kH * kW);
        EXPECT_EQ(xs.d[1], 1);
        EXPECT_EQ(xs.d[2], kW);
        EXPECT_EQ(xs.d[3], 1);
      } else {  // [N][1 vector of 32][H][W]
        EXPECT_EQ(xs.d[0], kH * kW);
        EXPECT_EQ(xs.d[1], kH * kW);
        EXPECT_EQ(xs.d[2], kW);
        EXPECT_EQ(xs.d[3], 1);
      }
      Dims ys = ctx->getTensorStrides("y");  // [N][1 vector of 4][H][W] for K = 3
      ASSERT_EQ(ys.nbDims, 4);
      EXPECT_EQ(ys.d[0], kH * kW);
      EXPECT_EQ(ys.d[1], kH * kW);

      size_t e = k.in == DataType::kHALF ? 2 : 4;
      std::vector<uint8_t> in = inputBytes(k.in);
      std::vector<uint8_t> want = run(*linear, in, static_cast<size_t>(kN * kK * kH * kW) * 2);
      std::vector<uint8_t> packedIn = pack(in, e, k.inLayout, kC);
      EXPECT_EQ(packedIn.size(), paddedCount(k.inLayout) * e);
      size_t outBytes = static_cast<size_t>(kN * 4 * kH * kW) * 2;
      std::vector<uint8_t> got = run(*vect, packedIn, outBytes);
      ASSERT_EQ(got.size(), outBytes);
      EXPECT_EQ(unpack(got, 2, chw4, kK), want);
      // The padding channel (c = 3 of each vector of 4) is written as zeros.
      for (int64_t n = 0; n < kN; ++n)
        for (int64_t h = 0; h < kH; ++h)
          for (int64_t w = 0; w < kW; ++w) {
            size_t p = position(chw4, n, 3, h, w, 4) * 2;
            EXPECT_EQ(got[p], 0);
            EXPECT_EQ(got[p + 1], 0);
          }
    }
}

TEST(IOFormats, LinearStaysLinearWhenAllowed) {
  CapturingLogger logger;
  std::unique_ptr<kiln::IRuntime> rt(kiln::createInferRuntime(logger));
  auto e = build(*rt, logger,
                 convNet(DataType::kHALF, only(TensorFormat::kHWC8) | only(TensorFormat::kLINEAR),
                         only(TensorFormat::kCHW4) | only(TensorFormat::kLINEAR)),
                 BuildOptions{});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->getTensorFormat("x"), TensorFormat::kLINEAR);
  EXPECT_EQ(e->getTensorFormat("y"), TensorFormat::kLINEAR);
  EXPECT_EQ(e->getTensorComponentsPerElement("x"), 1);
  EXPECT_EQ(std::string(e->getTensorFormatDesc("x")), "Row major linear FP16 format (kLINEAR)");
}

// Builds and expects a failure whose message contains every string of `want`.
void expectRefused(DefineFn const& define, std::vector<std::string> const& want) {
  CapturingLogger logger(false);
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  std::unique_ptr<kiln::INetworkDefinition> network(builder->createNetworkV2(0));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  config->setDefaultDeviceType(kiln::DeviceType::kCPU);
  ASSERT_TRUE(define(*builder, *network, *config));
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*network, *config));
  EXPECT_EQ(plan, nullptr);
  std::string err = logger.lastError();
  for (auto const& w : want) EXPECT_NE(err.find(w), std::string::npos) << "'" << w << "' not in: " << err;
}

TEST(IOFormats, UnsatisfiableAllowedSetsAreRefused) {
  // kHWC8 needs FP16 or BF16.
  expectRefused(convNet(DataType::kFLOAT, only(TensorFormat::kHWC8), only(TensorFormat::kLINEAR)),
                {"'x'", "kHWC8", "FP16 or BF16"});
  // Only DLA formats.
  expectRefused(convNet(DataType::kHALF, only(TensorFormat::kDLA_LINEAR) | only(TensorFormat::kDLA_HWC4),
                        only(TensorFormat::kLINEAR)),
                {"'x'", "kDLA_LINEAR | kDLA_HWC4", "DLA"});
  // Nothing allowed.
  expectRefused(convNet(DataType::kHALF, only(TensorFormat::kLINEAR), 0), {"'y'", "none"});
  // kHWC needs FP32 or UINT8; the output is FP16.
  expectRefused(convNet(DataType::kHALF, only(TensorFormat::kLINEAR), only(TensorFormat::kHWC)),
                {"'y'", "kHWC", "FP32 or UINT8"});
  // Rank 2 cannot be vectorized.
  expectRefused(
      [](kiln::IBuilder&, kiln::INetworkDefinition& n, kiln::IBuilderConfig&) {
        kiln::ITensor* x = n.addInput("m", DataType::kFLOAT, Dims{2, {3, 4}});
        x->setAllowedFormats(only(TensorFormat::kCHW32));
        auto* a = n.addActivation(*x, kiln::ActivationType::kRELU);
        n.markOutput(*a->getOutput(0));
        return true;
      },
      {"'m'", "kCHW32", "at least 3 dimensions"});
}

}  // namespace
}  // namespace kiln_e2e
