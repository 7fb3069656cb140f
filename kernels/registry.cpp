#include "kernels/registry.hpp"

#include <cmath>

#include "kernels/attention_similarity.hpp"
#include "kernels/collectives/collective.hpp"
#include "kernels/gemm_2d.hpp"
#include "kernels/ring_attention.hpp"
#include "kernels/sharded_gemm.hpp"
#include "kernels/softmax_rows.hpp"
#include "kernels/splitk_gemm.hpp"
#include "kernels/tp_linear.hpp"
#include "kernels/vector_add.hpp"

namespace cubesim::kernels {

const std::vector<KernelInfo>& registry() {
  static const std::vector<KernelInfo> all = {
      sharded_gemm_info(),
      gemm_2d_info(),
      vector_add_info(),
      softmax_rows_info(),
      attention_similarity_info(),
      ring_attention_info(),
      collectives::allreduce_info(),
      collectives::reduce_scatter_info(),
      collectives::allgather_info(),
      collectives::broadcast_info(),
      collectives::alltoall_info(),
      tp_linear_info(),
      splitk_gemm_info(),
  };
  return all;
}

const KernelInfo& find_kernel(std::string_view name) {
  std::string names;
  for (const auto& k : registry()) {
    if (k.name == name) return k;
    names += (names.empty() ? "" : ", ") + k.name;
  }
  throw UsageError("unknown kernel '" + std::string(name) + "'; the kernels are: " + names +
                   " (cubesim list shows their parameters)");
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
      auto num = [](double d) {
        return std::floor(d) == d ? std::to_string(static_cast<long long>(d)) : std::to_string(d);
      };
      throw UsageError(where + ": " + text + " is out of range; allowed: " +
                       (p.min ? num(*p.min) : "-inf") + " to " + (p.max ? num(*p.max) : "inf"));
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
