// Tests of precision assignment: kFP16/kBF16 move float compute layers to the reduced type with casts at the
// edges, network I/O keeps its types, layer precision and output types are honored, strong typing is left
// alone; results stay close to the float32 graph.
#include "builder/precision.h"

#include <gtest/gtest.h>

#include <cmath>

#include "backends/reference/graph_interpreter.h"
#include "ir/shape_inference.h"
#include "ir/text.h"

namespace kiln::builder {
namespace {

constexpr char kNet[] =
    "graph {\n"
    "  input x: f32[1,2,5,5]\n"
    "  w: f32[3,2,3,3] = Constant \"w\" () {data=random(1)}\n"
    "  c: f32[1,3,3,3] = Convolution \"conv\" (x, w, _) {dilations=[1,1], groups=1, kernel_shape=[3,3], "
    "num_output_maps=3, pads_begin=[0,0], pads_end=[0,0], strides=[1,1]}\n"
    "  r: f32[1,3,3,3] = Activation \"relu\" (c) {type=0}\n"
    "  s: f32[1,27] = Shuffle \"flat\" (r) {reshape=[1,27]}\n"
    "  output s\n"
    "}\n";

std::unique_ptr<ir::Graph> parse(char const* text) {
  auto g = ir::parseGraph(text);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  auto graph = std::move(g).value();
  EXPECT_TRUE(ir::inferGraphInPlace(*graph, nullptr).isOk());
  return graph;
}

int countOps(ir::Graph const& g, ir::OpType op) {
  int n = 0;
  for (auto const& node : g.nodes()) n += node->op == op;
  return n;
}

double normRelError(HostTensor const& a, HostTensor const& b) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.count(); ++i) {
    double d = a.doubleAt(i) - b.doubleAt(i);
    num += d * d;
    den += b.doubleAt(i) * b.doubleAt(i);
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

TEST(Precision, Fp16MovesComputeAndKeepsIo) {
  for (BuilderFlag flag : {BuilderFlag::kFP16, BuilderFlag::kBF16}) {
    auto ref = parse(kNet);
    auto g = parse(kNet);
    PrecisionOptions opt;
    opt.flags = 1u << static_cast<uint32_t>(flag);
    ASSERT_TRUE(assignPrecision(*g, opt).isOk());
    DataType reduced = flag == BuilderFlag::kFP16 ? DataType::kHALF : DataType::kBF16;
    EXPECT_EQ(g->findNode("conv")->outputs[0]->dtype, reduced);
    EXPECT_EQ(g->findNode("relu")->outputs[0]->dtype, reduced);
    ASSERT_EQ(g->outputs().size(), 1u);
    EXPECT_EQ(g->outputs()[0]->name, "s");
    EXPECT_EQ(g->outputs()[0]->dtype, DataType::kFLOAT);
    EXPECT_EQ(g->inputs()[0]->dtype, DataType::kFLOAT);
    EXPECT_GE(countOps(*g, ir::OpType::kCast), 3);  // x and w in, s out
    HostTensor x = *ir::makeRandomTensor(DataType::kFLOAT, makeDims({1, 2, 5, 5}), 7);
    auto a = backends::runGraphOnHost(*g, {x});
    auto b = backends::runGraphOnHost(*ref, {x});
    ASSERT_TRUE(a.isOk()) << a.status().toString();
    ASSERT_TRUE(b.isOk()) << b.status().toString();
    double err = normRelError((*a)[0], (*b)[0]);
    EXPECT_LT(err, flag == BuilderFlag::kFP16 ? 5e-3 : 2e-2);
    EXPECT_GT(err, 0.0);  // really computed in the reduced type
  }
}

TEST(Precision, NothingChangesWithoutFlagsOrWhenStronglyTyped) {
  auto g = parse(kNet);
  std::string before = ir::printGraph(*g);
  ASSERT_TRUE(assignPrecision(*g, {}).isOk());
  EXPECT_EQ(ir::printGraph(*g), before);
  PrecisionOptions strong;
  strong.flags = 1u << static_cast<uint32_t>(BuilderFlag::kFP16);
  strong.stronglyTyped = true;
  ASSERT_TRUE(assignPrecision(*g, strong).isOk());
  EXPECT_EQ(ir::printGraph(*g), before);
}

TEST(Precision, LayerPrecisionAndOutputTypeAreHonored) {
  auto g = parse(kNet);
  g->findNode("relu")->precision = DataType::kHALF;
  g->findNode("conv")->outputs[0]->requestedType = DataType::kBF16;
  ASSERT_TRUE(assignPrecision(*g, {}).isOk());
  EXPECT_EQ(g->findNode("relu")->outputs[0]->dtype, DataType::kHALF);
  EXPECT_EQ(g->findNode("conv")->outputs[0]->dtype, DataType::kFLOAT);
  // The conv output is cast to bf16 for its users, then relu casts it to fp16.
  ir::Value* reluIn = g->findNode("relu")->inputs[0];
  ASSERT_TRUE(reluIn->producer);
  EXPECT_EQ(reluIn->producer->op, ir::OpType::kCast);
  EXPECT_EQ(g->outputs()[0]->dtype, DataType::kFLOAT);
}

// Regression: an intermediate tensor marked as a network output (kilnexec --check-layers marks them all) got
// its float32 output cast wired into the layers that read it, which then mixed float32 and float16 inputs.
TEST(Precision, IntermediateOutputKeepsConsumersInReducedType) {
  constexpr char kTwoOutputs[] =
      "graph {\n"
      "  input x: f32[2,3]\n"
      "  b: f32[2,3] = Constant \"b\" () {data=random(2)}\n"
      "  r: f32[2,3] = Activation \"relu\" (x) {type=0}\n"
      "  y: f32[2,3] = ElementWise \"add\" (r, b) {op=0}\n"
      "  output r\n"
      "  output y\n"
      "}\n";
  auto g = parse(kTwoOutputs);
  PrecisionOptions opt;
  opt.flags = 1u << static_cast<uint32_t>(BuilderFlag::kFP16);
  ASSERT_TRUE(assignPrecision(*g, opt).isOk());
  ir::Node const* add = g->findNode("add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->inputs[0]->dtype, DataType::kHALF);
  EXPECT_EQ(add->inputs[0], g->findNode("relu")->outputs[0]);
  for (ir::Value const* out : g->outputs()) EXPECT_EQ(out->dtype, DataType::kFLOAT) << out->name;
  EXPECT_EQ(g->outputs()[0]->name, "r");
}

}  // namespace
}  // namespace kiln::builder

namespace kiln::builder {
namespace {

// A float32 constant joined with reduced-precision activations (ViT's class token concatenated with the patch
// embeddings; BERT's mask select between a float32 fill and fp16 scores): the joining layer gets one type, the
// build succeeds, and no cast converts a tensor to the type it already has.
constexpr char kJoin[] =
    "graph {\n"
    "  input x: f32[2,4]\n"
    "  input m: bool[2,4]\n"
    "  k: f32[2,4] = Constant \"k\" () {data=random(2)}\n"
    "  cls: f32[1,4] = Constant \"cls\" () {data=random(3)}\n"
    "  t: f32[2,4] = Activation \"tanh\" (x) {type=2}\n"
    "  v: f32[2,4] = Shuffle \"view\" (t) {reshape=[2,4]}\n"
    "  j: f32[3,4] = Concatenation \"join\" (cls, v) {axis=0}\n"
    "  s: f32[2,4] = Select \"mask\" (m, k, v) {}\n"
    "  e: f32[2,4] = ElementWise \"add\" (v, s) {op=0}\n"
    "  output j\n"
    "  output e\n"
    "}\n";

TEST(Precision, LayoutOpsJoiningFloat32AndReducedDataGetOneType) {
  for (BuilderFlag flag : {BuilderFlag::kFP16, BuilderFlag::kBF16}) {
    auto g = parse(kJoin);
    PrecisionOptions opt;
    opt.flags = 1u << static_cast<uint32_t>(flag);
    Status s = assignPrecision(*g, opt);
    ASSERT_TRUE(s.isOk()) << s.toString();
    DataType reduced = flag == BuilderFlag::kFP16 ? DataType::kHALF : DataType::kBF16;
    ir::Node const* join = g->findNode("join");
    EXPECT_EQ(join->inputs[0]->dtype, reduced);
    EXPECT_EQ(join->inputs[1]->dtype, reduced);
    ir::Node const* sel = g->findNode("mask");
    EXPECT_EQ(sel->inputs[1]->dtype, reduced);
    EXPECT_EQ(sel->inputs[2]->dtype, reduced);
    // The Shuffle carries the reduced type, so the add reads it without a cast.
    EXPECT_EQ(g->findNode("view")->outputs[0]->dtype, reduced);
    for (auto const& n : g->nodes()) {
      if (n->op == ir::OpType::kCast) {
        EXPECT_NE(n->inputs[0]->dtype, n->outputs[0]->dtype) << n->name;
      }
    }
    // Network outputs keep float32.
    for (ir::Value const* o : g->outputs()) EXPECT_EQ(o->dtype, DataType::kFLOAT);
  }
}

// BERT's embeddings: a Gather from a constant float32 table whose rows an Add reads, the ids an input.
constexpr char kEmbedding[] =
    "graph {\n"
    "  input ids: i64[2,3]\n"
    "  input x: f32[2,3,4]\n"
    "  table: f32[10,4] = Constant \"table\" () {data=random(1)}\n"
    "  e: f32[2,3,4] = Gather \"gather\" (table, ids) {axis=0}\n"
    "  s: f32[2,3,4] = ElementWise \"add\" (e, x) {op=0}\n"
    "  output s\n"
    "}\n";

// Runs `g` on fixed ids (every row of the table used, some twice) and x.
HostTensor runEmbedding(ir::Graph const& g) {
  HostTensor ids = HostTensor::fromVector(DataType::kINT64, makeDims({2, 3}), std::vector<int64_t>{0, 9, 3, 3, 7, 1});
  HostTensor x = *ir::makeRandomTensor(DataType::kFLOAT, makeDims({2, 3, 4}), 5);
  auto r = backends::runGraphOnHost(g, {ids, x});
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  return r.isOk() ? std::move((*r)[0]) : HostTensor();
}

// Under kFP16/kBF16 the Gather reads the table converted to the reduced type (a Cast on the Constant, which the
// build folds into the weights) and writes reduced rows, instead of gathering float32 rows and casting them on
// every run; the values are exactly those of the unconverted graph (the Gather kept in float32).
TEST(Precision, EmbeddingGatherReadsTheTableInTheReducedType) {
  for (BuilderFlag flag : {BuilderFlag::kFP16, BuilderFlag::kBF16}) {
    DataType const reduced = flag == BuilderFlag::kFP16 ? DataType::kHALF : DataType::kBF16;
    PrecisionOptions opt;
    opt.flags = 1u << static_cast<uint32_t>(flag);
    auto g = parse(kEmbedding);
    ASSERT_TRUE(assignPrecision(*g, opt).isOk());
    ir::Node const* gather = g->findNode("gather");
    ASSERT_TRUE(gather);
    EXPECT_EQ(gather->outputs[0]->dtype, reduced);
    ir::Node const* tableCast = gather->inputs[0]->producer;
    ASSERT_TRUE(tableCast);
    EXPECT_EQ(tableCast->op, ir::OpType::kCast);
    EXPECT_EQ(tableCast->inputs[0]->producer->op, ir::OpType::kConstant);
    EXPECT_EQ(g->findNode("add")->inputs[0], gather->outputs[0]) << ir::printGraph(*g);
    // The unconverted graph: the Gather held in float32 by its precision, its rows cast for the Add.
    auto unconverted = parse(kEmbedding);
    unconverted->findNode("gather")->precision = DataType::kFLOAT;
    ASSERT_TRUE(assignPrecision(*unconverted, opt).isOk());
    EXPECT_EQ(unconverted->findNode("gather")->outputs[0]->dtype, DataType::kFLOAT);
    ASSERT_TRUE(unconverted->findNode("add")->inputs[0]->producer);
    EXPECT_EQ(unconverted->findNode("add")->inputs[0]->producer->op, ir::OpType::kCast);
    HostTensor a = runEmbedding(*g), b = runEmbedding(*unconverted), f32 = runEmbedding(*parse(kEmbedding));
    ASSERT_EQ(a.count(), 24);
    ASSERT_EQ(b.count(), 24);
    for (int64_t i = 0; i < a.count(); ++i) EXPECT_EQ(a.doubleAt(i), b.doubleAt(i)) << i;
    double const err = normRelError(a, f32);
    EXPECT_LT(err, flag == BuilderFlag::kFP16 ? 5e-3 : 2e-2);
    EXPECT_GT(err, 0.0);
  }
}

// A Cast of the gathered rows to the reduced type (as an exporter writes for a half model) goes with the float32
// Gather: the Add reads the reduced rows directly.
TEST(Precision, EmbeddingGatherAbsorbsACastToTheReducedType) {
  auto g = parse(
      "graph {\n"
      "  input ids: i32[5]\n"
      "  table: f32[6,3] = Constant \"table\" () {data=random(1)}\n"
      "  e: f32[5,3] = Gather \"gather\" (table, ids) {axis=0}\n"
      "  h: f16[5,3] = Cast \"to_half\" (e) {to=1}\n"
      "  r: f16[5,3] = Activation \"relu\" (h) {type=0}\n"
      "  output r\n"
      "}\n");
  PrecisionOptions opt;
  opt.flags = 1u << static_cast<uint32_t>(BuilderFlag::kFP16);
  ASSERT_TRUE(assignPrecision(*g, opt).isOk());
  EXPECT_EQ(g->findNode("to_half"), nullptr) << ir::printGraph(*g);
  EXPECT_EQ(g->findNode("gather")->outputs[0]->dtype, DataType::kHALF);
  EXPECT_EQ(g->findNode("relu")->inputs[0], g->findNode("gather")->outputs[0]);
  EXPECT_EQ(countOps(*g, ir::OpType::kCast), 1);  // the table's, folded by the build
}

// The table stays float32 where the rows are needed in float32: a reader held in float32 by its precision
// (kOBEY_PRECISION_CONSTRAINTS), a Gather with a precision of its own, rows that are a network output, a build
// without a reduced type, and a layout layer reading the rows.
TEST(Precision, EmbeddingGatherKeepsFloat32TablesWhereRowsAreReadInFloat32) {
  PrecisionOptions fp16;
  fp16.flags = 1u << static_cast<uint32_t>(BuilderFlag::kFP16);
  auto tableStaysFloat32 = [](ir::Graph const& g) {
    ir::Node const* gather = g.findNode("gather");
    return gather && gather->inputs[0]->producer && gather->inputs[0]->producer->op == ir::OpType::kConstant &&
           gather->inputs[0]->dtype == DataType::kFLOAT;
  };
  {
    auto g = parse(kEmbedding);
    g->findNode("add")->precision = DataType::kFLOAT;
    ASSERT_TRUE(assignPrecision(*g, fp16).isOk());
    EXPECT_TRUE(tableStaysFloat32(*g)) << ir::printGraph(*g);
    EXPECT_EQ(g->findNode("gather")->outputs[0]->dtype, DataType::kFLOAT);
  }
  {
    auto g = parse(kEmbedding);
    g->findNode("gather")->precision = DataType::kFLOAT;
    ASSERT_TRUE(assignPrecision(*g, fp16).isOk());
    EXPECT_TRUE(tableStaysFloat32(*g)) << ir::printGraph(*g);
  }
  {
    auto g = parse(
        "graph {\n"
        "  input ids: i64[2,3]\n"
        "  input x: f32[2,3,4]\n"
        "  table: f32[10,4] = Constant \"table\" () {data=random(1)}\n"
        "  e: f32[2,3,4] = Gather \"gather\" (table, ids) {axis=0}\n"
        "  s: f32[2,3,4] = ElementWise \"add\" (e, x) {op=0}\n"
        "  output s\n"
        "  output e\n"
        "}\n");
    ASSERT_TRUE(assignPrecision(*g, fp16).isOk());
    EXPECT_TRUE(tableStaysFloat32(*g)) << ir::printGraph(*g);
  }
  {
    auto g = parse(kEmbedding);
    g->findNode("add")->precision = DataType::kHALF;  // a layer precision alone: no build-wide reduced type
    ASSERT_TRUE(assignPrecision(*g, {}).isOk());
    EXPECT_TRUE(tableStaysFloat32(*g)) << ir::printGraph(*g);
  }
  {
    auto g = parse(
        "graph {\n"
        "  input ids: i64[2,3]\n"
        "  table: f32[10,4] = Constant \"table\" () {data=random(1)}\n"
        "  e: f32[2,3,4] = Gather \"gather\" (table, ids) {axis=0}\n"
        "  f: f32[6,4] = Shuffle \"flat\" (e) {reshape=[6,4]}\n"
        "  r: f32[6,4] = Activation \"relu\" (f) {type=0}\n"
        "  output r\n"
        "}\n");
    ASSERT_TRUE(assignPrecision(*g, fp16).isOk());
    EXPECT_TRUE(tableStaysFloat32(*g)) << ir::printGraph(*g);
  }
}

// A reduced type is allowed, not required: with hasLibraryTactic (the builder asks its tactic registry), a layer
// whose reduced form only reference tactics run while its float32 form has a library one keeps float32; the others
// move, casts sit only where the types change, and a layer given a precision keeps it whatever the tactics.
TEST(Precision, LayersWithoutAReducedLibraryTacticKeepFloat32) {
  for (BuilderFlag flag : {BuilderFlag::kFP16, BuilderFlag::kBF16}) {
    DataType reduced = flag == BuilderFlag::kFP16 ? DataType::kHALF : DataType::kBF16;
    // The convolution has a library tactic in both types, the ReLU in float32 only.
    std::vector<std::pair<std::string, DataType>> asked;
    PrecisionOptions opt;
    opt.flags = 1u << static_cast<uint32_t>(flag);
    opt.hasLibraryTactic = [&](ir::Node const& n, std::vector<ir::TensorInfo> const& in,
                               std::vector<ir::TensorInfo> const& out) {
      EXPECT_FALSE(in.empty());
      EXPECT_EQ(in[0].dtype, out[0].dtype) << n.name;
      if (n.op == ir::OpType::kConvolution) {
        EXPECT_EQ(in[1].dtype, in[0].dtype);  // the weights are data: asked in the same type
        EXPECT_EQ(in[2].shape.nbDims, -1);    // absent bias
      }
      asked.emplace_back(n.name, in[0].dtype);
      return n.op == ir::OpType::kConvolution || in[0].dtype == DataType::kFLOAT;
    };
    auto g = parse(kNet);
    ASSERT_TRUE(assignPrecision(*g, opt).isOk());
    EXPECT_EQ(g->findNode("conv")->outputs[0]->dtype, reduced);
    EXPECT_EQ(g->findNode("relu")->outputs[0]->dtype, DataType::kFLOAT);
    EXPECT_EQ(g->findNode("relu")->inputs[0]->producer->op, ir::OpType::kCast);
    EXPECT_EQ(g->findNode("flat")->outputs[0]->dtype, DataType::kFLOAT);
    EXPECT_EQ(countOps(*g, ir::OpType::kCast), 3);  // x and w to the reduced type, c back: none at the output
    // Each compute layer is asked in the reduced type; only the one without a reduced tactic in float32 too.
    std::vector<std::pair<std::string, DataType>> want{
        {"conv", reduced}, {"relu", reduced}, {"relu", DataType::kFLOAT}};
    EXPECT_EQ(asked, want);

    // No float32 library tactic either: the reduced type, as without the callback.
    auto none = parse(kNet);
    opt.hasLibraryTactic = [](ir::Node const&, std::vector<ir::TensorInfo> const&, std::vector<ir::TensorInfo> const&) {
      return false;
    };
    ASSERT_TRUE(assignPrecision(*none, opt).isOk());
    EXPECT_EQ(none->findNode("conv")->outputs[0]->dtype, reduced);
    EXPECT_EQ(none->findNode("relu")->outputs[0]->dtype, reduced);

    // A layer given the reduced precision keeps it: the callback is not asked about it.
    auto pinned = parse(kNet);
    pinned->findNode("conv")->precision = reduced;
    pinned->findNode("relu")->precision = reduced;
    asked.clear();
    opt.hasLibraryTactic = [&](ir::Node const& n, std::vector<ir::TensorInfo> const& in,
                               std::vector<ir::TensorInfo> const&) {
      asked.emplace_back(n.name, in[0].dtype);
      return in[0].dtype == DataType::kFLOAT;
    };
    ASSERT_TRUE(assignPrecision(*pinned, opt).isOk());
    EXPECT_EQ(pinned->findNode("conv")->outputs[0]->dtype, reduced);
    EXPECT_EQ(pinned->findNode("relu")->outputs[0]->dtype, reduced);
    EXPECT_TRUE(asked.empty());
  }
}

}  // namespace
}  // namespace kiln::builder
