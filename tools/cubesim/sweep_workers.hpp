#pragma once
// Local parallelism of a sweep: up to N worker processes (`cubesim sweep-worker`, this same
// binary), each running one point at a time in a fresh Simulation. Processes, not threads: the
// simulator keeps per-thread fiber state and a process-wide stack-overflow handler, and a point
// that crashes must take only its own worker down. A worker reads one JSON request per line on
// stdin and answers one JSON line on fd 3; its stdout and stderr come back as log lines. It is
// in its own process group, so a Ctrl-C on the terminal reaches only the sweep, which decides.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tools/cubesim/sweep_expand.hpp"

namespace cubesim::cli::sweep {

struct Finished {
  std::uint64_t index = 0;
  nlohmann::json row;
  nlohmann::json report;  // null unless requested
};

class WorkerPool {
 public:
  // `worker_args`: the arguments after the program name, e.g. {"sweep-worker"}.
  // `worker_env`: "NAME=VALUE" set in the workers' environment (replacing the sweep's).
  // `on_log`: called with each line a worker writes to stdout or stderr, and the point it ran.
  WorkerPool(int jobs, std::vector<std::string> worker_args, std::vector<std::string> worker_env,
             std::function<void(std::uint64_t point, const std::string& line)> on_log);
  ~WorkerPool();  // kills and reaps the workers
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int jobs() const { return static_cast<int>(workers_.size()); }
  int busy() const;
  int idle_slots() const { return jobs() - busy(); }

  // Hands a point to an idle worker (starting one when needed). Needs idle_slots() > 0.
  // UsageError when no worker process can be started at all.
  void start(const Point& point, const nlohmann::json& request);

  // Waits up to `timeout_ms` (-1: until something happens) for answers; returns the points
  // that finished, a row for a point whose worker died included. Returns early (maybe empty)
  // when a signal arrives.
  std::vector<Finished> wait(int timeout_ms);

  // Ends every worker at once (SIGKILL) and forgets the points they ran.
  void kill_all();

  // The point that has run longest and its last progress report (a request with "progress":
  // true asks its worker for them), or nullopt when none is running or has reported.
  struct Running {
    std::uint64_t point = 0;
    std::string progress;
  };
  std::optional<Running> longest_running() const;

 private:
  struct Worker {
    pid_t pid = -1;
    int in_fd = -1, out_fd = -1, log_fd = -1;
    std::string out_buf, log_buf, log_tail;
    std::optional<Point> current;
    std::chrono::steady_clock::time_point since{};  // when `current` started
    std::string progress;                           // its last report ("" before one)
  };
  void spawn(Worker& w);
  void reap(Worker& w, std::vector<Finished>& finished);
  void read_log(Worker& w, bool drain);
  static void close_fds(Worker& w);

  std::vector<Worker> workers_;
  std::vector<std::string> args_;
  std::vector<std::string> env_;
  std::function<void(std::uint64_t, const std::string&)> on_log_;
};

// The worker side: answers requests from stdin on fd 3 until stdin ends. Returns its exit code.
// After a point that failed with an error it exits, so the next point gets a fresh process.
// `parent`: the sweep's pid; the worker dies with it.
int worker_main(long parent);

}  // namespace cubesim::cli::sweep
