#pragma once
// The spec schema as data: one typed descriptor per field (path, type, unit, default or
// required, range, allowed values, one-line description). The loader validates against it,
// dotted overrides resolve paths through it, and docs/spec-reference.md is generated from it,
// so the three cannot drift apart.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace cubesim::components::spec {

enum class FieldType {
  object,       // a JSON object whose keys are the fields below it; unknown keys are errors
  string,       // non-empty text
  integer,      // a whole number (4.0 is accepted and stored as 4)
  number,       // a real number, in `unit`
  size,         // a real number of KiB / GiB / bytes that must come to a whole number of bytes
  choice,       // one of `choices`
  extent,       // [x, y]: two integers, each in the field's range (a mesh's columns and rows)
  coord_list,   // [[x, y], ...] (at least one), [x, y] (one) or "every_node" of the cube's mesh
  choice_list,  // ["a", "b", ...]: at least one of `choices`, none twice
  index_list,   // [0, 2, ...]: at least one integer in the field's range, none twice
};

enum class Presence {
  required,     // must be given (by the file or a file it extends)
  optional,     // takes `default_value` when absent (optional objects: their fields' defaults)
  conditional,  // required or forbidden depending on another field (see `condition`)
};

// Contract: `path` is dotted from the document root; a field's parent path names an object
// field. Ranges are inclusive at `max` and at `min` unless `min_exclusive`; for sizes they are
// in `unit`, and `bytes_per_unit` converts to bytes.
struct SpecField {
  std::string path;
  FieldType type = FieldType::number;
  std::string unit;
  Presence presence = Presence::required;
  nlohmann::json default_value;  // null: no default written (required, conditional, extends)
  bool has_range = false;
  double min = 0;
  double max = 0;
  bool min_exclusive = false;
  std::uint64_t bytes_per_unit = 0;  // size fields only
  bool power_of_two = false;         // size / integer fields: the value in bytes
  std::vector<std::string> choices;  // choice and choice_list fields only
  std::string condition;             // conditional fields: when the field must be present
  std::string description;

  std::string_view key() const;          // the last component of `path`
  std::string_view parent_path() const;  // "" for top-level fields
  std::string pointer() const;           // "/system/cube/noc/mesh"

  SpecField& range(double lo, double hi);
  SpecField& above(double lo, double hi);  // (lo, hi]
  SpecField& def(nlohmann::json value);
  SpecField& optional();  // optional with no default (the whole object is defaulted)
  SpecField& when(std::string condition_text);
  SpecField& pow2();
  SpecField& desc(std::string text);
};

// Every field, parents before children, in the order the reference lists them.
const std::vector<SpecField>& spec_schema();

// The field at a dotted path, or nullptr.
const SpecField* find_field(std::string_view dotted_path);

// The fields directly inside an object field ("" for the document root), in schema order.
const std::vector<const SpecField*>& child_fields(std::string_view parent_path);

// One line per rule that relates several fields; validation checks each of them.
const std::vector<std::string>& cross_field_rules();

// The limits that keep a spec simulatable; checked before anything is allocated.
inline constexpr std::uint64_t kMaxTotalPes = 1'048'576;
inline constexpr std::uint64_t kMaxTotalCubes = 65'536;
inline constexpr std::uint64_t kMaxLinksPerClass = 1'048'576;
inline constexpr std::uint64_t kMaxTotalHbmBytes = std::uint64_t{1} << 60;

}  // namespace cubesim::components::spec
