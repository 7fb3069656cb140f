#include "triton_emu/gemm/gemm_worker_pool.hpp"

namespace cubesim::detail {

GemmWorkerPool::GemmWorkerPool(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { loop(); });
}

GemmWorkerPool::~GemmWorkerPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& t : threads_) t.join();
}

std::future<void> GemmWorkerPool::submit(std::function<void()> work) {
  std::packaged_task<void()> task(std::move(work));
  auto f = task.get_future();
  if (threads_.empty()) {  // no workers: compute in place
    task();
    return f;
  }
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(task));
  }
  ready_.notify_one();
  return f;
}

void GemmWorkerPool::loop() {
  for (;;) {
    std::packaged_task<void()> task;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace cubesim::detail
