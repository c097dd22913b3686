// Tests of the layer objects: defaults (TensorRT's), every setter/getter round trip and the node attribute it
// writes, weights replacement, setInput, and bad arguments (nullptr or ignored call + an error naming the layer).
#include "network/network_test_util.h"

namespace kiln::network {
namespace {

using testing::NetworkTest;

std::vector<int64_t> ints(std::initializer_list<int64_t> v) { return v; }

class LayersTest : public NetworkTest {
 protected:
  void SetUp() override {
    NetworkTest::SetUp();
    x = net->addInput("x", DataType::kFLOAT, makeDims({1, 4, 10, 10}));
    ASSERT_NE(x, nullptr);
  }
  ITensor* x = nullptr;
};

TEST_F(LayersTest, ConvolutionDefaultsAndSetters) {
  std::vector<float> k(8 * 4 * 9, 1.0F), b(8, 0.0F);
  IConvolutionLayer* c = net->addConvolutionNd(*x, 8, makeDims({3, 3}), weights(k), weights(b));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->getType(), LayerType::kCONVOLUTION);
  EXPECT_EQ(c->getNbOutputMaps(), 8);
  EXPECT_EQ(c->getNbGroups(), 1);
  expectShape(c->getKernelSizeNd(), {3, 3});
  expectShape(c->getStrideNd(), {1, 1});
  expectShape(c->getDilationNd(), {1, 1});
  expectShape(c->getPrePadding(), {0, 0});
  expectShape(c->getPostPadding(), {0, 0});
  expectShape(c->getPaddingNd(), {0, 0});
  EXPECT_EQ(c->getPaddingMode(), PaddingMode::kEXPLICIT_ROUND_DOWN);
  EXPECT_EQ(c->getKernelWeights().values, k.data());
  EXPECT_EQ(c->getKernelWeights().count, 288);
  EXPECT_EQ(c->getBiasWeights().values, b.data());
  EXPECT_EQ(c->getNbInputs(), 3);
  EXPECT_EQ(c->getInput(0), x);
  EXPECT_EQ(c->getInput(1), nullptr);  // hidden weights are not tensors of the network
  expectDims(c->getOutput(0), {1, 8, 8, 8});

  ir::Node const* n = nodeOf(c);
  c->setStrideNd(makeDims({2, 1}));
  expectShape(c->getStrideNd(), {2, 1});
  EXPECT_EQ(n->attrs.getInts("strides"), ints({2, 1}));
  c->setDilationNd(makeDims({1, 2}));
  EXPECT_EQ(n->attrs.getInts("dilations"), ints({1, 2}));
  expectShape(c->getDilationNd(), {1, 2});
  c->setPaddingNd(makeDims({1, 2}));
  EXPECT_EQ(n->attrs.getInts("pads_begin"), ints({1, 2}));
  EXPECT_EQ(n->attrs.getInts("pads_end"), ints({1, 2}));
  c->setPrePadding(makeDims({0, 3}));
  c->setPostPadding(makeDims({2, 0}));
  expectShape(c->getPrePadding(), {0, 3});
  expectShape(c->getPostPadding(), {2, 0});
  expectShape(c->getPaddingNd(), {0, 3});
  EXPECT_EQ(n->attrs.getInts("pads_begin"), ints({0, 3}));
  EXPECT_EQ(n->attrs.getInts("pads_end"), ints({2, 0}));
  // H: (10 + 0 + 2 - 3) / 2 + 1 = 5; W: (10 + 3 + 0 - 5) / 1 + 1 = 9.
  expectDims(c->getOutput(0), {1, 8, 5, 9});
  c->setPaddingMode(PaddingMode::kSAME_UPPER);
  EXPECT_EQ(c->getPaddingMode(), PaddingMode::kSAME_UPPER);
  EXPECT_EQ(n->attrs.getInt("padding_mode"), static_cast<int64_t>(PaddingMode::kSAME_UPPER));
  expectDims(c->getOutput(0), {1, 8, 5, 10});
  EXPECT_EQ(errors(), 0) << lastError();

  // Groups: weights for C/g = 2 input channels per group.
  std::vector<float> kg(8 * 2 * 9, 1.0F);
  c->setKernelWeights(weights(kg));
  c->setNbGroups(2);
  EXPECT_EQ(c->getNbGroups(), 2);
  EXPECT_EQ(n->attrs.getInt("groups"), 2);
  EXPECT_EQ(c->getKernelWeights().values, kg.data());
  net->graph();  // brings the IR's shapes up to date
  expectShape(n->inputs[1]->shape, {8, 2, 3, 3});
  EXPECT_EQ(n->inputs[1]->producer->constant->data(), kg.data());
  expectDims(c->getOutput(0), {1, 8, 5, 10});
  EXPECT_EQ(errors(), 0) << lastError();

  // Output maps and kernel size reshape the kernel constant when the count allows it.
  c->setNbGroups(1);
  c->setNbOutputMaps(4);  // 144 values = 4 * 4 * 9
  EXPECT_EQ(c->getNbOutputMaps(), 4);
  EXPECT_EQ(n->attrs.getInt("num_output_maps"), 4);
  std::vector<float> b4(4, 0.0F);
  c->setBiasWeights(weights(b4));
  EXPECT_EQ(c->getBiasWeights().values, b4.data());
  net->graph();
  expectShape(n->inputs[1]->shape, {4, 4, 3, 3});
  c->setPaddingMode(PaddingMode::kEXPLICIT_ROUND_DOWN);
  c->setPaddingNd(makeDims({0, 0}));
  c->setStrideNd(makeDims({1, 1}));
  c->setDilationNd(makeDims({1, 1}));
  expectDims(c->getOutput(0), {1, 4, 8, 8});
  EXPECT_EQ(errors(), 0) << lastError();

  // 3-D convolution; a kernel of another rank resets the per-dimension settings to that rank's defaults.
  ITensor* vol = net->addInput("vol", DataType::kFLOAT, makeDims({1, 4, 6, 10, 10}));
  std::vector<float> k3(2 * 4 * 9, 1.0F);
  IConvolutionLayer* c3 = net->addConvolutionNd(*vol, 2, makeDims({1, 3, 3}), weights(k3), emptyWeights());
  ASSERT_NE(c3, nullptr);
  c3->setStrideNd(makeDims({1, 2, 2}));
  c3->setPaddingNd(makeDims({0, 1, 1}));
  expectDims(c3->getOutput(0), {1, 2, 6, 5, 5});
  expectShape(nodeOf(c3)->inputs[1]->shape, {2, 4, 1, 3, 3});
  EXPECT_EQ(errors(), 0) << lastError();
  c3->setKernelSizeNd(makeDims({3, 3}));
  expectShape(c3->getKernelSizeNd(), {3, 3});
  expectShape(c3->getStrideNd(), {1, 1});
  expectShape(c3->getPaddingNd(), {0, 0});
  expectShape(c3->getDilationNd(), {1, 1});
  EXPECT_EQ(nodeOf(c3)->attrs.getInts("kernel_shape"), ints({3, 3}));
  // ...and 72 values cannot be a 2-D kernel for that input (C/g = 4 does not divide its axis -3, 6).
  EXPECT_EQ(errors(), 1);
  EXPECT_NE(lastError().find("set matching kernel weights"), std::string::npos) << lastError();
}

TEST_F(LayersTest, ConvolutionBadArguments) {
  std::vector<float> k(8 * 4 * 9, 1.0F), b(8, 0.0F);
  std::vector<float> shortK(8 * 4 * 9 - 1, 1.0F);
  EXPECT_EQ(net->addConvolutionNd(*x, 8, makeDims({3, 3}), weights(shortK), weights(b)), nullptr);
  EXPECT_EQ(errors(), 1);
  EXPECT_NE(lastError().find("(Unnamed Layer* 0) [Convolution]"), std::string::npos) << lastError();
  EXPECT_NE(lastError().find("kernel weights have 287 values"), std::string::npos) << lastError();
  // 8 * 3 * 9 values: C / groups = 3 does not divide the 4 input channels.
  std::vector<float> k3(8 * 3 * 9, 1.0F);
  EXPECT_EQ(net->addConvolutionNd(*x, 8, makeDims({3, 3}), weights(k3), weights(b)), nullptr);
  EXPECT_EQ(errors(), 2);
  std::vector<float> b7(7, 0.0F);
  EXPECT_EQ(net->addConvolutionNd(*x, 8, makeDims({3, 3}), weights(k), weights(b7)), nullptr);
  EXPECT_EQ(errors(), 3);
  EXPECT_NE(lastError().find("bias weights have 7 values; the layer needs 8"), std::string::npos) << lastError();
  EXPECT_EQ(net->addConvolutionNd(*x, 0, makeDims({3, 3}), weights(k), emptyWeights()), nullptr);
  EXPECT_EQ(net->addConvolutionNd(*x, 8, makeDims({3}), weights(k), emptyWeights()), nullptr);
  EXPECT_EQ(net->addConvolutionNd(*x, 8, makeDims({3, 0}), weights(k), emptyWeights()), nullptr);
  EXPECT_EQ(net->addConvolutionNd(*x, 8, makeDims({3, 3}), Weights{DataType::kFLOAT, nullptr, 288}, emptyWeights()),
            nullptr);
  EXPECT_EQ(net->addConvolutionNd(*x, 8, makeDims({3, 3}), Weights{DataType::kINT4, k.data(), 288}, emptyWeights()),
            nullptr);
  EXPECT_EQ(errors(), 8);
  EXPECT_EQ(net->getNbLayers(), 0);
  EXPECT_EQ(net->graph().nodes().size(), 0U);

  IConvolutionLayer* c = net->addConvolutionNd(*x, 8, makeDims({3, 3}), weights(k), weights(b));
  ASSERT_NE(c, nullptr);
  EXPECT_STREQ(c->getName(), "(Unnamed Layer* 0) [Convolution]");
  c->setStrideNd(makeDims({1, 1, 1}));
  c->setStrideNd(makeDims({0, 1}));
  c->setDilationNd(makeDims({1, -1}));
  c->setPaddingNd(makeDims({-1, 0}));
  c->setNbGroups(0);
  c->setNbOutputMaps(-2);
  c->setKernelWeights(weights(shortK));
  c->setBiasWeights(weights(b7));
  c->setPaddingMode(static_cast<PaddingMode>(9));
  c->setKernelSizeNd(makeDims({5}));
  EXPECT_EQ(errors(), 18);
  EXPECT_NE(lastError().find("layer '(Unnamed Layer* 0) [Convolution]'"), std::string::npos) << lastError();
  // Nothing changed.
  expectShape(c->getStrideNd(), {1, 1});
  EXPECT_EQ(c->getNbGroups(), 1);
  EXPECT_EQ(c->getKernelWeights().values, k.data());
  EXPECT_EQ(c->getBiasWeights().values, b.data());
  expectDims(c->getOutput(0), {1, 8, 8, 8});
}

TEST_F(LayersTest, ConvolutionWeightsReplaceHiddenConstants) {
  std::vector<float> k(2 * 4 * 9, 1.0F), k2(2 * 4 * 9, 2.0F), b(2, 0.0F);
  IConvolutionLayer* c = net->addConvolutionNd(*x, 2, makeDims({3, 3}), weights(k), emptyWeights());
  ir::Graph const& g = net->graph();
  EXPECT_EQ(g.nodes().size(), 2U);
  EXPECT_EQ(net->getNbLayers(), 1);
  ir::Node const* n = nodeOf(c);
  EXPECT_EQ(n->inputs.size(), 2U);
  c->setKernelWeights(weights(k2));
  EXPECT_EQ(g.nodes().size(), 2U);  // the old constant is gone
  EXPECT_EQ(n->inputs[1]->producer->constant->data(), k2.data());
  c->setBiasWeights(weights(b));
  EXPECT_EQ(g.nodes().size(), 3U);
  ASSERT_EQ(n->inputs.size(), 3U);
  EXPECT_EQ(n->inputs[2]->producer->constant->data(), b.data());
  c->setBiasWeights(emptyWeights());
  EXPECT_EQ(g.nodes().size(), 2U);
  EXPECT_EQ(n->inputs.size(), 2U);
  EXPECT_EQ(c->getBiasWeights().count, 0);
  // Renaming the layer renames its hidden constants too.
  c->setName("conv");
  EXPECT_EQ(n->inputs[1]->producer->name, "conv_kernel");
  EXPECT_TRUE(g.topoOrder().isOk());
  expectDims(c->getOutput(0), {1, 2, 8, 8});

  // The kernel as a tensor (input 1): the hidden constant goes away.
  IConstantLayer* kc = net->addConstant(makeDims({2, 4, 3, 3}), weights(k));
  c->setInput(1, *kc->getOutput(0));
  EXPECT_EQ(c->getInput(1), kc->getOutput(0));
  EXPECT_EQ(c->getKernelWeights().count, 0);
  EXPECT_EQ(c->getKernelWeights().values, nullptr);
  EXPECT_EQ(g.nodes().size(), 2U);  // conv + the Constant layer
  expectDims(c->getOutput(0), {1, 2, 8, 8});
  c->setInput(3, *kc->getOutput(0));  // no input 3
  EXPECT_EQ(errors(), 1);
  EXPECT_EQ(errors(), 1) << lastError();

  // Empty kernel at creation: the kernel comes later through setInput(1).
  IConvolutionLayer* c2 = net->addConvolutionNd(*x, 2, makeDims({3, 3}), emptyWeights(), emptyWeights());
  ASSERT_NE(c2, nullptr);
  EXPECT_EQ(c2->getNbInputs(), 1);
  c2->setInput(1, *kc->getOutput(0));
  EXPECT_EQ(c2->getNbInputs(), 2);
  expectDims(c2->getOutput(0), {1, 2, 8, 8});
  EXPECT_EQ(errors(), 1) << lastError();
}

TEST_F(LayersTest, ActivationRoundTrip) {
  IActivationLayer* a = net->addActivation(*x, ActivationType::kLEAKY_RELU);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->getType(), LayerType::kACTIVATION);
  EXPECT_STREQ(a->getName(), "(Unnamed Layer* 0) [Activation]");
  EXPECT_EQ(a->getActivationType(), ActivationType::kLEAKY_RELU);
  EXPECT_EQ(a->getAlpha(), 0.0F);
  EXPECT_EQ(a->getBeta(), 0.0F);
  a->setAlpha(0.1F);
  a->setBeta(2.5F);
  a->setActivationType(ActivationType::kCLIP);
  EXPECT_FLOAT_EQ(a->getAlpha(), 0.1F);
  EXPECT_FLOAT_EQ(a->getBeta(), 2.5F);
  EXPECT_EQ(a->getActivationType(), ActivationType::kCLIP);
  ir::Node const* n = nodeOf(a);
  EXPECT_EQ(n->op, ir::OpType::kActivation);
  EXPECT_EQ(n->attrs.getInt("type"), static_cast<int64_t>(ActivationType::kCLIP));
  EXPECT_FLOAT_EQ(static_cast<float>(n->attrs.getFloat("alpha")), 0.1F);
  EXPECT_FLOAT_EQ(static_cast<float>(n->attrs.getFloat("beta")), 2.5F);
  a->setActivationType(static_cast<ActivationType>(14));
  EXPECT_EQ(errors(), 1);
  EXPECT_EQ(a->getActivationType(), ActivationType::kCLIP);
  EXPECT_EQ(net->addActivation(*x, static_cast<ActivationType>(-1)), nullptr);
  EXPECT_EQ(errors(), 2);
  expectDims(a->getOutput(0), {1, 4, 10, 10});
}

TEST_F(LayersTest, PoolingRoundTrip) {
  IPoolingLayer* p = net->addPoolingNd(*x, PoolingType::kAVERAGE, makeDims({3, 3}));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->getType(), LayerType::kPOOLING);
  EXPECT_EQ(p->getPoolingType(), PoolingType::kAVERAGE);
  expectShape(p->getWindowSizeNd(), {3, 3});
  expectShape(p->getStrideNd(), {1, 1});
  expectShape(p->getPaddingNd(), {0, 0});
  EXPECT_EQ(p->getPaddingMode(), PaddingMode::kEXPLICIT_ROUND_DOWN);
  EXPECT_EQ(p->getBlendFactor(), 0.0F);
  EXPECT_TRUE(p->getAverageCountExcludesPadding());
  expectDims(p->getOutput(0), {1, 4, 8, 8});
  ir::Node const* n = nodeOf(p);
  EXPECT_EQ(n->attrs.getInt("exclude_padding"), 1);
  p->setAverageCountExcludesPadding(false);
  EXPECT_FALSE(p->getAverageCountExcludesPadding());
  EXPECT_EQ(n->attrs.getInt("exclude_padding"), 0);
  p->setPoolingType(PoolingType::kMAX_AVERAGE_BLEND);
  p->setBlendFactor(0.25F);
  EXPECT_EQ(p->getPoolingType(), PoolingType::kMAX_AVERAGE_BLEND);
  EXPECT_FLOAT_EQ(p->getBlendFactor(), 0.25F);
  EXPECT_DOUBLE_EQ(n->attrs.getFloat("blend_factor"), 0.25);
  p->setWindowSizeNd(makeDims({2, 2}));
  p->setStrideNd(makeDims({2, 2}));
  EXPECT_EQ(n->attrs.getInts("window"), ints({2, 2}));
  EXPECT_EQ(n->attrs.getInts("strides"), ints({2, 2}));
  expectDims(p->getOutput(0), {1, 4, 5, 5});
  p->setPrePadding(makeDims({1, 0}));
  p->setPostPadding(makeDims({1, 1}));
  expectShape(p->getPrePadding(), {1, 0});
  expectShape(p->getPostPadding(), {1, 1});
  expectDims(p->getOutput(0), {1, 4, 6, 5});  // (10+2-2)/2+1 = 6, (10+1-2)/2+1 = 5
  p->setPaddingNd(makeDims({0, 0}));
  p->setPaddingMode(PaddingMode::kEXPLICIT_ROUND_UP);
  EXPECT_EQ(n->attrs.getInt("padding_mode"), static_cast<int64_t>(PaddingMode::kEXPLICIT_ROUND_UP));
  EXPECT_EQ(errors(), 0) << lastError();
  p->setBlendFactor(1.5F);
  p->setWindowSizeNd(makeDims({2}));
  p->setStrideNd(makeDims({2}));
  p->setPrePadding(makeDims({-1, 0}));
  p->setPoolingType(static_cast<PoolingType>(3));
  EXPECT_EQ(errors(), 5);
  EXPECT_FLOAT_EQ(p->getBlendFactor(), 0.25F);
  EXPECT_EQ(net->addPoolingNd(*x, PoolingType::kMAX, makeDims({2, 2, 2, 2})), nullptr);
  EXPECT_EQ(errors(), 6);
  EXPECT_NE(lastError().find("(Unnamed Layer* 1) [Pooling]"), std::string::npos) << lastError();
}

TEST_F(LayersTest, ElementWiseUnaryMatrixMultiplyRoundTrips) {
  ITensor* y = net->addInput("y", DataType::kFLOAT, makeDims({1, 4, 1, 10}));
  IElementWiseLayer* e = net->addElementWise(*x, *y, ElementWiseOperation::kPROD);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->getType(), LayerType::kELEMENTWISE);
  EXPECT_EQ(e->getOperation(), ElementWiseOperation::kPROD);
  expectDims(e->getOutput(0), {1, 4, 10, 10});
  e->setOperation(ElementWiseOperation::kLESS);
  EXPECT_EQ(e->getOperation(), ElementWiseOperation::kLESS);
  EXPECT_EQ(nodeOf(e)->attrs.getInt("op"), static_cast<int64_t>(ElementWiseOperation::kLESS));
  EXPECT_EQ(e->getOutput(0)->getType(), DataType::kBOOL);
  e->setInput(1, *x);
  EXPECT_EQ(e->getInput(1), x);
  e->setOperation(static_cast<ElementWiseOperation>(14));
  EXPECT_EQ(errors(), 1);
  // Unequal ranks are refused, as in TensorRT.
  ITensor* v = net->addInput("v", DataType::kFLOAT, makeDims({10}));
  EXPECT_EQ(net->addElementWise(*x, *v, ElementWiseOperation::kSUM), nullptr);
  EXPECT_EQ(errors(), 2);
  EXPECT_NE(lastError().find("equal rank"), std::string::npos) << lastError();

  IUnaryLayer* u = net->addUnary(*x, UnaryOperation::kSQRT);
  EXPECT_EQ(u->getType(), LayerType::kUNARY);
  EXPECT_EQ(u->getOperation(), UnaryOperation::kSQRT);
  u->setOperation(UnaryOperation::kISNAN);
  EXPECT_EQ(u->getOperation(), UnaryOperation::kISNAN);
  EXPECT_EQ(nodeOf(u)->attrs.getInt("op"), static_cast<int64_t>(UnaryOperation::kISNAN));
  EXPECT_EQ(u->getOutput(0)->getType(), DataType::kBOOL);
  u->setOperation(static_cast<UnaryOperation>(25));
  EXPECT_EQ(errors(), 3);

  ITensor* w = net->addInput("w", DataType::kFLOAT, makeDims({1, 4, 7, 10}));
  IMatrixMultiplyLayer* m = net->addMatrixMultiply(*x, MatrixOperation::kNONE, *w, MatrixOperation::kTRANSPOSE);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->getType(), LayerType::kMATRIX_MULTIPLY);
  EXPECT_EQ(m->getOperation(0), MatrixOperation::kNONE);
  EXPECT_EQ(m->getOperation(1), MatrixOperation::kTRANSPOSE);
  expectDims(m->getOutput(0), {1, 4, 10, 7});
  m->setOperation(0, MatrixOperation::kTRANSPOSE);
  m->setOperation(1, MatrixOperation::kNONE);
  EXPECT_EQ(m->getOperation(0), MatrixOperation::kTRANSPOSE);
  ir::Node const* n = nodeOf(m);
  EXPECT_EQ(n->attrs.getInt("op_a"), static_cast<int64_t>(MatrixOperation::kTRANSPOSE));
  EXPECT_EQ(n->attrs.getInt("op_b"), static_cast<int64_t>(MatrixOperation::kNONE));
  m->setInput(1, *x);
  expectDims(m->getOutput(0), {1, 4, 10, 10});
  m->setOperation(2, MatrixOperation::kNONE);
  m->getOperation(2);
  m->setOperation(0, static_cast<MatrixOperation>(3));
  EXPECT_EQ(errors(), 6);
  EXPECT_EQ(net->addMatrixMultiply(*x, static_cast<MatrixOperation>(7), *w, MatrixOperation::kNONE), nullptr);
  EXPECT_EQ(errors(), 7);
}

TEST_F(LayersTest, ShuffleRoundTrip) {
  IShuffleLayer* s = net->addShuffle(*x);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->getType(), LayerType::kSHUFFLE);
  for (int32_t i = 0; i < Dims::MAX_DIMS; ++i) {
    EXPECT_EQ(s->getFirstTranspose().order[i], i);
    EXPECT_EQ(s->getSecondTranspose().order[i], i);
  }
  EXPECT_EQ(s->getReshapeDimensions().nbDims, -1);
  EXPECT_TRUE(s->getZeroIsPlaceholder());
  expectDims(s->getOutput(0), {1, 4, 10, 10});
  ir::Node const* n = nodeOf(s);
  EXPECT_FALSE(n->attrs.has("reshape"));
  EXPECT_FALSE(n->attrs.has("first_perm"));

  Permutation p1{{0, 2, 3, 1, 4, 5, 6, 7}};
  s->setFirstTranspose(p1);
  EXPECT_EQ(s->getFirstTranspose().order[1], 2);
  EXPECT_EQ(n->attrs.getInts("first_perm"), ints({0, 2, 3, 1}));
  expectDims(s->getOutput(0), {1, 10, 10, 4});
  s->setReshapeDimensions(makeDims({0, 100, -1}));
  expectShape(s->getReshapeDimensions(), {0, 100, -1});
  EXPECT_EQ(n->attrs.getInts("reshape"), ints({0, 100, -1}));
  expectDims(s->getOutput(0), {1, 100, 4});
  s->setSecondTranspose(Permutation{{2, 0, 1, 3, 4, 5, 6, 7}});
  EXPECT_EQ(n->attrs.getInts("second_perm"), ints({2, 0, 1}));
  expectDims(s->getOutput(0), {4, 1, 100});
  s->setZeroIsPlaceholder(false);
  EXPECT_FALSE(s->getZeroIsPlaceholder());
  EXPECT_EQ(n->attrs.getInt("zero_is_placeholder"), 0);
  s->setReshapeDimensions(makeDims({1, 0, 400}));  // 0 is a real zero now -> volume mismatch, reported
  s->getOutput(0)->getDimensions();
  EXPECT_EQ(errors(), 1);
  s->setZeroIsPlaceholder(true);
  s->setSecondTranspose(Permutation{{0, 1, 2, 3, 4, 5, 6, 7}});
  s->setReshapeDimensions(makeDims({400}));
  EXPECT_FALSE(n->attrs.has("second_perm"));
  expectDims(s->getOutput(0), {400});
  EXPECT_EQ(errors(), 1) << lastError();
  s->setReshapeDimensions(makeDims({-1, -1}));
  s->setReshapeDimensions(makeDims({2, -5}));
  s->setFirstTranspose(Permutation{{9, 0, 1, 2, 3, 4, 5, 6}});
  EXPECT_EQ(errors(), 4);
  expectShape(s->getReshapeDimensions(), {400});
  s->setInput(2, *x);
  EXPECT_EQ(errors(), 5);
}

TEST_F(LayersTest, ConcatenationRoundTrip) {
  ITensor* y = net->addInput("y", DataType::kFLOAT, makeDims({1, 2, 10, 10}));
  ITensor* ins[] = {x, y, x};
  IConcatenationLayer* c = net->addConcatenation(ins, 3);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->getType(), LayerType::kCONCATENATION);
  EXPECT_EQ(c->getAxis(), 1);  // TensorRT: rank - 3 (C of NCHW)
  EXPECT_EQ(c->getNbInputs(), 3);
  expectDims(c->getOutput(0), {1, 10, 10, 10});
  ITensor* z = net->addInput("z", DataType::kFLOAT, makeDims({1, 4, 10, 3}));
  c->setInput(1, *z);
  c->setInput(2, *z);
  c->setAxis(-1);
  EXPECT_EQ(c->getAxis(), -1);
  EXPECT_EQ(nodeOf(c)->attrs.getInt("axis"), -1);
  expectDims(c->getOutput(0), {1, 4, 10, 16});
  c->setAxis(4);
  c->setInput(3, *z);
  EXPECT_EQ(errors(), 2);
  EXPECT_EQ(c->getAxis(), -1);
  EXPECT_EQ(net->addConcatenation(ins, 0), nullptr);
  EXPECT_EQ(net->addConcatenation(nullptr, 2), nullptr);
  ITensor* withNull[] = {x, nullptr};
  EXPECT_EQ(net->addConcatenation(withNull, 2), nullptr);
  EXPECT_EQ(errors(), 5);
  // Rank below 3: default axis 0.
  ITensor* v = net->addInput("v", DataType::kFLOAT, makeDims({3, 2}));
  ITensor* vs[] = {v, v};
  IConcatenationLayer* c2 = net->addConcatenation(vs, 2);
  EXPECT_EQ(c2->getAxis(), 0);
  expectDims(c2->getOutput(0), {6, 2});
}

TEST_F(LayersTest, SliceRoundTrip) {
  ISliceLayer* s = net->addSlice(*x, makeDims({0, 1, 2, 0}), makeDims({1, 2, 4, 5}), makeDims({1, 1, 2, 2}));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->getType(), LayerType::kSLICE);
  expectShape(s->getStart(), {0, 1, 2, 0});
  expectShape(s->getSize(), {1, 2, 4, 5});
  expectShape(s->getStride(), {1, 1, 2, 2});
  EXPECT_EQ(s->getMode(), SampleMode::kSTRICT_BOUNDS);
  EXPECT_EQ(s->getAxes().nbDims, -1);
  expectDims(s->getOutput(0), {1, 2, 4, 5});
  ir::Node const* n = nodeOf(s);
  EXPECT_EQ(n->attrs.getInts("start"), ints({0, 1, 2, 0}));
  EXPECT_EQ(n->attrs.getInt("mode"), 0);
  s->setAxes(makeDims({2, -1}));
  s->setStart(makeDims({1, 9}));
  s->setSize(makeDims({3, 4}));
  s->setStride(makeDims({2, -1}));
  expectShape(s->getAxes(), {2, -1});
  EXPECT_EQ(n->attrs.getInts("axes"), ints({2, -1}));
  EXPECT_EQ(n->attrs.getInts("stride"), ints({2, -1}));
  expectDims(s->getOutput(0), {1, 4, 3, 4});
  s->setMode(SampleMode::kWRAP);
  EXPECT_EQ(s->getMode(), SampleMode::kWRAP);
  EXPECT_EQ(n->attrs.getInt("mode"), static_cast<int64_t>(SampleMode::kWRAP));
  EXPECT_EQ(errors(), 0) << lastError();

  // Dynamic start/size from shape tensors (inputs 1, 2), fill value (input 4) in kFILL mode.
  int64_t startV[] = {0, 0}, sizeV[] = {2, 2};
  IConstantLayer* st = net->addConstant(makeDims({2}), Weights{DataType::kINT64, startV, 2});
  IConstantLayer* sz = net->addConstant(makeDims({2}), Weights{DataType::kINT64, sizeV, 2});
  s->setInput(1, *st->getOutput(0));
  s->setInput(2, *sz->getOutput(0));
  EXPECT_EQ(s->getStart().nbDims, -1);
  EXPECT_EQ(s->getSize().nbDims, -1);
  EXPECT_FALSE(n->attrs.has("start"));
  EXPECT_FALSE(n->attrs.has("size"));
  EXPECT_EQ(s->getNbInputs(), 3);
  EXPECT_TRUE(sz->getOutput(0)->isShapeTensor());
  expectDims(s->getOutput(0), {1, 4, 2, 2});  // constant contents are known
  float fill = 0.0F;
  IConstantLayer* fc = net->addConstant(makeDims({}), Weights{DataType::kFLOAT, &fill, 1});
  s->setMode(SampleMode::kFILL);
  s->setInput(4, *fc->getOutput(0));
  EXPECT_EQ(s->getNbInputs(), 5);
  EXPECT_EQ(s->getInput(3), nullptr);
  EXPECT_EQ(s->getInput(4), fc->getOutput(0));
  expectDims(s->getOutput(0), {1, 4, 2, 2});
  // Static values replace the tensors again.
  s->setStart(makeDims({0, 0}));
  EXPECT_EQ(s->getInput(1), nullptr);
  expectShape(s->getStart(), {0, 0});
  EXPECT_EQ(errors(), 0) << lastError();
  s->setSize(makeDims({1, -2}));
  s->setMode(static_cast<SampleMode>(5));
  s->setInput(6, *x);
  EXPECT_EQ(errors(), 3);
  EXPECT_EQ(net->addSlice(*x, makeDims({0, 0}), makeDims({1, 1}), makeDims({1, 1})), nullptr);  // rank 2 for rank 4
  EXPECT_EQ(net->addSlice(*x, makeDims({0, 0, 0, 0}), makeDims({1, 1, 1}), makeDims({1, 1, 1, 1})), nullptr);
  EXPECT_EQ(errors(), 5);
}

TEST_F(LayersTest, ReduceRoundTrip) {
  IReduceLayer* r = net->addReduce(*x, ReduceOperation::kMAX, (1U << 2) | (1U << 3), false);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->getType(), LayerType::kREDUCE);
  EXPECT_EQ(r->getOperation(), ReduceOperation::kMAX);
  EXPECT_EQ(r->getReduceAxes(), 12U);
  EXPECT_FALSE(r->getKeepDimensions());
  ir::Node const* n = nodeOf(r);
  EXPECT_EQ(n->attrs.getInts("axes"), ints({2, 3}));
  EXPECT_EQ(n->attrs.getInt("keep_dims"), 0);
  expectDims(r->getOutput(0), {1, 4});
  r->setReduceAxes(1U << 1);
  r->setKeepDimensions(true);
  r->setOperation(ReduceOperation::kAVG);
  EXPECT_EQ(r->getReduceAxes(), 2U);
  EXPECT_TRUE(r->getKeepDimensions());
  EXPECT_EQ(r->getOperation(), ReduceOperation::kAVG);
  EXPECT_EQ(n->attrs.getInt("op"), static_cast<int64_t>(ReduceOperation::kAVG));
  expectDims(r->getOutput(0), {1, 1, 10, 10});
  EXPECT_EQ(errors(), 0) << lastError();
  r->setReduceAxes(1U << 4);  // beyond rank 4
  r->setOperation(static_cast<ReduceOperation>(5));
  EXPECT_EQ(errors(), 2);
  EXPECT_EQ(r->getReduceAxes(), 2U);
  EXPECT_EQ(net->addReduce(*x, ReduceOperation::kSUM, 1U << 5, true), nullptr);
  EXPECT_EQ(errors(), 3);
  EXPECT_NE(lastError().find("(Unnamed Layer* 1) [Reduce]"), std::string::npos) << lastError();
}

// Kiln extension: axes as input 1 (a shape tensor, possibly known only at run time) replace the mask.
TEST_F(LayersTest, ReduceAxesInput) {
  IReduceLayer* r = net->addReduce(*x, ReduceOperation::kSUM, 1U << 1, false);
  ASSERT_NE(r, nullptr);
  ITensor* axes = net->addInput("axes", DataType::kINT32, makeDims({2}));
  r->setInput(1, *axes);
  EXPECT_EQ(errors(), 0) << lastError();
  EXPECT_EQ(r->getNbInputs(), 2);
  EXPECT_EQ(r->getInput(1), axes);
  expectDims(r->getOutput(0), {-1, -1});
  EXPECT_TRUE(axes->isShapeTensor());
  r->setKeepDimensions(true);
  expectDims(r->getOutput(0), {-1, -1, -1, -1});
  r->setInput(2, *axes);  // no input 2
  EXPECT_EQ(errors(), 1);
}

TEST_F(LayersTest, SoftMaxRoundTrip) {
  ISoftMaxLayer* s = net->addSoftMax(*x);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->getType(), LayerType::kSOFTMAX);
  EXPECT_EQ(s->getAxes(), 1U << 1);  // rank 4: axis 1 (C)
  EXPECT_EQ(nodeOf(s)->attrs.getInt("axis"), 1);
  s->setAxes(1U << 3);
  EXPECT_EQ(s->getAxes(), 8U);
  EXPECT_EQ(nodeOf(s)->attrs.getInt("axis"), 3);
  s->setAxes(3U);       // two bits
  s->setAxes(0U);       // none
  s->setAxes(1U << 4);  // beyond rank
  EXPECT_EQ(errors(), 3);
  EXPECT_EQ(s->getAxes(), 8U);
  ITensor* v = net->addInput("v", DataType::kFLOAT, makeDims({5, 7}));
  EXPECT_EQ(net->addSoftMax(*v)->getAxes(), 1U);  // rank 2: axis 0, as TensorRT
  ITensor* w = net->addInput("w", DataType::kFLOAT, makeDims({2, 5, 7}));
  EXPECT_EQ(net->addSoftMax(*w)->getAxes(), 1U);  // rank 3: axis 0
}

TEST_F(LayersTest, ScaleRoundTrip) {
  std::vector<float> shift(4, 1.0F), scale(4, 2.0F), power(4, 1.0F), one(1, 3.0F), elem(4 * 10 * 10, 1.0F);
  IScaleLayer* s = net->addScale(*x, ScaleMode::kCHANNEL, weights(shift), weights(scale), weights(power));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->getType(), LayerType::kSCALE);
  EXPECT_EQ(s->getMode(), ScaleMode::kCHANNEL);
  EXPECT_EQ(s->getChannelAxis(), 1);
  EXPECT_EQ(s->getShift().values, shift.data());
  EXPECT_EQ(s->getScale().values, scale.data());
  EXPECT_EQ(s->getPower().values, power.data());
  ir::Node const* n = nodeOf(s);
  ASSERT_EQ(n->inputs.size(), 4U);
  EXPECT_EQ(n->inputs[3]->producer->constant->data(), power.data());
  expectShape(n->inputs[1]->shape, {4});
  expectDims(s->getOutput(0), {1, 4, 10, 10});
  EXPECT_EQ(net->graph().nodes().size(), 4U);
  s->setPower(emptyWeights());
  EXPECT_EQ(s->getPower().count, 0);
  EXPECT_EQ(n->inputs.size(), 3U);
  EXPECT_EQ(net->graph().nodes().size(), 3U);
  s->setMode(ScaleMode::kUNIFORM);
  s->setShift(weights(one));
  s->setScale(weights(one));
  EXPECT_EQ(s->getMode(), ScaleMode::kUNIFORM);
  EXPECT_EQ(n->attrs.getInt("mode"), 0);
  EXPECT_EQ(s->getShift().count, 1);
  expectDims(s->getOutput(0), {1, 4, 10, 10});
  EXPECT_EQ(errors(), 0) << lastError();
  s->setShift(weights(shift));  // 4 values in uniform mode
  EXPECT_EQ(errors(), 1);
  EXPECT_EQ(s->getShift().count, 1);
  s->setChannelAxis(-3);
  EXPECT_EQ(s->getChannelAxis(), -3);
  EXPECT_EQ(n->attrs.getInt("channel_axis"), -3);
  s->setChannelAxis(4);
  EXPECT_EQ(errors(), 2);
  s->setMode(static_cast<ScaleMode>(3));
  EXPECT_EQ(errors(), 3);

  IScaleLayer* e = net->addScaleNd(*x, ScaleMode::kELEMENTWISE, emptyWeights(), weights(elem), emptyWeights(), 1);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->getChannelAxis(), 1);
  IScaleLayer* nd = net->addScaleNd(*x, ScaleMode::kCHANNEL, emptyWeights(), weights(elem), emptyWeights(), 3);
  EXPECT_EQ(nd, nullptr);  // 400 values, channel axis 3 has 10
  EXPECT_EQ(errors(), 4);
  EXPECT_NE(lastError().find("scale have 400 values; the layer needs 10"), std::string::npos) << lastError();
  std::vector<float> ten(10, 1.0F);
  nd = net->addScaleNd(*x, ScaleMode::kCHANNEL, emptyWeights(), weights(ten), emptyWeights(), 3);
  ASSERT_NE(nd, nullptr);
  EXPECT_EQ(nd->getChannelAxis(), 3);
  EXPECT_EQ(net->addScale(*x, ScaleMode::kCHANNEL, weights(one), emptyWeights(), emptyWeights()), nullptr);
  EXPECT_EQ(net->addScaleNd(*x, ScaleMode::kCHANNEL, emptyWeights(), weights(ten), emptyWeights(), 7), nullptr);
  EXPECT_EQ(errors(), 6);
}

TEST_F(LayersTest, NormalizationRoundTrip) {
  std::vector<float> g(4, 1.0F), b(4, 0.0F), g2(2, 1.0F), b2(2, 0.0F);
  IConstantLayer* gc = net->addConstant(makeDims({1, 4, 1, 1}), weights(g));
  IConstantLayer* bc = net->addConstant(makeDims({1, 4, 1, 1}), weights(b));
  INormalizationLayer* in = net->addNormalization(*x, *gc->getOutput(0), *bc->getOutput(0), 0b1100);
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(in->getType(), LayerType::kNORMALIZATION);
  EXPECT_STREQ(in->getName(), "(Unnamed Layer* 2) [Normalization]");
  EXPECT_FALSE(in->isV2());
  EXPECT_FLOAT_EQ(in->getEpsilon(), 1e-5F);
  EXPECT_EQ(in->getAxes(), 0b1100U);
  EXPECT_EQ(in->getNbGroups(), 1);
  EXPECT_EQ(in->getComputePrecision(), DataType::kFLOAT);
  EXPECT_EQ(in->getNbInputs(), 3);
  EXPECT_EQ(in->getInput(1), gc->getOutput(0));
  expectDims(in->getOutput(0), {1, 4, 10, 10});
  ir::Node const* n = nodeOf(in);
  in->setEpsilon(1e-3F);
  in->setAxes(0b1110);
  in->setComputePrecision(DataType::kHALF);
  EXPECT_FLOAT_EQ(in->getEpsilon(), 1e-3F);
  EXPECT_FLOAT_EQ(static_cast<float>(n->attrs.getFloat("epsilon")), 1e-3F);
  EXPECT_EQ(in->getAxes(), 0b1110U);
  EXPECT_EQ(n->attrs.getInts("axes"), ints({1, 2, 3}));
  EXPECT_EQ(in->getComputePrecision(), DataType::kHALF);
  expectDims(in->getOutput(0), {1, 4, 10, 10});
  EXPECT_EQ(errors(), 0) << lastError();
  in->setEpsilon(-1.0F);
  in->setAxes(0);
  in->setAxes(1U << 6);
  in->setNbGroups(0);
  in->setComputePrecision(DataType::kINT32);
  EXPECT_EQ(errors(), 5);
  EXPECT_EQ(in->getAxes(), 0b1110U);

  // Group normalization, V2: scale/bias per channel.
  INormalizationLayer* gn = net->addNormalizationV2(*x, *gc->getOutput(0), *bc->getOutput(0), 0b1100);
  ASSERT_NE(gn, nullptr);
  EXPECT_TRUE(gn->isV2());
  EXPECT_EQ(nodeOf(gn)->attrs.getInt("v2"), 1);
  gn->setNbGroups(2);
  EXPECT_EQ(gn->getNbGroups(), 2);
  EXPECT_EQ(nodeOf(gn)->attrs.getInt("num_groups"), 2);
  expectDims(gn->getOutput(0), {1, 4, 10, 10});
  // The first version takes [1, G, 1, 1].
  IConstantLayer* g2c = net->addConstant(makeDims({1, 2, 1, 1}), weights(g2));
  IConstantLayer* b2c = net->addConstant(makeDims({1, 2, 1, 1}), weights(b2));
  INormalizationLayer* gn1 = net->addNormalization(*x, *g2c->getOutput(0), *b2c->getOutput(0), 0b1100);
  gn1->setNbGroups(2);
  expectDims(gn1->getOutput(0), {1, 4, 10, 10});
  EXPECT_EQ(errors(), 5) << lastError();
  gn1->setInput(1, *gc->getOutput(0));  // per-channel scale does not fit v1 group norm: found by inference
  gn1->getOutput(0)->getDimensions();
  EXPECT_EQ(errors(), 6);
  EXPECT_EQ(net->addNormalization(*x, *gc->getOutput(0), *bc->getOutput(0), 0), nullptr);
  EXPECT_EQ(net->addNormalizationV2(*x, *gc->getOutput(0), *bc->getOutput(0), 1U << 4), nullptr);
  EXPECT_EQ(errors(), 8);
}

TEST_F(LayersTest, ConstantRoundTrip) {
  std::vector<int32_t> v{1, 2, 3, 4, 5, 6};
  IConstantLayer* c = net->addConstant(makeDims({2, 3}), weights(v));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->getType(), LayerType::kCONSTANT);
  EXPECT_EQ(c->getNbInputs(), 0);
  EXPECT_EQ(c->getWeights().values, v.data());
  EXPECT_EQ(c->getWeights().type, DataType::kINT32);
  expectShape(c->getDimensions(), {2, 3});
  expectDims(c->getOutput(0), {2, 3});
  EXPECT_EQ(c->getOutput(0)->getType(), DataType::kINT32);
  ir::Node const* n = nodeOf(c);
  EXPECT_EQ(n->op, ir::OpType::kConstant);
  EXPECT_EQ(n->constant->data(), v.data());
  c->setDimensions(makeDims({3, 2}));
  expectDims(c->getOutput(0), {3, 2});
  std::vector<float> f(6, 1.5F);
  c->setWeights(weights(f));
  EXPECT_EQ(c->getOutput(0)->getType(), DataType::kFLOAT);
  EXPECT_EQ(n->constant->data(), f.data());
  EXPECT_EQ(errors(), 0) << lastError();
  c->setDimensions(makeDims({4, 2}));
  c->setDimensions(makeDims({-1, 6}));
  std::vector<float> f5(5, 1.0F);
  c->setWeights(weights(f5));
  c->setInput(0, *x);
  EXPECT_EQ(errors(), 4);
  expectShape(c->getDimensions(), {3, 2});
  EXPECT_EQ(c->getWeights().values, f.data());
  EXPECT_EQ(net->addConstant(makeDims({2, 2}), weights(v)), nullptr);
  EXPECT_EQ(net->addConstant(makeDims({-1, 6}), weights(v)), nullptr);
  EXPECT_EQ(errors(), 6);
  // Empty and scalar constants.
  IConstantLayer* e = net->addConstant(makeDims({0, 3}), emptyWeights());
  ASSERT_NE(e, nullptr);
  expectDims(e->getOutput(0), {0, 3});
  float one = 1.0F;
  expectDims(net->addConstant(makeDims({}), Weights{DataType::kFLOAT, &one, 1})->getOutput(0), {});
}

TEST_F(LayersTest, IdentityCastShapeGatherRoundTrips) {
  IIdentityLayer* id = net->addIdentity(*x);
  EXPECT_EQ(id->getType(), LayerType::kIDENTITY);
  EXPECT_STREQ(id->getName(), "(Unnamed Layer* 0) [Identity]");
  expectDims(id->getOutput(0), {1, 4, 10, 10});

  ICastLayer* c = net->addCast(*x, DataType::kHALF);
  EXPECT_EQ(c->getType(), LayerType::kCAST);
  EXPECT_EQ(c->getToType(), DataType::kHALF);
  EXPECT_EQ(c->getOutput(0)->getType(), DataType::kHALF);
  c->setToType(DataType::kINT32);
  EXPECT_EQ(c->getToType(), DataType::kINT32);
  EXPECT_EQ(nodeOf(c)->attrs.getInt("to"), static_cast<int64_t>(DataType::kINT32));
  EXPECT_EQ(c->getOutput(0)->getType(), DataType::kINT32);
  c->setToType(DataType::kFP4);
  EXPECT_EQ(errors(), 1);
  EXPECT_EQ(net->addCast(*x, static_cast<DataType>(42)), nullptr);
  EXPECT_EQ(errors(), 2);

  IShapeLayer* s = net->addShape(*x);
  EXPECT_EQ(s->getType(), LayerType::kSHAPE);
  EXPECT_STREQ(s->getName(), "(Unnamed Layer* 2) [Shape]");
  expectDims(s->getOutput(0), {4});
  EXPECT_EQ(s->getOutput(0)->getType(), DataType::kINT64);
  EXPECT_TRUE(s->getOutput(0)->isShapeTensor());

  std::vector<int32_t> idx{2, 0, 1};
  IConstantLayer* ic = net->addConstant(makeDims({3}), weights(idx));
  IGatherLayer* g = net->addGather(*x, *ic->getOutput(0), 2);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->getType(), LayerType::kGATHER);
  EXPECT_EQ(g->getGatherAxis(), 2);
  EXPECT_EQ(g->getMode(), GatherMode::kDEFAULT);
  EXPECT_EQ(g->getNbElementWiseDims(), 0);
  expectDims(g->getOutput(0), {1, 4, 3, 10});
  ir::Node const* n = nodeOf(g);
  EXPECT_EQ(n->attrs.getInt("axis"), 2);
  g->setGatherAxis(-1);
  EXPECT_EQ(g->getGatherAxis(), -1);
  expectDims(g->getOutput(0), {1, 4, 10, 3});
  g->setNbElementWiseDims(1);
  EXPECT_EQ(g->getNbElementWiseDims(), 1);
  EXPECT_EQ(n->attrs.getInt("num_elementwise_dims"), 1);
  g->setNbElementWiseDims(0);
  g->setMode(GatherMode::kELEMENT);
  EXPECT_EQ(g->getMode(), GatherMode::kELEMENT);
  EXPECT_EQ(n->attrs.getInt("mode"), static_cast<int64_t>(GatherMode::kELEMENT));
  EXPECT_EQ(errors(), 2) << lastError();
  g->setGatherAxis(4);
  g->setNbElementWiseDims(-1);
  g->setMode(static_cast<GatherMode>(3));
  EXPECT_EQ(errors(), 5);
  g->setMode(GatherMode::kDEFAULT);
  g->setGatherAxis(0);  // (kELEMENT needs indices of the data's rank; keep later inference clean)

  IGatherLayer* g2 = net->addGatherV2(*x, *ic->getOutput(0), GatherMode::kND);
  ASSERT_NE(g2, nullptr);
  EXPECT_EQ(g2->getMode(), GatherMode::kND);
  EXPECT_EQ(g2->getGatherAxis(), 0);
  EXPECT_EQ(g2->getNbElementWiseDims(), 0);
  g2->setMode(GatherMode::kDEFAULT);
  EXPECT_EQ(net->addGather(*x, *ic->getOutput(0), 4), nullptr);
  EXPECT_EQ(net->addGather(*x, *x, 0), nullptr);  // float indices
  EXPECT_EQ(net->addGatherV2(*x, *ic->getOutput(0), static_cast<GatherMode>(9)), nullptr);
  EXPECT_EQ(errors(), 8);
  EXPECT_NE(lastError().find("addGatherV2"), std::string::npos) << lastError();
}

TEST_F(LayersTest, DefaultNamesCountLayersNotHiddenConstants) {
  std::vector<float> k(2 * 4 * 9, 1.0F), b(2, 0.0F);
  net->addConvolutionNd(*x, 2, makeDims({3, 3}), weights(k), weights(b));
  IActivationLayer* a = net->addActivation(*x, ActivationType::kTANH);
  EXPECT_STREQ(a->getName(), "(Unnamed Layer* 1) [Activation]");
  EXPECT_STREQ(a->getOutput(0)->getName(), "(Unnamed Layer* 1) [Activation]_output");
  EXPECT_EQ(net->getNbLayers(), 2);
  EXPECT_EQ(net->graph().nodes().size(), 4U);
  EXPECT_NE(net->graph().findNode("(Unnamed Layer* 0) [Convolution]_kernel"), nullptr);
  EXPECT_NE(net->graph().findNode("(Unnamed Layer* 0) [Convolution]_bias"), nullptr);
}

}  // namespace
}  // namespace kiln::network
