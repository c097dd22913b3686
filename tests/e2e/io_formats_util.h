// Shared by the I/O format tests (CPU e2e and gpu): a small convolution network whose input and output formats
// are restricted, and the tests' own layout code for [N, C, H, W] tensors with the channel dim vectorized.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "e2e/e2e_util.h"

namespace kiln_e2e::io_formats {

using kiln::DataType;
using kiln::Dims;
using kiln::TensorFormat;

constexpr int64_t kN = 2, kC = 5, kH = 6, kW = 6, kK = 3;

inline kiln::TensorFormats only(TensorFormat f) { return 1U << static_cast<int32_t>(f); }

inline std::vector<float> const& convWeights() {
  static std::vector<float> const w = [] {
    std::vector<float> v(kK * kC * 3 * 3);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.125F;
    return v;
  }();
  return w;
}

// x (type `in`) -> [cast to fp32] -> 3x3 convolution -> cast to fp16 -> y.
inline DefineFn convNet(DataType in, kiln::TensorFormats inFormats, kiln::TensorFormats outFormats) {
  return [=](kiln::IBuilder&, kiln::INetworkDefinition& n, kiln::IBuilderConfig&) {
    kiln::ITensor* x = n.addInput("x", in, Dims{4, {kN, kC, kH, kW}});
    if (!x) return false;
    x->setAllowedFormats(inFormats);
    kiln::ITensor* t = x;
    if (in != DataType::kFLOAT) t = n.addCast(*x, DataType::kFLOAT)->getOutput(0);
    kiln::Weights w{DataType::kFLOAT, convWeights().data(), static_cast<int64_t>(convWeights().size())};
    kiln::Weights b{DataType::kFLOAT, nullptr, 0};
    auto* conv = n.addConvolutionNd(*t, kK, Dims{2, {3, 3}}, w, b);
    if (!conv) return false;
    conv->setPaddingNd(Dims{2, {1, 1}});
    auto* cast = n.addCast(*conv->getOutput(0), DataType::kHALF);
    kiln::ITensor* y = cast->getOutput(0);
    y->setName("y");
    n.markOutput(*y);
    y->setAllowedFormats(outFormats);
    return true;
  };
}

// The test's own layout: vectorized dim 1 of [N, C, H, W], V per vector, vector-minor or -major; linear bytes
// into the padded layout (zero padding) or back.
struct Layout {
  int64_t v = 1;
  bool minor = false;
};
inline size_t paddedCount(Layout l) { return static_cast<size_t>(kN * ((kC + l.v - 1) / l.v * l.v) * kH * kW); }
inline size_t position(Layout l, int64_t n, int64_t c, int64_t h, int64_t w, int64_t channels) {
  int64_t cv = (channels + l.v - 1) / l.v;
  if (l.minor) return static_cast<size_t>(((n * kH + h) * kW + w) * cv * l.v + c);
  return static_cast<size_t>((((n * cv + c / l.v) * kH + h) * kW + w) * l.v + c % l.v);
}
inline std::vector<uint8_t> pack(std::vector<uint8_t> const& lin, size_t e, Layout l, int64_t channels) {
  int64_t cp = (channels + l.v - 1) / l.v * l.v;
  std::vector<uint8_t> out(static_cast<size_t>(kN * cp * kH * kW) * e, 0);
  for (int64_t n = 0; n < kN; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t h = 0; h < kH; ++h)
        for (int64_t w = 0; w < kW; ++w)
          std::memcpy(&out[position(l, n, c, h, w, channels) * e],
                      &lin[static_cast<size_t>(((n * channels + c) * kH + h) * kW + w) * e], e);
  return out;
}
inline std::vector<uint8_t> unpack(std::vector<uint8_t> const& packed, size_t e, Layout l, int64_t channels) {
  std::vector<uint8_t> out(static_cast<size_t>(kN * channels * kH * kW) * e);
  for (int64_t n = 0; n < kN; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t h = 0; h < kH; ++h)
        for (int64_t w = 0; w < kW; ++w)
          std::memcpy(&out[static_cast<size_t>(((n * channels + c) * kH + h) * kW + w) * e],
                      &packed[position(l, n, c, h, w, channels) * e], e);
  return out;
}

// Input bytes: fp16 values of magnitude in [0.25, 4) or fp32 values k/8.
inline std::vector<uint8_t> inputBytes(DataType t) {
  size_t count = static_cast<size_t>(kN * kC * kH * kW);
  std::vector<uint8_t> b;
  for (size_t i = 0; i < count; ++i) {
    if (t == DataType::kHALF) {
      uint16_t bits = static_cast<uint16_t>(((i % 3 == 0) << 15) | ((13 + i % 4) << 10) | ((i * 37) % 1024));
      b.push_back(static_cast<uint8_t>(bits & 0xff));
      b.push_back(static_cast<uint8_t>(bits >> 8));
    } else {
      float f = static_cast<float>(static_cast<int>(i % 17) - 8) / 8.0F;
      uint8_t const* p = reinterpret_cast<uint8_t const*>(&f);
      b.insert(b.end(), p, p + 4);
    }
  }
  return b;
}

// Runs the engine once with raw input bytes; the output buffer holds `outBytes`, poisoned first.
inline std::vector<uint8_t> run(kiln::ICudaEngine& engine, std::vector<uint8_t> const& in, size_t outBytes) {
  std::unique_ptr<kiln::IExecutionContext> ctx(engine.createExecutionContext());
  EXPECT_NE(ctx, nullptr);
  if (!ctx) return {};
  std::vector<uint8_t> x(in), y(outBytes, 0xCD);
  EXPECT_TRUE(ctx->setInputShape("x", Dims{4, {kN, kC, kH, kW}}));
  EXPECT_TRUE(ctx->setTensorAddress("x", x.data()));
  EXPECT_TRUE(ctx->setTensorAddress("y", y.data()));
  EXPECT_TRUE(ctx->enqueueV3(nullptr));
  return y;
}

}  // namespace kiln_e2e::io_formats
