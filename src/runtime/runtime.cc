// IRuntime implementation, createInferRuntime_INTERNAL and getInferLibVersion.
#include <limits>
#include <new>

#include "core/thread_pool.h"
#include "kiln/kiln_version.h"
#include "runtime/engine_core.h"

namespace kiln {
namespace runtime {
namespace {

class RuntimeImpl final : public IRuntime {
 public:
  explicit RuntimeImpl(ILogger* logger)
      : reporter_(logger), budget_(std::make_shared<MemoryBudget>()), maxThreads_(ThreadPool::hardwareThreads()) {}

  ICudaEngine* deserializeCudaEngine(void const* blob, std::size_t size) noexcept override {
    auto core = loadEngine(blob, size, reporter_, budget_, maxThreads_, allocator_);
    if (!core) {
      reporter_.fail(core.status().withContext("deserializeCudaEngine"));
      return nullptr;
    }
    return new (std::nothrow) EngineImpl(std::move(core).value(), true);
  }
  void setGpuAllocator(IGpuAllocator* allocator) noexcept override { allocator_ = allocator; }
  void setErrorRecorder(IErrorRecorder* recorder) noexcept override { reporter_.setRecorder(recorder); }
  IErrorRecorder* getErrorRecorder() const noexcept override { return reporter_.recorder(); }
  ILogger* getLogger() const noexcept override { return reporter_.logger(); }
  bool setMaxThreads(int32_t maxThreads) noexcept override {
    if (maxThreads < 1) return reporter_.fail(invalidArgument("setMaxThreads: must be >= 1, got ", maxThreads));
    maxThreads_ = maxThreads;
    return true;
  }
  int32_t getMaxThreads() const noexcept override { return maxThreads_; }
  bool setMemoryLimit(int64_t bytes) noexcept override {
    if (bytes < 0) return reporter_.fail(invalidArgument("setMemoryLimit: must be >= 0 (0: no cap), got ", bytes));
    budget_->setLimit(bytes == 0 ? std::numeric_limits<int64_t>::max() : bytes);
    return true;
  }
  int64_t getMemoryLimit() const noexcept override {
    int64_t l = budget_->limit();
    return l == std::numeric_limits<int64_t>::max() ? 0 : l;
  }

 private:
  Reporter reporter_;
  std::shared_ptr<MemoryBudget> budget_;
  int32_t maxThreads_;
  IGpuAllocator* allocator_ = nullptr;
};

}  // namespace
}  // namespace runtime

extern "C" KILN_API int32_t getInferLibVersion() noexcept { return KILN_VERSION; }

extern "C" KILN_API void* createInferRuntime_INTERNAL(void* logger, int32_t version) noexcept {
  auto* l = static_cast<ILogger*>(logger);
  if (version / 100 != KILN_VERSION / 100) {
    if (l)
      l->log(ILogger::Severity::kERROR,
             strCat("createInferRuntime: header version ", version, " does not match library version ", KILN_VERSION).c_str());
    return nullptr;
  }
  return static_cast<IRuntime*>(new (std::nothrow) runtime::RuntimeImpl(l));
}

}  // namespace kiln
