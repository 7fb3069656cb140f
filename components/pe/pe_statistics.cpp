#include "components/pe/pe_statistics.hpp"

namespace cubesim::components {

std::string pe_statistics_markdown() {
  std::string md = "| key | unit | what |\n|---|---|---|\n";
  for (const PeStatistic& s : kPeStatistics) {
    md += "| `";
    md += s.name;
    md += "` | ";
    md += s.unit;
    md += " | ";
    md += s.description;
    md += " |\n";
  }
  return md;
}

}  // namespace cubesim::components
