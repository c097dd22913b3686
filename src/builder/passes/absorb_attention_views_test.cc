// Tests of absorb_attention_views: torch.nn.MultiheadAttention's in_proj split (torch 1.13's three Slices, torch
// 2.x's unflatten/unsqueeze/transpose/squeeze + three Gathers), head split and head merge around a fused Attention
// go; the Attention reads the in_proj output packed in layout 2 (or 1, batch_first) with the same outputs; chains
// that do not give q, k, v and y in that order stay.
#include "builder/passes/pass_test_util.h"
#include "builder/passes/pipeline.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

std::string replaced(std::string text, std::string const& from, std::string const& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// torch 1.13's export of nn.MultiheadAttention in torchvision's ViT after fuse_attention, as imported with
// static shapes (S 5, B 2, E 32, H 2, D 16): in_proj [S, B, 3E], Slices along E, Reshape to [S, B*H, D],
// Transpose(1, 0, 2); the head merge Transpose(1, 0, 2) + Reshape to [S*B, E] before the out_proj.
constexpr char kTorch113[] =
    "graph {\n"
    "  input x: f32[5,2,32]\n"
    "  w: f32[32,96] = Constant \"w\" () {data=random(1)}\n"
    "  bias: f32[96] = Constant \"bias\" () {data=random(2)}\n"
    "  wo: f32[32,32] = Constant \"wo\" () {data=random(3)}\n"
    "  st0: i64[1] = Constant \"st0\" () {data=[0]}\n"
    "  st1: i64[1] = Constant \"st1\" () {data=[32]}\n"
    "  st2: i64[1] = Constant \"st2\" () {data=[64]}\n"
    "  sz: i64[1] = Constant \"sz\" () {data=[32]}\n"
    "  one: i64[1] = Constant \"one\" () {data=[1]}\n"
    "  ax: i64[1] = Constant \"ax\" () {data=[2]}\n"
    "  shp: i64[3] = Constant \"shp\" () {data=[5,4,16]}\n"
    "  oshp: i64[2] = Constant \"oshp\" () {data=[10,32]}\n"
    "  p: f32[5,2,96] = MatrixMultiply \"inproj\" (x, w, bias) {op_a=0, op_b=0}\n"
    "  qs: f32[5,2,32] = Slice \"sq\" (p, st0, sz, one, _, ax) {mode=0}\n"
    "  ks: f32[5,2,32] = Slice \"sk\" (p, st1, sz, one, _, ax) {mode=0}\n"
    "  vs: f32[5,2,32] = Slice \"sv\" (p, st2, sz, one, _, ax) {mode=0}\n"
    "  qr: f32[5,4,16] = Shuffle \"rq\" (qs, shp)\n"
    "  kr: f32[5,4,16] = Shuffle \"rk\" (ks, shp)\n"
    "  vr: f32[5,4,16] = Shuffle \"rv\" (vs, shp)\n"
    "  q: f32[4,5,16] = Shuffle \"tq\" (qr) {first_perm=[1,0,2]}\n"
    "  k: f32[4,5,16] = Shuffle \"tk\" (kr) {first_perm=[1,0,2]}\n"
    "  v: f32[4,5,16] = Shuffle \"tv\" (vr) {first_perm=[1,0,2]}\n"
    "  y: f32[4,5,16] = Attention \"att\" (q, k, v) {k_transposed=0, nan_to_zero=0, scale=0.25}\n"
    "  yt: f32[5,4,16] = Shuffle \"ty\" (y) {first_perm=[1,0,2]}\n"
    "  yr: f32[10,32] = Shuffle \"ry\" (yt, oshp)\n"
    "  o: f32[10,32] = MatrixMultiply \"outproj\" (yr, wo) {op_a=0, op_b=0}\n"
    "  output o\n"
    "}\n";

// The graph after the pass (expected to fire) with the unfused graph's outputs; its packed Attention's layout.
int64_t absorbChecked(std::string const& text) {
  auto g = testing::parseInferred(text);
  if (!g) return -1;
  auto before = g->clone();
  PassContext ctx;
  std::vector<std::string> log;
  ctx.log = &log;
  EXPECT_TRUE(testing::runPass(*createAbsorbAttentionViewsPass(), *g, &ctx));
  Status st = ir::inferGraphInPlace(*g, &testing::evaluator());
  EXPECT_TRUE(st.isOk()) << st.toString();
  EXPECT_EQ(log.size(), 1u);
  testing::expectSameOutputs(*before, *g, 1e-5);
  // Only the two views are left of the data movement: no Slice, Gather, Squeeze, Unsqueeze.
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kShuffle), 2) << ir::printGraph(*g);
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kSlice) + testing::countOps(*g, ir::OpType::kGather) +
                testing::countOps(*g, ir::OpType::kSqueeze) + testing::countOps(*g, ir::OpType::kUnsqueeze),
            0)
      << ir::printGraph(*g);
  for (auto const& n : g->nodes())
    if (n->op == ir::OpType::kAttention) {
      EXPECT_EQ(n->attrs.getInt("packed_qkv", 0), 1);
      EXPECT_EQ(n->attrs.getFloat("scale", 0), 0.25);
      return n->attrs.getInt("layout", 0);
    }
  return -1;
}

TEST(AbsorbAttentionViews, Torch113Slices) {
  EXPECT_EQ(absorbChecked(kTorch113), 2);
  auto g = testing::parseInferred(kTorch113);
  ASSERT_TRUE(g);
  ASSERT_TRUE(testing::runPass(*createAbsorbAttentionViewsPass(), *g));
  std::string const text = ir::printGraph(*g);
  EXPECT_NE(text.find("f32[5,2,3,2,16] = Shuffle \"att_qkv_view\" (p) {reshape=[0,0,3,2,16], zero_is_placeholder=1}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("@fused=[\"att_qkv_view\",\"sq\",\"rq\",\"tq\",\"sk\",\"rk\",\"tk\",\"sv\",\"rv\",\"tv\"]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("f32[5,2,2,16] = Attention \"att_packed\" (att_qkv_view_output, _, _) {k_transposed=0, "
                      "layout=2, nan_to_zero=0, packed_qkv=1, scale=0.25}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("att_y_view_output: f32[10,32] = Shuffle \"att_y_view\" (att_packed_output) {reshape=[10,32]"),
            std::string::npos)
      << text;
}

// batch_first MultiheadAttention: the in_proj output is [B, S, 3E], heads split from [B, S, H, D].
TEST(AbsorbAttentionViews, BatchFirstGivesLayout1) {
  std::string text = kTorch113;
  text = replaced(text, "input x: f32[5,2,32]", "input x: f32[2,5,32]");
  text = replaced(text, "p: f32[5,2,96]", "p: f32[2,5,96]");
  for (char const* s : {"qs", "ks", "vs"})
    text = replaced(text, strCat(s, ": f32[5,2,32]"), strCat(s, ": f32[2,5,32]"));
  // [B, S, E] -> [B, S, H, D] -> [B, H, S, D] -> [B*H, S, D] in one Shuffle each; back by the inverse.
  for (char const* p : {"q", "k", "v"}) {
    text = replaced(text, strCat("  ", p, "r: f32[5,4,16] = Shuffle \"r", p, "\" (", p, "s, shp)\n"),
                    strCat("  ", p, "r: f32[2,2,5,16] = Shuffle \"r", p, "\" (", p,
                           "s) {reshape=[2,5,2,16], second_perm=[0,2,1,3]}\n"));
    text = replaced(text, strCat("  ", p, ": f32[4,5,16] = Shuffle \"t", p, "\" (", p, "r) {first_perm=[1,0,2]}\n"),
                    strCat("  ", p, ": f32[4,5,16] = Shuffle \"t", p, "\" (", p, "r) {reshape=[4,5,16]}\n"));
  }
  text = replaced(text, "  yt: f32[5,4,16] = Shuffle \"ty\" (y) {first_perm=[1,0,2]}\n",
                  "  yt: f32[2,5,2,16] = Shuffle \"ty\" (y) {reshape=[2,2,5,16], second_perm=[0,2,1,3]}\n");
  EXPECT_EQ(absorbChecked(text), 1);
}

// torch 2.x's F.multi_head_attention_forward: proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2)
// .squeeze(-2), then proj[0], proj[1], proj[2] (Gathers); heads split by view [S, B*H, D], transpose, view
// [B, H, S, D]; merged by permute(2, 0, 1, 3) and view [S*B, E].
constexpr char kTorch2[] =
    "graph {\n"
    "  input x: f32[5,2,32]\n"
    "  w: f32[32,96] = Constant \"w\" () {data=random(1)}\n"
    "  bias: f32[96] = Constant \"bias\" () {data=random(2)}\n"
    "  wo: f32[32,32] = Constant \"wo\" () {data=random(3)}\n"
    "  a0: i64[1] = Constant \"a0\" () {data=[0]}\n"
    "  a3: i64[1] = Constant \"a3\" () {data=[3]}\n"
    "  i0: i64[] = Constant \"i0\" () {data=[0]}\n"
    "  i1: i64[] = Constant \"i1\" () {data=[1]}\n"
    "  i2: i64[] = Constant \"i2\" () {data=[2]}\n"
    "  p: f32[5,2,96] = MatrixMultiply \"inproj\" (x, w, bias) {op_a=0, op_b=0}\n"
    "  u: f32[5,2,3,32] = Shuffle \"unflatten\" (p) {reshape=[5,2,3,32]}\n"
    "  u1: f32[1,5,2,3,32] = Unsqueeze \"unsqueeze\" (u, a0)\n"
    "  u2: f32[3,5,2,1,32] = Shuffle \"transpose\" (u1) {first_perm=[3,1,2,0,4]}\n"
    "  u3: f32[3,5,2,32] = Squeeze \"squeeze\" (u2, a3)\n"
    "  qg: f32[5,2,32] = Gather \"gq\" (u3, i0) {axis=0, mode=0, num_elementwise_dims=0}\n"
    "  kg: f32[5,2,32] = Gather \"gk\" (u3, i1) {axis=0, mode=0, num_elementwise_dims=0}\n"
    "  vg: f32[5,2,32] = Gather \"gv\" (u3, i2) {axis=0, mode=0, num_elementwise_dims=0}\n"
    "  q1: f32[4,5,16] = Shuffle \"q1\" (qg) {reshape=[5,4,16], second_perm=[1,0,2]}\n"
    "  k1: f32[4,5,16] = Shuffle \"k1\" (kg) {reshape=[5,4,16], second_perm=[1,0,2]}\n"
    "  v1: f32[4,5,16] = Shuffle \"v1\" (vg) {reshape=[5,4,16], second_perm=[1,0,2]}\n"
    "  q: f32[2,2,5,16] = Shuffle \"q2\" (q1) {reshape=[2,2,5,16]}\n"
    "  k: f32[2,2,5,16] = Shuffle \"k2\" (k1) {reshape=[2,2,5,16]}\n"
    "  v: f32[2,2,5,16] = Shuffle \"v2\" (v1) {reshape=[2,2,5,16]}\n"
    "  y: f32[2,2,5,16] = Attention \"att\" (q, k, v) {k_transposed=0, nan_to_zero=0, scale=0.25}\n"
    "  yp: f32[5,2,2,16] = Shuffle \"permute\" (y) {first_perm=[2,0,1,3]}\n"
    "  yr: f32[10,32] = Shuffle \"view\" (yp) {reshape=[10,32]}\n"
    "  o: f32[10,32] = MatrixMultiply \"outproj\" (yr, wo) {op_a=0, op_b=0}\n"
    "  output o\n"
    "}\n";

TEST(AbsorbAttentionViews, Torch2Gathers) { EXPECT_EQ(absorbChecked(kTorch2), 2); }

// K's head split and transpose as one Shuffle (as identity elimination merges them): fuse_attention leaves
// k_transposed 1, and the packed Attention reads k untransposed.
TEST(AbsorbAttentionViews, TransposedKeys) {
  std::string text = kTorch113;
  text = replaced(text, "  kr: f32[5,4,16] = Shuffle \"rk\" (ks, shp)\n", "");
  text = replaced(text, "  k: f32[4,5,16] = Shuffle \"tk\" (kr) {first_perm=[1,0,2]}\n",
                  "  k: f32[4,16,5] = Shuffle \"tk\" (ks) {reshape=[5,4,16], second_perm=[1,2,0]}\n");
  text = replaced(text, "(q, k, v) {k_transposed=0,", "(q, k, v) {k_transposed=1,");
  EXPECT_EQ(absorbChecked(text), 2);
}

// The level-3 pipeline on the unfused torch 1.13 form with static reshapes (as gpu_e2e's
// GpuModels.MultiheadAttentionReadsTheInProjectionPacked defines it): identity elimination merges the head
// splits' reshapes and transposes, fuse_attention fuses, this pass takes the views: no Slice is left.
TEST(AbsorbAttentionViews, PipelineOnUnfusedMultiheadAttention) {
  std::string text = kTorch113;
  text = replaced(text, "  k: f32[4,5,16] = Shuffle \"tk\" (kr) {first_perm=[1,0,2]}\n",
                  "  k: f32[4,16,5] = Shuffle \"tk\" (kr) {first_perm=[1,2,0]}\n");
  text = replaced(text, "  y: f32[4,5,16] = Attention \"att\" (q, k, v) {k_transposed=0, nan_to_zero=0, scale=0.25}\n",
                  "  c: f32[1,1,1] = Constant \"c\" () {data=[0.25]}\n"
                  "  qc: f32[4,5,16] = ElementWise \"scale\" (q, c) {op=1}\n"
                  "  sc: f32[4,5,5] = MatrixMultiply \"qk\" (qc, k) {op_a=0, op_b=0}\n"
                  "  pr: f32[4,5,5] = SoftMax \"softmax\" (sc) {axis=2}\n"
                  "  y: f32[4,5,16] = MatrixMultiply \"pv\" (pr, v) {op_a=0, op_b=0}\n");
  auto g = testing::parseInferred(text);
  ASSERT_TRUE(g);
  auto before = g->clone();
  PassContext ctx;
  ctx.evaluator = &testing::evaluator();
  Status st = runPipeline(*g, ctx);
  ASSERT_TRUE(st.isOk()) << st.toString();
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kSlice), 0) << ir::printGraph(*g);
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kShuffle), 2) << ir::printGraph(*g);
  int packed = 0;
  for (auto const& n : g->nodes())
    packed +=
        n->op == ir::OpType::kAttention && n->attrs.getInt("packed_qkv", 0) == 1 && n->attrs.getInt("layout", 0) == 2;
  EXPECT_EQ(packed, 1) << ir::printGraph(*g);
  testing::expectSameOutputs(*before, *g, 1e-5);
}

// A dynamic batch in the IR that the optimization profiles fix (kilnexec --shapes): the in_proj output is
// [5, -1, 96]; the chains are proven at the profiles' shape, the packed view copies P's dims.
TEST(AbsorbAttentionViews, DynamicBatchFixedByTheProfiles) {
  std::string text = kTorch113;
  text = replaced(text, "input x: f32[5,2,32]", "input x: f32[5,-1,32]");
  text = replaced(text, "p: f32[5,2,96]", "p: f32[5,-1,96]");
  for (char const* v : {"qs", "ks", "vs"})
    text = replaced(text, strCat(v, ": f32[5,2,32]"), strCat(v, ": f32[5,-1,32]"));
  auto pass = createAbsorbAttentionViewsPass();
  testing::expectNoRewrite(*pass, text);  // without profiles the source's shape is unknown
  auto g = testing::parseInferred(text);
  ASSERT_TRUE(g);
  auto before = g->clone();
  std::vector<std::vector<Dims>> const profiles(3, std::vector<Dims>{makeDims({5, 2, 32})});
  PassContext ctx;
  ctx.profileInputs = &profiles;
  ASSERT_TRUE(testing::runPass(*pass, *g, &ctx));
  Status st = ir::inferGraphInPlace(*g, &testing::evaluator());
  ASSERT_TRUE(st.isOk()) << st.toString();
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kSlice), 0);
  ir::Node const* view = nullptr;
  for (auto const& n : g->nodes())
    if (n->name == "att_qkv_view") view = n.get();
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->attrs.getInts("reshape"), (std::vector<int64_t>{0, 0, 3, 2, 16}));
  EXPECT_EQ(dimsToString(view->outputs[0]->shape), "[5,-1,3,2,16]");
  std::vector<HostTensor> in = testing::randomInputs(*before, 3, 2);
  auto ra = backends::runGraphOnHost(*before, in);
  auto rb = backends::runGraphOnHost(*g, in);
  ASSERT_TRUE(ra.isOk()) << ra.status().toString();
  ASSERT_TRUE(rb.isOk()) << rb.status().toString();
  EXPECT_LE(testing::relativeError((*rb)[0], (*ra)[0]), 1e-5);
  // Profiles that disagree on the batch prove nothing.
  auto g2 = testing::parseInferred(text);
  ASSERT_TRUE(g2);
  std::vector<std::vector<Dims>> const ranged{{makeDims({5, 1, 32})}, {makeDims({5, 2, 32})}, {makeDims({5, 4, 32})}};
  ctx.profileInputs = &ranged;
  EXPECT_FALSE(testing::runPass(*pass, *g2, &ctx));
}

// `layers` torch 1.13 multi-head attention blocks (kTorch113's form) on one input x [S, B, E] with H heads, each
// with weights and names of its own (suffix = the layer's index), the blocks' outputs summed into one output.
std::string multiheadLayers(int layers, int64_t s, int64_t b, int64_t e, int64_t h) {
  int64_t const d = e / h;
  std::string t = strCat("graph {\n  input x: f32[", s, ",", b, ",", e, "]\n");
  auto dims = [](std::vector<int64_t> const& v) {
    std::string r;
    for (size_t i = 0; i < v.size(); ++i) r += strCat(i ? "," : "", v[i]);
    return r;
  };
  std::string prev;
  for (int l = 0; l < layers; ++l) {
    auto n = [l](char const* base) { return strCat(base, l); };
    std::string const sbe = dims({s, b, e}), split = dims({s, b * h, d}), heads = dims({b * h, s, d});
    t += strCat("  ", n("w"), ": f32[", e, ",", 3 * e, "] = Constant \"", n("w"), "\" () {data=random(", l + 1, ")}\n");
    for (int i = 0; i < 3; ++i)
      t += strCat("  ", n("st"), i, ": i64[1] = Constant \"", n("st"), i, "\" () {data=[", i * e, "]}\n");
    t += strCat("  ", n("sz"), ": i64[1] = Constant \"", n("sz"), "\" () {data=[", e, "]}\n");
    t += strCat("  ", n("one"), ": i64[1] = Constant \"", n("one"), "\" () {data=[1]}\n");
    t += strCat("  ", n("ax"), ": i64[1] = Constant \"", n("ax"), "\" () {data=[2]}\n");
    t += strCat("  ", n("shp"), ": i64[3] = Constant \"", n("shp"), "\" () {data=[", split, "]}\n");
    t += strCat("  ", n("oshp"), ": i64[2] = Constant \"", n("oshp"), "\" () {data=[", s * b, ",", e, "]}\n");
    t += strCat("  ", n("p"), ": f32[", dims({s, b, 3 * e}), "] = MatrixMultiply \"", n("inproj"), "\" (x, ", n("w"),
                ") {op_a=0, op_b=0}\n");
    char const* qkv[] = {"q", "k", "v"};
    for (int i = 0; i < 3; ++i) {
      std::string const x = qkv[i];
      t += strCat("  ", n((x + "s").c_str()), ": f32[", sbe, "] = Slice \"", n(("s" + x).c_str()), "\" (", n("p"), ", ",
                  n("st"), i, ", ", n("sz"), ", ", n("one"), ", _, ", n("ax"), ") {mode=0}\n");
      t += strCat("  ", n((x + "r").c_str()), ": f32[", split, "] = Shuffle \"", n(("r" + x).c_str()), "\" (",
                  n((x + "s").c_str()), ", ", n("shp"), ")\n");
      t += strCat("  ", n(x.c_str()), ": f32[", heads, "] = Shuffle \"", n(("t" + x).c_str()), "\" (",
                  n((x + "r").c_str()), ") {first_perm=[1,0,2]}\n");
    }
    t += strCat("  ", n("y"), ": f32[", heads, "] = Attention \"", n("att"), "\" (", n("q"), ", ", n("k"), ", ", n("v"),
                ") {k_transposed=0, nan_to_zero=0, scale=0.25}\n");
    t += strCat("  ", n("yt"), ": f32[", split, "] = Shuffle \"", n("ty"), "\" (", n("y"), ") {first_perm=[1,0,2]}\n");
    t += strCat("  ", n("yr"), ": f32[", s * b, ",", e, "] = Shuffle \"", n("ry"), "\" (", n("yt"), ", ", n("oshp"),
                ")\n");
    if (l > 0) {
      t += strCat("  ", n("sum"), ": f32[", s * b, ",", e, "] = ElementWise \"", n("sum"), "\" (", prev, ", ", n("yr"),
                  ") {op=0}\n");
      prev = n("sum");
    } else {
      prev = n("yr");
    }
  }
  return t + strCat("  output ", prev, "\n}\n");
}

// Identical chains in every layer (as ViT's 12): the first layer's proof serves the others, so the index tensors
// probed are one layer's whatever the layer count (ViT-B at batch 64 ran ~29 M elements per layer before).
TEST(AbsorbAttentionViews, IdenticalChainsOfOtherLayersReuseTheProof) {
  // Small shapes: the outputs are compared with the unfused graph's.
  {
    auto g = testing::parseInferred(multiheadLayers(2, 5, 2, 32, 2));
    ASSERT_TRUE(g);
    auto before = g->clone();
    PassContext ctx;
    std::vector<std::string> log;
    ctx.log = &log;
    ASSERT_TRUE(testing::runPass(*createAbsorbAttentionViewsPass(), *g, &ctx));
    ASSERT_EQ(log.size(), 2u);
    EXPECT_NE(log[0].find("proven on 1280 elements, 1280 probed"), std::string::npos) << log[0];
    EXPECT_NE(log[1].find("proven before for identical chains, 1280 probed"), std::string::npos) << log[1];
    EXPECT_EQ(testing::countOps(*g, ir::OpType::kSlice), 0);
    testing::expectSameOutputs(*before, *g, 1e-5);
  }
  // Twelve layers at a larger shape: one layer's elements probed, every layer absorbed.
  auto g = testing::parseInferred(multiheadLayers(12, 50, 8, 64, 2));
  ASSERT_TRUE(g);
  PassContext ctx;
  std::vector<std::string> log;
  ctx.log = &log;
  ASSERT_TRUE(testing::runPass(*createAbsorbAttentionViewsPass(), *g, &ctx));
  ASSERT_EQ(log.size(), 12u);
  int64_t const oneLayer = 50 * 8 * 3 * 64 + 50 * 8 * 64;
  EXPECT_NE(log.back().find(strCat(", ", oneLayer, " probed")), std::string::npos) << log.back();
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kSlice), 0);
  int packed = 0;
  for (auto const& n : g->nodes()) packed += n->op == ir::OpType::kAttention && n->attrs.getInt("packed_qkv", 0) == 1;
  EXPECT_EQ(packed, 12);
}

TEST(AbsorbAttentionViews, NearMissesStay) {
  auto pass = createAbsorbAttentionViewsPass();
  // q and k from each other's slots of the packed projection.
  testing::expectNoRewrite(
      *pass, replaced(replaced(replaced(kTorch113, "(p, st0, sz", "(p, TMP, sz"), "(p, st1, sz", "(p, st0, sz"),
                      "(p, TMP, sz", "(p, st1, sz"));
  // The heads merged in another order (no transpose before the reshape).
  testing::expectNoRewrite(
      *pass, replaced(replaced(kTorch113, "  yt: f32[5,4,16] = Shuffle \"ty\" (y) {first_perm=[1,0,2]}\n", ""),
                      "Shuffle \"ry\" (yt, oshp)", "Shuffle \"ry\" (y, oshp)"));
  // A slice read elsewhere too.
  testing::expectNoRewrite(*pass, replaced(kTorch113, "  output o\n", "  output o\n  output ks\n"));
  // Nothing after y moves data: y would need a copy.
  testing::expectNoRewrite(*pass, replaced(kTorch113, "  output o\n", "  output o\n  output y\n"));
}

}  // namespace
}  // namespace kiln::builder
