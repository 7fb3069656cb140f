// The cubesim executable: the command line (cli_main.cpp) with the shipped kernels.
#include "emu/platform.hpp"
#include "tools/cubesim/cli_main.hpp"

int main(int argc, char** argv) {
  cubesim::emu::remember_program(argc > 0 ? argv[0] : nullptr);
  return cubesim::cli::cubesim_main(argc, argv);
}
