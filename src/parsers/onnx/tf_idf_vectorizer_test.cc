// Tests of the ONNX TfIdfVectorizer importer: tiny models parsed, built for the CPU reference backend and run;
// expected counts worked out by hand in the comments (not by the code under test). Plus the refusals: string
// pools and inputs, bad modes, missing attributes, float inputs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "onnx_test_util.h"

namespace {

using namespace kiln::onnx::test;  // NOLINT: test helpers
using kiln::Dims;

void attrFloats(::onnx::NodeProto& n, char const* name, std::vector<float> const& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOATS);
  for (float f : v) a->add_floats(f);
}

void attrStrings(::onnx::NodeProto& n, char const* name, std::vector<std::string> const& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRINGS);
  for (auto const& s : v) a->add_strings(s);
}

// Pool: 1-grams [1] [3], 2-grams [1 2] [2 1] [1 3]; columns 4, 0, 1, 2, 3.
::onnx::NodeProto& tfidf(ModelBuilder& m, std::string const& mode, int64_t skip, bool pool = true) {
  auto& n = m.node("TfIdfVectorizer", {"x"}, {"y"});
  attr(n, "mode", mode);
  attr(n, "min_gram_length", int64_t{1});
  attr(n, "max_gram_length", int64_t{2});
  attr(n, "max_skip_count", skip);
  attr(n, "ngram_counts", std::vector<int64_t>{0, 2});
  attr(n, "ngram_indexes", std::vector<int64_t>{4, 0, 1, 2, 3});
  if (pool) attr(n, "pool_int64s", std::vector<int64_t>{1, 3, 1, 2, 2, 1, 1, 3});
  return n;
}

// Rows [1 2 1 2 3] and [3 3 2 1 9]. Row 0: [1] x2, [3] x1; adjacent pairs (1 2) (2 1) (1 2) (2 3) -> [1 2] x2,
// [2 1] x1; pairs one apart (1 1) (2 2) (1 3) -> [1 3] x1. Row 1: [1] x1, [3] x2; adjacent (3 3) (3 2) (2 1)
// (1 9) -> [2 1] x1; one apart (3 2) (3 1) (2 9) -> none.
//   TF, skip 1:   row 0 = [1, 2, 1, 1, 2], row 1 = [2, 0, 1, 0, 1]
//   TF, skip 0:   row 0 = [1, 2, 1, 0, 2], row 1 = [2, 0, 1, 0, 1]
std::vector<int64_t> const kRows{1, 2, 1, 2, 3, 3, 3, 2, 1, 9};

TEST(OnnxTfIdfVectorizer, TfBatchWithAndWithoutSkips) {
  for (int64_t skip : {0, 1}) {
    SCOPED_TRACE(skip);
    ModelBuilder m(9);
    m.input("x", {2, 5}, ::onnx::TensorProto::INT64).output("y");
    tfidf(m, "TF", skip);
    auto outs = run(m.bytes(), {}, {{"x", {Dims{2, {2, 5}}, kRows}}});
    ASSERT_FALSE(outs.empty());
    EXPECT_EQ(outs["y"].dims.nbDims, 2);
    EXPECT_EQ(outs["y"].dims.d[1], 5);
    expectNear(outs["y"].v, {1, 2, 1, skip == 1 ? 1.0 : 0.0, 2, 2, 0, 1, 0, 1});
  }
}

TEST(OnnxTfIdfVectorizer, IdfAndTfidfWithWeights) {
  // Weights scale output columns: [0.5, 1.5, 2, 4, 8]. Counts as in TF, skip 1 (comment above).
  std::vector<float> w{0.5F, 1.5F, 2, 4, 8};
  {
    ModelBuilder m(17);
    m.input("x", {5}, ::onnx::TensorProto::INT64).output("y");
    attrFloats(tfidf(m, "IDF", 1), "weights", w);
    auto outs = run(m.bytes(), {}, {{"x", {Dims{1, {5}}, {1, 2, 1, 2, 3}}}});
    ASSERT_FALSE(outs.empty());
    expectNear(outs["y"].v, {0.5, 1.5, 2, 4, 8});  // every column seen at least once
  }
  {
    ModelBuilder m(17);
    m.input("x", {-1, 5}, ::onnx::TensorProto::INT64).output("y");
    attrFloats(tfidf(m, "TFIDF", 1), "weights", w);
    auto outs = run(m.bytes(), {}, {{"x", {Dims{2, {2, 5}}, kRows}}});
    ASSERT_FALSE(outs.empty());
    // row 0 counts [1, 2, 1, 1, 2], row 1 [2, 0, 1, 0, 1], times the weights.
    expectNear(outs["y"].v, {0.5, 3, 2, 4, 16, 1, 0, 2, 0, 8});
  }
  {
    ModelBuilder m(17);
    m.input("x", {2, 5}, ::onnx::TensorProto::INT64).output("y");
    tfidf(m, "IDF", 0);  // no weights: 1 where the count is > 0
    auto outs = run(m.bytes(), {}, {{"x", {Dims{2, {2, 5}}, kRows}}});
    ASSERT_FALSE(outs.empty());
    expectNear(outs["y"].v, {1, 1, 1, 0, 1, 1, 0, 1, 0, 1});
  }
}

TEST(OnnxTfIdfVectorizer, Refusals) {
  {  // A string pool.
    ModelBuilder m(9);
    m.input("x", {5}, ::onnx::TensorProto::INT64).output("y");
    attrStrings(tfidf(m, "TF", 0, false), "pool_strings", {"a", "b", "a", "b", "b", "a", "a", "b"});
    ParseResult r = parseOnly(m.bytes());
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.desc.find("STRING tensors are not supported"), std::string::npos) << r.desc;
    EXPECT_EQ(r.code, kiln::onnx::ErrorCode::kUNSUPPORTED_NODE_DATATYPE);
  }
  {  // A string input.
    ModelBuilder m(9);
    m.input("x", {5}, ::onnx::TensorProto::STRING).output("y");
    tfidf(m, "TF", 0);
    ParseResult r = parseOnly(m.bytes());
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.desc.find("STRING tensors are not supported"), std::string::npos) << r.desc;
  }
  {  // An unknown mode.
    ModelBuilder m(9);
    m.input("x", {5}, ::onnx::TensorProto::INT64).output("y");
    tfidf(m, "BM25", 0);
    ParseResult r = parseOnly(m.bytes());
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.desc.find("BM25"), std::string::npos) << r.desc;
  }
  {  // No pool at all.
    ModelBuilder m(9);
    m.input("x", {5}, ::onnx::TensorProto::INT64).output("y");
    tfidf(m, "TF", 0, false);
    ParseResult r = parseOnly(m.bytes());
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.desc.find("pool_int64s"), std::string::npos) << r.desc;
  }
  {  // A float input, and a rank-3 one.
    for (bool rank3 : {false, true}) {
      ModelBuilder m(9);
      if (rank3)
        m.input("x", {1, 1, 5}, ::onnx::TensorProto::INT64).output("y");
      else
        m.input("x", {5}).output("y");
      tfidf(m, "TF", 0);
      EXPECT_FALSE(parseOnly(m.bytes()).ok);
    }
  }
  {  // Inconsistent attributes: fewer ngram_indexes than n-grams (the network refuses the layer).
    ModelBuilder m(9);
    m.input("x", {5}, ::onnx::TensorProto::INT64).output("y");
    attr(tfidf(m, "TF", 0, false), "pool_int64s", std::vector<int64_t>{1, 3, 1, 2, 2, 1, 1, 3, 7, 7});
    EXPECT_FALSE(parseOnly(m.bytes()).ok);
  }
}

}  // namespace
