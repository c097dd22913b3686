// Tests of GELU recognition: the three orders exporters write the erf form in become one Activation kGELU_ERF
// (same outputs); near misses are left alone.
#include "builder/passes/pass_test_util.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

// x -> Div(sqrt 2) -> Erf -> Add 1 -> then `tail` (which must produce y) -> output y.
std::string gelu(std::string const& scale, std::string const& tail) {
  return "graph {\n"
         "  input x: f32[2,-1,8]\n"
         "  s: f32[1] = Constant \"s\" () {data=[" + scale + "]}\n"
         "  one: f32[1] = Constant \"one\" () {data=[1.0]}\n"
         "  half: f32[1] = Constant \"half\" () {data=[0.5]}\n"
         "  d: f32[2,-1,8] = ElementWise \"div\" (x, s) {op=5}\n"
         "  e: f32[2,-1,8] = Unary \"erf\" (d) {op=19}\n"
         "  a: f32[2,-1,8] = ElementWise \"add\" (e, one) {op=0}\n" + tail +
         "  output y\n"
         "}\n";
}

void expectFused(std::string const& text) {
  auto g = testing::parseInferred(text);
  ASSERT_TRUE(g);
  auto before = g->clone();
  EXPECT_TRUE(testing::runPass(*createFuseGeluPass(), *g));
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kActivation), 1) << text;
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kUnary), 0);
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kElementWise), 0);
  for (auto const& n : g->nodes())
    if (n->op == ir::OpType::kActivation) {
      EXPECT_EQ(n->attrs.getInt("type", -1), static_cast<int64_t>(kiln::ActivationType::kGELU_ERF));
      EXPECT_EQ(n->fusedFrom.size(), 5u);
    }
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->outputs()[0]->name, "y");
  testing::expectSameOutputs(*before, *g, 1e-6);
}

TEST(FuseGelu, TheThreeOrders) {
  // torch: (x * (1 + erf)) * 0.5
  expectFused(gelu("1.4142135381698608", "  m: f32[2,-1,8] = ElementWise \"mul\" (x, a) {op=1}\n"
                                         "  y: f32[2,-1,8] = ElementWise \"mul2\" (m, half) {op=1}\n"));
  // ((1 + erf) * 0.5) * x
  expectFused(gelu("1.4142135381698608", "  m: f32[2,-1,8] = ElementWise \"mul\" (half, a) {op=1}\n"
                                         "  y: f32[2,-1,8] = ElementWise \"mul2\" (m, x) {op=1}\n"));
  // (x * 0.5) * (1 + erf)
  expectFused(gelu("1.4142135381698608", "  h: f32[2,-1,8] = ElementWise \"mul\" (x, half) {op=1}\n"
                                         "  y: f32[2,-1,8] = ElementWise \"mul2\" (a, h) {op=1}\n"));
}

TEST(FuseGelu, NearMissesStay) {
  auto pass = createFuseGeluPass();
  // Divided by 2, not sqrt 2.
  testing::expectNoRewrite(*pass, gelu("2.0", "  m: f32[2,-1,8] = ElementWise \"mul\" (x, a) {op=1}\n"
                                              "  y: f32[2,-1,8] = ElementWise \"mul2\" (m, half) {op=1}\n"));
  // Multiplied by 0.25 at the end.
  testing::expectNoRewrite(*pass, gelu("1.4142135381698608",
                                       "  q: f32[1] = Constant \"q\" () {data=[0.25]}\n"
                                       "  m: f32[2,-1,8] = ElementWise \"mul\" (x, a) {op=1}\n"
                                       "  y: f32[2,-1,8] = ElementWise \"mul2\" (m, q) {op=1}\n"));
  // 1 + erf is read by a second layer too.
  std::string twice = gelu("1.4142135381698608", "  m: f32[2,-1,8] = ElementWise \"mul\" (x, a) {op=1}\n"
                                                 "  y: f32[2,-1,8] = ElementWise \"mul2\" (m, half) {op=1}\n"
                                                 "  output a\n");
  testing::expectNoRewrite(*pass, twice);
}

}  // namespace
}  // namespace kiln::builder
