// gpu tests of the CUDA Deconvolution tactics (direct gather kernel and the cuDNN backward-data algorithms)
// against the reference: 1-D/2-D/3-D, strides, pads (symmetric and not), padding modes, dilations, groups, bias,
// fp32 / fp16 / bf16.
#include "backends/cuda/cuda_test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

struct Deconv {
  std::vector<int64_t> x{}, w{};  // x [n, c, in...], w [c, k/groups, kernel...]
  std::vector<int64_t> strides{}, dil{}, pb{}, pe{};
  int64_t groups = 1;
  PaddingMode mode = PaddingMode::kEXPLICIT_ROUND_DOWN;
  bool bias = false;
};

void run(Deconv const& d, DataType t, uint32_t seed = 1) {
  SCOPED_TRACE(std::string("dtype ") + dataTypeName(t));
  ir::Attributes a;
  a.setInt("num_output_maps", d.w[1] * d.groups);
  a.setInts("kernel_shape", std::vector<int64_t>(d.w.begin() + 2, d.w.end()));
  if (!d.strides.empty()) a.setInts("strides", d.strides);
  if (!d.dil.empty()) a.setInts("dilations", d.dil);
  if (!d.pb.empty()) a.setInts("pads_begin", d.pb);
  if (!d.pe.empty()) a.setInts("pads_end", d.pe);
  a.setInt("padding_mode", static_cast<int64_t>(d.mode));
  a.setInt("groups", d.groups);
  std::vector<In> ins{var(randomTensor(t, d.x, seed)), cst(randomTensor(t, d.w, seed + 1, -0.5, 0.5))};
  if (d.bias) ins.push_back(cst(randomTensor(t, {d.w[1] * d.groups}, seed + 2)));
  // The direct kernel and cuDNN's ALGO_0 / ALGO_1 at least.
  expectMatchesReference({ir::OpType::kDeconvolution, a, ins}, -1, 3);
}

std::vector<DataType> const kFloats{DataType::kFLOAT, DataType::kHALF, DataType::kBF16};

TEST(CudaDeconvolution, Stride2Upsampling) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    run({{2, 8, 7, 6}, {8, 4, 4, 4}, {2, 2}, {}, {1, 1}, {1, 1}, 1, PaddingMode::kEXPLICIT_ROUND_DOWN, true}, t);
    run({{1, 16, 5, 5}, {16, 8, 2, 2}, {2, 2}}, t, 3);  // kernel == stride
    run({{1, 3, 5, 4}, {3, 2, 1, 1}, {3, 2}}, t, 4);    // kernel < stride: gaps of zeros
  }
}

TEST(CudaDeconvolution, AsymmetricPadsAndModes) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    run({{1, 4, 6, 5}, {4, 3, 3, 3}, {2, 2}, {}, {0, 1}, {1, 2}, 1, PaddingMode::kEXPLICIT_ROUND_DOWN, true}, t);
    for (PaddingMode m : {PaddingMode::kSAME_UPPER, PaddingMode::kSAME_LOWER, PaddingMode::kEXPLICIT_ROUND_UP}) {
      SCOPED_TRACE("padding mode " + std::to_string(static_cast<int>(m)));
      run({{2, 3, 5, 6}, {3, 5, 4, 3}, {2, 3}, {}, {1, 0}, {0, 1}, 1, m, true}, t, 5);
    }
  }
}

TEST(CudaDeconvolution, GroupsAndDilations) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    run({{2, 6, 5, 5}, {6, 2, 3, 3}, {2, 2}, {}, {1, 1}, {1, 1}, 3, PaddingMode::kEXPLICIT_ROUND_DOWN, true}, t);
    run({{1, 8, 4, 4}, {8, 1, 3, 3}, {2, 2}, {}, {1, 1}, {1, 1}, 8}, t, 2);  // depthwise
    run({{1, 3, 6, 5}, {3, 4, 3, 2}, {1, 2}, {2, 3}, {1, 0}, {1, 0}}, t, 3);
  }
}

TEST(CudaDeconvolution, OneDAndThreeD) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    run({{2, 4, 9}, {4, 3, 5}, {3}, {}, {2}, {1}, 1, PaddingMode::kEXPLICIT_ROUND_DOWN, true}, t);
    run({{1, 3, 3, 4, 5},
         {3, 2, 2, 3, 3},
         {2, 1, 2},
         {},
         {0, 1, 1},
         {0, 1, 0},
         1,
         PaddingMode::kEXPLICIT_ROUND_DOWN,
         true},
        t, 6);
  }
}

TEST(CudaDeconvolution, ManyBlocks) {
  KILN_REQUIRE_GPU();
  run({{2, 32, 20, 18}, {32, 16, 4, 4}, {2, 2}, {}, {1, 1}, {1, 1}, 1, PaddingMode::kEXPLICIT_ROUND_DOWN, true},
      DataType::kFLOAT);
}

}  // namespace
}  // namespace kiln
