// gpu tests of the CUDA Resize tactic against the reference: nearest with every coordinate transformation,
// selector and rounding mode (exact, every byte width), N-D linear, cubic (coefficient, exclude_outside), sizes
// from output_dims, the scales attribute, constant scales and sizes inputs, empty outputs.
#include "backends/cuda/cuda_test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers
using Ints = std::vector<int64_t>;

ir::Attributes resizeAttrs(InterpolationMode mode, ResizeCoordinateTransformation ct,
                           ResizeSelector sel = ResizeSelector::kFORMULA,
                           ResizeRoundMode rnd = ResizeRoundMode::kFLOOR) {
  return attrs({{"mode", static_cast<int64_t>(mode)},
                {"coordinate_transformation", static_cast<int64_t>(ct)},
                {"selector", static_cast<int64_t>(sel)},
                {"nearest_rounding", static_cast<int64_t>(rnd)}});
}

std::vector<ResizeCoordinateTransformation> const kTransforms = {ResizeCoordinateTransformation::kALIGN_CORNERS,
                                                                 ResizeCoordinateTransformation::kASYMMETRIC,
                                                                 ResizeCoordinateTransformation::kHALF_PIXEL};

TEST(CudaResize, NearestEveryModeExact) {
  KILN_REQUIRE_GPU();
  HostTensor x = randomTensor(DataType::kFLOAT, {2, 3, 5, 7}, 1, -5, 5);
  for (auto ct : kTransforms)
    for (auto sel : {ResizeSelector::kFORMULA, ResizeSelector::kUPPER})
      for (auto rnd :
           {ResizeRoundMode::kHALF_UP, ResizeRoundMode::kHALF_DOWN, ResizeRoundMode::kFLOOR, ResizeRoundMode::kCEIL})
        for (Ints od : {Ints{2, 3, 11, 4}, Ints{2, 3, 1, 1}, Ints{3, 1, 10, 14}, Ints{2, 3, 5, 7}}) {
          SCOPED_TRACE(::testing::Message() << "ct " << static_cast<int>(ct) << " sel " << static_cast<int>(sel)
                                            << " rnd " << static_cast<int>(rnd) << " out " << od[2] << "x" << od[3]);
          ir::Attributes a = resizeAttrs(InterpolationMode::kNEAREST, ct, sel, rnd);
          a.setInts("output_dims", od);
          expectMatchesReference({ir::OpType::kResize, a, {var(x)}}, 0);
        }
}

TEST(CudaResize, NearestScalesAndEveryByteWidth) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16, DataType::kINT8, DataType::kUINT8,
                     DataType::kINT32, DataType::kINT64, DataType::kBOOL}) {
    SCOPED_TRACE(dataTypeName(t));
    for (auto ct : kTransforms) {
      ir::Attributes a =
          resizeAttrs(InterpolationMode::kNEAREST, ct, ResizeSelector::kFORMULA, ResizeRoundMode::kHALF_UP);
      a.set("scales", ir::AttrValue{std::vector<double>{1, 2.5, 0.6}});
      expectMatchesReference({ir::OpType::kResize, a, {var(randomTensor(t, {2, 5, 7}, 3, -20, 20))}}, 0);
    }
  }
}

TEST(CudaResize, LinearNd) {
  KILN_REQUIRE_GPU();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
    HostTensor x = randomTensor(t, {4, 5, 6}, 2, -5, 5);
    for (auto ct : kTransforms)
      for (Ints od : {Ints{7, 3, 9}, Ints{4, 5, 13}, Ints{1, 10, 1}, Ints{4, 5, 6}}) {
        SCOPED_TRACE(::testing::Message() << dataTypeName(t) << " ct " << static_cast<int>(ct) << " out " << od[0]
                                          << "x" << od[1] << "x" << od[2]);
        ir::Attributes a = resizeAttrs(InterpolationMode::kLINEAR, ct);
        a.setInts("output_dims", od);
        expectMatchesReference({ir::OpType::kResize, a, {var(x)}});
      }
  }
  // Given scales (align corners maps the unrounded extent) and a large image.
  ir::Attributes a = resizeAttrs(InterpolationMode::kLINEAR, ResizeCoordinateTransformation::kALIGN_CORNERS);
  a.set("scales", ir::AttrValue{std::vector<double>{1, 1, 1.7, 2.3}});
  expectMatchesReference({ir::OpType::kResize, a, {var(randomTensor(DataType::kFLOAT, {2, 3, 9, 11}, 4))}});
  ir::Attributes b = resizeAttrs(InterpolationMode::kLINEAR, ResizeCoordinateTransformation::kHALF_PIXEL);
  b.setInts("output_dims", {1, 3, 450, 333});
  expectMatchesReference({ir::OpType::kResize, b, {var(randomTensor(DataType::kHALF, {1, 3, 224, 224}, 4))}});
}

TEST(CudaResize, Cubic) {
  KILN_REQUIRE_GPU();
  HostTensor x = randomTensor(DataType::kFLOAT, {2, 3, 6, 7}, 5, -5, 5);
  for (auto ct : kTransforms)
    for (double coeff : {-0.75, -0.5})
      for (int64_t exclude : {0, 1})
        for (Ints od : {Ints{2, 3, 13, 5}, Ints{2, 3, 3, 15}, Ints{2, 3, 1, 7}}) {
          SCOPED_TRACE(::testing::Message() << "ct " << static_cast<int>(ct) << " A " << coeff << " exclude " << exclude
                                            << " out " << od[2] << "x" << od[3]);
          ir::Attributes a = resizeAttrs(InterpolationMode::kCUBIC, ct);
          a.setFloat("cubic_coeff", coeff);
          a.setInt("exclude_outside", exclude);
          a.setInts("output_dims", od);
          expectMatchesReference({ir::OpType::kResize, a, {var(x)}});
        }
  // A given scale other than 1 on an outer axis whose extent stays (floor(3 * 1.1) = 3) still moves its samples.
  for (auto ct : kTransforms) {
    ir::Attributes s = resizeAttrs(InterpolationMode::kCUBIC, ct);
    s.set("scales", ir::AttrValue{std::vector<double>{1.1, 1, 1.7, 2.3}});
    expectMatchesReference({ir::OpType::kResize, s, {var(randomTensor(DataType::kFLOAT, {3, 2, 5, 6}, 7))}});
  }
  ir::Attributes h = resizeAttrs(InterpolationMode::kCUBIC, ResizeCoordinateTransformation::kHALF_PIXEL);
  h.setInts("output_dims", {9, 5});
  expectMatchesReference({ir::OpType::kResize, h, {var(randomTensor(DataType::kBF16, {4, 3}, 6))}});
}

TEST(CudaResize, InputSizesAndScalesAndEmpty) {
  KILN_REQUIRE_GPU();
  HostTensor x = randomTensor(DataType::kFLOAT, {2, 5, 7}, 7);
  HostTensor sizes = HostTensor::fromVector(DataType::kINT64, makeDims({3}), std::vector<int64_t>{2, 9, 3});
  HostTensor scales = HostTensor::fromVector(DataType::kFLOAT, makeDims({3}), std::vector<double>{1, 1.5, 0.75});
  for (auto mode : {InterpolationMode::kNEAREST, InterpolationMode::kLINEAR, InterpolationMode::kCUBIC})
    for (auto ct : kTransforms) {
      SCOPED_TRACE(::testing::Message() << "mode " << static_cast<int>(mode) << " ct " << static_cast<int>(ct));
      expectMatchesReference({ir::OpType::kResize, resizeAttrs(mode, ct), {var(x), cst(sizes)}});
      expectMatchesReference({ir::OpType::kResize, resizeAttrs(mode, ct), {var(x), cst(scales)}});
    }
  ir::Attributes a = resizeAttrs(InterpolationMode::kLINEAR, ResizeCoordinateTransformation::kASYMMETRIC);
  a.setInts("output_dims", {0, 4});  // an empty axis keeps scale 1 (resizing a non-empty one to 0 is an error)
  expectMatchesReference({ir::OpType::kResize, a, {var(randomTensor(DataType::kFLOAT, {0, 2}, 1))}});
}

}  // namespace
}  // namespace kiln
