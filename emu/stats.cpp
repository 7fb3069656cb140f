#include "emu/stats.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace cubesim::emu {

void Accumulator::sample(double x) {
  ++count_;
  sum_ += x;
  const double delta = x - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (x - mean_);
  if (x < min_) min_ = x;
  if (x > max_) max_ = x;
}

double Accumulator::stddev() const {
  return count_ > 1 ? std::sqrt(m2_ / static_cast<double>(count_ - 1)) : 0.0;
}

nlohmann::json Accumulator::to_json() const {
  if (count_ == 0) return {{"count", 0}};
  return {{"count", count_}, {"sum", sum_},    {"min", min_},
          {"max", max_},     {"mean", mean()}, {"stddev", stddev()}};
}

Histogram::Histogram(std::string description, double low, double high, std::size_t buckets)
    : Stat(std::move(description)), low_(low), high_(high) {
  if (!(high > low) || buckets == 0) {
    throw std::invalid_argument(fmt::format(
        "a histogram needs low < high and at least one bucket, got [{}, {}) with {} buckets", low,
        high, buckets));
  }
  width_ = (high - low) / static_cast<double>(buckets);
  buckets_.assign(buckets, 0);
}

void Histogram::sample(double x) {
  ++count_;
  if (x < low_) {
    ++underflow_;
  } else if (x >= high_) {
    ++overflow_;
  } else {
    auto i = static_cast<std::size_t>((x - low_) / width_);
    if (i >= buckets_.size()) i = buckets_.size() - 1;  // x just below high, rounded up
    ++buckets_[i];
  }
}

nlohmann::json Histogram::to_json() const {
  return {{"low", low_},        {"high", high_},           {"bucket_width", width_},
          {"count", count_},    {"underflow", underflow_}, {"overflow", overflow_},
          {"buckets", buckets_}};
}

namespace {

void check_path(std::string_view path) {
  if (path.empty() || path.front() == '.' || path.back() == '.' ||
      path.find("..") != std::string_view::npos) {
    throw std::invalid_argument(fmt::format(
        "statistic name '{}' is not a dotted path of non-empty parts (like 'noc.link0.bytes')",
        path));
  }
}

bool is_prefix_group(std::string_view group, std::string_view path) {
  return path.size() > group.size() && path.substr(0, group.size()) == group &&
         path[group.size()] == '.';
}

}  // namespace

template <typename T, typename... Args>
T& StatRegistry::get(std::string_view path, Args&&... args) {
  check_path(path);
  if (auto it = stats_.find(path); it != stats_.end()) {
    if (auto* t = dynamic_cast<T*>(it->second.get())) return *t;
    throw std::invalid_argument(
        fmt::format("statistic '{}' already exists as another kind of statistic", path));
  }
  // A leaf may not also be a group: "a.b" and "a.b.c" cannot both exist.
  for (std::size_t dot = path.find('.'); dot != std::string_view::npos;
       dot = path.find('.', dot + 1)) {
    if (stats_.count(path.substr(0, dot))) {
      throw std::invalid_argument(
          fmt::format("statistic '{}' would be inside statistic '{}'", path, path.substr(0, dot)));
    }
  }
  auto next = stats_.upper_bound(path);
  if (next != stats_.end() && is_prefix_group(path, next->first)) {
    throw std::invalid_argument(
        fmt::format("statistic '{}' is already a group (it holds '{}')", path, next->first));
  }
  auto owned = std::make_unique<T>(std::forward<Args>(args)...);
  T& ref = *owned;
  stats_.emplace(std::string(path), std::move(owned));
  return ref;
}

Counter& StatRegistry::counter(std::string_view path, std::string description) {
  return get<Counter>(path, std::move(description));
}

Accumulator& StatRegistry::accumulator(std::string_view path, std::string description) {
  return get<Accumulator>(path, std::move(description));
}

Histogram& StatRegistry::histogram(std::string_view path, double low, double high,
                                   std::size_t buckets, std::string description) {
  return get<Histogram>(path, std::move(description), low, high, buckets);
}

const Stat* StatRegistry::find(std::string_view path) const {
  auto it = stats_.find(path);
  return it == stats_.end() ? nullptr : it->second.get();
}

nlohmann::json StatRegistry::to_json() const {
  nlohmann::json root = nlohmann::json::object();
  for (const auto& [path, stat] : stats_) {
    nlohmann::json* node = &root;
    std::size_t begin = 0;
    for (std::size_t dot; (dot = path.find('.', begin)) != std::string::npos; begin = dot + 1) {
      node = &(*node)[path.substr(begin, dot - begin)];
    }
    (*node)[path.substr(begin)] = stat->to_json();
  }
  return root;
}

nlohmann::json StatRegistry::descriptions() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [path, stat] : stats_) out[path] = stat->description();
  return out;
}

}  // namespace cubesim::emu
