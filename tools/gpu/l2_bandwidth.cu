// The read bandwidth of an H100/H200's L2 and of its HBM (specs/h200.json's cube cache and
// HBM, docs/data/gpu-gemm-h200/): every SM reads a buffer over and over, 16 bytes per thread
// per load, in one launch; a buffer that fits the L2 is served by it after the first pass, one
// far larger than the L2 by HBM. Timed with CUDA events around the launch; bytes counted are
// the bytes loaded (buffer x passes).
//
//   nvcc -O2 -arch=sm_90 -o l2_bandwidth tools/gpu/l2_bandwidth.cu && ./l2_bandwidth > out.csv
#include <cuda_runtime.h>

#include <cstdio>

#define CHECK(x)                                                                      \
  do {                                                                                \
    cudaError_t e = (x);                                                              \
    if (e != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

__global__ void read_passes(const int4* buf, long long n, int passes, int* out) {
  int acc = 0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (int p = 0; p < passes; ++p)
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
         i += stride) {
      const int4 v = __ldcg(buf + i);  // cached in L2 only, not L1: what the L2 serves
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  if (acc == 0x7fffffff) *out = acc;  // keeps the loads
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int* out = nullptr;
  CHECK(cudaMalloc(&out, sizeof(int)));
  std::printf("bytes,passes,seconds,GBps\n");
  const long long sizes[] = {8LL << 20, 16LL << 20, 32LL << 20, 48LL << 20, 4LL << 30};
  for (long long bytes : sizes) {
    int4* buf = nullptr;
    CHECK(cudaMalloc(&buf, bytes));
    CHECK(cudaMemset(buf, 1, bytes));
    const long long n = bytes / 16;
    const int passes = bytes >= (1LL << 30) ? 4 : 200;
    read_passes<<<sms * 4, 512>>>(buf, n, 2, out);  // warm up (and fill the L2)
    CHECK(cudaDeviceSynchronize());
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (int rep = 0; rep < 5; ++rep) {
      CHECK(cudaEventRecord(a));
      read_passes<<<sms * 4, 512>>>(buf, n, passes, out);
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      const double s = ms * 1e-3;
      std::printf("%lld,%d,%.9f,%.1f\n", bytes, passes, s, bytes * double(passes) / s / 1e9);
    }
    CHECK(cudaFree(buf));
  }
  return 0;
}
