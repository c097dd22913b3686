// A small fixed-size thread pool with a blocking parallelFor; results never depend on the thread count when
// each index writes only its own outputs.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln {

class ThreadPool {
 public:
  /// `threads` workers including the caller; <= 1 runs everything inline.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(ThreadPool const&) = delete;
  ThreadPool& operator=(ThreadPool const&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  /// Calls fn(begin, end) over [0, n) split into chunks of at least `grain`; returns when all are done.
  /// Calls from several threads at once are serialized.
  void parallelFor(int64_t n, int64_t grain, std::function<void(int64_t, int64_t)> const& fn);
  /// Hardware threads of this machine (at least 1).
  static int hardwareThreads();

 private:
  void workerLoop();
  std::vector<std::thread> workers_;
  std::mutex callMutex_;
  std::mutex m_;
  std::condition_variable cv_, doneCv_;
  std::function<void(int64_t, int64_t)> const* job_ = nullptr;
  int64_t n_ = 0, chunk_ = 0, next_ = 0;
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace kiln
