// Reference kernel of TfIdfVectorizer: per row, count the pool's n-grams (items d apart, 1 <= d <= skip + 1;
// 1-grams once), add each count to its output column, then weigh the columns by the mode. Counts are exact
// integers; weighing is done in double and rounded to float32 once.
#include <algorithm>
#include <memory>

#include "backends/reference/reference_util.h"
#include "ir/infer/tf_idf_vectorizer_util.h"

namespace kiln::backends::reference {
namespace {

using Spec = ir::TfIdfVectorizerSpec;

// Adds 1 to counts[column] for every pool n-gram of the row `x[begin, begin + len)`.
void countRow(Spec const& s, TensorView const& x, int64_t begin, int64_t len, std::vector<int64_t>& counts) {
  auto at = [&](int64_t i) { return loadAsInt(x, begin + i); };
  std::vector<int64_t> gram;
  auto hit = [&]() {
    auto it = s.grams.find(gram);
    if (it != s.grams.end()) ++counts[static_cast<size_t>(it->second)];
  };
  if (s.minGramLength == 1) {
    for (int64_t i = 0; i < len; ++i) {
      gram.assign(1, at(i));
      hit();
    }
  }
  // Longer n-grams, for every distance d between their items; a unigram is the same for every d, so d only
  // matters from length 2 on. No n-gram is longer than the row, nor are items further apart than it.
  int64_t first = std::max<int64_t>(s.minGramLength, 2);
  int64_t last = std::min(s.maxGramLength, len);
  int64_t maxDistance = std::min(s.maxSkipCount + 1, std::max<int64_t>(len, 1));
  if (first > last) return;
  for (int64_t d = 1; d <= maxDistance; ++d) {
    for (int64_t i = 0; i + d * (first - 1) < len; ++i) {
      gram.clear();
      for (int64_t k = 1; k <= last && i + (k - 1) * d < len; ++k) {
        gram.push_back(at(i + (k - 1) * d));
        if (k >= first) hit();
      }
    }
  }
}

Status runTfIdfVectorizer(LaunchContext const& ctx, Spec const& s, std::string const& what) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& y = ctx.outputs[0];
  int32_t rank = x.shape.nbDims;
  if (rank != 1 && rank != 2) return invalidArgument(what, ": input must be [C] or [N, C], not of rank ", rank);
  int64_t rows = rank == 2 ? x.shape.d[0] : 1;
  int64_t len = x.shape.d[rank - 1];
  if (y.dtype != DataType::kFLOAT || y.shape.nbDims != rank || y.shape.d[rank - 1] != s.numColumns ||
      y.count() != rows * s.numColumns)
    return invalidArgument(what, ": output ", dimsToString(y.shape), " does not fit ", rows, " rows of ", s.numColumns,
                           " columns");
  auto cols = static_cast<size_t>(s.numColumns);
  std::vector<int64_t> counts(cols);
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(counts.begin(), counts.end(), 0);
    countRow(s, x, r * len, len, counts);
    for (size_t j = 0; j < cols; ++j) {
      double w = s.weights.empty() ? 1.0 : s.weights[j];
      auto c = static_cast<double>(counts[j]);
      double v = 0;
      switch (s.mode) {
        case TfIdfVectorizerMode::kTF:
          v = c;
          break;
        case TfIdfVectorizerMode::kIDF:
          v = counts[j] > 0 ? w : 0.0;
          break;
        case TfIdfVectorizerMode::kTFIDF:
          v = c * w;
          break;
      }
      storeFromDouble(y, r * s.numColumns + static_cast<int64_t>(j), v);
    }
  }
  return Status::ok();
}

Tactic tfIdfVectorizerTactic() {
  return makeTactic(
      "tf_idf_vectorizer_reference", ir::OpType::kTfIdfVectorizer,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        std::string what = node.describe();
        Result<Spec> spec = ir::readTfIdfVectorizer(node.attrs);
        if (!spec.isOk()) return invalidArgument(what, ": ", spec.status().message());
        auto s = std::make_shared<Spec const>(std::move(spec).value());
        return makeKernel([s, what](LaunchContext const& ctx) { return runTfIdfVectorizer(ctx, *s, what); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const&) {
        return in.size() == 1 && (in[0].dtype == DataType::kINT32 || in[0].dtype == DataType::kINT64);
      });
}

KILN_REGISTER_TACTIC(tfIdfVectorizerTactic);

}  // namespace
}  // namespace kiln::backends::reference
