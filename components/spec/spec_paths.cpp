#include "components/spec/spec_paths.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <system_error>

#include "components/spec/spec.hpp"
#include "emu/platform.hpp"

namespace cubesim::components {

namespace fs = std::filesystem;

namespace {
std::vector<SpecFolder>& added_folders() {
  static std::vector<SpecFolder> folders;
  return folders;
}
}  // namespace

bool add_spec_folder(const fs::path& dir, const std::string& why) {
  added_folders().push_back({dir, why});  // spec_folders() lists a folder once
  return true;
}

std::vector<SpecFolder> spec_folders() {
  std::vector<SpecFolder> folders;
  if (const char* env = std::getenv("CUBESIM_SPECS_DIR"); env != nullptr && *env != '\0')
    folders.push_back({env, "$CUBESIM_SPECS_DIR"});
  const std::vector<SpecFolder>& added = added_folders();
  folders.insert(folders.end(), added.begin(), added.end());
  if (const fs::path exe = emu::self_executable(); !exe.empty())
    folders.push_back({exe.parent_path().parent_path() / "share/cubesim/specs", "installed"});
  folders.push_back({CUBESIM_SOURCE_SPECS_DIR, "source tree"});
  // A folder found two ways (a program installed beside its package) is searched once.
  std::vector<SpecFolder> once;
  for (SpecFolder& f : folders) {
    const fs::path dir = f.dir.lexically_normal();
    if (std::none_of(once.begin(), once.end(),
                     [&](const SpecFolder& o) { return o.dir.lexically_normal() == dir; }))
      once.push_back(std::move(f));
  }
  return once;
}

bool is_spec_name(const fs::path& file) {
  const std::string text = file.string();
  std::error_code ec;
  return !text.empty() && text.find('/') == std::string::npos && file.extension() != ".json" &&
         text != "." && text != ".." && !fs::exists(file, ec);
}

fs::path resolve_spec(const fs::path& file) {
  if (!is_spec_name(file)) return file;
  const std::vector<SpecFolder> folders = spec_folders();
  std::set<std::string> found;
  std::string searched;
  for (const auto& f : folders) {
    std::error_code ec;
    const fs::path candidate = f.dir / (file.string() + ".json");
    if (fs::is_regular_file(candidate, ec)) return candidate;
    for (const auto& entry : fs::directory_iterator(f.dir, ec))
      if (entry.path().extension() == ".json") found.insert(entry.path().stem().string());
    searched +=
        fmt::format("{}{} ({})", searched.empty() ? "" : ", ", f.dir.generic_string(), f.why);
  }
  std::string names;
  for (const auto& n : found) names += (names.empty() ? "" : ", ") + n;
  throw SpecError(
      file.string(), "",
      fmt::format("no spec file or spec named \"{}\"; {}; looked in {}. Give the path "
                  "of a spec file, or set CUBESIM_SPECS_DIR to a folder of specs",
                  file.string(),
                  names.empty() ? "no spec folder has any spec" : "the named specs are: " + names,
                  searched));
}

}  // namespace cubesim::components
