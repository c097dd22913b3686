// Helpers for the end-to-end tests, which use the public API only: a capturing logger and error recorder,
// building a network to plan bytes for the CPU target, loading a plan, and comparing against fp64 results.
#pragma once

#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "demo/networks.h"

namespace kiln_e2e {

/// Keeps every message; counts errors. Errors are echoed to stderr when `echoErrors` (the default), so that a
/// failing test shows why Kiln refused.
class CapturingLogger : public kiln::ILogger {
 public:
  explicit CapturingLogger(bool echoErrors = true) : echoErrors_(echoErrors) {}

  void log(Severity severity, kiln::AsciiChar const* msg) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    messages_.emplace_back(severity, msg == nullptr ? "" : msg);
    if (severity <= Severity::kERROR) {
      ++errors_;
      if (echoErrors_) {
        std::fprintf(stderr, "[kiln error] %s\n", msg == nullptr ? "(null)" : msg);
      }
    }
  }

  /// Number of kERROR and kINTERNAL_ERROR messages so far.
  int errorCount() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return errors_;
  }

  /// Number of kINTERNAL_ERROR messages so far (an API misuse must never produce one).
  int internalErrorCount() const {
    std::lock_guard<std::mutex> lock(mutex_);
    int n = 0;
    for (auto const& m : messages_) {
      n += m.first == Severity::kINTERNAL_ERROR ? 1 : 0;
    }
    return n;
  }

  /// The last error message, or "" if none.
  std::string lastError() const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = messages_.rbegin(); it != messages_.rend(); ++it) {
      if (it->first <= Severity::kERROR) {
        return it->second;
      }
    }
    return "";
  }

  void setEchoErrors(bool echo) {
    std::lock_guard<std::mutex> lock(mutex_);
    echoErrors_ = echo;
  }

 private:
  mutable std::mutex mutex_;
  bool echoErrors_;
  int errors_ = 0;
  std::vector<std::pair<Severity, std::string>> messages_;
};

/// A thread-safe IErrorRecorder that keeps every error and tracks its reference count.
class CapturingRecorder : public kiln::IErrorRecorder {
 public:
  int32_t getNbErrors() const noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int32_t>(errors_.size());
  }
  kiln::ErrorCode getErrorCode(int32_t i) const noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    return i >= 0 && i < static_cast<int32_t>(errors_.size()) ? errors_[static_cast<size_t>(i)].first
                                                              : kiln::ErrorCode::kUNSPECIFIED_ERROR;
  }
  ErrorDesc getErrorDesc(int32_t i) const noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    return i >= 0 && i < static_cast<int32_t>(errors_.size()) ? errors_[static_cast<size_t>(i)].second.c_str() : "";
  }
  bool hasOverflowed() const noexcept override { return false; }
  void clear() noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    errors_.clear();
  }
  bool reportError(kiln::ErrorCode code, ErrorDesc desc) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    errors_.emplace_back(code, desc == nullptr ? "" : desc);
    return false;
  }
  RefCount incRefCount() noexcept override { return ++refs_; }
  RefCount decRefCount() noexcept override { return --refs_; }

  /// Current reference count (what Kiln holds).
  RefCount refCount() const { return refs_.load(); }

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<kiln::ErrorCode, std::string>> errors_;
  std::atomic<RefCount> refs_{0};
};

/// Adds the network (and any optimization profile) to a fresh network/config; returns false on failure.
using DefineFn = std::function<bool(kiln::IBuilder&, kiln::INetworkDefinition&, kiln::IBuilderConfig&)>;

/// Options of the CPU oracle build the e2e tests use.
struct BuildOptions {
  int32_t optimizationLevel = 0;
  bool referenceOnly = true;  ///< Tactic sources = kREFERENCE only.
};

/// Builds `define`'s network for DeviceType::kCPU (kTF32 cleared) and returns the plan bytes; empty on failure
/// (with a gtest failure recorded).
inline std::vector<uint8_t> buildPlan(kiln::ILogger& logger, DefineFn const& define, BuildOptions options = {}) {
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  if (!builder) {
    ADD_FAILURE() << "createInferBuilder returned nullptr";
    return {};
  }
  std::unique_ptr<kiln::INetworkDefinition> network(builder->createNetworkV2(0));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  if (!network || !config) {
    ADD_FAILURE() << "createNetworkV2/createBuilderConfig returned nullptr";
    return {};
  }
  config->setDefaultDeviceType(kiln::DeviceType::kCPU);
  config->clearFlag(kiln::BuilderFlag::kTF32);
  config->setBuilderOptimizationLevel(options.optimizationLevel);
  if (options.referenceOnly) {
    EXPECT_TRUE(config->setTacticSources(1U << static_cast<uint32_t>(kiln::TacticSource::kREFERENCE)));
  }
  if (!define(*builder, *network, *config)) {
    ADD_FAILURE() << "could not define the network";
    return {};
  }
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*network, *config));
  if (!plan || plan->size() == 0) {
    ADD_FAILURE() << "buildSerializedNetwork failed";
    return {};
  }
  auto const* bytes = static_cast<uint8_t const*>(plan->data());
  return std::vector<uint8_t>(bytes, bytes + plan->size());
}

/// Deserializes `plan` with `runtime`; nullptr on failure.
inline std::unique_ptr<kiln::ICudaEngine> loadEngine(kiln::IRuntime& runtime, std::vector<uint8_t> const& plan) {
  return std::unique_ptr<kiln::ICudaEngine>(runtime.deserializeCudaEngine(plan.data(), plan.size()));
}

/// ||out - ref|| / ||ref|| (2-norms, in fp64); infinity if the sizes differ or ref is all zeros.
inline double normRelError(std::vector<float> const& out, std::vector<double> const& ref) {
  if (out.size() != ref.size()) {
    return INFINITY;
  }
  double diff = 0;
  double norm = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    double const d = static_cast<double>(out[i]) - ref[i];
    diff += d * d;
    norm += ref[i] * ref[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : INFINITY;
}

/// A float input named `name` of shape `dims`, uniform in [-1, 1) from `seed`.
inline kiln_samples::HostTensor randomInput(char const* name, kiln::Dims const& dims, uint64_t seed) {
  kiln_samples::Random rng(seed);
  kiln_samples::HostTensor t{name, dims, {}};
  t.data = rng.uniformVector(static_cast<size_t>(kiln_samples::volume(dims)), -1.0F, 1.0F);
  return t;
}

/// The output named `name` among `outputs`, or nullptr.
inline kiln_samples::HostTensor const* findTensor(std::vector<kiln_samples::HostTensor> const& outputs,
                                                  std::string const& name) {
  for (auto const& t : outputs) {
    if (t.name == name) {
      return &t;
    }
  }
  return nullptr;
}

/// True if `a` and `b` have the same rank and extents.
inline bool sameDims(kiln::Dims const& a, kiln::Dims const& b) {
  if (a.nbDims != b.nbDims) {
    return false;
  }
  for (int32_t i = 0; i < a.nbDims; ++i) {
    if (a.d[i] != b.d[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace kiln_e2e
