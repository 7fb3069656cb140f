#include "triton_emu/backends/cpu_threads.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>

#include "emu/platform.hpp"

namespace cubesim::backends {
namespace {}  // namespace

int cpu_cores_available() {
  static const int cores = emu::available_cpus();
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
