// Tests of merge_qkv_projections: BERT's Q, K, V projections (bias fused, reshape views) into a layout 1 or 2
// Attention become one GEMM read packed, with the same outputs; dynamic batch and sequence dims; near misses stay;
// the whole pipeline on BERT as imported ends with one projection GEMM and a packed Attention.
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

// What fuse_attention and fuse_bias_activation leave of a BERT attention (E 16, 2 heads of 8): three biased
// projections of x, each viewed as [B, S, H, D] by a Shuffle that only reshapes, into a layout 1 Attention.
constexpr char kBert[] =
    "graph {\n"
    "  input x: f32[2,6,16]\n"
    "  input m: f32[2,1,1,6]\n"
    "  wq: f32[16,16] = Constant \"wq\" () {data=random(1)}\n"
    "  wk: f32[16,16] = Constant \"wk\" () {data=random(2)}\n"
    "  wv: f32[16,16] = Constant \"wv\" () {data=random(3)}\n"
    "  bq: f32[16] = Constant \"bq\" () {data=random(4)}\n"
    "  bk: f32[16] = Constant \"bk\" () {data=random(5)}\n"
    "  bv: f32[16] = Constant \"bv\" () {data=random(6)}\n"
    "  xq: f32[2,6,16] = MatrixMultiply \"mmq\" (x, wq, bq) {op_a=0, op_b=0}\n"
    "  xk: f32[2,6,16] = MatrixMultiply \"mmk\" (x, wk, bk) {op_a=0, op_b=0}\n"
    "  xv: f32[2,6,16] = MatrixMultiply \"mmv\" (x, wv, bv) {op_a=0, op_b=0}\n"
    "  q: f32[2,6,2,8] = Shuffle \"rq\" (xq) {reshape=[2,6,2,8], zero_is_placeholder=0}\n"
    "  k: f32[2,6,2,8] = Shuffle \"rk\" (xk) {reshape=[2,6,2,8], zero_is_placeholder=0}\n"
    "  v: f32[2,6,2,8] = Shuffle \"rv\" (xv) {reshape=[2,6,2,8], zero_is_placeholder=0}\n"
    "  y: f32[2,6,2,8] = Attention \"att\" (q, k, v, m) {layout=1, nan_to_zero=0, scale=0.35}\n"
    "  output y\n"
    "}\n";

// The printed form of `g` from the line that starts with `from`.
std::string printedFrom(ir::Graph const& g, std::string const& from) {
  std::string text = ir::printGraph(g);
  size_t at = text.find("\n  " + from);
  return at == std::string::npos ? text : text.substr(at + 1);
}

TEST(MergeQkvProjections, BertLayout1) {
  auto pass = createMergeQkvProjectionsPass();
  auto g = testing::parseInferred(kBert);
  ASSERT_TRUE(g);
  auto before = g->clone();
  ASSERT_TRUE(testing::runPass(*pass, *g));
  // One GEMM on [wq | wk | wv] with bias [bq | bk | bv] gives [2, 6, 48], viewed as [2, 6, 3, 2, 8]; the
  // separate weights and biases are left to dead-layer elimination.
  EXPECT_EQ(printedFrom(*g, "mmq_qkv_weights_output"),
            "  mmq_qkv_weights_output: f32[16,48] = Constant \"mmq_qkv_weights\" () {data=<f32 x 768>}\n"
            "  mmq_qkv_bias_output: f32[48] = Constant \"mmq_qkv_bias\" () {data=<f32 x 48>}\n"
            "  mmq_qkv_output: f32[2,6,48] = MatrixMultiply \"mmq_qkv\" (x, mmq_qkv_weights_output, "
            "mmq_qkv_bias_output) {op_a=0, op_b=0} @fused=[\"mmq_qkv\",\"mmq\",\"mmk\",\"mmv\"]\n"
            "  mmq_qkv_view_output: f32[2,6,3,2,8] = Shuffle \"mmq_qkv_view\" (mmq_qkv_output) "
            "{reshape=[2,6,3,2,8], zero_is_placeholder=0} @fused=[\"mmq_qkv_view\",\"rq\",\"rk\",\"rv\"]\n"
            "  y: f32[2,6,2,8] = Attention \"att\" (mmq_qkv_view_output, _, _, m) {layout=1, nan_to_zero=0, "
            "packed_qkv=1, scale=0.35}\n"
            "  output y\n"
            "}\n");
  std::string const printed = ir::printGraph(*g);
  Status st = ir::inferGraphInPlace(*g, &testing::evaluator());
  ASSERT_TRUE(st.isOk()) << st.toString();
  EXPECT_EQ(ir::printGraph(*g), printed) << "shape inference disagrees with the shapes the pass left";
  // The merged weights: row r of [wq | wk | wv] is row r of wq, then of wk, then of wv.
  HostTensor const* w = passutil::constantData(g->findNode("mmq_qkv")->inputs[1]);
  ASSERT_NE(w, nullptr);
  for (char const* name : {"wq", "wk", "wv"}) {
    HostTensor const& part = *g->findNode(name)->constant;
    int64_t const slot = name[1] == 'q' ? 0 : name[1] == 'k' ? 1 : 2;
    for (int64_t r = 0; r < 16; ++r)
      for (int64_t c = 0; c < 16; ++c) ASSERT_EQ(w->doubleAt(r * 48 + slot * 16 + c), part.doubleAt(r * 16 + c));
  }
  testing::expectSameOutputs(*before, *g, 1e-5);
}

// Layout 2 (torchvision's [S, B, H, D]) on [S * B, E] rows, weights stored transposed ([N, K], op_b 1, as
// nn.Linear's), no bias: the weights join along their first axis.
TEST(MergeQkvProjections, SbhdTransposedWeightsWithoutBias) {
  std::string text = kBert;
  text = replaced(text, "input x: f32[2,6,16]", "input x: f32[12,16]");
  text = replaced(text, "input m: f32[2,1,1,6]", "input m: f32[6,6]");
  for (char const* p : {"q", "k", "v"}) {
    text = replaced(
        text, strCat("x", p, ": f32[2,6,16] = MatrixMultiply \"mm", p, "\" (x, w", p, ", b", p, ") {op_a=0, op_b=0}"),
        strCat("x", p, ": f32[12,16] = MatrixMultiply \"mm", p, "\" (x, w", p, ") {op_a=0, op_b=1}"));
    text = replaced(text, strCat(p, ": f32[2,6,2,8] = Shuffle \"r", p, "\" (x", p, ") {reshape=[2,6,2,8]"),
                    strCat(p, ": f32[6,2,2,8] = Shuffle \"r", p, "\" (x", p, ") {reshape=[6,2,2,8]"));
  }
  text = replaced(text, "y: f32[2,6,2,8] = Attention \"att\" (q, k, v, m) {layout=1",
                  "y: f32[6,2,2,8] = Attention \"att\" (q, k, v, m) {layout=2");
  auto g = testing::parseInferred(text);
  ASSERT_TRUE(g);
  auto before = g->clone();
  ASSERT_TRUE(testing::runPass(*createMergeQkvProjectionsPass(), *g));
  Status st = ir::inferGraphInPlace(*g, &testing::evaluator());
  ASSERT_TRUE(st.isOk()) << st.toString();
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kMatrixMultiply), 1);
  ir::Node const* mm = g->findNode("mmq_qkv");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(dimsToString(mm->inputs[1]->shape), "[48,16]");
  EXPECT_EQ(mm->inputs.size(), 2u);
  EXPECT_EQ(dimsToString(g->findNode("att")->inputs[0]->shape), "[6,2,3,2,8]");
  testing::expectSameOutputs(*before, *g, 1e-5);
}

// A dynamic batch: the packed view's -1 takes it. Batch and sequence both dynamic: the views copy both leading
// dims of the projections (placeholder 0s), and so does the packed view.
TEST(MergeQkvProjections, DynamicBatchAndSequence) {
  std::string text = kBert;
  text = replaced(text, "input x: f32[2,6,16]", "input x: f32[-1,6,16]");
  text = replaced(text, "input m: f32[2,1,1,6]", "input m: f32[1,1,1,6]");
  text = replaced(text, "y: f32[2,6,2,8]", "y: f32[-1,6,2,8]");
  for (char const* p : {"q", "k", "v"}) {
    text = replaced(text, strCat("x", p, ": f32[2,6,16]"), strCat("x", p, ": f32[-1,6,16]"));
    text = replaced(text, strCat(p, ": f32[2,6,2,8] = Shuffle \"r", p, "\" (x", p, ") {reshape=[2,6,2,8]"),
                    strCat(p, ": f32[-1,6,2,8] = Shuffle \"r", p, "\" (x", p, ") {reshape=[-1,6,2,8]"));
  }
  auto g = testing::parseInferred(text);
  ASSERT_TRUE(g);
  auto before = g->clone();
  ASSERT_TRUE(testing::runPass(*createMergeQkvProjectionsPass(), *g));
  ASSERT_TRUE(ir::inferGraphInPlace(*g, &testing::evaluator()).isOk());
  ir::Node const* view = g->findNode("mmq_qkv_view");
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->attrs.getInts("reshape"), (std::vector<int64_t>{-1, 6, 3, 2, 8}));
  EXPECT_EQ(dimsToString(view->outputs[0]->shape), "[-1,6,3,2,8]");
  testing::expectSameOutputs(*before, *g, 1e-5);

  // Both dynamic, as the demo's BERT splits heads (reshape [0, 0, H, D]).
  std::string both = text;
  both = replaced(both, "input x: f32[-1,6,16]", "input x: f32[-1,-1,16]");
  both = replaced(both, "input m: f32[1,1,1,6]", "input m: f32[1,1,1,1]");
  both = replaced(both, "y: f32[-1,6,2,8]", "y: f32[-1,-1,2,8]");
  for (char const* p : {"q", "k", "v"}) {
    both = replaced(both, strCat("x", p, ": f32[-1,6,16]"), strCat("x", p, ": f32[-1,-1,16]"));
    both = replaced(
        both,
        strCat(p, ": f32[-1,6,2,8] = Shuffle \"r", p, "\" (x", p, ") {reshape=[-1,6,2,8], zero_is_placeholder=0}"),
        strCat(p, ": f32[-1,-1,2,8] = Shuffle \"r", p, "\" (x", p, ") {reshape=[0,0,2,8], zero_is_placeholder=1}"));
  }
  g = testing::parseInferred(both);
  ASSERT_TRUE(g);
  before = g->clone();
  ASSERT_TRUE(testing::runPass(*createMergeQkvProjectionsPass(), *g));
  ASSERT_TRUE(ir::inferGraphInPlace(*g, &testing::evaluator()).isOk());
  view = g->findNode("mmq_qkv_view");
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->attrs.getInts("reshape"), (std::vector<int64_t>{0, 0, 3, 2, 8}));
  EXPECT_EQ(view->attrs.getInt("zero_is_placeholder", 0), 1);
  testing::expectSameOutputs(*before, *g, 1e-5);
  // Both dynamic but one view computing its dims (-1 and a known S would not prove the split): no merge.
  testing::expectNoRewrite(*createMergeQkvProjectionsPass(),
                           replaced(both, "Shuffle \"rv\" (xv) {reshape=[0,0,2,8], zero_is_placeholder=1}",
                                    "Shuffle \"rv\" (xv) {reshape=[0,-1,2,8], zero_is_placeholder=1}"));
}

TEST(MergeQkvProjections, NearMissesStay) {
  auto pass = createMergeQkvProjectionsPass();
  // Layout 0 (the attention would need the slices copied out).
  testing::expectNoRewrite(*pass, replaced(kBert, "(q, k, v, m) {layout=1,", "(q, k, v) {layout=0,"));
  // A projection read elsewhere too.
  testing::expectNoRewrite(*pass, replaced(kBert, "  output y\n", "  output y\n  output xk\n"));
  // A view read elsewhere too.
  testing::expectNoRewrite(*pass, replaced(kBert, "  output y\n", "  output y\n  output v\n"));
  // Another input for V.
  testing::expectNoRewrite(*pass, replaced(replaced(kBert, "  input m: f32[2,1,1,6]\n",
                                                    "  input m: f32[2,1,1,6]\n  input x2: f32[2,6,16]\n"),
                                           "(x, wv, bv)", "(x2, wv, bv)"));
  // Weights that are not constants.
  testing::expectNoRewrite(*pass,
                           replaced(replaced(kBert, "  wv: f32[16,16] = Constant \"wv\" () {data=random(3)}\n", ""),
                                    "  input m: f32[2,1,1,6]\n", "  input m: f32[2,1,1,6]\n  input wv: f32[16,16]\n"));
  // One projection without its bias; another with an activation; another with a residual.
  testing::expectNoRewrite(*pass, replaced(kBert, "(x, wv, bv)", "(x, wv)"));
  testing::expectNoRewrite(
      *pass, replaced(kBert, "(x, wk, bk) {op_a=0, op_b=0}", "(x, wk, bk) {activation=0, op_a=0, op_b=0}"));
  testing::expectNoRewrite(*pass, replaced(kBert, "(x, wk, bk)", "(x, wk, bk, x)"));
  // A view that also transposes.
  testing::expectNoRewrite(*pass, replaced(kBert, "Shuffle \"rv\" (xv) {reshape=[2,6,2,8]",
                                           "Shuffle \"rv\" (xv) {first_perm=[1,0,2], "
                                           "reshape=[2,6,2,8]"));
  // Already packed.
  auto g = testing::parseInferred(kBert);
  ASSERT_TRUE(g);
  EXPECT_TRUE(testing::runPass(*pass, *g));
  EXPECT_FALSE(testing::runPass(*pass, *g));
}

// BERT as exported and imported (biases as Adds, heads split by Reshape + Transpose, merged back by Transpose +
// Reshape): the level-3 pipeline leaves one projection GEMM, one Shuffle view into a packed layout 1 Attention and
// the output Reshape, with the unfused graph's outputs; also with a dynamic batch (views copying dims 0 and 1).
constexpr char kBertImported[] =
    "graph {\n"
    "  input x: f32[2,6,16]\n"
    "  input m: f32[2,1,1,6]\n"
    "  wq: f32[16,16] = Constant \"wq\" () {data=random(1)}\n"
    "  wk: f32[16,16] = Constant \"wk\" () {data=random(2)}\n"
    "  wv: f32[16,16] = Constant \"wv\" () {data=random(3)}\n"
    "  bq: f32[16] = Constant \"bq\" () {data=random(4)}\n"
    "  bk: f32[16] = Constant \"bk\" () {data=random(5)}\n"
    "  bv: f32[16] = Constant \"bv\" () {data=random(6)}\n"
    "  oshp: i64[3] = Constant \"oshp\" () {data=[0,0,16]}\n"
    "  c: f32[1] = Constant \"c\" () {data=[0.5946035575013605]}\n"
    "  uq: f32[2,6,16] = MatrixMultiply \"mmq\" (x, wq) {op_a=0, op_b=0}\n"
    "  uk: f32[2,6,16] = MatrixMultiply \"mmk\" (x, wk) {op_a=0, op_b=0}\n"
    "  uv: f32[2,6,16] = MatrixMultiply \"mmv\" (x, wv) {op_a=0, op_b=0}\n"
    "  xq: f32[2,6,16] = ElementWise \"biasq\" (uq, bq) {op=0}\n"
    "  xk: f32[2,6,16] = ElementWise \"biask\" (uk, bk) {op=0}\n"
    "  xv: f32[2,6,16] = ElementWise \"biasv\" (uv, bv) {op=0}\n"
    "  rq: f32[2,6,2,8] = Shuffle \"rq\" (xq) {reshape=[0,0,2,8]}\n"
    "  rk: f32[2,6,2,8] = Shuffle \"rk\" (xk) {reshape=[0,0,2,8]}\n"
    "  rv: f32[2,6,2,8] = Shuffle \"rv\" (xv) {reshape=[0,0,2,8]}\n"
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

void expectPackedPipeline(std::string const& text) {
  auto g = testing::parseInferred(text);
  ASSERT_TRUE(g);
  auto before = g->clone();
  PassContext ctx;
  ctx.evaluator = &testing::evaluator();
  std::vector<std::string> log;
  ctx.log = &log;
  Status st = runPipeline(*g, ctx);
  ASSERT_TRUE(st.isOk()) << st.toString();
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kMatrixMultiply), 1) << ir::printGraph(*g);
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kShuffle), 2) << ir::printGraph(*g);
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kElementWise), 0) << ir::printGraph(*g);
  int packed = 0;
  for (auto const& n : g->nodes())
    if (n->op == ir::OpType::kAttention) packed += n->attrs.getInt("packed_qkv", 0) == 1;
  EXPECT_EQ(packed, 1) << ir::printGraph(*g);
  bool logged = false;
  for (auto const& l : log) logged |= l.rfind("merge_qkv_projections: ", 0) == 0;
  EXPECT_TRUE(logged);
  testing::expectSameOutputs(*before, *g, 1e-5);
}

TEST(MergeQkvProjections, PipelineOnBertAsImported) {
  expectPackedPipeline(kBertImported);
  std::string dyn = kBertImported;
  // Dynamic batch: every leading 2 becomes -1 (the mask broadcasts over it).
  for (;;) {
    size_t at = dyn.find("[2,");
    if (at == std::string::npos) break;
    dyn.replace(at, 3, "[-1,");
  }
  dyn = replaced(dyn, "input m: f32[-1,1,1,6]", "input m: f32[1,1,1,6]");
  expectPackedPipeline(dyn);
}

}  // namespace
}  // namespace kiln::builder
