// Tests of the second batch of ONNX op importers (indexing, quantization, composed and breadth-layer ops):
// tiny models parsed, built for the CPU reference backend and run, compared with hand-computed values or the
// examples of the ONNX operator specification.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "onnx_test_util.h"

namespace {

using namespace kiln::onnx::test;  // NOLINT: test helpers
using kiln::Dims;

/// Initializer of any ONNX type from raw little-endian bytes.
void initRaw(ModelBuilder& m, std::string const& name, int32_t type, std::vector<int64_t> const& dims,
             std::string const& raw) {
  auto* t = m.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (auto d : dims) {
    t->add_dims(d);
  }
  t->set_raw_data(raw);
}

std::string bytesOf(std::vector<int8_t> const& v) { return std::string(reinterpret_cast<char const*>(v.data()), v.size()); }

TEST(OnnxOpsBatch2, ArgMaxArgMin) {
  ModelBuilder m;
  m.input("x", {2, 3}).output("amax", {}, ::onnx::TensorProto::INT64).output("alast", {}, ::onnx::TensorProto::INT64);
  m.output("amin", {}, ::onnx::TensorProto::INT64);
  attr(m.node("ArgMax", {"x"}, {"amax"}), "axis", int64_t{1});
  auto& last = m.node("ArgMax", {"x"}, {"alast"});
  attr(last, "axis", int64_t{-1});
  attr(last, "select_last_index", int64_t{1});
  auto& mn = m.node("ArgMin", {"x"}, {"amin"});
  attr(mn, "keepdims", int64_t{0});
  auto outs = run(m.bytes(), {{"x", {Dims{2, {2, 3}}, {1, 5, 5, 7, 2, 7}}}});
  ASSERT_FALSE(outs.empty());
  EXPECT_EQ(outs["amax"].dims.nbDims, 2);
  expectNear(outs["amax"].v, {1, 0});
  expectNear(outs["alast"].v, {2, 2});
  EXPECT_EQ(outs["amin"].dims.nbDims, 1);
  expectNear(outs["amin"].v, {0, 1, 0});
}

TEST(OnnxOpsBatch2, TopKLargestAndSmallest) {
  ModelBuilder m;
  m.input("x", {3, 4}).initI("k", {1}, {2}).output("v").output("i", {}, ::onnx::TensorProto::INT64);
  m.output("sv").output("si", {}, ::onnx::TensorProto::INT64);
  m.node("TopK", {"x", "k"}, {"v", "i"});
  auto& s = m.node("TopK", {"x", "k"}, {"sv", "si"});
  attr(s, "axis", int64_t{0});
  attr(s, "largest", int64_t{0});
  auto outs = run(m.bytes(), {{"x", {Dims{2, {3, 4}}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["v"].v, {4, 3, 9, 6, 8, 5});
  expectNear(outs["i"].v, {2, 0, 1, 3, 3, 0});
  expectNear(outs["sv"].v, {3, 1, 2, 1, 5, 3, 4, 6});
  expectNear(outs["si"].v, {0, 0, 1, 0, 1, 2, 0, 1});
}

TEST(OnnxOpsBatch2, TileStaticAndDynamic) {
  ModelBuilder m;
  m.input("x", {2, 3}).input("d", {-1, 2}).initI("r1", {2}, {2, 1}).initI("r2", {2}, {1, 2});
  m.output("a").output("b").output("c");
  m.node("Tile", {"x", "r1"}, {"a"});
  m.node("Tile", {"x", "r2"}, {"b"});
  m.node("Tile", {"d", "r1"}, {"c"});
  auto outs = run(m.bytes(), {{"x", {Dims{2, {2, 3}}, iota(6)}}, {"d", {Dims{2, {1, 2}}, {7, 8}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["a"].v, {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5});
  expectNear(outs["b"].v, {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  EXPECT_EQ(outs["c"].dims.d[0], 2);
  expectNear(outs["c"].v, {7, 8, 7, 8});
}

TEST(OnnxOpsBatch2, GatherElementsAndGatherND) {
  ModelBuilder m;
  m.input("data", {2, 2}).initI("ie", {2, 2}, {0, 0, 1, 0}).output("ge");
  attr(m.node("GatherElements", {"data", "ie"}, {"ge"}), "axis", int64_t{1});
  m.initI("in", {2, 2}, {0, 0, 1, 1}).output("gn");
  m.node("GatherND", {"data", "in"}, {"gn"});
  m.input("d3", {2, 2, 2}).initI("ib", {2, 1}, {1, 0}).output("gb");
  attr(m.node("GatherND", {"d3", "ib"}, {"gb"}), "batch_dims", int64_t{1});
  auto outs = run(m.bytes(), {{"data", {Dims{2, {2, 2}}, {1, 2, 3, 4}}}, {"d3", {Dims{3, {2, 2, 2}}, iota(8)}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["ge"].v, {1, 1, 4, 3});
  expectNear(outs["gn"].v, {1, 4});
  expectNear(outs["gb"].v, {2, 3, 4, 5});
}

TEST(OnnxOpsBatch2, ScatterElementsAndScatterND) {
  ModelBuilder m;
  m.input("data", {1, 5}).input("upd", {1, 2}).initI("idx", {1, 2}, {1, 1}).initI("neg", {1, 2}, {1, -3});
  m.output("add").output("neg_out");
  auto& a = m.node("ScatterElements", {"data", "idx", "upd"}, {"add"});
  attr(a, "axis", int64_t{1});
  attr(a, "reduction", std::string("add"));
  attr(m.node("ScatterElements", {"data", "neg", "upd"}, {"neg_out"}), "axis", int64_t{1});
  m.input("d8", {8}).input("u4", {4}).initI("nd", {4, 1}, {4, 3, 1, 7}).output("nd_out");
  m.node("ScatterND", {"d8", "nd", "u4"}, {"nd_out"});
  auto outs = run(m.bytes(), {{"data", {Dims{2, {1, 5}}, {1, 2, 3, 4, 5}}},
                              {"upd", {Dims{2, {1, 2}}, {1.1F, 2.1F}}},
                              {"d8", {Dims{1, {8}}, {1, 2, 3, 4, 5, 6, 7, 8}}},
                              {"u4", {Dims{1, {4}}, {9, 10, 11, 12}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["add"].v, {1, 5.2, 3, 4, 5});
  expectNear(outs["neg_out"].v, {1, 1.1, 2.1, 4, 5});
  expectNear(outs["nd_out"].v, {1, 11, 3, 10, 9, 6, 7, 12});
}

TEST(OnnxOpsBatch2, OneHotAxes) {
  ModelBuilder m;
  m.input("i", {3}).initF("depth", {}, {3}).initF("vals", {2}, {0, 5}).output("last").output("first");
  m.node("OneHot", {"i", "depth", "vals"}, {"last"});
  attr(m.node("OneHot", {"i", "depth", "vals"}, {"first"}), "axis", int64_t{0});
  auto outs = run(m.bytes(), {{"i", {Dims{1, {3}}, {1, 0, 2}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["last"].v, {0, 5, 0, 5, 0, 0, 0, 0, 5});
  expectNear(outs["first"].v, {0, 5, 0, 5, 0, 0, 0, 0, 5});  // symmetric for this permutation
  EXPECT_EQ(outs["first"].dims.d[0], 3);
}

TEST(OnnxOpsBatch2, CumSumModes) {
  ModelBuilder m;
  m.input("x", {5}).initI("ax", {}, {0}).output("y").output("er");
  m.node("CumSum", {"x", "ax"}, {"y"});
  auto& er = m.node("CumSum", {"x", "ax"}, {"er"});
  attr(er, "exclusive", int64_t{1});
  attr(er, "reverse", int64_t{1});
  m.input("x2", {2, 3}).initI("ax2", {1}, {-1}).output("y2");
  m.node("CumSum", {"x2", "ax2"}, {"y2"});
  auto outs = run(m.bytes(), {{"x", {Dims{1, {5}}, {1, 2, 3, 4, 5}}}, {"x2", {Dims{2, {2, 3}}, iota(6)}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {1, 3, 6, 10, 15});
  expectNear(outs["er"].v, {14, 12, 9, 5, 0});
  expectNear(outs["y2"].v, {0, 1, 3, 3, 7, 12});
}

TEST(OnnxOpsBatch2, NonZeroAndNmsImport) {
  ModelBuilder m;
  m.input("x", {2, 3}).output("nz", {}, ::onnx::TensorProto::INT64);
  m.node("NonZero", {"x"}, {"nz"});
  m.input("boxes", {1, 3, 4}).input("scores", {1, 1, 3}).initI("maxb", {1}, {2}).initF("iou", {1}, {0.5F});
  m.output("sel", {}, ::onnx::TensorProto::INT64);
  m.node("NonMaxSuppression", {"boxes", "scores", "maxb", "iou"}, {"sel"});
  auto r = parseOnly(m.bytes());
  EXPECT_TRUE(r.ok) << r.desc;
}

TEST(OnnxOpsBatch2, Einsum) {
  ModelBuilder m;
  m.input("a", {2, 3}).input("b", {3, 2}).output("y").output("t");
  attr(m.node("Einsum", {"a", "b"}, {"y"}), "equation", std::string("ij, jk -> ik"));
  attr(m.node("Einsum", {"a"}, {"t"}), "equation", std::string("ij->ji"));
  auto outs = run(m.bytes(), {{"a", {Dims{2, {2, 3}}, iota(6)}}, {"b", {Dims{2, {3, 2}}, iota(6, 1)}}});
  ASSERT_FALSE(outs.empty());
  // a = [[0,1,2],[3,4,5]], b = [[1,2],[3,4],[5,6]].
  expectNear(outs["y"].v, {13, 16, 40, 52});
  expectNear(outs["t"].v, {0, 3, 1, 4, 2, 5});
}

TEST(OnnxOpsBatch2, QuantizeDequantizeLinear) {
  ModelBuilder m;
  m.input("x", {4}).initF("s", {}, {2});
  initRaw(m, "zp", ::onnx::TensorProto::UINT8, {}, std::string(1, static_cast<char>(128)));
  m.output("q", {}, ::onnx::TensorProto::UINT8).output("dq");
  m.node("QuantizeLinear", {"x", "s", "zp"}, {"q"});
  m.node("DequantizeLinear", {"q", "s", "zp"}, {"dq"});
  // Per-axis dequantize of int8 weights.
  initRaw(m, "w", ::onnx::TensorProto::INT8, {2, 2}, bytesOf({1, 2, 3, 4}));
  initRaw(m, "wzp", ::onnx::TensorProto::INT8, {2}, bytesOf({0, 1}));
  m.initF("ws", {2}, {0.5F, 2}).output("wdq");
  attr(m.node("DequantizeLinear", {"w", "ws", "wzp"}, {"wdq"}), "axis", int64_t{0});
  // Without zero point: uint8 output.
  m.output("q0", {}, ::onnx::TensorProto::UINT8);
  m.node("QuantizeLinear", {"x", "s"}, {"q0"});
  auto outs = run(m.bytes(), {{"x", {Dims{1, {4}}, {-1, 0, 1.5F, 300}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["q"].v, {128, 128, 129, 255});
  expectNear(outs["dq"].v, {0, 0, 2, 254});
  expectNear(outs["wdq"].v, {0.5, 1, 4, 6});
  expectNear(outs["q0"].v, {0, 0, 1, 150});
}

TEST(OnnxOpsBatch2, DynamicQuantizeLinearSpecExample) {
  ModelBuilder m(11);
  m.input("x", {6}).output("y", {}, ::onnx::TensorProto::UINT8).output("s").output("z", {}, ::onnx::TensorProto::UINT8);
  m.node("DynamicQuantizeLinear", {"x"}, {"y", "s", "z"});
  auto outs = run(m.bytes(), {{"x", {Dims{1, {6}}, {0, 2, -3, -2.5F, 1.34F, 0.5F}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["s"].v, {5.0 / 255.0});
  expectNear(outs["z"].v, {153});
  expectNear(outs["y"].v, {153, 255, 0, 26, 221, 179});
}

TEST(OnnxOpsBatch2, DepthToSpaceAndSpaceToDepth) {
  int const b = 2;
  int const c = 8;
  int const h = 2;
  int const w = 3;
  int const co = c / (b * b);
  ModelBuilder m;
  m.input("x", {1, c, h, w}).output("dcr").output("crd").output("back");
  attr(m.node("DepthToSpace", {"x"}, {"dcr"}), "blocksize", int64_t{b});
  auto& crd = m.node("DepthToSpace", {"x"}, {"crd"});
  attr(crd, "blocksize", int64_t{b});
  attr(crd, "mode", std::string("CRD"));
  attr(m.node("SpaceToDepth", {"dcr"}, {"back"}), "blocksize", int64_t{b});
  std::vector<float> x = iota(c * h * w);
  auto outs = run(m.bytes(), {{"x", {Dims{4, {1, c, h, w}}, x}}});
  ASSERT_FALSE(outs.empty());
  std::vector<double> dcr(x.size());
  std::vector<double> crdV(x.size());
  for (int oc = 0; oc < co; ++oc) {
    for (int y = 0; y < h * b; ++y) {
      for (int xx = 0; xx < w * b; ++xx) {
        int const i = y % b;
        int const j = xx % b;
        size_t const o = static_cast<size_t>((oc * h * b + y) * w * b + xx);
        dcr[o] = x[static_cast<size_t>((((i * b + j) * co + oc) * h + y / b) * w + xx / b)];
        crdV[o] = x[static_cast<size_t>(((oc * b * b + i * b + j) * h + y / b) * w + xx / b)];
      }
    }
  }
  expectNear(outs["dcr"].v, dcr);
  expectNear(outs["crd"].v, crdV);
  expectNear(outs["back"].v, std::vector<double>(x.begin(), x.end()));
  EXPECT_EQ(outs["dcr"].dims.d[2], h * b);
}

TEST(OnnxOpsBatch2, HardmaxLrnMvn) {
  ModelBuilder m;
  m.input("x", {2, 3}).output("hm");
  m.node("Hardmax", {"x"}, {"hm"});
  m.input("c", {1, 3, 1, 1}).output("lrn");
  auto& l = m.node("LRN", {"c"}, {"lrn"});
  attr(l, "size", int64_t{3});
  attr(l, "alpha", 3.0F);
  attr(l, "beta", 1.0F);
  m.input("v", {1, 2, 1, 2}).output("mvn");
  m.node("MeanVarianceNormalization", {"v"}, {"mvn"});
  auto outs = run(m.bytes(), {{"x", {Dims{2, {2, 3}}, {1, 3, 2, 5, 5, 0}}},
                              {"c", {Dims{4, {1, 3, 1, 1}}, {1, 2, 3}}},
                              {"v", {Dims{4, {1, 2, 1, 2}}, {1, 3, 2, 6}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["hm"].v, {0, 1, 0, 1, 0, 0});
  expectNear(outs["lrn"].v, {1.0 / 6, 2.0 / 15, 3.0 / 14});
  expectNear(outs["mvn"].v, {-1, 1, -1, 1}, 1e-6);
}

TEST(OnnxOpsBatch2, GroupNormalizationOpset21And18) {
  for (int64_t opset : {18, 21}) {
    ModelBuilder m(opset);
    m.input("x", {1, 4, 1, 1}).output("y");
    if (opset == 21) {
      m.initF("s", {4}, {1, 2, 3, 4}).initF("b", {4}, {0, 0, 1, 1});
    } else {
      m.initF("s", {2}, {2, 3}).initF("b", {2}, {0, 1});
    }
    attr(m.node("GroupNormalization", {"x", "s", "b"}, {"y"}), "num_groups", int64_t{2});
    auto outs = run(m.bytes(), {{"x", {Dims{4, {1, 4, 1, 1}}, {1, 3, 2, 6}}}});
    ASSERT_FALSE(outs.empty());
    if (opset == 21) {
      expectNear(outs["y"].v, {-1, 2, -2, 5}, 1e-4);
    } else {
      expectNear(outs["y"].v, {-2, 2, -2, 4}, 1e-4);
    }
  }
}

TEST(OnnxOpsBatch2, ReverseSequenceSpecExample) {
  ModelBuilder m;
  m.input("x", {4, 4}).initI("lens", {4}, {4, 3, 2, 1}).output("y");
  m.node("ReverseSequence", {"x", "lens"}, {"y"});
  auto outs = run(m.bytes(), {{"x", {Dims{2, {4, 4}}, iota(16)}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["y"].v, {12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15});
}

TEST(OnnxOpsBatch2, GridSampleModes) {
  ModelBuilder m(16);
  m.input("x", {1, 1, 2, 2}).input("g", {1, 1, 2, 2}).input("g2", {1, 1, 2, 2}).output("lin").output("near");
  m.node("GridSample", {"x", "g"}, {"lin"});
  auto& n = m.node("GridSample", {"x", "g2"}, {"near"});
  attr(n, "mode", std::string("nearest"));
  attr(n, "align_corners", int64_t{1});
  auto outs = run(m.bytes(), {{"x", {Dims{4, {1, 1, 2, 2}}, {1, 2, 3, 4}}},
                              {"g", {Dims{4, {1, 1, 2, 2}}, {0, 0, -1, -1}}},
                              {"g2", {Dims{4, {1, 1, 2, 2}}, {1, 1, -1, -1}}}});
  ASSERT_FALSE(outs.empty());
  // Centre: the mean of all four; (-1, -1) without aligned corners is the outer corner: 1/4 of pixel 1.
  expectNear(outs["lin"].v, {2.5, 0.25});
  expectNear(outs["near"].v, {4, 1});
}

TEST(OnnxOpsBatch2, ModFloatAndInt) {
  ModelBuilder m;
  m.input("a", {3}).input("b", {3}).output("f");
  attr(m.node("Mod", {"a", "b"}, {"f"}), "fmod", int64_t{1});
  m.input("ia", {3}, ::onnx::TensorProto::INT64).initI("ib", {3}, {3, -3, 3});
  m.output("i", {}, ::onnx::TensorProto::INT64);
  m.node("Mod", {"ia", "ib"}, {"i"});
  auto outs = run(m.bytes(), {{"a", {Dims{1, {3}}, {5.5F, -5.5F, 7}}}, {"b", {Dims{1, {3}}, {2, 2, -3}}}},
                  {{"ia", {Dims{1, {3}}, {-4, 7, 5}}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["f"].v, {1.5, -1.5, 1});
  expectNear(outs["i"].v, {2, -2, 2});
}

TEST(OnnxOpsBatch2, IsInfAndActivations) {
  ModelBuilder m;
  m.input("x", {4}).output("inf", {}, ::onnx::TensorProto::BOOL).output("pinf", {}, ::onnx::TensorProto::BOOL);
  m.node("IsInf", {"x"}, {"inf"});
  attr(m.node("IsInf", {"x"}, {"pinf"}), "detect_negative", int64_t{0});
  m.input("a", {4}).output("celu").output("mish").output("hswish");
  attr(m.node("Celu", {"a"}, {"celu"}), "alpha", 2.0F);
  m.node("Mish", {"a"}, {"mish"});
  m.node("HardSwish", {"a"}, {"hswish"});
  float const inf = std::numeric_limits<float>::infinity();
  std::vector<float> a{-4, -0.5F, 0.25F, 3.5F};
  auto outs = run(m.bytes(), {{"x", {Dims{1, {4}}, {-inf, inf, 1, std::nanf("")}}}, {"a", {Dims{1, {4}}, a}}});
  ASSERT_FALSE(outs.empty());
  expectNear(outs["inf"].v, {1, 1, 0, 0});
  expectNear(outs["pinf"].v, {0, 1, 0, 0});
  std::vector<double> celu;
  std::vector<double> mish;
  std::vector<double> hs;
  for (float f : a) {
    double const v = f;
    celu.push_back(std::max(0.0, v) + std::min(0.0, 2.0 * (std::exp(v / 2.0) - 1.0)));
    mish.push_back(v * std::tanh(std::log1p(std::exp(v))));
    hs.push_back(v * std::max(0.0, std::min(1.0, v / 6.0 + 0.5)));
  }
  expectNear(outs["celu"].v, celu);
  expectNear(outs["mish"].v, mish);
  expectNear(outs["hswish"].v, hs);
}

TEST(OnnxOpsBatch2, CompositeReductions) {
  for (int64_t opset : {13, 18}) {
    ModelBuilder m(opset);
    m.input("x", {2, 2}).output("l1").output("l2").output("ss").output("lse").output("ls");
    auto axes = [&](::onnx::NodeProto& n, std::vector<int64_t> const& v) {
      if (opset >= 18) {
        std::string name = n.name() + "_axes";
        m.initI(name, {static_cast<int64_t>(v.size())}, v);
        n.add_input(name);
      } else {
        attr(n, "axes", v);
      }
    };
    auto& l1 = m.node("ReduceL1", {"x"}, {"l1"});
    axes(l1, {1});
    attr(l1, "keepdims", int64_t{0});
    m.node("ReduceL2", {"x"}, {"l2"});
    auto& ss = m.node("ReduceSumSquare", {"x"}, {"ss"});
    axes(ss, {-1});
    auto& lse = m.node("ReduceLogSumExp", {"x"}, {"lse"});
    axes(lse, {0});
    m.input("p", {3});
    m.node("ReduceLogSum", {"p"}, {"ls"});
    auto outs = run(m.bytes(), {{"x", {Dims{2, {2, 2}}, {1, -2, 3, -4}}}, {"p", {Dims{1, {3}}, {1, 2, 5}}}});
    ASSERT_FALSE(outs.empty());
    expectNear(outs["l1"].v, {3, 7});
    EXPECT_EQ(outs["l1"].dims.nbDims, 1);
    expectNear(outs["l2"].v, {std::sqrt(30.0)});
    expectNear(outs["ss"].v, {5, 25});
    EXPECT_EQ(outs["ss"].dims.nbDims, 2);
    expectNear(outs["lse"].v, {std::log(std::exp(1.0) + std::exp(3.0)), std::log(std::exp(-2.0) + std::exp(-4.0))});
    expectNear(outs["ls"].v, {std::log(8.0)});
  }
}

TEST(OnnxOpsBatch2, BadInputsNameTheNode) {
  {
    ModelBuilder m;
    m.input("x", {2, 3}).initI("r", {3}, {1, 2, 3}).output("y");
    m.node("Tile", {"x", "r"}, {"y"}, "tile_bad");
    auto r = parseOnly(m.bytes());
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.desc.find("tile_bad"), std::string::npos) << r.desc;
  }
  {
    ModelBuilder m;
    m.input("x", {2, 3}).initI("r", {2}, {int64_t{1} << 40, int64_t{1} << 40}).output("y");
    m.node("Tile", {"x", "r"}, {"y"}, "tile_bomb");
    auto r = parseOnly(m.bytes());
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.desc.find("tile_bomb"), std::string::npos) << r.desc;
  }
  {
    ModelBuilder m;
    m.input("x", {2, 3}).output("y");
    attr(m.node("ScatterElements", {"x", "x", "x"}, {"y"}, "sc"), "reduction", std::string("avg"));
    auto r = parseOnly(m.bytes());
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.desc.find("avg"), std::string::npos) << r.desc;
  }
  {
    ModelBuilder m;
    m.input("x", {1, 3, 2, 2}).output("y");
    attr(m.node("DepthToSpace", {"x"}, {"y"}, "d2s"), "blocksize", int64_t{2});
    auto r = parseOnly(m.bytes());
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.desc.find("d2s"), std::string::npos) << r.desc;
  }
}

}  // namespace
