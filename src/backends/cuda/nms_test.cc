// gpu tests of the CUDA NMS tactic against the reference: IoU and score thresholds (present and absent), score
// ties, topk_box_limit below the candidate count, max_output_boxes_per_class from 0 to unlimited, corner (also
// flipped) and center formats, per-class boxes, batches and classes, float16/bf16 inputs, int32/int64 indices,
// empty inputs, many boxes.
#include <optional>

#include "backends/cuda/cuda_test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

HostTensor scalarOf(DataType t, double v) { return HostTensor::fromVector(t, makeDims({}), std::vector<double>{v}); }

struct NmsCase {
  int64_t b = 1, n = 20, c = 1;
  bool perClass = false;
  BoundingBoxFormat format = BoundingBoxFormat::kCORNER_PAIRS;
  DataType boxType = DataType::kFLOAT, scoreType = DataType::kFLOAT, indexType = DataType::kINT32;
  int64_t maxOut = 1000, limit = 5000;
  std::optional<double> iou = 0.5, score = std::nullopt;
  bool tiedScores = false;
  uint32_t seed = 1;
};

void expectNms(NmsCase const& k) {
  SCOPED_TRACE("b " + std::to_string(k.b) + " n " + std::to_string(k.n) + " c " + std::to_string(k.c) + " seed " +
               std::to_string(k.seed));
  std::vector<int64_t> boxShape =
      k.perClass ? std::vector<int64_t>{k.b, k.n, k.c, 4} : std::vector<int64_t>{k.b, k.n, 4};
  HostTensor boxes = randomTensor(k.boxType, boxShape, k.seed, 0, 10);
  if (k.format == BoundingBoxFormat::kCENTER_SIZES) {
    // Centers in [0, 10), sizes in [0.5, 4).
    std::vector<double> v = randomValues(static_cast<size_t>(boxes.count()), k.seed, 0, 10);
    std::vector<double> sz = randomValues(static_cast<size_t>(boxes.count()), k.seed + 7, 0.5, 4);
    for (size_t i = 0; i < v.size(); ++i)
      if (i % 4 >= 2) v[i] = sz[i];
    boxes = HostTensor::fromVector(k.boxType, makeDims(boxShape), v);
  }
  std::vector<double> s = randomValues(static_cast<size_t>(k.b * k.n * k.c), k.seed + 1, 0, 1);
  if (k.tiedScores)
    for (auto& x : s) x = std::floor(x * 5) / 5;
  HostTensor scores = HostTensor::fromVector(k.scoreType, makeDims({k.b, k.n, k.c}), s);
  std::vector<In> ins{var(boxes), var(scores), cst(scalarOf(DataType::kINT64, static_cast<double>(k.maxOut)))};
  if (k.iou || k.score) ins.push_back(k.iou ? var(scalarOf(DataType::kFLOAT, *k.iou)) : none());
  if (k.score) ins.push_back(var(scalarOf(DataType::kFLOAT, *k.score)));
  ir::Attributes a = attrs({{"box_format", static_cast<int64_t>(k.format)},
                            {"topk_box_limit", k.limit},
                            {"indices_type", static_cast<int64_t>(k.indexType)}});
  expectMatchesReference({ir::OpType::kNMS, a, ins, 2});
}

TEST(CudaNms, ThresholdsPresentAndAbsent) {
  KILN_REQUIRE_GPU();
  for (std::optional<double> iou :
       {std::optional<double>(0.5), std::optional<double>(0.0), std::optional<double>(0.9), std::optional<double>()})
    for (std::optional<double> score : {std::optional<double>(), std::optional<double>(0.4)}) {
      NmsCase k;
      k.iou = iou;
      k.score = score;
      k.n = 40;
      k.seed = 3;
      expectNms(k);
    }
}

TEST(CudaNms, MaxOutputAndTopkLimit) {
  KILN_REQUIRE_GPU();
  for (int64_t maxOut : {0, 1, 3, 1000})
    for (int64_t limit : {0, 1, 7, 5000}) {
      NmsCase k;
      k.n = 50;
      k.c = 2;
      k.maxOut = maxOut;
      k.limit = limit;
      k.score = 0.2;
      k.seed = static_cast<uint32_t>(10 + maxOut + limit);
      expectNms(k);
    }
}

TEST(CudaNms, TiedScoresKeepLowerIndexFirst) {
  KILN_REQUIRE_GPU();
  for (uint32_t seed : {21u, 22u, 23u}) {
    NmsCase k;
    k.n = 60;
    k.c = 3;
    k.tiedScores = true;
    k.iou = 0.3;
    k.limit = 9;
    k.seed = seed;
    expectNms(k);
  }
}

TEST(CudaNms, FormatsTypesAndLayouts) {
  KILN_REQUIRE_GPU();
  for (BoundingBoxFormat f : {BoundingBoxFormat::kCORNER_PAIRS, BoundingBoxFormat::kCENTER_SIZES})
    for (bool perClass : {false, true})
      for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16})
        for (DataType it : {DataType::kINT32, DataType::kINT64}) {
          NmsCase k;
          k.b = 2;
          k.n = 33;
          k.c = 3;
          k.perClass = perClass;
          k.format = f;
          k.boxType = t;
          k.scoreType = t == DataType::kFLOAT ? DataType::kHALF : DataType::kFLOAT;
          k.indexType = it;
          k.score = 0.1;
          k.seed = 40;
          expectNms(k);
        }
}

TEST(CudaNms, EmptyInputs) {
  KILN_REQUIRE_GPU();
  NmsCase k;
  k.n = 0;
  expectNms(k);
  k.n = 10;
  k.b = 0;
  expectNms(k);
  k.b = 1;
  k.c = 0;
  expectNms(k);
  k.c = 1;
  k.score = 2.0;  // no candidate above the threshold
  expectNms(k);
}

TEST(CudaNms, ManyBoxesAndProblems) {
  KILN_REQUIRE_GPU();
  NmsCase k;
  k.b = 2;
  k.n = 3000;
  k.c = 5;
  k.maxOut = 200;
  k.iou = 0.45;
  k.score = 0.05;
  k.seed = 77;
  expectNms(k);
  k.limit = 100;  // limit below the candidates
  expectNms(k);
  NmsCase m;
  m.b = 8;
  m.n = 257;
  m.c = 91;
  m.maxOut = 10;
  m.seed = 78;
  expectNms(m);
}

}  // namespace
}  // namespace kiln
