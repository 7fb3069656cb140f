// The cubesim command line. The simulation core is in place; the subcommands of DESIGN.md
// (run, sweep, validate, info, list) arrive with the hardware model and programming model.

#include <CLI/CLI.hpp>
#include <iostream>

#include "emu/log.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "cubesim: an emulator and discrete-event simulator of chiplet accelerators (SIPs of cubes "
      "of PEs), programmed Triton-style.\nKernels run one program per PE as fibers in "
      "simulated time; data really moves and GEMMs really compute.",
      "cubesim"};
  app.set_version_flag("--version", std::string("cubesim ") + CUBESIM_VERSION);
  std::string log_level = "warn";
  app.add_option("--log-level", log_level,
                 "trace, debug, info, warn, error, critical or off (default: warn)")
      ->capture_default_str();
  app.footer(
      "Subcommands (run, sweep, validate, info, list) are being built; see README.md.\n"
      "Exit codes: 0 ok, 1 verification failed, 2 usage or spec error, 3 kernel fault, "
      "4 deadlock.");
  try {
    app.parse(argc, argv);
    cubesim::emu::set_log_level(log_level);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    std::cerr << "cubesim: " << e.what() << "\n";
    return 2;
  }
  std::cout << app.help();
  return 0;
}
