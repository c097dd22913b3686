// Host memory: aligned buffers whose every allocation goes through one hook that checks a memory budget
// (IBuilder/IRuntime::setMemoryLimit) and lets tests make the k-th allocation fail.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/status.h"

namespace kiln {

/// A byte budget shared by the allocations of one builder or runtime. Thread-safe.
class MemoryBudget {
 public:
  explicit MemoryBudget(int64_t limit = defaultLimit()) : limit_(limit) {}
  /// Physical memory of the machine (the default limit).
  static int64_t defaultLimit();
  void setLimit(int64_t limit) { limit_.store(limit); }
  int64_t limit() const { return limit_.load(); }
  int64_t used() const { return used_.load(); }
  /// Reserves `bytes` or says why not (what = what the memory is for).
  Status reserve(size_t bytes, char const* what);
  void release(size_t bytes) { used_.fetch_sub(static_cast<int64_t>(bytes)); }

 private:
  std::atomic<int64_t> limit_;
  std::atomic<int64_t> used_{0};
};

/// Test hook: the k-th host allocation from now (1-based) fails; 0 turns it off. Returns the old setting.
int64_t setHostAllocFailAt(int64_t k);
/// Number of host allocations made through the hook so far (for tests that walk every allocation).
int64_t hostAllocCount();

/// An owned, 64-byte aligned, zero-initialized host buffer charged to a budget.
class HostBuffer {
 public:
  HostBuffer() = default;
  ~HostBuffer();
  HostBuffer(HostBuffer&& o) noexcept;
  HostBuffer& operator=(HostBuffer&& o) noexcept;
  HostBuffer(HostBuffer const&) = delete;
  HostBuffer& operator=(HostBuffer const&) = delete;

  /// Allocates `bytes` (0 is allowed and gives a non-null pointer); fails on the budget, the fault hook or
  /// the system allocator, with a message naming `what`.
  static Result<HostBuffer> allocate(size_t bytes, char const* what, MemoryBudget* budget = nullptr);

  void* data() { return data_; }
  void const* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void reset();
  void* data_ = nullptr;
  size_t size_ = 0;
  MemoryBudget* budget_ = nullptr;
};

/// Rounds up to a multiple of `align` (a power of two).
inline size_t alignUp(size_t v, size_t align) { return (v + align - 1) & ~(align - 1); }

}  // namespace kiln
