// gpu tests of the CUDA Pooling tactics (direct kernel, cudnnPoolingForward) against the reference: max, average
// with and without padding in the count, blend, every padding mode, asymmetric pads, 1-D/2-D/3-D, fp32/fp16/bf16.
#include <limits>

#include "backends/cuda/cuda_test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

struct Pool {
  std::vector<int64_t> x{}, window{}, strides{}, pb{}, pe{};
  PaddingMode mode = PaddingMode::kEXPLICIT_ROUND_DOWN;
};

std::vector<DataType> const kFloats{DataType::kFLOAT, DataType::kHALF, DataType::kBF16};

// Every pooling type (average with and without exclude_padding), every float type.
void runAll(Pool const& p, uint32_t seed = 1) {
  for (DataType t : kFloats) {
    for (int type = 0; type < 3; ++type) {
      for (int exclude = 0; exclude < 2; ++exclude) {
        if (type == 0 && exclude == 0) continue;
        SCOPED_TRACE(std::string("dtype ") + dataTypeName(t) + " type " + std::to_string(type) + " exclude " +
                     std::to_string(exclude));
        ir::Attributes a;
        a.setInt("type", type);
        a.setInts("window", p.window);
        if (!p.strides.empty()) a.setInts("strides", p.strides);
        if (!p.pb.empty()) a.setInts("pads_begin", p.pb);
        if (!p.pe.empty()) a.setInts("pads_end", p.pe);
        a.setInt("padding_mode", static_cast<int64_t>(p.mode));
        a.setFloat("blend_factor", 0.3);
        a.setInt("exclude_padding", exclude);
        expectMatchesReference({ir::OpType::kPooling, a, {var(randomTensor(t, p.x, seed, -2, 2))}}, -1,
                               type == 2 ? 1 : 2);
      }
    }
  }
}

TEST(CudaPooling, ResNetMaxPool3x3Stride2) {
  KILN_REQUIRE_GPU();
  runAll({{2, 16, 27, 27}, {3, 3}, {2, 2}, {1, 1}, {1, 1}});
}

TEST(CudaPooling, NoPadding) {
  KILN_REQUIRE_GPU();
  runAll({{1, 5, 8, 9}, {2, 2}, {2, 2}});
  runAll({{2, 3, 7, 7}, {7, 7}}, 2);  // global pooling
}

TEST(CudaPooling, AsymmetricPads) {
  KILN_REQUIRE_GPU();
  runAll({{1, 4, 9, 10}, {3, 2}, {2, 1}, {0, 1}, {2, 0}});
  runAll({{2, 3, 6, 6}, {2, 2}, {2, 2}, {1, 1}, {1, 1}}, 3);  // pad == window - 1 at both ends
}

TEST(CudaPooling, PaddingModes) {
  KILN_REQUIRE_GPU();
  for (PaddingMode m : {PaddingMode::kEXPLICIT_ROUND_UP, PaddingMode::kSAME_UPPER, PaddingMode::kSAME_LOWER}) {
    SCOPED_TRACE("padding mode " + std::to_string(static_cast<int>(m)));
    runAll({{1, 3, 10, 11}, {3, 4}, {2, 3}, {1, 0}, {0, 1}, m});
  }
}

TEST(CudaPooling, OneDAndThreeD) {
  KILN_REQUIRE_GPU();
  runAll({{2, 3, 17}, {4}, {3}, {1}, {1}});
  runAll({{1, 2, 6, 7, 8}, {2, 3, 3}, {2, 2, 2}, {0, 1, 1}, {0, 1, 1}}, 4);
  runAll({{1, 2, 5, 6, 7}, {3, 2, 3}, {1, 2, 2}, {1, 0, 2}, {0, 1, 1}, PaddingMode::kEXPLICIT_ROUND_UP}, 5);
}

TEST(CudaPooling, ManyBlocks) {
  KILN_REQUIRE_GPU();
  runAll({{4, 33, 41, 37}, {3, 3}, {1, 1}, {1, 1}, {1, 1}});
}

TEST(CudaPooling, EmptyBatch) {
  KILN_REQUIRE_GPU();
  runAll({{0, 3, 5, 5}, {2, 2}, {2, 2}});
}

// Channels-last (node format kHWC): cuDNN's pooling only, max and average, on NHWC memory.
TEST(CudaPooling, ChannelsLast) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats)
    for (int type = 0; type < 2; ++type) {
      SCOPED_TRACE(std::string("dtype ") + dataTypeName(t) + " type " + std::to_string(type));
      ir::Attributes a;
      a.setInt("type", type);
      a.setInts("window", {3, 3});
      a.setInts("strides", {2, 2});
      a.setInts("pads_begin", {1, 1});
      a.setInts("pads_end", {1, 1});
      a.setInt("exclude_padding", 1);
      expectMatchesReference({ir::OpType::kPooling, a, {var(randomTensor(t, {2, 24, 15, 17}, 21, -2, 2))}, 1, true}, -1,
                             1);
      a.setInts("window", {5, 6});
      a.setInts("strides", {1, 1});
      a.setInts("pads_begin", {0, 0});
      a.setInts("pads_end", {0, 0});
      expectMatchesReference({ir::OpType::kPooling, a, {var(randomTensor(t, {1, 8, 5, 6}, 22, -2, 2))}, 1, true}, -1,
                             1);
    }
}

// Channels-last geometries cuDNN does not take (asymmetric pads, pads as large as the window would allow, the
// blend), channels not a multiple of the vector, and ResNet's 3x3/2 max pooling: the channels-last direct kernel.
TEST(CudaPooling, ChannelsLastDirectKernelGeometries) {
  KILN_REQUIRE_GPU();
  struct Case {
    int type;
    std::vector<int64_t> window, strides, padsBegin, padsEnd, shape;
    bool exclude;
  };
  std::vector<Case> cases = {
      {0, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {2, 64, 16, 16}, true},
      {0, {3, 3}, {2, 2}, {0, 1}, {2, 1}, {2, 24, 9, 10}, true},
      {1, {2, 3}, {1, 2}, {1, 0}, {0, 2}, {1, 13, 7, 9}, false},
      {1, {3, 3}, {3, 3}, {1, 1}, {1, 1}, {3, 40, 8, 8}, true},
      {2, {2, 2}, {2, 2}, {0, 0}, {1, 1}, {2, 16, 5, 5}, true},
  };
  for (DataType t : kFloats)
    for (auto const& c : cases) {
      SCOPED_TRACE(std::string("dtype ") + dataTypeName(t) + " type " + std::to_string(c.type) + " C " +
                   std::to_string(c.shape[1]));
      ir::Attributes a;
      a.setInt("type", c.type);
      a.setInts("window", c.window);
      a.setInts("strides", c.strides);
      a.setInts("pads_begin", c.padsBegin);
      a.setInts("pads_end", c.padsEnd);
      a.setInt("exclude_padding", c.exclude ? 1 : 0);
      if (c.type == 2) a.setFloat("blend_factor", 0.25);
      expectMatchesReference({ir::OpType::kPooling, a, {var(randomTensor(t, c.shape, 23, -2, 2))}, 1, true}, -1, 1);
    }
}

// The channels-last direct pooling's max (fp16/bf16 in packed pairs: channels a multiple of 8): NaN anywhere in a
// window wins it, -inf stays, padding never wins (pads of window - 1: corner windows hold one input element), a
// stride larger than the window. Our kernel only: cuDNN's pooling does not carry every NaN through even with
// CUDNN_PROPAGATE_NAN (docs/architecture.md).
TEST(CudaPooling, ChannelsLastMaxPairsNanInfAndPadding) {
  KILN_REQUIRE_GPU();
  std::vector<int64_t> const shape{2, 16, 7, 9};
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v = randomValues(static_cast<size_t>(n), 31, -3, 3);
  for (size_t i = 5; i < v.size(); i += 37) v[i] = std::numeric_limits<double>::quiet_NaN();
  for (size_t i = 11; i < v.size(); i += 53) v[i] = -INFINITY;
  for (DataType t : kFloats) {
    SCOPED_TRACE(std::string("dtype ") + dataTypeName(t));
    HostTensor x = HostTensor::fromVector(t, makeDims(shape), v);
    ir::Attributes a;
    a.setInt("type", 0);
    a.setInts("window", {2, 3});
    a.setInts("strides", {3, 2});
    a.setInts("pads_begin", {1, 2});
    a.setInts("pads_end", {1, 2});
    a.setInt("exclude_padding", 1);
    expectMatchesReference({ir::OpType::kPooling, a, {var(x)}, 1, true, "pooling_cuda_hwc"}, 0, 1);
    a.setInts("window", {3, 3});
    a.setInts("strides", {2, 2});
    a.setInts("pads_begin", {1, 1});
    a.setInts("pads_end", {1, 1});
    expectMatchesReference({ir::OpType::kPooling, a, {var(x)}, 1, true, "pooling_cuda_hwc"}, 0, 1);
  }
}

}  // namespace
}  // namespace kiln
