#pragma once
// Shared pieces of the benchmark kernels and their host harnesses:
//   - the global program id over all three grid axes, and balanced splits of a range;
//   - parameter specs and typed access to validated parameters;
//   - UsageError for sizes that do not shard (what, why, what would work);
//   - seeded random inputs in any dtype (counter-based, so any element can be regenerated);
//   - element access to simulated memory, relative errors, sampled checks;
//   - combining the results of several launches into one.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "components/dtype.hpp"
#include "components/system_config.hpp"
#include "kernels/registry.hpp"
#include "triton_emu/context.hpp"
#include "triton_emu/launch/simulation.hpp"

namespace cubesim::kernels {

// ---- The grid, seen from a kernel
// ----------------------------------------------------------------

// DESIGN.md's folding of the SIP axis into ADR-0022's global PID:
// (program_id(2) * num_programs(1) + program_id(1)) * num_programs(0) + program_id(0).
std::int64_t global_program_id(const tl::Context& tl);
// num_programs(0) * num_programs(1) * num_programs(2).
std::int64_t total_programs(const tl::Context& tl);

// [begin, end) of part `index` of `parts` nearly equal parts of [0, n): sizes differ by at most 1.
struct Range {
  std::int64_t begin = 0, end = 0;
  std::int64_t size() const { return end - begin; }
  bool empty() const { return end <= begin; }
};
Range split_range(std::int64_t n, std::int64_t parts, std::int64_t index);

// The grid of a launch: the hardware's (one program per PE), or a logical grid.
struct GridShape {
  std::int64_t pes = 1, cubes = 1, sips = 1;  // programs along axes 0, 1, 2
  bool logical = false;
  std::int64_t total() const { return pes * cubes * sips; }
  // "64 programs (4 cubes x 16 PEs)", with "2 SIPs x " in front on several SIPs; a logical
  // grid: "16384 programs (logical grid 16384 x 1 x 1)".
  std::string str() const;
};
GridShape hardware_grid(const components::SystemConfig& config);
// The grid sim.launch() uses: SimOptions::grid (the CLI's --grid) on this system.
GridShape launch_grid(const Simulation& sim);
// UsageError unless sim.launch() gets the hardware grid (no --grid): for kernels whose
// programs must each have a PE of their own (`why`, e.g. "its programs exchange messages with
// their mesh neighbours").
void require_hardware_grid(const Simulation& sim, const std::string& kernel,
                           const std::string& why);
// UsageError unless every program of the launch runs at once (a --grid of at most the PEs: one
// wave), for kernels whose programs wait for each other (`why`, e.g. "its programs meet at
// tl.barrier").
void require_one_wave(const Simulation& sim, const std::string& kernel, const std::string& why);

// ---- Parameters --------------------------------------------------------------------------------

ParamSpec int_param(std::string name, std::int64_t default_value, std::int64_t min,
                    std::int64_t max, std::string help);
ParamSpec real_param(std::string name, double default_value, double min, double max,
                     std::string help);
ParamSpec choice_param(std::string name, std::string default_value,
                       std::vector<std::string> choices, std::string help);
ParamSpec bool_param(std::string name, bool default_value, std::string help);
// A dtype parameter named "dtype" over the given choices.
ParamSpec dtype_param(DType default_value, std::vector<DType> choices, std::string help);

std::int64_t get_int(const Params& p, const char* name);
double get_real(const Params& p, const char* name);
std::string get_string(const Params& p, const char* name);
DType get_dtype(const Params& p, const char* name = "dtype");

// ---- Usage errors ------------------------------------------------------------------------------

// UsageError unless value % divisor == 0, e.g. "N = 1000 is not divisible by the 64 programs
// (4 cubes x 16 PEs); use a multiple of 64 (such as 960 or 1024)".
void require_divisible(const std::string& name, std::int64_t value, std::int64_t divisor,
                       const std::string& divisor_description);
// UsageError when `bytes` of SRAM per program exceed the PE's SRAM; `fix` says what would fit.
void require_sram(const components::SystemConfig& config, std::uint64_t bytes,
                  const std::string& what, const std::string& fix);
// UsageError when the message slots of `channels` channels into one cube (the most any cube
// receives on) do not fit where system.messages.memory puts them: the cube's shared SRAM, or
// its HBM beside `hbm_bytes` of the kernel's own buffers there. PE SRAM slots are counted by
// require_sram. Refusing up front spares a run that would fault when the channel is first used.
void require_message_slots(const components::SystemConfig& config, std::uint64_t channels,
                           std::uint64_t hbm_bytes, const std::string& what);

// ---- Random inputs -----------------------------------------------------------------------------

// signed_unit: magnitudes uniform in [1/16, 1] with a random sign (never zero or tiny, so a
// relative error means something); positive: uniform in [0.5, 1.5]. i32 arrays hold integers:
// +-[1, 1000] or [1, 1000].
enum class Fill { signed_unit, positive };

// Element i of the random array (seed, stream) in `dtype`, as raw bytes at dst[0 .. count):
// a pure function of (seed, stream, i), so harnesses can fill memory and regenerate any
// element for the reference without keeping the inputs.
void random_block(DType dtype, Fill fill, std::uint64_t seed, std::uint64_t stream,
                  std::int64_t begin, std::int64_t count, std::byte* dst);

// A host-side array in a simulated dtype: raw bytes as they are written to memory.
struct HostArray {
  DType dtype = DType::f32;
  std::int64_t size = 0;
  std::vector<std::byte> bytes;

  double at(std::int64_t i) const;  // the exact value of element i
  // Elements [begin, begin + count) as doubles, exactly.
  void decode(std::int64_t begin, std::int64_t count, double* out) const;
  std::vector<double> to_f64() const;
};

HostArray random_array(DType dtype, std::int64_t n, std::uint64_t seed, std::uint64_t stream,
                       Fill fill = Fill::signed_unit);
// Values rounded to dtype (round to nearest even; integers truncate toward zero).
HostArray make_array(DType dtype, std::span<const double> values);
// Round one value to dtype and back, as storing it in memory would.
double round_to(DType dtype, double value);

// Simulated memory. In timing-only simulations write_array only checks the range.
Ptr alloc_array(Simulation& sim, DType dtype, std::int64_t n);
void write_array(Simulation& sim, Ptr p, const HostArray& a);
HostArray read_array(const Simulation& sim, Ptr p, DType dtype, std::int64_t n);
double read_element(const Simulation& sim, Ptr base, std::int64_t index, DType dtype);

// ---- Verification ------------------------------------------------------------------------------

// Unit roundoff (half an ulp at 1) of a dtype: f16 2^-11, bf16 2^-8, f32 2^-24, f8e4m3 2^-4,
// f8e5m2 2^-3; integers and bool 0 (exact).
double unit_roundoff(DType dtype);
// The smallest normal magnitude: below it a dtype only keeps absolute precision.
double min_normal(DType dtype);

// E[x^2] of Fill::signed_unit values (|x| uniform in [1/16, 1]): (1 - 16^-3) / (3 * 15/16).
inline constexpr double kSignedUnitMeanSquare = (1.0 - 1.0 / 4096.0) / (3.0 * 15.0 / 16.0);

// For a dot product of length k of Fill::signed_unit values accumulated in f32 and rounded to
// `out`: the error scale is the standard deviation of the result, sqrt(k) E[x^2] (results
// smaller than that are measured against it, since cancellation leaves only absolute
// accuracy), and the tolerance is one rounding to `out` (u_out |ref|) plus the f32
// accumulation: each of the k additions errs by at most 2^-24 times a partial sum, and the
// partial sums (a random walk) stay within about 4 standard deviations, so k * 4 * 2^-24
// relative to the scale.
double dot_error_scale(std::int64_t k, double mean_square = kSignedUnitMeanSquare);
double dot_tolerance(DType out, std::int64_t k);

// |value - ref| / max(|ref|, scale): relative error, measured against `scale` where |ref| is
// smaller (cancellation and underflow leave only absolute accuracy there).
double relative_error(double value, double ref, double scale);

// The worst relative error over the elements checked.
struct ErrorCheck {
  double scale = 0;
  double max_rel = 0;
  std::uint64_t checked = 0;
  std::int64_t worst_index = -1;
  double worst_value = 0, worst_ref = 0;

  explicit ErrorCheck(double s) : scale(s) {}
  void add(std::int64_t index, double value, double ref) { add(index, value, ref, scale); }
  void add(std::int64_t index, double value, double ref, double element_scale);
  // Elements first_index, first_index + 1, ... with the common scale (a tight loop).
  void add_range(std::int64_t first_index, const double* values, const double* refs,
                 std::int64_t n);
  void merge(const ErrorCheck& other);
};

// Indices to check of an output of n elements: all of them when n <= count, else `count`
// distinct indices drawn from (seed), sorted.
std::vector<std::int64_t> sample_indices(std::int64_t n, std::int64_t count, std::uint64_t seed);

// How many output elements a harness checks: all of them when the reference costs at most
// 2^26 multiply-adds (outputs x work_per_output), else a sample of 4096.
std::int64_t elements_to_check(std::int64_t outputs, std::int64_t work_per_output);

// Fills verified / max_rel_error / tolerance / elements_checked and details["verification"]
// (what was checked, against what, and the worst element).
void set_verification(Outcome& out, const ErrorCheck& check, double tolerance,
                      const std::string& what);

// Verifies C = A . B (a: M x K, b: K x N, logical row-major) as computed in the simulation:
// element (i, j) of C is at flat element index index_of(i, j) from `c`. Every element is
// checked when the fp64 reference is affordable (elements_to_check), else a sample drawn from
// `seed`; the tolerance is one rounding of an f32-accumulated dot product of length K
// (dot_tolerance). Fills the outcome as set_verification does.
void verify_gemm(Outcome& out, const Simulation& sim, Ptr c, DType dtype, const HostArray& a,
                 const HostArray& b, std::int64_t M, std::int64_t K, std::int64_t N,
                 std::uint64_t seed,
                 const std::function<std::int64_t(std::int64_t, std::int64_t)>& index_of);

// ---- Several launches
// ----------------------------------------------------------------------------

// One RunResult for launches run one after another: simulated times, FLOPs, bytes, events and
// wall time add up; the access log and programs are the last launch's; per-PE and per-link
// figures and the packet count are the last launch's too (stats.launches keeps every launch's
// statistics, and the report's "launches" their reports).
RunResult sum_runs(std::vector<RunResult> runs);

}  // namespace cubesim::kernels
