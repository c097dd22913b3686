// gpu tests of the patch convolution tactics (convolution_cublaslt_patch_algo*, convolution_patch.cc; the patch
// rearrangement, conv_patch.cu) against the reference: ViT's 16x16/16 embedding at batch 1 and 2, ConvNeXt/Swin
// stems and downsamplers, non-square kernels, odd channel counts, inputs whose edges no window covers, 1-D and 3-D,
// every epilogue, dtype and layout; the rearrangement against host math with every word size; what the tactics
// refuse and the words they choose (checked without a device); their times beside cuDNN's on ViT-B/16 at batch 64.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <utility>

#include "backends/cuda/conv_kernels.h"
#include "backends/cuda/cuda_test_util.h"
#include "backends/cuda/tactic_timing_test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace cudatest;  // NOLINT: test helpers

constexpr char const* kPatch0 = "convolution_cublaslt_patch_algo0";
std::vector<DataType> const kFloats{DataType::kFLOAT, DataType::kHALF, DataType::kBF16};

struct Patch {
  std::vector<int64_t> x{};       // [n, c, spatial...]
  int64_t k = 0;                  // output channels
  std::vector<int64_t> kernel{};  // = strides
  bool bias = true, residual = false;
  int64_t act = -1;
  double alpha = 0, beta = 0;
  bool tf32 = false;
  bool constWeights = true;
};

ir::Attributes attrsOf(Patch const& p) {
  ir::Attributes a;
  a.setInt("num_output_maps", p.k);
  a.setInts("kernel_shape", p.kernel);
  a.setInts("strides", p.kernel);
  a.setInt("activation", p.act);
  a.setFloat("act_alpha", p.alpha);
  a.setFloat("act_beta", p.beta);
  if (p.tf32) a.setInt("allow_tf32", 1);
  return a;
}

// The node's random inputs (x, w, bias, residual; the last two empty where absent) and y's shape.
struct PatchTensors {
  HostTensor x, w, bias, residual;
  std::vector<int64_t> y;
};

PatchTensors tensorsOf(Patch const& p, DataType t, uint32_t seed) {
  PatchTensors r;
  r.y = {p.x[0], p.k};
  std::vector<int64_t> w{p.k, p.x[1]};
  for (size_t i = 0; i < p.kernel.size(); ++i) {
    r.y.push_back(p.x[2 + i] / p.kernel[i]);
    w.push_back(p.kernel[i]);
  }
  r.x = randomTensor(t, p.x, seed);
  r.w = randomTensor(t, w, seed + 1, -0.5, 0.5);
  if (p.bias) r.bias = randomTensor(t, {p.k}, seed + 2);
  if (p.residual) r.residual = randomTensor(t, r.y, seed + 3);
  return r;
}

// Runs every CUDA tactic supporting the node against the reference and expects the patch tactic among them.
void run(Patch const& p, DataType t, bool hwc, uint32_t seed = 1) {
  SCOPED_TRACE(strCat(dataTypeName(t), hwc ? " channels-last" : " row-major", " x ", dimsToString(makeDims(p.x)), " k ",
                      p.k, " kernel ", dimsToString(makeDims(p.kernel)), " act ", p.act));
  PatchTensors ts = tensorsOf(p, t, seed);
  std::vector<In> ins{var(ts.x), p.constWeights ? cst(ts.w) : var(ts.w)};
  if (p.bias)
    ins.push_back(cst(ts.bias));
  else if (p.residual)
    ins.push_back(none());
  if (p.residual) ins.push_back(var(ts.residual));
  auto results =
      expectMatchesReference({ir::OpType::kConvolution, attrsOf(p), ins, 1, hwc}, p.tf32 ? kTf32Tolerance : -1);
  bool has = std::any_of(results.begin(), results.end(), [](TacticResult const& r) { return r.tactic == kPatch0; });
  EXPECT_TRUE(has) << kPatch0 << " did not run";
}

// A threshold in [1, 1.5] as far as possible from every pre-activation (sum + bias + residual) of the 2-D node
// run(p, t, ..., seed) makes, and that distance. Where the activation runs after cuBLASLt its input is y rounded to
// fp16/bf16 (0.0039 near 1.25 in bf16), so a sum within a rounding step of ThresholdedReLU's alpha could land on
// the other side of it.
std::pair<double, double> thresholdAwayFromSums(Patch const& p, DataType t, uint32_t seed) {
  PatchTensors ts = tensorsOf(p, t, seed);
  int64_t const c = p.x[1], h = p.x[2], w = p.x[3], kh = p.kernel[0], kw = p.kernel[1];
  int64_t const oh = ts.y[2], ow = ts.y[3];
  std::vector<double> sums;
  for (int64_t n = 0; n < p.x[0]; ++n)
    for (int64_t k = 0; k < p.k; ++k)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double acc = p.bias ? ts.bias.doubleAt(k) : 0.0;
          if (p.residual) acc += ts.residual.doubleAt(((n * p.k + k) * oh + oy) * ow + ox);
          for (int64_t ci = 0; ci < c; ++ci)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j)
                acc += ts.x.doubleAt(((n * c + ci) * h + oy * kh + i) * w + ox * kw + j) *
                       ts.w.doubleAt(((k * c + ci) * kh + i) * kw + j);
          sums.push_back(acc);
        }
  std::pair<double, double> best{1.25, -1.0};
  for (int step = 0; step <= 100; ++step) {
    double alpha = 1.0 + 0.005 * step, gap = 1e9;
    for (double v : sums) gap = std::min(gap, std::fabs(v - alpha));
    if (gap > best.second) best = {alpha, gap};
  }
  return best;
}

Patch vit(int64_t n) { return Patch{{n, 3, 224, 224}, 768, {16, 16}}; }

TEST(CudaConvPatch, VitB16Embedding) {
  KILN_REQUIRE_GPU();
  // 3 -> 768, 16x16/16 on 224x224: each patch row is 16 contiguous pixels (32 bytes at fp16) row-major, 48
  // channels-last; the GEMM is [196 n, 768] x [768, 768].
  for (DataType t : kFloats)
    for (bool hwc : {false, true}) run(vit(1), t, hwc, 1);
  for (bool hwc : {false, true}) run(vit(2), DataType::kHALF, hwc, 2);
}

TEST(CudaConvPatch, StemsAndDownsamplers) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    // ConvNeXt's stem 3 -> 96, 4x4/4, and a downsampler 96 -> 192, 2x2/2 (C a multiple of 8).
    for (bool hwc : {false, true}) run(Patch{{2, 3, 32, 32}, 96, {4, 4}}, t, hwc, 3);
    for (bool hwc : {false, true}) run(Patch{{2, 96, 14, 14}, 192, {2, 2}}, t, hwc, 4);
  }
}

TEST(CudaConvPatch, NonSquareOddSizesAndChannels) {
  KILN_REQUIRE_GPU();
  // Non-square kernels; C not a multiple of 8; H and W not multiples of the kernel (the last rows and columns are in
  // no window: 9 / 2 = 4 rows read 8, 17 / 4 = 4 columns read 16); K odd.
  for (DataType t : kFloats)
    for (bool hwc : {false, true}) {
      run(Patch{{2, 5, 9, 17}, 13, {2, 4}}, t, hwc, 5);
      run(Patch{{1, 7, 15, 10}, 24, {3, 5}}, t, hwc, 6);
      run(Patch{{3, 1, 8, 9}, 4, {8, 1}}, t, hwc, 7);
    }
}

TEST(CudaConvPatch, EpiloguesFusedAndAfter) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats)
    for (bool hwc : {false, true}) {
      // Bias + ReLU: cuBLASLt's epilogue channels-last; the pass after the GEMM row-major.
      Patch relu{{2, 6, 12, 12}, 32, {4, 4}};
      relu.act = static_cast<int64_t>(ActivationType::kRELU);
      run(relu, t, hwc, 10);
      // Bias, residual (cuBLASLt's C) and ReLU.
      Patch all = relu;
      all.residual = true;
      run(all, t, hwc, 11);
      // No bias, residual and ReLU: everything in cuBLASLt's call in both layouts.
      Patch noBias = all;
      noBias.bias = false;
      run(noBias, t, hwc, 12);
      // No bias, no activation.
      Patch plain{{2, 6, 12, 12}, 32, {4, 4}};
      plain.bias = false;
      run(plain, t, hwc, 13);
      // ReLU6 (clip) after the GEMM, through the vectorized pass (K, or the plane of 16 pixels, in whole vectors).
      Patch clip{{2, 3, 16, 16}, 16, {4, 4}};
      clip.act = static_cast<int64_t>(ActivationType::kCLIP);
      clip.beta = 6.0;
      run(clip, t, hwc, 14);
    }
}

// Every activation after the GEMM (ReLU in cuBLASLt's epilogue channels-last), with a bias and a residual; the
// thresholded ReLU's alpha kept clear of every sum (thresholdAwayFromSums).
TEST(CudaConvPatch, EveryActivationWithBiasAndResidual) {
  KILN_REQUIRE_GPU();
  for (int32_t act = 0; act < EnumMax<ActivationType>(); ++act) {
    Patch p{{1, 4, 6, 8}, 18, {2, 2}};
    p.residual = true;
    p.act = act;
    bool clip = act == static_cast<int32_t>(ActivationType::kCLIP);
    bool thresholded = act == static_cast<int32_t>(ActivationType::kTHRESHOLDED_RELU);
    p.alpha = clip ? -0.5 : 0.7;
    p.beta = clip ? 0.5 : 1.1;
    uint32_t const seed = 20 + static_cast<uint32_t>(act);
    for (DataType t : kFloats) {
      if (thresholded) {
        auto [alpha, gap] = thresholdAwayFromSums(p, t, seed);
        EXPECT_GE(gap, 0.01) << "no threshold in [1, 1.5] clear of the sums";
        p.alpha = alpha;
      }
      for (bool hwc : {false, true}) run(p, t, hwc, seed);
    }
  }
}

TEST(CudaConvPatch, OneAndThreeSpatialDimsRowMajor) {
  KILN_REQUIRE_GPU();
  for (DataType t : kFloats) {
    run(Patch{{2, 5, 35}, 12, {4}}, t, false, 40);              // 1-D, 35 / 4 = 8 windows
    run(Patch{{2, 3, 8, 9, 10}, 16, {2, 3, 4}}, t, false, 41);  // 3-D (video patches), edges in no window
  }
}

TEST(CudaConvPatch, Tf32RunTimeWeightsAndEmptyBatch) {
  KILN_REQUIRE_GPU();
  Patch tf{{2, 3, 64, 64}, 128, {8, 8}};
  tf.tf32 = true;
  for (bool hwc : {false, true}) run(tf, DataType::kFLOAT, hwc, 50);
  Patch rt{{2, 8, 16, 16}, 24, {4, 4}};
  rt.constWeights = false;
  for (DataType t : kFloats)
    for (bool hwc : {false, true}) run(rt, t, hwc, 51);
  for (bool hwc : {false, true}) run(Patch{{0, 3, 16, 16}, 8, {4, 4}}, DataType::kHALF, hwc, 52);
}

// The rearrangement alone against host math, row-major and channels-last, at widths and pointer offsets that make
// it move 16-, 8-, 4- and 2-byte words (rows of 68, 72 and 80 bytes row-major; 204, 216 and 240 channels-last; runs
// of 16 and 48 bytes; pointers 2 bytes off); the launcher's refusals.
TEST(CudaConvPatch, RearrangementAtEveryWordSize) {
  KILN_REQUIRE_GPU();
  backends::DeviceBackend* dev = device();
  void* stream = *dev->createStream();
  auto cs = static_cast<cudaStream_t>(stream);
  int64_t const es = 2, maxCount = 2 * 3 * 9 * 40;
  HostTensor hx = randomTensor(DataType::kHALF, {maxCount}, 90);
  auto x = backends::DeviceBuffer::allocate(dev, static_cast<size_t>(maxCount * es) + 64, "test x");
  auto p = backends::DeviceBuffer::allocate(dev, static_cast<size_t>(maxCount * es) + 64, "test p");
  ASSERT_TRUE(x.isOk() && p.isOk());
  cuda::ConvGeom g;
  g.n = 2;
  g.c = 3;
  g.in[1] = 9;
  g.kernel[1] = g.stride[1] = 2;
  g.kernel[2] = g.stride[2] = 8;
  g.out[1] = 4;
  std::vector<int> seen;
  for (int64_t width : {int64_t{34}, int64_t{36}, int64_t{40}})
    for (bool hwc : {false, true})
      for (int64_t shift : {int64_t{0}, int64_t{2}}) {
        SCOPED_TRACE(strCat(hwc ? "channels-last" : "row-major", " width ", width, " shift ", shift));
        g.in[2] = width;
        g.out[2] = width / g.kernel[2];
        int64_t const rows = g.n * g.out[1] * g.out[2], cols = g.c * g.kernel[1] * g.kernel[2];
        char* xs = static_cast<char*>(x->data()) + shift;
        char* ps = static_cast<char*>(p->data()) + shift;
        ASSERT_TRUE(dev->copy(xs, hx.data(), hx.bytes(), backends::CopyKind::kHostToDevice, stream).isOk());
        ASSERT_TRUE(dev->fill(ps, 0xff, static_cast<size_t>(rows * cols * es), stream).isOk());
        int word = cuda::patchWordBytes(es, g, hwc, xs, ps);
        seen.push_back(word);
        ASSERT_TRUE(cuda::launchPatchify(es, g, hwc, xs, ps, cs));
        ASSERT_TRUE(cuda::launchStatus("patch rearrangement").isOk());
        HostTensor got = *HostTensor::allocate(DataType::kHALF, makeDims({rows * cols}), "download");
        ASSERT_TRUE(dev->copy(got.mutableData(), ps, got.bytes(), backends::CopyKind::kDeviceToHost, stream).isOk());
        ASSERT_TRUE(dev->synchronize(stream).isOk());
        int64_t wrong = 0;
        for (int64_t n = 0; n < g.n; ++n)
          for (int64_t oy = 0; oy < g.out[1]; ++oy)
            for (int64_t ox = 0; ox < g.out[2]; ++ox)
              for (int64_t c = 0; c < g.c; ++c)
                for (int64_t i = 0; i < g.kernel[1]; ++i)
                  for (int64_t j = 0; j < g.kernel[2]; ++j) {
                    int64_t iy = oy * g.kernel[1] + i, ix = ox * g.kernel[2] + j;
                    int64_t xi = hwc ? ((n * g.in[1] + iy) * g.in[2] + ix) * g.c + c
                                     : ((n * g.c + c) * g.in[1] + iy) * g.in[2] + ix;
                    int64_t col = hwc ? (i * g.kernel[2] + j) * g.c + c : (c * g.kernel[1] + i) * g.kernel[2] + j;
                    int64_t pi = ((n * g.out[1] + oy) * g.out[2] + ox) * cols + col;
                    if (std::memcmp(static_cast<char const*>(got.data()) + pi * es,
                                    static_cast<char const*>(hx.data()) + xi * es, static_cast<size_t>(es)) != 0)
                      ++wrong;
                  }
        EXPECT_EQ(wrong, 0) << word << "-byte words";
      }
  for (int word : {16, 8, 4, 2}) EXPECT_NE(std::find(seen.begin(), seen.end(), word), seen.end()) << word;
  cuda::ConvGeom bad = g;
  bad.stride[2] = 4;
  EXPECT_FALSE(cuda::launchPatchify(es, bad, false, x->data(), p->data(), cs)) << "stride != kernel";
  bad = g;
  bad.padBegin[1] = 1;
  EXPECT_FALSE(cuda::launchPatchify(es, bad, false, x->data(), p->data(), cs)) << "padding";
  bad = g;
  bad.out[2] = 6;
  EXPECT_FALSE(cuda::launchPatchify(es, bad, false, x->data(), p->data(), cs)) << "windows past the input";
  EXPECT_FALSE(cuda::launchPatchify(3, g, false, x->data(), p->data(), cs)) << "element size";
  EXPECT_FALSE(cuda::launchPatchify(es, g, false, static_cast<char*>(x->data()) + 1, p->data(), cs)) << "odd x";
  dev->destroyStream(stream);
}

// The words the rearrangement moves (host math, no device): ViT's 32-byte runs take 16-byte words, channels-last
// its 96-byte runs too; odd runs, strides or pointers take smaller ones.
TEST(CudaConvPatch, WordSizes) {
  cuda::ConvGeom v;
  v.n = 1;
  v.c = 3;
  v.in[1] = v.in[2] = 224;
  v.kernel[1] = v.kernel[2] = v.stride[1] = v.stride[2] = 16;
  v.out[1] = v.out[2] = 14;
  auto const* aligned = reinterpret_cast<void const*>(uintptr_t{1} << 20);
  auto const* plus8 = reinterpret_cast<void const*>((uintptr_t{1} << 20) + 8);
  EXPECT_EQ(cuda::patchWordBytes(2, v, false, aligned, aligned), 16);
  EXPECT_EQ(cuda::patchWordBytes(2, v, true, aligned, aligned), 16);
  EXPECT_EQ(cuda::patchWordBytes(4, v, false, aligned, aligned), 16);
  EXPECT_EQ(cuda::patchWordBytes(2, v, false, plus8, aligned), 8);
  EXPECT_EQ(cuda::patchWordBytes(2, v, false, aligned, plus8), 8);
  cuda::ConvGeom odd = v;
  odd.kernel[2] = odd.stride[2] = 3;  // 6-byte runs at fp16
  odd.out[2] = 74;
  EXPECT_EQ(cuda::patchWordBytes(2, odd, false, aligned, aligned), 2);
  cuda::ConvGeom w = v;
  w.in[2] = 228;  // rows of 456 bytes: 8-byte words
  EXPECT_EQ(cuda::patchWordBytes(2, w, false, aligned, aligned), 8);
}

// The kernel's index math, run on the host (no device needed), against the definition of the patch matrix: every
// element of p from x at (image, output pixel * kernel + tap), its columns in the weights' order; row-major 1-D, 2-D
// and 3-D and channels-last, odd extents, words of 16 bytes down to the element, 32- and 64-bit indices.
TEST(CudaConvPatch, IndexMathOnTheHost) {
  struct Geo {
    int64_t n, c;
    std::vector<int64_t> in, kernel;  // 3 entries, leading ones for fewer spatial dims
    bool hwc;
    int64_t elementSize;
    uintptr_t shift;  // added to both pointers
  };
  std::vector<Geo> const geos{
      {2, 3, {1, 224, 224}, {1, 16, 16}, false, 2, 0},  // ViT: 16-byte words
      {2, 3, {1, 224, 224}, {1, 16, 16}, true, 2, 0},
      {1, 3, {1, 32, 32}, {1, 4, 4}, false, 2, 0},  // 8-byte runs
      {2, 5, {1, 9, 17}, {1, 2, 4}, false, 2, 0},   // edges in no window
      {2, 5, {1, 9, 17}, {1, 2, 4}, true, 2, 0},
      {1, 7, {1, 15, 10}, {1, 3, 5}, true, 4, 0},
      {3, 1, {1, 8, 9}, {1, 8, 1}, false, 2, 0},
      {2, 5, {1, 1, 35}, {1, 1, 4}, false, 4, 0},  // 1-D
      {2, 3, {8, 9, 10}, {2, 3, 4}, false, 2, 0},  // 3-D
      {2, 3, {8, 9, 16}, {2, 3, 4}, false, 2, 0},
      {2, 3, {1, 224, 224}, {1, 16, 16}, false, 2, 6},  // pointers 6 bytes off: 2-byte words
      {2, 3, {1, 36, 36}, {1, 2, 2}, true, 1, 0},       // 1-byte elements
  };
  auto const base = uintptr_t{1} << 20;
  for (Geo const& geo : geos) {
    cuda::ConvGeom g;
    g.n = geo.n;
    g.c = geo.c;
    for (int i = 0; i < 3; ++i) {
      g.in[i] = geo.in[static_cast<size_t>(i)];
      g.kernel[i] = g.stride[i] = geo.kernel[static_cast<size_t>(i)];
      g.out[i] = g.in[i] / g.kernel[i];
    }
    auto const* x = reinterpret_cast<void const*>(base + geo.shift);
    auto const* p = reinterpret_cast<void const*>(base + 2 * base + geo.shift);
    int const word = cuda::patchWordBytes(geo.elementSize, g, geo.hwc, x, p);
    int64_t const we = word / geo.elementSize;
    SCOPED_TRACE(strCat(geo.hwc ? "channels-last" : "row-major", " n ", geo.n, " c ", geo.c, " in ",
                        dimsToString(makeDims(geo.in)), " kernel ", dimsToString(makeDims(geo.kernel)), ", ", word,
                        "-byte words"));
    // Each element of p's source element in x, by definition.
    std::vector<int64_t> want;
    int64_t const k0 = g.kernel[0], k1 = g.kernel[1], k2 = g.kernel[2];
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
            size_t const rowStart = want.size();
            want.resize(rowStart + static_cast<size_t>(g.c * k0 * k1 * k2));
            for (int64_t c = 0; c < g.c; ++c)
              for (int64_t a = 0; a < k0; ++a)
                for (int64_t i = 0; i < k1; ++i)
                  for (int64_t j = 0; j < k2; ++j) {
                    int64_t const z = o0 * k0 + a, yy = o1 * k1 + i, xx = o2 * k2 + j;
                    int64_t col = geo.hwc ? ((a * k1 + i) * k2 + j) * g.c + c : ((c * k0 + a) * k1 + i) * k2 + j;
                    int64_t src = geo.hwc ? (((n * g.in[0] + z) * g.in[1] + yy) * g.in[2] + xx) * g.c + c
                                          : (((n * g.c + c) * g.in[0] + z) * g.in[1] + yy) * g.in[2] + xx;
                    want[rowStart + static_cast<size_t>(col)] = src;
                  }
          }
    for (bool wide : {false, true}) {
      std::vector<int64_t> got = cuda::patchSourceWordsForTesting(geo.elementSize, g, geo.hwc, x, p, wide);
      ASSERT_EQ(static_cast<int64_t>(got.size()) * we, static_cast<int64_t>(want.size())) << "wide " << wide;
      int64_t wrong = 0;
      for (size_t w = 0; w < got.size(); ++w)
        for (int64_t e = 0; e < we; ++e)
          if (got[w] * we + e != want[w * static_cast<size_t>(we) + static_cast<size_t>(e)]) ++wrong;
      EXPECT_EQ(wrong, 0) << "wide " << wide;
    }
  }
  // Refused geometries give nothing.
  cuda::ConvGeom bad;
  bad.n = 1;
  bad.c = 3;
  bad.in[2] = 8;
  bad.kernel[2] = 4;
  bad.stride[2] = 2;
  bad.out[2] = 3;
  auto const* x = reinterpret_cast<void const*>(base);
  EXPECT_TRUE(cuda::patchSourceWordsForTesting(2, bad, false, x, x, false).empty()) << "stride != kernel";
}

// What the tactics take and refuse (no device needed).
TEST(CudaConvPatch, SupportsAndRefusals) {
  backends::Tactic const* tactic = nullptr;
  for (backends::Tactic const& t : cuda::CudaTactics::instance().all())
    if (t.name == kPatch0) tactic = &t;
  ASSERT_NE(tactic, nullptr);
  auto check = [&](std::vector<int64_t> const& x, std::vector<int64_t> const& w, DataType t,
                   std::function<void(ir::Attributes&)> const& edit, TensorFormat f, DataType biasType) {
    ir::Graph g;
    ir::Value* xv = *g.addInput("x", t, makeDims(x));
    ir::Value* wv = g.addConstant("w", *HostTensor::allocate(t, makeDims(w), "w"))->output(0);
    ir::Value* bv = g.addConstant("b", *HostTensor::allocate(biasType, makeDims({w[0]}), "b"))->output(0);
    ir::Node* conv = g.addNode(ir::OpType::kConvolution, "patch", {xv, wv, bv}, 1);
    conv->attrs.setInt("num_output_maps", w[0]);
    std::vector<int64_t> k(w.begin() + 2, w.end());
    conv->attrs.setInts("kernel_shape", k);
    conv->attrs.setInts("strides", k);
    edit(conv->attrs);
    g.markOutput(conv->output(0));
    ir::HostEvaluator eval = backends::referenceEvaluator();
    Status s = ir::inferGraphInPlace(g, &eval);
    EXPECT_TRUE(s.isOk()) << s.toString();
    conv->attrs.setInt("format", static_cast<int64_t>(f));
    std::vector<ir::TensorInfo> in, out{{conv->output(0)->dtype, conv->output(0)->shape}};
    for (ir::Value* v : conv->inputs) in.push_back({v->dtype, v->shape});
    bool ok = tactic->supports(*conv, in, out);
    auto kern = tactic->create(*conv);
    if (ok) {
      EXPECT_TRUE(kern.isOk()) << kern.status().toString();
    }
    return ok;
  };
  auto none = [](ir::Attributes&) {};
  TensorFormat const hwc = TensorFormat::kHWC, lin = TensorFormat::kLINEAR;
  DataType const h = DataType::kHALF;
  for (DataType t : kFloats)
    for (TensorFormat f : {hwc, lin}) {
      SCOPED_TRACE(strCat(dataTypeName(t), f == hwc ? " channels-last" : " row-major"));
      EXPECT_TRUE(check({1, 3, 224, 224}, {768, 3, 16, 16}, t, none, f, t)) << "ViT-B/16";
      EXPECT_TRUE(check({64, 3, 224, 224}, {768, 3, 16, 16}, t, none, f, t)) << "ViT-B/16 batch 64";
      EXPECT_TRUE(check({2, 3, 224, 224}, {96, 3, 4, 4}, t, none, f, t)) << "ConvNeXt stem";
      EXPECT_TRUE(check({2, 5, 9, 17}, {13, 5, 2, 4}, t, none, f, t)) << "non-square, edges in no window";
    }
  EXPECT_TRUE(check({2, 5, 35}, {12, 5, 4}, h, none, lin, h)) << "1-D row-major";
  EXPECT_TRUE(check({2, 3, 8, 9, 10}, {16, 3, 2, 3, 4}, h, none, lin, h)) << "3-D row-major";
  EXPECT_FALSE(check({2, 5, 35}, {12, 5, 4}, h, none, hwc, h)) << "channels-last is 2-D only";
  std::vector<int64_t> const x{2, 8, 32, 32}, w4{16, 8, 4, 4};
  EXPECT_FALSE(check(x, w4, h, none, TensorFormat::kHWC8, h)) << "other layouts";
  EXPECT_FALSE(check(
      x, w4, h,
      [](ir::Attributes& a) {
        a.setInts("strides", {2, 2});
      },
      hwc, h))
      << "stride < kernel";
  EXPECT_FALSE(check(
      x, w4, h,
      [](ir::Attributes& a) {
        a.setInts("strides", {4, 8});
      },
      lin, h))
      << "stride > kernel";
  EXPECT_FALSE(check(
      x, w4, h,
      [](ir::Attributes& a) {
        a.setInts("pads_begin", {1, 0});
      },
      hwc, h))
      << "padding";
  EXPECT_FALSE(check(
      x, w4, h,
      [](ir::Attributes& a) {
        a.setInts("pads_end", {0, 2});
      },
      lin, h))
      << "padding at the end";
  EXPECT_FALSE(check(
      x, w4, h,
      [](ir::Attributes& a) {
        a.setInts("dilations", {1, 2});
      },
      hwc, h))
      << "dilation";
  EXPECT_FALSE(check(
      x, {16, 4, 4, 4}, h, [](ir::Attributes& a) { a.setInt("groups", 2); }, hwc, h))
      << "groups";
  EXPECT_FALSE(check(x, {16, 8, 1, 1}, h, none, hwc, h)) << "1x1: the pointwise tactics";
  EXPECT_FALSE(check(x, w4, h, none, hwc, DataType::kFLOAT)) << "mixed types";
  EXPECT_FALSE(check(x, w4, DataType::kINT8, none, lin, DataType::kINT8)) << "int8";
  // The SAME modes and round-up pad nothing only where the kernel divides the input.
  auto mode = [](PaddingMode m) {
    return [m](ir::Attributes& a) { a.setInt("padding_mode", static_cast<int64_t>(m)); };
  };
  EXPECT_TRUE(check(x, w4, h, mode(PaddingMode::kSAME_UPPER), hwc, h)) << "SAME, 32 / 4";
  EXPECT_TRUE(check(x, w4, h, mode(PaddingMode::kEXPLICIT_ROUND_UP), lin, h)) << "round up, 32 / 4";
  std::vector<int64_t> const x30{2, 8, 30, 32};
  EXPECT_FALSE(check(x30, w4, h, mode(PaddingMode::kSAME_LOWER), hwc, h)) << "SAME pads 30 to 32";
  EXPECT_FALSE(check(x30, w4, h, mode(PaddingMode::kEXPLICIT_ROUND_UP), lin, h)) << "round up adds a window";
  EXPECT_TRUE(check(x30, w4, h, none, lin, h)) << "round down: the last 2 rows are in no window";
}

// Device time of every CUDA tactic taking ViT-B/16's patch embedding (fp16, both layouts, batch 1 and 64; the
// median of 20 event-timed runs after a warm-up), beside the bytes it must move. Prints only.
TEST(CudaConvPatch, TimesOnVitB16) {
  KILN_REQUIRE_GPU();
  DataType const t = DataType::kHALF;
  for (int64_t n : {int64_t{1}, int64_t{64}})
    for (bool hwc : {false, true}) {
      ir::Graph g;
      ir::Value* x = *g.addInput("x", t, makeDims({n, 3, 224, 224}));
      ir::Value* w = g.addConstant("w", *HostTensor::allocate(t, makeDims({768, 3, 16, 16}), "w"))->output(0);
      ir::Value* b = g.addConstant("b", *HostTensor::allocate(t, makeDims({768}), "b"))->output(0);
      ir::Node* conv = g.addNode(ir::OpType::kConvolution, "patch_embed", {x, w, b}, 1);
      conv->attrs.setInt("num_output_maps", 768);
      conv->attrs.setInts("kernel_shape", {16, 16});
      conv->attrs.setInts("strides", {16, 16});
      g.markOutput(conv->output(0));
      ir::HostEvaluator eval = backends::referenceEvaluator();
      ASSERT_TRUE(ir::inferGraphInPlace(g, &eval).isOk());
      if (hwc) conv->attrs.setInt("format", static_cast<int64_t>(TensorFormat::kHWC));
      std::vector<ir::TensorInfo> in, out{{t, conv->output(0)->shape}};
      for (ir::Value* v : conv->inputs) in.push_back({v->dtype, v->shape});
      double moved = static_cast<double>(n * 3 * 224 * 224 * 2 + 768 * 768 * 2 + n * 768 * 196 * 2);
      std::printf("ViT-B/16 patch embedding, batch %lld fp16 %s: %.1f MB to move, %.2f GFLOP\n",
                  static_cast<long long>(n), hwc ? "channels-last" : "row-major", moved / 1e6,
                  2.0 * static_cast<double>(n) * 196 * 768 * 768 / 1e9);
      printTacticTimes(*conv, in, out, moved);
    }
}

}  // namespace
}  // namespace kiln
