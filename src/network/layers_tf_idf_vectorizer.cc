// The TfIdfVectorizer layer (Kiln extension, ONNX TfIdfVectorizer): its factory (network/layer_factories.h) and
// layer class. The attributes are checked as a whole by ir::readTfIdfVectorizer before any is written, so a
// layer never holds an inconsistent pool.
#include <cstring>

#include "ir/infer/tf_idf_vectorizer_util.h"
#include "network/layer_factories.h"
#include "network/layers.h"

namespace kiln::network {

namespace {

constexpr char const* kApi = "addTfIdfVectorizer";

// The values of kINT32/kINT64 Weights as int64; `why` is set when they are not such weights.
std::vector<int64_t> readIntWeights(Weights const& w, char const* what, std::string& why) {
  std::vector<int64_t> v;
  if (w.count < 0 || (w.count > 0 && !w.values)) {
    why = strCat(what, " has no values for a count of ", w.count);
    return v;
  }
  if (w.count > 0 && w.type != DataType::kINT32 && w.type != DataType::kINT64) {
    why = strCat(what, " must be kINT32 or kINT64, not ", dataTypeName(w.type));
    return v;
  }
  v.resize(static_cast<size_t>(w.count));
  for (int64_t i = 0; i < w.count; ++i) {
    if (w.type == DataType::kINT32) {
      int32_t x = 0;
      std::memcpy(&x, static_cast<char const*>(w.values) + i * 4, 4);
      v[static_cast<size_t>(i)] = x;
    } else {
      std::memcpy(&v[static_cast<size_t>(i)], static_cast<char const*>(w.values) + i * 8, 8);
    }
  }
  return v;
}

std::vector<double> readFloatWeights(Weights const& w, std::string& why) {
  std::vector<double> v;
  if (w.count < 0 || (w.count > 0 && !w.values)) {
    why = strCat("weights has no values for a count of ", w.count);
    return v;
  }
  if (w.count > 0 && w.type != DataType::kFLOAT) {
    why = strCat("weights must be kFLOAT, not ", dataTypeName(w.type));
    return v;
  }
  for (int64_t i = 0; i < w.count; ++i) {
    float x = 0;
    std::memcpy(&x, static_cast<char const*>(w.values) + i * 4, 4);
    v.push_back(x);
  }
  return v;
}

// Writes the pool attributes into `a`; false (with `why`) when the Weights cannot be read.
bool setPoolAttrs(ir::Attributes& a, Weights const& pool, Weights const& counts, Weights const& indexes,
                  std::string& why) {
  std::vector<int64_t> p = readIntWeights(pool, "pool", why);
  std::vector<int64_t> c = why.empty() ? readIntWeights(counts, "ngramCounts", why) : std::vector<int64_t>{};
  std::vector<int64_t> i = why.empty() ? readIntWeights(indexes, "ngramIndexes", why) : std::vector<int64_t>{};
  if (!why.empty()) return false;
  a.setInts("pool", std::move(p));
  a.setInts("ngram_counts", std::move(c));
  a.setInts("ngram_indexes", std::move(i));
  return true;
}

bool setWeightsAttr(ir::Attributes& a, Weights const& weights, std::string& why) {
  std::vector<double> w = readFloatWeights(weights, why);
  if (!why.empty()) return false;
  if (w.empty())
    a.erase("weights");
  else
    a.set("weights", std::move(w));
  return true;
}

class TfIdfVectorizerLayer final : public LayerBase<ITfIdfVectorizerLayer> {
 public:
  TfIdfVectorizerLayer(NetworkImpl& net, ir::Node* node) : LayerBase(net, LayerType::kTF_IDF_VECTORIZER, node) {}

  bool setMode(TfIdfVectorizerMode mode) noexcept override {
    ir::Attributes a = node_->attrs;
    a.setInt("mode", static_cast<int64_t>(mode));
    return commit("setMode", std::move(a));
  }
  TfIdfVectorizerMode getMode() const noexcept override {
    return static_cast<TfIdfVectorizerMode>(node_->attrs.getInt("mode"));
  }
  bool setGramLengths(int32_t minGramLength, int32_t maxGramLength) noexcept override {
    ir::Attributes a = node_->attrs;
    a.setInt("min_gram_length", minGramLength);
    a.setInt("max_gram_length", maxGramLength);
    return commit("setGramLengths", std::move(a));
  }
  int32_t getMinGramLength() const noexcept override {
    return static_cast<int32_t>(node_->attrs.getInt("min_gram_length", 1));
  }
  int32_t getMaxGramLength() const noexcept override {
    return static_cast<int32_t>(node_->attrs.getInt("max_gram_length", 1));
  }
  bool setMaxSkipCount(int32_t maxSkipCount) noexcept override {
    ir::Attributes a = node_->attrs;
    a.setInt("max_skip_count", maxSkipCount);
    return commit("setMaxSkipCount", std::move(a));
  }
  int32_t getMaxSkipCount() const noexcept override {
    return static_cast<int32_t>(node_->attrs.getInt("max_skip_count"));
  }
  bool setPool(Weights pool, Weights ngramCounts, Weights ngramIndexes) noexcept override {
    ir::Attributes a = node_->attrs;
    std::string why;
    if (!setPoolAttrs(a, pool, ngramCounts, ngramIndexes, why)) return fail("setPool", why);
    return commit("setPool", std::move(a));
  }
  int64_t getNbColumns() const noexcept override {
    Result<ir::TfIdfVectorizerSpec> s = ir::readTfIdfVectorizer(node_->attrs);
    return s.isOk() ? s->numColumns : 0;
  }
  bool setWeights(Weights weights) noexcept override {
    ir::Attributes a = node_->attrs;
    std::string why;
    if (!setWeightsAttr(a, weights, why)) return fail("setWeights", why);
    return commit("setWeights", std::move(a));
  }

 private:
  bool fail(char const* api, std::string const& why) {
    error(strCat(api, ": ", why));
    return false;
  }
  // Writes `a` into the node when its attributes are consistent as a whole.
  bool commit(char const* api, ir::Attributes a) {
    Result<ir::TfIdfVectorizerSpec> s = ir::readTfIdfVectorizer(a);
    if (!s.isOk()) return fail(api, s.status().message());
    node_->attrs = std::move(a);
    net_.markChanged(node_);
    return true;
  }
};

}  // namespace

ITfIdfVectorizerLayer* addTfIdfVectorizerLayer(NetworkImpl& net, ITensor& input, TfIdfVectorizerMode mode,
                                               int32_t minGramLength, int32_t maxGramLength, int32_t maxSkipCount,
                                               Weights pool, Weights ngramCounts, Weights ngramIndexes,
                                               Weights weights) {
  TensorImpl* x = net.own(input, kApi);
  if (!x) return nullptr;
  ir::Attributes a;
  a.setInt("mode", static_cast<int64_t>(mode));
  a.setInt("min_gram_length", minGramLength);
  a.setInt("max_gram_length", maxGramLength);
  a.setInt("max_skip_count", maxSkipCount);
  std::string why;
  if (setPoolAttrs(a, pool, ngramCounts, ngramIndexes, why) && setWeightsAttr(a, weights, why)) {
    Result<ir::TfIdfVectorizerSpec> s = ir::readTfIdfVectorizer(a);
    if (!s.isOk()) why = s.status().message();
  }
  if (!why.empty()) {
    net.reporter().fail(
        invalidArgument(kApi, ": layer '", net.nextLayerName(LayerType::kTF_IDF_VECTORIZER), "': ", why));
    return nullptr;
  }
  ir::Node* n = net.addLayerNode(ir::OpType::kTfIdfVectorizer, LayerType::kTF_IDF_VECTORIZER, {x->value()});
  n->attrs = std::move(a);
  return net.adoptLayer(std::make_unique<TfIdfVectorizerLayer>(net, n));
}

}  // namespace kiln::network
