#include "kernels/registry.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "kernels/attention_similarity.hpp"
#include "kernels/collectives/collective.hpp"
#include "kernels/gemm_2d.hpp"
#include "kernels/matmul.hpp"
#include "kernels/ring_attention.hpp"
#include "kernels/sharded_gemm.hpp"
#include "kernels/softmax_rows.hpp"
#include "kernels/splitk_gemm.hpp"
#include "kernels/tp_linear.hpp"
#include "kernels/vector_add.hpp"

namespace cubesim::kernels {

void register_shipped_kernels(Registry& registry) {
  for (auto info :
       {sharded_gemm_info, gemm_2d_info, matmul_info, vector_add_info, softmax_rows_info,
        attention_similarity_info, ring_attention_info, collectives::allreduce_info,
        collectives::reduce_scatter_info, collectives::allgather_info, collectives::broadcast_info,
        collectives::alltoall_info, tp_linear_info, splitk_gemm_info})
    registry.add(info());
}

Registry& kernel_registry() {
  static Registry all = [] {
    Registry r;
    r.adding_from_ = "cubesim";
    register_shipped_kernels(r);
    r.adding_from_ = "your program";
    return r;
  }();
  return all;
}

void register_kernel(KernelInfo kernel) {
  kernel_registry().add(std::move(kernel));
}

const std::deque<KernelInfo>& registry() {
  return kernel_registry().kernels();
}

const KernelInfo& find_kernel(std::string_view name) {
  return kernel_registry().find(name);
}

const KernelInfo& Registry::find(std::string_view name) const {
  std::string names;
  for (const auto& k : kernels_) {
    if (k.name == name) return k;
    names += (names.empty() ? "" : ", ") + k.name;
  }
  throw UsageError("unknown kernel '" + std::string(name) + "'; the kernels are: " + names +
                   " (cubesim list shows their parameters; a kernel of your own needs "
                   "--load PLUGIN.so, see docs/cli.md)");
}

const std::string& Registry::origin(std::string_view name) const {
  const auto it = origins_.find(name);
  if (it == origins_.end()) find(name);  // throws, listing the kernels
  return it->second;
}

namespace {

const char* type_name(ParamSpec::Type t) {
  switch (t) {
    case ParamSpec::Type::integer:
      return "an integer";
    case ParamSpec::Type::real:
      return "a number";
    case ParamSpec::Type::string:
      return "a string";
    case ParamSpec::Type::boolean:
      return "true or false";
  }
  return "?";
}

std::string number_text(double d) {
  return std::floor(d) == d ? std::to_string(static_cast<long long>(d)) : std::to_string(d);
}

std::string range_text(const ParamSpec& p) {
  return (p.min ? number_text(*p.min) : "-inf") + " to " + (p.max ? number_text(*p.max) : "inf");
}

// Names are typed on the command line, in -p NAME=VALUE and in sweep files.
bool is_plain_name(std::string_view name) {
  if (name.empty() || !(std::isalnum(static_cast<unsigned char>(name[0])) || name[0] == '_'))
    return false;
  for (const char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

bool default_has_type(const ParamSpec& p) {
  switch (p.type) {
    case ParamSpec::Type::integer:
      return p.default_value.is_number_integer();
    case ParamSpec::Type::real:
      return p.default_value.is_number() && std::isfinite(p.default_value.get<double>());
    case ParamSpec::Type::string:
      return p.default_value.is_string();
    case ParamSpec::Type::boolean:
      return p.default_value.is_boolean();
  }
  return false;
}

// The problem with one parameter's spec, or "" when it is sound.
std::string param_problem(const ParamSpec& p, const std::set<std::string>& earlier) {
  const bool numeric = p.type == ParamSpec::Type::integer || p.type == ParamSpec::Type::real;
  if (!is_plain_name(p.name))
    return "parameter '" + p.name +
           "' needs a name of letters, digits, '_', '-' or '.' (it is typed as -p NAME=VALUE)";
  const std::string where = "parameter " + p.name;
  if (earlier.count(p.name)) return where + " is declared twice; give each parameter its own name";
  if (!default_has_type(p))
    return where + ": its default " + p.default_value.dump() + " is not " + type_name(p.type) +
           "; set ParamSpec::default_value to one";
  if ((p.min || p.max) && !numeric)
    return where + " has a range but is not a number; drop min/max or make it an integer or real";
  if ((p.min && !std::isfinite(*p.min)) || (p.max && !std::isfinite(*p.max)))
    return where + ": min and max must be finite; leave one unset for an open end";
  if (p.min && p.max && *p.min > *p.max)
    return where + ": min " + number_text(*p.min) + " is above max " + number_text(*p.max);
  if (numeric) {
    const double d = p.default_value.get<double>();
    if ((p.min && d < *p.min) || (p.max && d > *p.max))
      return where + ": its default " + p.default_value.dump() + " is outside its range " +
             range_text(p) + "; change the default or the range";
  }
  if (!p.choices.empty()) {
    if (p.type != ParamSpec::Type::string)
      return where + " has choices but is not a string; drop the choices or make it a string";
    if (std::find(p.choices.begin(), p.choices.end(), p.default_value.get<std::string>()) ==
        p.choices.end())
      return where + ": its default " + p.default_value.dump() +
             " is not one of its choices; add it to the choices or change the default";
  }
  return "";
}

nlohmann::json convert(const KernelInfo& k, const ParamSpec& p, const std::string& text) {
  const std::string where = "parameter " + p.name + " of kernel " + k.name;
  nlohmann::json v;
  switch (p.type) {
    case ParamSpec::Type::integer: {
      std::size_t used = 0;
      long long x = 0;
      try {
        x = std::stoll(text, &used, 0);
      } catch (...) {
        used = 0;
      }
      if (used != text.size() || text.empty())
        throw UsageError(where + ": '" + text + "' is not " + type_name(p.type));
      v = x;
      break;
    }
    case ParamSpec::Type::real: {
      std::size_t used = 0;
      double x = 0;
      try {
        x = std::stod(text, &used);
      } catch (...) {
        used = 0;
      }
      if (used != text.size() || text.empty() || !std::isfinite(x))
        throw UsageError(where + ": '" + text + "' is not " + type_name(p.type));
      v = x;
      break;
    }
    case ParamSpec::Type::boolean:
      if (text == "true" || text == "1")
        v = true;
      else if (text == "false" || text == "0")
        v = false;
      else
        throw UsageError(where + ": '" + text + "' is not " + type_name(p.type));
      break;
    case ParamSpec::Type::string:
      v = text;
      break;
  }
  if (v.is_number()) {
    const double x = v.get<double>();
    if ((p.min && x < *p.min) || (p.max && x > *p.max)) {
      throw UsageError(where + ": " + text + " is out of range; allowed: " + range_text(p));
    }
  }
  if (!p.choices.empty() && v.is_string()) {
    bool ok = false;
    std::string list;
    for (const auto& c : p.choices) {
      ok = ok || c == text;
      list += (list.empty() ? "" : ", ") + c;
    }
    if (!ok) throw UsageError(where + ": '" + text + "' is not one of: " + list);
  }
  return v;
}

}  // namespace

void Registry::add(KernelInfo kernel) {
  const std::string by = " (registered by " + adding_from_ + ")";
  if (!is_plain_name(kernel.name))
    throw UsageError("cannot register kernel '" + kernel.name + "'" + by +
                     ": a kernel name is letters, digits, '_', '-' or '.' and starts with a "
                     "letter, digit or '_' (it is typed as cubesim run SPEC NAME); set "
                     "KernelInfo::name");
  const std::string what = "cannot register kernel " + kernel.name + by + ": ";
  if (const auto it = origins_.find(kernel.name); it != origins_.end())
    throw UsageError(what + "a kernel of that name is already registered by " + it->second +
                     "; give yours another name");
  if (kernel.description.empty())
    throw UsageError(what +
                     "it has no description; set KernelInfo::description (cubesim list "
                     "shows it)");
  if (!kernel.run)
    throw UsageError(what +
                     "it has no harness; set KernelInfo::run to a function "
                     "(Simulation&, const Params&) -> Outcome");
  std::set<std::string> seen;
  for (const auto& p : kernel.params) {
    if (const std::string problem = param_problem(p, seen); !problem.empty())
      throw UsageError(what + problem);
    seen.insert(p.name);
  }
  origins_.emplace(kernel.name, adding_from_);
  kernels_.push_back(std::move(kernel));
}

Params parse_params(const KernelInfo& kernel, const std::vector<std::string>& assignments) {
  Params out = nlohmann::json::object();
  for (const auto& p : kernel.params) out[p.name] = p.default_value;
  for (const auto& a : assignments) {
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("-p " + a + ": expected NAME=VALUE");
    const std::string name = a.substr(0, eq), value = a.substr(eq + 1);
    const ParamSpec* spec = nullptr;
    std::string names;
    for (const auto& p : kernel.params) {
      if (p.name == name) spec = &p;
      names += (names.empty() ? "" : ", ") + p.name;
    }
    if (!spec)
      throw UsageError("kernel " + kernel.name + " has no parameter '" + name +
                       "'; its parameters are: " + names);
    out[name] = convert(kernel, *spec, value);
  }
  return out;
}

nlohmann::json describe(const KernelInfo& kernel) {
  nlohmann::json params = nlohmann::json::array();
  for (const auto& p : kernel.params) {
    nlohmann::json j = {{"name", p.name},
                        {"type", type_name(p.type)},
                        {"default", p.default_value},
                        {"help", p.help}};
    if (p.min) j["min"] = *p.min;
    if (p.max) j["max"] = *p.max;
    if (!p.choices.empty()) j["choices"] = p.choices;
    params.push_back(j);
  }
  return {{"name", kernel.name}, {"description", kernel.description}, {"params", params}};
}

}  // namespace cubesim::kernels
