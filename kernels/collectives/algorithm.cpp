#include "kernels/collectives/algorithm.hpp"

#include <algorithm>

#include "emu/name_table.hpp"
#include "kernels/collectives/algorithms/algorithms.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::kernels::collectives {

const char* collective_name(Collective collective) {
  switch (collective) {
    case Collective::all_reduce:
      return "allreduce";
    case Collective::reduce_scatter:
      return "reduce_scatter";
    case Collective::all_gather:
      return "allgather";
    case Collective::broadcast:
      return "broadcast";
    case Collective::all_to_all:
      return "alltoall";
  }
  return "?";
}

bool Algorithm::implements_collective(Collective collective) const {
  return std::any_of(implements.begin(), implements.end(),
                     [&](const auto& i) { return i.first == collective; });
}

const emu::NameTable<const Algorithm*>& algorithms() {
  const auto row = [](const Algorithm& a) {
    return emu::NameTable<const Algorithm*>::Row{a.name, &a};
  };
  static const emu::NameTable<const Algorithm*> table(
      "collective algorithm",
      {row(ring_algorithm()), row(bidir_ring_algorithm()), row(hierarchical_algorithm()),
       row(switch_algorithm()), row(mesh2d_algorithm()), row(tree_algorithm()),
       row(dtree_algorithm()), row(pairwise_algorithm()), row(direct_algorithm())});
  return table;
}

std::vector<std::string> algorithm_names(Collective collective) {
  std::vector<std::string> names;
  for (const auto& row : algorithms().rows())
    if (row.entry->implements_collective(collective)) names.push_back(row.name);
  return names;
}

std::string default_algorithm(Collective collective) {
  return algorithm_names(collective).front();
}

std::string algorithm_help(Collective collective) {
  std::string help;
  for (const auto& row : algorithms().rows())
    for (const auto& [c, how] : row.entry->implements)
      if (c == collective) help += (help.empty() ? "" : "; ") + row.name + ": " + how;
  return help;
}

const Algorithm& find_algorithm(const std::string& name, Collective collective) {
  const Algorithm* const* found = algorithms().find(name);
  if (found != nullptr && (*found)->implements_collective(collective)) return **found;
  std::string known;
  for (const std::string& n : algorithm_names(collective))
    known += (known.empty() ? "'" : ", '") + n + "'";
  throw UsageError((found == nullptr ? "unknown collective algorithm '" + name + "'"
                                     : "collective algorithm '" + name + "' has no " +
                                           collective_name(collective)) +
                   "; the algorithms of " + collective_name(collective) + " are " + known);
}

}  // namespace cubesim::kernels::collectives
