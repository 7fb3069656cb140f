#include "kernels/collectives/algorithm.hpp"

#include <algorithm>

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

const std::vector<const Algorithm*>& algorithms() {
  static const std::vector<const Algorithm*> table = {
      &ring_algorithm(), &bidir_ring_algorithm(), &hierarchical_algorithm(), &mesh2d_algorithm(),
      &tree_algorithm(), &pairwise_algorithm(),   &direct_algorithm(),
  };
  return table;
}

std::vector<std::string> algorithm_names(Collective collective) {
  std::vector<std::string> names;
  for (const Algorithm* a : algorithms())
    if (a->implements_collective(collective)) names.emplace_back(a->name);
  return names;
}

std::string default_algorithm(Collective collective) {
  return algorithm_names(collective).front();
}

std::string algorithm_help(Collective collective) {
  std::string help;
  for (const Algorithm* a : algorithms())
    for (const auto& [c, how] : a->implements)
      if (c == collective) help += (help.empty() ? "" : "; ") + std::string(a->name) + ": " + how;
  return help;
}

const Algorithm& find_algorithm(const std::string& name, Collective collective) {
  const auto& table = algorithms();
  const auto it =
      std::find_if(table.begin(), table.end(), [&](const Algorithm* a) { return name == a->name; });
  if (it != table.end() && (*it)->implements_collective(collective)) return **it;
  std::string known;
  for (const std::string& n : algorithm_names(collective))
    known += (known.empty() ? "'" : ", '") + n + "'";
  throw UsageError((it == table.end() ? "unknown collective algorithm '" + name + "'"
                                      : "collective algorithm '" + name + "' has no " +
                                            collective_name(collective)) +
                   "; the algorithms of " + collective_name(collective) + " are " + known);
}

}  // namespace cubesim::kernels::collectives
