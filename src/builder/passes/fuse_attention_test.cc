// Tests of attention fusion: the BERT (SDPA with mask and NaN cleanup), ViT (scaled q and k^T) and plain
// (Div by a constant, mask) forms become one Attention node with the same outputs; BERT's head-splitting and
// -merging Transposes fold into layout 1 only when all of them can; near misses and CPU builds are left alone.
#include "builder/passes/pass_test_util.h"
#include "builder/passes/pipeline.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

// PyTorch 2.11's opset-17 export of HuggingFace BertModel's attention, as imported: heads split by Transposes,
// sqrt(scale) on q and k^T, the padding mask Where(mask, 0, -large) added, NaN probabilities replaced by 0.
constexpr char kBert[] =
    "graph {\n"
    "  input qin: f32[2,6,2,8]\n"
    "  input kin: f32[2,6,2,8]\n"
    "  input vin: f32[2,6,2,8]\n"
    "  input am: bool[2,1,1,6]\n"
    "  c1: f32[1] = Constant \"c1\" () {data=[0.5946035575013605]}\n"
    "  c2: f32[1] = Constant \"c2\" () {data=[0.5946035575013605]}\n"
    "  zero: f32[1] = Constant \"zero\" () {data=[0.0]}\n"
    "  neg: f32[1] = Constant \"neg\" () {data=[-3.4e+38]}\n"
    "  pz: f32[1] = Constant \"pz\" () {data=[0.0]}\n"
    "  q: f32[2,2,6,8] = Shuffle \"tq\" (qin) {first_perm=[0,2,1,3]}\n"
    "  kt: f32[2,2,8,6] = Shuffle \"tk\" (kin) {first_perm=[0,2,3,1]}\n"
    "  v: f32[2,2,6,8] = Shuffle \"tv\" (vin) {first_perm=[0,2,1,3]}\n"
    "  qs: f32[2,2,6,8] = ElementWise \"mq\" (q, c1) {op=1}\n"
    "  ks: f32[2,2,8,6] = ElementWise \"mk\" (kt, c2) {op=1}\n"
    "  s: f32[2,2,6,6] = MatrixMultiply \"qk\" (qs, ks) {op_a=0, op_b=0}\n"
    "  m: f32[2,1,1,6] = Select \"mask\" (am, zero, neg)\n"
    "  s2: f32[2,2,6,6] = ElementWise \"add\" (s, m) {op=0}\n"
    "  p: f32[2,2,6,6] = SoftMax \"softmax\" (s2) {axis=3}\n"
    "  nan: bool[2,2,6,6] = Unary \"isnan\" (p) {op=24}\n"
    "  p2: f32[2,2,6,6] = Select \"where\" (nan, pz, p)\n"
    "  o: f32[2,2,6,8] = MatrixMultiply \"pv\" (p2, v) {op_a=0, op_b=0}\n"
    "  ot: f32[2,6,2,8] = Shuffle \"to\" (o) {first_perm=[0,2,1,3]}\n"
    "  output ot\n"
    "}\n";

TEST(FuseAttention, Bert) {
  auto pass = createFuseAttentionPass();
  // Every head-splitting Transpose (K's 0,2,3,1 included) and the head-merging one are read only by the attention:
  // they go, and the attention reads and writes [B, S, H, D] (layout 1). The dead constants go with dead-layer
  // elimination.
  testing::expectRewrite(
      *pass, kBert,
      "graph {\n"
      "  input qin: f32[2,6,2,8]\n"
      "  input kin: f32[2,6,2,8]\n"
      "  input vin: f32[2,6,2,8]\n"
      "  input am: bool[2,1,1,6]\n"
      "  c1: f32[1] = Constant \"c1\" () {data=[0.59460354]}\n"
      "  c2: f32[1] = Constant \"c2\" () {data=[0.59460354]}\n"
      "  zero: f32[1] = Constant \"zero\" () {data=[0.0]}\n"
      "  neg: f32[1] = Constant \"neg\" () {data=[-3.4e+38]}\n"
      "  pz: f32[1] = Constant \"pz\" () {data=[0.0]}\n"
      "  m: f32[2,1,1,6] = Select \"mask\" (am, zero, neg)\n"
      "  ot: f32[2,6,2,8] = Attention \"qk_attention\" (qin, kin, vin, m) {k_transposed=0, layout=1, "
      "nan_to_zero=1, scale=0.353553368012399} "
      "@fused=[\"softmax\",\"add\",\"qk\",\"mq\",\"mk\",\"isnan\",\"where\",\"pv\",\"tq\",\"tk\",\"tv\",\"to\"]\n"
      "  output ot\n"
      "}\n",
      1e-5);
}

// torchvision vit_b_16: sqrt(scale) (a constant once the profile fixes the shapes) on q and on k^T.
constexpr char kVit[] =
    "graph {\n"
    "  input q: f32[2,3,5,16]\n"
    "  input k: f32[2,3,5,16]\n"
    "  input v: f32[2,3,5,16]\n"
    "  c: f32[] = Constant \"c\" () {data=[0.5]}\n"
    "  qs: f32[2,3,5,16] = ElementWise \"mq\" (q, c) {op=1}\n"
    "  kt: f32[2,3,16,5] = Shuffle \"tk\" (k) {first_perm=[0,1,3,2]}\n"
    "  ks: f32[2,3,16,5] = ElementWise \"mk\" (kt, c) {op=1}\n"
    "  s: f32[2,3,5,5] = MatrixMultiply \"qk\" (qs, ks) {op_a=0, op_b=0}\n"
    "  p: f32[2,3,5,5] = SoftMax \"softmax\" (s) {axis=3}\n"
    "  o: f32[2,3,5,16] = MatrixMultiply \"pv\" (p, v) {op_a=0, op_b=0}\n"
    "  output o\n"
    "}\n";

TEST(FuseAttention, Vit) {
  auto pass = createFuseAttentionPass();
  // The swap of k's last two axes goes: the kernel reads k as it is.
  testing::expectRewrite(*pass, kVit,
                         "graph {\n"
                         "  input q: f32[2,3,5,16]\n"
                         "  input k: f32[2,3,5,16]\n"
                         "  input v: f32[2,3,5,16]\n"
                         "  c: f32[] = Constant \"c\" () {data=[0.5]}\n"
                         "  o: f32[2,3,5,16] = Attention \"qk_attention\" (q, k, v) {k_transposed=0, nan_to_zero=0, "
                         "scale=0.25} @fused=[\"softmax\",\"qk\",\"mq\",\"mk\",\"pv\",\"tk\"]\n"
                         "  output o\n"
                         "}\n",
                         1e-5);
}

// The eager form: (q k^T) / sqrt(d) + mask, k^T as the matmul's transpose flag; dynamic sequence lengths; the
// mask broadcast over batch and heads.
constexpr char kPlain[] =
    "graph {\n"
    "  input q: f32[3,-1,8]\n"
    "  input k: f32[3,-1,8]\n"
    "  input v: f32[3,-1,24]\n"
    "  input m: f32[1,-1]\n"
    "  d: f32[1] = Constant \"d\" () {data=[2.8284271247461903]}\n"
    "  s: f32[3,-1,-1] = MatrixMultiply \"qk\" (q, k) {op_a=0, op_b=1}\n"
    "  sd: f32[3,-1,-1] = ElementWise \"div\" (s, d) {op=5}\n"
    "  s2: f32[3,-1,-1] = ElementWise \"add\" (m, sd) {op=0}\n"
    "  p: f32[3,-1,-1] = SoftMax \"softmax\" (s2) {axis=2}\n"
    "  o: f32[3,-1,24] = MatrixMultiply \"pv\" (p, v) {op_a=0, op_b=0}\n"
    "  output o\n"
    "}\n";

TEST(FuseAttention, PlainDivAndMask) {
  auto pass = createFuseAttentionPass();
  testing::expectRewrite(*pass, kPlain,
                         "graph {\n"
                         "  input q: f32[3,-1,8]\n"
                         "  input k: f32[3,-1,8]\n"
                         "  input v: f32[3,-1,24]\n"
                         "  input m: f32[1,-1]\n"
                         "  d: f32[1] = Constant \"d\" () {data=[2.828427]}\n"
                         "  o: f32[3,-1,24] = Attention \"qk_attention\" (q, k, v, m) {k_transposed=0, nan_to_zero=0, "
                         "scale=0.3535533966440824} @fused=[\"softmax\",\"add\",\"div\",\"qk\",\"pv\"]\n"
                         "  output o\n"
                         "}\n",
                         1e-5);
}

// Replaces the first occurrence of `from` in `text`.
std::string replaced(std::string text, std::string const& from, std::string const& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(FuseAttention, AVectorFactorStaysALayer) {
  // q scaled per column: not a scale of the scores, so the Mul stays and its output is q.
  std::string text = replaced(kVit, "  c: f32[] = Constant \"c\" () {data=[0.5]}\n",
                              "  c: f32[] = Constant \"c\" () {data=[0.5]}\n"
                              "  cv: f32[16] = Constant \"cv\" () {data=random(3)}\n");
  text = replaced(text, "ElementWise \"mq\" (q, c)", "ElementWise \"mq\" (q, cv)");
  auto g = testing::parseInferred(text);
  ASSERT_TRUE(g);
  auto before = g->clone();
  ASSERT_TRUE(testing::runPass(*createFuseAttentionPass(), *g));
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kAttention), 1);
  ir::Node const* mq = g->findNode("mq");
  ASSERT_NE(mq, nullptr);
  for (auto const& n : g->nodes())
    if (n->op == ir::OpType::kAttention) {
      EXPECT_EQ(n->inputs[0], mq->outputs[0]);
      EXPECT_DOUBLE_EQ(n->attrs.getFloat("scale", 0), 0.5);
    }
  testing::expectSameOutputs(*before, *g, 1e-5);
}

TEST(FuseAttention, NearMissesStay) {
  auto pass = createFuseAttentionPass();
  // The scores are read by another layer.
  testing::expectNoRewrite(*pass, replaced(kPlain, "  output o\n", "  output o\n  output s\n"));
  // The probabilities are a graph output.
  testing::expectNoRewrite(*pass, replaced(kBert, "  output ot\n", "  output ot\n  output p\n"));
  // The softmax is not over the last axis.
  testing::expectNoRewrite(*pass, replaced(kVit, "{axis=3}", "{axis=2}"));
  // NaNs replaced by something other than 0.
  testing::expectNoRewrite(*pass, replaced(kBert, "pz: f32[1] = Constant \"pz\" () {data=[0.0]}",
                                           "pz: f32[1] = Constant \"pz\" () {data=[1.0]}"));
  // A head dim the CUDA kernels do not take (not a multiple of 8).
  std::string odd = kPlain;
  for (char const* from : {"f32[3,-1,8]", "f32[3,-1,8]"}) odd = replaced(odd, from, "f32[3,-1,12]");
  testing::expectNoRewrite(*pass, odd);
  // A mask that enlarges the scores.
  testing::expectNoRewrite(*pass, replaced(replaced(kPlain, "input m: f32[1,-1]", "input m: f32[2,3,-1,-1]"),
                                           "s2: f32[3,-1,-1]", "s2: f32[2,3,-1,-1]"));
}

// The fused node's layout attribute (-1 without an Attention node).
int64_t attentionLayout(ir::Graph const& g) {
  for (auto const& n : g.nodes())
    if (n->op == ir::OpType::kAttention) return n->attrs.getInt("layout", 0);
  return -1;
}

// Runs the pass on `text`, expecting it to fire with outputs equal to the unfused graph's; the fused graph.
std::unique_ptr<ir::Graph> fuseChecked(std::string const& text) {
  auto g = testing::parseInferred(text);
  if (!g) return nullptr;
  auto before = g->clone();
  EXPECT_TRUE(testing::runPass(*createFuseAttentionPass(), *g));
  Status st = ir::inferGraphInPlace(*g, &testing::evaluator());
  EXPECT_TRUE(st.isOk()) << st.toString();
  testing::expectSameOutputs(*before, *g, 1e-5);
  return g;
}

// Layout 0 with a transposition kept: the BERT pattern with one Shuffle that cannot go. K's Transpose still loses
// its last-two-axes swap (layout 0's k^T handling), the others stay as they were.
void expectLayout0(std::string const& text) {
  auto g = fuseChecked(text);
  ASSERT_TRUE(g);
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kAttention), 1);
  EXPECT_EQ(attentionLayout(*g), 0) << ir::printGraph(*g);
}

TEST(FuseAttention, BertLayoutNeedsEveryTransposeAbsorbed) {
  // q's Transpose has a second reader.
  expectLayout0(replaced(kBert, "  output ot\n", "  output ot\n  output q\n"));
  // v's Transpose is also read by another layer.
  expectLayout0(replaced(kBert, "  output ot\n",
                         "  vv: f32[2,2,6,8] = ElementWise \"vv\" (v, v) {op=0}\n  output ot\n  output vv\n"));
  // The attention output has a second reader (it is a graph output too).
  expectLayout0(replaced(kBert, "  output ot\n", "  output ot\n  output o\n"));
  // The output goes back another way ([S, B, H, D] as torch.nn.MultiheadAttention's permute(2, 0, 1, 3)).
  expectLayout0(replaced(kBert, "  ot: f32[2,6,2,8] = Shuffle \"to\" (o) {first_perm=[0,2,1,3]}\n",
                         "  ot: f32[6,2,2,8] = Shuffle \"to\" (o) {first_perm=[2,0,1,3]}\n"));
  // q is split another way: [S, B, H, D] in, perm 1,2,0,3.
  expectLayout0(replaced(replaced(kBert, "  input qin: f32[2,6,2,8]\n", "  input qin: f32[6,2,2,8]\n"),
                         "Shuffle \"tq\" (qin) {first_perm=[0,2,1,3]}", "Shuffle \"tq\" (qin) {first_perm=[1,2,0,3]}"));
  // v is not made by a Shuffle at all.
  expectLayout0(replaced(replaced(kBert, "  input vin: f32[2,6,2,8]\n", "  input vin: f32[2,2,6,8]\n"),
                         "  v: f32[2,2,6,8] = Shuffle \"tv\" (vin) {first_perm=[0,2,1,3]}\n",
                         "  v: f32[2,2,6,8] = Identity \"tv\" (vin)\n"));
}

TEST(FuseAttention, BertLayoutNeedsKnownBatchAndHeads) {
  // A dynamic batch: q, k and v could broadcast against each other at run time, which layout 1 does not do.
  std::string text = replaced(kBert, "input am: bool[2,1,1,6]", "input am: bool[1,1,1,6]");
  for (int i = 0; i < 3; ++i) text = replaced(text, ": f32[2,6,2,8]\n", ": f32[-1,6,2,8]\n");
  expectLayout0(text);
}

// BERT as the ONNX importer gives it after the profile fixed the shapes: MatMul -> Reshape (a shape tensor with a
// -1, HF's view(*input_shape, -1, head_dim)) -> Transpose per operand, and Transpose -> Reshape on the output.
constexpr char kBertImported[] =
    "graph {\n"
    "  input x: f32[2,6,16]\n"
    "  input m: f32[2,1,1,6]\n"
    "  wq: f32[16,16] = Constant \"wq\" () {data=random(1)}\n"
    "  wk: f32[16,16] = Constant \"wk\" () {data=random(2)}\n"
    "  wv: f32[16,16] = Constant \"wv\" () {data=random(3)}\n"
    "  shp: i64[4] = Constant \"shp\" () {data=[2,6,-1,8]}\n"
    "  oshp: i64[3] = Constant \"oshp\" () {data=[2,6,16]}\n"
    "  c: f32[1] = Constant \"c\" () {data=[0.5946035575013605]}\n"
    "  xq: f32[2,6,16] = MatrixMultiply \"mmq\" (x, wq) {op_a=0, op_b=0}\n"
    "  xk: f32[2,6,16] = MatrixMultiply \"mmk\" (x, wk) {op_a=0, op_b=0}\n"
    "  xv: f32[2,6,16] = MatrixMultiply \"mmv\" (x, wv) {op_a=0, op_b=0}\n"
    "  rq: f32[2,6,2,8] = Shuffle \"rq\" (xq, shp)\n"
    "  rk: f32[2,6,2,8] = Shuffle \"rk\" (xk, shp)\n"
    "  rv: f32[2,6,2,8] = Shuffle \"rv\" (xv, shp)\n"
    "  q: f32[2,2,6,8] = Shuffle \"tq\" (rq) {first_perm=[0,2,1,3]}\n"
    "  kt: f32[2,2,8,6] = Shuffle \"tk\" (rk) {first_perm=[0,2,3,1]}\n"
    "  v: f32[2,2,6,8] = Shuffle \"tv\" (rv) {first_perm=[0,2,1,3]}\n"
    "  qs: f32[2,2,6,8] = ElementWise \"mq\" (q, c) {op=1}\n"
    "  ks: f32[2,2,8,6] = ElementWise \"mk\" (kt, c) {op=1}\n"
    "  s: f32[2,2,6,6] = MatrixMultiply \"qk\" (qs, ks) {op_a=0, op_b=0}\n"
    "  s2: f32[2,2,6,6] = ElementWise \"add\" (s, m) {op=0}\n"
    "  p: f32[2,2,6,6] = SoftMax \"softmax\" (s2) {axis=3}\n"
    "  o: f32[2,2,6,8] = MatrixMultiply \"pv\" (p, v) {op_a=0, op_b=0}\n"
    "  ot: f32[2,6,2,8] = Shuffle \"to\" (o) {first_perm=[0,2,1,3]}\n"
    "  y: f32[2,6,16] = Shuffle \"ro\" (ot, oshp)\n"
    "  output y\n"
    "}\n";

// The printed form of `g` from the line that starts with `from`.
std::string printedFrom(ir::Graph const& g, std::string const& from) {
  std::string text = ir::printGraph(g);
  size_t at = text.find("\n  " + from);
  return at == std::string::npos ? text : text.substr(at + 1);
}

TEST(FuseAttention, BertAsImportedGetsLayout1) {
  auto g = fuseChecked(kBertImported);
  ASSERT_TRUE(g);
  // The Reshapes stay (no transposition in them), the four Transposes go.
  EXPECT_EQ(
      printedFrom(*g, "rq: "),
      "  rq: f32[2,6,2,8] = Shuffle \"rq\" (xq, shp)\n"
      "  rk: f32[2,6,2,8] = Shuffle \"rk\" (xk, shp)\n"
      "  rv: f32[2,6,2,8] = Shuffle \"rv\" (xv, shp)\n"
      "  qk_attention_output: f32[2,6,2,8] = Attention \"qk_attention\" (rq, rk, rv, m) {k_transposed=0, layout=1, "
      "nan_to_zero=0, scale=0.353553368012399} "
      "@fused=[\"softmax\",\"add\",\"qk\",\"mq\",\"mk\",\"pv\",\"tq\",\"tk\",\"tv\",\"to\"]\n"
      "  y: f32[2,6,16] = Shuffle \"ro\" (qk_attention_output, oshp)\n"
      "  output y\n"
      "}\n");
}

TEST(FuseAttention, MergedReshapeTransposeShufflesKeepTheirReshapes) {
  // eliminate_identity's merged forms: reshape then second_perm on the operands (K: 0,2,3,1), first_perm then
  // reshape on the output; k^T as the matmul's transpose flag (fold_transpose_into_matmul's form) on K.
  std::string text = kBertImported;
  text = replaced(text, "Shuffle \"rq\" (xq, shp)",
                  "Shuffle \"rq\" (xq) {reshape=[2,6,2,8], second_perm=[0,2,1,3], zero_is_placeholder=0}");
  text = replaced(text, "rq: f32[2,6,2,8]", "q: f32[2,2,6,8]");
  text = replaced(text, "  q: f32[2,2,6,8] = Shuffle \"tq\" (rq) {first_perm=[0,2,1,3]}\n", "");
  text = replaced(text, "Shuffle \"rk\" (xk, shp)",
                  "Shuffle \"rk\" (xk) {reshape=[2,6,2,8], second_perm=[0,2,1,3], zero_is_placeholder=0}");
  text = replaced(text, "rk: f32[2,6,2,8]", "kt: f32[2,2,6,8]");
  text = replaced(text, "  kt: f32[2,2,8,6] = Shuffle \"tk\" (rk) {first_perm=[0,2,3,1]}\n", "");
  text = replaced(text, "ks: f32[2,2,8,6]", "ks: f32[2,2,6,8]");
  text = replaced(text, "(qs, ks) {op_a=0, op_b=0}", "(qs, ks) {op_a=0, op_b=1}");
  text = replaced(text, "Shuffle \"rv\" (xv, shp)",
                  "Shuffle \"rv\" (xv) {reshape=[2,6,2,8], second_perm=[0,2,1,3], zero_is_placeholder=0}");
  text = replaced(text, "rv: f32[2,6,2,8]", "v: f32[2,2,6,8]");
  text = replaced(text, "  v: f32[2,2,6,8] = Shuffle \"tv\" (rv) {first_perm=[0,2,1,3]}\n", "");
  text = replaced(text, "  ot: f32[2,6,2,8] = Shuffle \"to\" (o) {first_perm=[0,2,1,3]}\n", "");
  text = replaced(text, "Shuffle \"ro\" (ot, oshp)",
                  "Shuffle \"ro\" (o) {first_perm=[0,2,1,3], reshape=[2,6,16], zero_is_placeholder=0}");
  auto g = fuseChecked(text);
  ASSERT_TRUE(g);
  EXPECT_EQ(printedFrom(*g, "q: "),
            "  q: f32[2,6,2,8] = Shuffle \"rq\" (xq) {reshape=[2,6,2,8], zero_is_placeholder=0}\n"
            "  kt: f32[2,6,2,8] = Shuffle \"rk\" (xk) {reshape=[2,6,2,8], zero_is_placeholder=0}\n"
            "  v: f32[2,6,2,8] = Shuffle \"rv\" (xv) {reshape=[2,6,2,8], zero_is_placeholder=0}\n"
            "  qk_attention_output: f32[2,6,2,8] = Attention \"qk_attention\" (q, kt, v, m) {k_transposed=0, layout=1, "
            "nan_to_zero=0, scale=0.353553368012399} @fused=[\"softmax\",\"add\",\"qk\",\"mq\",\"mk\",\"pv\"]\n"
            "  y: f32[2,6,16] = Shuffle \"ro\" (qk_attention_output) {reshape=[2,6,16], zero_is_placeholder=0}\n"
            "  output y\n"
            "}\n");
  // A reshape whose Shuffle also transposes before it cannot lose that transposition: layout 0.
  expectLayout0(replaced(text, "Shuffle \"rv\" (xv) {reshape=[2,6,2,8]",
                         "Shuffle \"rv\" (xv) {first_perm=[1,0,2], reshape=[2,6,2,8]"));
}

// The whole GPU pipeline on BERT as exported (bias Adds after the projections, K's head split and SDPA's swap of
// the last two axes as two Transposes): identity elimination merges K's Transposes, the fusion takes them and the
// others into layout 1 (bias fusion does not get in the way), and no Shuffle is left transposing anything.
TEST(FuseAttention, GpuPipelineGivesBertLayout1) {
  std::string text = kBertImported;
  text = replaced(text, "  kt: f32[2,2,8,6] = Shuffle \"tk\" (rk) {first_perm=[0,2,3,1]}\n",
                  "  k4: f32[2,2,6,8] = Shuffle \"tk\" (rk) {first_perm=[0,2,1,3]}\n"
                  "  kt: f32[2,2,8,6] = Shuffle \"tkt\" (k4) {first_perm=[0,1,3,2]}\n");
  for (char const* p : {"q", "k", "v"}) {
    std::string const mm =
        strCat("  x", p, ": f32[2,6,16] = MatrixMultiply \"mm", p, "\" (x, w", p, ") {op_a=0, op_b=0}\n");
    text = replaced(text, mm,
                    strCat("  b", p, ": f32[16] = Constant \"b", p, "\" () {data=random(7)}\n", "  u", p,
                           ": f32[2,6,16] = MatrixMultiply \"mm", p, "\" (x, w", p, ") {op_a=0, op_b=0}\n", "  x", p,
                           ": f32[2,6,16] = ElementWise \"bias", p, "\" (u", p, ", b", p, ") {op=0}\n"));
  }
  auto g = testing::parseInferred(text);
  ASSERT_TRUE(g);
  auto before = g->clone();
  PassContext ctx;
  ctx.evaluator = &testing::evaluator();
  Status st = runPipeline(*g, ctx);
  ASSERT_TRUE(st.isOk()) << st.toString();
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kAttention), 1);
  EXPECT_EQ(attentionLayout(*g), 1) << ir::printGraph(*g);
  for (auto const& n : g->nodes()) {
    if (n->op != ir::OpType::kShuffle) continue;
    EXPECT_TRUE(n->attrs.getInts("first_perm").empty() && n->attrs.getInts("second_perm").empty()) << n->describe();
  }
  testing::expectSameOutputs(*before, *g, 1e-5);
}

// CPU builds fuse only where the CPU backend's fused loop is fast (cpuFusedAttention) and only fp32 (its one type).
TEST(FuseAttention, CpuBuildsFuseFp32WhereTheCpuLoopIsFast) {
  for (bool fast : {false, true}) {
    auto g = testing::parseInferred(kBert);
    ASSERT_TRUE(g);
    auto before = g->clone();
    PassContext ctx;
    ctx.cpuTarget = true;
    ctx.cpuFusedAttention = fast;
    EXPECT_EQ(testing::runPass(*createFuseAttentionPass(), *g, &ctx), fast);
    EXPECT_EQ(testing::countOps(*g, ir::OpType::kAttention), fast ? 1 : 0);
    testing::expectSameOutputs(*before, *g, 1e-5);
  }
  std::string half = kVit;
  for (size_t at = half.find("f32"); at != std::string::npos; at = half.find("f32", at)) half.replace(at, 3, "f16");
  auto g = testing::parseInferred(half.c_str());
  ASSERT_TRUE(g);
  PassContext ctx;
  ctx.cpuTarget = true;
  ctx.cpuFusedAttention = true;
  EXPECT_FALSE(testing::runPass(*createFuseAttentionPass(), *g, &ctx));
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kAttention), 0);
  // The same graph in fp16 fuses on the GPU.
  PassContext gpu;
  EXPECT_TRUE(testing::runPass(*createFuseAttentionPass(), *g, &gpu));
}

}  // namespace
}  // namespace kiln::builder
