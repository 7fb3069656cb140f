#pragma once
// Internal to components/spec/: checks a merged spec document against the schema and the
// rules across fields, fills in defaults and converts it into a SystemConfig.

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "components/spec/schema.hpp"
#include "components/system_config.hpp"

namespace cubesim::components::spec {

// Where the value at a JSON pointer came from: the file to name, and a note for the detail
// (" (set by override ...)" when an override set it).
struct Source {
  std::string file;
  std::string note;
  std::string override;  // "PATH=VALUE" when an override set the value, else ""
  int layer = -1;        // which layer set it (base file first), -1 when none did
};
using Locator = std::function<Source(const std::string& pointer)>;

struct Validated {
  nlohmann::json effective;  // the document with defaults filled in, integers normalised
  SystemConfig config;
};

// Throws SpecError listing every issue found.
Validated validate(const nlohmann::json& merged, const Locator& locate);

// A JSON pointer token for an object key ("~" and "/" escaped).
std::string pointer_token(std::string_view key);

// The candidate closest to `key` when it is plausibly a typo of it, else "".
std::string nearest(std::string_view key, const std::vector<std::string_view>& candidates);

// "a string (\"16\")", "4.5", "an array of 3 elements": what a value is, for messages.
std::string describe_value(const nlohmann::json& v);

// The keys of an object field's children, in schema order.
std::vector<std::string_view> child_keys(std::string_view parent_path);

// "a, b, c"
std::string join(const std::vector<std::string_view>& items, std::string_view quote = "");

}  // namespace cubesim::components::spec
