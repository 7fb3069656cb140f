#pragma once
// Statistics, named hierarchically with dots ("noc.cube0.link_3_4.bytes") and dumped as nested
// JSON. Components hold references to their statistics and update them on the hot path; the
// registry owns them and keeps them at stable addresses.

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace cubesim::emu {

class Stat {
 public:
  explicit Stat(std::string description) : description_(std::move(description)) {}
  virtual ~Stat() = default;
  const std::string& description() const { return description_; }
  virtual nlohmann::json to_json() const = 0;

 private:
  std::string description_;
};

class Counter final : public Stat {
 public:
  using Stat::Stat;
  void add(std::uint64_t n = 1) { value_ += n; }
  std::uint64_t value() const { return value_; }
  nlohmann::json to_json() const override { return value_; }

 private:
  std::uint64_t value_ = 0;
};

// Count, sum, min, max, mean and standard deviation of samples (Welford's update).
class Accumulator final : public Stat {
 public:
  using Stat::Stat;
  void sample(double x);
  std::uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  double min() const { return min_; }
  double max() const { return max_; }
  double mean() const { return count_ ? mean_ : 0.0; }
  double stddev() const;
  nlohmann::json to_json() const override;

 private:
  std::uint64_t count_ = 0;
  double sum_ = 0, mean_ = 0, m2_ = 0;
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = -std::numeric_limits<double>::infinity();
};

// Equal-width buckets over [low, high), plus underflow and overflow counts.
class Histogram final : public Stat {
 public:
  Histogram(std::string description, double low, double high, std::size_t buckets);
  void sample(double x);
  const std::vector<std::uint64_t>& buckets() const { return buckets_; }
  std::uint64_t underflow() const { return underflow_; }
  std::uint64_t overflow() const { return overflow_; }
  std::uint64_t count() const { return count_; }
  nlohmann::json to_json() const override;

 private:
  double low_, high_, width_;
  std::vector<std::uint64_t> buckets_;
  std::uint64_t underflow_ = 0, overflow_ = 0, count_ = 0;
};

class StatRegistry {
 public:
  // Returns the statistic named `path`, creating it on first use. Asking again for the same
  // path returns the same object; asking for it as another kind, or using a path that is
  // already a group (or under a statistic), throws std::invalid_argument.
  Counter& counter(std::string_view path, std::string description = "");
  Accumulator& accumulator(std::string_view path, std::string description = "");
  Histogram& histogram(std::string_view path, double low, double high, std::size_t buckets,
                       std::string description = "");

  const Stat* find(std::string_view path) const;
  std::size_t size() const { return stats_.size(); }

  // Nested objects following the dotted names.
  nlohmann::json to_json() const;
  // Flat {"path": "description"} for documentation tools.
  nlohmann::json descriptions() const;

 private:
  template <typename T, typename... Args>
  T& get(std::string_view path, Args&&... args);
  std::map<std::string, std::unique_ptr<Stat>, std::less<>> stats_;
};

}  // namespace cubesim::emu
