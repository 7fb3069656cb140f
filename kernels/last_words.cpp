#include "kernels/last_words.hpp"

#include "triton_emu/errors.hpp"

namespace cubesim::kernels {
namespace {

constexpr const char* kFindIt =
    "to see the faulting line, run the same command under gdb (gdb --args cubesim ..., then "
    "'run' and 'bt'), with the code built with -g";

}  // namespace

emu::LastWords kernel_last_words(const KernelInfo& kernel, const std::string& origin) {
  emu::LastWords w;
  w.what = "kernel fault";
  w.exit_code = static_cast<int>(ExitCode::kernel_fault);
  w.on_fiber = "in its program on PE";
  w.off_fiber = "in its host harness (outside the PEs' programs)";
  const std::string name = "kernel '" + kernel.name + "'";
  if (origin == "cubesim") {
    w.subject = name + " (shipped with cubesim)";
    w.fix = "This is a bug in cubesim: please report it with the command that ran it.";
  } else {
    w.subject = name + " of " + origin;
    w.fix = "Fix: the fault is in the code of " + origin + " or in what it asked of cubesim; " +
            kFindIt + ".";
  }
  return w;
}

emu::LastWords plugin_last_words(const std::string& shown, const std::string& stage) {
  emu::LastWords w;
  w.what = "cannot load a plugin";
  w.exit_code = static_cast<int>(ExitCode::usage);
  w.subject = shown;
  w.on_fiber = stage + ", on the fiber of";
  w.off_fiber = stage;
  w.fix =
      "Fix: the plugin crashed before cubesim could use it, so none of its kernels was "
      "added; " +
      std::string(kFindIt) + ".";
  return w;
}

}  // namespace cubesim::kernels
