// Network-level tests of the selection family: each add* factory's defaults, setters/getters and the node
// attributes they write, inferred output shapes/types (data-dependent extents -1), optional inputs
// (TopK's k, Fill's shape/alpha/beta), and bad arguments (nullptr + an error naming the layer).
#include <list>

#include "network/network_test_util.h"

namespace kiln::network {
namespace {

using testing::NetworkTest;

class SelectLayersTest : public NetworkTest {
 protected:
  void SetUp() override {
    NetworkTest::SetUp();
    x = net->addInput("x", DataType::kFLOAT, makeDims({2, 5, 7}));
    ASSERT_NE(x, nullptr);
  }
  // Constants whose values live as long as the fixture (the network borrows them).
  ITensor* constant(DataType t, std::vector<int64_t> const& shape, std::vector<int32_t> const& v32) {
    i32_.push_back(v32);
    IConstantLayer* c = net->addConstant(makeDims(shape), weights(i32_.back()));
    (void)t;
    return c ? c->getOutput(0) : nullptr;
  }
  ITensor* fconstant(std::vector<int64_t> const& shape, std::vector<float> const& v) {
    f32_.push_back(v);
    IConstantLayer* c = net->addConstant(makeDims(shape), weights(f32_.back()));
    return c ? c->getOutput(0) : nullptr;
  }
  std::list<std::vector<int32_t>> i32_;
  std::list<std::vector<float>> f32_;
  ITensor* x = nullptr;
  bool falseTrue_[2] = {false, true};
};

TEST_F(SelectLayersTest, TopK) {
  ITopKLayer* l = net->addTopK(*x, TopKOperation::kMAX, 3, 1U << 1);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->getType(), LayerType::kTOPK);
  EXPECT_EQ(l->getNbOutputs(), 2);
  EXPECT_EQ(l->getK(), 3);
  EXPECT_EQ(l->getReduceAxes(), 2U);
  EXPECT_EQ(l->getIndicesType(), DataType::kINT32);
  expectDims(l->getOutput(0), {2, 3, 7});
  EXPECT_EQ(l->getOutput(1)->getType(), DataType::kINT32);
  l->setOperation(TopKOperation::kMIN);
  l->setReduceAxes(1U << 2);
  l->setK(7);  // the largest k
  EXPECT_TRUE(l->setIndicesType(DataType::kINT64));
  EXPECT_EQ(l->getOperation(), TopKOperation::kMIN);
  expectDims(l->getOutput(1), {2, 5, 7});
  EXPECT_EQ(l->getOutput(1)->getType(), DataType::kINT64);
  ir::Node const* n = nodeOf(l);
  EXPECT_EQ(n->attrs.getInt("axis"), 2);
  EXPECT_EQ(n->attrs.getInt("op"), static_cast<int64_t>(TopKOperation::kMIN));
  EXPECT_EQ(errors(), 0);
  // k from a 0-D constant on input 1.
  ITensor* k = constant(DataType::kINT32, {}, {4});
  ASSERT_NE(k, nullptr);
  l->setInput(1, *k);
  EXPECT_EQ(l->getK(), -1);
  expectDims(l->getOutput(0), {2, 5, 4});
  l->setK(2);
  EXPECT_EQ(l->getNbInputs(), 1);
  expectDims(l->getOutput(0), {2, 5, 2});
  EXPECT_EQ(errors(), 0);
  EXPECT_FALSE(l->setIndicesType(DataType::kFLOAT));
  EXPECT_EQ(errors(), 1);
  l->setReduceAxes(3U);
  EXPECT_EQ(errors(), 2);
  EXPECT_EQ(net->addTopK(*x, TopKOperation::kMAX, 1, 1U << 3), nullptr);  // axis beyond rank
  EXPECT_EQ(net->addTopK(*x, TopKOperation::kMAX, -1, 1U), nullptr);
  EXPECT_EQ(net->addTopK(*x, TopKOperation::kMAX, 1, 0U), nullptr);
  EXPECT_EQ(net->addTopK(*x, TopKOperation::kMAX, 1, 1U, DataType::kHALF), nullptr);
  EXPECT_EQ(errors(), 6);
  EXPECT_NE(lastError().find("TopK"), std::string::npos) << lastError();
}

TEST_F(SelectLayersTest, NMS) {
  ITensor* boxes = net->addInput("boxes", DataType::kFLOAT, makeDims({1, 10, 4}));
  ITensor* scores = net->addInput("scores", DataType::kFLOAT, makeDims({1, 10, 3}));
  ITensor* m = constant(DataType::kINT32, {}, {5});
  INMSLayer* l = net->addNMS(*boxes, *scores, *m);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->getType(), LayerType::kNMS);
  EXPECT_EQ(l->getBoundingBoxFormat(), BoundingBoxFormat::kCORNER_PAIRS);
  EXPECT_EQ(l->getTopKBoxLimit(), 5000);
  EXPECT_EQ(l->getIndicesType(), DataType::kINT32);
  expectDims(l->getOutput(0), {-1, 3});
  expectDims(l->getOutput(1), {});
  l->setBoundingBoxFormat(BoundingBoxFormat::kCENTER_SIZES);
  l->setTopKBoxLimit(100);
  EXPECT_TRUE(l->setIndicesType(DataType::kINT64));
  EXPECT_EQ(l->getOutput(0)->getType(), DataType::kINT64);
  EXPECT_EQ(nodeOf(l)->attrs.getInt("box_format"), 1);
  EXPECT_EQ(nodeOf(l)->attrs.getInt("topk_box_limit"), 100);
  ITensor* iou = net->addInput("iou", DataType::kFLOAT, makeDims({}));
  l->setInput(3, *iou);
  EXPECT_EQ(l->getNbInputs(), 4);
  EXPECT_EQ(errors(), 0);
  l->setTopKBoxLimit(-1);
  EXPECT_EQ(errors(), 1);
  EXPECT_EQ(net->addNMS(*boxes, *scores, *m, DataType::kUINT8), nullptr);
  EXPECT_EQ(errors(), 2);
  // Mismatched scores are reported by shape inference.
  ITensor* bad = net->addInput("bad", DataType::kFLOAT, makeDims({1, 9, 3}));
  INMSLayer* l2 = net->addNMS(*boxes, *bad, *m);
  ASSERT_NE(l2, nullptr);
  (void)l2->getOutput(0)->getDimensions();
  EXPECT_GE(errors(), 3);
}

TEST_F(SelectLayersTest, NonZero) {
  INonZeroLayer* l = net->addNonZero(*x);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->getType(), LayerType::kNON_ZERO);
  EXPECT_EQ(l->getIndicesType(), DataType::kINT32);
  expectDims(l->getOutput(0), {3, -1});
  EXPECT_TRUE(l->setIndicesType(DataType::kINT64));
  EXPECT_EQ(l->getOutput(0)->getType(), DataType::kINT64);
  EXPECT_FALSE(l->setIndicesType(DataType::kBOOL));
  EXPECT_EQ(net->addNonZero(*x, DataType::kFLOAT), nullptr);
  EXPECT_EQ(errors(), 2);
}

TEST_F(SelectLayersTest, Cumulative) {
  ITensor* axis = constant(DataType::kINT32, {}, {-1});
  ICumulativeLayer* l = net->addCumulative(*x, *axis, CumulativeOperation::kSUM, true, false);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->getType(), LayerType::kCUMULATIVE);
  EXPECT_EQ(l->getOperation(), CumulativeOperation::kSUM);
  EXPECT_TRUE(l->getExclusive());
  EXPECT_FALSE(l->getReverse());
  l->setReverse(true);
  l->setExclusive(false);
  EXPECT_TRUE(l->getReverse());
  EXPECT_EQ(nodeOf(l)->attrs.getInt("exclusive"), 0);
  expectDims(l->getOutput(0), {2, 5, 7});
  EXPECT_EQ(errors(), 0);
  EXPECT_FALSE(l->setOperation(static_cast<CumulativeOperation>(5)));
  EXPECT_EQ(errors(), 1);
  // An axis known only at run time (Kiln extension): the output keeps the input's shape; the layer checks the
  // axis when it runs. A constant out-of-range axis is reported by inference.
  ITensor* ax = net->addInput("ax", DataType::kINT32, makeDims({}));
  ICumulativeLayer* l2 = net->addCumulative(*x, *ax, CumulativeOperation::kSUM, false, false);
  ASSERT_NE(l2, nullptr);
  expectDims(l2->getOutput(0), {2, 5, 7});
  EXPECT_EQ(errors(), 1);
  ICumulativeLayer* l3 =
      net->addCumulative(*x, *constant(DataType::kINT32, {}, {3}), CumulativeOperation::kSUM, false, false);
  ASSERT_NE(l3, nullptr);
  (void)l3->getOutput(0)->getDimensions();
  EXPECT_EQ(errors(), 2);
  EXPECT_NE(lastError().find("out of range"), std::string::npos) << lastError();
}

TEST_F(SelectLayersTest, OneHot) {
  ITensor* idx = net->addInput("idx", DataType::kINT32, makeDims({4, 3}));
  ITensor* vals = fconstant({2}, {0.f, 1.f});
  ITensor* depth = constant(DataType::kINT32, {}, {6});
  IOneHotLayer* l = net->addOneHot(*idx, *vals, *depth, -1);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->getType(), LayerType::kONE_HOT);
  EXPECT_EQ(l->getAxis(), -1);
  expectDims(l->getOutput(0), {4, 3, 6});
  l->setAxis(0);
  expectDims(l->getOutput(0), {6, 4, 3});
  l->setAxis(-2);
  expectDims(l->getOutput(0), {4, 6, 3});
  EXPECT_EQ(l->getOutput(0)->getType(), DataType::kFLOAT);
  EXPECT_EQ(errors(), 0);
  l->setAxis(3);
  (void)l->getOutput(0)->getDimensions();
  EXPECT_EQ(errors(), 1);
}

TEST_F(SelectLayersTest, ReverseSequence) {
  ITensor* lens = net->addInput("lens", DataType::kINT32, makeDims({5}));
  IReverseSequenceLayer* l = net->addReverseSequence(*x, *lens);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->getType(), LayerType::kREVERSE_SEQUENCE);
  EXPECT_EQ(l->getBatchAxis(), 1);
  EXPECT_EQ(l->getSequenceAxis(), 0);
  expectDims(l->getOutput(0), {2, 5, 7});
  l->setSequenceAxis(2);
  EXPECT_EQ(l->getSequenceAxis(), 2);
  EXPECT_EQ(nodeOf(l)->attrs.getInt("sequence_axis"), 2);
  expectDims(l->getOutput(0), {2, 5, 7});
  EXPECT_EQ(errors(), 0);
  l->setBatchAxis(0);  // lens has 5 entries, batch is 2
  (void)l->getOutput(0)->getDimensions();
  EXPECT_EQ(errors(), 1);
}

TEST_F(SelectLayersTest, Assertion) {
  ITensor* c = net->addInput("c", DataType::kBOOL, makeDims({3}));
  IAssertionLayer* l = net->addAssertion(*c, "c must hold");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->getType(), LayerType::kASSERTION);
  EXPECT_EQ(l->getNbOutputs(), 0);
  EXPECT_STREQ(l->getMessage(), "c must hold");
  l->setMessage("changed");
  EXPECT_STREQ(l->getMessage(), "changed");
  EXPECT_EQ(nodeOf(l)->attrs.getString("message"), "changed");
  EXPECT_EQ(net->addAssertion(*c, nullptr), nullptr);
  EXPECT_EQ(errors(), 1);
  // A constant false condition fails at build time (shape inference), with the message.
  IConstantLayer* f = net->addConstant(makeDims({2}), Weights{DataType::kBOOL, falseTrue_, 2});
  ASSERT_NE(f, nullptr);
  IAssertionLayer* l2 = net->addAssertion(*f->getOutput(0), "never true");
  ASSERT_NE(l2, nullptr);
  (void)net->graph();
  EXPECT_EQ(errors(), 2);
  EXPECT_NE(lastError().find("never true"), std::string::npos) << lastError();
}

TEST_F(SelectLayersTest, Select) {
  ITensor* c = net->addInput("c", DataType::kBOOL, makeDims({2, 1, 7}));
  ITensor* e = net->addInput("e", DataType::kFLOAT, makeDims({5, 1}));
  ISelectLayer* l = net->addSelect(*c, *x, *e);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->getType(), LayerType::kSELECT);
  expectDims(l->getOutput(0), {2, 5, 7});
  EXPECT_EQ(errors(), 0);
  ITensor* h = net->addInput("h", DataType::kHALF, makeDims({5, 1}));
  ISelectLayer* l2 = net->addSelect(*c, *x, *h);  // type mismatch: reported by inference
  ASSERT_NE(l2, nullptr);
  (void)l2->getOutput(0)->getDimensions();
  EXPECT_EQ(errors(), 1);
}

TEST_F(SelectLayersTest, Fill) {
  IFillLayer* l = net->addFill(makeDims({3, 4}), FillOperation::kLINSPACE, DataType::kINT32);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->getType(), LayerType::kFILL);
  EXPECT_EQ(l->getToType(), DataType::kINT32);
  EXPECT_EQ(l->getOperation(), FillOperation::kLINSPACE);
  expectShape(l->getDimensions(), {3, 4});
  expectDims(l->getOutput(0), {3, 4});
  EXPECT_EQ(l->getOutput(0)->getType(), DataType::kINT32);
  EXPECT_EQ(nodeOf(l)->attrs.getInt("seed", -1), 0);
  l->setAlphaInt64(5);
  l->setBetaInt64(2);
  EXPECT_TRUE(l->isAlphaBetaInt64());
  EXPECT_EQ(l->getAlphaInt64(), 5);
  l->setAlpha(0.5);
  EXPECT_FALSE(l->isAlphaBetaInt64());
  EXPECT_EQ(l->getAlpha(), 0.5);
  l->setBeta(2.0);
  EXPECT_EQ(l->getBeta(), 2.0);
  l->setOperation(FillOperation::kRANDOM_NORMAL);
  l->setToType(DataType::kFLOAT);
  l->setDimensions(makeDims({6}));
  expectDims(l->getOutput(0), {6});
  EXPECT_EQ(errors(), 0);
  // Shape from a constant shape tensor on input 0.
  ITensor* s = constant(DataType::kINT32, {3}, {2, 0, 3});
  l->setInput(0, *s);
  EXPECT_EQ(l->getDimensions().nbDims, -1);
  expectDims(l->getOutput(0), {2, 0, 3});
  // Per-axis steps on input 2.
  ITensor* steps = fconstant({3}, {1.f, 2.f, 3.f});
  l->setOperation(FillOperation::kLINSPACE);
  l->setInput(2, *steps);
  expectDims(l->getOutput(0), {2, 0, 3});
  EXPECT_EQ(errors(), 0);
  // The deprecated two-argument overload gives float.
  IFillLayer* f = net->addFill(makeDims({2}), FillOperation::kRANDOM_UNIFORM);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->getToType(), DataType::kFLOAT);
  EXPECT_EQ(net->addFill(makeDims({-1}), FillOperation::kLINSPACE, DataType::kFLOAT), nullptr);
  EXPECT_EQ(net->addFill(makeDims({2}), FillOperation::kLINSPACE, DataType::kBOOL), nullptr);
  EXPECT_EQ(net->addFill(makeDims({2}), static_cast<FillOperation>(7), DataType::kFLOAT), nullptr);
  EXPECT_EQ(errors(), 3);
  f->setToType(DataType::kINT32);  // random ints: not supported yet, reported by inference
  (void)f->getOutput(0)->getDimensions();
  EXPECT_EQ(errors(), 4);
  EXPECT_NE(lastError().find("not supported yet"), std::string::npos) << lastError();
}

}  // namespace
}  // namespace kiln::network
