#pragma once
// What cubesim asks of the operating system beyond POSIX, in one place: Linux's way where the
// system has it, a portable fallback where it does not (macOS, for a Metal build; README
// "Platforms"). Nothing else in the tree calls sched_getaffinity, reads /proc/self/exe or sets
// a parent-death signal.

#include <filesystem>

namespace cubesim::emu {

// The cores this process may run on: its affinity mask where the system has one, else the
// hardware's count; at least 1.
int available_cpus();

// The running program's file: /proc/self/exe where it exists, else argv[0] as remember_program
// was given it (absolute, relative to the working directory at the start, or found on PATH);
// empty when neither tells.
std::filesystem::path self_executable();
// Call first thing in main(): what self_executable falls back to, as remembered_program()
// gives it (empty before, or when argv[0] names nothing found).
void remember_program(const char* argv0);
std::filesystem::path remembered_program();

// A child process (a sweep worker) asks to be killed with its parent where the system can
// (Linux's PR_SET_PDEATHSIG); elsewhere nothing happens, and the child ends when its parent's
// end of its pipes closes.
void die_with_parent();

}  // namespace cubesim::emu
