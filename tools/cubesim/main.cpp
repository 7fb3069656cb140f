// The cubesim executable: the command line (cli_main.cpp) with the shipped kernels.
#include "tools/cubesim/cli_main.hpp"

int main(int argc, char** argv) {
  return cubesim::cli::cubesim_main(argc, argv);
}
