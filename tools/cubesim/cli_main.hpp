#pragma once
// The whole cubesim command line as a function, so that a program of one's own can be cubesim
// with more kernels built in (cubesim_add_cli in the CMake package generates such a main):
//
//   void register_my_kernels(cubesim::kernels::Registry& registry);
//   int main(int argc, char** argv) {
//     return cubesim::cli::cubesim_main(argc, argv, {&register_my_kernels});
//   }

#include <vector>

#include "kernels/registry.hpp"

namespace cubesim::cli {

using RegisterKernels = void (*)(kernels::Registry&);

// Parses the command line, adds `built_in` kernels and then the plugins of --load and
// CUBESIM_PLUGINS to the registry, runs one subcommand, and returns the exit code (every error
// becomes one message on stderr and the exit code of its category, DESIGN.md).
int cubesim_main(int argc, char** argv, const std::vector<RegisterKernels>& built_in = {});

}  // namespace cubesim::cli
