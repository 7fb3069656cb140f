#include "tools/cubesim/option_values.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <system_error>

#include "triton_emu/errors.hpp"

namespace cubesim::cli {

namespace {

// Whether `text` is a decimal integer as a person writes it: an optional minus sign, then digits
// with no leading zero (a leading zero is how C, and std::stoll, mark octal).
bool plain_decimal_integer(std::string_view text) {
  const std::string_view digits = text.starts_with('-') ? text.substr(1) : text;
  if (digits.empty() || (digits.size() > 1 && digits[0] == '0')) return false;
  return std::all_of(digits.begin(), digits.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

// Whether `text` is a decimal number, whole: no hex float, no leading blank or plus sign.
bool plain_decimal_number(std::string_view text) {
  double x = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(x);
}

}  // namespace

kernels::Params parse_kernel_params(const kernels::KernelInfo& kernel,
                                    const std::vector<std::string>& assignments) {
  std::set<std::string> seen;
  for (const auto& a : assignments) {
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0) continue;  // parse_params says what is wrong
    const std::string name = a.substr(0, eq), value = a.substr(eq + 1);
    if (!seen.insert(name).second) {
      std::string given;
      for (const auto& b : assignments)
        if (b.compare(0, eq + 1, name + "=") == 0) given += (given.empty() ? "" : ", ") + b;
      throw UsageError("-p " + name + " is given more than once (" + given +
                       "); give each parameter once");
    }
    const auto spec = std::find_if(kernel.params.begin(), kernel.params.end(),
                                   [&](const kernels::ParamSpec& p) { return p.name == name; });
    if (spec == kernel.params.end()) continue;  // parse_params lists the parameters
    const std::string where = "parameter " + name + " of kernel " + kernel.name;
    const bool number = spec->type == kernels::ParamSpec::Type::integer ||
                        spec->type == kernels::ParamSpec::Type::real;
    // Text the kernel's parser refuses anyway ('lots') gets its message; only what it would
    // misread gets ours.
    if (number && !plain_decimal_number(value)) (void)kernels::parse_params(kernel, {a});
    if (spec->type == kernels::ParamSpec::Type::integer && !plain_decimal_integer(value)) {
      const std::string sign = value.starts_with('-') ? "-" : "";
      const std::string digits = value.substr(sign.size());
      const auto first = digits.find_first_not_of('0');
      const std::string without_zeros = first == std::string::npos ? "0" : digits.substr(first);
      if (digits.starts_with('0') && plain_decimal_integer(without_zeros))
        throw UsageError(where + ": '" + value +
                         "' has a leading zero; integers are decimal only (not octal), so write "
                         "it without the zeros, e.g. -p " +
                         name + "=" + sign + without_zeros);
      throw UsageError(where + ": '" + value +
                       "' is not a decimal integer; write digits only (no 0x, octal, exponent "
                       "or blanks), e.g. -p " +
                       name + "=" + spec->default_value.dump());
    }
    if (spec->type == kernels::ParamSpec::Type::real && !plain_decimal_number(value))
      throw UsageError(where + ": '" + value + "' is not a decimal number; write e.g. -p " + name +
                       "=" + spec->default_value.dump());
  }
  return kernels::parse_params(kernel, assignments);
}

std::uint64_t parse_byte_size(std::string_view text, std::string_view flag) {
  const auto bad = [&](const std::string& why) {
    return UsageError(std::string(flag) + " " + std::string(text) + ": " + why +
                      "; give bytes with an optional K, M, G or T suffix (1024-based), e.g. 65536, "
                      "64K or 1M");
  };
  std::size_t i = 0;
  std::uint64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
    const auto digit = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) throw bad("too large");
    value = value * 10 + digit;
    ++i;
  }
  if (i == 0) throw bad("not a size");
  std::string suffix;
  for (char c : text.substr(i))
    suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (suffix.empty() || suffix == "B")
    shift = 0;
  else if (suffix == "K" || suffix == "KB" || suffix == "KIB")
    shift = 10;
  else if (suffix == "M" || suffix == "MB" || suffix == "MIB")
    shift = 20;
  else if (suffix == "G" || suffix == "GB" || suffix == "GIB")
    shift = 30;
  else if (suffix == "T" || suffix == "TB" || suffix == "TIB")
    shift = 40;
  else
    throw bad("unknown suffix '" + std::string(text.substr(i)) + "'");
  if (shift > 0 && value > (std::numeric_limits<std::uint64_t>::max() >> shift))
    throw bad("too large");
  return value << shift;
}

namespace {

// "10us", "1.5 ns", "0": picoseconds, exactly (a fraction finer than 1 ps is an error).
std::uint64_t parse_duration_ps(std::string_view text,
                                const std::function<UsageError(const std::string&)>& bad) {
  std::size_t i = 0;
  std::uint64_t whole = 0;
  std::string fraction;
  const auto too_large = [&] { return bad("'" + std::string(text) + "' is too large"); };
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
    const auto digit = static_cast<std::uint64_t>(text[i] - '0');
    if (whole > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) throw too_large();
    whole = whole * 10 + digit;
    ++i;
  }
  const std::size_t digits = i;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0)
      fraction += text[i++];
  }
  if (digits == 0 && fraction.empty()) throw bad("'" + std::string(text) + "' is not a time");
  while (i < text.size() && text[i] == ' ') ++i;
  const std::string_view unit = text.substr(i);
  std::uint64_t ps_per_unit = 0;
  int unit_digits = 0;  // log10(ps_per_unit)
  if (unit == "ps") {
    ps_per_unit = 1;
  } else if (unit == "ns") {
    ps_per_unit = 1'000, unit_digits = 3;
  } else if (unit == "us") {
    ps_per_unit = 1'000'000, unit_digits = 6;
  } else if (unit == "ms") {
    ps_per_unit = 1'000'000'000, unit_digits = 9;
  } else if (unit == "s") {
    ps_per_unit = 1'000'000'000'000, unit_digits = 12;
  } else if (unit.empty() && whole == 0 && fraction.find_first_not_of('0') == std::string::npos) {
    return 0;  // "0" needs no unit
  } else {
    throw bad("'" + std::string(text) + "' needs a unit: ps, ns, us, ms or s");
  }
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  if (static_cast<int>(fraction.size()) > unit_digits)
    throw bad("'" + std::string(text) + "' is finer than 1 ps");
  if (whole > std::numeric_limits<std::uint64_t>::max() / ps_per_unit) throw too_large();
  std::uint64_t ps = whole * ps_per_unit;
  std::uint64_t frac_ps = 0;
  for (int d = 0; d < unit_digits; ++d)
    frac_ps = frac_ps * 10 +
              (d < static_cast<int>(fraction.size())
                   ? static_cast<std::uint64_t>(fraction[static_cast<std::size_t>(d)] - '0')
                   : 0);
  if (frac_ps > std::numeric_limits<std::uint64_t>::max() - ps) throw too_large();
  return ps + frac_ps;
}

}  // namespace

std::uint64_t parse_duration(std::string_view text, std::string_view flag) {
  return parse_duration_ps(text, [&](const std::string& why) {
    return UsageError(std::string(flag) + " " + std::string(text) + ": " + why +
                      "; give a simulated time with a unit ps, ns, us, ms or s, e.g. 10us");
  });
}

std::pair<std::uint64_t, std::uint64_t> parse_time_window(std::string_view text,
                                                          std::string_view flag) {
  const auto bad = [&](const std::string& why) {
    return UsageError(std::string(flag) + " " + std::string(text) + ": " + why +
                      "; give START:END in simulated time with units ps, ns, us, ms or s, e.g. "
                      "0:10us or 5us: (from 5 us to the end)");
  };
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos)
    throw bad("not one START:END pair");
  const std::string_view start_text = text.substr(0, colon), end_text = text.substr(colon + 1);
  const std::uint64_t start = start_text.empty() ? 0 : parse_duration_ps(start_text, bad);
  const std::uint64_t end = end_text.empty() ? std::numeric_limits<std::uint64_t>::max()
                                             : parse_duration_ps(end_text, bad);
  if (start >= end) throw bad("START is not before END");
  return {start, end};
}

std::uint64_t parse_stack_size(const std::string& text) {
  // Below 16K a fiber cannot run a kernel at all; emu's stack pool would silently round up to
  // it, and a silent clamp is what the design forbids. Above 1G it is a typo: every PE gets one.
  constexpr std::uint64_t kMinStackBytes = 16 * 1024;
  constexpr std::uint64_t kMaxStackBytes = 1ULL << 30;
  const std::uint64_t bytes = parse_byte_size(text, "--stack-size");
  if (bytes < kMinStackBytes || bytes > kMaxStackBytes)
    throw UsageError("--stack-size " + text + " (" + std::to_string(bytes) +
                     " bytes) is out of range; allowed: 16K to 1G, e.g. --stack-size 256K");
  return bytes;
}

Grid parse_grid(const std::string& text) {
  if (text == "hardware") return Grid{};
  const auto bad = [&text](const std::string& why) {
    return UsageError("--grid " + text + ": " + why +
                      "; give the programs per axis as X, XxY or XxYxZ (e.g. --grid 16384 or "
                      "--grid 64x4x2), or `hardware` for one program per PE");
  };
  std::int64_t dims[3] = {1, 1, 1};
  std::size_t axis = 0, pos = 0;
  for (;;) {
    if (axis == 3) throw bad("more than three axes");
    const std::size_t end = text.find('x', pos);
    const std::string part = text.substr(pos, end == std::string::npos ? end : end - pos);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos)
      throw bad("'" + part + "' is not a whole number of programs");
    if (part.size() > 10 || std::stoll(part) < 1 || std::stoll(part) > kMaxGridDim)
      throw bad("axis " + std::to_string(axis) + " has " + part +
                " programs; each axis takes 1 to 2^31 - 1 (" + std::to_string(kMaxGridDim) + ")");
    dims[axis++] = std::stoll(part);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return Grid::logical(dims[0], dims[1], dims[2]);
}

std::string grid_text(const Grid& g) {
  if (!g.dispatched) return "hardware";
  return std::to_string(g.pes) + "x" + std::to_string(g.cubes) + "x" + std::to_string(g.sips);
}

CLI::Validator unsigned_64_validator(std::string example) {
  return CLI::Validator(
      [example](std::string& text) -> std::string {
        const std::string why = "must be a whole number from 0 to " +
                                std::to_string(std::numeric_limits<std::uint64_t>::max()) +
                                ", e.g. " + example;
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
          return text + " " + why;
        std::uint64_t value = 0;
        for (char c : text) {
          const auto digit = static_cast<std::uint64_t>(c - '0');
          if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
            return text + " is too large: it " + why;
          value = value * 10 + digit;
        }
        return "";
      },
      "UINT64");
}

}  // namespace cubesim::cli
