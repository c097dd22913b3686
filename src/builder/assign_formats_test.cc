// Tests of the channels-last layout assignment, with stand-in GPU tactics (registered here): convolutions and
// element-wise layers between them go kHWC, a layer without a format-aware tactic reads kLINEAR through a
// Reformat, weights get a Reformat, each value is converted once per layout, and graph outputs stay kLINEAR.
#include "builder/assign_formats.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "backends/backend.h"
#include "ir/text.h"

namespace kiln::builder {
namespace {

using ir::OpType;

// Stand-ins: format-aware convolution and element-wise tactics, a row-major-only pooling tactic.
bool registerStandIns() {
  auto add = [](char const* name, OpType op, bool aware) {
    backends::Tactic t;
    t.name = name;
    t.op = op;
    t.device = DeviceType::kGPU;
    t.source = TacticSource::kKILN;
    t.formatAware = aware;
    t.supports = [op](ir::Node const& n, std::vector<ir::TensorInfo> const& in,
                      std::vector<ir::TensorInfo> const& out) {
      if (op == OpType::kReduce) {  // as reduce_cuda_rows: channels-last only over both spatial axes
        std::vector<int64_t> axes = n.attrs.getInts("axes");
        bool both = std::count(axes.begin(), axes.end(), 2) + std::count(axes.begin(), axes.end(), 3) == 2;
        return backends::nodeFormat(n) == TensorFormat::kLINEAR || both;
      }
      return op != OpType::kElementWise && op != OpType::kActivation ? true : backends::elementWiseLayoutOk(n, in, out);
    };
    t.create = [](ir::Node const&) -> Result<std::unique_ptr<backends::Kernel>> { return unsupported("stand-in"); };
    backends::TacticRegistry::instance().add(std::move(t));
  };
  add("convolution_test_hwc", OpType::kConvolution, true);
  add("activation_test_hwc", OpType::kActivation, true);
  add("elementwise_test_hwc", OpType::kElementWise, true);
  add("pooling_test_linear", OpType::kPooling, false);
  add("reduce_test_hwc", OpType::kReduce, true);
  // A device Reformat that converts float types between kLINEAR and kHWC (as reformat_cuda_strided does).
  backends::Tactic r;
  r.name = "reformat_test_convert";
  r.op = OpType::kReformat;
  r.device = DeviceType::kGPU;
  r.source = TacticSource::kKILN;
  r.supports = [](ir::Node const&, std::vector<ir::TensorInfo> const& in, std::vector<ir::TensorInfo> const& out) {
    auto f = [](DataType t) { return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16; };
    return in.size() == 1 && out.size() == 1 && (in[0].dtype == out[0].dtype || (f(in[0].dtype) && f(out[0].dtype)));
  };
  r.create = [](ir::Node const&) -> Result<std::unique_ptr<backends::Kernel>> { return unsupported("stand-in"); };
  backends::TacticRegistry::instance().add(std::move(r));
  return true;
}
bool const kRegistered = registerStandIns();

constexpr char kConv[] =
    "kernel_shape=[1,1], num_output_maps=8, pads_begin=[0,0], pads_end=[0,0], strides=[1,1], dilations=[1,1], groups=1";

std::string net(char const* dtype) {
  std::string t = dtype;
  return "graph {\n"
         "  input x: " +
         t +
         "[2,8,4,4]\n"
         "  w1: " +
         t +
         "[8,8,1,1] = Constant \"w1\" () {data=random(1)}\n"
         "  w2: " +
         t +
         "[8,8,1,1] = Constant \"w2\" () {data=random(2)}\n"
         "  bias: " +
         t +
         "[1,8,1,1] = Constant \"bias\" () {data=random(3)}\n"
         "  c1: " +
         t + "[2,8,4,4] = Convolution \"conv1\" (x, w1, _) {" + kConv +
         "}\n"
         "  r1: " +
         t +
         "[2,8,4,4] = Activation \"relu1\" (c1) {type=0}\n"
         "  c2: " +
         t + "[2,8,4,4] = Convolution \"conv2\" (r1, w2, _) {" + kConv +
         "}\n"
         "  s: " +
         t +
         "[2,8,4,4] = ElementWise \"add\" (c2, x) {op=0}\n"
         "  b: " +
         t +
         "[2,8,4,4] = ElementWise \"addbias\" (s, bias) {op=0}\n"
         "  p: " +
         t +
         "[2,8,2,2] = Pooling \"pool\" (s) {type=0, window=[2,2], strides=[2,2], pads_begin=[0,0], pads_end=[0,0]}\n"
         "  output p\n"
         "  output s\n"
         "  output b\n"
         "}\n";
}

struct Assigned {
  std::unique_ptr<ir::Graph> g;
  int hwc = -1;
};

Assigned assign(std::string const& text) {
  Assigned a;
  auto parsed = ir::parseGraph(text);
  EXPECT_TRUE(parsed.isOk()) << parsed.status().toString();
  if (!parsed.isOk()) return a;
  a.g = std::move(parsed).value();
  EXPECT_TRUE(ir::inferGraphInPlace(*a.g, nullptr).isOk());
  ir::ShapeState st;
  st.resize(a.g->values().size());
  for (ir::Value* in : a.g->inputs()) st.info[in->id] = {in->dtype, in->shape};
  EXPECT_TRUE(ir::inferShapes(*a.g, st, nullptr).isOk());
  FormatContext fc;
  fc.sources = ~TacticSources{0};
  fc.states = {&st};
  fc.opt = &st;
  auto r = assignFormats(*a.g, fc);
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  a.hwc = r.isOk() ? *r : -1;
  return a;
}

int64_t formatOf(ir::Graph const& g, char const* node) {
  ir::Node const* n = g.findNode(node);
  return n ? n->attrs.getInt("format", 0) : -1;
}

std::vector<ir::Node const*> reformatsOf(ir::Graph const& g, char const* value) {
  std::vector<ir::Node const*> r;
  for (auto const& n : g.nodes())
    if (n->op == OpType::kReformat && n->input(0) && n->input(0)->name == value) r.push_back(n.get());
  return r;
}

TEST(AssignFormats, ConvolutionChainsRunChannelsLast) {
  Assigned a = assign(net("f16"));
  ASSERT_TRUE(a.g);
  int64_t const hwc = static_cast<int64_t>(TensorFormat::kHWC);
  EXPECT_EQ(formatOf(*a.g, "conv1"), hwc);
  EXPECT_EQ(formatOf(*a.g, "relu1"), hwc);
  EXPECT_EQ(formatOf(*a.g, "conv2"), hwc);
  EXPECT_EQ(formatOf(*a.g, "add"), hwc);    // both inputs of its shape: x is converted once more
  EXPECT_EQ(formatOf(*a.g, "addbias"), 0);  // a per-channel broadcast stays row-major
  EXPECT_EQ(formatOf(*a.g, "pool"), 0);     // no format-aware pooling tactic here
  EXPECT_EQ(a.hwc, 4);
  // x: one Reformat to kHWC, shared by conv1 and add; each weight its own.
  EXPECT_EQ(reformatsOf(*a.g, "x").size(), 1u);
  EXPECT_EQ(reformatsOf(*a.g, "w1").size(), 1u);
  EXPECT_EQ(reformatsOf(*a.g, "w2").size(), 1u);
  EXPECT_TRUE(reformatsOf(*a.g, "bias").empty());
  // The channels-last sum goes back to kLINEAR once, for the pooling, the biased add and the graph output.
  ir::Value const* s = nullptr;
  for (ir::Value const* o : a.g->outputs())
    if (o->name == "s") s = o;
  ASSERT_NE(s, nullptr);
  ASSERT_NE(s->producer, nullptr);
  EXPECT_EQ(s->producer->op, OpType::kReformat);
  EXPECT_EQ(s->producer->attrs.getInt("from", -1), hwc);
  EXPECT_EQ(s->producer->attrs.getInt("to", -1), 0);
  EXPECT_EQ(a.g->findNode("pool")->input(0), s);
  EXPECT_EQ(a.g->findNode("addbias")->input(0), s);
  EXPECT_TRUE(a.g->topoOrder().isOk());
}

// GlobalAveragePool (a Reduce over H and W) after a channels-last convolution reads it where it is, and its
// [N, C, 1, 1] output (the same bytes in both layouts) goes on as row-major: no Reformat either side. A reduction
// over W alone reads row-major through a Reformat.
TEST(AssignFormats, SpatialReductionReadsChannelsLastAndWritesRowMajor) {
  std::string const text =
      "graph {\n"
      "  input x: f16[2,8,4,4]\n"
      "  w1: f16[8,8,1,1] = Constant \"w1\" () {data=random(1)}\n"
      "  c1: f16[2,8,4,4] = Convolution \"conv1\" (x, w1, _) {" +
      std::string(kConv) +
      "}\n"
      "  g: f16[2,8,1,1] = Reduce \"gap\" (c1) {axes=[2,3], keep_dims=1, op=4}\n"
      "  r: f16[2,8,1,1] = Activation \"relu\" (g) {type=0}\n"
      "  m: f16[2,8,4,1] = Reduce \"wmean\" (c1) {axes=[3], keep_dims=1, op=4}\n"
      "  output r\n"
      "  output m\n"
      "}\n";
  Assigned a = assign(text);
  ASSERT_TRUE(a.g);
  int64_t const hwc = static_cast<int64_t>(TensorFormat::kHWC);
  EXPECT_EQ(formatOf(*a.g, "conv1"), hwc);
  EXPECT_EQ(formatOf(*a.g, "gap"), hwc);
  EXPECT_EQ(a.g->findNode("gap")->input(0)->name, "c1");  // no Reformat before it
  EXPECT_EQ(formatOf(*a.g, "relu"), 0);                   // its input counts as row-major
  EXPECT_EQ(a.g->findNode("relu")->input(0)->name, "g");  // and no Reformat after it
  EXPECT_TRUE(reformatsOf(*a.g, "g").empty());
  EXPECT_EQ(formatOf(*a.g, "wmean"), 0);  // W alone: row-major, through c1's one Reformat
  EXPECT_EQ(reformatsOf(*a.g, "c1").size(), 1u);
  EXPECT_TRUE(a.g->topoOrder().isOk());
}

// The fp32 network input cast to fp16 for a channels-last convolution: the Cast folds into the Reformat, which
// converts while it moves (one pass over the input instead of two). Not where the cast value has another reader,
// nor for a cast from an integer type.
TEST(AssignFormats, FloatCastFoldsIntoTheReformatAfterIt) {
  auto text = [](char const* in, bool alsoOutput) {
    return std::string("graph {\n") + "  input x: " + in + "[2,8,4,4]\n" +
           "  w1: f16[8,8,1,1] = Constant \"w1\" () {data=random(1)}\n" +
           "  h: f16[2,8,4,4] = Cast \"cast\" (x) {to=1}\n" +
           "  c1: f16[2,8,4,4] = Convolution \"conv1\" (h, w1, _) {" + kConv + "}\n" + "  output c1\n" +
           (alsoOutput ? "  output h\n" : "") + "}\n";
  };
  {
    Assigned a = assign(text("f32", false));
    ASSERT_TRUE(a.g);
    EXPECT_EQ(a.g->findNode("cast"), nullptr);
    ir::Value const* in = a.g->findNode("conv1")->input(0);
    ASSERT_NE(in->producer, nullptr);
    ir::Node const& r = *in->producer;
    EXPECT_EQ(r.op, OpType::kReformat);
    EXPECT_EQ(r.input(0)->name, "x");
    EXPECT_EQ(r.attrs.getInt("dtype", -1), static_cast<int64_t>(DataType::kHALF));
    EXPECT_EQ(r.attrs.getInt("to", -1), static_cast<int64_t>(TensorFormat::kHWC));
    EXPECT_EQ(in->dtype, DataType::kHALF);
    EXPECT_EQ(r.fusedFrom, std::vector<std::string>{"cast"});
    EXPECT_TRUE(a.g->topoOrder().isOk());
    // Shape inference gives the converting Reformat's output the type it writes.
    ir::ShapeState st;
    EXPECT_TRUE(a.g->renumber().isOk());
    st.resize(a.g->values().size());
    for (ir::Value* v : a.g->inputs()) st.info[v->id] = {v->dtype, v->shape};
    ASSERT_TRUE(ir::inferShapes(*a.g, st, nullptr).isOk());
    EXPECT_EQ(st.info[in->id].dtype, DataType::kHALF);
  }
  for (auto [dtype, alsoOutput] : {std::pair<char const*, bool>{"f32", true}, {"i32", false}}) {
    SCOPED_TRACE(std::string(dtype) + (alsoOutput ? ", cast also an output" : ""));
    Assigned a = assign(text(dtype, alsoOutput));
    ASSERT_TRUE(a.g);
    ASSERT_NE(a.g->findNode("cast"), nullptr);
    for (auto const& n : a.g->nodes()) EXPECT_FALSE(n->attrs.has("dtype")) << n->name;
  }
}

TEST(AssignFormats, Float32StaysRowMajor) {
  Assigned a = assign(net("f32"));
  ASSERT_TRUE(a.g);
  EXPECT_EQ(a.hwc, 0);
  for (auto const& n : a.g->nodes()) {
    EXPECT_NE(n->op, OpType::kReformat) << n->name;
    EXPECT_FALSE(n->attrs.has("format")) << n->name;
  }
}

}  // namespace
}  // namespace kiln::builder
