#include "triton_emu/backends/cpu_threads.hpp"

#include <cblas.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <thread>

namespace cubesim::backends {
namespace {

int count_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

int cpu_cores_available() {
  static const int cores = count_cores();
  return cores;
}

CallThreads::Scope::Scope(CallThreads& owner) : owner_(owner) {
  const int in_flight = owner.in_flight_.fetch_add(1, std::memory_order_relaxed) + 1;
  const int fixed = owner.fixed_.load(std::memory_order_relaxed);
  threads_ = fixed > 0 ? fixed : std::max(1, cpu_cores_available() / in_flight);
}

void set_openblas_threads(int threads) {
  openblas_set_num_threads(std::max(1, threads));
}

void set_openmp_threads_for_this_thread(int threads) {
  omp_set_num_threads(std::max(1, threads));
}

}  // namespace cubesim::backends
