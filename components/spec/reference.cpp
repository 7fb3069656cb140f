// Generates the field reference of docs/spec-reference.md from the schema; a test keeps the
// document equal to this output.

#include <fmt/format.h>

#include "components/spec/schema.hpp"
#include "components/spec/spec.hpp"

namespace cubesim::components {

namespace {

using spec::FieldType;
using spec::Presence;
using spec::SpecField;

std::string type_cell(const SpecField& f) {
  switch (f.type) {
    case FieldType::object:
      return "object";
    case FieldType::string:
      return "string";
    case FieldType::integer:
      return "integer";
    case FieldType::number:
      return "number";
    case FieldType::size:
      return "number (size)";
    case FieldType::choice:
      return "string (choice)";
    case FieldType::extent:
      return "[x, y]";
    case FieldType::coord_list:
      return "[[x, y], ...] nodes, [x, y] or \"every_node\"";
    case FieldType::choice_list:
      return "[string, ...] (choices)";
    case FieldType::index_list:
      return "[integer, ...]";
  }
  return "";
}

std::string num(double d) {
  return fmt::format("{}", d);
}

std::string default_cell(const SpecField& f) {
  switch (f.presence) {
    case Presence::required:
      return "**required**";
    case Presence::conditional:
      return f.condition;
    case Presence::optional:
      if (f.type == FieldType::object) return "optional (every field defaulted)";
      if (f.default_value.is_null()) return "optional";
      return fmt::format("`{}`", f.default_value.dump());
  }
  return "";
}

std::string allowed_cell(const SpecField& f) {
  std::vector<std::string> parts;
  if (f.type == FieldType::choice || f.type == FieldType::choice_list) {
    std::string c;
    for (const std::string& s : f.choices) c += (c.empty() ? "" : ", ") + fmt::format("`{}`", s);
    parts.push_back(c);
  }
  if (f.has_range) {
    const std::string r =
        fmt::format("{}{}, {}]", f.min_exclusive ? "(" : "[", num(f.min), num(f.max));
    switch (f.type) {
      case FieldType::extent:
        parts.push_back("each of x, y in " + r);
        break;
      case FieldType::coord_list:
        parts.push_back("x, y in " + r + ", inside the mesh");
        break;
      default:
        parts.push_back(r);
    }
  }
  if (f.type == FieldType::coord_list) parts.push_back("at least one");
  if (f.type == FieldType::choice_list || f.type == FieldType::index_list)
    parts.push_back("at least one, each once");
  if (f.type == FieldType::size) parts.push_back("whole bytes");
  if (f.power_of_two) parts.push_back("power of two");
  if (f.type == FieldType::string) parts.push_back("non-empty");
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out.empty() ? "" : out;
}

void section(std::string& out, const std::string& path, const std::string& description) {
  const auto& kids = spec::child_fields(path);
  if (kids.empty()) return;
  out += fmt::format("### `{}`\n\n{}\n\n", path.empty() ? "(top level)" : path, description);
  out += "| field | type | unit | default | allowed | description |\n";
  out += "|---|---|---|---|---|---|\n";
  for (const SpecField* f : kids) {
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", f->key(), type_cell(*f), f->unit,
                       default_cell(*f), allowed_cell(*f), f->description);
  }
  out += "\n";
  for (const SpecField* f : kids)
    if (f->type == FieldType::object) section(out, f->path, f->description);
}

}  // namespace

std::string spec_reference_markdown() {
  std::string out;
  section(out, "", "The document. `name`, `description` and `system` are required.");
  out += "### Rules across fields\n\n";
  for (const std::string& rule : spec::cross_field_rules()) out += "- " + rule + "\n";
  return out;
}

}  // namespace cubesim::components
