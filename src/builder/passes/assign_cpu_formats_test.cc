// Tests of the CPU activation-format choice between oneDNN convolutions and poolings.
#include "builder/passes/pass_test_util.h"

namespace kiln::builder {
namespace {

constexpr char kConv[] = "groups=1, kernel_shape=[3,3], pads_begin=[1,1], pads_end=[1,1], strides=[1,1]";
constexpr char kPool[] =
    "type=0, window=[2,2], strides=[2,2], pads_begin=[0,0], pads_end=[0,0], exclude_padding=1, blend_factor=0.0";

ir::Node* node(ir::Graph& g, std::string const& name) {
  for (auto const& n : g.nodes())
    if (n->name == name) return n.get();
  ADD_FAILURE() << "no node " << name;
  return nullptr;
}

std::vector<int64_t> formats(ir::Node const* n, char const* key) {
  return n && n->attrs.has(key) ? n->attrs.getInts(key) : std::vector<int64_t>{};
}

// conv1 -> pool -> conv2 -> conv3 (residual: conv2's output) -> relu -> output; conv1's output also feeds a
// 12-channel conv whose output (C % 16 != 0) feeds conv4, the network's output.
std::unique_ptr<ir::Graph> network() {
  std::string c = kConv, p = kPool;
  return testing::parseInferred(
      "graph {\n"
      "  input x: f32[2,16,8,8]\n"
      "  w1: f32[16,16,3,3] = Constant \"w1\" () {data=random(1)}\n"
      "  w2: f32[32,16,3,3] = Constant \"w2\" () {data=random(2)}\n"
      "  w3: f32[32,32,3,3] = Constant \"w3\" () {data=random(3)}\n"
      "  b3: f32[32] = Constant \"b3\" () {data=random(4)}\n"
      "  w5: f32[12,16,3,3] = Constant \"w5\" () {data=random(5)}\n"
      "  w4: f32[16,12,3,3] = Constant \"w4\" () {data=random(6)}\n"
      "  y1: f32[2,16,8,8] = Convolution \"conv1\" (x, w1) {" + c + "}\n"
      "  p: f32[2,16,4,4] = Pooling \"pool\" (y1) {" + p + "}\n"
      "  y2: f32[2,32,4,4] = Convolution \"conv2\" (p, w2) {" + c + "}\n"
      "  y3: f32[2,32,4,4] = Convolution \"conv3\" (y2, w3, b3, y2) {" + c + "}\n"
      "  z: f32[2,32,4,4] = Activation \"relu\" (y3) {type=0}\n"
      "  y5: f32[2,12,8,8] = Convolution \"conv5\" (y1, w5) {" + c + "}\n"
      "  y4: f32[2,16,8,8] = Convolution \"conv4\" (y5, w4) {" + c + "}\n"
      "  output z\n"
      "  output y4\n"
      "}\n");
}

void setTactics(ir::Graph& g) {
  for (auto const& n : g.nodes()) {
    if (n->op == ir::OpType::kConvolution) n->tactic = "convolution_onednn_direct";
    if (n->op == ir::OpType::kPooling) n->tactic = "pooling_onednn_direct";
    if (n->op == ir::OpType::kActivation) n->tactic = "activation_reference";
  }
}

TEST(AssignCpuFormats, BlockedBetweenOnednnLayersPlainElsewhere) {
  auto g = network();
  ASSERT_TRUE(g);
  setTactics(*g);
  auto pass = createAssignCpuFormatsPass(16);
  EXPECT_TRUE(testing::runPass(*pass, *g));
  using V = std::vector<int64_t>;
  // x is a network input: plain into conv1; y1 only feeds the pooling and conv5: blocked.
  EXPECT_EQ(formats(node(*g, "conv1"), "cpu_formats_in"), (V{0, 0}));
  EXPECT_EQ(formats(node(*g, "conv1"), "cpu_formats_out"), (V{16}));
  EXPECT_EQ(formats(node(*g, "pool"), "cpu_formats_in"), (V{16}));
  EXPECT_EQ(formats(node(*g, "pool"), "cpu_formats_out"), (V{16}));
  // y2 is conv3's data and residual input: blocked in both slots; y3 feeds a reference activation: plain.
  EXPECT_EQ(formats(node(*g, "conv2"), "cpu_formats_in"), (V{16, 0}));
  EXPECT_EQ(formats(node(*g, "conv2"), "cpu_formats_out"), (V{16}));
  EXPECT_EQ(formats(node(*g, "conv3"), "cpu_formats_in"), (V{16, 0, 0, 16}));
  EXPECT_EQ(formats(node(*g, "conv3"), "cpu_formats_out"), (V{0}));
  // 12 channels do not fill 16-blocks; y4 is a network output.
  EXPECT_EQ(formats(node(*g, "conv5"), "cpu_formats_in"), (V{16, 0}));
  EXPECT_EQ(formats(node(*g, "conv5"), "cpu_formats_out"), (V{0}));
  EXPECT_FALSE(node(*g, "conv4")->attrs.has("cpu_formats_in"));
  EXPECT_FALSE(node(*g, "relu")->attrs.has("cpu_formats_in"));
  // Channels-last has no block: y5 is taken too.
  auto g2 = network();
  setTactics(*g2);
  EXPECT_TRUE(testing::runPass(*createAssignCpuFormatsPass(1), *g2));
  EXPECT_EQ(formats(node(*g2, "conv5"), "cpu_formats_out"), (V{1}));
  EXPECT_EQ(formats(node(*g2, "conv4"), "cpu_formats_in"), (V{1, 0}));
}

// Every oneDNN convolution tactic converts between recorded formats: conv2 and conv3 on the Winograd and the
// matmul 1x1 tactics pass y2 on channels-last just as the direct one does.
TEST(AssignCpuFormats, EveryConvolutionTacticTakesFormats) {
  using V = std::vector<int64_t>;
  for (char const* tactic : {"convolution_onednn_winograd_4x3", "convolution_onednn_winograd_2x3",
                             "convolution_onednn_matmul_1x1"}) {
    auto g = network();
    ASSERT_TRUE(g);
    setTactics(*g);
    node(*g, "conv2")->tactic = tactic;
    node(*g, "conv3")->tactic = tactic;
    EXPECT_TRUE(testing::runPass(*createAssignCpuFormatsPass(1), *g));
    EXPECT_EQ(formats(node(*g, "conv2"), "cpu_formats_in"), (V{1, 0})) << tactic;
    EXPECT_EQ(formats(node(*g, "conv2"), "cpu_formats_out"), (V{1})) << tactic;
    EXPECT_EQ(formats(node(*g, "conv3"), "cpu_formats_in"), (V{1, 0, 0, 1})) << tactic;
  }
}

TEST(AssignCpuFormats, PoolingKeepsOneFormatAndOtherTacticsStayPlain) {
  auto g = network();
  ASSERT_TRUE(g);
  setTactics(*g);
  // conv2 on the reference: the pooling's output cannot be blocked, so neither is its input.
  node(*g, "conv2")->tactic = "convolution_reference";
  // conv3's input y2 now comes from the reference too, so nothing is left to record.
  EXPECT_FALSE(testing::runPass(*createAssignCpuFormatsPass(16), *g));
  EXPECT_FALSE(node(*g, "pool")->attrs.has("cpu_formats_in"));
  EXPECT_FALSE(node(*g, "conv2")->attrs.has("cpu_formats_in"));
  EXPECT_FALSE(node(*g, "conv1")->attrs.has("cpu_formats_out"));
  // Format 0 (no oneDNN) changes nothing; an unknown format is an error.
  auto g2 = network();
  setTactics(*g2);
  EXPECT_FALSE(testing::runPass(*createAssignCpuFormatsPass(0), *g2));
  PassContext ctx;
  EXPECT_FALSE(createAssignCpuFormatsPass(5)->run(*g2, ctx).isOk());
}

// EfficientNet's block: conv -> x * sigmoid(x) -> (global average -> conv -> sigmoid) -> scale -> conv. The
// sigmoid, the products and the reduce's input join the format; the squeeze branch after the reduce stays plain.
TEST(AssignCpuFormats, SwishAndSqueezeExcitation) {
  std::string c = kConv;
  std::string c1 = "groups=1, kernel_shape=[1,1], pads_begin=[0,0], pads_end=[0,0], strides=[1,1]";
  auto g = testing::parseInferred(
      "graph {\n"
      "  input x: f32[1,16,8,8]\n"
      "  w1: f32[16,16,3,3] = Constant \"w1\" () {data=random(1)}\n"
      "  w2: f32[16,16,1,1] = Constant \"w2\" () {data=random(2)}\n"
      "  w3: f32[16,16,1,1] = Constant \"w3\" () {data=random(3)}\n"
      "  y: f32[1,16,8,8] = Convolution \"conv1\" (x, w1) {" + c + "}\n"
      "  s: f32[1,16,8,8] = Activation \"sig\" (y) {type=1}\n"
      "  m: f32[1,16,8,8] = ElementWise \"swish\" (y, s) {op=1}\n"
      "  r: f32[1,16,1,1] = Reduce \"gap\" (m) {op=4, axes=[2,3], keep_dims=1}\n"
      "  e: f32[1,16,1,1] = Convolution \"se\" (r, w2) {" + c1 + "}\n"
      "  es: f32[1,16,1,1] = Activation \"se_sig\" (e) {type=1}\n"
      "  sc: f32[1,16,8,8] = ElementWise \"scale\" (m, es) {op=1}\n"
      "  z: f32[1,16,8,8] = Convolution \"conv2\" (sc, w3) {" + c1 + "}\n"
      "  output z\n"
      "}\n");
  ASSERT_TRUE(g);
  for (auto const& n : g->nodes()) {
    if (n->op == ir::OpType::kConvolution) n->tactic = "convolution_onednn_direct";
    if (n->op == ir::OpType::kActivation) n->tactic = "activation_onednn_eltwise";
    if (n->op == ir::OpType::kElementWise) n->tactic = "elementwise_onednn_binary";
    if (n->op == ir::OpType::kReduce) n->tactic = "reduce_onednn";
  }
  EXPECT_TRUE(testing::runPass(*createAssignCpuFormatsPass(1), *g));
  using V = std::vector<int64_t>;
  EXPECT_EQ(formats(node(*g, "conv1"), "cpu_formats_out"), (V{1}));
  EXPECT_EQ(formats(node(*g, "sig"), "cpu_formats_in"), (V{1}));
  EXPECT_EQ(formats(node(*g, "sig"), "cpu_formats_out"), (V{1}));
  EXPECT_EQ(formats(node(*g, "swish"), "cpu_formats_in"), (V{1, 1}));
  EXPECT_EQ(formats(node(*g, "swish"), "cpu_formats_out"), (V{1}));
  EXPECT_EQ(formats(node(*g, "gap"), "cpu_formats_in"), (V{1}));
  EXPECT_EQ(formats(node(*g, "gap"), "cpu_formats_out"), (V{0}));
  EXPECT_EQ(formats(node(*g, "scale"), "cpu_formats_in"), (V{1, 0}));
  EXPECT_EQ(formats(node(*g, "scale"), "cpu_formats_out"), (V{1}));
  EXPECT_EQ(formats(node(*g, "conv2"), "cpu_formats_in"), (V{1, 0}));
  EXPECT_FALSE(node(*g, "se")->attrs.has("cpu_formats_in"));
  EXPECT_FALSE(node(*g, "se_sig")->attrs.has("cpu_formats_in"));
}

// A bf16 region (a kBF16 build): bf16 tensors between oneDNN layers take the format as float32 ones do, and the
// oneDNN Casts at the region's edge keep it (x and y in one format), so a bf16 convolution feeding a float32 global
// pooling through a Cast still writes channels-last; a reference Cast stays plain.
TEST(AssignCpuFormats, Bf16RegionsAndTheirCasts) {
  std::string c = kConv;
  auto g = testing::parseInferred(
      "graph {\n"
      "  input x: bf16[1,16,8,8]\n"
      "  w1: bf16[16,16,3,3] = Constant \"w1\" () {data=random(1)}\n"
      "  w2: bf16[16,16,3,3] = Constant \"w2\" () {data=random(2)}\n"
      "  y: bf16[1,16,8,8] = Convolution \"conv1\" (x, w1) {" + c + "}\n"
      "  y2: bf16[1,16,8,8] = Convolution \"conv2\" (y, w2) {" + c + "}\n"
      "  f: f32[1,16,8,8] = Cast \"to_f32\" (y2) {to=0}\n"
      "  r: f32[1,16,1,1] = Reduce \"gap\" (f) {op=4, axes=[2,3], keep_dims=1}\n"
      "  output r\n"
      "}\n");
  ASSERT_TRUE(g);
  for (auto const& n : g->nodes()) {
    if (n->op == ir::OpType::kConvolution) n->tactic = "convolution_onednn_direct";
    if (n->op == ir::OpType::kCast) n->tactic = "cast_onednn_reorder";
    if (n->op == ir::OpType::kReduce) n->tactic = "reduce_onednn";
  }
  EXPECT_TRUE(testing::runPass(*createAssignCpuFormatsPass(1), *g));
  using V = std::vector<int64_t>;
  EXPECT_EQ(formats(node(*g, "conv1"), "cpu_formats_out"), (V{1}));
  EXPECT_EQ(formats(node(*g, "conv2"), "cpu_formats_in"), (V{1, 0}));
  EXPECT_EQ(formats(node(*g, "conv2"), "cpu_formats_out"), (V{1}));
  EXPECT_EQ(formats(node(*g, "to_f32"), "cpu_formats_in"), (V{1}));
  EXPECT_EQ(formats(node(*g, "to_f32"), "cpu_formats_out"), (V{1}));
  EXPECT_EQ(formats(node(*g, "gap"), "cpu_formats_in"), (V{1}));

  // The reference Cast reads plain data only: conv2 writes plain.
  node(*g, "to_f32")->tactic = "cast_reference";
  for (auto const& n : g->nodes()) {
    n->attrs.erase("cpu_formats_in");
    n->attrs.erase("cpu_formats_out");
  }
  EXPECT_TRUE(testing::runPass(*createAssignCpuFormatsPass(1), *g));
  EXPECT_EQ(formats(node(*g, "conv2"), "cpu_formats_out"), (V{0}));
  EXPECT_FALSE(node(*g, "to_f32")->attrs.has("cpu_formats_in"));
}

}  // namespace
}  // namespace kiln::builder
