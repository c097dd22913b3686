// ONNX TfIdfVectorizer (opset 9): n-gram counts of an int32/int64 input [C] or [N, C] through Kiln's
// ITfIdfVectorizerLayer extension. pool_strings (string n-grams over STRING tensors) is refused.
#include <string>
#include <vector>

#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Weights int64Weights(std::vector<int64_t> const& v) {
  return Weights{DataType::kINT64, v.empty() ? nullptr : v.data(), static_cast<int64_t>(v.size())};
}

Status importTfIdfVectorizer(ImportContext& ctx, Node const& node) {
  if (findAttr(node, "pool_strings") != nullptr)
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node,
                                    "STRING tensors are not supported (pool_strings); only pool_int64s over int32/"
                                    "int64 inputs");
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  DataType const t = x->getType();
  if (t != DataType::kINT32 && t != DataType::kINT64)
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "input must be int32 or int64");
  int32_t const rank = x->getDimensions().nbDims;
  if (rank != 1 && rank != 2)
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input must be [C] or [N, C], not of rank ", rank);
  KO_ASSIGN_OR_RETURN(std::string modeName, attrString(node, "mode", ""));
  TfIdfVectorizerMode mode = TfIdfVectorizerMode::kTF;
  if (modeName == "TF") {
    mode = TfIdfVectorizerMode::kTF;
  } else if (modeName == "IDF") {
    mode = TfIdfVectorizerMode::kIDF;
  } else if (modeName == "TFIDF") {
    mode = TfIdfVectorizerMode::kTFIDF;
  } else {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "mode must be TF, IDF or TFIDF, not '", modeName,
                                    "'");
  }
  for (char const* required :
       {"min_gram_length", "max_gram_length", "max_skip_count", "ngram_counts", "ngram_indexes", "pool_int64s"}) {
    if (findAttr(node, required) == nullptr)
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "attribute '", required, "' is missing");
  }
  KO_ASSIGN_OR_RETURN(int64_t minGram, attrInt(node, "min_gram_length", 1));
  KO_ASSIGN_OR_RETURN(int64_t maxGram, attrInt(node, "max_gram_length", 1));
  KO_ASSIGN_OR_RETURN(int64_t maxSkip, attrInt(node, "max_skip_count", 0));
  constexpr int64_t kIntMax = 0x7fffffff;
  if (minGram < 1 || minGram > kIntMax || maxGram < 1 || maxGram > kIntMax || maxSkip < 0 || maxSkip > kIntMax)
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "min_gram_length ", minGram, ", max_gram_length ",
                                    maxGram, " or max_skip_count ", maxSkip, " is out of range");
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> counts, attrInts(node, "ngram_counts", {}));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> indexes, attrInts(node, "ngram_indexes", {}));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> pool, attrInts(node, "pool_int64s", {}));
  KO_ASSIGN_OR_RETURN(std::vector<float> weights, attrFloats(node, "weights"));
  Weights w{DataType::kFLOAT, weights.empty() ? nullptr : weights.data(), static_cast<int64_t>(weights.size())};
  // The layer copies every list, so the vectors may go when this returns.
  ITfIdfVectorizerLayer* l = ctx.network().addTfIdfVectorizer(
      *x, mode, static_cast<int32_t>(minGram), static_cast<int32_t>(maxGram), static_cast<int32_t>(maxSkip),
      int64Weights(pool), int64Weights(counts), int64Weights(indexes), w);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "tf_idf_vectorizer"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "TfIdfVectorizer", importTfIdfVectorizer);

}  // namespace
}  // namespace kiln::onnx
