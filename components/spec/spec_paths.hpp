#pragma once
// Specs by name: `cubesim run tiny vector_add` and Spec::load("tiny") find tiny.json in the
// spec folders, searched in order: $CUBESIM_SPECS_DIR, the specs of the installed package a
// program was built against (add_spec_folder, called by <cubesim/cubesim.hpp>), the installed
// share/cubesim/specs beside the executable (BIN/../share/cubesim/specs), then the source
// tree's specs/ (for a binary in the build tree).

#include <filesystem>
#include <string>
#include <vector>

namespace cubesim::components {

struct SpecFolder {
  std::filesystem::path dir;
  std::string why;  // "$CUBESIM_SPECS_DIR", "installed package", "installed", "source tree"
};

// Searches `dir` after $CUBESIM_SPECS_DIR (once, however often it is added: spec_folders()
// drops a folder already listed). A program built against the installed package adds the
// package's specs this way, during its static initialisation, wherever the program itself
// lives. Returns true.
bool add_spec_folder(const std::filesystem::path& dir, const std::string& why);

// The folders searched for a spec name, in order (those that do not exist included).
std::vector<SpecFolder> spec_folders();

// Whether `file` is a name rather than a path: no directory separator, no ".json", and no such
// file in the working directory.
bool is_spec_name(const std::filesystem::path& file);

// `file` itself when it is a path; else <folder>/<file>.json from the first folder that has it.
// SpecError naming the specs found and the folders searched when none has it.
std::filesystem::path resolve_spec(const std::filesystem::path& file);

}  // namespace cubesim::components
