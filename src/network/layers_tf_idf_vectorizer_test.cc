// Tests of ITfIdfVectorizerLayer: the output shape of [C] and [N, C] inputs, getters, setters that refuse an
// inconsistent pool and leave the layer unchanged, refused arguments of addTfIdfVectorizer, float inputs.
#include "network/network_test_util.h"

namespace kiln::network::testing {
namespace {

class TfIdfVectorizerLayerTest : public NetworkTest {
 protected:
  std::vector<int64_t> pool{2, 3, 5, 4, 5, 6, 7, 8, 6, 7};
  std::vector<int64_t> counts{0, 4};
  std::vector<int32_t> indexes{0, 1, 2, 3, 4, 5, 6};
};

TEST_F(TfIdfVectorizerLayerTest, ShapesGettersAndSetters) {
  ITensor* x = net->addInput("x", DataType::kINT32, makeDims({12}));
  ITfIdfVectorizerLayer* l =
      net->addTfIdfVectorizer(*x, TfIdfVectorizerMode::kTF, 2, 2, 0, weights(pool), weights(counts), weights(indexes),
                              Weights{DataType::kFLOAT, nullptr, 0});
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->getType(), LayerType::kTF_IDF_VECTORIZER);
  EXPECT_EQ(l->getMode(), TfIdfVectorizerMode::kTF);
  EXPECT_EQ(l->getMinGramLength(), 2);
  EXPECT_EQ(l->getMaxGramLength(), 2);
  EXPECT_EQ(l->getMaxSkipCount(), 0);
  EXPECT_EQ(l->getNbColumns(), 7);
  expectDims(l->getOutput(0), {7});
  EXPECT_EQ(l->getOutput(0)->getType(), DataType::kFLOAT);
  ir::Node const* n = nodeOf(l);
  EXPECT_EQ(n->attrs.getInts("pool"), pool);
  EXPECT_EQ(n->attrs.getInts("ngram_counts"), counts);
  EXPECT_FALSE(n->attrs.has("weights"));

  EXPECT_TRUE(l->setMode(TfIdfVectorizerMode::kTFIDF));
  EXPECT_EQ(n->attrs.getInt("mode"), 2);
  EXPECT_TRUE(l->setGramLengths(1, 3));
  EXPECT_EQ(l->getMaxGramLength(), 3);
  EXPECT_TRUE(l->setMaxSkipCount(4));
  EXPECT_EQ(n->attrs.getInt("max_skip_count"), 4);
  std::vector<float> w{1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<int64_t> idx9{8, 7, 6, 5, 4, 3, 2};
  EXPECT_FALSE(l->setWeights(weights(w)));  // 9 weights for 7 indexes
  EXPECT_TRUE(l->setPool(weights(pool), weights(counts), weights(idx9)));
  EXPECT_EQ(l->getNbColumns(), 9);
  expectDims(l->getOutput(0), {9});
  EXPECT_EQ(errors(), 1);

  // Refused changes leave the layer as it was.
  EXPECT_FALSE(l->setGramLengths(3, 2));
  EXPECT_FALSE(l->setGramLengths(0, 2));
  EXPECT_FALSE(l->setMaxSkipCount(-1));
  EXPECT_FALSE(l->setMode(static_cast<TfIdfVectorizerMode>(7)));
  std::vector<int64_t> dup{1, 1};
  std::vector<int64_t> zero{0};
  std::vector<int64_t> twoIdx{0, 1};
  EXPECT_FALSE(l->setPool(weights(dup), weights(zero), weights(twoIdx)));  // [1] listed twice
  std::vector<float> badW{1, 2};
  EXPECT_FALSE(l->setWeights(weights(badW)));
  EXPECT_FALSE(l->setWeights(Weights{DataType::kINT32, indexes.data(), 7}));
  EXPECT_EQ(errors(), 8);
  EXPECT_EQ(l->getMinGramLength(), 1);
  EXPECT_EQ(l->getMaxGramLength(), 3);
  EXPECT_EQ(l->getMaxSkipCount(), 4);
  EXPECT_EQ(l->getMode(), TfIdfVectorizerMode::kTFIDF);
  EXPECT_EQ(l->getNbColumns(), 9);
  EXPECT_EQ(n->attrs.getInts("pool"), pool);
}

TEST_F(TfIdfVectorizerLayerTest, BatchInputAndWeights) {
  ITensor* x = net->addInput("x", DataType::kINT64, makeDims({3, 6}));
  std::vector<float> w{1, 2, 3, 4, 5, 6, 7};
  ITfIdfVectorizerLayer* l = net->addTfIdfVectorizer(*x, TfIdfVectorizerMode::kIDF, 1, 2, 5, weights(pool),
                                                     weights(counts), weights(indexes), weights(w));
  ASSERT_NE(l, nullptr);
  expectDims(l->getOutput(0), {3, 7});
  EXPECT_EQ(nodeOf(l)->attrs.getFloats("weights"), (std::vector<double>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(l->setWeights(Weights{DataType::kFLOAT, nullptr, 0}));  // back to all ones
  EXPECT_FALSE(nodeOf(l)->attrs.has("weights"));
  EXPECT_EQ(errors(), 0);
}

TEST_F(TfIdfVectorizerLayerTest, RefusedArgumentsAndInputs) {
  ITensor* x = net->addInput("x", DataType::kINT32, makeDims({12}));
  Weights none{DataType::kFLOAT, nullptr, 0};
  std::vector<int64_t> fewIdx{0, 1};
  EXPECT_EQ(net->addTfIdfVectorizer(*x, TfIdfVectorizerMode::kTF, 1, 2, 0, weights(pool), weights(counts),
                                    weights(fewIdx), none),
            nullptr);
  EXPECT_EQ(net->addTfIdfVectorizer(*x, TfIdfVectorizerMode::kTF, 1, 2, 0, Weights{DataType::kINT64, nullptr, 3},
                                    weights(counts), weights(indexes), none),
            nullptr);
  std::vector<float> fpool{1, 2};
  EXPECT_EQ(net->addTfIdfVectorizer(*x, TfIdfVectorizerMode::kTF, 1, 2, 0, weights(fpool), weights(counts),
                                    weights(indexes), none),
            nullptr);
  EXPECT_EQ(errors(), 3);
  EXPECT_EQ(net->getNbLayers(), 0);
  // A float input is refused when shapes are inferred.
  ITensor* f = net->addInput("f", DataType::kFLOAT, makeDims({12}));
  ITfIdfVectorizerLayer* l = net->addTfIdfVectorizer(*f, TfIdfVectorizerMode::kTF, 1, 2, 0, weights(pool),
                                                     weights(counts), weights(indexes), none);
  ASSERT_NE(l, nullptr);
  (void)l->getOutput(0)->getDimensions();
  EXPECT_EQ(errors(), 4);
}

}  // namespace
}  // namespace kiln::network::testing
