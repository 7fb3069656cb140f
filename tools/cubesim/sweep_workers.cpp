#include "tools/cubesim/sweep_workers.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "emu/platform.hpp"
#include "tools/cubesim/progress_line.hpp"
#include "tools/cubesim/sweep_point.hpp"
#include "triton_emu/errors.hpp"

extern char** environ;

namespace cubesim::cli::sweep {

using nlohmann::json;

namespace {

constexpr std::size_t kLogTailBytes = 4096;
constexpr int kResultFd = 3;

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads what is there (non-blocking fd) or, with `block`, until end of file. False at end of file.
bool read_into(int fd, std::string& buf, bool block) {
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      buf.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!block) return true;
      pollfd p{fd, POLLIN, 0};
      ::poll(&p, 1, 1000);
      continue;
    }
    return false;
  }
}

// The last lines a worker wrote, as one line for a CSV cell, without our "cubesim: " prefixes.
std::string tail_text(const std::string& tail) {
  std::string out;
  std::size_t start = 0;
  while (start < tail.size()) {
    auto nl = tail.find('\n', start);
    if (nl == std::string::npos) nl = tail.size();
    std::string line = tail.substr(start, nl - start);
    start = nl + 1;
    if (line.rfind("cubesim: ", 0) == 0) line = line.substr(9);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    out += (out.empty() ? "" : " | ") + line;
  }
  return out;
}

}  // namespace

WorkerPool::WorkerPool(int jobs, std::vector<std::string> worker_args,
                       std::vector<std::string> worker_env,
                       std::function<void(std::uint64_t, const std::string&)> on_log)
    : workers_(static_cast<std::size_t>(std::max(1, jobs))),
      args_(std::move(worker_args)),
      on_log_(std::move(on_log)) {
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string var = *e;
    bool replaced = false;
    for (const auto& x : worker_env)
      replaced = replaced || var.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0;
    if (!replaced) env_.push_back(var);
  }
  env_.insert(env_.end(), worker_env.begin(), worker_env.end());
}

WorkerPool::~WorkerPool() {
  // Idle workers end when their stdin closes; busy ones are not waited for.
  for (auto& w : workers_) {
    if (w.pid <= 0) continue;
    if (w.current) ::kill(w.pid, SIGKILL);
    close_fds(w);
    int status = 0;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    w.pid = -1;
  }
}

int WorkerPool::busy() const {
  int n = 0;
  for (const auto& w : workers_) n += w.current.has_value() ? 1 : 0;
  return n;
}

void WorkerPool::close_fds(Worker& w) {
  for (int* fd : {&w.in_fd, &w.out_fd, &w.log_fd}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void WorkerPool::spawn(Worker& w) {
  int in[2], out[2], log[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw UsageError(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]), ::close(in[1]);
    throw UsageError(std::string("pipe: ") + std::strerror(errno));
  }
  if (::pipe2(log, O_CLOEXEC) != 0) {
    for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
    throw UsageError(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], kResultFd);
  posix_spawn_file_actions_adddup2(&actions, log[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, log[1], STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, mask;
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGTERM, SIGPIPE, SIGHUP}) sigaddset(&defaults, s);
  sigemptyset(&mask);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &mask);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(
      &attr,
      static_cast<short>(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP));
  std::vector<std::string> storage = {"cubesim"};
  storage.insert(storage.end(), args_.begin(), args_.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env_) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const std::string self = emu::self_executable().string();
  const int rc = ::posix_spawn(&pid, self.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]), ::close(out[1]), ::close(log[1]);
  if (rc != 0) {
    ::close(in[1]), ::close(out[0]), ::close(log[0]);
    throw UsageError("cannot start a sweep worker (" + self + "): " + std::strerror(rc));
  }
  ::fcntl(out[0], F_SETFL, ::fcntl(out[0], F_GETFL) | O_NONBLOCK);
  ::fcntl(log[0], F_SETFL, ::fcntl(log[0], F_GETFL) | O_NONBLOCK);
  w.pid = pid;
  w.in_fd = in[1];
  w.out_fd = out[0];
  w.log_fd = log[0];
  w.out_buf.clear();
  w.log_buf.clear();
  w.log_tail.clear();
}

void WorkerPool::start(const Point& point, const json& request) {
  Worker* w = nullptr;
  for (auto& c : workers_)
    if (!c.current && c.pid > 0) {
      w = &c;
      break;
    }
  if (w == nullptr)
    for (auto& c : workers_)
      if (!c.current) {
        w = &c;
        break;
      }
  if (w == nullptr) throw std::logic_error("WorkerPool::start without an idle worker");
  const std::string line = request.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (w->pid <= 0) spawn(*w);
    w->log_tail.clear();
    w->current = point;
    w->since = std::chrono::steady_clock::now();
    w->progress.clear();
    if (write_all(w->in_fd, line)) return;
    // The worker had died while idle: reap it quietly and start another.
    w->current.reset();
    std::vector<Finished> none;
    reap(*w, none);
  }
  throw UsageError(
      "cannot hand a point to a sweep worker: it exits at once; run "
      "'cubesim run' on the point to see why");
}

void WorkerPool::read_log(Worker& w, bool drain) {
  if (w.log_fd < 0) return;
  const bool open = read_into(w.log_fd, w.log_buf, drain);
  std::size_t nl;
  while ((nl = w.log_buf.find('\n')) != std::string::npos || (!open && !w.log_buf.empty())) {
    if (nl == std::string::npos) nl = w.log_buf.size();
    const std::string line = w.log_buf.substr(0, nl);
    w.log_buf.erase(0, std::min(nl + 1, w.log_buf.size()));
    w.log_tail += line + "\n";
    if (w.log_tail.size() > kLogTailBytes) w.log_tail.erase(0, w.log_tail.size() - kLogTailBytes);
    if (on_log_) on_log_(w.current ? w.current->index : 0, line);
  }
  if (!open) {
    ::close(w.log_fd);
    w.log_fd = -1;
  }
}

void WorkerPool::reap(Worker& w, std::vector<Finished>& finished) {
  read_log(w, true);
  if (w.in_fd >= 0) {
    ::close(w.in_fd);
    w.in_fd = -1;
  }
  int status = 0;
  while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (w.current) {
    std::string said = tail_text(w.log_tail);
    if (said.size() > 2000) said = said.substr(said.size() - 2000);
    std::string status_word = "crashed";
    int code = 3;
    std::string error;
    if (WIFEXITED(status)) {
      const int c = WEXITSTATUS(status);
      if (c >= 1 && c <= 4) {
        code = c;
        status_word = status_of(c);
      }
      error = said.empty() ? "the worker running this point exited with code " + std::to_string(c) +
                                 " before answering"
                           : said;
    } else {
      const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      error = "the worker running this point died of signal " + std::to_string(sig) + " (" +
              ::strsignal(sig) + ")" + (said.empty() ? "" : ": " + said);
    }
    finished.push_back(
        {w.current->index, failed_row(*w.current, status_word, code, error), nullptr});
  }
  close_fds(w);
  w.pid = -1;
  w.current.reset();
  w.out_buf.clear();
}

std::vector<Finished> WorkerPool::wait(int timeout_ms) {
  std::vector<Finished> finished;
  std::vector<pollfd> fds;
  std::vector<std::size_t> owner;
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    const Worker& w = workers_[i];
    if (w.pid <= 0) continue;
    for (int fd : {w.out_fd, w.log_fd})
      if (fd >= 0) {
        fds.push_back({fd, POLLIN, 0});
        owner.push_back(i);
      }
  }
  // With no worker to hear from, still wait: the caller polls other sources (MPI) in between.
  const int n = ::poll(fds.empty() ? nullptr : fds.data(), fds.size(), timeout_ms);
  if (n <= 0) return finished;  // timeout, or a signal (EINTR)
  for (std::size_t k = 0; k < fds.size(); ++k) {
    if (fds[k].revents == 0) continue;
    Worker& w = workers_[owner[k]];
    if (w.pid <= 0) continue;
    if (fds[k].fd == w.log_fd) {
      read_log(w, false);
      continue;
    }
    if (fds[k].fd != w.out_fd) continue;
    const bool open = read_into(w.out_fd, w.out_buf, false);
    bool exiting = false;
    std::size_t nl;
    while (!exiting && (nl = w.out_buf.find('\n')) != std::string::npos) {
      const std::string line = w.out_buf.substr(0, nl);
      w.out_buf.erase(0, nl + 1);
      json answer = json::parse(line, nullptr, false);
      if (answer.is_discarded() || !w.current) continue;
      if (answer.contains("progress") && answer["progress"].is_string()) {
        w.progress = answer["progress"].get<std::string>();
        continue;
      }
      if (!answer.contains("row")) continue;
      read_log(w, false);  // lines written during the point belong to it
      finished.push_back(
          {w.current->index, std::move(answer["row"]), answer.value("report", json(nullptr))});
      w.current.reset();
      exiting = answer.value("last", false);  // it exits after a failed point: reap it now
    }
    if (!open || exiting) reap(w, finished);
  }
  return finished;
}

void WorkerPool::kill_all() {
  for (auto& w : workers_) {
    if (w.pid <= 0) continue;
    ::kill(w.pid, SIGKILL);
    close_fds(w);
    int status = 0;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    w.pid = -1;
    w.current.reset();
  }
}

std::optional<WorkerPool::Running> WorkerPool::longest_running() const {
  const Worker* oldest = nullptr;
  for (const auto& w : workers_)
    if (w.current && !w.progress.empty() && (oldest == nullptr || w.since < oldest->since))
      oldest = &w;
  if (oldest == nullptr) return std::nullopt;
  return Running{oldest->current->index, oldest->progress};
}

int worker_main(long parent) {
  // Die with the sweep, even when it is killed outright (an mpirun abort, kill -9).
  emu::die_with_parent();
  if (parent > 0 && ::getppid() != parent) return 0;
  std::signal(SIGINT, SIG_IGN);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    const json request = json::parse(line, nullptr, false);
    if (request.is_discarded() || !request.contains("index")) {
      std::cerr << "cubesim: sweep-worker: not a request: " << line.substr(0, 200) << "\n";
      return 2;
    }
    // A test hook: this point's worker dies as a crash would (tests/cli/test_cli_sweep.cpp).
    if (const char* crash = std::getenv("CUBESIM_SWEEP_TEST_CRASH_POINT");
        crash != nullptr && request["index"].dump() == crash)
      ::raise(SIGKILL);
    // Reports while the point runs, when the sweep draws them: a line on the result channel
    // every half second or so.
    emu::ProgressFn report;
    auto last = std::chrono::steady_clock::now();
    if (request.value("progress", false))
      report = [&last](const emu::Progress& p) {
        const auto now = std::chrono::steady_clock::now();
        if (p.finished || now - last < std::chrono::milliseconds(500)) return;
        last = now;
        const json report_line = {{"progress", std::string(p.what) + ": " + describe_progress(p)}};
        write_all(kResultFd, report_line.dump() + "\n");
      };
    json answer = run_point(request, report);
    answer["index"] = request["index"];
    const int code = answer["row"].value("exit_code", 0);
    answer["last"] = code >= 2;
    std::cout.flush();
    if (!write_all(kResultFd, answer.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"))
      return 0;  // the sweep is gone
    // After an error a fresh process runs the next point: nothing of a failed run lingers.
    if (code >= 2) return 0;
  }
  return 0;
}

}  // namespace cubesim::cli::sweep
