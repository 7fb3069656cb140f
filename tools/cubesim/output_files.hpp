#pragma once
// cubesim's output files: checked before a long run (the folder exists, the file can be made,
// two options do not name the same file) and written whole through a temporary file.

#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cubesim::cli {

// UsageError unless `path` could be created: its folder exists, is a folder, and a file can be
// made in it; `path` is not a folder itself. Checked before a run so a typo does not cost the
// whole simulation.
void check_output_path(const std::string& path, std::string_view flag);

// UsageError when two of the (flag, path) outputs name the same file (empty paths are unused).
void check_distinct_outputs(
    const std::vector<std::pair<std::string_view, std::string>>& flag_paths);

// Writes what `fill` streams to a temporary file beside `path` (named by process id, so
// concurrent writers do not collide) and renames it over `path`, so a reader never sees half a
// file. UsageError when it cannot.
void write_file(const std::string& path, const std::function<void(std::ostream&)>& fill);

// write_file of `j`, indented (to_pretty_json).
void write_json_file(const std::string& path, const nlohmann::json& j);

// A 2-space-indented dump with a trailing newline.
std::string to_pretty_json(const nlohmann::json& j);

}  // namespace cubesim::cli
