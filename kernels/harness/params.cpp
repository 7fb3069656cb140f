#include "kernels/harness/params.hpp"

#include <utility>

#include "triton_emu/errors.hpp"

namespace cubesim::kernels {

ParamSpec int_param(std::string name, std::int64_t default_value, std::int64_t min,
                    std::int64_t max, std::string help) {
  return ParamSpec{.name = std::move(name),
                   .type = ParamSpec::Type::integer,
                   .default_value = default_value,
                   .min = static_cast<double>(min),
                   .max = static_cast<double>(max),
                   .help = std::move(help)};
}

ParamSpec bool_param(std::string name, bool default_value, std::string help) {
  return ParamSpec{.name = std::move(name),
                   .type = ParamSpec::Type::boolean,
                   .default_value = default_value,
                   .help = std::move(help)};
}

ParamSpec real_param(std::string name, double default_value, double min, double max,
                     std::string help) {
  return ParamSpec{.name = std::move(name),
                   .type = ParamSpec::Type::real,
                   .default_value = default_value,
                   .min = min,
                   .max = max,
                   .help = std::move(help)};
}

ParamSpec choice_param(std::string name, std::string default_value,
                       std::vector<std::string> choices, std::string help) {
  return ParamSpec{.name = std::move(name),
                   .type = ParamSpec::Type::string,
                   .default_value = std::move(default_value),
                   .choices = std::move(choices),
                   .help = std::move(help)};
}

ParamSpec dtype_param(DType default_value, std::vector<DType> choices, std::string help) {
  std::vector<std::string> names;
  for (DType t : choices) names.emplace_back(dtype_name(t));
  return choice_param("dtype", std::string(dtype_name(default_value)), std::move(names),
                      std::move(help));
}

namespace {
const nlohmann::json& param(const Params& p, const char* name) {
  const auto it = p.find(name);
  if (it == p.end())
    throw UsageError(std::string("missing parameter '") + name +
                     "' (parse_params fills in every default)");
  return *it;
}
}  // namespace

std::int64_t get_int(const Params& p, const char* name) {
  const auto& v = param(p, name);
  if (!v.is_number_integer())
    throw UsageError(std::string("parameter ") + name + " must be an integer, got " + v.dump());
  return v.get<std::int64_t>();
}

double get_real(const Params& p, const char* name) {
  const auto& v = param(p, name);
  if (!v.is_number()) throw UsageError(std::string("parameter ") + name + " must be a number");
  return v.get<double>();
}

std::string get_string(const Params& p, const char* name) {
  const auto& v = param(p, name);
  if (!v.is_string()) throw UsageError(std::string("parameter ") + name + " must be a string");
  return v.get<std::string>();
}

DType get_dtype(const Params& p, const char* name) {
  const std::string s = get_string(p, name);
  const auto t = dtype_from_name(s);
  if (!t) throw UsageError(std::string("parameter ") + name + ": unknown dtype '" + s + "'");
  return *t;
}

}  // namespace cubesim::kernels
