// Networks for two builder rules with their expected outputs computed here in fp64: a residual sum whose operands
// have independent dynamic batches (which must broadcast, not fuse into the GEMM), and BERT-style word embeddings
// (whose table fp16 builds convert once). Shared by the CPU (tests/e2e/builder_fixes_test.cc) and GPU
// (tests/gpu/gpu_e2e_test.cc) end-to-end tests.
#pragma once

#include <kiln/kiln.h>

#include <cstdint>
#include <vector>

#include "demo/networks.h"
#include "e2e/e2e_util.h"

namespace kiln_e2e {

/// y = x w + r with x [-1, kN] and r [-1, kN] two inputs (batches 1 to 4 each, independent): at run time x's
/// batch 1 against r's 4 broadcasts. Output "y".
struct IndependentResidual {
  static constexpr int32_t kN = 8;
  std::vector<float> w;

  IndependentResidual() : w(kiln_samples::Random(31).uniformVector(kN * kN, -0.5F, 0.5F)) {}

  DefineFn define() const {
    return [this](kiln::IBuilder& b, kiln::INetworkDefinition& n, kiln::IBuilderConfig& c) {
      kiln::ITensor* x = n.addInput("x", kiln::DataType::kFLOAT, kiln::Dims2{-1, kN});
      kiln::ITensor* r = n.addInput("r", kiln::DataType::kFLOAT, kiln::Dims2{-1, kN});
      kiln::ITensor* wt =
          n.addConstant(kiln::Dims2{kN, kN}, kiln::Weights{kiln::DataType::kFLOAT, w.data(), kN * kN})->getOutput(0);
      kiln::ITensor* m =
          n.addMatrixMultiply(*x, kiln::MatrixOperation::kNONE, *wt, kiln::MatrixOperation::kNONE)->getOutput(0);
      kiln::IElementWiseLayer* sum = n.addElementWise(*m, *r, kiln::ElementWiseOperation::kSUM);
      sum->setName("residual");
      sum->getOutput(0)->setName("y");
      n.markOutput(*sum->getOutput(0));
      kiln::IOptimizationProfile* p = b.createOptimizationProfile();
      for (char const* name : {"x", "r"}) {
        p->setDimensions(name, kiln::OptProfileSelector::kMIN, kiln::Dims2{1, kN});
        p->setDimensions(name, kiln::OptProfileSelector::kOPT, kiln::Dims2{4, kN});
        p->setDimensions(name, kiln::OptProfileSelector::kMAX, kiln::Dims2{4, kN});
      }
      return c.addOptimizationProfile(p) >= 0;
    };
  }

  /// y [max(xRows, rRows), kN] (one of them 1).
  std::vector<double> expected(std::vector<float> const& x, int64_t xRows, std::vector<float> const& r,
                               int64_t rRows) const {
    int64_t const rows = std::max(xRows, rRows);
    std::vector<double> y(static_cast<size_t>(rows * kN));
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < kN; ++j) {
        double s = r[static_cast<size_t>((rRows == 1 ? 0 : i) * kN + j)];
        for (int64_t k = 0; k < kN; ++k)
          s += double{x[static_cast<size_t>((xRows == 1 ? 0 : i) * kN + k)]} * w[static_cast<size_t>(k * kN + j)];
        y[static_cast<size_t>(i * kN + j)] = s;
      }
    return y;
  }
};

/// y = table[ids] + pos, ids [-1, kSeq] int32 (batches 1 to 4), table [kVocab, kHidden], pos [1, kSeq, kHidden]:
/// BERT's word embeddings plus the position rows. Output "y".
struct WordEmbeddings {
  static constexpr int32_t kVocab = 100, kSeq = 16, kHidden = 64;
  std::vector<float> table, pos;

  WordEmbeddings()
      : table(kiln_samples::Random(41).uniformVector(kVocab * kHidden, -1.F, 1.F)),
        pos(kiln_samples::Random(42).uniformVector(kSeq * kHidden, -1.F, 1.F)) {}

  DefineFn define() const {
    return [this](kiln::IBuilder& b, kiln::INetworkDefinition& n, kiln::IBuilderConfig& c) {
      kiln::ITensor* ids = n.addInput("ids", kiln::DataType::kINT32, kiln::Dims2{-1, kSeq});
      kiln::ITensor* t = n.addConstant(kiln::Dims2{kVocab, kHidden},
                                       kiln::Weights{kiln::DataType::kFLOAT, table.data(), kVocab * kHidden})
                             ->getOutput(0);
      kiln::IGatherLayer* g = n.addGather(*t, *ids, 0);
      g->setName("word_gather");
      kiln::ITensor* p = n.addConstant(kiln::Dims3{1, kSeq, kHidden},
                                       kiln::Weights{kiln::DataType::kFLOAT, pos.data(), kSeq * kHidden})
                             ->getOutput(0);
      kiln::IElementWiseLayer* sum = n.addElementWise(*g->getOutput(0), *p, kiln::ElementWiseOperation::kSUM);
      sum->getOutput(0)->setName("y");
      n.markOutput(*sum->getOutput(0));
      kiln::IOptimizationProfile* prof = b.createOptimizationProfile();
      prof->setDimensions("ids", kiln::OptProfileSelector::kMIN, kiln::Dims2{1, kSeq});
      prof->setDimensions("ids", kiln::OptProfileSelector::kOPT, kiln::Dims2{2, kSeq});
      prof->setDimensions("ids", kiln::OptProfileSelector::kMAX, kiln::Dims2{4, kSeq});
      return c.addOptimizationProfile(prof) >= 0;
    };
  }

  /// Ids of `batch` rows, every one in [0, kVocab).
  static std::vector<int32_t> ids(int64_t batch) {
    std::vector<int32_t> r(static_cast<size_t>(batch * kSeq));
    for (size_t i = 0; i < r.size(); ++i) r[i] = static_cast<int32_t>((i * 37 + 5) % kVocab);
    return r;
  }

  std::vector<double> expected(std::vector<int32_t> const& ids) const {
    std::vector<double> y(ids.size() * kHidden);
    for (size_t i = 0; i < ids.size(); ++i)
      for (size_t h = 0; h < kHidden; ++h)
        y[i * kHidden + h] =
            double{table[static_cast<size_t>(ids[i]) * kHidden + h]} + double{pos[(i % kSeq) * kHidden + h]};
    return y;
  }
};

}  // namespace kiln_e2e
