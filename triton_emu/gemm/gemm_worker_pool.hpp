#pragma once
// Worker threads for the numeric side of composite GEMMs, so the simulation thread goes on
// while a GEMM computes and joins only when the result is needed (at the GEMM's completion
// event in simulated time).

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace cubesim::detail {

class GemmWorkerPool {
 public:
  explicit GemmWorkerPool(int threads);
  ~GemmWorkerPool();
  GemmWorkerPool(const GemmWorkerPool&) = delete;
  GemmWorkerPool& operator=(const GemmWorkerPool&) = delete;

  std::future<void> submit(std::function<void()> work);
  int threads() const { return static_cast<int>(threads_.size()); }

 private:
  void loop();
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::packaged_task<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace cubesim::detail
