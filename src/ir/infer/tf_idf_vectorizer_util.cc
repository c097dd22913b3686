// Reading and checking a TfIdfVectorizer node's attributes (see tf_idf_vectorizer_util.h).
#include "ir/infer/tf_idf_vectorizer_util.h"

#include <algorithm>

#include "ir/attributes.h"

namespace kiln::ir {

Result<TfIdfVectorizerSpec> readTfIdfVectorizer(Attributes const& attrs) {
  TfIdfVectorizerSpec s;
  int64_t mode = attrs.getInt("mode", 0);
  if (mode < 0 || mode >= EnumMax<TfIdfVectorizerMode>()) return invalidArgument("unknown mode ", mode);
  s.mode = static_cast<TfIdfVectorizerMode>(mode);
  s.minGramLength = attrs.getInt("min_gram_length", 1);
  s.maxGramLength = attrs.getInt("max_gram_length", 1);
  s.maxSkipCount = attrs.getInt("max_skip_count", 0);
  if (s.minGramLength < 1) return invalidArgument("min_gram_length must be >= 1, not ", s.minGramLength);
  if (s.maxGramLength < s.minGramLength)
    return invalidArgument("max_gram_length ", s.maxGramLength, " is below min_gram_length ", s.minGramLength);
  if (s.maxSkipCount < 0) return invalidArgument("max_skip_count must be >= 0, not ", s.maxSkipCount);

  std::vector<int64_t> pool = attrs.getInts("pool");
  std::vector<int64_t> counts = attrs.getInts("ngram_counts");
  std::vector<int64_t> indexes = attrs.getInts("ngram_indexes");
  auto poolSize = static_cast<int64_t>(pool.size());
  if (counts.empty()) return invalidArgument("ngram_counts is empty");
  if (indexes.empty()) return invalidArgument("ngram_indexes is empty");
  for (int64_t idx : indexes) {
    if (idx < 0 || idx >= kMaxTfIdfColumns)
      return invalidArgument("ngram_indexes holds ", idx, ", outside [0, ", kMaxTfIdfColumns, ")");
    s.numColumns = std::max(s.numColumns, idx + 1);
  }
  // Pool segment k-1 ([counts[k-1], counts[k]) or to the pool's end) holds the k-grams; n-grams are numbered
  // across all segments in pool order, and n-gram i lands in output column ngram_indexes[i].
  size_t gramId = 0;
  for (size_t k = 1; k <= counts.size(); ++k) {
    int64_t begin = counts[k - 1];
    int64_t end = k < counts.size() ? counts[k] : poolSize;
    if (begin < 0 || begin > end || end > poolSize)
      return invalidArgument("ngram_counts ", begin, " .. ", end, " (", k, "-grams) do not lie in order within the ",
                             poolSize, " pool values");
    auto len = static_cast<int64_t>(k);
    if ((end - begin) % len != 0)
      return invalidArgument("the ", end - begin, " pool values of the ", k, "-grams are not a whole number of ", k,
                             "-grams");
    for (int64_t at = begin; at < end; at += len, ++gramId) {
      if (gramId >= indexes.size())
        return invalidArgument("ngram_indexes has ", indexes.size(), " entries, fewer than the pool's n-grams");
      if (len < s.minGramLength || len > s.maxGramLength) continue;
      std::vector<int64_t> gram(pool.begin() + at, pool.begin() + at + len);
      if (!s.grams.emplace(std::move(gram), indexes[gramId]).second)
        return invalidArgument("the pool lists ", k, "-gram ", gramId, " twice");
    }
  }
  s.weights = attrs.getFloats("weights");
  if (!s.weights.empty()) {
    if (s.weights.size() != indexes.size())
      return invalidArgument("weights has ", s.weights.size(), " values for ", indexes.size(), " ngram_indexes");
    if (static_cast<int64_t>(s.weights.size()) < s.numColumns)
      return invalidArgument("weights has ", s.weights.size(), " values, fewer than the ", s.numColumns,
                             " output columns (weights[j] scales column j)");
  }
  return s;
}

}  // namespace kiln::ir
