// The n-gram pool of a TfIdfVectorizer node, read and checked from its attributes (shared by shape inference,
// the reference kernel and the network layer, so that all three accept and refuse the same attributes).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/status.h"
#include "kiln/kiln.h"

namespace kiln::ir {

class Attributes;

/// Largest output row a TfIdfVectorizer may have (max(ngram_indexes) + 1), so that a bad attribute cannot ask
/// for an absurd allocation.
constexpr int64_t kMaxTfIdfColumns = int64_t{1} << 28;

/// A TfIdfVectorizer's attributes, checked.
struct TfIdfVectorizerSpec {
  TfIdfVectorizerMode mode = TfIdfVectorizerMode::kTF;
  int64_t minGramLength = 1;
  int64_t maxGramLength = 1;
  int64_t maxSkipCount = 0;
  int64_t numColumns = 0;       ///< max(ngram_indexes) + 1: the extent of the output's last axis.
  std::vector<double> weights;  ///< Empty (all ones) or at least numColumns values; column j scales by weights[j].
  /// The n-grams of the pool whose length lies in [minGramLength, maxGramLength], each with its output column.
  std::map<std::vector<int64_t>, int64_t> grams;
};

/// Reads mode, min/max_gram_length, max_skip_count, ngram_counts, ngram_indexes, pool and weights (ops.def).
/// Fails, saying which attribute and why, on: an unknown mode, min_gram_length < 1, max < min, a negative skip
/// count, empty or decreasing ngram_counts or ones past the pool, a pool segment that is not a whole number of
/// k-grams, fewer ngram_indexes than n-grams, a negative index or one >= kMaxTfIdfColumns, weights whose count
/// differs from ngram_indexes' or does not cover every column, and an n-gram listed twice.
Result<TfIdfVectorizerSpec> readTfIdfVectorizer(Attributes const& attrs);

}  // namespace kiln::ir
