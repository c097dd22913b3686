// Networks whose Concatenation, Slice and Gather layers the builder plans in place (batch 1, fixed shapes), with
// their expected outputs computed here in fp64: shared by the CPU (tests/e2e/in_place_test.cc) and GPU
// (tests/gpu/gpu_e2e_test.cc) end-to-end tests.
#pragma once

#include <kiln/kiln.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "demo/networks.h"
#include "e2e/e2e_util.h"

namespace kiln_e2e {

/// relu(concat(conv1x1(x; w1, b1), conv1x1(x; w2, b2)) along channels), x [1, kC, kH, kW]: output "y".
struct TwoConvConcat {
  static constexpr int64_t kC = 8, kH = 4, kW = 4, kOut = 8;
  std::vector<float> w1, b1, w2, b2;

  TwoConvConcat() {
    kiln_samples::Random rng(21);
    w1 = rng.uniformVector(kOut * kC, -0.5F, 0.5F);
    b1 = rng.uniformVector(kOut, -0.5F, 0.5F);
    w2 = rng.uniformVector(kOut * kC, -0.5F, 0.5F);
    b2 = rng.uniformVector(kOut, -0.5F, 0.5F);
  }

  kiln::Dims inputDims() const { return kiln::Dims{4, {1, kC, kH, kW}}; }

  DefineFn define() const {
    return [this](kiln::IBuilder&, kiln::INetworkDefinition& n, kiln::IBuilderConfig&) {
      kiln::ITensor* x = n.addInput("x", kiln::DataType::kFLOAT, inputDims());
      auto conv = [&](std::vector<float> const& w, std::vector<float> const& b) {
        return n.addConvolutionNd(*x, kOut, kiln::Dims{2, {1, 1}},
                                  kiln::Weights{kiln::DataType::kFLOAT, w.data(), static_cast<int64_t>(w.size())},
                                  kiln::Weights{kiln::DataType::kFLOAT, b.data(), static_cast<int64_t>(b.size())});
      };
      kiln::ITensor* parts[] = {conv(w1, b1)->getOutput(0), conv(w2, b2)->getOutput(0)};
      kiln::IConcatenationLayer* cat = n.addConcatenation(parts, 2);
      cat->setAxis(1);
      cat->setName("cat");
      kiln::ITensor* y = n.addActivation(*cat->getOutput(0), kiln::ActivationType::kRELU)->getOutput(0);
      y->setName("y");
      n.markOutput(*y);
      return true;
    };
  }

  std::vector<double> expected(std::vector<float> const& x) const {
    std::vector<double> y(static_cast<size_t>(2 * kOut * kH * kW));
    for (int64_t half = 0; half < 2; ++half)
      for (int64_t o = 0; o < kOut; ++o)
        for (int64_t p = 0; p < kH * kW; ++p) {
          std::vector<float> const& w = half ? w2 : w1;
          double s = half ? b2[static_cast<size_t>(o)] : b1[static_cast<size_t>(o)];
          for (int64_t c = 0; c < kC; ++c)
            s += static_cast<double>(w[static_cast<size_t>(o * kC + c)]) * x[static_cast<size_t>(c * kH * kW + p)];
          y[static_cast<size_t>((half * kOut + o) * kH * kW + p)] = std::max(0.0, s);
        }
    return y;
  }
};

/// A ViT head in miniature: patch tokens t = x·wp ([1, kN, kD] from x [1, kN, kP]); a class token that is a
/// constant (`computedClass` false) or the constant plus the mean of the tokens (a layer's output: then every
/// Concatenation input is in place); h = concat(class, t) along the sequence + pos; outputs "logits" =
/// h[:, 0:1]·wh (a Slice view), "tokens" = h[:, 1:]·wt (a Slice view at one token) and "picked" = h[:, 5]·wg (a
/// Gather view).
struct VitHead {
  static constexpr int64_t kN = 16, kP = 32, kD = 64, kClasses = 10, kT = 8, kG = 4, kPick = 5;
  bool computedClass = true;
  std::vector<float> wp, cls, pos, wh, wt, wg;
  int32_t pick = static_cast<int32_t>(kPick);

  explicit VitHead(bool computed) : computedClass(computed) {
    kiln_samples::Random rng(33);
    wp = rng.uniformVector(kP * kD, -0.3F, 0.3F);
    cls = rng.uniformVector(kD, -1.F, 1.F);
    pos = rng.uniformVector((kN + 1) * kD, -1.F, 1.F);
    wh = rng.uniformVector(kD * kClasses, -0.3F, 0.3F);
    wt = rng.uniformVector(kD * kT, -0.3F, 0.3F);
    wg = rng.uniformVector(kD * kG, -0.3F, 0.3F);
  }

  kiln::Dims inputDims() const { return kiln::Dims{3, {1, kN, kP}}; }

  DefineFn define(bool dynamicBatch = false) const {
    return [this, dynamicBatch](kiln::IBuilder& b, kiln::INetworkDefinition& n, kiln::IBuilderConfig& config) {
      kiln::Dims in = inputDims();
      if (dynamicBatch) in.d[0] = -1;
      kiln::ITensor* x = n.addInput("x", kiln::DataType::kFLOAT, in);
      auto constant = [&](std::vector<float> const& v, kiln::Dims d) {
        return n.addConstant(d, kiln::Weights{kiln::DataType::kFLOAT, v.data(), static_cast<int64_t>(v.size())})
            ->getOutput(0);
      };
      auto matmul = [&](kiln::ITensor& a, kiln::ITensor& w) {
        return n.addMatrixMultiply(a, kiln::MatrixOperation::kNONE, w, kiln::MatrixOperation::kNONE)->getOutput(0);
      };
      kiln::ITensor* t = matmul(*x, *constant(wp, kiln::Dims{3, {1, kP, kD}}));
      kiln::ITensor* c = constant(cls, kiln::Dims{3, {1, 1, kD}});
      if (computedClass) {
        kiln::ITensor* mean = n.addReduce(*t, kiln::ReduceOperation::kAVG, 1U << 1, true)->getOutput(0);
        c = n.addElementWise(*c, *mean, kiln::ElementWiseOperation::kSUM)->getOutput(0);
      }
      kiln::ITensor* parts[] = {c, t};
      kiln::IConcatenationLayer* cat = n.addConcatenation(parts, 2);
      cat->setAxis(1);
      cat->setName("cat");
      kiln::ITensor* h = n.addElementWise(*cat->getOutput(0), *constant(pos, kiln::Dims{3, {1, kN + 1, kD}}),
                                          kiln::ElementWiseOperation::kSUM)
                             ->getOutput(0);
      kiln::ISliceLayer* first =
          n.addSlice(*h, kiln::Dims{3, {0, 0, 0}}, kiln::Dims{3, {1, 1, kD}}, kiln::Dims{3, {1, 1, 1}});
      kiln::ISliceLayer* rest =
          n.addSlice(*h, kiln::Dims{3, {0, 1, 0}}, kiln::Dims{3, {1, kN, kD}}, kiln::Dims{3, {1, 1, 1}});
      kiln::ITensor* index =
          n.addConstant(kiln::Dims{0, {}}, kiln::Weights{kiln::DataType::kINT32, &pick, 1})->getOutput(0);
      kiln::IGatherLayer* g = n.addGather(*h, *index, 1);
      kiln::ITensor* logits = matmul(*first->getOutput(0), *constant(wh, kiln::Dims{3, {1, kD, kClasses}}));
      kiln::ITensor* tokens = matmul(*rest->getOutput(0), *constant(wt, kiln::Dims{3, {1, kD, kT}}));
      kiln::ITensor* picked = matmul(*g->getOutput(0), *constant(wg, kiln::Dims{2, {kD, kG}}));
      logits->setName("logits");
      tokens->setName("tokens");
      picked->setName("picked");
      n.markOutput(*logits);
      n.markOutput(*tokens);
      n.markOutput(*picked);
      if (dynamicBatch) {
        kiln::IOptimizationProfile* p = b.createOptimizationProfile();
        kiln::Dims lo = inputDims(), hi = inputDims();
        hi.d[0] = 2;
        p->setDimensions("x", kiln::OptProfileSelector::kMIN, lo);
        p->setDimensions("x", kiln::OptProfileSelector::kOPT, lo);
        p->setDimensions("x", kiln::OptProfileSelector::kMAX, hi);
        config.addOptimizationProfile(p);
      }
      return true;
    };
  }

  /// The outputs in the order logits, tokens, picked.
  std::vector<std::vector<double>> expected(std::vector<float> const& x) const {
    std::vector<double> h(static_cast<size_t>((kN + 1) * kD));
    std::vector<double> mean(static_cast<size_t>(kD), 0.0);
    for (int64_t i = 0; i < kN; ++i)
      for (int64_t d = 0; d < kD; ++d) {
        double s = 0;
        for (int64_t p = 0; p < kP; ++p)
          s += static_cast<double>(x[static_cast<size_t>(i * kP + p)]) * wp[static_cast<size_t>(p * kD + d)];
        h[static_cast<size_t>((i + 1) * kD + d)] = s;
        mean[static_cast<size_t>(d)] += s / kN;
      }
    for (int64_t d = 0; d < kD; ++d)
      h[static_cast<size_t>(d)] = cls[static_cast<size_t>(d)] + (computedClass ? mean[static_cast<size_t>(d)] : 0.0);
    for (size_t i = 0; i < h.size(); ++i) h[i] += pos[i];
    auto rows = [&](int64_t from, int64_t count, std::vector<float> const& w, int64_t cols) {
      std::vector<double> r(static_cast<size_t>(count * cols), 0.0);
      for (int64_t i = 0; i < count; ++i)
        for (int64_t j = 0; j < cols; ++j)
          for (int64_t d = 0; d < kD; ++d)
            r[static_cast<size_t>(i * cols + j)] +=
                h[static_cast<size_t>((from + i) * kD + d)] * w[static_cast<size_t>(d * cols + j)];
      return r;
    };
    return {rows(0, 1, wh, kClasses), rows(1, kN, wt, kT), rows(kPick, 1, wg, kG)};
  }
};

/// Keeps every message (the builder's verbose lines included).
class RecordingLogger : public kiln::ILogger {
 public:
  void log(Severity severity, kiln::AsciiChar const* msg) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    messages_.emplace_back(msg ? msg : "");
    if (severity <= Severity::kERROR) lastError_ = messages_.back();
  }
  std::vector<std::string> messages() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return messages_;
  }
  std::string lastError() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lastError_;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    messages_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> messages_;
  std::string lastError_;
};

/// Verbose builder lines that report in-place layers (the memory plan's "memory: ..." lines).
inline int inPlaceLines(std::vector<std::string> const& messages, std::string const& what) {
  int n = 0;
  for (auto const& m : messages) n += m.rfind("memory: ", 0) == 0 && m.find(what) != std::string::npos ? 1 : 0;
  return n;
}

}  // namespace kiln_e2e
