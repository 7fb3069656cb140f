#include "emu/platform.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <string>
#include <system_error>
#include <thread>

#if __has_include(<sys/prctl.h>)
#include <sys/prctl.h>
#endif

namespace cubesim::emu {

namespace fs = std::filesystem;

namespace {

fs::path& remembered() {
  static fs::path program;
  return program;
}

}  // namespace

int available_cpus() {
#if defined(CPU_COUNT)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void remember_program(const char* argv0) {
  if (argv0 == nullptr || *argv0 == '\0') return;
  std::error_code ec;
  const std::string name = argv0;
  if (name.find('/') != std::string::npos) {
    remembered() = fs::absolute(name, ec);
    return;
  }
  // A bare name: the first PATH entry that holds an executable of that name.
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / name;
    if (::access(candidate.c_str(), X_OK) == 0) {
      remembered() = fs::absolute(candidate, ec);
      return;
    }
    start = end + 1;
  }
}

fs::path remembered_program() {
  return remembered();
}

fs::path self_executable() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) return exe;
  return remembered();
}

void die_with_parent() {
#if defined(PR_SET_PDEATHSIG)
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
}

}  // namespace cubesim::emu
