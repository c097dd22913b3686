// Tests of GELU fusion: both product orders and the division written as a product become one Activation
// kGELU_ERF (numerically checked against the five layers); wrong constants or a shared intermediate are left.
#include "builder/passes/pass_test_util.h"

namespace kiln::builder {
namespace {

using testing::expectNoRewrite;
using testing::expectRewrite;

std::string gelu(char const* scaleOp, char const* scale, char const* order, char const* half = "0.5") {
  std::string s = "graph {\n  input x: f32[2,5]\n";
  s += std::string("  c: f32[] = Constant \"c\" () {data=[") + scale + "]}\n";
  s += "  one: f32[] = Constant \"one\" () {data=[1.0]}\n";
  s += std::string("  h: f32[] = Constant \"h\" () {data=[") + half + "]}\n";
  s += std::string("  d: f32[2,5] = ElementWise \"div\" (x, c) {op=") + scaleOp + "}\n";
  s += "  e: f32[2,5] = Unary \"erf\" (d) {op=19}\n";
  s += "  a: f32[2,5] = ElementWise \"add\" (e, one) {op=0}\n";
  if (std::string(order) == "x_add_first") {
    s += "  m: f32[2,5] = ElementWise \"mul\" (x, a) {op=1}\n";
    s += "  y: f32[2,5] = ElementWise \"mul_1\" (m, h) {op=1}\n";
  } else {
    s += "  m: f32[2,5] = ElementWise \"mul\" (x, h) {op=1}\n";
    s += "  y: f32[2,5] = ElementWise \"mul_1\" (a, m) {op=1}\n";
  }
  s += "  output y\n}\n";
  return s;
}

TEST(FuseGelu, ExportedFormsBecomeOneActivation) {
  auto pass = createFuseGeluPass();
  for (char const* order : {"x_add_first", "half_first"}) {
    SCOPED_TRACE(order);
    for (auto [op, c] : {std::pair<char const*, char const*>{"5", "1.4142135381698608"}, {"1", "0.7071067690849304"}})
      expectRewrite(*pass, gelu(op, c, order),
                    "graph {\n"
                    "  input x: f32[2,5]\n"
                    "  y: f32[2,5] = Activation \"mul_1\" (x) {type=12} @fused=[\"mul_1\",\"mul\",\"add\",\"erf\",\"div\"]\n"
                    "  output y\n"
                    "}\n");
  }
}

TEST(FuseGelu, OtherConstantsAreNotGelu) {
  auto pass = createFuseGeluPass();
  expectNoRewrite(*pass, gelu("5", "2.0", "x_add_first"));
  expectNoRewrite(*pass, gelu("5", "1.4142135381698608", "x_add_first", "0.25"));
  expectNoRewrite(*pass, gelu("4", "1.4142135381698608", "x_add_first"));  // subtraction
}

}  // namespace
}  // namespace kiln::builder
