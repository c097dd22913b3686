// Host allocation hook, budget and aligned buffers.
#include "core/memory.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace kiln {
namespace {
std::atomic<int64_t> gFailAt{0};
std::atomic<int64_t> gCount{0};
}  // namespace

int64_t MemoryBudget::defaultLimit() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0) return int64_t(1) << 40;
  return static_cast<int64_t>(pages) * pageSize;
}

Status MemoryBudget::reserve(size_t bytes, char const* what) {
  int64_t b = static_cast<int64_t>(bytes);
  if (b < 0) return errorStatus(StatusCode::kOutOfMemory, "allocation of ", bytes, " bytes for ", what, " is too large");
  int64_t now = used_.fetch_add(b) + b;
  if (now > limit_.load()) {
    used_.fetch_sub(b);
    return errorStatus(StatusCode::kOutOfMemory, "allocating ", bytes, " bytes for ", what,
                       " would pass the memory limit of ", limit_.load(), " bytes (", now - b, " in use)");
  }
  return Status::ok();
}

int64_t setHostAllocFailAt(int64_t k) {
  gCount.store(0);
  return gFailAt.exchange(k);
}

int64_t hostAllocCount() { return gCount.load(); }

HostBuffer::~HostBuffer() { reset(); }

HostBuffer::HostBuffer(HostBuffer&& o) noexcept : data_(o.data_), size_(o.size_), budget_(o.budget_) {
  o.data_ = nullptr;
  o.size_ = 0;
  o.budget_ = nullptr;
}

HostBuffer& HostBuffer::operator=(HostBuffer&& o) noexcept {
  if (this != &o) {
    reset();
    data_ = o.data_;
    size_ = o.size_;
    budget_ = o.budget_;
    o.data_ = nullptr;
    o.size_ = 0;
    o.budget_ = nullptr;
  }
  return *this;
}

void HostBuffer::reset() {
  if (data_) std::free(data_);
  if (budget_) budget_->release(size_);
  data_ = nullptr;
  size_ = 0;
  budget_ = nullptr;
}

Result<HostBuffer> HostBuffer::allocate(size_t bytes, char const* what, MemoryBudget* budget) {
  int64_t n = gCount.fetch_add(1) + 1;
  int64_t failAt = gFailAt.load();
  if (failAt > 0 && n == failAt) {
    return errorStatus(StatusCode::kOutOfMemory, "allocation of ", bytes, " bytes for ", what,
                       " failed (injected failure #", n, ")");
  }
  if (bytes > (size_t(1) << 62)) {
    return errorStatus(StatusCode::kOutOfMemory, "allocation of ", bytes, " bytes for ", what, " is too large");
  }
  if (budget) KILN_RETURN_IF_ERROR(budget->reserve(bytes, what));
  size_t rounded = alignUp(bytes == 0 ? 64 : bytes, 64);
  void* p = std::aligned_alloc(64, rounded);
  if (!p) {
    if (budget) budget->release(bytes);
    return errorStatus(StatusCode::kOutOfMemory, "the system could not allocate ", bytes, " bytes for ", what);
  }
  std::memset(p, 0, rounded);
  HostBuffer b;
  b.data_ = p;
  b.size_ = bytes;
  b.budget_ = budget;
  return b;
}

}  // namespace kiln
