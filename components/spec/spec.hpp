#pragma once
// Spec files: load a JSON system spec (resolving "extends"), apply dotted-path overrides,
// validate every field against the schema (components/spec/schema.hpp) and convert it once
// into a SystemConfig. The field reference is docs/spec-reference.md.

#include <filesystem>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "components/system_config.hpp"

namespace cubesim::components {

// One thing wrong with a spec: where it is and what would fix it.
struct SpecIssue {
  std::string file;     // the spec file the offending value came from ("<inline>" for from_json)
  std::string pointer;  // JSON pointer into the merged document, "" for the file as a whole
  std::string detail;   // "<what is wrong>; <what is allowed / how to fix>"

  std::string message() const;  // "<file>: <pointer>: <detail>"
};

// Thrown for a spec that cannot be loaded or is not valid. what() lists every issue found, one
// per line; file() and pointer() are those of the first.
class SpecError : public std::runtime_error {
 public:
  SpecError(std::string file, std::string pointer, std::string detail);
  explicit SpecError(std::vector<SpecIssue> issues);  // issues must not be empty

  const std::string& file() const { return issues_.front().file; }
  const std::string& pointer() const { return issues_.front().pointer; }
  const std::vector<SpecIssue>& issues() const { return issues_; }

 private:
  std::vector<SpecIssue> issues_;
};

// A validated spec. Immutable: with() returns a new Spec.
class Spec {
 public:
  // Reads `file`, resolves "extends" (relative to the extending file, chained), validates.
  // A name such as "tiny" (no '/', no ".json", no such file here) is an installed spec, found
  // as spec_paths.hpp says.
  static Spec load(const std::filesystem::path& file);
  // Validates a document; an "extends" in it is resolved relative to the working directory.
  static Spec from_json(nlohmann::json doc, std::string origin = "<inline>");

  // Sets the field at a dotted path ("system.ucie.bandwidth_GBps") and revalidates. The value
  // is applied as a JSON merge patch at that path: an object merges into the object there,
  // null restores the default. A path the schema does not know is a SpecError.
  Spec with(std::string_view dotted_path, const nlohmann::json& value) const;
  // Several fields set together, then validated once, for fields that must change together:
  //   spec.with({{"system.ucie.topology", "mesh"}, {"system.ucie.mesh", {2, 2}}})
  // (a chain of one-field with() calls validates after each, so it cannot get there).
  Spec with(std::initializer_list<std::pair<std::string_view, nlohmann::json>> fields) const;
  // "PATH=VALUE"; VALUE is parsed as JSON when it parses, else taken as a string
  // ("system.ucie.topology=ring").
  Spec with_assignment(std::string_view assignment) const;
  // Several assignments applied together, then validated once, so fields that must change
  // together can (ucie.topology=mesh with ucie.mesh=[2,2]).
  Spec with_assignments(std::span<const std::string> assignments) const;
  Spec with_assignments(std::initializer_list<std::string_view> assignments) const;  // {"a=1"}

  const nlohmann::json& json() const { return json_; }  // merged, defaults filled in
  const SystemConfig& config() const { return config_; }
  const std::string& origin() const { return origin_; }  // the file it came from

  // One source of the merged document: a file of the extends chain, or an override.
  struct Layer {
    std::string file;      // the file, or for an override the file it was applied to
    std::string override;  // "system.ucie.bandwidth_GBps=512" for an override, else ""
    nlohmann::json patch;  // what this layer set (for overrides: a patch from the root)
  };
  // Where the merged document came from, base file first, overrides last.
  const std::vector<std::shared_ptr<const Layer>>& layers() const { return layers_; }

 private:
  Spec() = default;
  static Spec build(std::string origin, std::vector<std::shared_ptr<const Layer>> layers,
                    nlohmann::json merged);
  Spec with_patches(std::vector<std::pair<std::string, nlohmann::json>> overrides) const;

  std::string origin_;
  std::vector<std::shared_ptr<const Layer>> layers_;  // base first
  nlohmann::json merged_;                             // before defaults: what overrides patch
  nlohmann::json json_;
  SystemConfig config_;
};

// The generated part of docs/spec-reference.md: a table of fields per section and the rules
// across fields, from the schema.
std::string spec_reference_markdown();

}  // namespace cubesim::components
