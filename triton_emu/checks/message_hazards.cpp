#include "triton_emu/checks/message_hazards.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace cubesim {

namespace {

// The recorded operations with their channels resolved, to replay with any slot count.
class Replay {
 public:
  struct Channel {
    MessageChannel ends;
    std::uint64_t sent = 0, posted = 0;  // in the whole record
  };

  Replay(const SyncLog& log, const std::vector<ProgramCoord>& coords);
  // Every program as far as it gets with `slots` per channel: the deadlock, if they do not all
  // get to their end.
  std::optional<MessageHazards::Deadlock> run(std::uint32_t slots);
  const std::vector<Channel>& channels() const { return channels_; }
  std::uint64_t most_on_a_channel() const;

 private:
  struct Step {
    SyncOp::Kind kind;
    std::uint32_t index;  // the channel, or the barrier instance
    std::uint64_t seq;    // the message's number on its channel, 0 first
  };
  enum class Wait : std::uint8_t { none, send, recv, barrier };

  MessageHazards::Deadlock deadlock(std::uint32_t slots) const;
  bool same_group(std::uint32_t p, std::uint32_t q, int scope) const;

  const SyncLog& log_;
  const std::vector<ProgramCoord>& coords_;
  std::vector<std::vector<Step>> steps_;  // per program
  std::vector<Channel> channels_;
  // State of a run.
  std::vector<std::size_t> next_;  // per program: its next step
  std::vector<Wait> wait_;         // per program: what it is blocked on
  std::vector<std::uint32_t> wait_index_;
  std::vector<std::uint64_t> sent_, posted_;         // per channel
  std::vector<std::vector<std::uint32_t>> arrived_;  // per barrier: who waits there
};

Replay::Replay(const SyncLog& log, const std::vector<ProgramCoord>& coords)
    : log_(log), coords_(coords), steps_(log.programs()) {
  std::unordered_map<std::uint64_t, std::uint32_t> index;
  const auto channel = [&](std::uint32_t from, std::uint32_t to) -> Channel& {
    const auto [it, added] = index.try_emplace(std::uint64_t{from} << 32 | to,
                                               static_cast<std::uint32_t>(channels_.size()));
    if (added) channels_.push_back({{from, to}});
    return channels_[it->second];
  };
  for (std::uint32_t p = 0; p < log.programs(); ++p)
    for (const SyncOp& op : log.ops(p)) {
      Step s{op.kind, op.peer, op.seq};
      switch (op.kind) {
        case SyncOp::Kind::send: {
          Channel& c = channel(p, op.peer);
          s.index = static_cast<std::uint32_t>(&c - channels_.data());
          s.seq = c.sent++;
          break;
        }
        case SyncOp::Kind::recv_posted: {
          Channel& c = channel(op.peer, p);
          s.index = static_cast<std::uint32_t>(&c - channels_.data());
          s.seq = c.posted++;
          break;
        }
        case SyncOp::Kind::recv_done:
          s.index = static_cast<std::uint32_t>(&channel(op.peer, p) - channels_.data());
          break;
        case SyncOp::Kind::barrier:
          break;
      }
      steps_[p].push_back(s);
    }
}

std::uint64_t Replay::most_on_a_channel() const {
  std::uint64_t most = 0;
  for (const Channel& c : channels_) most = std::max(most, c.sent);
  return most;
}

std::optional<MessageHazards::Deadlock> Replay::run(std::uint32_t slots) {
  const auto programs = static_cast<std::uint32_t>(steps_.size());
  next_.assign(programs, 0);
  wait_.assign(programs, Wait::none);
  wait_index_.assign(programs, 0);
  sent_.assign(channels_.size(), 0);
  posted_.assign(channels_.size(), 0);
  arrived_.assign(log_.barriers().size(), {});
  std::vector<std::uint32_t> ready(programs);
  for (std::uint32_t p = 0; p < programs; ++p) ready[p] = programs - 1 - p;
  // A program blocked on channel `c` looks again (its step may be possible now).
  const auto poke = [&](std::uint32_t p, std::uint32_t c) {
    if ((wait_[p] == Wait::send || wait_[p] == Wait::recv) && wait_index_[p] == c) {
      wait_[p] = Wait::none;
      ready.push_back(p);
    }
  };
  const auto block = [&](std::uint32_t p, Wait on, std::uint32_t index) {
    wait_[p] = on;
    wait_index_[p] = index;
  };
  while (!ready.empty()) {
    const std::uint32_t p = ready.back();
    ready.pop_back();
    const auto& steps = steps_[p];
    for (bool blocked = false; !blocked && next_[p] < steps.size();) {
      const Step& s = steps[next_[p]];
      switch (s.kind) {
        case SyncOp::Kind::send:
          if (sent_[s.index] >= posted_[s.index] + slots) {  // every slot full
            block(p, Wait::send, s.index);
            blocked = true;
            continue;
          }
          ++sent_[s.index];
          poke(channels_[s.index].ends.to, s.index);
          break;
        case SyncOp::Kind::recv_posted:
          ++posted_[s.index];
          poke(channels_[s.index].ends.from, s.index);
          break;
        case SyncOp::Kind::recv_done:
          if (s.seq >= sent_[s.index]) {
            block(p, Wait::recv, s.index);
            blocked = true;
            continue;
          }
          break;
        case SyncOp::Kind::barrier: {
          auto& waiting = arrived_[s.index];
          if (waiting.size() + 1 < log_.barriers()[s.index].members) {
            waiting.push_back(p);
            block(p, Wait::barrier, s.index);
            blocked = true;  // past the barrier when the last member arrives
            break;
          }
          for (const std::uint32_t q : waiting) {
            wait_[q] = Wait::none;
            ready.push_back(q);
          }
          waiting.clear();
          break;
        }
      }
      ++next_[p];
    }
  }
  for (std::uint32_t p = 0; p < programs; ++p)
    if (wait_[p] != Wait::none) return deadlock(slots);
  return std::nullopt;
}

bool Replay::same_group(std::uint32_t p, std::uint32_t q, int scope) const {
  const auto& a = coords_[p].id;
  const auto& b = coords_[q].id;
  return scope == 2 || (a[2] == b[2] && (scope == 1 || a[1] == b[1]));
}

MessageHazards::Deadlock Replay::deadlock(std::uint32_t slots) const {
  using Blocked = MessageHazards::Blocked;
  const auto programs = static_cast<std::uint32_t>(steps_.size());
  MessageHazards::Deadlock d{slots, {}, {}};
  // Per barrier waited at: a member that has not arrived, one that is blocked if any (for the
  // cycle).
  std::unordered_map<std::uint32_t, std::uint32_t> missing;
  const auto missing_member = [&](std::uint32_t b, std::uint32_t member) {
    if (const auto it = missing.find(b); it != missing.end()) return it->second;
    const auto& waiting = arrived_[b];
    std::optional<std::uint32_t> found;
    for (std::uint32_t q = 0; q < programs; ++q) {
      if (!same_group(member, q, log_.barriers()[b].scope) ||
          std::find(waiting.begin(), waiting.end(), q) != waiting.end())
        continue;
      if (!found || wait_[q] != Wait::none) found = q;
      if (wait_[q] != Wait::none) break;
    }
    return missing[b] = found.value_or(member);
  };
  std::vector<std::int64_t> waits_for(programs, -1);
  for (std::uint32_t p = 0; p < programs; ++p) {
    if (wait_[p] == Wait::none) continue;
    Blocked b{.program = p, .on = Blocked::On::barrier};
    const std::uint32_t i = wait_index_[p];
    switch (wait_[p]) {
      case Wait::send:
        b.on = Blocked::On::send;
        b.channel = channels_[i].ends;
        b.message = sent_[i] + 1;
        b.waits_for = b.channel.to;
        break;
      case Wait::recv:
        b.on = Blocked::On::recv;
        b.channel = channels_[i].ends;
        b.message = steps_[p][next_[p]].seq + 1;
        b.waits_for = b.channel.from;
        break;
      case Wait::barrier:
        b.barrier = log_.barriers()[i];
        b.waits_for = missing_member(i, p);
        break;
      case Wait::none:
        break;
    }
    waits_for[p] = b.waits_for;
    d.blocked.push_back(b);
  }
  // A cycle: follow whom each blocked program waits on until one repeats (0 not seen, 1 on the
  // path being followed, 2 followed before without a cycle).
  std::vector<std::uint8_t> state(programs, 0);
  for (const Blocked& b : d.blocked) {
    std::int64_t p = b.program;
    while (p >= 0 && state[static_cast<std::size_t>(p)] == 0) {
      state[static_cast<std::size_t>(p)] = 1;
      p = waits_for[static_cast<std::size_t>(p)];
    }
    if (p >= 0 && state[static_cast<std::size_t>(p)] == 1) {
      const std::int64_t start = p;
      do {
        d.cycle.push_back(static_cast<std::uint32_t>(p));
        p = waits_for[static_cast<std::size_t>(p)];
      } while (p != start);
      break;
    }
    for (p = b.program; p >= 0 && state[static_cast<std::size_t>(p)] == 1;
         p = waits_for[static_cast<std::size_t>(p)])
      state[static_cast<std::size_t>(p)] = 2;
  }
  return d;
}

std::string program_str(std::uint32_t p, const std::vector<ProgramCoord>& coords) {
  return p < coords.size() ? coords[p].str() : "program #" + std::to_string(p);
}

std::string barrier_str(const BarrierInstance& b, const ProgramCoord& member) {
  const std::string gen = std::to_string(b.generation);
  if (b.scope == 0)
    return "barrier(cube) " + gen + " of cube (" + std::to_string(member.id[1]) + ", " +
           std::to_string(member.id[2]) + ")";
  if (b.scope == 1) return "barrier(sip) " + gen + " of SIP " + std::to_string(member.id[2]);
  return "barrier " + gen;
}

std::string slots_str(std::uint64_t n) {
  return std::to_string(n) + (n == 1 ? " slot" : " slots");
}

}  // namespace

MessageHazards message_hazards(const SyncLog& log, const std::vector<ProgramCoord>& coords) {
  MessageHazards h;
  h.spec_slots = log.slots();
  h.complete = log.finished();
  Replay replay(log, coords);
  const std::uint32_t spec = std::max<std::uint32_t>(h.spec_slots, 1);
  if (!h.complete) {
    h.min_slots = 0;
    if (auto d = replay.run(spec)) h.deadlocks.push_back(std::move(*d));
    return h;
  }
  // The fewest count that completes is at most the spec's smallest window where the launch
  // completed with that on every channel, or, failing that (its other classes had more), as
  // many as the busiest channel has messages: then no send ever waits, and a record that
  // deadlocks even so needs something other than slots.
  std::uint32_t hi = spec;
  if (auto at_spec = replay.run(spec)) {
    hi = static_cast<std::uint32_t>(std::max<std::uint64_t>(spec, replay.most_on_a_channel()));
    if (replay.run(hi)) {
      h.min_slots = 0;
      h.deadlocks.push_back(std::move(*at_spec));
    }
  }
  if (h.min_slots != 0) {
    // More slots only let sends happen sooner, never later (the network is monotone), so the
    // counts that complete are those from the fewest on.
    std::uint32_t lo = 1;
    while (lo < hi) {
      const std::uint32_t mid = lo + (hi - lo) / 2;
      if (replay.run(mid))
        lo = mid + 1;
      else
        hi = mid;
    }
    h.min_slots = lo;
    for (std::uint32_t k = lo - 1; k >= 1; --k) h.deadlocks.push_back(std::move(*replay.run(k)));
  }
  for (const auto& c : replay.channels()) {
    if (c.sent > c.posted) h.never_received.push_back({c.ends, c.sent - c.posted});
    if (c.posted > c.sent) h.never_sent.push_back({c.ends, c.posted - c.sent});
  }
  return h;
}

std::string describe(const MessageHazards& h, const std::vector<ProgramCoord>& coords,
                     std::size_t max_items) {
  const auto prog = [&coords](std::uint32_t p) { return program_str(p, coords); };
  std::string s;
  if (!h.complete)
    s = "the launch stopped before every program ended; replayed as far as they got, with " +
        slots_str(h.spec_slots) + " per channel (the spec's smallest window), " +
        (h.deadlocks.empty() ? std::string("the messages do not deadlock") : "they deadlock:");
  else if (h.min_slots == 0)
    s = "the messages deadlock with any number of slots per channel (a recv that nobody sends "
        "to, or programs that all receive before they send):";
  else
    s = "the messages complete with " + slots_str(h.min_slots) +
        " per channel or more (the spec's smallest window has " + std::to_string(h.spec_slots) +
        ")" + (h.deadlocks.empty() ? "" : "; with fewer:");
  for (std::size_t i = 0; i < h.deadlocks.size() && i < max_items; ++i) {
    const auto& d = h.deadlocks[i];
    s += "\n  with " + slots_str(d.slots) + " per channel, " + std::to_string(d.blocked.size()) +
         " program(s) block:";
    for (std::size_t j = 0; j < d.blocked.size() && j < max_items; ++j) {
      const auto& b = d.blocked[j];
      const std::string channel =
          " (channel " + prog(b.channel.from) + " -> " + prog(b.channel.to) + ")";
      switch (b.on) {
        case MessageHazards::Blocked::On::send:
          s += "\n    " + prog(b.program) + " waits to send message " + std::to_string(b.message) +
               " to " + prog(b.channel.to) + ": no credit, the channel's " + slots_str(d.slots) +
               (d.slots == 1 ? " is" : " are") + " full until " + prog(b.channel.to) +
               " posts a recv" + channel;
          break;
        case MessageHazards::Blocked::On::recv:
          s += "\n    " + prog(b.program) + " waits to receive message " +
               std::to_string(b.message) + " from " + prog(b.channel.from) + ", not yet sent" +
               channel;
          break;
        case MessageHazards::Blocked::On::barrier:
          s += "\n    " + prog(b.program) + " waits at " +
               barrier_str(b.barrier, coords[b.program]) + " for " + prog(b.waits_for);
          break;
      }
    }
    if (d.blocked.size() > max_items) s += "\n    ...";
    if (!d.cycle.empty()) {
      s += "\n    a cycle, each waiting on the next: ";
      for (const std::uint32_t p : d.cycle) s += prog(p) + " -> ";
      s += prog(d.cycle.front());
    }
  }
  if (h.deadlocks.size() > max_items) s += "\n  ...";
  const auto unmatched = [&](const std::vector<MessageHazards::Unmatched>& v, const char* what) {
    if (v.empty()) return;
    s += "\n" + std::to_string(v.size()) + " channel(s) with " + what + ":";
    for (std::size_t i = 0; i < v.size() && i < max_items; ++i)
      s += "\n  " + prog(v[i].channel.from) + " -> " + prog(v[i].channel.to) + ": " +
           std::to_string(v[i].messages) + " message(s)";
    if (v.size() > max_items) s += "\n  ...";
  };
  unmatched(h.never_received, "messages sent and never received (no recv posted for them)");
  unmatched(h.never_sent, "recvs posted for messages never sent");
  return s;
}

}  // namespace cubesim
