#include "kernels/collectives/ring.hpp"

#include <algorithm>

#include "kernels/harness.hpp"

namespace cubesim::kernels::collectives {

emu::Tick Clock::elapsed() const {
  if (begin.empty()) return 0;
  return *std::max_element(end.begin(), end.end()) - *std::min_element(begin.begin(), begin.end());
}

namespace {

tl::Peer peer_of(const tl::Context& tl, std::int64_t g) {
  const std::int64_t pes = tl.num_programs(0), cubes = tl.num_programs(1);
  return tl::program(g % pes, (g / pes) % cubes, g / (pes * cubes));
}

class Ring {
 public:
  Ring(tl::Context& tl, const RingArgs& a)
      : tl_(tl),
        a_(a),
        n_(total_programs(tl)),
        me_(global_program_id(tl)),
        dirs_(a.directions),
        half_(a.block / a.directions),
        pieces_((half_ + a.piece - 1) / a.piece) {
    const auto& order = *a.order;
    pos_ = std::find(order.begin(), order.end(), me_) - order.begin();
    for (int d = 0; d < dirs_; ++d) {
      const std::int64_t s = sign(d);
      down_[d] = peer_of(tl, order[static_cast<std::size_t>(mod(pos_ + s))]);
      up_[d] = peer_of(tl, order[static_cast<std::size_t>(mod(pos_ - s))]);
    }
    // Two directions between the same two programs share one channel.
    ahead_ = a.window * static_cast<std::uint32_t>(n_ > 2 ? dirs_ : 1);
  }

  void run() {
    const std::size_t items = static_cast<std::size_t>(dirs_ * pieces_);
    const bool reduce = a_.collective != Collective::all_gather;
    if (a_.buffer == Buffer::sram && reduce) {  // every input piece, before the clock starts
      own_.resize(static_cast<std::size_t>(n_) * items);
      for (std::int64_t c = 0; c < n_; ++c)
        each_item([&](int d, std::int64_t j) { own_[index(c, d, j)] = load_input(c, d, j); });
    }
    carry_.resize(items);
    if (reduce) {
      each_item([&](int d, std::int64_t j) {
        const std::int64_t c = mod(pos_ - sign(d));
        carry_[item(d, j)] = input(c, d, j);
        if (!own_.empty() && n_ > 1) own_[index(c, d, j)] = tl::Tile();  // carried now
      });
    } else {
      each_item([&](int d, std::int64_t j) { carry_[item(d, j)] = load_own_block(d, j); });
      keep(pos_, carry_);
    }
    tl_.barrier();
    start_clock();
    if (n_ > 1 && reduce) {
      for (std::int64_t k = 0; k + 1 < n_; ++k)
        step([&](int d, std::int64_t j, tl::Tile got) {
          const std::int64_t c = mod(pos_ - sign(d) * (k + 2));
          tl::Tile sum = got + input(c, d, j);
          if (!own_.empty()) own_[index(c, d, j)] = tl::Tile();  // consumed: its SRAM is free
          return sum;
        });
      keep(pos_, carry_);  // the full sum of this program's own block
    } else if (n_ == 1 && reduce) {
      for (std::int64_t c = 0; c < n_; ++c)
        each_item([&](int d, std::int64_t j) { carry_[item(d, j)] = input(c, d, j); });
      keep(pos_, carry_);
    }
    if (n_ > 1 && a_.collective != Collective::reduce_scatter) {
      for (std::int64_t k = 0; k + 1 < n_; ++k) {
        std::vector<tl::Tile> got(carry_.size());
        step([&](int d, std::int64_t j, tl::Tile t) {
          got[item(d, j)] = t;
          return t;
        });
        keep(mod(pos_ - (k + 1)), got, /*direction-dependent=*/true, k);
      }
    }
    stop_clock();  // buffer=hbm stored its results already; sram stores them now, untimed
    for (auto& [addr, tile] : results_) tl_.store(Ptr{addr}, tile);
  }

 private:
  std::int64_t mod(std::int64_t x) const { return ((x % n_) + n_) % n_; }
  static std::int64_t sign(int d) { return d == 0 ? 1 : -1; }
  std::int64_t piece_len(std::int64_t j) const { return std::min(a_.piece, half_ - j * a_.piece); }
  std::size_t item(int d, std::int64_t j) const { return static_cast<std::size_t>(j * dirs_ + d); }
  std::size_t index(std::int64_t c, int d, std::int64_t j) const {
    return static_cast<std::size_t>(c) * static_cast<std::size_t>(dirs_ * pieces_) + item(d, j);
  }
  template <class F>
  void each_item(F&& f) {
    for (std::int64_t j = 0; j < pieces_; ++j)
      for (int d = 0; d < dirs_; ++d) f(d, j);
  }
  // Elements into a block.
  std::int64_t within(int d, std::int64_t j) const { return d * half_ + j * a_.piece; }
  std::int64_t block_of(std::int64_t chunk) const {
    return (*a_.order)[static_cast<std::size_t>(chunk)];
  }

  tl::Tile load_input(std::int64_t chunk, int d, std::int64_t j) {
    const std::int64_t at = block_of(chunk) * a_.block + within(d, j);
    return tl_.load(a_.in[static_cast<std::size_t>(me_)] + at * 4, {piece_len(j)}, DType::f32);
  }
  tl::Tile load_own_block(int d, std::int64_t j) {
    return tl_.load(a_.in[static_cast<std::size_t>(me_)] + within(d, j) * 4, {piece_len(j)},
                    DType::f32);
  }
  // This program's input piece of chunk c: from SRAM or loaded now.
  tl::Tile input(std::int64_t c, int d, std::int64_t j) {
    if (!own_.empty()) return own_[index(c, d, j)];
    return load_input(c, d, j);
  }

  // Output: all-reduce and all-gather keep every block, reduce-scatter its own. In the AG
  // phase the chunk received in step k is p - s(k + 1), which depends on the direction.
  void keep(std::int64_t chunk, const std::vector<tl::Tile>& tiles, bool per_direction = false,
            std::int64_t k = 0) {
    each_item([&](int d, std::int64_t j) {
      const std::int64_t c = per_direction ? mod(pos_ - sign(d) * (k + 1)) : chunk;
      const std::int64_t at = a_.collective == Collective::reduce_scatter
                                  ? within(d, j)
                                  : block_of(c) * a_.block + within(d, j);
      const Ptr to = a_.out[static_cast<std::size_t>(me_)] + at * 4;
      const tl::Tile& t = tiles[item(d, j)];
      if (a_.buffer == Buffer::hbm)
        tl_.store(to, t);
      else
        results_.emplace_back(to.addr, t);
    });
  }

  // One step: the carried pieces go downstream (up to `ahead_` messages before the receives),
  // the pieces from upstream come in, and `on_recv` makes what is carried to the next step.
  template <class F>
  void step(F&& on_recv) {
    const std::size_t items = carry_.size();
    std::vector<tl::Tile> next(items);
    std::size_t sent = 0;
    for (std::size_t i = 0; i < items; ++i) {
      for (; sent < items && sent < i + ahead_; ++sent) {
        tl_.send(down_[sent % static_cast<std::size_t>(dirs_)], carry_[sent]);
        carry_[sent] = tl::Tile();
      }
      const int d = static_cast<int>(i % static_cast<std::size_t>(dirs_));
      const std::int64_t j = static_cast<std::int64_t>(i / static_cast<std::size_t>(dirs_));
      next[i] = on_recv(d, j, tl_.recv(up_[d], {piece_len(j)}, DType::f32));
    }
    carry_ = std::move(next);
  }

  void start_clock() {
    if (a_.clock) a_.clock->begin[static_cast<std::size_t>(me_)] = tl_.now();
  }
  void stop_clock() {
    if (a_.clock) a_.clock->end[static_cast<std::size_t>(me_)] = tl_.now();
  }

  tl::Context& tl_;
  const RingArgs& a_;
  std::int64_t n_, me_, pos_ = 0;
  int dirs_;
  std::int64_t half_, pieces_;
  std::size_t ahead_ = 1;
  tl::Peer down_[2], up_[2];
  std::vector<tl::Tile> own_;    // sram: this program's input pieces, by (chunk, item)
  std::vector<tl::Tile> carry_;  // what the next step sends, by item
  std::vector<std::pair<std::uint64_t, tl::Tile>> results_;  // sram: stored after the clock
};

}  // namespace

void ring(tl::Context& tl, const RingArgs& args) {
  Ring(tl, args).run();
}

}  // namespace cubesim::kernels::collectives
