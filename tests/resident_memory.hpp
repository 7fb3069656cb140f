#pragma once
// Resident host memory of the test process, for tests of what a run costs the host.

#include <unistd.h>

#include <cstdint>
#include <fstream>

namespace cubesim::test {

// Resident bytes of this process, from /proc (0 where there is none).
inline std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace cubesim::test
