#pragma once
// How many cores one CPU GEMM call uses. By default each call takes the cores shared out among
// the calls in flight when it starts: one caller gets every core, two concurrent callers one
// core each on a 2-core machine, without the caller configuring anything.

#include <atomic>

namespace cubesim::backends {

// Cores this process may run on (its CPU affinity mask, so taskset and cgroups count).
int cpu_cores_available();

// Counts a backend's calls in flight and gives each call its thread count.
class CallThreads {
 public:
  // 0: share the cores among the calls in flight (the default); n > 0: every call uses n.
  void set_fixed(int threads) { fixed_ = threads < 0 ? 0 : threads; }
  int fixed() const { return fixed_; }

  // Held for the duration of one call.
  class Scope {
   public:
    explicit Scope(CallThreads& owner);
    ~Scope() { owner_.in_flight_.fetch_sub(1, std::memory_order_relaxed); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    int threads() const { return threads_; }

   private:
    CallThreads& owner_;
    int threads_;
  };

 private:
  std::atomic<int> fixed_{0};
  std::atomic<int> in_flight_{0};
};

// Process-wide: every OpenBLAS call after this uses up to `threads` threads.
void set_openblas_threads(int threads);

// The calling thread's OpenMP team size for what it runs next (oneDNN primitives).
void set_openmp_threads_for_this_thread(int threads);

}  // namespace cubesim::backends
