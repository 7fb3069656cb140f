#pragma once
// The routes the flow model follows, made once and kept: a transfer's route depends on its
// kind, its PE and where it goes (a send's peer PE, or a read's or write's cube and HBM
// channel).
//
// The key is a struct of two words, so no system size can make two routes meet in one key.
// Each PE also remembers its recent routes, direct-mapped by key: the pieces of one transfer
// hop between cubes and channels, and small transfers repeat routes; either way most skip the
// hash lookup (a division and a cache miss).

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "components/memory/address_map.hpp"
#include "components/network/topology.hpp"
#include "components/network/transfer.hpp"

namespace cubesim::components {

class RouteCache {
 public:
  explicit RouteCache(const Topology& topology);

  // The route of a transfer of `kind` by `pe`: to `peer` (send), from / to HBM channel
  // `channel` of `loc`'s cube (read, write), up to the switch of level `peer` (to_switch) or
  // down from it over connection `channel` (from_switch, `pe` the PE it goes to). References
  // stay valid while the cache lives.
  const Route& get(TransferKind kind, std::uint32_t pe, std::uint32_t peer, Location loc,
                   std::uint32_t channel);
  std::size_t size() const { return routes_.size(); }

 private:
  struct Key {
    std::uint64_t who = ~std::uint64_t{0};    // kind << 32 | PE
    std::uint64_t where = ~std::uint64_t{0};  // peer PE, or global cube << 32 | channel
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      // splitmix64's finaliser over both words: keys differ in few, low bits
      std::uint64_t x = k.who * 0x9e3779b97f4a7c15ULL ^ k.where;
      x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
      x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
      return static_cast<std::size_t>(x ^ (x >> 31));
    }
  };
  struct Slot {
    Key key;
    const Route* route = nullptr;
  };
  struct Recent {  // per PE
    Slot last;     // checked first: small transfers repeat one route
    std::vector<Slot> slots;
  };
  static Key key(TransferKind kind, std::uint32_t pe, std::uint32_t peer, Location loc,
                 std::uint32_t channel);

  const Topology& topology_;
  std::unordered_map<Key, Route, KeyHash> routes_;
  std::vector<Recent> recent_;
};

}  // namespace cubesim::components
