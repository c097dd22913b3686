// Tests of the IR text form: exact printing, parse -> print round trips, constant data forms and errors.
#include "ir/text.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln::ir {
namespace {

std::unique_ptr<Graph> parseOk(std::string_view text) {
  auto g = parseGraph(text);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  return g.isOk() ? std::move(g).value() : nullptr;
}

std::string parseError(std::string_view text) {
  auto g = parseGraph(text);
  EXPECT_FALSE(g.isOk());
  return g.isOk() ? std::string() : g.status().message();
}

TEST(IrText, ParsesAndPrintsTheExampleExactly) {
  std::string const text =
      "graph {\n"
      "  input x: f32[1,3,-1,-1]\n"
      "  conv1_w: f32[2,3,1,1] = Constant \"conv1_w\" () {data=[1.0,2.0,3.0,4.0,5.0,6.5]}\n"
      "  y: f32[1,2,-1,-1] = Convolution \"conv1\" (x, conv1_w, _) {dilations=[1,1], groups=1, "
      "kernel_shape=[1,1], pads_begin=[0,0], pads_end=[0,0], strides=[1,1]}\n"
      "  output y\n"
      "}\n";
  auto g = parseOk(text);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(g->inputs()[0]->name, "x");
  EXPECT_TRUE(dimsEqual(g->inputs()[0]->shape, makeDims({1, 3, -1, -1})));
  Node* conv = g->findNode("conv1");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->op, OpType::kConvolution);
  ASSERT_EQ(conv->inputs.size(), 3u);
  EXPECT_EQ(conv->inputs[0]->name, "x");
  EXPECT_EQ(conv->inputs[1]->name, "conv1_w");
  EXPECT_EQ(conv->inputs[2], nullptr);
  EXPECT_EQ(conv->attrs.getInt("groups"), 1);
  EXPECT_EQ(conv->attrs.getInts("strides"), (std::vector<int64_t>{1, 1}));
  EXPECT_TRUE(std::holds_alternative<int64_t>(*conv->attrs.find("groups")));
  Node* w = g->findNode("conv1_w");
  ASSERT_TRUE(w && w->constant);
  EXPECT_TRUE(dimsEqual(w->constant->shape(), makeDims({2, 3, 1, 1})));
  EXPECT_EQ(w->constant->as<float>()[5], 6.5f);
  EXPECT_TRUE(dimsEqual(conv->outputs[0]->shape, makeDims({1, 2, -1, -1})));
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->outputs()[0]->name, "y");
  EXPECT_EQ(printGraph(*g), text);
}

TEST(IrText, RoundTripsEveryFeature) {
  Graph g;
  Value* in = *g.addInput("(Unnamed Layer* 3) [Convolution]_output", DataType::kHALF, makeDims({2, -1}));
  Value* in2 = *g.addInput("input", DataType::kINT64, makeDims({}));
  Node* c = g.addConstant("c", HostTensor::fromVector<int64_t>(DataType::kINT32, makeDims({3}),
                                                               {-2147483648LL, 0, 7}));
  ASSERT_TRUE(g.renameValue(c->outputs[0], "c").isOk());
  Node* h = g.addConstant("h", HostTensor::fromVector<double>(DataType::kHALF, makeDims({2}), {0.1, -65504.0}));
  ASSERT_TRUE(g.renameValue(h->outputs[0], "h").isOk());
  Node* b = g.addConstant("", HostTensor::fromVector<int>(DataType::kBOOL, makeDims({2}), {1, 0}));
  ASSERT_TRUE(g.renameValue(b->outputs[0], "_").isOk());
  Node* s = g.addConstant("s", HostTensor::fromVector<double>(DataType::kFLOAT, makeDims({}), {-INFINITY}));
  Node* n = g.addNode(OpType::kGather, "na\"me\\\n\x01", {in, nullptr, c->outputs[0], in2, h->outputs[0],
                                                         b->outputs[0], s->outputs[0]}, 2);
  n->attrs.setFloat("f", 1.0);
  n->attrs.set("fl", std::vector<double>{0.5, 1e20, NAN, 0.1});
  n->attrs.setInt("i", -3);
  n->attrs.setInts("il", {});
  n->attrs.setInts("il2", {4, -5});
  n->attrs.setString("s", "q\"\t");
  n->precision = DataType::kHALF;
  n->outputs[1]->requestedType = DataType::kINT32;
  n->tactic = "gather_reference";
  n->fusedFrom = {"x", "y z"};
  n->outputs[0]->dtype = DataType::kHALF;
  n->outputs[0]->shape = makeDims({2});
  ASSERT_TRUE(g.renameValue(n->outputs[0], "a").isOk());
  ASSERT_TRUE(g.renameValue(n->outputs[1], "b 2").isOk());
  n->outputs[1]->dtype = DataType::kINT64;
  n->outputs[1]->shape = makeDims({1});
  g.markOutput(n->outputs[0]);
  g.markOutput(n->outputs[1]);
  g.markOutput(in2);

  std::string printed = printGraph(g);
  std::string const expected =
      "graph {\n"
      "  input \"(Unnamed Layer* 3) [Convolution]_output\": f16[2,-1]\n"
      "  input \"input\": i64[]\n"
      "  c: i32[3] = Constant \"c\" () {data=[-2147483648,0,7]}\n"
      "  h: f16[2] = Constant \"h\" () {data=[0.099975586,-65504.0]}\n"
      "  \"_\": bool[2] = Constant \"\" () {data=[1,0]}\n"
      "  s_output: f32[] = Constant \"s\" () {data=[-inf]}\n"
      "  a: f16[2], \"b 2\": i64[1] = Gather \"na\\\"me\\\\\\n\\x01\" (\"(Unnamed Layer* 3) [Convolution]_output\", _, "
      "c, \"input\", h, \"_\", s_output) {f=1.0, fl=[0.5,1e+20,nan,0.1], i=-3, il=[], il2=[4,-5], s=\"q\\\"\\t\"} "
      "@precision=f16 @out_types=[_,i32] @tactic=\"gather_reference\" @fused=[\"x\",\"y z\"]\n"
      "  output a\n"
      "  output \"b 2\"\n"
      "  output \"input\"\n"
      "}\n";
  EXPECT_EQ(printed, expected);
  auto g2 = parseOk(printed);
  ASSERT_TRUE(g2);
  EXPECT_EQ(printGraph(*g2), printed);
  Node* n2 = g2->findNode("na\"me\\\n\x01");
  ASSERT_NE(n2, nullptr);
  EXPECT_EQ(n2->attrs.getInts("il2"), (std::vector<int64_t>{4, -5}));
  EXPECT_EQ(n2->attrs.getString("s"), "q\"\t");
  EXPECT_TRUE(std::holds_alternative<double>(*n2->attrs.find("f")));
  EXPECT_TRUE(std::holds_alternative<int64_t>(*n2->attrs.find("i")));
  EXPECT_EQ(n2->attrs.getFloats("fl")[3], 0.1);  // shortest round-trip text reads back exactly
  EXPECT_TRUE(std::isnan(n2->attrs.getFloats("fl")[2]));
  EXPECT_EQ(n2->precision, DataType::kHALF);
  EXPECT_FALSE(n2->outputs[0]->requestedType.has_value());
  EXPECT_EQ(n2->outputs[1]->requestedType, DataType::kINT32);
  EXPECT_EQ(n2->fusedFrom, (std::vector<std::string>{"x", "y z"}));
  Node* c2 = g2->findNode("c");
  ASSERT_TRUE(c2 && c2->constant);
  EXPECT_TRUE(c2->constant->sameContents(*c->constant));
  EXPECT_TRUE(g2->findNode("h")->constant->sameContents(*h->constant));
  EXPECT_TRUE(g2->findNode("")->constant->sameContents(*b->constant));
  ASSERT_EQ(g2->outputs().size(), 3u);
  EXPECT_TRUE(g2->outputs()[2]->isInput);
}

TEST(IrText, FloatsAlwaysLookLikeFloats) {
  EXPECT_EQ(formatFloat(1.0), "1.0");
  EXPECT_EQ(formatFloat(-0.0), "-0.0");
  EXPECT_EQ(formatFloat(2.5e-8), "2.5e-08");
  EXPECT_EQ(formatFloat(1e300), "1e+300");
  EXPECT_EQ(formatFloat(INFINITY), "inf");
  EXPECT_EQ(formatFloat(-INFINITY), "-inf");
  EXPECT_EQ(formatFloat(NAN), "nan");
  EXPECT_EQ(std::strtod(formatFloat(0.1 + 0.2).c_str(), nullptr), 0.1 + 0.2);
}

TEST(IrText, LargeConstantsPrintAsSummaryUnlessAskedForFullData) {
  std::string const text =
      "graph {\n"
      "  w: f32[17] = Constant \"w\" () {data=random(7)}\n"
      "  output w\n"
      "}\n";
  auto g = parseOk(text);
  ASSERT_TRUE(g);
  std::string summary = printGraph(*g);
  EXPECT_EQ(summary, "graph {\n  w: f32[17] = Constant \"w\" () {data=<f32 x 17>}\n  output w\n}\n");
  std::string err = parseError(summary);
  EXPECT_NE(err.find("line 2, column 38"), std::string::npos) << err;
  EXPECT_NE(err.find("fullConstants"), std::string::npos) << err;

  PrintOptions full;
  full.fullConstants = true;
  std::string fullText = printGraph(*g, full);
  auto g2 = parseOk(fullText);
  ASSERT_TRUE(g2);
  EXPECT_EQ(printGraph(*g2, full), fullText);
  EXPECT_TRUE(g2->findNode("w")->constant->sameContents(*g->findNode("w")->constant));
}

TEST(IrText, RandomDataIsDeterministicAndInRange) {
  auto a = makeRandomTensor(DataType::kFLOAT, makeDims({1000}), 3);
  auto b = makeRandomTensor(DataType::kFLOAT, makeDims({1000}), 3);
  auto c = makeRandomTensor(DataType::kFLOAT, makeDims({1000}), 4);
  ASSERT_TRUE(a.isOk() && b.isOk() && c.isOk());
  EXPECT_TRUE(a->sameContents(*b));
  EXPECT_FALSE(a->sameContents(*c));
  double lo = 1, hi = -1, sum = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    double v = a->doubleAt(i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  EXPECT_GE(lo, -1.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_LT(lo, -0.9);
  EXPECT_GT(hi, 0.9);
  EXPECT_LT(std::fabs(sum / 1000), 0.1);
  auto i8 = makeRandomTensor(DataType::kINT8, makeDims({200}), 1);
  ASSERT_TRUE(i8.isOk());
  bool anyNonZero = false;
  for (int64_t i = 0; i < 200; ++i) {
    EXPECT_GE(i8->intAt(i), -8);
    EXPECT_LT(i8->intAt(i), 8);
    anyNonZero |= i8->intAt(i) != 0;
  }
  EXPECT_TRUE(anyNonZero);
  auto e = makeRandomTensor(DataType::kHALF, makeDims({0, 3}), 1);
  ASSERT_TRUE(e.isOk());
  EXPECT_EQ(e->count(), 0);
}

TEST(IrText, FillAndTypedConstantData) {
  auto g = parseOk(
      "graph {\n"
      "  a: f16[2,2] = Constant \"a\" () {data=fill(0.5)}\n"
      "  b: i64[3] = Constant \"b\" () {data=[9007199254740993,-1,2]}\n"
      "  c: bf16[1] = Constant \"c\" () {data=[1]}\n"
      "  d: i8[2] = Constant \"d\" () {data=fill(-3)}\n"
      "  output a\n"
      "}\n");
  ASSERT_TRUE(g);
  HostTensor const& a = *g->findNode("a")->constant;
  EXPECT_EQ(a.dtype(), DataType::kHALF);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(a.doubleAt(i), 0.5);
  EXPECT_EQ(g->findNode("b")->constant->as<int64_t>()[0], 9007199254740993LL);  // not rounded through double
  EXPECT_EQ(g->findNode("c")->constant->doubleAt(0), 1.0);
  EXPECT_EQ(g->findNode("d")->constant->intAt(1), -3);
  // The parsed graph has no unused-output problems: b..d are not outputs but stay in the graph.
  EXPECT_EQ(g->nodes().size(), 4u);
}

TEST(IrText, CommentsAndBlankLinesAreIgnored) {
  auto g = parseOk(
      "# a comment\n"
      "\n"
      "graph {   # trailing\n"
      "  input x: f32[2]\n"
      "\n"
      "  y: f32[2] = Identity \"id\" (x)   # the only node\n"
      "  output y\n"
      "}\n"
      "\n");
  ASSERT_TRUE(g);
  EXPECT_EQ(printGraph(*g), "graph {\n  input x: f32[2]\n  y: f32[2] = Identity \"id\" (x)\n  output y\n}\n");
}

TEST(IrText, PrintsInTopologicalOrder) {
  Graph g;
  Value* x = *g.addInput("x", DataType::kFLOAT, makeDims({1}));
  Node* id = g.addNode(OpType::kIdentity, "second", {x});
  Node* first = g.addNode(OpType::kIdentity, "first", {x});
  id->inputs[0] = first->outputs[0];
  for (Value* v : {id->outputs[0], first->outputs[0]}) v->shape = makeDims({1});
  g.markOutput(id->outputs[0]);
  std::string p = printGraph(g);
  EXPECT_LT(p.find("\"first\""), p.find("\"second\""));
  auto g2 = parseOk(p);
  ASSERT_TRUE(g2);
  EXPECT_EQ(printGraph(*g2), p);
}

TEST(IrText, AnnotationsCanBeLeftOut) {
  auto g = parseOk(
      "graph {\n  input x: f32[2]\n  y: f32[2] = Identity \"id\" (x) @precision=f16 @fused=[\"a\"]\n  output y\n}\n");
  ASSERT_TRUE(g);
  PrintOptions o;
  o.annotations = false;
  EXPECT_EQ(printGraph(*g, o), "graph {\n  input x: f32[2]\n  y: f32[2] = Identity \"id\" (x)\n  output y\n}\n");
}

struct ErrorCase {
  char const* text;
  char const* where;
  char const* what;
};

TEST(IrText, ErrorsGiveLineAndColumn) {
  ErrorCase const cases[] = {
      {"", "line 1, column 1", "expected 'graph'"},
      {"graph {\n  input x: f32[2]\n", "line 3", "missing '}'"},
      {"graph {\n  y: f32[2] = Nope \"n\" ()\n}\n", "line 2, column 15", "unknown op 'Nope'"},
      {"graph {\n  y: f32[2] = Identity \"n\" (x)\n}\n", "line 2, column 29", "unknown tensor 'x'"},
      {"graph {\n  input x: f33[2]\n}\n", "line 2, column 12", "unknown data type 'f33'"},
      {"graph {\n  input x: f32[2\n}\n", "line 2, column 17", "expected ',' or ']'"},
      {"graph {\n  input x: f32[2.5]\n}\n", "line 2, column 16", "dimension"},
      {"graph {\n  input x: f32[2]\n  input x: f32[2]\n}\n", "line 3", "already used"},
      {"graph {\n  input x: f32[2]\n  x: f32[2] = Identity \"n\" (x)\n}\n", "line 3, column 3", "defined twice"},
      {"graph {\n  w: f32[3] = Constant \"w\" () {data=[1.0,2.0]}\n}\n", "line 2, column 32", "2 values"},
      {"graph {\n  w: f32[-1] = Constant \"w\" () {data=random(1)}\n}\n", "line 2", "fully known shape"},
      {"graph {\n  w: f32[1] = Constant \"w\" ()\n}\n", "line 2", "needs data"},
      {"graph {\n  w: i8[1] = Constant \"w\" () {data=[300]}\n}\n", "line 2", "does not fit"},
      {"graph {\n  w: f32[1] = Constant \"w\" () {data=zeros()}\n}\n", "line 2, column 37", "random(SEED)"},
      {"graph {\n  input x: f32[2]\n  y: f32[2] = Identity \"n (x)\n}\n", "line 3", "unterminated string"},
      {"graph {\n  input x: f32[2]\n  y: f32[2] = Identity \"n\" (x) {a=}\n}\n", "line 3, column 35",
       "attribute value"},
      {"graph {\n  input x: f32[2]\n  y: f32[2] = Identity \"n\" (x) @color=1\n}\n", "line 3", "unknown annotation"},
      {"graph {\n  input x: f32[2]\n  y: f32[2] = Identity \"n\" (x) extra\n}\n", "line 3, column 32",
       "end of the line"},
      {"graph {\n  input x: f32[2]\n  output y\n}\n", "line 3, column 10", "unknown tensor 'y'"},
      {"graph {\n  input x: f32[2]\n  output x\n  output x\n}\n", "line 4", "twice"},
      {"graph {\n}\nmore\n", "line 3", "after the end"},
      {"graph {\n  input x: f32[2]\n  y: f32[2] = Identity \"n\" (x) {v=99999999999999999999}\n}\n", "line 3",
       "out of range"},
  };
  for (auto const& c : cases) {
    std::string err = parseError(c.text);
    EXPECT_NE(err.find(c.where), std::string::npos) << c.text << "\n-> " << err;
    EXPECT_NE(err.find(c.what), std::string::npos) << c.text << "\n-> " << err;
  }
}

// Found by ir_text_fuzz: uint64 constants did not round-trip. The printer wrote values past INT64_MAX as
// negative numbers (data=random() makes such values), and the parser refused every uint64 value, its range
// check comparing against UINT64_MAX cast to int64 (-1).
TEST(IrText, Uint64ConstantsRoundTrip) {
  std::string const text =
      "graph {\n  c: u64[4] = Constant \"c\" () {data=[0,5,9223372036854775808,18446744073709551615]}\n"
      "  output c\n}\n";
  auto g = parseOk(text);
  ASSERT_TRUE(g);
  Node* c = g->findNode("c");
  ASSERT_TRUE(c && c->constant);
  EXPECT_EQ(c->constant->as<uint64_t>()[1], 5U);
  EXPECT_EQ(c->constant->as<uint64_t>()[2], uint64_t{1} << 63);
  EXPECT_EQ(c->constant->as<uint64_t>()[3], ~uint64_t{0});
  PrintOptions full;
  full.fullConstants = true;
  EXPECT_EQ(printGraph(*g, full), text);
  // random() fills uint64 with values past INT64_MAX; print -> parse -> print is stable.
  auto r = parseOk("graph {\n  w: u64[2,3] = Constant \"w\" () {data=random(1)}\n  output w\n}\n");
  ASSERT_TRUE(r);
  std::string const printed = printGraph(*r, full);
  auto again = parseOk(printed);
  ASSERT_TRUE(again);
  EXPECT_EQ(printGraph(*again, full), printed);
  // Past UINT64_MAX, and past INT64_MAX for the other integer types and in attributes, is an error.
  EXPECT_NE(parseError("graph {\n  c: u64[1] = Constant \"c\" () {data=[18446744073709551616]}\n}\n")
                .find("out of range"),
            std::string::npos);
  EXPECT_NE(parseError("graph {\n  c: i64[1] = Constant \"c\" () {data=[9223372036854775808]}\n}\n")
                .find("does not fit"),
            std::string::npos);
  EXPECT_NE(parseError("graph {\n  input x: f32[1]\n  y: f32[1] = Identity \"i\" (x) {k=9223372036854775808}\n"
                       "  output y\n}\n")
                .find("out of range"),
            std::string::npos);
}

// A few characters must not ask for gigabytes: constants past
// kMaxTextConstantElements are refused with the line and column, before allocating.
TEST(IrText, HugeConstantsAreRefusedBeforeAllocating) {
  for (char const* data : {"fill(0)", "random(3)", "[1]"}) {
    std::string const text = std::string("graph {\n  c: f32[65536,65536] = Constant \"c\" () {data=") + data +
                             "}\n  output c\n}\n";
    std::string const e = parseError(text);
    EXPECT_NE(e.find("larger than the text form makes"), std::string::npos) << e;
    EXPECT_NE(e.find("line 2"), std::string::npos) << e;
  }
  EXPECT_NE(parseOk("graph {\n  c: u8[4096,4096] = Constant \"c\" () {data=fill(1)}\n  output c\n}\n"), nullptr);
}

}  // namespace
}  // namespace kiln::ir
