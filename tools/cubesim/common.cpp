#include "tools/cubesim/common.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <system_error>

#include "components/dtype.hpp"
#include "emu/fatal_signal.hpp"
#include "kernels/last_words.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::cli {

namespace fs = std::filesystem;

nlohmann::json describe_system(const components::System& system) {
  nlohmann::json d = system.describe();
  const auto& ucie = system.config().ucie;
  if (components::has_grid(ucie.topology)) d["ucie_mesh"] = {ucie.mesh_x, ucie.mesh_y};
  const auto& sips = system.config().inter_sip;
  if (components::has_grid(sips.topology)) d["sip_grid"] = {sips.grid_x, sips.grid_y};
  return d;
}

std::string ops_unit(std::string_view dtype) {
  const auto t = dtype_from_name(dtype);
  return t && is_integer(*t) ? "OP" : "FLOP";
}

components::Spec load_spec(const std::string& file, const std::vector<std::string>& sets) {
  auto spec = components::Spec::load(file);
  if (!sets.empty()) spec = spec.with_assignments(sets);
  return spec;
}

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

namespace {
std::string& phase_text() {
  static std::string text = "reading the command line";
  return text;
}
}  // namespace

void set_phase(std::string phase) {
  phase_text() = std::move(phase);
}

const std::string& phase() {
  return phase_text();
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

namespace {

// An existing output that is a link (/dev/stdout) or not a regular file (a device, a pipe):
// written in place, since renaming a new file over it would replace the link or the device
// node rather than write where it leads.
bool is_stream_target(const fs::path& p) {
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(p, ec);
  if (ec || !fs::exists(link)) return false;
  if (fs::is_symlink(link)) return !fs::is_directory(p, ec);
  return !fs::is_regular_file(link) && !fs::is_directory(link);
}

}  // namespace

void check_output_path(const std::string& path, std::string_view flag) {
  if (path.empty()) throw UsageError(std::string(flag) + ": the file name is empty");
  const fs::path p(path);
  const std::string what = std::string(flag) + " " + path + ": ";
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw UsageError(what + "is a folder; name a file to write");
  if (is_stream_target(p)) {
    if (::access(path.c_str(), W_OK) != 0)
      throw UsageError(what + "cannot be written (" + std::strerror(errno) + ")");
    return;
  }
  const fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (!fs::exists(parent, ec))
    throw UsageError(what + "the folder " + parent.string() + " does not exist; create it first");
  if (!fs::is_directory(parent, ec))
    throw UsageError(what + parent.string() +
                     " is a file, not a folder; name a file inside a folder");
  // Outputs are written to a temporary file beside the target and renamed over it, so the test
  // is whether a file can be made in that folder: access() says yes for root in /proc and
  // /sys, where creating fails.
  std::string probe = (parent / ".cubesim-probe-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    throw UsageError(what + "cannot create files in the folder " + parent.string() + " (" +
                     std::strerror(errno) + "); choose a folder you can write to");
  ::close(fd);
  ::unlink(probe.c_str());
}

void check_distinct_outputs(
    const std::vector<std::pair<std::string_view, std::string>>& flag_paths) {
  for (std::size_t i = 0; i < flag_paths.size(); ++i)
    for (std::size_t j = i + 1; j < flag_paths.size(); ++j) {
      const auto& [flag_a, a] = flag_paths[i];
      const auto& [flag_b, b] = flag_paths[j];
      if (a.empty() || b.empty()) continue;
      std::error_code ec_a, ec_b;
      const fs::path ca = fs::weakly_canonical(fs::absolute(a), ec_a);
      const fs::path cb = fs::weakly_canonical(fs::absolute(b), ec_b);
      if (ec_a || ec_b ? a == b : ca == cb)
        throw UsageError(std::string(flag_a) + " " + a + " and " + std::string(flag_b) + " " + b +
                         " name the same file, and one would overwrite the other; give each its "
                         "own file");
    }
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

std::string to_pretty_json(const nlohmann::json& j) {
  // replace: a spec or file name that is not UTF-8 must not abort the report
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void write_file(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  if (is_stream_target(path)) {
    std::ofstream out(path, std::ios::binary);
    if (!out) throw UsageError("cannot write " + path + ": " + std::strerror(errno));
    fill(out);
    out.flush();
    if (!out) throw UsageError("cannot write " + path + ": " + std::strerror(errno));
    return;
  }
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw UsageError("cannot write " + tmp + ": " + std::strerror(errno));
    fill(out);
    out.close();
    if (!out) throw UsageError("cannot write " + tmp + ": " + std::strerror(errno));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    throw UsageError("cannot write " + path + ": " + why);
  }
}

void write_json_file(const std::string& path, const nlohmann::json& j) {
  write_file(path, [&](std::ostream& out) { out << to_pretty_json(j); });
}

std::uint64_t memory_limit_from_environment() {
  if (const char* limit = std::getenv("CUBESIM_MEMORY_LIMIT"); limit != nullptr && *limit != '\0')
    return parse_byte_size(limit, "CUBESIM_MEMORY_LIMIT");
  return 0;
}

std::unique_ptr<Simulation> make_simulation(const components::Spec& spec,
                                            const SimOptions& options) {
  SimOptions o = options;
  if (const std::uint64_t limit = memory_limit_from_environment(); limit != 0)
    o.host_memory_limit = limit;
  try {
    return std::make_unique<Simulation>(spec, o);
  } catch (const Error&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
}

kernels::Outcome run_kernel(const kernels::KernelInfo& kernel, Simulation& sim,
                            const kernels::Params& params) {
  const emu::FatalSignalScope last_words(
      kernels::kernel_last_words(kernel, kernels::kernel_registry().origin(kernel.name)));
  return kernel.run(sim, params);
}

}  // namespace cubesim::cli
