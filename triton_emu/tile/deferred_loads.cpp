#include "triton_emu/tile/deferred_loads.hpp"

#include <utility>

namespace cubesim::detail {

DeferredLoads::DeferredLoads(FunctionalMemory& memory) : memory_(memory) {
  memory_.attach(*this);
}

DeferredLoads::~DeferredLoads() {
  settle();  // tiles that outlive the launch keep their values
  memory_.detach(*this);
}

void DeferredLoads::defer(tl::Tile& tile, const MatrixAt& at, std::byte** in_flight) {
  tl::Tile::Data& data = *tile.data_;
  memory_.hold(*this, at.addr, at.span_bytes(), false);
  loads_.emplace(&data, Load{at, in_flight});
  data.deferred = this;
}

void DeferredLoads::landed(const tl::Tile& tile) {
  if (const auto it = loads_.find(tile.data_.get()); it != loads_.end())
    it->second.in_flight = nullptr;
}

void DeferredLoads::copy(tl::Tile::Data& data, const Load& load) {
  const auto bytes =
      static_cast<std::size_t>(load.at.rows * load.at.cols) * dtype_size(load.at.dtype);
  data.bytes.assign_uninitialised(bytes);
  read_matrix(memory_, load.at, data.bytes.data(), load.at.cols, scratch_);
  if (load.in_flight) *load.in_flight = data.bytes.data();  // the rest lands as it would have
  data.deferred = nullptr;
}

void DeferredLoads::materialize(tl::Tile::Data& data) {
  const auto it = loads_.find(&data);
  if (it == loads_.end()) return;
  const Load load = it->second;
  loads_.erase(it);
  memory_.unhold(*this, load.at.addr, load.at.span_bytes(), false);
  copy(data, load);
}

void DeferredLoads::forget(tl::Tile::Data& data) {
  const auto it = loads_.find(&data);
  if (it == loads_.end()) return;
  memory_.unhold(*this, it->second.at.addr, it->second.at.span_bytes(), false);
  bytes_not_copied_ += it->second.at.span_bytes();
  loads_.erase(it);
  data.deferred = nullptr;
}

void DeferredLoads::settle() {
  // Unmarked first: copying reads memory, which may settle other holders, whose writes must
  // not come back here.
  auto loads = std::exchange(loads_, {});
  for (const auto& [data, load] : loads)
    memory_.unhold(*this, load.at.addr, load.at.span_bytes(), false);
  for (const auto& [data, load] : loads) copy(*data, load);
}

}  // namespace cubesim::detail
