// Latencies a spec of a GPU needs and NCCL's timings do not give (specs/h200x4-nvlink.json):
//  - HBM and L2: one thread chasing a random cycle of pointers, one load at a time, through a
//    buffer far larger than the L2 (HBM) and one that fits in it (L2);
//  - NVLink through the switch: a one-thread ping-pong between GPU 0 and GPU 1, each writing a
//    flag into the other's memory and spinning on its own (half a round trip: one way).
// Each is the mean over many steps, timed with CUDA events around one launch.
//
//   nvcc -O2 -arch=sm_90 -o latency_probe tools/gpu/latency_probe.cu && ./latency_probe > out.csv
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#define CHECK(x)                                                                      \
  do {                                                                                \
    cudaError_t e = (x);                                                              \
    if (e != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

__global__ void chase(const unsigned long long* next, long long steps, unsigned long long* out) {
  unsigned long long p = 0;
  for (long long i = 0; i < steps; ++i) p = next[p];
  *out = p;
}

__global__ void ping_pong(volatile int* mine, volatile int* theirs, int rounds, bool starts) {
  for (int i = 1; i <= rounds; ++i) {
    if (starts) {
      *theirs = i;
      while (*mine != i) {
      }
    } else {
      while (*mine != i) {
      }
      *theirs = i;
    }
  }
}

// Mean ns per dependent load through `bytes` of device memory, lines `stride` apart.
static int chase_ns(std::size_t bytes, std::size_t stride, long long steps, double* ns) {
  const std::size_t words = bytes / 8, lines = bytes / stride, per_line = stride / 8;
  std::vector<std::size_t> order(lines);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin() + 1, order.end(), std::mt19937_64(1));
  std::vector<unsigned long long> next(words, 0);
  for (std::size_t i = 0; i < lines; ++i)
    next[order[i] * per_line] = order[(i + 1) % lines] * per_line;
  unsigned long long *d = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&d, bytes));
  CHECK(cudaMalloc(&out, 8));
  CHECK(cudaMemcpy(d, next.data(), bytes, cudaMemcpyHostToDevice));
  chase<<<1, 1>>>(d, lines, out);  // warm the TLBs (and the L2 for the small buffer)
  CHECK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  CHECK(cudaEventRecord(a));
  chase<<<1, 1>>>(d, steps, out);
  CHECK(cudaEventRecord(b));
  CHECK(cudaEventSynchronize(b));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  *ns = ms * 1e6 / static_cast<double>(steps);
  CHECK(cudaFree(d));
  CHECK(cudaFree(out));
  return 0;
}

int main() {
  std::printf("what,ns,how\n");
  double ns = 0;
  if (chase_ns(std::size_t{256} << 20, 4096, 200000, &ns) != 0) return 1;
  std::printf("hbm_load,%.1f,dependent loads through 256 MiB 4 KiB apart (L2 misses)\n", ns);
  if (chase_ns(std::size_t{2} << 30, 4096, 200000, &ns) != 0) return 1;
  std::printf("hbm_load_2GiB,%.1f,dependent loads through 2 GiB 4 KiB apart (L2 and TLB misses)\n",
              ns);
  if (chase_ns(std::size_t{8} << 20, 128, 1000000, &ns) != 0) return 1;
  std::printf("l2_load,%.1f,dependent loads through 8 MiB 128 B apart (L2 hits)\n", ns);

  int n = 0;
  CHECK(cudaGetDeviceCount(&n));
  if (n < 2) return 0;
  int* flag[2];
  for (int d = 0; d < 2; ++d) {
    CHECK(cudaSetDevice(d));
    CHECK(cudaDeviceEnablePeerAccess(1 - d, 0));
    CHECK(cudaMalloc(&flag[d], sizeof(int)));
    CHECK(cudaMemset(flag[d], 0, sizeof(int)));
  }
  const int rounds = 100000;
  CHECK(cudaSetDevice(0));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  CHECK(cudaSetDevice(1));
  ping_pong<<<1, 1>>>(flag[1], flag[0], rounds, false);
  CHECK(cudaSetDevice(0));
  CHECK(cudaEventRecord(a));
  ping_pong<<<1, 1>>>(flag[0], flag[1], rounds, true);
  CHECK(cudaEventRecord(b));
  CHECK(cudaEventSynchronize(b));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  std::printf("nvlink_one_way,%.1f,half a flag round trip GPU0 <-> GPU1 over %d rounds\n",
              ms * 1e6 / rounds / 2, rounds);
  CHECK(cudaSetDevice(1));
  CHECK(cudaDeviceSynchronize());
  return 0;
}
