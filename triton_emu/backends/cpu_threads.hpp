#pragma once
// The knobs that decide how many cores one CPU GEMM call uses. OpenBLAS's thread count is
// process-wide; oneDNN (Debian's build runs on OpenMP) takes the calling thread's OpenMP
// setting, so it can be set per call.

namespace cubesim::backends {

// Cores this process may run on (its CPU affinity mask, so taskset and cgroups count).
int cpu_cores_available();

// Threads for each gemm() call when `callers` calls run at once: the cores shared out, >= 1.
int threads_per_call(int callers);

// Process-wide: every OpenBLAS call after this uses up to `threads` threads.
void set_openblas_threads(int threads);

// The calling thread's OpenMP team size for what it runs next (oneDNN primitives).
void set_openmp_threads_for_this_thread(int threads);

}  // namespace cubesim::backends
