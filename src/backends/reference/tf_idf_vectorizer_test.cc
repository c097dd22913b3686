// Tests of TfIdfVectorizer: a hand-counted sequence in every mode with and without weights, skips and columns
// out of pool order, ONNX's batch example, 3-grams, empty rows, and refused attributes and inputs.
#include <gtest/gtest.h>

#include "backends/reference/kernel_test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using namespace reftest;
using ir::OpType;
using Ints = std::vector<int64_t>;

ir::Attributes tfidf(TfIdfVectorizerMode mode, int64_t minGram, int64_t maxGram, int64_t skip, Ints pool, Ints counts,
                     Ints indexes, std::vector<double> weights = {}) {
  ir::Attributes a = attrs({{"mode", static_cast<int64_t>(mode)},
                            {"min_gram_length", minGram},
                            {"max_gram_length", maxGram},
                            {"max_skip_count", skip},
                            {"pool", std::move(pool)},
                            {"ngram_counts", std::move(counts)},
                            {"ngram_indexes", std::move(indexes)}});
  if (!weights.empty()) a.set("weights", std::move(weights));
  return a;
}

// x = [1, 2, 1, 2, 3]. Pool n-grams: g0 = [1], g1 = [3], g2 = [1 2], g3 = [2 1], g4 = [1 3], in columns
// 4, 0, 1, 2, 3. Counted by hand:
//   unigrams: 1 twice, 3 once;
//   bigrams, adjacent (d = 1): (1 2) (2 1) (1 2) (2 3) -> [1 2] twice, [2 1] once;
//   bigrams one apart (d = 2): (1 1) (2 2) (1 3)       -> [1 3] once.
// Columns (TF): col0 = [3] = 1, col1 = [1 2] = 2, col2 = [2 1] = 1, col3 = [1 3] = 1 (0 without skips),
// col4 = [1] = 2.
Ints const kPool{1, 3, 1, 2, 2, 1, 1, 3};
Ints const kCounts{0, 2};
Ints const kIndexes{4, 0, 1, 2, 3};
std::vector<double> const kX{1, 2, 1, 2, 3};

std::vector<double> runMode(TfIdfVectorizerMode mode, int64_t skip, std::vector<double> weights, DataType t) {
  RunResult r = runNode(OpType::kTfIdfVectorizer, tfidf(mode, 1, 2, skip, kPool, kCounts, kIndexes, std::move(weights)),
                        {var(tensor(t, {5}, kX))});
  EXPECT_TRUE(r.status.isOk()) << r.status.toString();
  if (!r.status.isOk()) return {};
  EXPECT_EQ(r.dtype, DataType::kFLOAT);
  EXPECT_EQ(dimsToString(r.shape), "[5]");
  return doubles(r.out);
}

TEST(TfIdfVectorizerReference, HandCountedEveryMode) {
  using M = TfIdfVectorizerMode;
  std::vector<double> const w{0.5, 1.5, 2, 4, 8};  // column j's weight
  for (DataType t : {DataType::kINT32, DataType::kINT64}) {
    SCOPED_TRACE(dataTypeName(t));
    EXPECT_EQ(runMode(M::kTF, 1, {}, t), (std::vector<double>{1, 2, 1, 1, 2}));
    EXPECT_EQ(runMode(M::kTF, 0, {}, t), (std::vector<double>{1, 2, 1, 0, 2}));
    EXPECT_EQ(runMode(M::kTF, 1, w, t), (std::vector<double>{1, 2, 1, 1, 2}));  // TF ignores weights
    EXPECT_EQ(runMode(M::kIDF, 1, {}, t), (std::vector<double>{1, 1, 1, 1, 1}));
    EXPECT_EQ(runMode(M::kIDF, 0, {}, t), (std::vector<double>{1, 1, 1, 0, 1}));
    EXPECT_EQ(runMode(M::kIDF, 1, w, t), (std::vector<double>{0.5, 1.5, 2, 4, 8}));
    EXPECT_EQ(runMode(M::kIDF, 0, w, t), (std::vector<double>{0.5, 1.5, 2, 0, 8}));
    EXPECT_EQ(runMode(M::kTFIDF, 1, {}, t), (std::vector<double>{1, 2, 1, 1, 2}));
    EXPECT_EQ(runMode(M::kTFIDF, 1, w, t), (std::vector<double>{0.5, 3, 2, 4, 16}));
  }
}

// ONNX's test_tfidfvectorizer_tf_batch_uniandbigrams_skip5 (expected values from the ONNX test suite).
TEST(TfIdfVectorizerReference, OnnxBatchExample) {
  Ints pool{2, 3, 5, 4, 5, 6, 7, 8, 6, 7};
  RunResult r =
      runNode(OpType::kTfIdfVectorizer, tfidf(TfIdfVectorizerMode::kTF, 1, 2, 5, pool, {0, 4}, {0, 1, 2, 3, 4, 5, 6}),
              {var(tensor(DataType::kINT32, {2, 6}, std::vector<double>{1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(dimsToString(r.shape), "[2,7]");
  EXPECT_EQ(doubles(r.out), (std::vector<double>{0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1}));
  // Only bigrams, no skips (test_tfidfvectorizer_tf_batch_onlybigrams_skip0): the pool's bigrams are [5 6]
  // (col 4), [7 8] (col 5), [6 7] (col 6); row 1's adjacent pairs (8 6) (6 7) (7 5) (5 6) (6 8) hold [6 7] and
  // [5 6] once each, row 0's none.
  r = runNode(OpType::kTfIdfVectorizer, tfidf(TfIdfVectorizerMode::kTF, 2, 2, 0, pool, {0, 4}, {0, 1, 2, 3, 4, 5, 6}),
              {var(tensor(DataType::kINT64, {2, 6}, std::vector<double>{1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(doubles(r.out), (std::vector<double>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1}));
}

TEST(TfIdfVectorizerReference, TrigramsAndSkips) {
  // x = 5 6 7 5 6 7; pool 3-grams [5 6 7] (col 0), [6 7 5] (col 1), [5 7 6] (col 2); no 1- or 2-grams.
  // d = 1: (5 6 7) (6 7 5) (7 5 6) (5 6 7) -> col0 = 2, col1 = 1. d = 2: (5 7 6) (6 5 7) -> col2 = 1.
  // d = 3: none fit (0 + 2 * 3 = 6 is past the end).
  Ints pool{5, 6, 7, 6, 7, 5, 5, 7, 6};
  std::vector<double> x{5, 6, 7, 5, 6, 7};
  for (int64_t skip : {0, 1, 2, 100}) {
    SCOPED_TRACE(skip);
    RunResult r =
        runNode(OpType::kTfIdfVectorizer, tfidf(TfIdfVectorizerMode::kTF, 3, 3, skip, pool, {0, 0, 0}, {0, 1, 2}),
                {var(tensor(DataType::kINT64, {6}, x))});
    ASSERT_TRUE(r.status.isOk()) << r.status.toString();
    EXPECT_EQ(doubles(r.out), (std::vector<double>{2, 1, skip >= 1 ? 1.0 : 0.0}));
  }
  // max_gram_length past the row's length, and two n-grams sharing a column (their counts add).
  RunResult r =
      runNode(OpType::kTfIdfVectorizer, tfidf(TfIdfVectorizerMode::kTF, 1, 9, 0, {7, 5, 6, 7}, {0, 2}, {0, 0, 1}),
              {var(tensor(DataType::kINT64, {3}, std::vector<double>{5, 6, 7}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(doubles(r.out), (std::vector<double>{2, 1}));  // [7] + [5], then [6 7]
}

TEST(TfIdfVectorizerReference, EmptyRowsGiveZeros) {
  RunResult r = runNode(OpType::kTfIdfVectorizer, tfidf(TfIdfVectorizerMode::kIDF, 1, 2, 3, kPool, kCounts, kIndexes),
                        {var(tensor(DataType::kINT32, {2, 0}, std::vector<double>{}))});
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(dimsToString(r.shape), "[2,5]");
  EXPECT_EQ(doubles(r.out), std::vector<double>(10, 0.0));
}

TEST(TfIdfVectorizerReference, RefusesBadAttributesAndInputs) {
  using M = TfIdfVectorizerMode;
  HostTensor x = tensor(DataType::kINT64, {5}, kX);
  auto ok = [&](ir::Attributes const& a) { return runNode(OpType::kTfIdfVectorizer, a, {var(x)}).status.isOk(); };
  EXPECT_TRUE(ok(tfidf(M::kTF, 1, 2, 0, kPool, kCounts, kIndexes)));
  EXPECT_FALSE(ok(tfidf(static_cast<M>(3), 1, 2, 0, kPool, kCounts, kIndexes)));                // mode
  EXPECT_FALSE(ok(tfidf(M::kTF, 0, 2, 0, kPool, kCounts, kIndexes)));                           // min < 1
  EXPECT_FALSE(ok(tfidf(M::kTF, 2, 1, 0, kPool, kCounts, kIndexes)));                           // max < min
  EXPECT_FALSE(ok(tfidf(M::kTF, 1, 2, -1, kPool, kCounts, kIndexes)));                          // skip < 0
  EXPECT_FALSE(ok(tfidf(M::kTF, 1, 2, 0, kPool, {}, kIndexes)));                                // no counts
  EXPECT_FALSE(ok(tfidf(M::kTF, 1, 2, 0, kPool, {3, 2}, kIndexes)));                            // decreasing
  EXPECT_FALSE(ok(tfidf(M::kTF, 1, 2, 0, kPool, {0, 9}, kIndexes)));                            // past the pool
  EXPECT_FALSE(ok(tfidf(M::kTF, 1, 2, 0, kPool, {0, 1}, kIndexes)));                            // 7 values: not bigrams
  EXPECT_FALSE(ok(tfidf(M::kTF, 1, 2, 0, kPool, kCounts, {4, 0, 1, 2})));                       // too few indexes
  EXPECT_FALSE(ok(tfidf(M::kTF, 1, 2, 0, kPool, kCounts, {4, 0, 1, 2, -1})));                   // negative index
  EXPECT_FALSE(ok(tfidf(M::kTF, 1, 2, 0, kPool, kCounts, {4, 0, 1, 2, int64_t{1} << 40})));     // absurd
  EXPECT_FALSE(ok(tfidf(M::kTF, 1, 2, 0, {1, 1, 1, 2}, {0, 2}, {0, 1, 2})));                    // [1] twice
  EXPECT_FALSE(ok(tfidf(M::kIDF, 1, 2, 0, kPool, kCounts, kIndexes, {1, 2})));                  // weights count
  EXPECT_FALSE(ok(tfidf(M::kIDF, 1, 2, 0, kPool, kCounts, {0, 1, 2, 3, 9}, {1, 1, 1, 1, 1})));  // cols > weights
  // Duplicates outside [min, max] are never loaded, so they do not matter.
  EXPECT_TRUE(ok(tfidf(M::kTF, 2, 2, 0, {1, 1, 1, 2}, {0, 2}, {0, 1, 2})));
  ir::Attributes good = tfidf(M::kTF, 1, 2, 0, kPool, kCounts, kIndexes);
  EXPECT_FALSE(runNode(OpType::kTfIdfVectorizer, good, {var(tensor(DataType::kFLOAT, {5}, kX))}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kTfIdfVectorizer, good, {var(tensor(DataType::kINT64, {1, 1, 5}, kX))}).status.isOk());
  EXPECT_FALSE(runNode(OpType::kTfIdfVectorizer, good, {var(tensor(DataType::kINT64, {}, std::vector<double>{1}))})
                   .status.isOk());
}

}  // namespace
}  // namespace kiln
