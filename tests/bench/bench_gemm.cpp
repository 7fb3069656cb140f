// GEMM throughput of each CPU implementation the "cpu" backend chooses between, per dtype, on the
// shapes the simulator runs (docs/performance.md, "GEMM backend (CPU)", records the figures):
//   square   1024^3 and 4096^3, one GEMM;
//   shard64  a 4096^3 GEMM sharded by columns over 64 PEs: 64 GEMMs of M=4096, K=4096, N=64
//            that share A;
//   shard16  4096 x 4096 x 256 on each of 16 PEs: 16 GEMMs of M=4096, K=4096, N=256;
//   block64  what sharded_gemm 4096^3 on default.json asks for: A too large for a PE's 1 MiB
//            SRAM, so each of 64 programs multiplies 64-row blocks of A by its 4096 x 64 B
//            (4096 GEMMs of M=64, K=4096, N=64; here all sharing one A).
// Threading modes:
//   serial      one caller, default thread policy: the call gets every core;
//   concurrent  2 callers, default thread policy: the cores are shared, one each on 2 cores;
//   oversub     2 callers, each call fixed at every core (what a library left to its own
//               thread count does).
// For a single GEMM, "concurrent" is that GEMM on one thread.
// Counters: GFLOP/s over the whole problem (wall time), and ms per problem.
//
//   bench_gemm --benchmark_repetitions=3 --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "triton_emu/backends/cpu_backend.hpp"
#include "triton_emu/backends/cpu_convert.hpp"
#include "triton_emu/backends/cpu_onednn.hpp"
#include "triton_emu/backends/cpu_openblas.hpp"
#include "triton_emu/backends/cpu_threads.hpp"

using namespace cubesim;
using namespace cubesim::backends;

namespace {

struct Candidate {
  const char* name;
  std::function<std::unique_ptr<GemmBackend>()> make;
};

const Candidate kCandidates[] = {
    // The default: conversion in cache-sized panels of A, one block of C per thread.
    {"openblas", [] { return std::make_unique<CpuOpenblasGemm>(); }},
    // Panels one after another, OpenBLAS's own threads inside each sgemm.
    {"openblas_libthreads",
     [] {
       CpuOpenblasGemm::Options o;
       o.own_threads = false;
       return std::make_unique<CpuOpenblasGemm>(o);
     }},
    // The straightforward way: convert whole operands, one sgemm on OpenBLAS's threads.
    {"openblas_whole",
     [] {
       CpuOpenblasGemm::Options o;
       o.panel_bytes = 0;
       o.own_threads = false;
       return std::make_unique<CpuOpenblasGemm>(o);
     }},
    {"onednn", [] { return std::make_unique<CpuOnednnGemm>(); }},
};

struct Problem {
  const char* name;
  std::int64_t gemms, M, N, K;  // `gemms` GEMMs of M x N x K that share A, each its own B and C
};

const Problem kProblems[] = {
    {"square1024", 1, 1024, 1024, 1024}, {"square4096", 1, 4096, 4096, 4096},
    {"shard64", 64, 4096, 64, 4096},     {"shard16", 16, 4096, 256, 4096},
    {"block64", 4096, 64, 64, 4096},
};

enum class Mode { serial, concurrent, oversub };
const char* mode_name(Mode m) {
  return m == Mode::serial ? "serial" : m == Mode::concurrent ? "concurrent" : "oversub";
}

// Random values in +-[0.25, 1) stored as `t`, through the library's own conversion.
std::vector<unsigned char> random_matrix(DType t, std::int64_t elements, std::uint64_t seed) {
  std::vector<float> f(static_cast<std::size_t>(elements));
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (float& v : f) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const float mag = 0.25f + 0.75f * static_cast<float>(s >> 40) / static_cast<float>(1 << 24);
    v = (s >> 39) & 1 ? -mag : mag;
  }
  std::vector<unsigned char> out(static_cast<std::size_t>(elements) * dtype_size(t));
  convert_block(DType::f32, f.data(), elements, t, out.data(), elements, 1, elements);
  return out;
}

void run_gemm_problem(benchmark::State& state, const Candidate& cand, DType t, const Problem& p,
                      Mode mode) {
  std::unique_ptr<GemmBackend> be = cand.make();
  if (auto* onednn = dynamic_cast<CpuOnednnGemm*>(be.get()); onednn && !onednn->supports(t)) {
    state.SkipWithError(("oneDNN has no " + std::string(dtype_name(t)) + " matmul on ISA " +
                         CpuOnednnGemm::isa_name())
                            .c_str());
    return;
  }
  const int callers = mode == Mode::serial ? 1 : 2;
  be->set_threads_per_call(mode == Mode::oversub ? cpu_cores_available() : 0);

  const std::vector<unsigned char> a = random_matrix(t, p.M * p.K, 1);
  std::vector<std::vector<unsigned char>> b, c;
  for (std::int64_t g = 0; g < p.gemms; ++g) {
    b.push_back(random_matrix(t, p.K * p.N, 2 + static_cast<std::uint64_t>(g)));
    c.emplace_back(static_cast<std::size_t>(p.M * p.N) * dtype_size(t));
  }
  auto one = [&](std::int64_t g) {
    GemmDesc d;
    d.in_dtype = d.out_dtype = t;
    d.M = p.M;
    d.N = p.N;
    d.K = p.K;
    d.a = a.data();
    d.lda = p.K;
    d.b = b[static_cast<std::size_t>(g)].data();
    d.ldb = p.N;
    d.c = c[static_cast<std::size_t>(g)].data();
    d.ldc = p.N;
    be->gemm(d);
  };
  one(0);  // warm-up: oneDNN primitive creation, OpenBLAS thread start, page faults

  for (auto _ : state) {
    if (callers == 1) {
      for (std::int64_t g = 0; g < p.gemms; ++g) one(g);
    } else {
      std::atomic<std::int64_t> next{0};
      auto worker = [&] {
        for (std::int64_t g; (g = next.fetch_add(1)) < p.gemms;) one(g);
      };
      std::thread other(worker);
      worker();
      other.join();
    }
  }
  const double flops = 2.0 * static_cast<double>(p.gemms * p.M * p.N * p.K);
  state.counters["GFLOPs"] = benchmark::Counter(
      flops * 1e-9 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["ms_per_problem"] =
      benchmark::Counter(1e-3 * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Conversion throughput, ns per element, 16 Mi elements (a 4096^2 operand).
void run_convert(benchmark::State& state, DType from, DType to, ConvertIsa isa) {
  const std::int64_t n = std::int64_t{1} << 24;
  const std::vector<unsigned char> src = random_matrix(from, n, 9);
  std::vector<unsigned char> dst(static_cast<std::size_t>(n) * dtype_size(to));
  for (auto _ : state) {
    convert_block(from, src.data(), 4096, to, dst.data(), 4096, n / 4096, 4096, isa);
    benchmark::DoNotOptimize(dst.data());
  }
  state.counters["ns_per_element"] =
      benchmark::Counter(1e-9 * static_cast<double>(n) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// An integer GEMM, 1024^3, on the blocked loop (through CpuOpenblasGemm) or on CpuOnednnGemm
// (oneDNN's s8 matmul for i8 where it is exact, else the same loop).
void run_integer(benchmark::State& state, DType in, bool onednn) {
  std::unique_ptr<GemmBackend> be;
  if (onednn)
    be = std::make_unique<CpuOnednnGemm>();
  else
    be = std::make_unique<CpuOpenblasGemm>();
  const std::int64_t n = 1024;
  const DType out = gemm_default_out(in);
  // Bytes 0x01..0x7f repeating: nonzero values of every integer width.
  std::vector<unsigned char> a(static_cast<std::size_t>(n * n) * dtype_size(in));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<unsigned char>(1 + i % 127);
  const std::vector<unsigned char> b = a;
  std::vector<unsigned char> c(static_cast<std::size_t>(n * n) * dtype_size(out));
  GemmDesc d{in, out, n, n, n, false, false, a.data(), n, b.data(), n, c.data(), n, false};
  for (auto _ : state) be->gemm(d);
  state.counters["GOPs"] = benchmark::Counter(
      2e-9 * static_cast<double>(n * n * n) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

void register_all() {
  for (const Candidate& cand : kCandidates)
    for (DType t : {DType::f16, DType::bf16, DType::f32})
      for (const Problem& p : kProblems)
        for (Mode m : {Mode::serial, Mode::concurrent, Mode::oversub}) {
          if (std::string(cand.name) == "openblas_whole" && t == DType::f32) continue;  // same
          if (p.gemms == 1 && m == Mode::oversub) continue;  // one GEMM: nothing to overlap
          const std::string name = std::string("gemm/") + cand.name + "/" +
                                   std::string(dtype_name(t)) + "/" + p.name + "/" + mode_name(m);
          benchmark::RegisterBenchmark(
              name.c_str(),
              [&cand, t, &p, m](benchmark::State& s) { run_gemm_problem(s, cand, t, p, m); })
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond);
        }
  for (ConvertIsa isa : {ConvertIsa::scalar, ConvertIsa::avx2_f16c}) {
    if (isa == ConvertIsa::avx2_f16c && best_convert_isa() != isa) continue;
    for (auto [from, to] :
         {std::pair{DType::f16, DType::f32}, std::pair{DType::f32, DType::f16},
          std::pair{DType::bf16, DType::f32}, std::pair{DType::f32, DType::bf16},
          std::pair{DType::f8e4m3, DType::f32}, std::pair{DType::f32, DType::f8e4m3}}) {
      // f8 converts the same way on every ISA (a table, float8::encode): measured once.
      const bool f8 = from == DType::f8e4m3 || to == DType::f8e4m3;
      if (f8 && isa != best_convert_isa()) continue;
      const std::string name = std::string("convert/") + std::string(dtype_name(from)) + "_to_" +
                               std::string(dtype_name(to)) + "/" +
                               std::string(convert_isa_name(isa));
      benchmark::RegisterBenchmark(name.c_str(), [from, to, isa](benchmark::State& s) {
        run_convert(s, from, to, isa);
      })->Unit(benchmark::kMillisecond);
    }
  }
  for (DType in : {DType::i8, DType::i32, DType::i64})
    for (bool onednn : {false, true}) {
      if (onednn && in != DType::i8) continue;  // the loop either way
      const std::string name = std::string("gemm/") + (onednn ? "onednn" : "loop") + "/" +
                               std::string(dtype_name(in)) + "/square1024/serial";
      benchmark::RegisterBenchmark(
          name.c_str(), [in, onednn](benchmark::State& s) { run_integer(s, in, onednn); })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::AddCustomContext("cores", std::to_string(cpu_cores_available()));
  benchmark::AddCustomContext("convert_isa", std::string(convert_isa_name(best_convert_isa())));
  benchmark::AddCustomContext("onednn_isa", CpuOnednnGemm::isa_name());
  benchmark::AddCustomContext("cpu_backend", CpuGemmBackend().describe());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
