// cubesim list: the kernels `run` knows, with their parameters; with --stats, the statistics
// each PE reports for a launch (components/pe/pe_statistics.hpp).

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>

#include "components/pe/pe_statistics.hpp"
#include "kernels/registry.hpp"
#include "tools/cubesim/common.hpp"
#include "tools/cubesim/output_files.hpp"

namespace cubesim::cli {

namespace {

std::string range_text(const nlohmann::json& p) {
  if (p.contains("choices")) {
    std::string c;
    for (const auto& v : p["choices"]) c += (c.empty() ? "" : "|") + v.get<std::string>();
    return "one of " + c;
  }
  const auto num = [](const nlohmann::json& v) {
    const double d = v.get<double>();
    return std::fabs(d) < 9e15 && d == std::floor(d) ? std::to_string(static_cast<long long>(d))
                                                     : v.dump();
  };
  if (p.contains("min") && p.contains("max")) return num(p["min"]) + ".." + num(p["max"]);
  if (p.contains("min")) return ">= " + num(p["min"]);
  if (p.contains("max")) return "<= " + num(p["max"]);
  return "";
}

int list(bool as_json) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& k : kernels::registry()) all.push_back(kernels::describe(k));
  if (as_json) {
    std::cout << to_pretty_json(all);
    return 0;
  }
  for (const auto& k : all) {
    std::cout << k["name"].get<std::string>() << "\n    " << k["description"].get<std::string>()
              << "\n";
    for (const auto& p : k["params"]) {
      const std::string default_text =
          p["default"].is_string() ? p["default"].get<std::string>() : p["default"].dump();
      const std::string range = range_text(p);
      std::cout << "    -p " << p["name"].get<std::string>() << "=" << default_text << "  ("
                << p["type"].get<std::string>() << (range.empty() ? "" : ", " + range) << ")";
      if (!p["help"].get<std::string>().empty()) std::cout << "  " << p["help"].get<std::string>();
      std::cout << "\n";
    }
    std::cout << "\n";
  }
  std::cout << "Run one with: cubesim run SPEC KERNEL [-p NAME=VALUE]...\n";
  return 0;
}

int list_stats(bool as_json) {
  if (as_json) {
    nlohmann::json all = nlohmann::json::array();
    for (const components::PeStatistic& s : components::kPeStatistics)
      all.push_back({{"name", s.name}, {"unit", s.unit}, {"description", s.description}});
    std::cout << to_pretty_json(all);
    return 0;
  }
  std::size_t width = 0;
  for (const components::PeStatistic& s : components::kPeStatistics)
    width = std::max(width, s.name.size() + s.unit.size() + 3);
  std::cout << "Per-PE statistics of a launch (stats.pes[] of cubesim run --json):\n";
  for (const components::PeStatistic& s : components::kPeStatistics) {
    const std::string key = std::string(s.name) + " (" + std::string(s.unit) + ")";
    std::cout << "  " << key << std::string(width - key.size() + 2, ' ') << s.description << "\n";
  }
  return 0;
}

}  // namespace

Command add_list_command(CLI::App& app) {
  auto as_json = std::make_shared<bool>(false);
  auto stats = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand("list", "List the kernels and their parameters");
  sub->add_flag("--json", *as_json, "Print the list as JSON instead");
  sub->add_flag("--stats", *stats,
                "List the statistics each PE reports for a launch instead of the kernels");
  sub->footer(
      "Each kernel 'cubesim run' knows, with its description and parameters: "
      "-p NAME=DEFAULT, the type, the allowed range or choices. With --stats: each per-PE "
      "statistic of 'cubesim run --json' (stats.pes), its unit and meaning.\n\n"
      "Exit codes: 0 ok.");
  return {sub, [as_json, stats] { return *stats ? list_stats(*as_json) : list(*as_json); }};
}

}  // namespace cubesim::cli
