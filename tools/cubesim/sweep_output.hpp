#pragma once
// Where a sweep's results go: rows kept on disk while the sweep runs (so memory does not grow
// with the number of points), the --out folder that makes a sweep resumable, and the CSV,
// JSON-lines, table and plot written from the rows in point order.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "tools/cubesim/sweep_expand.hpp"

namespace cubesim::cli::sweep {

// The finished rows by point index, in an unlinked temporary file: a few bytes of memory per
// point whatever the size of a row.
class RowStore {
 public:
  explicit RowStore(std::uint64_t points);
  ~RowStore();
  RowStore(const RowStore&) = delete;
  RowStore& operator=(const RowStore&) = delete;

  void put(std::uint64_t index, const nlohmann::json& row);
  bool has(std::uint64_t index) const { return slots_[index].length != 0; }
  std::optional<nlohmann::json> get(std::uint64_t index) const;
  std::uint64_t points() const { return slots_.size(); }
  std::uint64_t finished() const { return finished_; }
  std::uint64_t failed() const { return failed_; }
  int worst_exit_code() const { return worst_; }  // the highest exit_code of the rows
  const std::set<std::string>& detail_columns() const { return details_; }

 private:
  struct Slot {
    std::uint64_t offset = 0;
    std::uint32_t length = 0;
  };
  std::FILE* file_ = nullptr;
  std::uint64_t end_ = 0;
  std::vector<Slot> slots_;
  std::uint64_t finished_ = 0, failed_ = 0;
  int worst_ = 0;
  std::set<std::string> details_;
};

// A --out folder: DIR/points/KEY.json holds one finished point ({"key", "row", "report"}), so a
// sweep run again with the same --out skips it. A point whose worker crashed is not kept (it
// runs again), and neither is one whose file is damaged: load() says why, and the sweep warns
// and runs the point again.
class PointStore {
 public:
  // Creates DIR and DIR/points; UsageError when it cannot or cannot write there.
  explicit PointStore(std::filesystem::path dir);
  const std::filesystem::path& dir() const { return dir_; }

  struct Kept {
    std::optional<nlohmann::json> row;  // the row, when the point's file holds a sound one
    std::string damage;  // why the file that is there cannot be used; "" when none is there
  };
  Kept load(std::uint64_t key) const;
  // Keeps a finished point; returns why it could not ("" when it did).
  std::string save(std::uint64_t key, const nlohmann::json& row,
                   const nlohmann::json& report) const;
  std::filesystem::path file(std::uint64_t key) const;

 private:
  std::filesystem::path dir_;
};

// The CSV's columns: index, the varied fields, kernel (unless varied), param.NAME (unless
// varied), status, exit_code, the metrics, details.NAME, error.
std::vector<std::string> csv_columns(const Definition& def, const RowStore& rows);
void write_csv(std::ostream& out, const std::vector<std::string>& columns, const RowStore& rows);
void write_jsonl(std::ostream& out, const RowStore& rows);
// A table for people: point, varied fields, simulated time, achieved rate, status; the errors
// of failed points below it.
void print_table(std::ostream& out, const Definition& def, const RowStore& rows);

// The plot: tools/plot_sweep.py run by Python with matplotlib.
struct PlotRequest {
  std::string csv_file;
  std::string out_file;  // .png or .svg
  std::string metric;
  std::vector<std::string> fields;  // x, then lines, then panels (as many as were varied)
  std::string title;
  std::string reference;  // "" none, else a column drawn dotted beside each metric line
  bool log_y = false;     // a logarithmic y axis
};
// UsageError unless `out_file` ends in .png or .svg and Python can import matplotlib; the
// message says what to install or set (CUBESIM_PYTHON, CUBESIM_PLOT_SCRIPT).
void check_plot(const std::string& out_file);
void draw_plot(const PlotRequest& request);

}  // namespace cubesim::cli::sweep
