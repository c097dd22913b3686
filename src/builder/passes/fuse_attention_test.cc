// Tests of attention fusion: the BERT (SDPA with mask and NaN cleanup), ViT (scaled q and k^T) and plain
// (Div by a constant, mask) forms become one Attention node with the same outputs; near misses and CPU builds
// are left alone.
#include "builder/passes/pass_test_util.h"
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
  // K's Transpose(0,2,3,1) keeps rows whole (0,2,1,3); the dead constants go with dead-layer elimination.
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
      "  q: f32[2,2,6,8] = Shuffle \"tq\" (qin) {first_perm=[0,2,1,3]}\n"
      "  kt: f32[2,2,6,8] = Shuffle \"tk\" (kin) {first_perm=[0,2,1,3]}\n"
      "  v: f32[2,2,6,8] = Shuffle \"tv\" (vin) {first_perm=[0,2,1,3]}\n"
      "  m: f32[2,1,1,6] = Select \"mask\" (am, zero, neg)\n"
      "  qk_attention_output: f32[2,2,6,8] = Attention \"qk_attention\" (q, kt, v, m) {k_transposed=0, "
      "nan_to_zero=1, scale=0.353553368012399} "
      "@fused=[\"softmax\",\"add\",\"qk\",\"mq\",\"mk\",\"isnan\",\"where\",\"pv\"]\n"
      "  ot: f32[2,6,2,8] = Shuffle \"to\" (qk_attention_output) {first_perm=[0,2,1,3]}\n"
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

TEST(FuseAttention, CpuBuildsKeepTheLayers) {
  auto g = testing::parseInferred(kBert);
  ASSERT_TRUE(g);
  PassContext ctx;
  ctx.cpuTarget = true;
  EXPECT_FALSE(testing::runPass(*createFuseAttentionPass(), *g, &ctx));
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kAttention), 0);
}

}  // namespace
}  // namespace kiln::builder
