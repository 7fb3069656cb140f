#pragma once
// Runs the built cubesim binary as a child process, as a user would, and captures its exit
// code, stdout and stderr. The binary's path comes from CMake (CUBESIM_BINARY).

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace cubesim::test {

struct CliResult {
  int code = -1;    // the exit code; 128 + N when killed by signal N
  std::string out;  // stdout
  std::string err;  // stderr
  std::string command;
};

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Sanitizer builds switch fibers with ucontext, and ASan warns once per process that it "doesn't
// fully support makecontext/swapcontext": not the program's output, so it is dropped.
inline std::string without_sanitizer_notes(const std::string& text) {
  std::string kept;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const std::size_t next = nl == std::string::npos ? text.size() : nl + 1;
    const std::string line = text.substr(pos, next - pos);
    if (line.find("ASan doesn't fully support makecontext/swapcontext") == std::string::npos)
      kept += line;
    pos = next;
  }
  return kept;
}

inline nlohmann::json read_json(const std::filesystem::path& p) {
  return nlohmann::json::parse(read_text(p));
}

// A fresh folder per test for outputs and for the child's stdout/stderr files.
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        std::filesystem::temp_directory_path() / ("cubesim-cli-" + std::to_string(getpid()) + "-" +
                                                  info->test_suite_name() + "-" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!HasFailure()) std::filesystem::remove_all(dir_, ec);  // kept for a look on failure
  }
  CliResult cubesim(const std::vector<std::string>& args) const;
  // A usage error: exit 2, one "cubesim: " message naming `what`, nothing on stdout.
  void expect_usage_error(const std::vector<std::string>& args, const std::string& what) const;
  std::filesystem::path path(const std::string& name) const { return dir_ / name; }
  std::filesystem::path dir_;
};

// Starts cubesim with `args` in the background, its stdout and stderr going to the two files;
// the caller signals and waits for the returned pid (tests of interrupts).
inline pid_t spawn_cubesim(std::vector<std::string> args, const std::filesystem::path& out,
                           const std::filesystem::path& err) {
  args.insert(args.begin(), CUBESIM_BINARY);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + args.front());
  return pid;
}

inline std::string spec_file(const std::string& name) {
  return std::string(CUBESIM_SOURCE_DIR) + "/specs/" + name;
}

// The environment with `extra` ("NAME=VALUE") added, replacing variables of the same name.
inline std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string var = *e;
    bool replaced = false;
    for (const auto& x : extra)
      replaced = replaced || var.substr(0, var.find('=') + 1) == x.substr(0, x.find('=') + 1);
    if (!replaced) env.push_back(var);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

// Runs `program args...` (found on PATH unless it has a slash) in `dir`, its stdout and stderr
// into files there, with `extra_env` added to the environment.
inline CliResult run_program(const std::string& program, const std::vector<std::string>& args,
                             const std::filesystem::path& dir,
                             const std::vector<std::string>& extra_env = {}) {
  CliResult r;
  r.command = program == CUBESIM_BINARY ? "cubesim" : program;
  std::vector<std::string> argv_storage = {program};
  for (const auto& a : args) {
    argv_storage.push_back(a);
    r.command += " " + a;
  }
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage = environment_with(extra_env);
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  const auto out_file = dir / "stdout.txt", err_file = dir / "stderr.txt";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + program);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_text(out_file);
  r.err = without_sanitizer_notes(read_text(err_file));
  return r;
}

// Runs `cubesim args...` in `dir` (its stdout and stderr go to files there).
inline CliResult run_cubesim(const std::vector<std::string>& args, const std::filesystem::path& dir,
                             const std::vector<std::string>& extra_env = {}) {
  return run_program(CUBESIM_BINARY, args, dir, extra_env);
}

inline CliResult CliTest::cubesim(const std::vector<std::string>& args) const {
  return run_cubesim(args, dir_);
}

// For EXPECT_* messages: what ran and what it said.
inline std::string show(const CliResult& r) {
  return r.command + "\n--- exit " + std::to_string(r.code) + "\n--- stdout\n" + r.out +
         "--- stderr\n" + r.err;
}

inline void CliTest::expect_usage_error(const std::vector<std::string>& args,
                                        const std::string& what) const {
  const auto r = cubesim(args);
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_THAT(r.err, ::testing::StartsWith("cubesim: ")) << show(r);
  EXPECT_THAT(r.err, ::testing::HasSubstr(what)) << show(r);
  EXPECT_EQ(r.out, "") << show(r);
}

}  // namespace cubesim::test
