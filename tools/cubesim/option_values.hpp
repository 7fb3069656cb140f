#pragma once
// Reading the values of cubesim's options and kernel parameters: sizes, durations, time windows,
// grids, unsigned 64-bit numbers and -p NAME=VALUE, each refused with a UsageError that names
// the option and shows a value that works.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/registry.hpp"
#include "triton_emu/launch/simulation.hpp"

namespace cubesim::cli {

// -p NAME=VALUE assignments -> the kernel's parameters (kernels::parse_params), after checking
// what that parser would accept silently: a NAME given twice (the last would win) and numbers
// that are not plain decimal (std::stoll's base 0 reads 016 as octal 14 and 0x10 as 16, stod
// reads hex floats). UsageError naming the assignment and the form to write.
kernels::Params parse_kernel_params(const kernels::KernelInfo& kernel,
                                    const std::vector<std::string>& assignments);

// "65536", "64K", "64KiB", "1M", "1MiB", "2G": bytes, with binary (1024) multipliers.
// UsageError naming `flag` for anything else.
std::uint64_t parse_byte_size(std::string_view text, std::string_view flag);

// A span of simulated time "START:END" (--trace-window): each a number with a unit ps, ns, us, ms
// or s ("0:10us", "1.5us:2us"); START left out is 0, END left out is the end of the run.
// UsageError naming `flag` for anything else, or when START is not before END.
std::pair<std::uint64_t, std::uint64_t> parse_time_window(std::string_view text,
                                                          std::string_view flag);

// A duration of simulated time with a unit, as in parse_time_window ("10us"); UsageError naming
// `flag` otherwise.
std::uint64_t parse_duration(std::string_view text, std::string_view flag);

// --stack-size: bytes with an optional K/M/G suffix, 16K to 1G (UsageError otherwise).
std::uint64_t parse_stack_size(const std::string& text);

// --grid: "hardware" (one program per PE, the default) or a logical grid "X", "XxY" or
// "XxYxZ" of 1 to 2^31 - 1 programs per axis (UsageError otherwise).
Grid parse_grid(const std::string& text);
// The text parse_grid reads back.
std::string grid_text(const Grid& grid);

// The check of an unsigned 64-bit option (--seed): a whole number from 0 to 2^64 - 1; its
// message ends with `example` of a good value. CLI11's
// own would wrap -1 around, and NonNegativeNumber prints its range as 309 digits.
CLI::Validator unsigned_64_validator(std::string example);

}  // namespace cubesim::cli
