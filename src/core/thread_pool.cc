// ThreadPool implementation: workers take chunks from a shared counter.
#include "core/thread_pool.h"

#include <algorithm>

namespace kiln {

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> l(m_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

int ThreadPool::hardwareThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

void ThreadPool::parallelFor(int64_t n, int64_t grain, std::function<void(int64_t, int64_t)> const& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  if (workers_.empty() || n <= grain) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> call(callMutex_);
  int64_t parts = std::min<int64_t>(threads() * 4, (n + grain - 1) / grain);
  {
    std::lock_guard<std::mutex> l(m_);
    job_ = &fn;
    n_ = n;
    chunk_ = (n + parts - 1) / parts;
    next_ = 0;
    pending_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  cv_.notify_all();
  // The caller works too.
  for (;;) {
    int64_t b;
    {
      std::lock_guard<std::mutex> l(m_);
      b = next_;
      next_ += chunk_;
    }
    if (b >= n) break;
    fn(b, std::min(n, b + chunk_));
  }
  std::unique_lock<std::mutex> l(m_);
  doneCv_.wait(l, [&] { return pending_ == 0; });
  job_ = nullptr;
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  for (;;) {
    std::function<void(int64_t, int64_t)> const* job;
    {
      std::unique_lock<std::mutex> l(m_);
      cv_.wait(l, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    for (;;) {
      int64_t b, n, c;
      {
        std::lock_guard<std::mutex> l(m_);
        b = next_;
        n = n_;
        c = chunk_;
        next_ += c;
      }
      if (b >= n) break;
      (*job)(b, std::min(n, b + c));
    }
    {
      std::lock_guard<std::mutex> l(m_);
      if (--pending_ == 0) doneCv_.notify_all();
    }
  }
}

}  // namespace kiln
