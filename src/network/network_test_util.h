// Shared fixture for the network tests: a network, a logger that counts errors and warnings, a test error
// recorder, and helpers to make Weights and compare dims.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/dims.h"
#include "network/layers.h"
#include "network/network.h"

namespace kiln::network::testing {

class Logger : public ILogger {
 public:
  void log(Severity severity, AsciiChar const* msg) noexcept override {
    if (severity == Severity::kERROR || severity == Severity::kINTERNAL_ERROR) {
      ++errors;
      last = msg;
      if (std::getenv("KILN_TEST_VERBOSE"))
        std::fprintf(stderr, "[error] %s\n", msg);
    } else if (severity == Severity::kWARNING) {
      ++warnings;
    }
  }
  int errors = 0;
  int warnings = 0;
  std::string last;
};

class Recorder : public IErrorRecorder {
 public:
  int32_t getNbErrors() const noexcept override { return static_cast<int32_t>(errors.size()); }
  ErrorCode getErrorCode(int32_t i) const noexcept override { return codes.at(static_cast<size_t>(i)); }
  ErrorDesc getErrorDesc(int32_t i) const noexcept override { return errors.at(static_cast<size_t>(i)).c_str(); }
  bool hasOverflowed() const noexcept override { return false; }
  void clear() noexcept override {
    errors.clear();
    codes.clear();
  }
  bool reportError(ErrorCode val, ErrorDesc desc) noexcept override {
    codes.push_back(val);
    errors.push_back(desc);
    return false;
  }
  RefCount incRefCount() noexcept override { return ++refs; }
  RefCount decRefCount() noexcept override { return --refs; }
  std::vector<std::string> errors;
  std::vector<ErrorCode> codes;
  int32_t refs = 0;
};

class NetworkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    net = createNetwork(nullptr, 0, &logger);
    ASSERT_NE(net, nullptr);
  }
  int errors() const { return logger.errors; }
  int warnings() const { return logger.warnings; }
  std::string const& lastError() const { return logger.last; }
  template <typename T>
  static Weights weights(std::vector<T> const& v) {
    DataType t = DataType::kFLOAT;
    if constexpr (std::is_same_v<T, int32_t>)
      t = DataType::kINT32;
    if constexpr (std::is_same_v<T, int64_t>)
      t = DataType::kINT64;
    return Weights{t, v.data(), static_cast<int64_t>(v.size())};
  }
  static void expectShape(Dims const& d, std::vector<int64_t> const& want) {
    EXPECT_EQ(dimsToString(d), dimsToString(makeDims(want)));
  }
  static void expectDims(ITensor const* t, std::vector<int64_t> const& want) {
    ASSERT_NE(t, nullptr);
    expectShape(t->getDimensions(), want);
  }
  static ir::Node const* nodeOf(ILayer const* l) {
    return static_cast<LayerState const*>(dynamic_cast<LayerState const*>(l))->node();
  }

  Logger logger;
  std::unique_ptr<NetworkImpl> net;
};

}  // namespace kiln::network::testing
