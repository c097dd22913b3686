// Tests of the spatial layer family's network API: defaults (TensorRT's), setter/getter round trips and the node
// attributes they write, inferred output shapes, and bad arguments (nullptr or ignored call + an error).
#include "network/network_test_util.h"

namespace kiln::network {
namespace {

using testing::NetworkTest;

std::vector<int64_t> ints(std::initializer_list<int64_t> v) { return v; }

class SpatialLayersTest : public NetworkTest {
 protected:
  void SetUp() override {
    NetworkTest::SetUp();
    x = net->addInput("x", DataType::kFLOAT, makeDims({1, 4, 5, 5}));
    ASSERT_NE(x, nullptr);
  }
  ITensor* x = nullptr;
};

TEST_F(SpatialLayersTest, DeconvolutionDefaultsAndSetters) {
  std::vector<float> k(4 * 6 * 9, 1.0F), b(6, 0.0F);
  IDeconvolutionLayer* d = net->addDeconvolutionNd(*x, 6, makeDims({3, 3}), weights(k), weights(b));
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->getType(), LayerType::kDECONVOLUTION);
  EXPECT_EQ(d->getNbOutputMaps(), 6);
  EXPECT_EQ(d->getNbGroups(), 1);
  expectShape(d->getKernelSizeNd(), {3, 3});
  expectShape(d->getStrideNd(), {1, 1});
  expectShape(d->getDilationNd(), {1, 1});
  expectShape(d->getPrePadding(), {0, 0});
  expectShape(d->getPostPadding(), {0, 0});
  EXPECT_EQ(d->getPaddingMode(), PaddingMode::kEXPLICIT_ROUND_DOWN);
  EXPECT_EQ(d->getKernelWeights().values, k.data());
  EXPECT_EQ(d->getBiasWeights().values, b.data());
  EXPECT_EQ(d->getNbInputs(), 3);
  expectDims(d->getOutput(0), {1, 6, 7, 7});
  ir::Node const* n = nodeOf(d);
  EXPECT_EQ(n->op, ir::OpType::kDeconvolution);
  EXPECT_EQ(dimsToString(n->inputs[1]->shape), dimsToString(makeDims({4, 6, 3, 3})));

  d->setStrideNd(makeDims({2, 2}));
  EXPECT_EQ(n->attrs.getInts("strides"), ints({2, 2}));
  expectDims(d->getOutput(0), {1, 6, 11, 11});
  d->setPaddingNd(makeDims({1, 1}));
  EXPECT_EQ(n->attrs.getInts("pads_begin"), ints({1, 1}));
  EXPECT_EQ(n->attrs.getInts("pads_end"), ints({1, 1}));
  expectDims(d->getOutput(0), {1, 6, 9, 9});
  d->setPrePadding(makeDims({0, 1}));
  d->setPostPadding(makeDims({1, 0}));
  expectShape(d->getPrePadding(), {0, 1});
  expectShape(d->getPostPadding(), {1, 0});
  d->setDilationNd(makeDims({2, 1}));
  EXPECT_EQ(n->attrs.getInts("dilations"), ints({2, 1}));
  expectShape(d->getDilationNd(), {2, 1});
  expectDims(d->getOutput(0), {1, 6, 12, 10});
  d->setPaddingMode(PaddingMode::kSAME_UPPER);
  EXPECT_EQ(n->attrs.getInt("padding_mode"), static_cast<int64_t>(PaddingMode::kSAME_UPPER));
  expectDims(d->getOutput(0), {1, 6, 10, 10});
  // Groups: C * K / groups * 9 = 108 weights of shape [C = 4, K / groups = 3, 3, 3].
  std::vector<float> kg(4 * 3 * 9, 1.0F);
  d->setNbGroups(2);
  d->setKernelWeights(weights(kg));
  EXPECT_EQ(n->attrs.getInt("groups"), 2);
  EXPECT_EQ(errors(), 0) << lastError();
  expectDims(d->getOutput(0), {1, 6, 10, 10});
  EXPECT_EQ(dimsToString(n->inputs[1]->shape), dimsToString(makeDims({4, 3, 3, 3})));
  // A 1-D kernel resets the per-dimension settings.
  ITensor* x1 = net->addInput("x1", DataType::kFLOAT, makeDims({1, 2, 4}));
  std::vector<float> k1(2 * 3 * 2, 1.0F);
  IDeconvolutionLayer* d1 = net->addDeconvolutionNd(*x1, 3, makeDims({2}), weights(k1), emptyWeights());
  ASSERT_NE(d1, nullptr);
  expectDims(d1->getOutput(0), {1, 3, 5});
  // New output maps, then matching weights (inference runs only when asked, after both).
  std::vector<float> k1b(2 * 2 * 2, 1.0F);
  d1->setNbOutputMaps(2);
  d1->setKernelWeights(weights(k1b));
  EXPECT_EQ(d1->getNbOutputMaps(), 2);
  EXPECT_EQ(nodeOf(d1)->attrs.getInt("num_output_maps"), 2);
  expectDims(d1->getOutput(0), {1, 2, 5});
  EXPECT_EQ(errors(), 0) << lastError();
}

TEST_F(SpatialLayersTest, DeconvolutionBadArguments) {
  std::vector<float> k(4 * 6 * 9, 1.0F), b(6, 0.0F), shortK(4 * 6 * 9 - 1, 1.0F), b5(5, 0.0F);
  EXPECT_EQ(net->addDeconvolutionNd(*x, 6, makeDims({3, 3}), weights(shortK), weights(b)), nullptr);
  EXPECT_NE(lastError().find("[Deconvolution]"), std::string::npos) << lastError();
  std::vector<float> k5(5 * 6 * 9, 1.0F);  // 5 input channels' worth for a 4-channel input
  EXPECT_EQ(net->addDeconvolutionNd(*x, 6, makeDims({3, 3}), weights(k5), weights(b)), nullptr);
  EXPECT_EQ(net->addDeconvolutionNd(*x, 6, makeDims({3, 3}), weights(k), weights(b5)), nullptr);
  EXPECT_EQ(net->addDeconvolutionNd(*x, 0, makeDims({3, 3}), weights(k), emptyWeights()), nullptr);
  EXPECT_EQ(net->addDeconvolutionNd(*x, 6, makeDims({3, 3, 3, 3}), weights(k), emptyWeights()), nullptr);
  EXPECT_EQ(net->addDeconvolutionNd(*x, 6, makeDims({3, 0}), weights(k), emptyWeights()), nullptr);
  EXPECT_EQ(net->addDeconvolutionNd(*x, 6, makeDims({3}), weights(k), emptyWeights()), nullptr);  // rank
  EXPECT_EQ(errors(), 7);
  EXPECT_EQ(net->getNbLayers(), 0);

  IDeconvolutionLayer* d = net->addDeconvolutionNd(*x, 6, makeDims({3, 3}), weights(k), weights(b));
  ASSERT_NE(d, nullptr);
  d->setStrideNd(makeDims({1, 1, 1}));
  d->setStrideNd(makeDims({0, 1}));
  d->setDilationNd(makeDims({1, -1}));
  d->setPaddingNd(makeDims({-1, 0}));
  d->setNbGroups(0);
  d->setNbOutputMaps(0);
  d->setKernelWeights(weights(shortK));
  d->setBiasWeights(weights(b5));
  d->setPaddingMode(static_cast<PaddingMode>(9));
  d->setKernelSizeNd(makeDims({1, 2, 3, 4}));
  EXPECT_EQ(errors(), 17);
  expectShape(d->getStrideNd(), {1, 1});
  EXPECT_EQ(d->getNbGroups(), 1);
  EXPECT_EQ(d->getKernelWeights().values, k.data());
  EXPECT_EQ(d->getBiasWeights().values, b.data());
  expectDims(d->getOutput(0), {1, 6, 7, 7});
}

TEST_F(SpatialLayersTest, ResizeDefaultsAndSetters) {
  IResizeLayer* r = net->addResize(*x);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->getType(), LayerType::kRESIZE);
  EXPECT_EQ(r->getResizeMode(), InterpolationMode::kNEAREST);
  EXPECT_EQ(r->getCoordinateTransformation(), ResizeCoordinateTransformation::kASYMMETRIC);
  EXPECT_EQ(r->getSelectorForSinglePixel(), ResizeSelector::kFORMULA);
  EXPECT_EQ(r->getNearestRounding(), ResizeRoundMode::kFLOOR);
  EXPECT_FLOAT_EQ(r->getCubicCoeff(), -0.75F);
  EXPECT_FALSE(r->getExcludeOutside());
  expectDims(r->getOutput(0), {1, 4, 5, 5});
  ir::Node const* n = nodeOf(r);

  r->setOutputDimensions(makeDims({1, 4, 10, 3}));
  EXPECT_EQ(n->attrs.getInts("output_dims"), ints({1, 4, 10, 3}));
  EXPECT_FALSE(n->attrs.has("scales"));
  expectShape(r->getOutputDimensions(), {1, 4, 10, 3});
  EXPECT_EQ(r->getScales(0, nullptr), -1);
  expectDims(r->getOutput(0), {1, 4, 10, 3});

  float sc[4] = {1, 1, 2.5F, 0.5F};
  r->setScales(sc, 4);
  EXPECT_FALSE(n->attrs.has("output_dims"));
  EXPECT_EQ(n->attrs.getFloats("scales"), (std::vector<double>{1, 1, 2.5, 0.5}));
  EXPECT_EQ(r->getOutputDimensions().nbDims, -1);
  float got[4] = {};
  EXPECT_EQ(r->getScales(0, nullptr), 4);
  EXPECT_EQ(r->getScales(4, got), 4);
  EXPECT_FLOAT_EQ(got[2], 2.5F);
  expectDims(r->getOutput(0), {1, 4, 12, 2});

  r->setResizeMode(InterpolationMode::kCUBIC);
  EXPECT_EQ(n->attrs.getInt("mode"), static_cast<int64_t>(InterpolationMode::kCUBIC));
  r->setCoordinateTransformation(ResizeCoordinateTransformation::kHALF_PIXEL);
  EXPECT_EQ(n->attrs.getInt("coordinate_transformation"), 2);
  r->setSelectorForSinglePixel(ResizeSelector::kUPPER);
  EXPECT_EQ(n->attrs.getInt("selector"), 1);
  r->setNearestRounding(ResizeRoundMode::kCEIL);
  EXPECT_EQ(n->attrs.getInt("nearest_rounding"), 3);
  r->setCubicCoeff(-0.5F);
  EXPECT_DOUBLE_EQ(n->attrs.getFloat("cubic_coeff"), -0.5);
  r->setExcludeOutside(true);
  EXPECT_EQ(n->attrs.getInt("exclude_outside"), 1);
  EXPECT_EQ(r->getResizeMode(), InterpolationMode::kCUBIC);
  EXPECT_EQ(r->getCoordinateTransformation(), ResizeCoordinateTransformation::kHALF_PIXEL);
  EXPECT_EQ(r->getSelectorForSinglePixel(), ResizeSelector::kUPPER);
  EXPECT_EQ(r->getNearestRounding(), ResizeRoundMode::kCEIL);
  EXPECT_TRUE(r->getExcludeOutside());
  EXPECT_EQ(errors(), 0) << lastError();

  // Sizes from a constant shape tensor on input 1 override the attributes.
  std::vector<int32_t> sizes{1, 4, 7, 8};
  IConstantLayer* c = net->addConstant(makeDims({4}), weights(sizes));
  ASSERT_NE(c, nullptr);
  r->setInput(1, *c->getOutput(0));
  EXPECT_EQ(errors(), 0) << lastError();
  expectDims(r->getOutput(0), {1, 4, 7, 8});
  EXPECT_EQ(r->getScales(0, nullptr), -1);
}

TEST_F(SpatialLayersTest, ResizeBadArguments) {
  IResizeLayer* r = net->addResize(*x);
  ASSERT_NE(r, nullptr);
  float neg[4] = {1, 1, -2, 1};
  r->setScales(neg, 4);
  r->setScales(nullptr, 4);
  r->setOutputDimensions(makeDims({1, -4, 2, 2}));
  r->setResizeMode(static_cast<InterpolationMode>(7));
  r->setCoordinateTransformation(static_cast<ResizeCoordinateTransformation>(-1));
  r->setSelectorForSinglePixel(static_cast<ResizeSelector>(2));
  r->setNearestRounding(static_cast<ResizeRoundMode>(4));
  EXPECT_EQ(errors(), 7);
  EXPECT_NE(lastError().find("[Resize]"), std::string::npos) << lastError();
  EXPECT_EQ(r->getResizeMode(), InterpolationMode::kNEAREST);
  EXPECT_EQ(r->getScales(0, nullptr), 4);
  expectDims(r->getOutput(0), {1, 4, 5, 5});
  // Scales of the wrong count are accepted by the setter but fail inference (reported once).
  float two[2] = {2, 2};
  r->setScales(two, 2);
  (void)r->getOutput(0)->getDimensions();
  EXPECT_EQ(errors(), 8);
  EXPECT_NE(lastError().find("2 scales for an input of rank 4"), std::string::npos) << lastError();
}

TEST_F(SpatialLayersTest, GridSampleRoundTrip) {
  ITensor* grid = net->addInput("grid", DataType::kFLOAT, makeDims({1, 3, 7, 2}));
  IGridSampleLayer* g = net->addGridSample(*x, *grid);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->getType(), LayerType::kGRID_SAMPLE);
  EXPECT_EQ(g->getInterpolationMode(), InterpolationMode::kLINEAR);
  EXPECT_FALSE(g->getAlignCorners());
  EXPECT_EQ(g->getSampleMode(), SampleMode::kFILL);
  expectDims(g->getOutput(0), {1, 4, 3, 7});
  ir::Node const* n = nodeOf(g);
  g->setInterpolationMode(InterpolationMode::kCUBIC);
  EXPECT_EQ(n->attrs.getInt("mode"), 2);
  g->setAlignCorners(true);
  EXPECT_EQ(n->attrs.getInt("align_corners"), 1);
  EXPECT_TRUE(g->getAlignCorners());
  EXPECT_TRUE(g->setSampleMode(SampleMode::kREFLECT));
  EXPECT_EQ(n->attrs.getInt("sample_mode"), static_cast<int64_t>(SampleMode::kREFLECT));
  EXPECT_TRUE(g->setSampleMode(SampleMode::kCLAMP));
  EXPECT_FALSE(g->setSampleMode(SampleMode::kWRAP));
  EXPECT_FALSE(g->setSampleMode(SampleMode::kSTRICT_BOUNDS));
  EXPECT_EQ(g->getSampleMode(), SampleMode::kCLAMP);
  g->setInterpolationMode(static_cast<InterpolationMode>(5));
  EXPECT_EQ(errors(), 1);
  EXPECT_EQ(g->getInterpolationMode(), InterpolationMode::kCUBIC);

  ITensor* bad = net->addInput("bad", DataType::kFLOAT, makeDims({1, 3, 7, 3}));
  EXPECT_EQ(net->addGridSample(*x, *bad), nullptr);
  EXPECT_EQ(errors(), 2);
  EXPECT_NE(lastError().find("[GridSample]"), std::string::npos) << lastError();
}

TEST_F(SpatialLayersTest, LRNRoundTrip) {
  ILRNLayer* l = net->addLRN(*x, 3, 1e-4F, 0.75F, 2.0F);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->getType(), LayerType::kLRN);
  EXPECT_EQ(l->getWindowSize(), 3);
  EXPECT_FLOAT_EQ(l->getAlpha(), 1e-4F);
  EXPECT_FLOAT_EQ(l->getBeta(), 0.75F);
  EXPECT_FLOAT_EQ(l->getK(), 2.0F);
  expectDims(l->getOutput(0), {1, 4, 5, 5});
  ir::Node const* n = nodeOf(l);
  l->setWindowSize(5);
  EXPECT_EQ(n->attrs.getInt("window"), 5);
  l->setAlpha(0.5F);
  EXPECT_DOUBLE_EQ(n->attrs.getFloat("alpha"), 0.5);
  l->setBeta(1.5F);
  EXPECT_DOUBLE_EQ(n->attrs.getFloat("beta"), 1.5);
  l->setK(1.0F);
  EXPECT_DOUBLE_EQ(n->attrs.getFloat("k"), 1.0);
  EXPECT_EQ(errors(), 0);
  l->setWindowSize(4);
  l->setWindowSize(17);
  l->setBeta(0.0F);
  l->setK(0.0F);
  EXPECT_EQ(errors(), 4);
  EXPECT_EQ(l->getWindowSize(), 5);
  EXPECT_FLOAT_EQ(l->getBeta(), 1.5F);
  EXPECT_EQ(net->addLRN(*x, 2, 1, 1, 1), nullptr);
  EXPECT_EQ(net->addLRN(*x, 3, 1, 1e6F, 1), nullptr);
  EXPECT_EQ(errors(), 6);
  EXPECT_NE(lastError().find("[LRN]"), std::string::npos) << lastError();
}

TEST_F(SpatialLayersTest, ParametricReLURoundTrip) {
  ITensor* slope = net->addInput("slope", DataType::kFLOAT, makeDims({1, 4, 1, 1}));
  IParametricReLULayer* p = net->addParametricReLU(*x, *slope);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->getType(), LayerType::kPARAMETRIC_RELU);
  EXPECT_EQ(p->getNbInputs(), 2);
  EXPECT_EQ(p->getInput(1), slope);
  expectDims(p->getOutput(0), {1, 4, 5, 5});
  ITensor* bad = net->addInput("bad", DataType::kFLOAT, makeDims({1, 3, 1, 1}));
  EXPECT_EQ(net->addParametricReLU(*x, *bad), nullptr);
  EXPECT_EQ(errors(), 1);
  EXPECT_NE(lastError().find("[ParametricReLU]"), std::string::npos) << lastError();
}

TEST_F(SpatialLayersTest, PaddingRoundTrip) {
  IPaddingLayer* p = net->addPaddingNd(*x, makeDims({1, 2}), makeDims({0, -1}));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->getType(), LayerType::kPADDING);
  expectShape(p->getPrePaddingNd(), {1, 2});
  expectShape(p->getPostPaddingNd(), {0, -1});
  expectDims(p->getOutput(0), {1, 4, 6, 6});
  ir::Node const* n = nodeOf(p);
  p->setPrePaddingNd(makeDims({-1, 0}));
  EXPECT_EQ(n->attrs.getInts("pads_begin"), ints({-1, 0}));
  p->setPostPaddingNd(makeDims({3, 3}));
  EXPECT_EQ(n->attrs.getInts("pads_end"), ints({3, 3}));
  expectDims(p->getOutput(0), {1, 4, 7, 8});
  EXPECT_EQ(errors(), 0);
  Dims none{};
  none.nbDims = 0;
  p->setPrePaddingNd(none);
  EXPECT_EQ(errors(), 1);
  EXPECT_EQ(net->addPaddingNd(*x, makeDims({1, 2}), makeDims({1})), nullptr);
  EXPECT_EQ(net->addPaddingNd(*x, makeDims({1, 1, 1, 1, 1}), makeDims({1, 1, 1, 1, 1})), nullptr);
  EXPECT_EQ(errors(), 3);
  EXPECT_NE(lastError().find("[Padding]"), std::string::npos) << lastError();
}

TEST_F(SpatialLayersTest, RaggedSoftMaxRoundTrip) {
  ITensor* in = net->addInput("in", DataType::kFLOAT, makeDims({1, 3, 5}));
  ITensor* bounds = net->addInput("bounds", DataType::kINT32, makeDims({1, 3, 1}));
  IRaggedSoftMaxLayer* r = net->addRaggedSoftMax(*in, *bounds);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->getType(), LayerType::kRAGGED_SOFTMAX);
  EXPECT_EQ(r->getInput(1), bounds);
  expectDims(r->getOutput(0), {1, 3, 5});
  ITensor* fb = net->addInput("fb", DataType::kFLOAT, makeDims({1, 3, 1}));
  EXPECT_EQ(net->addRaggedSoftMax(*in, *fb), nullptr);
  EXPECT_EQ(net->addRaggedSoftMax(*x, *bounds), nullptr);  // rank 4
  EXPECT_EQ(errors(), 2);
  EXPECT_NE(lastError().find("[Ragged SoftMax]"), std::string::npos) << lastError();
}

}  // namespace
}  // namespace kiln::network
