#include "components/spec/validate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <tuple>

#include "components/cache/cube_cache.hpp"
#include "components/network/message_window.hpp"
#include "components/network/virtual_channels.hpp"
#include "components/spec/spec.hpp"

namespace cubesim::components::spec {

using nlohmann::json;

std::string pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string fmt_num(double d) {
  return fmt::format("{}", d);
}

}  // namespace

std::string nearest(std::string_view key, const std::vector<std::string_view>& candidates) {
  std::string_view best;
  std::size_t best_d = SIZE_MAX;
  for (std::string_view c : candidates) {
    const std::size_t d = edit_distance(key, c);
    if (d < best_d) best_d = d, best = c;
  }
  // A third of the longer name catches "bandwith_GBps" and "latency" for "latency_ns" without
  // suggesting "pes" for "ucie".
  const std::size_t limit = std::max<std::size_t>(2, std::max(key.size(), best.size()) / 3);
  const bool prefix = !key.empty() && best.starts_with(key.substr(
                                          0, std::min<std::size_t>(key.size(), best.size())));
  if (best_d <= limit || (prefix && key.size() >= 3)) return std::string(best);
  return {};
}

std::string describe_value(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return fmt::format("a boolean ({})", v.get<bool>());
    case json::value_t::string: {
      std::string s = v.dump();
      if (s.size() > 40) s = s.substr(0, 37) + "...";
      return fmt::format("a string ({})", s);
    }
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return v.dump();
    case json::value_t::array:
      return v.empty()
                 ? "an empty array"
                 : fmt::format("an array of {} element{}", v.size(), v.size() == 1 ? "" : "s");
    case json::value_t::object:
      return v.empty() ? "an empty object"
                       : fmt::format("an object of {} key{}", v.size(), v.size() == 1 ? "" : "s");
    default:
      return "an unsupported value";
  }
}

std::vector<std::string_view> child_keys(std::string_view parent_path) {
  std::vector<std::string_view> keys;
  for (const SpecField* f : child_fields(parent_path)) keys.push_back(f->key());
  return keys;
}

std::string join(const std::vector<std::string_view>& items, std::string_view quote) {
  std::string out;
  for (std::string_view s : items) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{}{}{}", quote, s, quote);
  }
  return out;
}

namespace {

// "an integer", "a number in ns": what a field takes, for "expected ..." messages.
std::string expected_phrase(const SpecField& f) {
  switch (f.type) {
    case FieldType::object:
      return "an object";
    case FieldType::string:
      return "a non-empty string";
    case FieldType::integer:
      return f.unit.empty() ? "an integer" : fmt::format("an integer ({})", f.unit);
    case FieldType::number:
      return fmt::format("a number in {}", f.unit);
    case FieldType::size:
      return fmt::format("a number of {}", f.unit);
    case FieldType::choice:
      return fmt::format("one of {}", join({f.choices.begin(), f.choices.end()}, "\""));
    case FieldType::extent:
      return "[x, y], two integers";
    case FieldType::coord_list:
      return "a list of mesh nodes [[x, y], ...], one node [x, y] or \"every_node\"";
    case FieldType::choice_list:
      return fmt::format("a list of one or more of {}",
                         join({f.choices.begin(), f.choices.end()}, "\""));
    case FieldType::index_list:
      return f.unit.empty() ? "a list of integers" : fmt::format("a list of {} indices", f.unit);
  }
  return "a value";
}

std::string range_phrase(const SpecField& f) {
  const std::string unit = f.unit.empty() || f.type == FieldType::integer ? "" : " " + f.unit;
  return fmt::format("{}{}, {}]{}", f.min_exclusive ? "(" : "[", fmt_num(f.min), fmt_num(f.max),
                     unit);
}

// The value if `v` is a number with no fractional part (4 and 4.0 alike), else nullopt.
std::optional<double> integral(const json& v) {
  if (v.is_number_unsigned()) return static_cast<double>(v.get<std::uint64_t>());
  if (v.is_number_integer()) return static_cast<double>(v.get<std::int64_t>());
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::floor(d) == d) return d;
  }
  return std::nullopt;
}

std::string pow2_neighbours(std::uint64_t bytes, std::uint64_t per_unit, std::string_view unit) {
  const std::uint64_t lo = std::bit_floor(bytes), hi = lo << 1;
  auto show = [&](std::uint64_t b) {
    return per_unit == 1
               ? fmt::format("{}", b)
               : fmt::format("{} {}",
                             fmt_num(static_cast<double>(b) / static_cast<double>(per_unit)), unit);
  };
  return fmt::format("the nearest are {} and {}", show(lo), show(hi));
}

class Validator {
 public:
  explicit Validator(const Locator& locate) : locate_(locate) {}

  json check_root(const json& doc) { return check_object("", doc, ""); }

  void add(const std::string& pointer, std::string detail) {
    Source src = locate_(pointer);
    issues_.push_back({std::move(src.file), pointer, std::move(detail) + src.note});
  }

  // Where the value at `pointer` came from; its override ("PATH=VALUE") if one set it.
  Source source_of(const std::string& pointer) const { return locate_(pointer); }

  bool ok() const { return issues_.empty(); }
  [[noreturn]] void fail() {
    constexpr std::size_t kMaxIssues = 25;  // a wrong file should not print pages of errors
    if (issues_.size() > kMaxIssues) {
      const std::size_t more = issues_.size() - kMaxIssues;
      issues_.resize(kMaxIssues);
      issues_.push_back({issues_.front().file, "",
                         fmt::format("... and {} more issue{}", more, more == 1 ? "" : "s")});
    }
    throw SpecError(std::move(issues_));
  }

 private:
  json check_object(std::string_view path, const json& v, const std::string& ptr) {
    const std::vector<std::string_view> keys = child_keys(path);
    const std::string where = ptr.empty() ? "at the top level" : "in " + ptr;
    std::set<std::string, std::less<>> typo_of;  // fields an unknown key is likely meant to be
    for (const auto& [k, _] : v.items()) {
      if (std::find(keys.begin(), keys.end(), k) != keys.end()) continue;
      const std::string guess = nearest(k, keys);
      if (!guess.empty()) typo_of.insert(guess);
      add(ptr + "/" + pointer_token(k),
          fmt::format("unknown key \"{}\"; {}allowed keys {}: {}", k,
                      guess.empty() ? "" : fmt::format("did you mean \"{}\"? ", guess), where,
                      join(keys)));
    }
    json out = json::object();
    for (const SpecField* f : child_fields(path)) {
      const std::string key(f->key());
      const std::string child_ptr = ptr + "/" + key;
      const auto it = v.find(key);
      // null means "not given", as in a merge patch: it restores the default.
      if (it != v.end() && !it->is_null()) {
        json r = check(*f, *it, child_ptr);
        if (!r.is_null()) out[key] = std::move(r);
        continue;
      }
      if (f->presence == Presence::required) {
        if (!typo_of.contains(key)) add(child_ptr, missing(*f));
      } else if (f->presence == Presence::optional) {
        if (f->type == FieldType::object)
          out[key] = check_object(f->path, json::object(), child_ptr);
        else if (!f->default_value.is_null())
          out[key] = f->default_value;
      }
    }
    return out;
  }

  std::string missing(const SpecField& f) {
    if (f.type == FieldType::object) {
      std::vector<std::string_view> required;
      for (const SpecField* c : child_fields(f.path))
        if (c->presence == Presence::required) required.push_back(c->key());
      return fmt::format("missing required section \"{}\"; add it with at least: {}", f.key(),
                         join(required));
    }
    return fmt::format("missing required field \"{}\"; add {} ({})", f.key(), expected_phrase(f),
                       f.description);
  }

  void type_error(const SpecField& f, const json& v, const std::string& ptr) {
    add(ptr, fmt::format("expected {}, got {}", expected_phrase(f), describe_value(v)));
  }

  bool in_range(const SpecField& f, double d) const {
    if (!f.has_range) return true;
    return (f.min_exclusive ? d > f.min : d >= f.min) && d <= f.max;
  }

  void range_error(const SpecField& f, const json& v, const std::string& ptr) {
    const std::string unit = f.type == FieldType::integer ? "" : " " + f.unit;
    add(ptr, fmt::format("{}{} is out of range; allowed: {}", v.dump(), f.unit.empty() ? "" : unit,
                         range_phrase(f)));
  }

  // Returns the effective value, or null after recording why the value is unusable.
  json check(const SpecField& f, const json& v, const std::string& ptr) {
    switch (f.type) {
      case FieldType::object:
        if (!v.is_object()) return type_error(f, v, ptr), json();
        return check_object(f.path, v, ptr);
      case FieldType::string:
        if (!v.is_string()) return type_error(f, v, ptr), json();
        if (v.get_ref<const std::string&>().empty())
          return add(ptr, fmt::format("must not be empty; {}", f.description)), json();
        return v;
      case FieldType::integer:
        return check_integer(f, v, ptr);
      case FieldType::number:
        if (!v.is_number()) return type_error(f, v, ptr), json();
        if (!in_range(f, v.get<double>())) return range_error(f, v, ptr), json();
        return v;
      case FieldType::size:
        return check_size(f, v, ptr);
      case FieldType::choice: {
        if (!v.is_string()) return type_error(f, v, ptr), json();
        const auto& s = v.get_ref<const std::string&>();
        if (std::find(f.choices.begin(), f.choices.end(), s) != f.choices.end()) return v;
        const std::vector<std::string_view> allowed(f.choices.begin(), f.choices.end());
        const std::string guess = nearest(s, allowed);
        add(ptr, fmt::format("\"{}\" is not allowed; {}allowed values: {}", s,
                             guess.empty() ? "" : fmt::format("did you mean \"{}\"? ", guess),
                             join(allowed, "\"")));
        return json();
      }
      case FieldType::extent:
        return check_pair(f, v, ptr);
      case FieldType::choice_list: {
        if (!v.is_array()) return type_error(f, v, ptr), json();
        if (v.empty())
          return add(ptr, fmt::format("needs at least one value; allowed values: {}",
                                      join({f.choices.begin(), f.choices.end()}, "\""))),
                 json();
        bool good = true;
        for (std::size_t i = 0; i < v.size(); ++i) {
          SpecField one = f;
          one.type = FieldType::choice;
          const std::string at = ptr + "/" + std::to_string(i);
          if (check(one, v[i], at).is_null()) {
            good = false;
          } else if (std::find(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v[i]) !=
                     v.begin() + static_cast<std::ptrdiff_t>(i)) {
            add(at, fmt::format("{} is listed twice; list each value once", v[i].dump()));
            good = false;
          }
        }
        return good ? v : json();
      }
      case FieldType::index_list: {
        if (!v.is_array()) return type_error(f, v, ptr), json();
        if (v.empty()) return add(ptr, "needs at least one value, e.g. [0]"), json();
        SpecField one = f;
        one.type = FieldType::integer;
        json out = json::array();
        for (std::size_t i = 0; i < v.size(); ++i) {
          const std::string at = ptr + "/" + std::to_string(i);
          json r = check_integer(one, v[i], at);
          if (r.is_null()) return json();
          if (std::find(out.begin(), out.end(), r) != out.end())
            return add(at, fmt::format("{} is listed twice; list each value once", v[i].dump())),
                   json();
          out.push_back(std::move(r));
        }
        return out;
      }
      case FieldType::coord_list: {
        if (v == "every_node") return v;
        if (v.is_array() && !v.empty() && v[0].is_number())  // one node: [x, y]
          return check_pair(f, v, ptr);
        if (!v.is_array()) return type_error(f, v, ptr), json();
        if (v.empty())
          return add(ptr, fmt::format("needs at least one mesh node; e.g. [[0, 0]] ({})",
                                      f.description)),
                 json();
        json out = json::array();
        bool good = true;
        for (std::size_t i = 0; i < v.size(); ++i) {
          json r = check_pair(f, v[i], ptr + "/" + std::to_string(i));
          good = good && !r.is_null();
          out.push_back(std::move(r));
        }
        return good ? out : json();
      }
    }
    return json();
  }

  json check_integer(const SpecField& f, const json& v, const std::string& ptr) {
    if (!v.is_number()) return type_error(f, v, ptr), json();
    const std::optional<double> d = integral(v);
    if (!d) return add(ptr, fmt::format("expected an integer, got {}", v.dump())), json();
    if (!in_range(f, *d)) return range_error(f, v, ptr), json();
    const auto n = static_cast<std::uint64_t>(*d);  // ranges of integer fields start at >= 0
    if (f.power_of_two && !std::has_single_bit(n)) {
      add(ptr, fmt::format("{} is not a power of two; {}", n, pow2_neighbours(n, 1, "")));
      return json();
    }
    return n;
  }

  json check_size(const SpecField& f, const json& v, const std::string& ptr) {
    if (!v.is_number()) return type_error(f, v, ptr), json();
    const double units = v.get<double>();
    if (!in_range(f, units)) return range_error(f, v, ptr), json();
    // bytes_per_unit is a power of two, so this product is exact in binary floating point.
    const double bytes = units * static_cast<double>(f.bytes_per_unit);
    if (std::floor(bytes) != bytes) {
      add(ptr, fmt::format("{} {} is {} bytes, not a whole number of bytes; use a multiple of "
                           "1/{} {}",
                           v.dump(), f.unit, fmt_num(bytes), f.bytes_per_unit, f.unit));
      return json();
    }
    const auto n = static_cast<std::uint64_t>(bytes);
    if (f.power_of_two && !std::has_single_bit(n)) {
      add(ptr, fmt::format("{} {} ({} bytes) is not a power of two; {}", v.dump(), f.unit, n,
                           pow2_neighbours(n, f.bytes_per_unit, f.unit)));
      return json();
    }
    return v;
  }

  json check_pair(const SpecField& f, const json& v, const std::string& ptr) {
    if (!v.is_array() || v.size() != 2) {
      add(ptr, fmt::format("expected {}, got {}",
                           f.type == FieldType::extent ? "[x, y], two integers"
                                                       : "a mesh node [x, y], two integers",
                           describe_value(v)));
      return json();
    }
    json out = json::array();
    for (std::size_t i = 0; i < 2; ++i) {
      const std::string p = ptr + "/" + std::to_string(i);
      const std::optional<double> d = v[i].is_number() ? integral(v[i]) : std::nullopt;
      if (!d) {
        add(p, fmt::format("expected an integer {}, got {}", i == 0 ? "x" : "y",
                           describe_value(v[i])));
        return json();
      }
      if (!in_range(f, *d)) {
        add(p, fmt::format("{} = {} is out of range; allowed: {}", i == 0 ? "x" : "y", v[i].dump(),
                           range_phrase(f)));
        return json();
      }
      out.push_back(static_cast<std::uint64_t>(*d));
    }
    return out;
  }

  const Locator& locate_;
  std::vector<SpecIssue> issues_;
};

// ---- Rules across fields and conversion, on a document that passed the field checks. ----

std::uint32_t u32(const json& doc, const char* ptr) {
  return doc.at(json::json_pointer(ptr)).get<std::uint32_t>();
}
double num(const json& doc, const char* ptr) {
  return doc.at(json::json_pointer(ptr)).get<double>();
}
MeshCoord coord_of(const json& v) {
  return {v.at(0).get<std::uint32_t>(), v.at(1).get<std::uint32_t>()};
}

class Builder {
 public:
  Builder(const json& eff, Validator& v) : doc_(eff), v_(v) {}

  SystemConfig build() {
    SystemConfig c;
    c.name = doc_.at("name").get<std::string>();
    c.description = doc_.at("description").get<std::string>();
    c.sips = u32(doc_, "/system/sips/count");
    c.cubes_per_sip = u32(doc_, "/system/sips/cubes_per_sip");
    check_sizes(c);

    CubeConfig& cube = c.cube;
    cube.pes = u32(doc_, "/system/cube/pes");
    NocConfig& noc = cube.noc;
    noc.mesh_x = u32(doc_, "/system/cube/noc/mesh/0");
    noc.mesh_y = u32(doc_, "/system/cube/noc/mesh/1");
    if (std::uint64_t{noc.mesh_x} * noc.mesh_y != cube.pes) {
      v_.add("/system/cube/noc/mesh",
             fmt::format("a {}x{} mesh has {} nodes but /system/cube/pes is {}; one PE sits on "
                         "each node, so make pes equal x * y",
                         noc.mesh_x, noc.mesh_y, std::uint64_t{noc.mesh_x} * noc.mesh_y, cube.pes));
    }
    noc.link_bandwidth = bandwidth("/system/cube/noc/link_bandwidth_GBps");
    noc.hop_latency = ticks("/system/cube/noc/hop_latency_ns");
    noc.packet_bytes = u32(doc_, "/system/cube/noc/packet_bytes");
    noc.response_bytes = u32(doc_, "/system/cube/noc/response_bytes");
    if (noc.response_bytes > noc.packet_bytes)
      v_.add("/system/cube/noc/response_bytes",
             fmt::format("a {}-byte write response is longer than a {}-byte packet "
                         "(/system/cube/noc/packet_bytes); make it at most a packet",
                         noc.response_bytes, noc.packet_bytes));
    noc.hbm_nodes = nodes("/system/cube/noc/hbm_nodes", noc);
    noc.ucie_nodes = nodes("/system/cube/noc/ucie_nodes", noc);
    noc.inter_sip_nodes = nodes("/system/cube/noc/inter_sip_node", noc);

    HbmConfig& hbm = cube.hbm;
    hbm.capacity_bytes = size_bytes("/system/cube/hbm/capacity_GiB");
    hbm.bandwidth = bandwidth("/system/cube/hbm/bandwidth_GBps");
    hbm.channels = u32(doc_, "/system/cube/hbm/channels");
    if (hbm.bandwidth.bytes_per_s() < hbm.channels) {
      v_.add("/system/cube/hbm/channels",
             fmt::format("{} channels share {} B/s, less than 1 B/s each; use fewer channels or "
                         "more bandwidth",
                         hbm.channels, hbm.bandwidth.bytes_per_s()));
    }
    hbm.latency = ticks("/system/cube/hbm/latency_ns");
    hbm.atomic_time = ticks("/system/cube/hbm/atomic_ns");
    hbm.channel_interleave_bytes =
        doc_.at(json::json_pointer("/system/cube/hbm/channel_interleave_bytes"))
            .get<std::uint64_t>();
    hbm.model = doc_.at(json::json_pointer("/system/cube/hbm/model")).get<std::string>();
    build_banked(hbm);
    build_cache(cube);

    PeConfig& pe = c.pe;
    pe.clock = frequency("/system/pe/clock_GHz");
    pe.sram_bytes = size_bytes("/system/pe/sram_KiB");
    pe.issue = ticks("/system/pe/issue_ns");
    pe.vector.lanes = u32(doc_, "/system/pe/vector/lanes");
    pe.vector.latency_cycles = u32(doc_, "/system/pe/vector/latency_cycles");
    for (VectorOp op : kAllVectorOps) {
      const std::string p = fmt::format("/system/pe/vector/op_cycles/{}", vector_op_name(op));
      pe.vector.op_cycles[static_cast<int>(op)] = u32(doc_, p.c_str());
    }
    if (const auto banks = json::json_pointer("/system/pe/vector/sram_banks"); doc_.contains(banks))
      pe.vector.sram_banks = doc_.at(banks).get<std::uint32_t>();
    pe.vector.sram_bank_bytes = u32(doc_, "/system/pe/vector/sram_bank_bytes");
    pe.vector.sram_bank_mapping = bank_mappings().at(
        doc_.at(json::json_pointer("/system/pe/vector/sram_bank_mapping")).get<std::string>(),
        "system.pe.vector.sram_bank_mapping");
    pe.gemm.startup = ticks("/system/pe/gemm/startup_ns");
    for (DType t : kAllDTypes) {
      const std::string p = fmt::format("/system/pe/gemm/peak_TFLOPS/{}", dtype_name(t));
      const auto ptr = json::json_pointer(p);
      pe.gemm.peak_flops[static_cast<int>(t)] =
          doc_.contains(ptr) ? num(doc_, p.c_str()) * 1e12 : 0;
    }
    pe.gemm.epilogue_elements_per_s = num(doc_, "/system/pe/gemm/epilogue_Gelem_per_s") * 1e9;
    build_systolic(pe);
    pe.dma.max_outstanding_packets = u32(doc_, "/system/pe/dma/max_outstanding_packets");

    build_ucie(c);
    build_inter_sip(c);
    build_buffers(c);

    build_messages(c);
    build_dispatch(c);
    build_host(c);
    build_energy(c);

    c.memory.interleave_bytes = size_bytes("/system/memory/interleave_KiB");
    c.memory.page_bytes = size_bytes("/system/memory/page_KiB");
    if (hbm.capacity_bytes % c.memory.page_bytes != 0) {
      v_.add("/system/memory/page_KiB",
             fmt::format("{} KiB pages do not divide a cube's HBM ({} bytes): functional memory "
                         "is paged within each cube; use a page size that divides it (at most "
                         "{} KiB)",
                         c.memory.page_bytes / 1024, hbm.capacity_bytes,
                         (std::uint64_t{1} << std::countr_zero(hbm.capacity_bytes)) / 1024));
    }
    for (const auto& [granule, ptr] :
         {std::pair{hbm.channel_interleave_bytes, "/system/cube/hbm/channel_interleave_bytes"},
          std::pair{c.memory.interleave_bytes, "/system/memory/interleave_KiB"}}) {
      if (hbm.capacity_bytes % granule != 0) {
        v_.add("/system/cube/hbm/capacity_GiB",
               fmt::format("{} bytes per cube is not a whole number of {}-byte granules ({}); "
                           "make the capacity a multiple of it",
                           hbm.capacity_bytes, granule, ptr));
      }
    }
    check_total_hbm(c);
    return c;
  }

 private:
  // Sizes that could never be simulated, refused before anything is built from them.
  void check_sizes(const SystemConfig& c) {
    const std::uint64_t cubes = c.total_cubes();
    const std::uint64_t pes = cubes * u32(doc_, "/system/cube/pes");
    if (cubes > kMaxTotalCubes) {
      v_.add("/system/sips",
             fmt::format("{} SIPs x {} cubes = {} cubes, more than the {} cubesim simulates; "
                         "reduce count or cubes_per_sip",
                         c.sips, c.cubes_per_sip, cubes, kMaxTotalCubes));
    }
    if (pes > kMaxTotalPes) {
      v_.add(
          "/system/sips",
          fmt::format("{} SIPs x {} cubes x {} PEs = {} PEs, more than the {} cubesim "
                      "simulates; reduce sips.count, sips.cubes_per_sip or cube.pes",
                      c.sips, c.cubes_per_sip, u32(doc_, "/system/cube/pes"), pes, kMaxTotalPes));
    }
  }

  // Energy per action (system.energy): accounted when any figure of it is above 0 (the
  // section's defaults are all 0, so one left out accounts nothing).
  void build_energy(SystemConfig& c) {
    EnergyConfig& e = c.energy;
    e.noc_pj_per_byte = num(doc_, "/system/energy/noc_pJ_per_byte");
    e.ucie_pj_per_byte = num(doc_, "/system/energy/ucie_pJ_per_byte");
    e.inter_sip_pj_per_byte = num(doc_, "/system/energy/inter_sip_pJ_per_byte");
    e.hbm_pj_per_byte = num(doc_, "/system/energy/hbm_pJ_per_byte");
    e.cache_pj_per_byte = num(doc_, "/system/energy/cache_pJ_per_byte");
    e.sram_pj_per_byte = num(doc_, "/system/energy/sram_pJ_per_byte");
    e.vector_pj_per_element = num(doc_, "/system/energy/vector_pJ_per_element");
    e.static_w_per_pe = num(doc_, "/system/energy/static_W_per_pe");
    for (DType t : kAllDTypes) {
      const auto ptr =
          json::json_pointer(fmt::format("/system/energy/gemm_pJ_per_flop/{}", dtype_name(t)));
      e.gemm_pj_per_flop[static_cast<int>(t)] = doc_.contains(ptr) ? doc_.at(ptr).get<double>() : 0;
    }
    e.on = e.noc_pj_per_byte > 0 || e.ucie_pj_per_byte > 0 || e.inter_sip_pj_per_byte > 0 ||
           e.hbm_pj_per_byte > 0 || e.cache_pj_per_byte > 0 || e.sram_pj_per_byte > 0 ||
           e.vector_pj_per_element > 0 || e.static_w_per_pe > 0 ||
           std::any_of(e.gemm_pj_per_flop.begin(), e.gemm_pj_per_flop.end(),
                       [](double v) { return v > 0; });
  }

  // The banked HBM's DRAM (system.cube.hbm.banked): rows of whole bursts, a refresh interval
  // that leaves time to serve, a burst that takes the channel's bus some time.
  void build_banked(HbmConfig& hbm) {
    DramTiming& t = hbm.banked;
    const std::string at = "/system/cube/hbm/banked/";
    t.row_policy =
        row_policies().at(doc_.at(json::json_pointer(at + "row_policy")).get<std::string>(),
                          "system.cube.hbm.banked.row_policy");
    t.bank_groups = u32(doc_, (at + "bank_groups").c_str());
    t.banks_per_group = u32(doc_, (at + "banks_per_group").c_str());
    t.row_bytes = u32(doc_, (at + "row_bytes").c_str());
    t.burst_bytes = u32(doc_, (at + "burst_bytes").c_str());
    t.queue_depth = u32(doc_, (at + "queue_depth").c_str());
    t.trcd = ticks((at + "trcd_ns").c_str());
    t.tcl = ticks((at + "tcl_ns").c_str());
    t.tcwl = ticks((at + "tcwl_ns").c_str());
    t.trp = ticks((at + "trp_ns").c_str());
    t.tras = ticks((at + "tras_ns").c_str());
    t.twr = ticks((at + "twr_ns").c_str());
    t.trfc = ticks((at + "trfc_ns").c_str());
    t.trefi = ticks((at + "trefi_ns").c_str());
    t.max_postponed_refreshes = u32(doc_, (at + "max_postponed_refreshes").c_str());
    t.twtr = ticks((at + "twtr_ns").c_str());
    t.trtw = ticks((at + "trtw_ns").c_str());
    t.tccd_l = ticks((at + "tccd_l_ns").c_str());
    t.trrd = ticks((at + "trrd_ns").c_str());
    if (hbm.model != "banked") return;
    if (t.row_bytes < t.burst_bytes)
      v_.add(at + "row_bytes",
             fmt::format("a {}-byte row is shorter than a {}-byte burst; make the row at least "
                         "one burst",
                         t.row_bytes, t.burst_bytes));
    if (t.trefi <= t.trfc)
      v_.add(at + "trefi_ns",
             fmt::format("refreshes every {} of {} each leave no time to serve requests; make "
                         "trefi_ns longer than trfc_ns",
                         emu::format_time(t.trefi), emu::format_time(t.trfc)));
    if (hbm.channels > 0 && hbm.bandwidth.bytes_per_s() >= hbm.channels) {
      const Bandwidth bus = Bandwidth::from_bytes_per_s(hbm.bandwidth.bytes_per_s() / hbm.channels);
      if (bus.transfer_time(t.burst_bytes) == 0)
        v_.add(at + "burst_bytes",
               fmt::format("a {}-byte burst takes less than 1 ps on a {} B/s channel "
                           "(/system/cube/hbm/bandwidth_GBps / channels); use longer bursts",
                           t.burst_bytes, bus.bytes_per_s()));
    }
  }

  // The cube's cache (system.cube.cache): whole sets of whole lines, each line inside one HBM
  // channel granule, no larger than the memory it caches.
  void build_cache(CubeConfig& cube) {
    CacheConfig& k = cube.cache;
    k.model = cache_models().at(
        doc_.at(json::json_pointer("/system/cube/cache/model")).get<std::string>(),
        "system.cube.cache.model");
    k.size_bytes = size_bytes("/system/cube/cache/size_MiB");
    k.ways = u32(doc_, "/system/cube/cache/ways");
    k.line_bytes = u32(doc_, "/system/cube/cache/line_bytes");
    k.hit_latency = ticks("/system/cube/cache/hit_latency_ns");
    k.bandwidth = bandwidth("/system/cube/cache/bandwidth_GBps");
    if (!k.enabled()) return;
    const std::uint64_t set = std::uint64_t{k.ways} * k.line_bytes;
    if (k.size_bytes % set != 0)
      v_.add("/system/cube/cache/size_MiB",
             fmt::format("{} bytes is not a whole number of sets of {} ways x {} bytes = {} "
                         "bytes; make the size a multiple of it, or change ways or line_bytes",
                         k.size_bytes, k.ways, k.line_bytes, set));
    if (k.size_bytes > cube.hbm.capacity_bytes)
      v_.add("/system/cube/cache/size_MiB",
             fmt::format("a {}-byte cache is larger than the {} bytes of HBM it caches "
                         "(/system/cube/hbm/capacity_GiB); make it smaller",
                         k.size_bytes, cube.hbm.capacity_bytes));
    if (k.size_bytes % set == 0 && k.size_bytes >= set &&
        cube.hbm.capacity_bytes / k.line_bytes / (k.size_bytes / set) > CubeCaches::kMaxTag)
      v_.add("/system/cube/cache/size_MiB",
             fmt::format("{} sets of {}-byte lines over {} bytes of HBM give each set more than "
                         "2^32 - 2 lines to tell apart; make the cache larger or its lines longer",
                         k.size_bytes / set, k.line_bytes, cube.hbm.capacity_bytes));
    if (k.line_bytes > cube.hbm.channel_interleave_bytes)
      v_.add("/system/cube/cache/line_bytes",
             fmt::format("a {}-byte line spans several HBM channels ({}-byte granules, "
                         "/system/cube/hbm/channel_interleave_bytes); use lines of at most the "
                         "granule",
                         k.line_bytes, cube.hbm.channel_interleave_bytes));
    if (k.bandwidth.bytes_per_s() < cube.hbm.channels)
      v_.add("/system/cube/cache/bandwidth_GBps",
             fmt::format("{} B/s over {} slices (one per HBM channel) is less than 1 B/s each; "
                         "raise the bandwidth",
                         k.bandwidth.bytes_per_s(), cube.hbm.channels));
  }

  // The GEMM engine's array (system.pe.gemm.systolic), for model systolic. It must not be
  // larger than the fastest peak allows at one multiply-add per cell per cycle.
  void build_systolic(PeConfig& pe) {
    GemmConfig& g = pe.gemm;
    g.clock = pe.clock;
    g.model =
        gemm_models().at(doc_.at(json::json_pointer("/system/pe/gemm/model")).get<std::string>(),
                         "system.pe.gemm.model");
    g.rows = u32(doc_, "/system/pe/gemm/systolic/rows");
    g.cols = u32(doc_, "/system/pe/gemm/systolic/cols");
    g.dataflow = dataflows().at(
        doc_.at(json::json_pointer("/system/pe/gemm/systolic/dataflow")).get<std::string>(),
        "system.pe.gemm.systolic.dataflow");
    g.sram_feed_bytes_per_s = num(doc_, "/system/pe/gemm/systolic/sram_feed_GBps") * 1e9;
    if (g.model != GemmModel::systolic) return;
    double fastest = 0;
    DType at = DType::f16;
    for (DType t : kAllDTypes)
      if (g.peak(t) > fastest) fastest = g.peak(t), at = t;
    const double one_mac = 2.0 * g.rows * g.cols * static_cast<double>(pe.clock.hz());
    if (one_mac > fastest * (1 + 1e-9))
      v_.add("/system/pe/gemm/systolic/rows",
             fmt::format("a {} x {} array at {} GHz does {:.4g} TFLOP/s at one multiply-add per "
                         "cell per cycle, more than the fastest peak_TFLOPS ({} = {:.4g}): the "
                         "array is larger than the peak allows; use fewer rows or columns, or "
                         "raise the peak",
                         g.rows, g.cols, static_cast<double>(pe.clock.hz()) / 1e9, one_mac / 1e12,
                         dtype_name(at), fastest / 1e12));
  }

  void check_total_hbm(const SystemConfig& c) {
    const std::uint64_t cubes = c.total_cubes();
    if (c.cube.hbm.capacity_bytes > (kMaxTotalHbmBytes - 1) / cubes) {
      v_.add("/system/cube/hbm/capacity_GiB",
             fmt::format("{} cubes x {} bytes of HBM reaches 2^60 bytes; the flat address space "
                         "must stay below it, so reduce the capacity or the number of cubes",
                         cubes, c.cube.hbm.capacity_bytes));
    }
  }

  // The grid [x, y] of a mesh or torus of n nodes (cubes or SIPs) at grid_ptr: required with
  // x * y == n for those, refused for the others (0, 0 when absent or refused). A grid set
  // before the topology (a base spec's grid under an overriding topology, as in a sweep over
  // topologies) is a grid another topology needed, and is ignored.
  std::pair<std::uint32_t, std::uint32_t> grid(GraphKind kind, const std::string& topo,
                                               const char* topo_ptr, const char* grid_ptr,
                                               std::uint32_t n, const char* count_name) {
    const json::json_pointer ptr(grid_ptr);
    const bool given = doc_.contains(ptr);
    if (!has_grid(kind)) {
      if (given && v_.source_of(topo_ptr).layer <= v_.source_of(grid_ptr).layer)
        v_.add(grid_ptr, fmt::format("only allowed when topology is \"mesh\" or \"torus\", but "
                                     "topology is \"{}\"; remove it (or set it to null in a spec "
                                     "that extends a grid spec)",
                                     topo));
      return {0, 0};
    }
    if (!given) {
      v_.add(grid_ptr, fmt::format("missing: topology \"{}\" needs the grid; add [x, y] with "
                                   "x * y == {} ({})",
                                   topo, count_name, n));
      return {0, 0};
    }
    const auto x = doc_.at(ptr).at(0).get<std::uint32_t>(),
               y = doc_.at(ptr).at(1).get<std::uint32_t>();
    if (std::uint64_t{x} * y != n) {
      const std::string set = v_.source_of(count_name).override;
      v_.add(grid_ptr, fmt::format("a {}x{} grid has {} nodes but {} is {}{}; make x * y equal it",
                                   x, y, std::uint64_t{x} * y, count_name, n,
                                   set.empty() ? "" : fmt::format(" (set by override {})", set)));
      return {0, 0};
    }
    return {x, y};
  }

  // Whether a switch's field at ptr is given and applies: refused with another topology, unless
  // the topology was set after it (a sweep from a switch spec to other topologies), then ignored.
  bool switch_field(GraphKind kind, const std::string& topo, const char* topo_ptr,
                    const std::string& ptr) {
    if (!doc_.contains(json::json_pointer(ptr))) return false;
    if (kind == GraphKind::switch_) return true;
    if (v_.source_of(topo_ptr).layer <= v_.source_of(ptr).layer)
      v_.add(ptr, fmt::format("only allowed when topology is \"switch\", but topology is "
                              "\"{}\"; remove it (or set it to null in a spec that extends a "
                              "switch spec)",
                              topo));
    return false;
  }

  // A switch's crossbar latency at ptr: 0 when absent or ignored.
  Tick switch_latency(GraphKind kind, const std::string& topo, const char* topo_ptr,
                      const char* ptr) {
    return switch_field(kind, topo, topo_ptr, ptr) ? ticks(ptr) : 0;
  }

  // A switch's in-network reduction at ptr (system.*.switch_reduction): none when absent or
  // ignored.
  SwitchReduction switch_reduction(GraphKind kind, const std::string& topo, const char* topo_ptr,
                                   const std::string& ptr, Bandwidth link) {
    SwitchReduction r;
    if (!switch_field(kind, topo, topo_ptr, ptr)) return r;
    // Dtypes that failed validation are absent here: the spec is refused anyway.
    r.on = true;
    const json::json_pointer dtypes(ptr + "/dtypes");
    if (doc_.contains(dtypes)) r.dtypes = 0;
    if (doc_.contains(dtypes))
      for (const auto& name : doc_.at(dtypes))
        if (const auto t = dtype_from_name(name.get<std::string>()))
          r.dtypes |= 1U << static_cast<int>(*t);
    const std::string rate = ptr + "/bandwidth_GBps";
    r.bandwidth = doc_.contains(json::json_pointer(rate)) ? bandwidth(rate.c_str()) : link;
    return r;
  }

  void build_ucie(SystemConfig& c) {
    UcieConfig& u = c.ucie;
    const std::string topo =
        doc_.at(json::json_pointer("/system/ucie/topology")).get<std::string>();
    u.topology = graph_kinds().at(topo, "system.ucie.topology");
    std::tie(u.mesh_x, u.mesh_y) =
        grid(u.topology, topo, "/system/ucie/topology", "/system/ucie/mesh", c.cubes_per_sip,
             "/system/sips/cubes_per_sip");
    const std::uint64_t per_sip =
        Graph::edge_count(u.topology, c.cubes_per_sip, u.mesh_x, u.mesh_y);
    if (per_sip * c.sips > kMaxLinksPerClass) {
      v_.add("/system/ucie/topology",
             fmt::format("{} on {} cubes makes {} UCIe links per SIP, {} in all, more than the {} "
                         "cubesim simulates; use ring, mesh or torus, or fewer cubes",
                         topo, c.cubes_per_sip, per_sip, per_sip * c.sips, kMaxLinksPerClass));
    }
    u.latency = ticks("/system/ucie/latency_ns");
    u.switch_latency =
        switch_latency(u.topology, topo, "/system/ucie/topology", "/system/ucie/switch_latency_ns");
    u.bandwidth = bandwidth("/system/ucie/bandwidth_GBps");
    u.connections = connections("/system/ucie/connections", " per side",
                                "/system/cube/noc/ucie_nodes", c.cube.noc.ucie_nodes.size());
    u.reduction = switch_reduction(u.topology, topo, "/system/ucie/topology",
                                   "/system/ucie/switch_reduction", u.bandwidth);
  }

  void build_inter_sip(SystemConfig& c) {
    InterSipConfig& s = c.inter_sip;
    const std::string topo =
        doc_.at(json::json_pointer("/system/inter_sip/topology")).get<std::string>();
    s.topology = graph_kinds().at(topo, "system.inter_sip.topology");
    std::tie(s.grid_x, s.grid_y) = grid(s.topology, topo, "/system/inter_sip/topology",
                                        "/system/sips/grid", c.sips, "/system/sips/count");
    const std::uint64_t links = Graph::edge_count(s.topology, c.sips, s.grid_x, s.grid_y);
    if (links > kMaxLinksPerClass) {
      v_.add("/system/inter_sip/topology",
             fmt::format("{} on {} SIPs makes {} links, more than the {} cubesim simulates; use "
                         "ring, mesh or torus, or fewer SIPs",
                         topo, c.sips, links, kMaxLinksPerClass));
    }
    s.port_cube = u32(doc_, "/system/inter_sip/port_cube");
    if (s.port_cube >= c.cubes_per_sip) {
      v_.add(
          "/system/inter_sip/port_cube",
          fmt::format("cube {} does not exist: a SIP has {} cube{} (/system/sips/cubes_per_sip); "
                      "allowed: 0 to {}",
                      s.port_cube, c.cubes_per_sip, c.cubes_per_sip == 1 ? "" : "s",
                      c.cubes_per_sip - 1));
    }
    s.latency = ticks("/system/inter_sip/latency_ns");
    s.switch_latency = switch_latency(s.topology, topo, "/system/inter_sip/topology",
                                      "/system/inter_sip/switch_latency_ns");
    s.bandwidth = bandwidth("/system/inter_sip/bandwidth_GBps");
    s.connections =
        connections("/system/inter_sip/connections", "", "/system/cube/noc/inter_sip_node",
                    c.cube.noc.inter_sip_nodes.size());
    s.reduction = switch_reduction(s.topology, topo, "/system/inter_sip/topology",
                                   "/system/inter_sip/switch_reduction", s.bandwidth);
  }

  void build_messages(SystemConfig& c) {
    MessagesConfig& m = c.messages;
    const std::string memory =
        doc_.at(json::json_pointer("/system/messages/memory")).get<std::string>();
    m.memory = slot_memories().at(memory, "system.messages.memory");
    m.credit_bytes = u32(doc_, "/system/messages/credit_bytes");
    m.pe_sram_bandwidth = bandwidth("/system/messages/pe_sram/bandwidth_GBps");
    m.pe_sram_latency = ticks("/system/messages/pe_sram/latency_ns");
    m.cube_sram_bytes = size_bytes("/system/messages/cube_sram/capacity_KiB");
    m.cube_sram_bandwidth = bandwidth("/system/messages/cube_sram/bandwidth_GBps");
    m.cube_sram_latency = ticks("/system/messages/cube_sram/latency_ns");
    // Each class's window: its own fields, else the section's, else (slots) what covers the
    // class's credit loop, which needs the network read above to be valid.
    const bool all_slots = doc_.contains(json::json_pointer("/system/messages/slots"));
    const std::uint64_t slot_bytes = size_bytes("/system/messages/slot_KiB");
    for (ChannelClass k : kAllChannelClasses) {
      MessageWindow& w = m.window(k);
      const std::string at = fmt::format("/system/messages/{}", channel_class_name(k));
      const std::string slots = at + "/slots", bytes = at + "/slot_KiB";
      w.slot_bytes =
          doc_.contains(json::json_pointer(bytes)) ? size_bytes(bytes.c_str()) : slot_bytes;
      w.automatic = false;
      if (doc_.contains(json::json_pointer(slots)))
        w.slots = u32(doc_, slots.c_str());
      else if (all_slots)
        w.slots = u32(doc_, "/system/messages/slots");
      else
        w.automatic = true;
    }
    if (!v_.ok()) return;
    for (ChannelClass k : kAllChannelClasses)
      if (MessageWindow& w = m.window(k); w.automatic) w.slots = default_slots(c, k, w.slot_bytes);
  }

  void build_dispatch(SystemConfig& c) {
    const std::string policy =
        doc_.at(json::json_pointer("/system/dispatch/policy")).get<std::string>();
    c.dispatch.policy = dispatch_policies().at(policy, "system.dispatch.policy");
    c.dispatch.cost = ticks("/system/dispatch/cost_ns");
    c.dispatch.launch = ticks("/system/dispatch/launch_ns");
  }

  void build_host(SystemConfig& c) {
    HostConfig& h = c.host;
    h.link_bandwidth = bandwidth("/system/host/link_bandwidth_GBps");
    h.link_latency = ticks("/system/host/link_latency_ns");
    h.setup = ticks("/system/host/setup_ns");
    h.io_bandwidth = bandwidth("/system/host/io_die/bandwidth_GBps");
    h.io_latency = ticks("/system/host/io_die/latency_ns");
    h.io_nodes = nodes("/system/host/io_die/nodes", c.cube.noc);
    const json& cubes = doc_.at(json::json_pointer("/system/host/io_die/cubes"));
    h.io_cubes.clear();
    for (std::size_t i = 0; i < cubes.size(); ++i) {
      const auto cube = cubes[i].get<std::uint32_t>();
      if (cube >= c.cubes_per_sip)
        v_.add(fmt::format("/system/host/io_die/cubes/{}", i),
               fmt::format("cube {} does not exist: a SIP has {} cube{} (/system/sips/"
                           "cubes_per_sip); allowed: 0 to {}",
                           cube, c.cubes_per_sip, c.cubes_per_sip == 1 ? "" : "s",
                           c.cubes_per_sip - 1));
      h.io_cubes.push_back(cube);
    }
  }

  void build_buffers(SystemConfig& c) {
    c.cube.noc.router = buffers("/system/cube/noc/router", c.cube.noc.hop_latency, c);
    build_router_timing(c);
    c.ucie.buffers = buffers("/system/ucie", c.ucie.latency, c);
    c.inter_sip.buffers = buffers("/system/inter_sip", c.inter_sip.latency, c);
    // Enough virtual channels for every class that can reach each bounded buffer (the classes
    // depend on which buffers are bounded, so this comes after all three are read). The plan
    // follows the routes, so it needs graphs that were accepted.
    if (!v_.ok() ||
        !(c.cube.noc.router.bounded() || c.ucie.buffers.bounded() || c.inter_sip.buffers.bounded()))
      return;
    const VcPlan plan = VcPlan::of(c);
    const auto enough = [&](const BufferConfig& b, const std::string& at, BufferKind kind,
                            const std::string& why) {
      const std::uint32_t classes = plan.classes(kind);
      if (!b.bounded() || b.virtual_channels >= classes) return;
      v_.add(at + "/virtual_channels",
             fmt::format("{} virtual channel{} cannot keep the routes free of deadlock: the "
                         "packets in these buffers are of {} classes ({}), each needing a "
                         "channel of its own; {}set virtual_channels to at least {}, or "
                         "input_buffer_bytes to 0 (unbounded)",
                         b.virtual_channels, b.virtual_channels == 1 ? "" : "s", classes, why,
                         made_by_overrides(), classes));
    };
    const std::string cubes =
        fmt::format("the routes over a {} of {} cube{} take {}", to_string(c.ucie.topology),
                    c.cubes_per_sip, c.cubes_per_sip == 1 ? "" : "s", plan.cube_classes());
    const std::string twice =
        plan.sip_classes() == 0
            ? ""
            : ", twice: to the inter-SIP port and from it, as the inter-SIP buffers are bounded";
    enough(c.cube.noc.router, "/system/cube/noc/router", BufferKind::router, cubes + twice);
    const std::uint32_t per_link = plan.classes(BufferKind::ucie) / (twice.empty() ? 1 : 2);
    if (c.cubes_per_sip > 1)
      enough(c.ucie.buffers, "/system/ucie", BufferKind::ucie,
             fmt::format("{}, of which up to {} cross one link{}", cubes, per_link, twice));
    if (c.sips > 1)
      enough(c.inter_sip.buffers, "/system/inter_sip", BufferKind::inter_sip,
             fmt::format("{} for the routes over a {} of {} SIPs, and 1 for packets entering "
                         "their SIP",
                         plan.sip_classes(), to_string(c.inter_sip.topology), c.sips));
  }

  void build_router_timing(SystemConfig& c) {
    RouterTiming& r = c.cube.noc.router_timing;
    const char* clock_ptr = "/system/cube/noc/router/clock_GHz";
    const Frequency clock =
        doc_.contains(json::json_pointer(clock_ptr)) ? frequency(clock_ptr) : c.pe.clock;
    r.pipeline_cycles = u32(doc_, "/system/cube/noc/router/pipeline_cycles");
    r.pipeline = clock.cycles_to_ticks(emu::Cycles{r.pipeline_cycles});
    r.turnaround =
        r.pipeline_cycles == 0 ? 0 : clock.cycles_to_ticks(emu::Cycles{r.pipeline_cycles - 1});
    r.input_speedup = u32(doc_, "/system/cube/noc/router/input_speedup");
    r.allocation = router_allocations().at(
        doc_.at(json::json_pointer("/system/cube/noc/router/allocation")).get<std::string>(),
        "system.cube.noc.router.allocation");
  }

  // "the override system.sips.count=2 makes it so; " when overrides set the fields the classes
  // depend on, else "".
  std::string made_by_overrides() const {
    std::vector<std::string> set;
    for (const char* ptr :
         {"/system/sips/count", "/system/sips/cubes_per_sip", "/system/sips/grid",
          "/system/ucie/topology", "/system/ucie/mesh", "/system/ucie/input_buffer_bytes",
          "/system/ucie/virtual_channels", "/system/inter_sip/topology",
          "/system/inter_sip/input_buffer_bytes", "/system/inter_sip/virtual_channels",
          "/system/cube/noc/router/input_buffer_bytes",
          "/system/cube/noc/router/virtual_channels"}) {
      const std::string o = v_.source_of(ptr).override;
      if (!o.empty() && std::find(set.begin(), set.end(), o) == set.end()) set.push_back(o);
    }
    if (set.empty()) return "";
    return fmt::format("the override{} {} make{} it so; ", set.size() == 1 ? "" : "s",
                       fmt::join(set, ", "), set.size() == 1 ? "s" : "");
  }

  // The buffers at `ptr` (a section holding input_buffer_bytes, virtual_channels and
  // credit_latency_ns), whose credit latency defaults to `link_latency`.
  BufferConfig buffers(const std::string& ptr, Tick link_latency, const SystemConfig& c) {
    BufferConfig b;
    b.input_buffer_bytes =
        doc_.at(json::json_pointer(ptr + "/input_buffer_bytes")).get<std::uint64_t>();
    b.virtual_channels = u32(doc_, (ptr + "/virtual_channels").c_str());
    const std::string credit = ptr + "/credit_latency_ns";
    b.credit_latency =
        doc_.contains(json::json_pointer(credit)) ? ticks(credit.c_str()) : link_latency;
    const std::uint32_t packet = c.cube.noc.packet_bytes;
    if (b.bounded() && b.vc_bytes() < packet) {
      v_.add(
          ptr + "/input_buffer_bytes",
          fmt::format("{} bytes over {} virtual channel{} is {} bytes a channel, less than one "
                      "packet (/system/cube/noc/packet_bytes = {}): a packet moves on only when "
                      "a channel beyond has room for all of it; make input_buffer_bytes at "
                      "least {} (virtual_channels x packet_bytes), or use fewer channels or "
                      "smaller packets",
                      b.input_buffer_bytes, b.virtual_channels, b.virtual_channels == 1 ? "" : "s",
                      b.vc_bytes(), packet, std::uint64_t{b.virtual_channels} * packet));
    }
    return b;
  }

  // A count of parallel links, each of which needs a node of its own among `nodes` (listed at
  // nodes_ptr; 0 when that list was refused already).
  std::uint32_t connections(const char* ptr, const char* per, const char* nodes_ptr,
                            std::size_t nodes) {
    const std::uint32_t n = u32(doc_, ptr);
    if (n > nodes && nodes != 0)
      v_.add(ptr, fmt::format("{} connections{} need as many distinct nodes, and {} names {}; "
                              "list more nodes or use fewer connections",
                              n, per, nodes_ptr, nodes));
    return n;
  }

  bool inside_mesh(const std::string& ptr, MeshCoord n, const NocConfig& noc) {
    if (n.x < noc.mesh_x && n.y < noc.mesh_y) return true;
    v_.add(ptr, fmt::format("[{}, {}] is outside the {}x{} mesh; x must be in [0, {}] and y in "
                            "[0, {}]",
                            n.x, n.y, noc.mesh_x, noc.mesh_y, noc.mesh_x - 1, noc.mesh_y - 1));
    return false;
  }

  std::vector<MeshCoord> nodes(const char* ptr, const NocConfig& noc) {
    const json& list = doc_.at(json::json_pointer(ptr));
    std::vector<MeshCoord> out;
    if (list == "every_node") {
      for (std::uint32_t y = 0; y < noc.mesh_y; ++y)
        for (std::uint32_t x = 0; x < noc.mesh_x; ++x) out.push_back({x, y});
      return out;
    }
    if (list.is_array() && !list.empty() && list[0].is_number()) {  // one node: [x, y]
      const MeshCoord n = coord_of(list);
      if (inside_mesh(ptr, n, noc)) out.push_back(n);
      return out;
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const MeshCoord n = coord_of(list[i]);
      const std::string p = fmt::format("{}/{}", ptr, i);
      if (!inside_mesh(p, n, noc)) continue;
      const auto dup = std::find(out.begin(), out.end(), n);
      if (dup != out.end()) {
        v_.add(p, fmt::format("node [{}, {}] is listed twice (also at index {}); name each node "
                              "once",
                              n.x, n.y, dup - out.begin()));
        continue;
      }
      out.push_back(n);
    }
    return out;
  }

  // emu/time.hpp does every unit conversion; its refusals become spec errors at the field.
  template <typename F>
  auto convert(const char* ptr, const char* unit, F&& f) -> decltype(f(0.0)) {
    const double value = num(doc_, ptr);
    try {
      return f(value);
    } catch (const emu::TimeError& e) {
      v_.add(ptr, fmt::format("{} {} cannot be represented: {}; use a larger or smaller value",
                              fmt_num(value), unit, e.what()));
      return f(1.0);  // a placeholder: the issue fails validation before the config is used
    }
  }
  Tick ticks(const char* ptr) {
    return convert(ptr, "ns", [](double d) { return emu::from_ns(d); });
  }
  Bandwidth bandwidth(const char* ptr) {
    return convert(ptr, "GB/s", [](double d) { return Bandwidth::from_GBps(d); });
  }
  Frequency frequency(const char* ptr) {
    return convert(ptr, "GHz", [](double d) { return Frequency::from_GHz(d); });
  }
  std::uint64_t size_bytes(const char* ptr) {
    const SpecField* f = find_field_by_pointer(ptr);
    return static_cast<std::uint64_t>(num(doc_, ptr) * static_cast<double>(f->bytes_per_unit));
  }
  static const SpecField* find_field_by_pointer(std::string_view ptr) {
    std::string dotted(ptr.substr(1));
    std::replace(dotted.begin(), dotted.end(), '/', '.');
    return find_field(dotted);
  }

  const json& doc_;
  Validator& v_;
};

}  // namespace

Validated validate(const json& merged, const Locator& locate) {
  Validator v(locate);
  if (!merged.is_object()) {
    v.add("",
          fmt::format("expected a JSON object at the top level, got {}", describe_value(merged)));
    v.fail();
  }
  Validated out;
  out.effective = v.check_root(merged);
  if (!v.ok()) v.fail();
  out.config = Builder(out.effective, v).build();
  if (!v.ok()) v.fail();
  return out;
}

}  // namespace cubesim::components::spec
