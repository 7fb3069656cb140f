// What cubesim asks of the operating system beyond POSIX (emu/platform.hpp): here, on Linux,
// the primary ways, and the argv[0] fallback that macOS would use, exercised directly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "emu/platform.hpp"

namespace cubesim::emu {
namespace {

namespace fs = std::filesystem;

TEST(Platform, CpusAreAtLeastOneAndAtMostTheHardwares) {
  const int n = available_cpus();
  EXPECT_GE(n, 1);
  if (std::thread::hardware_concurrency() > 0) {
    EXPECT_LE(static_cast<unsigned>(n), std::thread::hardware_concurrency());
  }
}

TEST(Platform, TheProgramsOwnFileIsThisTestBinary) {
  const fs::path self = self_executable();
  ASSERT_FALSE(self.empty());
  EXPECT_TRUE(fs::equivalent(self, fs::read_symlink("/proc/self/exe")));
}

// The fallback: argv[0] with a slash is made absolute against the working directory; a bare
// name is looked up on PATH; a name found nowhere leaves nothing.
TEST(Platform, Argv0IsResolvedAsAShellWould) {
  const fs::path self = fs::read_symlink("/proc/self/exe");
  const fs::path cwd = fs::current_path();
  fs::current_path(self.parent_path());
  remember_program(("./" + self.filename().string()).c_str());
  fs::current_path(cwd);
  EXPECT_TRUE(fs::equivalent(remembered_program(), self));

  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", ("/nonexistent:" + self.parent_path().string()).c_str(), 1);
  remember_program(self.filename().c_str());
  EXPECT_TRUE(fs::equivalent(remembered_program(), self));
  ::setenv("PATH", old_path.c_str(), 1);
}

}  // namespace
}  // namespace cubesim::emu
