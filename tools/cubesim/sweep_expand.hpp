#pragma once
// What a `cubesim sweep` runs: its varied fields (--vary), each a list of values, and the
// cartesian product of them as numbered points. Parsing of value lists and ranges, decoding a
// point from its index, and checking every point's spec and parameters before anything runs.
// No processes here: this is the unit-testable part of the sweep.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace cubesim::cli::sweep {

// Caps that turn a typo (1:1e9:+1) into an error instead of a sweep that never ends.
inline constexpr std::size_t kMaxValuesPerField = 100'000;
inline constexpr std::uint64_t kMaxPoints = 1'000'000;

// One varied field: a spec field by dotted path, a kernel parameter (param.NAME) or the kernel.
struct Dimension {
  enum class Kind { spec, param, kernel };
  std::string
      field;  // as the CSV column names it: "system.ucie.bandwidth_GBps", "param.M", "kernel"
  Kind kind = Kind::spec;
  std::string name;                 // spec path, parameter name, or "kernel"
  std::vector<std::string> values;  // value texts, in the order given
};

// "FIELD=LIST". LIST is comma-separated items; an item is a value or a range:
//   START:STOP:+STEP  (or START:STOP, step 1)  arithmetic, STOP included when reached
//   START:STOP:-STEP                            arithmetic, counting down
//   START:STOP:xF (or *F)                       geometric, multiplying by F > 1
//   START:STOP:/F                               geometric, dividing by F > 1
// Items that start with [ { or " are JSON values and may contain commas and colons
// (system.cube.noc.mesh=[2,2],[4,4]). UsageError naming the field and the item otherwise.
Dimension parse_vary(std::string_view text);

// The values of one range item ("64:1024:x2" -> 64 128 256 512 1024). `field` for messages.
std::vector<std::string> expand_range(std::string_view field, std::string_view item);

// A sweep: the fixed part (spec, kernel, --set, -p and run options) and the varied fields.
struct Definition {
  std::string spec_file;
  std::string kernel;               // "" when a dimension varies the kernel
  std::vector<std::string> sets;    // fixed --set assignments
  std::vector<std::string> params;  // fixed -p assignments
  std::vector<Dimension> dims;      // first = outermost: it changes slowest
  bool timing_only = true;
  std::uint64_t seed = 1;
  std::uint64_t stack_size = 64 * 1024;
  std::string backend = "cpu";
  std::string network = "packet";  // NetworkModel name
  std::string grid = "hardware";   // --grid, as parse_grid reads it
};

// Product of the dimensions' sizes; UsageError above kMaxPoints or when a dimension is empty.
std::uint64_t point_count(const std::vector<Dimension>& dims);

// The value index along each dimension of point `index` (row-major, first dimension slowest).
std::vector<std::size_t> coordinates(const std::vector<Dimension>& dims, std::uint64_t index);

// Everything one point runs with: what `cubesim run` would get on its command line.
struct Point {
  std::uint64_t index = 0;
  std::string kernel;
  std::vector<std::string> sets;    // fixed --set first, then the varied spec fields
  std::vector<std::string> params;  // fixed -p first, then the varied parameters
  nlohmann::json values;            // {field: value text} of the varied fields, for the row
  std::string label;                // "system.ucie.bandwidth_GBps=64, param.M=512"
};
Point make_point(const Definition& def, std::uint64_t index);

// The names of the kernels the sweep runs, in the order they first appear.
std::vector<std::string> kernels_of(const Definition& def);

// Checks the sweep before any point runs, and returns one key per point: a hash of its
// effective spec document, kernel, parameters and run options, which names the point's result
// in a --out folder (so a resumed sweep finds the points it already ran, whatever their order).
// Every distinct spec (product of the spec dimensions) and parameter set (kernels x parameter
// dimensions) is validated once. Throws UsageError / SpecError naming the --vary field, the
// value and why: an unknown path or parameter, a value of the wrong type or out of range, a
// field varied twice or also given with --set / -p.
std::vector<std::uint64_t> validate(const Definition& def);

// 16 lowercase hex digits.
std::string key_hex(std::uint64_t key);

}  // namespace cubesim::cli::sweep
