// Shared pieces of the GPU reliability tests: device presence, the CUDA backend's fault hook and resource counts,
// GPU builds that report a refusal instead of failing the test, device copies of a context's I/O (test-owned
// cudaMalloc memory, outside Kiln's accounting), and output comparison.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/device.h"
#include "core/dtype.h"
#include "e2e/e2e_util.h"

namespace kiln_e2e::gpu {

inline bool gpuPresent() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define KILN_REQUIRE_GPU()                                                \
  do {                                                                    \
    if (!::kiln_e2e::gpu::gpuPresent()) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

/// The process's CUDA backend (loaded on first use), or null with the reason in *why.
inline kiln::backends::DeviceBackend* cudaBackend(std::string* why = nullptr) {
  auto b = kiln::backends::gpuBackend();
  if (!b) {
    if (why) *why = b.status().message();
    return nullptr;
  }
  return *b;
}

inline bool operator==(kiln::backends::DeviceResourceCounts const& a, kiln::backends::DeviceResourceCounts const& b) {
  return a.allocations == b.allocations && a.bytes == b.bytes && a.streams == b.streams && a.events == b.events &&
         a.graphs == b.graphs;
}

inline std::string describe(kiln::backends::DeviceResourceCounts const& c) {
  return std::to_string(c.allocations) + " allocations (" + std::to_string(c.bytes) + " bytes), " +
         std::to_string(c.streams) + " streams, " + std::to_string(c.events) + " events, " + std::to_string(c.graphs) +
         " graphs";
}

struct GpuBuild {
  int32_t level = 0;
  bool fp16 = false;
  int32_t timingIterations = 0;  // IBuilderConfig::setAvgTimingIterations; 0: the default
};

/// Builds for DeviceType::kGPU (TF32 off); empty on failure, with the reason logged (no gtest failure: the fault
/// injection test expects refusals).
inline std::vector<uint8_t> tryBuildGpu(kiln::ILogger& logger, DefineFn const& define, GpuBuild const& o) {
  std::unique_ptr<kiln::IBuilder> builder(kiln::createInferBuilder(logger));
  if (!builder) return {};
  std::unique_ptr<kiln::INetworkDefinition> network(builder->createNetworkV2(0));
  std::unique_ptr<kiln::IBuilderConfig> config(builder->createBuilderConfig());
  if (!network || !config) return {};
  config->setDefaultDeviceType(kiln::DeviceType::kGPU);
  config->clearFlag(kiln::BuilderFlag::kTF32);
  if (o.fp16) config->setFlag(kiln::BuilderFlag::kFP16);
  config->setBuilderOptimizationLevel(o.level);
  if (o.timingIterations > 0) config->setAvgTimingIterations(o.timingIterations);
  if (!define(*builder, *network, *config)) return {};
  std::unique_ptr<kiln::IHostMemory> plan(builder->buildSerializedNetwork(*network, *config));
  if (!plan) return {};
  auto const* b = static_cast<uint8_t const*>(plan->data());
  return {b, b + plan->size()};
}

/// One output as bytes, with its type and shape.
struct OutputBytes {
  std::string name;
  kiln::DataType type = kiln::DataType::kFLOAT;
  kiln::Dims dims{};
  std::vector<uint8_t> data;
};

/// Device memory for outputs of data-dependent shape (cudaMalloc, grown on demand).
class DeviceOutputAllocator : public kiln::IOutputAllocator {
 public:
  ~DeviceOutputAllocator() override {
    if (ptr_) cudaFree(ptr_);
  }
  void* reallocateOutputAsync(char const*, void* current, uint64_t size, uint64_t, cudaStream_t) override {
    if (ptr_ && size <= size_) return ptr_;
    if (ptr_) cudaFree(ptr_);
    size_ = std::max<uint64_t>(size, 1);
    if (cudaMalloc(&ptr_, size_) != cudaSuccess) {
      ptr_ = nullptr;
      size_ = 0;
    }
    return ptr_;
  }
  void notifyShape(char const*, kiln::Dims const& dims) noexcept override { dims_ = dims; }
  void* data() const { return ptr_; }
  kiln::Dims const& dims() const { return dims_; }

 private:
  void* ptr_ = nullptr;
  uint64_t size_ = 0;
  kiln::Dims dims_{};
};

inline size_t elementSize(kiln::DataType t) { return kiln::dataTypeSize(t); }

/// A context's I/O in device memory: inputs uploaded, outputs poisoned (0xff: NaN) at bind(); later inputs of the
/// same shapes are uploaded and outputs fetched on a stream. Data-dependent outputs get a DeviceOutputAllocator.
class DeviceIO {
 public:
  DeviceIO() = default;
  DeviceIO(DeviceIO const&) = delete;
  DeviceIO& operator=(DeviceIO const&) = delete;
  ~DeviceIO() {
    for (auto& [n, p] : ptrs_) cudaFree(p);
  }

  bool bind(kiln::IExecutionContext& ctx, std::vector<kiln_samples::HostTensor> const& inputs) {
    kiln::ICudaEngine const& e = ctx.getEngine();
    for (auto const& in : inputs) {
      if (!ctx.setInputShape(in.name.c_str(), in.dims)) return false;
      void* p = alloc(in.name, in.data.size() * sizeof(float));
      if (!p || cudaMemcpy(p, in.data.data(), in.data.size() * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess)
        return false;
      if (!ctx.setTensorAddress(in.name.c_str(), p)) return false;
    }
    outputs_.clear();
    for (int32_t i = 0; i < e.getNbIOTensors(); ++i) {
      char const* name = e.getIOTensorName(i);
      if (e.getTensorIOMode(name) != kiln::TensorIOMode::kOUTPUT) continue;
      OutputBytes out{name, e.getTensorDataType(name), ctx.getTensorShape(name), {}};
      bool dynamic = out.dims.nbDims < 0;
      for (int32_t d = 0; d < out.dims.nbDims; ++d) dynamic = dynamic || out.dims.d[d] < 0;
      if (dynamic) {
        auto& a = allocators_[name];
        a = std::make_unique<DeviceOutputAllocator>();
        if (!ctx.setOutputAllocator(name, a.get())) return false;
      } else {
        size_t bytes =
            static_cast<size_t>(std::max<int64_t>(kiln_samples::volume(out.dims), 1)) * elementSize(out.type);
        out.data.resize(bytes);
        void* p = alloc(name, bytes);
        if (!p || cudaMemset(p, 0xff, bytes) != cudaSuccess) return false;
        if (!ctx.setTensorAddress(name, p)) return false;
      }
      outputs_.push_back(std::move(out));
    }
    // The copies and memsets above go to the legacy stream; the runs that follow may use non-blocking streams.
    return cudaDeviceSynchronize() == cudaSuccess;
  }

  /// Queues new input values (the shapes bind() set) on `s`; the host data must live until `s` has run them.
  bool upload(std::vector<kiln_samples::HostTensor> const& inputs, cudaStream_t s) {
    for (auto const& in : inputs) {
      auto it = ptrs_.find(in.name);
      if (it == ptrs_.end() || cudaMemcpyAsync(it->second, in.data.data(), in.data.size() * sizeof(float),
                                               cudaMemcpyHostToDevice, s) != cudaSuccess)
        return false;
    }
    return true;
  }

  /// Queues the fixed-shape outputs' copies to the host on `s`; data-dependent ones are read (synchronously)
  /// from their allocators, so call after the run has finished for those.
  bool download(cudaStream_t s) {
    for (auto& o : outputs_) {
      auto a = allocators_.find(o.name);
      if (a != allocators_.end()) {
        if (cudaStreamSynchronize(s) != cudaSuccess) return false;
        o.dims = a->second->dims();
        o.data.assign(static_cast<size_t>(kiln_samples::volume(o.dims)) * elementSize(o.type), 0);
        if (!o.data.empty() && (!a->second->data() || cudaMemcpy(o.data.data(), a->second->data(), o.data.size(),
                                                                 cudaMemcpyDeviceToHost) != cudaSuccess))
          return false;
        continue;
      }
      if (cudaMemcpyAsync(o.data.data(), ptrs_[o.name], o.data.size(), cudaMemcpyDeviceToHost, s) != cudaSuccess)
        return false;
    }
    return true;
  }

  std::vector<OutputBytes> const& outputs() const { return outputs_; }

 private:
  void* alloc(std::string const& name, size_t bytes) {
    void*& p = ptrs_[name];
    if (p) cudaFree(p);
    p = nullptr;
    if (cudaMalloc(&p, std::max<size_t>(bytes, 4)) != cudaSuccess) p = nullptr;
    return p;
  }
  std::map<std::string, void*> ptrs_;
  std::map<std::string, std::unique_ptr<DeviceOutputAllocator>> allocators_;
  std::vector<OutputBytes> outputs_;
};

/// Outputs of a CPU reference run, as bytes (float outputs as fp32; the reference engine's integer outputs as
/// they are).
inline std::vector<OutputBytes> toBytes(std::vector<kiln_samples::HostTensor> const& outs) {
  std::vector<OutputBytes> r;
  for (auto const& o : outs) {
    OutputBytes b{o.name, kiln::DataType::kFLOAT, o.dims, {}};
    auto const* p = reinterpret_cast<uint8_t const*>(o.data.data());
    b.data.assign(p, p + static_cast<size_t>(kiln_samples::volume(o.dims)) * sizeof(float));
    r.push_back(std::move(b));
  }
  return r;
}

/// The values of an int32 or int64 output (empty for other types).
inline std::vector<int64_t> intValues(OutputBytes const& o) {
  std::vector<int64_t> v;
  if (o.type == kiln::DataType::kINT64) {
    v.resize(o.data.size() / 8);
    std::memcpy(v.data(), o.data.data(), v.size() * 8);
  } else if (o.type == kiln::DataType::kINT32) {
    std::vector<int32_t> w(o.data.size() / 4);
    std::memcpy(w.data(), o.data.data(), w.size() * 4);
    v.assign(w.begin(), w.end());
  }
  return v;
}

/// Largest norm-relative difference of the float outputs (0 when bit-identical), infinity when names or sizes
/// differ or an integer output differs at all (int32 and int64 compare by value).
inline double difference(std::vector<OutputBytes> const& got, std::vector<OutputBytes> const& want) {
  if (got.size() != want.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    OutputBytes const& g = got[i];
    OutputBytes const& w = want[i];
    if (g.name != w.name) return INFINITY;
    bool const integers = (g.type == kiln::DataType::kINT32 || g.type == kiln::DataType::kINT64) &&
                          (w.type == kiln::DataType::kINT32 || w.type == kiln::DataType::kINT64);
    if (integers) {  // index outputs: equal values whatever the width
      if (intValues(g) != intValues(w)) return INFINITY;
      continue;
    }
    if (g.data.size() != w.data.size()) return INFINITY;
    if (g.data == w.data) continue;
    if (g.type != kiln::DataType::kFLOAT || w.type != kiln::DataType::kFLOAT) return INFINITY;
    std::vector<float> gf(g.data.size() / 4);
    std::vector<float> wf(w.data.size() / 4);
    std::memcpy(gf.data(), g.data.data(), g.data.size());
    std::memcpy(wf.data(), w.data.data(), w.data.size());
    std::vector<double> wd(wf.begin(), wf.end());
    double e = normRelError(gf, wd);
    if (std::isnan(e)) return INFINITY;
    worst = std::max(worst, e);
  }
  return worst;
}

/// Runs `fn` on a fresh thread (fresh per-thread cuBLASLt/cuDNN handles, so every run passes the same fault
/// points) and waits; returns whether the thread's CUDA error state was clean afterwards.
template <typename Fn>
bool onFreshThread(Fn&& fn) {
  bool clean = true;
  std::thread t([&] {
    fn();
    clean = cudaGetLastError() == cudaSuccess;
  });
  t.join();
  return clean;
}

}  // namespace kiln_e2e::gpu
