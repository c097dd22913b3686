// Tests of broadcast elimination: And/Or with an identity constant pass their operand through when the pointwise
// layers after them restore the broadcast, and stay where a smaller tensor would change what is computed.
#include "builder/passes/pass_test_util.h"

namespace kiln::builder {
namespace {

using testing::expectNoRewrite;
using testing::expectRewrite;

// HuggingFace BERT's padding mask as PyTorch 2.x exports it: (q >= 0) and mask, Where(., 0, -inf), added to the
// scores of every head.
std::string const kBertMask =
    "graph {\n"
    "  input m: bool[2,1,1,4]\n"
    "  input s: f32[2,3,4,4]\n"
    "  q: bool[1,1,4,1] = Constant \"q\" () {data=[1,1,1,1]}\n"
    "  a: bool[2,1,4,4] = ElementWise \"and\" (q, m) {op=8}\n"
    "  z: f32[1,1,1,1] = Constant \"z\" () {data=[0.0]}\n"
    "  n: f32[1,1,1,1] = Constant \"n\" () {data=[-1e+03]}\n"
    "  w: f32[2,1,4,4] = Select \"where\" (a, z, n)\n"
    "  y: f32[2,3,4,4] = ElementWise \"add\" (s, w) {op=0}\n"
    "  output y\n"
    "}\n";

TEST(EliminateBroadcasts, KeepsTheKeyPaddingMaskSmall) {
  auto pass = createEliminateBroadcastsPass();
  expectRewrite(*pass, kBertMask,
                "graph {\n"
                "  input m: bool[2,1,1,4]\n"
                "  input s: f32[2,3,4,4]\n"
                "  q: bool[1,1,4,1] = Constant \"q\" () {data=[1,1,1,1]}\n"
                "  z: f32[1,1,1,1] = Constant \"z\" () {data=[0.0]}\n"
                "  n: f32[1,1,1,1] = Constant \"n\" () {data=[-1e+03]}\n"
                "  w: f32[2,1,1,4] = Select \"where\" (m, z, n)\n"
                "  y: f32[2,3,4,4] = ElementWise \"add\" (s, w) {op=0}\n"
                "  output y\n"
                "}\n");
}

TEST(EliminateBroadcasts, DynamicBatch) {
  auto pass = createEliminateBroadcastsPass();
  std::string g = kBertMask;  // every batch dim -1
  for (size_t at = g.find("[2,"); at != std::string::npos; at = g.find("[2,", at)) g.replace(at, 3, "[-1,");
  std::string expected =
      "graph {\n"
      "  input m: bool[-1,1,1,4]\n"
      "  input s: f32[-1,3,4,4]\n"
      "  q: bool[1,1,4,1] = Constant \"q\" () {data=[1,1,1,1]}\n"
      "  z: f32[1,1,1,1] = Constant \"z\" () {data=[0.0]}\n"
      "  n: f32[1,1,1,1] = Constant \"n\" () {data=[-1e+03]}\n"
      "  w: f32[-1,1,1,4] = Select \"where\" (m, z, n)\n"
      "  y: f32[-1,3,4,4] = ElementWise \"add\" (s, w) {op=0}\n"
      "  output y\n"
      "}\n";
  expectRewrite(*pass, g, expected);
  // The scores' query axis unknown: it could be 1 at run time, where the constant made it 4. Kept.
  std::string unknownRows = g;
  unknownRows.replace(unknownRows.find("input s: f32[-1,3,4,4]"), 22, "input s: f32[-1,3,-1,4]");
  expectNoRewrite(*pass, unknownRows);
}

TEST(EliminateBroadcasts, ExpandBeforeABroadcastingAdd) {
  auto pass = createEliminateBroadcastsPass();
  std::string const expand =
      "graph {\n"
      "  input m: f32[2,1,4]\n"
      "  input s: f32[2,3,4]\n"
      "  e: f32[2,3,4] = Slice \"expand\" (m) {mode=1, start=[0,0,0], size=[2,3,4], stride=[1,1,1]}\n"
      "  r: f32[2,3,4] = Activation \"relu\" (e) {type=0}\n"
      "  y: f32[2,3,4] = ElementWise \"add\" (s, r) {op=0}\n"
      "  output y\n"
      "}\n";
  expectRewrite(*pass, expand,
                "graph {\n"
                "  input m: f32[2,1,4]\n"
                "  input s: f32[2,3,4]\n"
                "  r: f32[2,1,4] = Activation \"relu\" (m) {type=0}\n"
                "  y: f32[2,3,4] = ElementWise \"add\" (s, r) {op=0}\n"
                "  output y\n"
                "}\n");
  // Not a broadcast: starting at 1 (a rotation of the repeated axis' source), a step of 2, clamping.
  for (auto const& [from, to] : {std::pair<char const*, char const*>{"start=[0,0,0]", "start=[0,0,1]"},
                                 {"stride=[1,1,1]", "stride=[1,1,2]"},
                                 {"mode=1", "mode=2"}}) {
    std::string g = expand;
    g.replace(g.find(from), std::string(from).size(), to);
    expectNoRewrite(*pass, g);
  }
}

TEST(EliminateBroadcasts, OrWithFalseAndSameShapes) {
  auto pass = createEliminateBroadcastsPass();
  // Same shapes: the operand replaces the result whoever reads it (here a graph output through a Unary).
  expectRewrite(*pass,
                "graph {\n"
                "  input m: bool[2,3]\n"
                "  f: bool[2,3] = Constant \"f\" () {data=[0,0,0,0,0,0]}\n"
                "  o: bool[2,3] = ElementWise \"or\" (m, f) {op=9}\n"
                "  y: bool[2,3] = Unary \"not\" (o) {op=20}\n"
                "  output y\n"
                "}\n",
                "graph {\n"
                "  input m: bool[2,3]\n"
                "  f: bool[2,3] = Constant \"f\" () {data=[0,0,0,0,0,0]}\n"
                "  y: bool[2,3] = Unary \"not\" (m) {op=20}\n"
                "  output y\n"
                "}\n");
}

TEST(EliminateBroadcasts, KeepsWhatTheBroadcastShapes) {
  auto pass = createEliminateBroadcastsPass();
  // Not everywhere true, or And with false (not an identity).
  for (char const* data : {"[1,0,1,1]", "[0,0,0,0]"}) {
    std::string g = kBertMask;
    g.replace(g.find("[1,1,1,1]"), 9, data);
    expectNoRewrite(*pass, g);
  }
  // The broadcast result is a graph output, or read by a layer that is not pointwise (its shape would change).
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input m: bool[2,1,1,4]\n"
                  "  q: bool[1,1,4,1] = Constant \"q\" () {data=[1,1,1,1]}\n"
                  "  a: bool[2,1,4,4] = ElementWise \"and\" (q, m) {op=8}\n"
                  "  output a\n"
                  "}\n");
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input m: bool[2,1,1,4]\n"
                  "  q: bool[1,1,4,1] = Constant \"q\" () {data=[1,1,1,1]}\n"
                  "  a: bool[2,1,4,4] = ElementWise \"and\" (q, m) {op=8}\n"
                  "  c: f32[2,1,4,4] = Cast \"cast\" (a) {to=0}\n"
                  "  y: f32[2,1,4] = Reduce \"sum\" (c) {op=0, axes=[3], keep_dims=0}\n"
                  "  output y\n"
                  "}\n");
  // Pointwise all the way to a graph output that would shrink.
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input m: bool[2,1,1,4]\n"
                  "  q: bool[1,1,4,1] = Constant \"q\" () {data=[1,1,1,1]}\n"
                  "  a: bool[2,1,4,4] = ElementWise \"and\" (q, m) {op=8}\n"
                  "  y: bool[2,1,4,4] = Unary \"not\" (a) {op=20}\n"
                  "  output y\n"
                  "}\n");
}

}  // namespace
}  // namespace kiln::builder
