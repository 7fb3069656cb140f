#include "tools/cubesim/sweep_run.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "emu/platform.hpp"
#include "tools/cubesim/common.hpp"
#include "tools/cubesim/format.hpp"
#include "tools/cubesim/output_files.hpp"
#include "tools/cubesim/progress_line.hpp"
#include "tools/cubesim/sweep_mpi.hpp"
#include "tools/cubesim/sweep_output.hpp"
#include "tools/cubesim/sweep_point.hpp"
#include "tools/cubesim/sweep_workers.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::cli::sweep {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

volatile sig_atomic_t g_stop = 0;

void on_stop(int sig) {
  g_stop = sig;
}

// SIGINT / SIGTERM ask the sweep to stop (a second one kills it: SA_RESETHAND); SIGPIPE is
// ignored so a worker that died is an error return, not the end of the sweep.
class StopSignals {
 public:
  StopSignals() {
    g_stop = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;  // no SA_RESTART: poll() returns at once
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &old_pipe_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGPIPE, &old_pipe_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {
  }, old_term_{}, old_pipe_{};
};

std::string clock_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

// The sweep's progress line: points finished, running and left, and what the longest-running
// point is doing.
class Progress {
 public:
  Progress(std::uint64_t total, std::uint64_t already) : total_(total), already_(already) {}

  bool enabled() const { return line_.enabled(); }
  void update(std::uint64_t finished, std::uint64_t failed, int running,
              const std::optional<WorkerPool::Running>& longest) {
    if (!line_.enabled()) return;
    const double elapsed = line_.elapsed_s();
    const std::uint64_t ran = finished - std::min(finished, already_);
    const std::uint64_t done = std::min(total_, finished);
    const std::uint64_t left = total_ - done - std::min<std::uint64_t>(total_ - done, running);
    std::string eta = "--:--";
    if (ran > 0)
      eta = clock_text(elapsed / static_cast<double>(ran) * static_cast<double>(total_ - done));
    constexpr int kWidth = 28;
    const int filled =
        total_ == 0 ? kWidth : static_cast<int>(kWidth * done / std::max<std::uint64_t>(1, total_));
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::string text = fmt::format(
        "[{}] {}/{} points, {} running, {} left{}, {} elapsed, ETA {}", bar, finished, total_,
        running, left, failed ? fmt::format(", {} failed", failed) : "", clock_text(elapsed), eta);
    if (longest) text += fmt::format(" | point {}: {}", longest->point, longest->progress);
    line_.show(text);
  }
  void clear() { line_.clear(); }
  // A line of a worker's log, above the bar.
  void log(const std::string& text) { line_.log(text); }

 private:
  ProgressLine line_;
  std::uint64_t total_, already_;
};

// A worker loads the sweep's plugins too, so it knows their kernels.
std::vector<std::string> worker_args(const Options& o) {
  std::vector<std::string> args = {"sweep-worker", "--parent", std::to_string(::getpid()),
                                   "--log-level", o.log_level};
  for (const auto& plugin : kernels::kernel_registry().plugins())
    args.insert(args.end(), {"--load", plugin.string()});
  return args;
}

// OpenBLAS starts a thread per core in every process that loads it, and they spin a while:
// with a worker per core that is cores^2 threads competing with the simulations (a 16-core
// host ran each point 25% slower). A timing-only point computes no GEMM, so its worker needs
// none; a functional one gets its share of the cores. Variables the user set are kept.
std::vector<std::string> worker_env(const Options& o, int jobs) {
  const int threads = o.def.timing_only ? 1 : std::max(1, available_cores() / std::max(1, jobs));
  std::vector<std::string> env;
  for (const char* name : {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"})
    if (std::getenv(name) == nullptr)
      env.push_back(std::string(name) + "=" + std::to_string(threads));
  return env;
}

int default_jobs(const Options& o, const RankLink* link) {
  if (o.jobs > 0) return o.jobs;
  const int local = link ? std::max(1, link->local_size()) : 1;
  return std::max(1, available_cores() / local);
}

std::string shape_text(const Definition& def) {
  std::string s;
  for (const auto& d : def.dims) s += (s.empty() ? "" : " x ") + std::to_string(d.values.size());
  return s;
}

// What the points computed, once the sweep is over: files, the table, the plot. Streamed from
// the row store, so memory stays flat however many points there are.
int write_outputs(const Options& o, const RowStore& rows, bool plot_ok) {
  const Definition& def = o.def;
  const auto columns = csv_columns(def, rows);
  auto csv = [&](std::ostream& out) { write_csv(out, columns, rows); };
  auto jsonl = [&](std::ostream& out) { write_jsonl(out, rows); };
  std::string plot_csv;
  if (!o.out_dir.empty()) {
    plot_csv = (fs::path(o.out_dir) / "results.csv").string();
    write_file(plot_csv, csv);
    write_file((fs::path(o.out_dir) / "results.jsonl").string(), jsonl);
  }
  if (o.csv_file == "-") {
    csv(std::cout);
  } else if (!o.csv_file.empty()) {
    write_file(o.csv_file, csv);
    plot_csv = o.csv_file;
  }
  if (o.jsonl_file == "-")
    jsonl(std::cout);
  else if (!o.jsonl_file.empty())
    write_file(o.jsonl_file, jsonl);
  if (o.csv_file != "-" && o.jsonl_file != "-") print_table(std::cout, def, rows);
  std::cout.flush();

  if (o.plot_file.empty() || !plot_ok) return 0;
  bool temporary = false;
  if (plot_csv.empty()) {
    plot_csv =
        (fs::temp_directory_path() / ("cubesim-sweep-" + std::to_string(::getpid()) + ".csv"))
            .string();
    write_file(plot_csv, csv);
    temporary = true;
  }
  PlotRequest p;
  p.csv_file = plot_csv;
  p.out_file = o.plot_file;
  p.metric = o.metric;
  p.reference = o.reference;
  p.log_y = o.log_y;
  for (const auto& d : def.dims) p.fields.push_back(d.field);
  std::string kernels;
  for (const auto& k : kernels_of(def)) kernels += (kernels.empty() ? "" : " vs ") + k;
  p.title = kernels + " on " + fs::path(def.spec_file).stem().string();
  int code = 0;
  try {
    draw_plot(p);
  } catch (const std::exception& e) {
    std::cerr << "cubesim: " << e.what() << "\n";
    code = static_cast<int>(ExitCode::usage);
  }
  if (temporary) {
    std::error_code ec;
    fs::remove(plot_csv, ec);
  }
  return code;
}

// A rank other than 0: asks rank 0 for points while it has idle workers, returns the rows.
int follow(const Options& o, RankLink& link) {
  Definition def;
  bool ok = true;
  try {
    def = o.def;
    (void)point_count(def.dims);
  } catch (...) {
    ok = false;  // rank 0 finds the same problem and says it
  }
  if (!link.broadcast_go(ok) || !ok) return static_cast<int>(ExitCode::usage);
  const StopSignals signals;
  const bool want_report = !o.out_dir.empty();
  const int rank = link.rank();
  const int jobs = default_jobs(o, &link);
  WorkerPool pool(jobs, worker_args(o), worker_env(o, jobs * link.local_size()),
                  [rank](std::uint64_t point, const std::string& line) {
                    // stderr, not std::cerr: main silences std::cerr on ranks other than 0
                    std::fprintf(stderr, "[rank %d, point %llu] %s\n", rank,
                                 static_cast<unsigned long long>(point), line.c_str());
                  });
  bool more = true;
  while ((more || pool.busy() > 0) && g_stop == 0) {
    if (more && pool.idle_slots() > 0) {
      const auto indices = link.request(pool.idle_slots());
      if (indices.empty()) more = false;
      for (auto i : indices) {
        const Point p = make_point(def, i);
        pool.start(p, point_request(def, p, want_report));
      }
    }
    for (auto& f : pool.wait(more && pool.idle_slots() > 0 ? 0 : 200)) {
      const json message = {{"index", f.index}, {"row", f.row}, {"report", f.report}};
      link.send_result(message.dump(-1, ' ', false, json::error_handler_t::replace));
    }
  }
  if (g_stop != 0) pool.kill_all();
  link.send_done();
  return 0;
}

}  // namespace

int available_cores() {
  return emu::available_cpus();
}

int run_sweep(const Options& o) {
  std::unique_ptr<RankLink> link = RankLink::connect();
  if (link && link->rank() != 0) return follow(o, *link);

  // Everything that can be wrong with the command line, before any point runs.
  const Definition& def = o.def;
  std::vector<std::uint64_t> keys;
  std::unique_ptr<PointStore> store;
  try {
    keys = validate(def);
    for (const auto& [flag, column] : {std::pair<const char*, std::string>{"--metric", o.metric},
                                       {"--reference", o.reference}}) {
      if (column.empty() || is_numeric_metric(column)) continue;
      std::string names;
      for (const auto& m : metric_columns())
        if (is_numeric_metric(m)) names += (names.empty() ? "" : ", ") + m;
      throw UsageError(std::string(flag) + " " + column + ": not a numeric column; use one of " +
                       names + ", or details.NAME for a number the kernel reports");
    }
    if (!o.reference.empty() && o.plot_file.empty())
      throw UsageError("--reference " + o.reference +
                       " is drawn on the plot: give --plot FILE.png or FILE.svg too");
    if (o.jobs < 0) throw UsageError("--jobs " + std::to_string(o.jobs) + ": give 1 or more");
    if (!o.csv_file.empty() && o.csv_file != "-") check_output_path(o.csv_file, "--csv");
    if (!o.jsonl_file.empty() && o.jsonl_file != "-") check_output_path(o.jsonl_file, "--jsonl");
    if (o.csv_file == "-" && o.jsonl_file == "-")
      throw UsageError("--csv - and --jsonl - would both write to stdout; send one to a file");
    if (!o.plot_file.empty()) {
      check_output_path(o.plot_file, "--plot");
      check_plot(o.plot_file);
    }
    if (!o.out_dir.empty()) store = std::make_unique<PointStore>(o.out_dir);
  } catch (...) {
    if (link) link->broadcast_go(false);
    throw;
  }
  if (link) link->broadcast_go(true);

  const std::uint64_t total = keys.size();
  RowStore rows(total);
  std::vector<std::uint64_t> pending;
  for (std::uint64_t i = 0; i < total; ++i) {
    PointStore::Kept kept = store ? store->load(keys[i]) : PointStore::Kept{};
    if (!kept.damage.empty())
      std::cerr << "cubesim: warning: --out " << o.out_dir << ": " << store->file(keys[i]).string()
                << " " << kept.damage << "; point " << i << " runs again\n";
    if (!kept.row) {
      pending.push_back(i);
      continue;
    }
    (*kept.row)["index"] = i;
    (*kept.row)["values"] = make_point(def, i).values;
    rows.put(i, *kept.row);
  }
  const std::uint64_t resumed = total - pending.size();

  const StopSignals signals;
  const int jobs = static_cast<int>(std::min<std::uint64_t>(
      default_jobs(o, link.get()), std::max<std::uint64_t>(1, pending.size())));
  const bool want_report = store != nullptr;
  Progress progress(total, resumed);
  WorkerPool pool(jobs, worker_args(o), worker_env(o, jobs * (link ? link->local_size() : 1)),
                  [&progress](std::uint64_t point, const std::string& line) {
                    progress.log("[point " + std::to_string(point) + "] " + line);
                  });
  auto record = [&](std::uint64_t index, const json& row, const json& report) {
    if (index >= total || rows.has(index)) return;
    rows.put(index, row);
    if (!store) return;
    if (const std::string why = store->save(keys[index], row, report); !why.empty())
      progress.log("cubesim: warning: --out " + o.out_dir + ": point " + std::to_string(index) +
                   " is not kept (" + why + "); the sweep goes on, and a rerun runs it again");
  };

  const auto wall0 = Clock::now();
  std::size_t next = 0;
  int followers = link ? link->size() - 1 : 0;
  while (g_stop == 0) {
    while (pool.idle_slots() > 0 && next < pending.size()) {
      const Point p = make_point(def, pending[next++]);
      json request = point_request(def, p, want_report);
      if (progress.enabled()) request["progress"] = true;
      pool.start(p, request);
    }
    if (next >= pending.size() && pool.busy() == 0 && followers == 0) break;
    progress.update(rows.finished(), rows.failed(), pool.busy(), pool.longest_running());
    for (auto& f : pool.wait(link ? 2 : 250)) {
      if (link) f.row["rank"] = 0;
      record(f.index, f.row, f.report);
    }
    while (link) {
      auto m = link->poll();
      if (!m) break;
      if (m->kind == RankLink::Message::Kind::request) {
        std::vector<std::uint64_t> give;
        while (static_cast<int>(give.size()) < m->slots && next < pending.size())
          give.push_back(pending[next++]);
        link->assign(m->from, give);
      } else if (m->kind == RankLink::Message::Kind::result) {
        json r = json::parse(m->payload, nullptr, false);
        if (r.is_discarded()) continue;
        json row = r.value("row", json::object());
        row["rank"] = m->from;  // in the JSON lines (not the CSV): who ran it
        record(r.value("index", total), row, r.value("report", json(nullptr)));
      } else {
        --followers;
      }
    }
  }
  const bool interrupted = g_stop != 0;
  if (interrupted) pool.kill_all();
  progress.clear();
  const double wall = std::chrono::duration<double>(Clock::now() - wall0).count();

  int code = write_outputs(o, rows, !interrupted);
  std::ostream& note = (o.csv_file == "-" || o.jsonl_file == "-") ? std::cerr : std::cout;
  note << rows.finished() << " of " << total << " points (" << shape_text(def) << ") finished";
  if (rows.failed() > 0) note << ", " << rows.failed() << " failed";
  if (resumed > 0) note << "; " << resumed << " kept from " << o.out_dir;
  note << "; " << format_seconds(wall) << " on " << jobs << (jobs == 1 ? " job" : " jobs");
  // A resumed sweep may have fewer points left than jobs: say so rather than seem to ignore -j.
  if (o.jobs > 0 && jobs < o.jobs)
    note << " (" << o.jobs << " given; " << pending.size()
         << (pending.size() == 1 ? " point was" : " points were") << " left to run)";
  if (link) note << " per rank x " << link->size() << " ranks";
  note << "\n";
  note.flush();

  if (interrupted || rows.finished() < total) {
    std::cerr << "cubesim: sweep interrupted: " << rows.finished() << " of " << total
              << " points finished"
              << (o.out_dir.empty() ? "; give --out DIR to keep finished points for a rerun"
                                    : "; run the same command again to finish the rest")
              << "\n";
    if (link) link->abort(130);
    return 130;
  }
  if (rows.worst_exit_code() != 0) code = rows.worst_exit_code();
  return code;
}

}  // namespace cubesim::cli::sweep
