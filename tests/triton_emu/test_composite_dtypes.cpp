// Composite GEMMs of every dtype pair through the engine, functionally: each pair the kernel API
// accepts computes the right numbers (integers exactly, floats within an fp64 error bound), on
// both numeric paths (operands in memory, computed late and together; an accumulator tile,
// computed when the engine starts); each pair it refuses is a kernel fault naming the PE and
// both dtypes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <cubesim/cubesim.hpp>
#include <random>
#include <set>
#include <string>
#include <utility>

#include "spec_path.hpp"
#include "tests/triton_emu/backends/gemm_test_matrix.hpp"

namespace cubesim {
namespace {

using backends::testing::smallest_subnormal;
using backends::testing::TestMatrix;
using backends::testing::unit_roundoff;
using ::testing::AllOf;
using ::testing::HasSubstr;

// tiny.json with a GEMM rate for every dtype it leaves out, so that only the dtype rules decide.
Spec spec_with_every_rate() {
  Spec spec = Spec::load(spec_path("tiny.json"));
  for (const char* t : {"i8", "i64", "f8e4m3", "f8e5m2"})
    spec = spec.with(std::string("system.pe.gemm.peak_TFLOPS.") + t, 0.5);
  return spec;
}

TestMatrix random_matrix(DType t, std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  TestMatrix m(t, rows, cols, cols);
  m.fill_random(rng);
  return m;
}

std::size_t bytes_of(DType t, std::int64_t rows, std::int64_t cols) {
  return static_cast<std::size_t>(rows * cols) * dtype_size(t);
}

void write(Simulation& sim, Ptr p, const TestMatrix& m, DType t, std::int64_t rows,
           std::int64_t cols) {
  const auto* bytes = static_cast<const std::uint8_t*>(m.data());
  sim.write(p, std::vector<std::uint8_t>(bytes, bytes + bytes_of(t, rows, cols)));
}

TestMatrix read(Simulation& sim, Ptr p, DType t, std::int64_t rows, std::int64_t cols) {
  TestMatrix m(t, rows, cols, cols);
  const auto bytes = sim.read<std::uint8_t>(p, bytes_of(t, rows, cols));
  std::memcpy(m.data(), bytes.data(), bytes.size());
  return m;
}

// C (+ C0 with accumulate) against the product of A and B: integers exactly (wrapped to C's
// width), floats within (K + 2) f32 roundings of the sum of |terms| plus one rounding to C.
void expect_product(const TestMatrix& a, const TestMatrix& b, const TestMatrix* c0,
                    const TestMatrix& c, DType in, DType out, std::int64_t m, std::int64_t k,
                    std::int64_t n) {
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      if (is_integer(in)) {
        __extension__ using i128 = __int128;
        i128 sum = c0 ? c0->get_int(i, j) : 0;
        for (std::int64_t p = 0; p < k; ++p) sum += i128{a.get_int(i, p)} * b.get_int(p, j);
        const auto wrapped = static_cast<std::uint64_t>(sum);
        const std::int64_t want = out == DType::i32
                                      ? std::int64_t{static_cast<std::int32_t>(wrapped)}
                                      : static_cast<std::int64_t>(wrapped);
        ASSERT_EQ(c.get_int(i, j), want) << "C(" << i << ", " << j << ")";
        continue;
      }
      double ref = c0 ? c0->get(i, j) : 0.0;
      double mag = std::abs(ref);
      for (std::int64_t p = 0; p < k; ++p) {
        ref += a.get(i, p) * b.get(p, j);
        mag += std::abs(a.get(i, p) * b.get(p, j));
      }
      const double acc_err = static_cast<double>(k + 2) * unit_roundoff(DType::f32) * mag;
      const double tol =
          acc_err + unit_roundoff(out) * (std::abs(ref) + acc_err) + smallest_subnormal(out) / 2;
      ASSERT_LE(std::abs(c.get(i, j) - ref), tol)
          << "C(" << i << ", " << j << ") = " << c.get(i, j) << ", fp64 reference " << ref;
    }
}

// The pairs a composite GEMM takes (docs/writing-kernels.md, composite operations reference).
std::set<std::pair<DType, DType>> documented_pairs() {
  std::set<std::pair<DType, DType>> pairs;
  const DType floats[] = {DType::f16, DType::bf16, DType::f32, DType::f8e4m3, DType::f8e5m2};
  for (DType in : floats)
    for (DType out : floats) pairs.emplace(in, out);
  pairs.emplace(DType::i8, DType::i32);
  pairs.emplace(DType::i32, DType::i32);
  pairs.emplace(DType::i64, DType::i64);
  return pairs;
}

TEST(CompositeDtypes, EveryAcceptedPairComputesAndEveryOtherIsAFaultNamingThePeAndDtypes) {
  Simulation sim(spec_with_every_rate());
  const std::int64_t m = 12, k = 40, n = 20;
  const Ptr pa = sim.alloc(m * k * 8), pb = sim.alloc(k * n * 8), pc = sim.alloc(m * n * 8);
  const auto pairs = documented_pairs();
  std::uint64_t seed = 1;
  for (DType in : kAllDTypes)
    for (DType out : kAllDTypes) {
      SCOPED_TRACE(std::string(dtype_name(in)) + " -> " + std::string(dtype_name(out)));
      const TestMatrix a = random_matrix(in, m, k, seed++), b = random_matrix(in, k, n, seed++);
      const TestMatrix c0 = random_matrix(out, m, n, seed++);
      write(sim, pa, a, in, m, k);
      write(sim, pb, b, in, k, n);
      write(sim, pc, c0, out, m, n);
      // Operands in memory and a memory result: the product is held and computed with others.
      const auto in_memory = [&](tl::Context& tl) {
        auto h = tl.composite(Op::gemm, tl.ref(pa, {m, k}, in), tl.ref(pb, {k, n}, in), pc,
                              {.out_dtype = out});
        tl.wait(h);
      };
      // An A tile and an accumulator tile: computed when the engine starts, adding into C0.
      const auto accumulated = [&](tl::Context& tl) {
        auto h = tl.composite(Op::gemm, tl.load(pa, {m, k}, in), tl.ref(pb, {k, n}, in),
                              tl.load(pc, {m, n}, out), {.accumulate = true});
        tl.store(pc, tl.wait(h));
      };
      if (!pairs.contains({in, out})) {
        for (const auto& kernel : {std::function<void(tl::Context&)>(in_memory),
                                   std::function<void(tl::Context&)>(accumulated)}) {
          try {
            sim.launch_on(Grid{.pes = 1, .cubes = 1}, kernel);
            ADD_FAILURE() << "the composite was accepted";
          } catch (const KernelError& e) {
            EXPECT_THAT(e.what(),
                        AllOf(HasSubstr("sip0.cube0.pe0"), HasSubstr(std::string(dtype_name(in))),
                              HasSubstr(std::string(dtype_name(out)))));
          }
        }
        continue;
      }
      sim.launch_on(Grid{.pes = 1, .cubes = 1}, in_memory);
      expect_product(a, b, nullptr, read(sim, pc, out, m, n), in, out, m, k, n);
      write(sim, pc, c0, out, m, n);
      sim.launch_on(Grid{.pes = 1, .cubes = 1}, accumulated);
      expect_product(a, b, &c0, read(sim, pc, out, m, n), in, out, m, k, n);
    }
}

TEST(CompositeDtypes, I8AndF8ResultsDefaultToI32AndF32AsTritonsDot) {
  Simulation sim(spec_with_every_rate());
  const std::int64_t m = 8, k = 24, n = 16;
  const Ptr pa = sim.alloc(m * k), pb = sim.alloc(k * n), pc = sim.alloc(m * n * 4);
  for (const auto& [in, want] :
       {std::pair{DType::i8, DType::i32}, std::pair{DType::f8e4m3, DType::f32},
        std::pair{DType::f8e5m2, DType::f32}}) {
    SCOPED_TRACE(dtype_name(in));
    const TestMatrix a = random_matrix(in, m, k, 7), b = random_matrix(in, k, n, 8);
    write(sim, pa, a, in, m, k);
    write(sim, pb, b, in, k, n);
    DType got = in;
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
      auto h = tl.composite(Op::gemm, tl.ref(pa, {m, k}, in), tl.ref(pb, {k, n}, in), tl::to_tile);
      const tl::Tile c = tl.wait(h);
      got = c.dtype();
      tl.store(pc, c);
    });
    EXPECT_EQ(got, want);
    expect_product(a, b, nullptr, read(sim, pc, want, m, n), in, want, m, k, n);
  }
}

TEST(CompositeDtypes, F8InputsTakeTheFloatEpilogue) {
  Simulation sim(spec_with_every_rate());
  const std::int64_t m = 8, k = 32, n = 12;
  const Ptr pa = sim.alloc(m * k), pb = sim.alloc(k * n), pc = sim.alloc(m * n * 4);
  const TestMatrix a = random_matrix(DType::f8e4m3, m, k, 9),
                   b = random_matrix(DType::f8e4m3, k, n, 10);
  write(sim, pa, a, DType::f8e4m3, m, k);
  write(sim, pb, b, DType::f8e4m3, k, n);
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    auto h = tl.composite(
        Op::gemm, tl.ref(pa, {m, k}, DType::f8e4m3), tl.ref(pb, {k, n}, DType::f8e4m3), pc,
        {.out_dtype = DType::f32, .alpha = 0.5, .activation = tl::Activation::relu});
    tl.wait(h);
  });
  const TestMatrix c = read(sim, pc, DType::f32, m, n);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double ref = 0, mag = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        ref += a.get(i, p) * b.get(p, j);
        mag += std::abs(a.get(i, p) * b.get(p, j));
      }
      ref = std::max(0.5 * ref, 0.0);
      ASSERT_LE(std::abs(c.get(i, j) - ref), (k + 3) * std::ldexp(mag, -24)) << i << ", " << j;
    }
}

}  // namespace
}  // namespace cubesim
