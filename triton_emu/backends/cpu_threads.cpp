#include "triton_emu/backends/cpu_threads.hpp"

#include <cblas.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <thread>

namespace cubesim::backends {

int cpu_cores_available() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

int threads_per_call(int callers) {
  return std::max(1, cpu_cores_available() / std::max(1, callers));
}

void set_openblas_threads(int threads) { openblas_set_num_threads(std::max(1, threads)); }

void set_openmp_threads_for_this_thread(int threads) { omp_set_num_threads(std::max(1, threads)); }

}  // namespace cubesim::backends
