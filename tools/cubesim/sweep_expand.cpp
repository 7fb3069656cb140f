#include "tools/cubesim/sweep_expand.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>

#include "components/spec/schema.hpp"
#include "components/spec/spec.hpp"
#include "kernels/registry.hpp"
#include "tools/cubesim/common.hpp"
#include "tools/cubesim/option_values.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::cli::sweep {

namespace {

using nlohmann::json;

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

// Commas that separate items: not inside [], {} or a JSON string.
std::vector<std::string> split_items(std::string_view list) {
  std::vector<std::string> items;
  int depth = 0;
  bool in_string = false, escaped = false;
  std::string current;
  for (char c : list) {
    if (in_string) {
      current += c;
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '[' || c == '{') ++depth;
    if ((c == ']' || c == '}') && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      items.push_back(trim(current));
      current.clear();
      continue;
    }
    current += c;
  }
  items.push_back(trim(current));
  return items;
}

bool is_integer_text(std::string_view s) {
  std::size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

// A finite number, or nullopt.
std::optional<double> parse_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(x)) return std::nullopt;
  return x;
}

std::string format_value(double x, bool integral) {
  if (integral && std::fabs(x) < 9e18 && std::fabs(x - std::round(x)) < 1e-9)
    return std::to_string(static_cast<long long>(std::llround(x)));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.12g", x);
  return buf;
}

std::uint64_t fnv1a(std::string_view text, std::uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string assignment_name(std::string_view assignment) {
  const auto eq = assignment.find('=');
  return trim(assignment.substr(0, eq));
}

// Value of a text as --set reads it: JSON when it parses, else the text as a string.
json value_json(const std::string& text) {
  json v = json::parse(text, nullptr, false);
  if (v.is_discarded()) return text;
  return v;
}

std::string pointer_of(std::string_view dotted) {
  std::string p = "/";
  for (char c : dotted) p += c == '.' ? '/' : c;
  return p;
}

// Mixed-radix index over the dimensions of one kind (first slowest).
std::uint64_t sub_index(const std::vector<Dimension>& dims, const std::vector<std::size_t>& coords,
                        Dimension::Kind kind) {
  std::uint64_t i = 0;
  for (std::size_t d = 0; d < dims.size(); ++d)
    if (dims[d].kind == kind) i = i * dims[d].values.size() + coords[d];
  return i;
}

std::uint64_t sub_count(const std::vector<Dimension>& dims, Dimension::Kind kind) {
  std::uint64_t n = 1;
  for (const auto& d : dims)
    if (d.kind == kind) n *= d.values.size();
  return n;
}

// The value index per dimension of one kind for its sub-index `i` (inverse of sub_index).
std::vector<std::size_t> sub_coordinates(const std::vector<Dimension>& dims, Dimension::Kind kind,
                                         std::uint64_t i) {
  std::vector<std::size_t> coords(dims.size(), 0);
  for (std::size_t d = dims.size(); d-- > 0;) {
    if (dims[d].kind != kind) continue;
    coords[d] = static_cast<std::size_t>(i % dims[d].values.size());
    i /= dims[d].values.size();
  }
  return coords;
}

std::string describe_values(const std::vector<Dimension>& dims,
                            const std::vector<std::size_t>& coords, Dimension::Kind kind) {
  std::string s;
  for (std::size_t d = 0; d < dims.size(); ++d)
    if (dims[d].kind == kind)
      s += (s.empty() ? "" : ", ") + dims[d].field + "=" + dims[d].values[coords[d]];
  return s;
}

}  // namespace

std::vector<std::string> expand_range(std::string_view field, std::string_view item) {
  const std::string where = "--vary " + std::string(field) + ": range '" + std::string(item) + "'";
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const auto colon = item.find(':', start);
    parts.push_back(
        trim(item.substr(start, colon == std::string_view::npos ? colon : colon - start)));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  const std::string forms =
      "write START:STOP:+STEP, START:STOP:-STEP, START:STOP:xFACTOR or START:STOP:/FACTOR "
      "(e.g. 1:8:+1 or 64:1024:x2)";
  if (parts.size() < 2 || parts.size() > 3) throw UsageError(where + " is not a range; " + forms);
  const auto first = parse_number(parts[0]), last = parse_number(parts[1]);
  if (!first || !last)
    throw UsageError(where + ": '" + (!first ? parts[0] : parts[1]) + "' is not a number; " +
                     forms);
  char op = '+';
  std::string step_text = parts.size() == 3 ? parts[2] : "1";
  if (!step_text.empty() && std::string("+-xX*/").find(step_text[0]) != std::string::npos) {
    op = step_text[0] == 'X' ? 'x' : step_text[0] == '*' ? 'x' : step_text[0];
    step_text = trim(step_text.substr(1));
  }
  const auto step = parse_number(step_text);
  if (!step || *step <= 0)
    throw UsageError(where + ": the step '" + (parts.size() == 3 ? parts[2] : "") +
                     "' is not a positive number; " + forms);
  const bool geometric = op == 'x' || op == '/';
  if (geometric && *step <= 1)
    throw UsageError(where + ": a geometric factor must be greater than 1; " + forms);
  const bool up = op == '+' || op == 'x';
  if ((up && *first > *last) || (!up && *first < *last))
    throw UsageError(where + " is empty: it counts " + (up ? "up" : "down") + " from " + parts[0] +
                     " but ends at " + parts[1] + "; write " + parts[1] + ":" + parts[0] + ":" +
                     std::string(1, op == 'x' ? 'x' : op) + step_text + " or " + parts[0] + ":" +
                     parts[1] + ":" + (up ? (geometric ? "/" : "-") : (geometric ? "x" : "+")) +
                     step_text);
  if (geometric && (*first <= 0 || *last <= 0))
    throw UsageError(where + ": a geometric range needs positive START and STOP");
  const bool integral = is_integer_text(parts[0]) && is_integer_text(step_text);

  std::vector<std::string> values;
  const double slack = 1e-9;
  for (std::size_t i = 0;; ++i) {
    const double k = static_cast<double>(i);
    double v = 0;
    if (op == '+')
      v = *first + k * *step;
    else if (op == '-')
      v = *first - k * *step;
    else if (op == 'x')
      v = *first * std::pow(*step, k);
    else
      v = *first / std::pow(*step, k);
    const double tolerance = slack * std::max(1.0, std::fabs(*last));
    if (up ? v > *last + tolerance : v < *last - tolerance) break;
    if (values.size() >= kMaxValuesPerField)
      throw UsageError(where + " has more than " + std::to_string(kMaxValuesPerField) +
                       " values; use a larger step");
    values.push_back(format_value(v, integral));
    if (*first == *last) break;
  }
  return values;
}

Dimension parse_vary(std::string_view text) {
  const auto eq = text.find('=');
  const std::string field = eq == std::string_view::npos ? "" : trim(text.substr(0, eq));
  if (field.empty())
    throw UsageError("--vary " + std::string(text) +
                     ": expected FIELD=V1,V2,... (a spec path, param.NAME or kernel), e.g. "
                     "--vary system.ucie.bandwidth_GBps=64:1024:x2 or --vary param.M=512,1024");
  Dimension d;
  d.field = field;
  if (field == "kernel") {
    d.kind = Dimension::Kind::kernel;
    d.name = field;
  } else if (field.rfind("param.", 0) == 0) {
    d.kind = Dimension::Kind::param;
    d.name = field.substr(6);
    if (d.name.empty() || d.name.find('.') != std::string::npos)
      throw UsageError("--vary " + field +
                       ": write param.NAME with a kernel parameter's name, e.g. "
                       "param.M ('cubesim list' shows them)");
  } else {
    d.kind = Dimension::Kind::spec;
    d.name = field;
  }
  const std::string list(text.substr(eq + 1));
  const auto items = split_items(list);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string& item = items[i];
    if (item.empty())
      throw UsageError("--vary " + field + ": " +
                       (items.size() == 1
                            ? std::string("no values given (an empty product)")
                            : "value " + std::to_string(i + 1) + " of '" + list + "' is empty") +
                       "; give values as V1,V2,... or a range such as 1:8:+1");
    std::vector<std::string> expanded;
    const bool literal = item[0] == '[' || item[0] == '{' || item[0] == '"';
    if (!literal && item.find(':') != std::string::npos)
      expanded = expand_range(field, item);
    else
      expanded.push_back(item);
    for (auto& v : expanded) {
      if (!seen.insert(v).second)
        throw UsageError("--vary " + field + ": the value " + v +
                         " is listed twice; each value may appear once");
      if (d.values.size() >= kMaxValuesPerField)
        throw UsageError("--vary " + field + ": more than " + std::to_string(kMaxValuesPerField) +
                         " values");
      d.values.push_back(std::move(v));
    }
  }
  return d;
}

std::uint64_t point_count(const std::vector<Dimension>& dims) {
  std::uint64_t n = 1;
  for (const auto& d : dims) {
    if (d.values.empty())
      throw UsageError("--vary " + d.field + ": no values given (an empty product)");
    if (n > kMaxPoints / d.values.size())
      throw UsageError("the sweep has more than " + std::to_string(kMaxPoints) +
                       " points; vary fewer fields or fewer values");
    n *= d.values.size();
  }
  return n;
}

std::vector<std::size_t> coordinates(const std::vector<Dimension>& dims, std::uint64_t index) {
  std::vector<std::size_t> c(dims.size(), 0);
  for (std::size_t d = dims.size(); d-- > 0;) {
    c[d] = static_cast<std::size_t>(index % dims[d].values.size());
    index /= dims[d].values.size();
  }
  return c;
}

Point make_point(const Definition& def, std::uint64_t index) {
  Point p;
  p.index = index;
  p.kernel = def.kernel;
  p.sets = def.sets;
  p.params = def.params;
  p.values = json::object();
  const auto c = coordinates(def.dims, index);
  for (std::size_t d = 0; d < def.dims.size(); ++d) {
    const Dimension& dim = def.dims[d];
    const std::string& v = dim.values[c[d]];
    switch (dim.kind) {
      case Dimension::Kind::spec:
        p.sets.push_back(dim.name + "=" + v);
        break;
      case Dimension::Kind::param:
        p.params.push_back(dim.name + "=" + v);
        break;
      case Dimension::Kind::kernel:
        p.kernel = v;
        break;
    }
    p.values[dim.field] = dim.kind == Dimension::Kind::kernel ? json(v) : value_json(v);
    p.label += (p.label.empty() ? "" : ", ") + dim.field + "=" + v;
  }
  // A varied parameter's column holds the value the point runs with, as the kernel parsed it,
  // not the text of --vary (which may spell it differently, e.g. 1e3 for a real).
  bool any_param = false;
  for (const Dimension& dim : def.dims) any_param = any_param || dim.kind == Dimension::Kind::param;
  if (any_param) {
    try {
      const kernels::Params used = parse_kernel_params(kernels::find_kernel(p.kernel), p.params);
      for (const Dimension& dim : def.dims)
        if (dim.kind == Dimension::Kind::param) p.values[dim.field] = used.at(dim.name);
    } catch (const UsageError&) {
      // A value this point's kernel does not take: the point runs as a usage_error row, and
      // its columns show the values as given.
    }
  }
  return p;
}

std::vector<std::string> kernels_of(const Definition& def) {
  for (const auto& d : def.dims)
    if (d.kind == Dimension::Kind::kernel) return d.values;
  return {def.kernel};
}

std::string key_hex(std::uint64_t key) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(key));
  return buf;
}

namespace {
// Why a combination of spec values is refused: the varied field its first problem is about,
// else the whole combination.
std::string refusal(const Definition& def, const std::vector<std::size_t>& c,
                    const components::SpecError& e) {
  const components::SpecIssue& issue = e.issues().front();
  for (std::size_t d = 0; d < def.dims.size(); ++d) {
    const Dimension& dim = def.dims[d];
    if (dim.kind != Dimension::Kind::spec) continue;
    const std::string ptr = pointer_of(dim.name);
    if (issue.pointer == ptr || issue.pointer.rfind(ptr + "/", 0) == 0)
      return "--vary " + dim.field + "=" + dim.values[c[d]] + ": " + issue.detail;
  }
  const std::string combo = describe_values(def.dims, c, Dimension::Kind::spec);
  return (combo.empty() ? "" : "at " + combo + ": ") + issue.message();
}
}  // namespace

namespace {
// The offset of the first byte of `s` that is not well-formed UTF-8, or npos.
std::size_t invalid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80           ? 1
                          : (c >> 5) == 0x6  ? 2
                          : (c >> 4) == 0xE  ? 3
                          : (c >> 3) == 0x1E ? 4
                                             : 0;
    if (n == 0 || i + n > s.size() || (n == 2 && c < 0xC2)) return i;
    for (std::size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return i;
    i += n;
  }
  return std::string_view::npos;
}
}  // namespace

std::vector<std::uint64_t> validate(const Definition& def) {
  using Kind = Dimension::Kind;
  // The workers get every point as a line of JSON, which holds UTF-8 text only.
  if (const std::size_t at = invalid_utf8(def.spec_file); at != std::string_view::npos)
    throw UsageError(fmt::format(
        "the spec path '{}' is not UTF-8 (byte {} is 0x{:02x}); the sweep's workers take it as "
        "JSON text, which is UTF-8: rename the file, or link it under a UTF-8 name",
        def.spec_file, at, static_cast<unsigned char>(def.spec_file[at])));
  // The fields: each varied once, and not also fixed.
  std::set<std::string> fields;
  int kernel_dims = 0;
  for (const auto& d : def.dims) {
    if (!fields.insert(d.field).second)
      throw UsageError("--vary " + d.field + " is given twice; give all its values in one --vary");
    if (d.kind == Kind::kernel) ++kernel_dims;
    if (d.kind == Kind::spec)
      for (const auto& s : def.sets)
        if (assignment_name(s) == d.name)
          throw UsageError("--vary " + d.field + " and --set " + s +
                           " set the same field; drop one of them");
    if (d.kind == Kind::param)
      for (const auto& s : def.params)
        if (assignment_name(s) == d.name)
          throw UsageError("--vary " + d.field + " and -p " + s +
                           " set the same parameter; drop one of them");
  }
  if (kernel_dims > 0 && !def.kernel.empty())
    throw UsageError("the kernel is given twice (KERNEL " + def.kernel +
                     " and --vary kernel=...); give one of them");
  if (kernel_dims == 0 && def.kernel.empty())
    throw UsageError("no kernel given; name one as KERNEL, or vary it with --vary kernel=A,B");
  const std::uint64_t points = point_count(def.dims);

  // Kernels and parameters. Parameters are independent of each other, so each varied value is
  // checked on its own, which names exactly the value that is wrong.
  std::vector<const kernels::KernelInfo*> kernel_infos;
  for (const auto& name : kernels_of(def)) {
    try {
      kernel_infos.push_back(&kernels::find_kernel(name));
    } catch (const UsageError& e) {
      throw UsageError(kernel_dims > 0 ? "--vary kernel: " + std::string(e.what()) : e.what());
    }
  }
  for (const auto* k : kernel_infos) {
    try {
      parse_kernel_params(*k, def.params);
    } catch (const UsageError& e) {
      std::string hint;
      for (const auto& p : def.params)
        if (p.find(',') != std::string::npos)
          hint = "; -p takes one value: to sweep a parameter write --vary param." +
                 assignment_name(p) + "=" + p.substr(p.find('=') + 1);
      throw UsageError(std::string(e.what()) + hint);
    }
  }
  // A varied parameter's value is refused when no kernel takes it; one that only some kernels
  // take makes usage_error rows for the others (--vary kernel=allreduce,allgather --vary
  // param.algorithm=ring,tree).
  for (const auto& d : def.dims) {
    if (d.kind != Kind::param) continue;
    for (const auto& v : d.values) {
      std::vector<std::string> one = def.params;
      one.push_back(d.name + "=" + v);
      std::string first_error;
      bool taken = false;
      for (const auto* k : kernel_infos) {
        try {
          parse_kernel_params(*k, one);
          taken = true;
        } catch (const UsageError& e) {
          if (first_error.empty()) first_error = e.what();
        }
      }
      if (!taken) throw UsageError("--vary " + d.field + "=" + v + ": " + first_error);
    }
  }

  // Spec paths, then every distinct spec: cross-field rules can make a combination invalid
  // although each value is valid alone.
  const components::Spec base = components::Spec::load(def.spec_file);
  for (const auto& d : def.dims) {
    if (d.kind != Kind::spec) continue;
    if (components::spec::find_field(d.name) != nullptr && d.name != "extends") continue;
    try {
      (void)base.with(d.name, json());
    } catch (const components::SpecError& e) {
      throw UsageError("--vary " + d.field + ": " + e.issues().front().detail);
    }
    throw UsageError("--vary " + d.field +
                     ": not a spec field");  // with() accepted it: unreachable
  }
  const std::uint64_t spec_combos = sub_count(def.dims, Kind::spec);
  std::vector<std::uint64_t> spec_hash(spec_combos);
  // Per varied spec field and value: whether some combination accepts it, else why not.
  std::vector<std::vector<bool>> accepted;
  std::vector<std::vector<std::string>> refusals;
  for (const auto& d : def.dims) {
    const std::size_t n = d.kind == Kind::spec ? d.values.size() : 0;
    accepted.emplace_back(n, false);
    refusals.emplace_back(n);
  }
  std::string first_refusal;  // with no varied spec field: why the one spec is refused
  for (std::uint64_t s = 0; s < spec_combos; ++s) {
    const auto c = sub_coordinates(def.dims, Kind::spec, s);
    std::vector<std::string> sets = def.sets;
    for (std::size_t d = 0; d < def.dims.size(); ++d)
      if (def.dims[d].kind == Kind::spec)
        sets.push_back(def.dims[d].name + "=" + def.dims[d].values[c[d]]);
    try {
      spec_hash[s] = fnv1a(base.with_assignments(sets).json().dump());
      for (std::size_t d = 0; d < def.dims.size(); ++d)
        if (def.dims[d].kind == Kind::spec) accepted[d][c[d]] = true;
    } catch (const components::SpecError& e) {
      // A combination the cross-field rules refuse runs as a usage_error row, with its reason.
      spec_hash[s] = fnv1a("refused\n" + fmt::format("{}", fmt::join(sets, "\n")));
      for (std::size_t d = 0; d < def.dims.size(); ++d)
        if (def.dims[d].kind == Kind::spec && refusals[d][c[d]].empty())
          refusals[d][c[d]] = refusal(def, c, e);
      if (spec_combos == 1) first_refusal = refusal(def, c, e);
    }
  }
  // A value refused in every combination is a mistake, not a what-if: the study is refused.
  for (std::size_t d = 0; d < def.dims.size(); ++d)
    for (std::size_t i = 0; i < accepted[d].size(); ++i)
      if (!accepted[d][i]) throw UsageError(refusals[d][i]);
  if (!first_refusal.empty()) throw UsageError(first_refusal);

  // Parameter sets per kernel.
  const std::uint64_t param_combos = sub_count(def.dims, Kind::param);
  std::vector<std::vector<std::uint64_t>> param_hash(kernel_infos.size(),
                                                     std::vector<std::uint64_t>(param_combos));
  for (std::size_t k = 0; k < kernel_infos.size(); ++k) {
    for (std::uint64_t p = 0; p < param_combos; ++p) {
      const auto c = sub_coordinates(def.dims, Kind::param, p);
      std::vector<std::string> params = def.params;
      for (std::size_t d = 0; d < def.dims.size(); ++d)
        if (def.dims[d].kind == Kind::param)
          params.push_back(def.dims[d].name + "=" + def.dims[d].values[c[d]]);
      std::string resolved;
      try {
        resolved = parse_kernel_params(*kernel_infos[k], params).dump();
      } catch (const UsageError& e) {  // a value this kernel does not take: a usage_error row
        resolved = std::string("refused: ") + e.what();
      }
      param_hash[k][p] = fnv1a(kernel_infos[k]->name + "\n" + resolved);
    }
  }

  const std::string options = "timing_only=" + std::string(def.timing_only ? "1" : "0") +
                              " seed=" + std::to_string(def.seed) +
                              " stack=" + std::to_string(def.stack_size) +
                              (def.timing_only ? "" : " backend=" + def.backend) +
                              (def.network == "packet" ? "" : " network=" + def.network) +
                              (def.grid == "hardware" ? "" : " grid=" + def.grid);
  std::vector<std::uint64_t> keys(points);
  for (std::uint64_t i = 0; i < points; ++i) {
    const auto c = coordinates(def.dims, i);
    const auto s = sub_index(def.dims, c, Kind::spec);
    const auto p = sub_index(def.dims, c, Kind::param);
    const auto k = sub_index(def.dims, c, Kind::kernel);
    keys[i] = fnv1a(key_hex(spec_hash[s]) + key_hex(param_hash[k][p]) + options);
  }
  return keys;
}

}  // namespace cubesim::cli::sweep
