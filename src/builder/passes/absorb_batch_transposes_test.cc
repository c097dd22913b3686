// Tests of absorb_batch_transposes: torchvision ViT's self-attention block (x [B, S, E] transposed to [S, B, E]
// for nn.MultiheadAttention and back) loses both transposes, its Attention takes layout 1, and the pipeline then
// fuses the residual add into the out-projection GEMM; near misses (other permutations, extra readers, weights
// or operands that differ per token, dynamic dims) stay.
#include "builder/passes/pass_test_util.h"
#include "builder/passes/pipeline.h"
#include "ir/attention_layout.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

std::string replaced(std::string text, std::string const& from, std::string const& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The block as absorb_attention_views leaves it (B 2, S 5, E 32, H 2, D 16): the batch-first input transposed to
// [S, B, E], the packed in-projection and its bias (added as torch 1.13 writes it, bias + x), the packed view, a layout
// 2 Attention, the head-merge view [S*B, E], the out-projection (Gemm: w transposed) and its bias, the reshape to [S,
// B, E], the transpose back and the residual add.
constexpr char kBlock[] =
    "graph {\n"
    "  input x: f32[2,5,32]\n"
    "  w: f32[32,96] = Constant \"w\" () {data=random(1)}\n"
    "  bias: f32[96] = Constant \"bias\" () {data=random(2)}\n"
    "  wo: f32[32,32] = Constant \"wo\" () {data=random(3)}\n"
    "  bo: f32[32] = Constant \"bo\" () {data=random(4)}\n"
    "  xt: f32[5,2,32] = Shuffle \"transpose\" (x) {first_perm=[1,0,2]}\n"
    "  p: f32[5,2,96] = MatrixMultiply \"inproj\" (xt, w) {op_a=0, op_b=0}\n"
    "  pb: f32[5,2,96] = ElementWise \"inproj_bias\" (bias, p) {op=0}\n"
    "  pv: f32[5,2,3,2,16] = Shuffle \"qkv_view\" (pb) {reshape=[0,0,3,2,16], zero_is_placeholder=1}\n"
    "  y: f32[5,2,2,16] = Attention \"att\" (pv, _, _) {k_transposed=0, layout=2, nan_to_zero=0, packed_qkv=1, "
    "scale=0.25}\n"
    "  yv: f32[10,32] = Shuffle \"y_view\" (y) {reshape=[10,32], zero_is_placeholder=0}\n"
    "  o: f32[10,32] = MatrixMultiply \"outproj\" (yv, wo) {op_a=0, op_b=1}\n"
    "  ob: f32[10,32] = ElementWise \"outproj_bias\" (o, bo) {op=0}\n"
    "  obr: f32[5,2,32] = Shuffle \"reshape_back\" (ob) {reshape=[5,2,32]}\n"
    "  ot: f32[2,5,32] = Shuffle \"transpose_back\" (obr) {first_perm=[1,0,2]}\n"
    "  r: f32[2,5,32] = ElementWise \"residual\" (ot, x) {op=0}\n"
    "  output r\n"
    "}\n";

// Shuffles that permute axes.
int transposes(ir::Graph const& g) {
  int c = 0;
  for (auto const& n : g.nodes())
    c += n->op == ir::OpType::kShuffle && (!passutil::isIdentityPermutation(n->attrs.getInts("first_perm")) ||
                                           !passutil::isIdentityPermutation(n->attrs.getInts("second_perm")));
  return c;
}

ir::Node const* onlyNode(ir::Graph const& g, ir::OpType op) {
  ir::Node const* r = nullptr;
  for (auto const& n : g.nodes())
    if (n->op == op) {
      EXPECT_EQ(r, nullptr) << "more than one " << ir::opName(op);
      r = n.get();
    }
  return r;
}

TEST(AbsorbBatchTransposes, VitBlockLosesBothTransposes) {
  auto g = testing::parseInferred(kBlock);
  ASSERT_TRUE(g);
  auto before = g->clone();
  PassContext ctx;
  std::vector<std::string> log;
  ctx.log = &log;
  ASSERT_TRUE(testing::runPass(*createAbsorbBatchTransposesPass(), *g, &ctx));
  std::string const printed = ir::printGraph(*g);
  Status st = ir::inferGraphInPlace(*g, &testing::evaluator());
  ASSERT_TRUE(st.isOk()) << st.toString();
  EXPECT_EQ(ir::printGraph(*g), printed) << "shape inference disagrees with the shapes the pass left";
  testing::expectSameOutputs(*before, *g, 1e-6);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("attention layout swapped"), std::string::npos) << log[0];
  EXPECT_NE(log[0].find("3 shuffles removed"), std::string::npos) << log[0];
  EXPECT_EQ(transposes(*g), 0) << printed;
  // The two transposes and the reshape back are gone; the views stay (now [B, S, 3, H, D] and [B, S, E]).
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kShuffle), 2) << printed;
  ir::Node const* att = onlyNode(*g, ir::OpType::kAttention);
  ASSERT_NE(att, nullptr);
  EXPECT_EQ(att->attrs.getInt("layout", 0), ir::kAttentionLayoutBshd);
  EXPECT_EQ(dimsToString(att->inputs[0]->shape), "[2,5,3,2,16]");
  EXPECT_EQ(dimsToString(att->outputs[0]->shape), "[2,5,2,16]");
  EXPECT_EQ(att->fusedFrom, (std::vector<std::string>{"att", "transpose", "reshape_back", "transpose_back"}));
  // The residual add reads the out-projection's bias add, of x's shape: bias/residual fusion can take it.
  ir::Node const* add = g->findNode("residual");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->inputs[0]->producer->name, "outproj_bias");
  EXPECT_EQ(dimsToString(add->inputs[0]->shape), "[2,5,32]");
  EXPECT_EQ(g->findNode("inproj")->inputs[0], g->findValue("x"));
}

// The level-3 pipeline: the biases and the residual add go into the GEMMs, nothing transposes.
TEST(AbsorbBatchTransposes, PipelineFusesTheResidualIntoTheOutProjection) {
  auto g = testing::parseInferred(kBlock);
  ASSERT_TRUE(g);
  auto before = g->clone();
  PassContext ctx;
  ctx.evaluator = &testing::evaluator();
  Status st = runPipeline(*g, ctx);
  ASSERT_TRUE(st.isOk()) << st.toString();
  std::string const printed = ir::printGraph(*g);
  EXPECT_EQ(transposes(*g), 0) << printed;
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kElementWise), 0) << printed;
  ir::Node const* out = g->findNode("outproj");
  ASSERT_NE(out, nullptr) << printed;
  ASSERT_EQ(out->inputs.size(), 4u) << printed;
  EXPECT_EQ(out->inputs[3], g->findValue("x")) << printed;
  EXPECT_EQ(onlyNode(*g, ir::OpType::kAttention)->attrs.getInt("layout", 0), ir::kAttentionLayoutBshd);
  testing::expectSameOutputs(*before, *g, 1e-5);
}

// torch 1.13's export of torchvision's EncoderBlock self-attention, unfused (the attention as Div(q) / MatMul /
// Softmax / MatMul, q, k, v sliced out of the in-projection and split into heads, merged back by Transpose +
// Reshape), with the batch-first transposes and the residual: the pipeline leaves two views, the packed layout 1
// Attention and two GEMMs, the second with the residual.
constexpr char kTorch113Block[] =
    "graph {\n"
    "  input x: f32[2,5,32]\n"
    "  w: f32[32,96] = Constant \"w\" () {data=random(1)}\n"
    "  bias: f32[96] = Constant \"bias\" () {data=random(2)}\n"
    "  wo: f32[32,32] = Constant \"wo\" () {data=random(3)}\n"
    "  bo: f32[32] = Constant \"bo\" () {data=random(4)}\n"
    "  st0: i64[1] = Constant \"st0\" () {data=[0]}\n"
    "  st1: i64[1] = Constant \"st1\" () {data=[32]}\n"
    "  st2: i64[1] = Constant \"st2\" () {data=[64]}\n"
    "  sz: i64[1] = Constant \"sz\" () {data=[32]}\n"
    "  one: i64[1] = Constant \"one\" () {data=[1]}\n"
    "  ax: i64[1] = Constant \"ax\" () {data=[2]}\n"
    "  shp: i64[3] = Constant \"shp\" () {data=[5,4,16]}\n"
    "  oshp: i64[2] = Constant \"oshp\" () {data=[10,32]}\n"
    "  bshp: i64[3] = Constant \"bshp\" () {data=[5,2,32]}\n"
    "  c: f32[1,1,1] = Constant \"c\" () {data=[4]}\n"
    "  xt: f32[5,2,32] = Shuffle \"Transpose\" (x) {first_perm=[1,0,2]}\n"
    "  p0: f32[5,2,96] = MatrixMultiply \"MatMul\" (xt, w) {op_a=0, op_b=0}\n"
    "  p: f32[5,2,96] = ElementWise \"Add\" (bias, p0) {op=0}\n"
    "  qs: f32[5,2,32] = Slice \"Slice\" (p, st0, sz, one, _, ax) {mode=0}\n"
    "  ks: f32[5,2,32] = Slice \"Slice_1\" (p, st1, sz, one, _, ax) {mode=0}\n"
    "  vs: f32[5,2,32] = Slice \"Slice_2\" (p, st2, sz, one, _, ax) {mode=0}\n"
    "  qr: f32[5,4,16] = Shuffle \"Reshape\" (qs, shp)\n"
    "  kr: f32[5,4,16] = Shuffle \"Reshape_1\" (ks, shp)\n"
    "  vr: f32[5,4,16] = Shuffle \"Reshape_2\" (vs, shp)\n"
    "  q: f32[4,5,16] = Shuffle \"Transpose_1\" (qr) {first_perm=[1,0,2]}\n"
    "  k: f32[4,16,5] = Shuffle \"Transpose_3\" (kr) {first_perm=[1,2,0]}\n"
    "  v: f32[4,5,16] = Shuffle \"Transpose_2\" (vr) {first_perm=[1,0,2]}\n"
    "  qd: f32[4,5,16] = ElementWise \"Div_1\" (q, c) {op=5}\n"
    "  sc: f32[4,5,5] = MatrixMultiply \"MatMul_1\" (qd, k) {op_a=0, op_b=0}\n"
    "  pr: f32[4,5,5] = SoftMax \"Softmax\" (sc) {axis=2}\n"
    "  y: f32[4,5,16] = MatrixMultiply \"MatMul_2\" (pr, v) {op_a=0, op_b=0}\n"
    "  yt: f32[5,4,16] = Shuffle \"Transpose_4\" (y) {first_perm=[1,0,2]}\n"
    "  yr: f32[10,32] = Shuffle \"Reshape_3\" (yt, oshp)\n"
    "  o: f32[10,32] = MatrixMultiply \"Gemm\" (yr, wo) {op_a=0, op_b=1}\n"
    "  ob: f32[10,32] = ElementWise \"Gemm_bias\" (o, bo) {op=0}\n"
    "  obr: f32[5,2,32] = Shuffle \"Reshape_4\" (ob, bshp)\n"
    "  ot: f32[2,5,32] = Shuffle \"Transpose_5\" (obr) {first_perm=[1,0,2]}\n"
    "  r: f32[2,5,32] = ElementWise \"Add_1\" (ot, x) {op=0}\n"
    "  output r\n"
    "}\n";

TEST(AbsorbBatchTransposes, PipelineOnTorch113EncoderSelfAttention) {
  auto g = testing::parseInferred(kTorch113Block);
  ASSERT_TRUE(g);
  auto before = g->clone();
  size_t const nodesBefore = g->nodes().size();
  PassContext ctx;
  ctx.evaluator = &testing::evaluator();
  std::vector<std::string> log;
  ctx.log = &log;
  Status st = runPipeline(*g, ctx);
  ASSERT_TRUE(st.isOk()) << st.toString();
  std::string const printed = ir::printGraph(*g);
  bool logged = false;
  for (auto const& l : log) logged |= l.rfind("absorb_batch_transposes:", 0) == 0;
  EXPECT_TRUE(logged);
  EXPECT_EQ(transposes(*g), 0) << printed;
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kShuffle), 2) << printed;
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kElementWise), 0) << printed;
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kMatrixMultiply), 2) << printed;
  ir::Node const* att = onlyNode(*g, ir::OpType::kAttention);
  ASSERT_NE(att, nullptr) << printed;
  EXPECT_EQ(att->attrs.getInt("layout", 0), ir::kAttentionLayoutBshd);
  EXPECT_EQ(att->attrs.getInt("packed_qkv", 0), 1);
  ir::Node const* out = g->findNode("Gemm");
  ASSERT_NE(out, nullptr) << printed;
  ASSERT_EQ(out->inputs.size(), 4u) << printed;
  EXPECT_EQ(out->inputs[3], g->findValue("x")) << printed;
  EXPECT_LT(g->nodes().size(), nodesBefore);
  testing::expectSameOutputs(*before, *g, 1e-5);
}

// Two blocks in a row, the second reading the first's residual sum (ViT's residual stream): both rewritten.
TEST(AbsorbBatchTransposes, ConsecutiveBlocks) {
  std::string text = kBlock;
  text = replaced(text, "  output r\n", "");
  std::string second;
  for (char const* line :
       {"  xt2: f32[5,2,32] = Shuffle \"transpose2\" (r) {first_perm=[1,0,2]}\n",
        "  p2: f32[5,2,96] = MatrixMultiply \"inproj2\" (xt2, w) {op_a=0, op_b=0}\n",
        "  pv2: f32[5,2,3,2,16] = Shuffle \"qkv_view2\" (p2) {reshape=[0,0,3,2,16], zero_is_placeholder=1}\n",
        "  y2: f32[5,2,2,16] = Attention \"att2\" (pv2, _, _) {k_transposed=0, layout=2, nan_to_zero=0, packed_qkv=1, "
        "scale=0.25}\n",
        "  yv2: f32[5,2,32] = Shuffle \"y_view2\" (y2) {reshape=[5,2,32]}\n",
        "  ot2: f32[2,5,32] = Shuffle \"transpose_back2\" (yv2) {first_perm=[1,0,2]}\n",
        "  r2: f32[2,5,32] = ElementWise \"residual2\" (ot2, r) {op=0}\n", "  output r2\n"})
    second += line;
  text = text.substr(0, text.rfind("}\n")) + second + "}\n";
  auto g = testing::parseInferred(text);
  ASSERT_TRUE(g);
  auto before = g->clone();
  ASSERT_TRUE(testing::runPass(*createAbsorbBatchTransposesPass(), *g));
  ASSERT_TRUE(ir::inferGraphInPlace(*g, &testing::evaluator()).isOk());
  EXPECT_EQ(transposes(*g), 0) << ir::printGraph(*g);
  for (auto const& n : g->nodes()) {
    if (n->op != ir::OpType::kAttention) continue;
    EXPECT_EQ(n->attrs.getInt("layout", 0), ir::kAttentionLayoutBshd);
  }
  testing::expectSameOutputs(*before, *g, 1e-6);
}

// The other direction: a sequence-first graph transposed to batch-first around a layout 1 Attention becomes
// layout 2; a start that reshapes as it transposes (to [B*S, E]) and an activation in the chain.
TEST(AbsorbBatchTransposes, LayoutOneBecomesTwoThroughMergedTokens) {
  std::string const text =
      "graph {\n"
      "  input x: f32[5,2,32]\n"
      "  w: f32[32,96] = Constant \"w\" () {data=random(1)}\n"
      "  bias: f32[1,96] = Constant \"bias\" () {data=random(2)}\n"
      "  xt: f32[10,32] = Shuffle \"transpose\" (x) {first_perm=[1,0,2], reshape=[10,32]}\n"
      "  a: f32[10,32] = Activation \"relu\" (xt) {alpha=0, beta=0, type=0}\n"
      "  p: f32[10,96] = MatrixMultiply \"inproj\" (a, w, bias) {op_a=0, op_b=0}\n"
      "  pv: f32[2,5,3,2,16] = Shuffle \"qkv_view\" (p) {reshape=[2,5,3,2,16]}\n"
      "  y: f32[2,5,2,16] = Attention \"att\" (pv, _, _) {k_transposed=0, layout=1, nan_to_zero=0, packed_qkv=1, "
      "scale=0.25}\n"
      "  ot: f32[5,2,32] = Shuffle \"back\" (y) {reshape=[2,5,32], second_perm=[1,0,2]}\n"
      "  output ot\n"
      "}\n";
  auto g = testing::parseInferred(text);
  ASSERT_TRUE(g);
  auto before = g->clone();
  ASSERT_TRUE(testing::runPass(*createAbsorbBatchTransposesPass(), *g));
  ASSERT_TRUE(ir::inferGraphInPlace(*g, &testing::evaluator()).isOk());
  EXPECT_EQ(transposes(*g), 0) << ir::printGraph(*g);
  EXPECT_EQ(onlyNode(*g, ir::OpType::kAttention)->attrs.getInt("layout", 0), ir::kAttentionLayoutSbhd);
  EXPECT_EQ(g->outputs()[0]->name, "ot");
  testing::expectSameOutputs(*before, *g, 1e-6);
}

// Rows reshaped at both ends: the start transposes and splits E into heads ([S, B, H, D]), the end merges them
// again while transposing back; the start and end stay as reshapes of the batch-first tensors. Cast and Unary
// in the chain, a bias added to the merged [S*B, N] tokens.
TEST(AbsorbBatchTransposes, RowReshapesAtBothEnds) {
  std::string const text =
      "graph {\n"
      "  input x: f32[2,5,32]\n"
      "  w: f32[32,24] = Constant \"w\" () {data=random(1)}\n"
      "  bias: f32[1,24] = Constant \"bias\" () {data=random(2)}\n"
      "  xt: f32[5,2,2,16] = Shuffle \"split\" (x) {first_perm=[1,0,2], reshape=[5,2,2,16]}\n"
      "  u: f32[5,2,2,16] = Unary \"abs\" (xt) {op=4}\n"
      "  m: f32[10,32] = Shuffle \"merge\" (u) {reshape=[10,32]}\n"
      "  p: f32[10,24] = MatrixMultiply \"proj\" (m, w) {op_a=0, op_b=0}\n"
      "  pb: f32[10,24] = ElementWise \"bias_add\" (p, bias) {op=0}\n"
      "  c: f16[10,24] = Cast \"cast\" (pb) {to=1}\n"
      "  ot: f16[2,5,4,6] = Shuffle \"back\" (c) {reshape=[5,2,4,6], second_perm=[1,0,2,3]}\n"
      "  output ot\n"
      "}\n";
  auto g = testing::parseInferred(text);
  ASSERT_TRUE(g);
  auto before = g->clone();
  ASSERT_TRUE(testing::runPass(*createAbsorbBatchTransposesPass(), *g));
  std::string const printed = ir::printGraph(*g);
  ASSERT_TRUE(ir::inferGraphInPlace(*g, &testing::evaluator()).isOk());
  EXPECT_EQ(ir::printGraph(*g), printed);
  EXPECT_EQ(transposes(*g), 0) << printed;
  EXPECT_NE(printed.find("f32[2,5,2,16] = Shuffle \"split\" (x) {reshape=[2,5,2,16], zero_is_placeholder=0}"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("f32[2,5,32] = Shuffle \"merge\" (u) {reshape=[2,5,32], zero_is_placeholder=0}"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("ot: f16[2,5,4,6] = Shuffle \"back\" (c) {reshape=[2,5,4,6], zero_is_placeholder=0}"),
            std::string::npos)
      << printed;
  testing::expectSameOutputs(*before, *g, 1e-3);
}

TEST(AbsorbBatchTransposes, NearMissesStay) {
  auto pass = createAbsorbBatchTransposesPass();
  std::string const start = "Shuffle \"transpose\" (x) {first_perm=[1,0,2]}";
  std::string const back = "Shuffle \"transpose_back\" (obr) {first_perm=[1,0,2]}";
  // Another permutation at the start (a [B, E, S] tensor is not tokens) or at the end.
  testing::expectNoRewrite(*pass, replaced(replaced(replaced(kBlock, "input x: f32[2,5,32]", "input x: f32[2,32,5]"),
                                                    start, "Shuffle \"transpose\" (x) {first_perm=[2,0,1]}"),
                                           "ElementWise \"residual\" (ot, x)", "ElementWise \"residual\" (ot, ot)"));
  std::string const residual = "r: f32[2,5,32] = ElementWise \"residual\" (ot, x)";
  testing::expectNoRewrite(
      *pass, replaced(replaced(kBlock, back + "\n  " + residual,
                               "Shuffle \"transpose_back\" (obr) {first_perm=[0,2,1]}\n  r: f32[5,32,2] = "
                               "ElementWise \"residual\" (ot, ot)"),
                      "ot: f32[2,5,32]", "ot: f32[5,32,2]"));
  // No transpose back: the chain ends at an Identity.
  testing::expectNoRewrite(
      *pass,
      replaced(replaced(kBlock, back + "\n  " + residual,
                        "Identity \"transpose_back\" (obr)\n  r: f32[5,2,32] = ElementWise \"residual\" (ot, ot)"),
               "ot: f32[2,5,32]", "ot: f32[5,2,32]"));
  // A value of the chain read elsewhere too (a graph output, or another layer).
  testing::expectNoRewrite(*pass, replaced(kBlock, "  output r\n", "  output r\n  output p\n"));
  testing::expectNoRewrite(*pass, replaced(kBlock, "  output r\n", "  output r\n  output yv\n"));
  testing::expectNoRewrite(*pass, replaced(kBlock, "  output r\n",
                                           "  e: f32[5,2,96] = Unary \"extra\" (pb) {op=0}\n  output r\n  output e\n"));
  // A weight that differs per token (a batch dim over S), and a bias that differs per token (over B).
  testing::expectNoRewrite(*pass, replaced(kBlock, "w: f32[32,96] = Constant \"w\" () {data=random(1)}",
                                           "w: f32[5,32,96] = Constant \"w\" () {data=random(1)}"));
  testing::expectNoRewrite(*pass, replaced(kBlock, "bias: f32[96] = Constant \"bias\" () {data=random(2)}",
                                           "bias: f32[2,96] = Constant \"bias\" () {data=random(2)}"));
  // A reshape that mixes the tokens: [S*B, E] viewed as [B, S, E] holds them in neither order.
  testing::expectNoRewrite(
      *pass, replaced(replaced(replaced(kBlock, "obr: f32[5,2,32] = Shuffle \"reshape_back\" (ob) {reshape=[5,2,32]}",
                                        "obr: f32[2,5,32] = Shuffle \"reshape_back\" (ob) {reshape=[2,5,32]}"),
                               "ot: f32[2,5,32]", "ot: f32[5,2,32]"),
                      residual, "r: f32[5,2,32] = ElementWise \"residual\" (ot, ot)"));
  // A dynamic batch: the tokens' extents are unknown.
  std::string dyn = kBlock;
  for (auto [from, to] : std::vector<std::pair<char const*, char const*>>{
           {"input x: f32[2,5,32]", "input x: f32[-1,5,32]"},
           {"xt: f32[5,2,32]", "xt: f32[5,-1,32]"},
           {"p: f32[5,2,96]", "p: f32[5,-1,96]"},
           {"pb: f32[5,2,96]", "pb: f32[5,-1,96]"},
           {"pv: f32[5,2,3,2,16]", "pv: f32[5,-1,3,2,16]"},
           {"y: f32[5,2,2,16]", "y: f32[5,-1,2,16]"},
           {"{reshape=[10,32], zero_is_placeholder=0}", "{reshape=[-1,32], zero_is_placeholder=0}"},
           {"yv: f32[10,32]", "yv: f32[-1,32]"},
           {"o: f32[10,32]", "o: f32[-1,32]"},
           {"ob: f32[10,32]", "ob: f32[-1,32]"},
           {"{reshape=[5,2,32]}", "{reshape=[5,-1,32]}"},
           {"obr: f32[5,2,32]", "obr: f32[5,-1,32]"},
           {"ot: f32[2,5,32]", "ot: f32[-1,5,32]"},
           {"r: f32[2,5,32]", "r: f32[-1,5,32]"}})
    dyn = replaced(dyn, from, to);
  testing::expectNoRewrite(*pass, dyn);
}

}  // namespace
}  // namespace kiln::builder
