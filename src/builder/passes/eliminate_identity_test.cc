// Tests of identity elimination: no-op Identity/Cast/Shuffle removal and merging of consecutive Shuffles.
#include "builder/passes/pass_test_util.h"

namespace kiln::builder {
namespace {

using testing::expectNoRewrite;
using testing::expectRewrite;

TEST(EliminateIdentity, RemovesNoOpsAndMergesReshapes) {
  auto pass = createEliminateIdentityPass();
  expectRewrite(*pass,
                "graph {\n"
                "  input x: f32[2,3]\n"
                "  i: f32[2,3] = Identity \"id\" (x)\n"
                "  c: f32[2,3] = Cast \"cast\" (i) {to=0}\n"
                "  p: f32[2,3] = Shuffle \"noop_perm\" (c) {first_perm=[0,1], second_perm=[0,1]}\n"
                "  q: f32[2,3] = Shuffle \"noop_reshape\" (p) {reshape=[0,-1]}\n"
                "  f: f32[6] = Shuffle \"flatten\" (q) {reshape=[6]}\n"
                "  r: f32[3,2] = Shuffle \"reshape\" (f) {reshape=[3,2]}\n"
                "  y: f32[3,2] = Activation \"relu\" (r) {type=0}\n"
                "  output y\n"
                "}\n",
                "graph {\n"
                "  input x: f32[2,3]\n"
                "  r: f32[3,2] = Shuffle \"reshape\" (x) {reshape=[3,2], zero_is_placeholder=0} "
                "@fused=[\"reshape\",\"flatten\"]\n"
                "  y: f32[3,2] = Activation \"relu\" (r) {type=0}\n"
                "  output y\n"
                "}\n");
}

TEST(EliminateIdentity, MergesTranspositionsAroundAReshape) {
  auto pass = createEliminateIdentityPass();
  // transpose [2,3,4] -> [4,2,3], reshape to [4,6], transpose to [6,4]: one Shuffle.
  expectRewrite(*pass,
                "graph {\n"
                "  input x: f32[2,3,4]\n"
                "  t: f32[4,2,3] = Shuffle \"t1\" (x) {first_perm=[2,0,1]}\n"
                "  r: f32[4,6] = Shuffle \"r\" (t) {reshape=[4,6]}\n"
                "  y: f32[6,4] = Shuffle \"t2\" (r) {first_perm=[1,0]}\n"
                "  output y\n"
                "}\n",
                "graph {\n"
                "  input x: f32[2,3,4]\n"
                "  y: f32[6,4] = Shuffle \"t2\" (x) {first_perm=[2,0,1], reshape=[4,6], second_perm=[1,0], "
                "zero_is_placeholder=0} @fused=[\"t2\",\"r\",\"t1\"]\n"
                "  output y\n"
                "}\n");
}

TEST(EliminateIdentity, TwoTranspositionsThatCancelDisappear) {
  auto pass = createEliminateIdentityPass();
  expectRewrite(*pass,
                "graph {\n"
                "  input x: f32[-1,3,5]\n"
                "  t: f32[5,-1,3] = Shuffle \"t1\" (x) {first_perm=[2,0,1]}\n"
                "  u: f32[-1,3,5] = Shuffle \"t2\" (t) {first_perm=[1,2,0]}\n"
                "  y: f32[-1,3,5] = Activation \"relu\" (u) {type=0}\n"
                "  output y\n"
                "}\n",
                "graph {\n"
                "  input x: f32[-1,3,5]\n"
                "  y: f32[-1,3,5] = Activation \"relu\" (x) {type=0}\n"
                "  output y\n"
                "}\n");
}

TEST(EliminateIdentity, AGraphOutputKeepsItsName) {
  auto pass = createEliminateIdentityPass();
  expectRewrite(*pass,
                "graph {\n"
                "  input x: f32[4]\n"
                "  a: f32[4] = Activation \"relu\" (x) {type=0}\n"
                "  y: f32[4] = Identity \"copy\" (a)\n"
                "  output y\n"
                "}\n",
                "graph {\n"
                "  input x: f32[4]\n"
                "  y: f32[4] = Activation \"relu\" (x) {type=0}\n"
                "  output y\n"
                "}\n");
}

TEST(EliminateIdentity, KeepsCopiesOfInputsAndOutputs) {
  auto pass = createEliminateIdentityPass();
  // A graph output that copies a graph input, or another output, must stay a separate tensor.
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[4]\n"
                  "  y: f32[4] = Identity \"copy_of_input\" (x)\n"
                  "  a: f32[4] = Activation \"relu\" (x) {type=0}\n"
                  "  z: f32[4] = Identity \"copy_of_output\" (a)\n"
                  "  output y\n"
                  "  output a\n"
                  "  output z\n"
                  "}\n");
}

TEST(EliminateIdentity, KeepsConversionsAndRealShuffles) {
  auto pass = createEliminateIdentityPass();
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[2,3]\n"
                  "  h: f16[2,3] = Cast \"to_half\" (x) {to=1}\n"
                  "  t: f16[3,2] = Shuffle \"transpose\" (h) {first_perm=[1,0]}\n"
                  "  y: f16[3,2] = Activation \"relu\" (t) {type=0}\n"
                  "  output y\n"
                  "}\n");
  // An Identity whose requested output type converts.
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[2]\n"
                  "  h: f16[2] = Identity \"convert\" (x) @out_types=[f16]\n"
                  "  y: f16[2] = Activation \"relu\" (h) {type=0}\n"
                  "  output y\n"
                  "}\n");
}

TEST(EliminateIdentity, DoesNotMergeShufflesWhenTheMiddleIsShared) {
  auto pass = createEliminateIdentityPass();
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[2,3]\n"
                  "  f: f32[6] = Shuffle \"flatten\" (x) {reshape=[6]}\n"
                  "  r: f32[3,2] = Shuffle \"reshape\" (f) {reshape=[3,2]}\n"
                  "  z: f32[6] = Activation \"relu\" (f) {type=0}\n"
                  "  output r\n"
                  "  output z\n"
                  "}\n");
  // Nor when the middle is a graph output.
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[2,3]\n"
                  "  f: f32[6] = Shuffle \"flatten\" (x) {reshape=[6]}\n"
                  "  r: f32[3,2] = Shuffle \"reshape\" (f) {reshape=[3,2]}\n"
                  "  output f\n"
                  "  output r\n"
                  "}\n");
}

TEST(EliminateIdentity, DoesNotMergeDynamicReshapes) {
  auto pass = createEliminateIdentityPass();
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[-1,6]\n"
                  "  f: f32[-1] = Shuffle \"flatten\" (x) {reshape=[-1]}\n"
                  "  r: f32[-1,2] = Shuffle \"reshape\" (f) {reshape=[-1,2]}\n"
                  "  output r\n"
                  "}\n");
}

TEST(EliminateIdentity, RemovesASliceThatReadsItsWholeInput) {
  auto pass = createEliminateIdentityPass();
  // An ONNX Expand to the shape the mask already has: a wrapping Slice from 0 whose size comes from a constant.
  expectRewrite(*pass,
                "graph {\n"
                "  input x: bool[1,1,4,4]\n"
                "  n: bool[1,1,4,4] = Unary \"not\" (x) {op=20}\n"
                "  s: i64[4] = Constant \"s\" () {data=[1,1,4,4]}\n"
                "  e: bool[1,1,4,4] = Slice \"expand\" (n, _, s) {mode=1, start=[0,0,0,0], stride=[1,1,1,1]}\n"
                "  y: bool[1,1,4,4] = Unary \"not2\" (e) {op=20}\n"
                "  output y\n"
                "}\n",
                "graph {\n"
                "  input x: bool[1,1,4,4]\n"
                "  n: bool[1,1,4,4] = Unary \"not\" (x) {op=20}\n"
                "  s: i64[4] = Constant \"s\" () {data=[1,1,4,4]}\n"  // dead now: eliminate_dead_layers' to drop
                "  y: bool[1,1,4,4] = Unary \"not2\" (n) {op=20}\n"
                "  output y\n"
                "}\n");
}

TEST(EliminateIdentity, KeepsSlicesThatMoveData) {
  auto pass = createEliminateIdentityPass();
  // Same shape, but wrapping from index 1, or every second element wrapped around: both reorder the data.
  for (char const* attrs : {"{mode=1, start=[1], size=[4], stride=[1]}", "{mode=1, start=[0], size=[4], stride=[2]}"}) {
    expectNoRewrite(*pass, std::string("graph {\n"
                                       "  input x: f32[4]\n"
                                       "  n: f32[4] = Activation \"relu\" (x) {type=0}\n"
                                       "  e: f32[4] = Slice \"s\" (n) ") +
                               attrs +
                               "\n"
                               "  y: f32[4] = Activation \"relu2\" (e) {type=0}\n"
                               "  output y\n"
                               "}\n");
  }
  // A start known only at run time.
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[4]\n"
                  "  input st: i64[1]\n"
                  "  n: f32[4] = Activation \"relu\" (x) {type=0}\n"
                  "  e: f32[4] = Slice \"s\" (n, st) {mode=1, size=[4], stride=[1]}\n"
                  "  y: f32[4] = Activation \"relu2\" (e) {type=0}\n"
                  "  output y\n"
                  "}\n");
}

}  // namespace
}  // namespace kiln::builder
