#pragma once
// What cubesim says when code it runs for a kernel or a plugin dies of a signal (a segfault, an
// abort, a division by zero): the words an emu::FatalSignalScope holds ready for the handler
// (emu/fatal_signal.hpp), which adds the signal, the PE and the simulated time.

#include <string>

#include "emu/fatal_signal.hpp"
#include "kernels/registry.hpp"

namespace cubesim::kernels {

// For running `kernel` (its harness and its programs) registered by `origin` (Registry::origin:
// "cubesim", "plugin FILE" or "your program"): exit 3, a kernel fault, naming the kernel, its
// origin, and the PE whose program ran or else its host harness.
emu::LastWords kernel_last_words(const KernelInfo& kernel, const std::string& origin);

// For loading the plugin `shown` ("plugin FILE") while it does `stage` ("in its registration
// function cubesim_register_kernels()"): exit 2, as for every plugin that cannot be loaded.
emu::LastWords plugin_last_words(const std::string& shown, const std::string& stage);

}  // namespace cubesim::kernels
