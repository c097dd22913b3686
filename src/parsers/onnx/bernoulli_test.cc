// Tests of the ONNX Bernoulli importer. Draws come from Kiln's own generator, so the checks are statistical or
// exact only where the outcome is certain: p = 0 gives 0, p = 1 gives 1, p = 0.3 over 10000 elements has a mean
// within 0.02 of 0.3 (about 4.4 standard deviations), and the dtype attribute (or p's type) sets the output type.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "onnx_test_util.h"

namespace {

using namespace kiln::onnx::test;  // NOLINT: test helpers
using kiln::Dims;
using TP = ::onnx::TensorProto;

double mean(std::vector<double> const& v) {
  double s = 0;
  for (double x : v) {
    s += x;
  }
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

TEST(OnnxBernoulli, CertainOutcomesAndMean) {
  constexpr int64_t kN = 10000;
  ModelBuilder m(15);
  m.input("p", {kN}).output("y");
  m.node("Bernoulli", {"p"}, {"y"});
  std::vector<float> p(kN);
  for (int64_t i = 0; i < kN; ++i) {
    // Every 100th element is certain (0 or 1); the rest have probability 0.3.
    p[static_cast<size_t>(i)] = i % 100 == 0 ? 0.0F : (i % 100 == 1 ? 1.0F : 0.3F);
  }
  auto outs = run(m.bytes(), {{"p", {dimsOf({kN}), p}}});
  ASSERT_FALSE(outs.empty());
  ASSERT_EQ(outs["y"].v.size(), static_cast<size_t>(kN));
  std::vector<double> uncertain;
  for (int64_t i = 0; i < kN; ++i) {
    double const y = outs["y"].v[static_cast<size_t>(i)];
    ASSERT_TRUE(y == 0.0 || y == 1.0) << "at " << i << ": " << y;
    if (i % 100 == 0) {
      EXPECT_EQ(y, 0.0) << "p = 0 at " << i;
    } else if (i % 100 == 1) {
      EXPECT_EQ(y, 1.0) << "p = 1 at " << i;
    } else {
      uncertain.push_back(y);
    }
  }
  EXPECT_NEAR(mean(uncertain), 0.3, 0.02);
}

TEST(OnnxBernoulli, DtypeAttributeAndDoubleInput) {
  // p fed as float, cast to double: default dtype is double; dtype INT32 and BOOL are honoured.
  ModelBuilder m(15);
  m.input("p", {2, 500}).output("yd", {}, TP::DOUBLE).output("yi", {}, TP::INT32).output("yb", {}, TP::BOOL);
  attr(m.node("Cast", {"p"}, {"pd"}), "to", int64_t{TP::DOUBLE});
  m.node("Bernoulli", {"pd"}, {"yd"});
  auto& bi = m.node("Bernoulli", {"pd"}, {"yi"});
  attr(bi, "dtype", int64_t{TP::INT32});
  attr(bi, "seed", 3.0F);
  attr(m.node("Bernoulli", {"p"}, {"yb"}), "dtype", int64_t{TP::BOOL});
  std::vector<float> p(1000);
  for (size_t i = 0; i < p.size(); ++i) {
    p[i] = i < 500 ? 1.0F : 0.0F;  // row 0 certain 1, row 1 certain 0
  }
  // The parsed network's output types.
  {
    TestLogger logger;
    std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
    std::unique_ptr<kiln::INetworkDefinition> network(builder->createNetworkV2(0));
    std::unique_ptr<kiln::onnx::IParser> parser(kiln::onnx::createParser(*network, logger));
    std::string const bytes = m.bytes();
    ASSERT_TRUE(parser->parse(bytes.data(), bytes.size()));
    ASSERT_EQ(network->getNbOutputs(), 3);
    EXPECT_EQ(network->getOutput(0)->getType(), kiln::DataType::kFLOAT64);
    EXPECT_EQ(network->getOutput(1)->getType(), kiln::DataType::kINT32);
    EXPECT_EQ(network->getOutput(2)->getType(), kiln::DataType::kBOOL);
  }
  auto outs = run(m.bytes(), {{"p", {dimsOf({2, 500}), p}}});
  ASSERT_FALSE(outs.empty());
  for (char const* name : {"yd", "yi", "yb"}) {
    Out const& o = outs[name];
    ASSERT_EQ(o.dims.nbDims, 2) << name;
    ASSERT_EQ(o.v.size(), 1000U) << name;
    for (size_t i = 0; i < o.v.size(); ++i) {
      ASSERT_EQ(o.v[i], i < 500 ? 1.0 : 0.0) << name << " at " << i;
    }
  }
}

TEST(OnnxBernoulli, IntegerInputIsRefused) {
  ModelBuilder m(15);
  m.input("p", {4}, TP::INT32).output("y");
  m.node("Bernoulli", {"p"}, {"y"});
  ParseResult r = parseOnly(m.bytes());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.desc.find("floating-point"), std::string::npos) << r.desc;
}

}  // namespace
