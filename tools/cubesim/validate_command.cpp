// cubesim validate SPEC...: checks spec files without running anything.

#include <iostream>
#include <memory>

#include "tools/cubesim/common.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::cli {

namespace {

int validate(const std::vector<std::string>& files) {
  int bad = 0;
  for (const auto& file : files) {
    try {
      (void)components::Spec::load(file);
      std::cout << "ok  " << file << std::endl;
    } catch (const components::SpecError& e) {
      ++bad;
      // Every issue of every file, each naming its file and JSON path: fix them all in one go.
      for (const auto& issue : e.issues()) std::cerr << "cubesim: " << issue.message() << "\n";
    }
  }
  if (bad > 0) {
    std::cerr << "cubesim: " << bad << " of " << files.size() << " spec file"
              << (files.size() == 1 ? "" : "s") << " invalid\n";
    return static_cast<int>(ExitCode::usage);
  }
  return 0;
}

}  // namespace

Command add_validate_command(CLI::App& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  CLI::App* sub = app.add_subcommand("validate", "Check spec files for errors");
  sub->add_option("SPEC", *files, "Spec files to check")->required();
  sub->footer(
      "Loads each file (resolving \"extends\") and validates every field. Prints "
      "'ok  FILE' on stdout, or on stderr each problem as 'cubesim: FILE: JSON-POINTER: "
      "what is wrong; what is allowed'.\n\n"
      "Example:\n  cubesim validate specs/*.json\n"
      "Exit codes: 0 all valid, 2 at least one invalid (or a usage error).");
  return {sub, [files] { return validate(*files); }};
}

}  // namespace cubesim::cli
