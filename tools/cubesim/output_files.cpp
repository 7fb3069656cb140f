#include "tools/cubesim/output_files.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <system_error>

#include "triton_emu/errors.hpp"

namespace cubesim::cli {

namespace fs = std::filesystem;

namespace {

// An existing output that is a link (/dev/stdout) or not a regular file (a device, a pipe):
// written in place, since renaming a new file over it would replace the link or the device
// node rather than write where it leads.
bool is_stream_target(const fs::path& p) {
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(p, ec);
  if (ec || !fs::exists(link)) return false;
  if (fs::is_symlink(link)) return !fs::is_directory(p, ec);
  return !fs::is_regular_file(link) && !fs::is_directory(link);
}

}  // namespace

void check_output_path(const std::string& path, std::string_view flag) {
  if (path.empty()) throw UsageError(std::string(flag) + ": the file name is empty");
  const fs::path p(path);
  const std::string what = std::string(flag) + " " + path + ": ";
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw UsageError(what + "is a folder; name a file to write");
  if (is_stream_target(p)) {
    if (::access(path.c_str(), W_OK) != 0)
      throw UsageError(what + "cannot be written (" + std::strerror(errno) + ")");
    return;
  }
  const fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (!fs::exists(parent, ec))
    throw UsageError(what + "the folder " + parent.string() + " does not exist; create it first");
  if (!fs::is_directory(parent, ec))
    throw UsageError(what + parent.string() +
                     " is a file, not a folder; name a file inside a folder");
  // Outputs are written to a temporary file beside the target and renamed over it, so the test
  // is whether a file can be made in that folder: access() says yes for root in /proc and
  // /sys, where creating fails.
  std::string probe = (parent / ".cubesim-probe-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    throw UsageError(what + "cannot create files in the folder " + parent.string() + " (" +
                     std::strerror(errno) + "); choose a folder you can write to");
  ::close(fd);
  ::unlink(probe.c_str());
}

void check_distinct_outputs(
    const std::vector<std::pair<std::string_view, std::string>>& flag_paths) {
  for (std::size_t i = 0; i < flag_paths.size(); ++i)
    for (std::size_t j = i + 1; j < flag_paths.size(); ++j) {
      const auto& [flag_a, a] = flag_paths[i];
      const auto& [flag_b, b] = flag_paths[j];
      if (a.empty() || b.empty()) continue;
      std::error_code ec_a, ec_b;
      const fs::path ca = fs::weakly_canonical(fs::absolute(a), ec_a);
      const fs::path cb = fs::weakly_canonical(fs::absolute(b), ec_b);
      if (ec_a || ec_b ? a == b : ca == cb)
        throw UsageError(std::string(flag_a) + " " + a + " and " + std::string(flag_b) + " " + b +
                         " name the same file, and one would overwrite the other; give each its "
                         "own file");
    }
}

std::string to_pretty_json(const nlohmann::json& j) {
  // replace: a spec or file name that is not UTF-8 must not abort the report
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void write_file(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  if (is_stream_target(path)) {
    std::ofstream out(path, std::ios::binary);
    if (!out) throw UsageError("cannot write " + path + ": " + std::strerror(errno));
    fill(out);
    out.flush();
    if (!out) throw UsageError("cannot write " + path + ": " + std::strerror(errno));
    return;
  }
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw UsageError("cannot write " + tmp + ": " + std::strerror(errno));
    fill(out);
    out.close();
    if (!out) throw UsageError("cannot write " + tmp + ": " + std::strerror(errno));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    throw UsageError("cannot write " + path + ": " + why);
  }
}

void write_json_file(const std::string& path, const nlohmann::json& j) {
  write_file(path, [&](std::ostream& out) { out << to_pretty_json(j); });
}

}  // namespace cubesim::cli
