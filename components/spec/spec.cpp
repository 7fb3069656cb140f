#include "components/spec/spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <system_error>

#include "components/spec/schema.hpp"
#include "components/spec/spec_paths.hpp"
#include "components/spec/validate.hpp"

namespace cubesim::components {

namespace fs = std::filesystem;
using nlohmann::json;

std::string SpecIssue::message() const {
  return pointer.empty() ? fmt::format("{}: {}", file, detail)
                         : fmt::format("{}: {}: {}", file, pointer, detail);
}

namespace {

std::string join_messages(const std::vector<SpecIssue>& issues) {
  std::string out;
  for (const SpecIssue& i : issues) {
    if (!out.empty()) out += '\n';
    out += i.message();
  }
  return out;
}

}  // namespace

SpecError::SpecError(std::string file, std::string pointer, std::string detail)
    : SpecError(std::vector<SpecIssue>{{std::move(file), std::move(pointer), std::move(detail)}}) {}

SpecError::SpecError(std::vector<SpecIssue> issues)
    : std::runtime_error(join_messages(issues)), issues_(std::move(issues)) {
  if (issues_.empty()) issues_.push_back({"<unknown>", "", "invalid spec"});  // keep file() safe
}

namespace {

constexpr std::uintmax_t kMaxSpecFileBytes = 16 << 20;  // a spec is a few KiB; refuse a mistake
constexpr std::size_t kMaxExtendsDepth = 64;
// A spec nests six levels (system.cube.noc.hbm_nodes[i][j]); merging, copying and validating a
// document recurse once per level, so a limit far above any real spec keeps them off the
// bottom of the stack.
constexpr std::size_t kMaxSpecNesting = 64;

std::string display(const fs::path& p) {
  return p.lexically_normal().generic_string();
}

// Line and column (1-based) of the character at 1-based position `byte`, counted ourselves:
// nlohmann's own column is off after tokens that end on a newline.
std::pair<std::size_t, std::size_t> line_column(const std::string& text, std::size_t byte) {
  const std::size_t index = std::min(byte == 0 ? 0 : byte - 1, text.size());
  const std::size_t line = 1 + static_cast<std::size_t>(std::count(
                                   text.begin(), text.begin() + static_cast<long>(index), '\n'));
  const std::size_t last_nl = index == 0 ? std::string::npos : text.rfind('\n', index - 1);
  const std::size_t column = last_nl == std::string::npos ? index + 1 : index - last_nl;
  return {line, column};
}

// nlohmann's message without its "[json.exception...] parse error at line L, column C: " prefix.
std::string parse_reason(const std::string& what) {
  const auto col = what.find("column ");
  if (col != std::string::npos) {
    const auto colon = what.find(": ", col);
    if (colon != std::string::npos) return what.substr(colon + 2);
  }
  const auto bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

// A character iterator that records how far nlohmann's lexer has read, so errors the parser
// reports without a position (a callback's refusal, a number out of range) can say where.
class TrackedIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackedIterator(const char* at, const char* begin, std::size_t* read)
      : at_(at), begin_(begin), read_(read) {}
  reference operator*() const { return *at_; }
  TrackedIterator& operator++() {
    ++at_;
    *read_ = std::max(*read_, static_cast<std::size_t>(at_ - begin_));
    return *this;
  }
  TrackedIterator operator++(int) {
    TrackedIterator before = *this;
    ++*this;
    return before;
  }
  bool operator==(const TrackedIterator& o) const { return at_ == o.at_; }

 private:
  const char* at_;
  const char* begin_;
  std::size_t* read_;
};

// Thrown out of the parser's callback when the document nests too deeply.
struct TooDeep {
  std::size_t byte;  // 1-based position of the opening bracket
};

// Parses JSON text like json::parse, refusing (TooDeep) an object or array nested more than
// kMaxSpecNesting levels as soon as the parser opens it, before anything recurses on it.
// `on_event` sees every other parse event, as a json::parser_callback_t would. `read` is set to
// the number of characters the lexer has read.
template <typename OnEvent>
json parse_bounded(const std::string& text, std::size_t& read, OnEvent&& on_event) {
  std::size_t depth = 0;
  read = 0;
  auto callback = [&](int d, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) {
      depth = static_cast<std::size_t>(d) + 1;
      if (depth > kMaxSpecNesting) throw TooDeep{read};
    }
    return on_event(d, event, parsed);
  };
  const TrackedIterator first(text.data(), text.data(), &read);
  const TrackedIterator last(text.data() + text.size(), text.data(), &read);
  return json::parse(first, last, callback);
}

std::string too_deep_detail(const std::string& text, std::size_t byte) {
  const auto [line, column] = line_column(text, byte);
  return fmt::format(
      "line {}, column {}: nested deeper than {} levels of objects and arrays; a "
      "spec needs a handful, so check for a runaway or generated structure",
      line, column, kMaxSpecNesting);
}

// Parses a spec's text. Besides syntax errors, refuses a key given twice in one object: the
// parser would silently keep one of them, which hides exactly the mistakes validation is for.
json parse_document(const std::string& text, const std::string& file) {
  struct Frame {
    bool is_array = false;
    std::set<std::string> keys;
    std::string key;
    std::size_t index = 0;
  };
  std::vector<Frame> frames;
  std::vector<SpecIssue> duplicates;
  auto pointer_to = [&frames](const std::string& last) {
    std::string p;
    for (std::size_t i = 0; i + 1 < frames.size(); ++i)
      p += "/" + (frames[i].is_array ? std::to_string(frames[i].index)
                                     : spec::pointer_token(frames[i].key));
    return p + "/" + spec::pointer_token(last);
  };
  auto on_event = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        frames.push_back({});
        break;
      case json::parse_event_t::array_start:
        frames.emplace_back();
        frames.back().is_array = true;
        break;
      case json::parse_event_t::key: {
        const auto& k = parsed.get_ref<const std::string&>();
        if (!frames.back().keys.insert(k).second) {
          duplicates.push_back(
              {file, pointer_to(k),
               fmt::format("key \"{}\" appears more than once in the same object; only one "
                           "would be kept, so remove the others",
                           k)});
        }
        frames.back().key = k;
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames.pop_back();
        [[fallthrough]];
      case json::parse_event_t::value:
        if (!frames.empty() && frames.back().is_array) ++frames.back().index;
        break;
    }
    return true;
  };
  json doc;
  std::size_t read = 0;
  try {
    doc = parse_bounded(text, read, on_event);
  } catch (const TooDeep& e) {
    throw SpecError(file, "", too_deep_detail(text, e.byte));
  } catch (const json::parse_error& e) {
    const auto [line, column] = line_column(text, e.byte);
    throw SpecError(
        file, "",
        fmt::format("line {}, column {}: invalid JSON: {}", line, column, parse_reason(e.what())));
  } catch (const json::out_of_range& e) {
    // A number beyond a double (1e400): nlohmann names the token but not where it is; the
    // lexer has read it and at most one character more.
    const std::string reason = parse_reason(e.what());
    const auto quote = reason.find('\'');
    const std::string token =
        quote == std::string::npos ? "" : reason.substr(quote + 1, reason.rfind('\'') - quote - 1);
    const std::size_t at = token.empty() ? std::string::npos : text.rfind(token, read);
    const auto [line, column] = line_column(text, at == std::string::npos ? read : at + 1);
    const std::string pointer =
        frames.empty() ? ""
                       : pointer_to(frames.back().is_array ? std::to_string(frames.back().index)
                                                           : frames.back().key);
    throw SpecError(file, pointer,
                    fmt::format("line {}, column {}: the number {} is out of range (a JSON number "
                                "must stay within about ±1.8e308); write the value in range",
                                line, column, token.empty() ? reason : token));
  }
  if (!duplicates.empty()) throw SpecError(std::move(duplicates));
  return doc;
}

std::string_view file_kind(fs::file_type t) {
  switch (t) {
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::fifo:
      return "a pipe (FIFO)";
    case fs::file_type::socket:
      return "a socket";
    default:
      return "not a regular file";
  }
}

// Reads a spec file (a regular file: load_chain checks) of at most kMaxSpecFileBytes. The cap
// holds while reading too, as a file may grow (or, in /proc, report size 0).
std::string read_file(const fs::path& path, const std::string& shown) {
  std::error_code ec;
  const auto too_large = [&](const std::string& size) {
    return SpecError(shown, "",
                     fmt::format("file is {} bytes, too large for a spec (limit {} bytes)", size,
                                 kMaxSpecFileBytes));
  };
  const auto size = fs::file_size(path, ec);
  if (!ec && size > kMaxSpecFileBytes) throw too_large(std::to_string(size));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError(shown, "", "cannot open the file for reading");
  // Read in pieces up to one byte past the cap: a spec is small, the cap is not.
  std::string text;
  char piece[1 << 16];
  while (text.size() <= kMaxSpecFileBytes && in) {
    in.read(piece, sizeof piece);
    text.append(piece, static_cast<std::size_t>(in.gcount()));
  }
  if (text.size() > kMaxSpecFileBytes)
    throw too_large("more than " + std::to_string(kMaxSpecFileBytes));
  return text;
}

// Who named a file in its "extends", for the error when that file is missing.
struct Reference {
  std::string file;
  std::string value;
};

struct ChainEntry {
  fs::path canonical;
  std::string shown;
};

using Layers = std::vector<std::shared_ptr<const Spec::Layer>>;

void require_own_name(const json& doc, const std::string& file) {
  const auto it = doc.find("name");
  if (it == doc.end() || it->is_null()) {
    throw SpecError(file, "/name",
                    "missing: a spec that extends another must set its own name, so results are "
                    "not reported under the base's name; add \"name\": \"...\"");
  }
}

void load_chain(const fs::path& file, const Reference* ref, std::vector<ChainEntry>& chain,
                Layers& layers);

// Loads what `doc` extends (below it in `layers`) and strips "extends" from it.
void resolve_extends(json& doc, const fs::path& base_dir, const std::string& shown,
                     std::vector<ChainEntry>& chain, Layers& layers) {
  const auto it = doc.find("extends");
  if (it == doc.end()) return;
  if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
    throw SpecError(shown, "/extends",
                    fmt::format("expected the path of a spec file (a non-empty string), got {}",
                                spec::describe_value(*it)));
  }
  const std::string target = it->get<std::string>();
  doc.erase(it);
  const Reference ref{shown, target};
  load_chain(base_dir / target, &ref, chain, layers);
  require_own_name(doc, shown);
}

void load_chain(const fs::path& file, const Reference* ref, std::vector<ChainEntry>& chain,
                Layers& layers) {
  const std::string shown = display(file);
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    if (ref) {
      throw SpecError(ref->file, "/extends",
                      fmt::format("extends \"{}\", which does not exist (looked for {}); the path "
                                  "is relative to the extending file",
                                  ref->value, shown));
    }
    // A shipped spec's file name from another folder ("specs/default.json" run elsewhere):
    // point at the installed one of that name.
    std::string hint;
    if (file.extension() == ".json" || !file.has_extension())
      for (const SpecFolder& f : spec_folders())
        if (fs::is_regular_file(f.dir / (file.stem().string() + ".json"), ec)) {
          hint =
              fmt::format("; a spec named \"{}\" is {} ({}): give its name, {}, or that path",
                          file.stem().string(), display(f.dir / (file.stem().string() + ".json")),
                          f.why, file.stem().string());
          break;
        }
    throw SpecError(shown, "",
                    fmt::format("spec file not found (looked for {}){}",
                                display(fs::absolute(file, ec)), hint));
  }
  // Only regular files: a device such as /dev/zero never ends and a FIFO blocks until someone
  // writes, so both are refused before they are opened.
  const fs::file_type type = fs::status(file, ec).type();
  if (!ec && type != fs::file_type::regular) {
    const std::string fix =
        "a spec must be a JSON file (write generated JSON to a file and give its path)";
    if (ref) {
      throw SpecError(ref->file, "/extends",
                      fmt::format("extends \"{}\", which is {}, not a regular file; {}", ref->value,
                                  file_kind(type), fix));
    }
    throw SpecError(shown, "", fmt::format("is {}, not a regular file; {}", file_kind(type), fix));
  }

  const fs::path canonical = fs::weakly_canonical(file, ec);
  for (const ChainEntry& e : chain) {
    if (e.canonical == canonical) {
      std::string cycle;
      for (const ChainEntry& c : chain) cycle += c.shown + " -> ";
      throw SpecError(chain.back().shown, "/extends",
                      fmt::format("extends cycle: {}{}; a spec cannot extend itself, directly or "
                                  "through others",
                                  cycle, shown));
    }
  }
  if (chain.size() >= kMaxExtendsDepth) {
    throw SpecError(
        shown, "/extends",
        fmt::format("extends chain is deeper than {} files; flatten it", kMaxExtendsDepth));
  }

  json doc = parse_document(read_file(file, shown), shown);
  if (!doc.is_object()) {
    throw SpecError(
        shown, "",
        fmt::format("expected a JSON object at the top level, got {}", spec::describe_value(doc)));
  }
  chain.push_back({canonical, shown});
  resolve_extends(doc, file.parent_path(), shown, chain, layers);
  chain.pop_back();
  layers.push_back(std::make_shared<const Spec::Layer>(Spec::Layer{shown, "", std::move(doc)}));
}

json merge_layers(const Layers& layers) {
  json merged = json::object();
  for (const auto& l : layers) merged.merge_patch(l->patch);
  return merged;
}

bool starts_with_pointer(const std::string& p, const std::string& prefix) {
  return p == prefix ||
         (p.starts_with(prefix) && p.size() > prefix.size() && p[prefix.size()] == '/');
}

std::string parent_pointer(const std::string& p) {
  const auto slash = p.rfind('/');
  return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

bool layer_has(const json& patch, const std::string& pointer) {
  try {
    return patch.contains(json::json_pointer(pointer));
  } catch (const json::exception&) {
    return false;
  }
}

// The value at `pointer` came from the most derived layer that sets it or, for a value no
// layer sets (a default, a missing field), the most derived that sets its closest parent.
spec::Locator make_locator(const Layers& layers, const std::string& origin) {
  return [&layers, &origin](const std::string& pointer) -> spec::Source {
    for (std::string p = pointer;; p = parent_pointer(p)) {
      for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
        const Spec::Layer& l = **it;
        const int layer = static_cast<int>(layers.rend() - it) - 1;
        if (!l.override.empty()) {
          const std::string at = "/" + l.override.substr(0, l.override.find('='));
          std::string ptr = at;
          std::replace(ptr.begin(), ptr.end(), '.', '/');
          if (!starts_with_pointer(p, ptr) || !layer_has(l.patch, p)) continue;
          return {l.file, fmt::format(" (set by override {})", l.override), l.override, layer};
        }
        if (layer_has(l.patch, p)) return {l.file, "", "", layer};
      }
      if (p.empty()) return {origin, "", "", -1};
    }
  };
}

// Turns a dotted path into a JSON pointer, checking each component against the schema.
std::string resolve_path(std::string_view dotted, const std::string& origin) {
  std::string pointer;
  std::string parent;  // dotted path of the object we are in
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = dotted.find('.', start);
    const std::string_view part =
        dotted.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty()) {
      throw SpecError(origin, pointer,
                      fmt::format("\"{}\" is not a dotted path of spec fields; write e.g. "
                                  "system.ucie.bandwidth_GBps",
                                  dotted));
    }
    pointer += "/" + spec::pointer_token(part);
    const std::string path = parent.empty() ? std::string(part) : parent + "." + std::string(part);
    const spec::SpecField* f = spec::find_field(path);
    if (f == nullptr) {
      std::vector<std::string_view> keys = spec::child_keys(parent);
      std::erase(keys, "extends");
      const std::string guess = spec::nearest(part, keys);
      throw SpecError(origin, pointer,
                      fmt::format("unknown path \"{}\": {} has no field \"{}\"; {}allowed: {}",
                                  dotted, parent.empty() ? "the top level" : parent, part,
                                  guess.empty() ? "" : fmt::format("did you mean \"{}\"? ", guess),
                                  spec::join(keys)));
    }
    if (path == "extends") {
      throw SpecError(origin, pointer,
                      "\"extends\" is resolved when a file is loaded and cannot be overridden; "
                      "load the other spec, or write a file that extends it");
    }
    if (dot == std::string_view::npos) return pointer;
    if (f->type != spec::FieldType::object) {
      throw SpecError(origin, pointer,
                      fmt::format("{} is a value, not a section, so \"{}\" cannot go below it; "
                                  "set {} itself",
                                  path, dotted.substr(dot + 1), path));
    }
    parent = path;
    start = dot + 1;
  }
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

Spec Spec::build(std::string origin, std::vector<std::shared_ptr<const Layer>> layers,
                 nlohmann::json merged) {
  Spec s;
  s.origin_ = std::move(origin);
  s.layers_ = std::move(layers);
  s.merged_ = std::move(merged);
  spec::Validated v = spec::validate(s.merged_, make_locator(s.layers_, s.origin_));
  s.json_ = std::move(v.effective);
  s.config_ = std::move(v.config);
  return s;
}

Spec Spec::load(const fs::path& name_or_file) {
  const fs::path file = resolve_spec(name_or_file);
  std::vector<ChainEntry> chain;
  Layers layers;
  load_chain(file, nullptr, chain, layers);
  nlohmann::json merged = merge_layers(layers);
  return build(display(file), std::move(layers), std::move(merged));
}

Spec Spec::from_json(nlohmann::json doc, std::string origin) {
  if (!doc.is_object()) {
    throw SpecError(
        origin, "",
        fmt::format("expected a JSON object at the top level, got {}", spec::describe_value(doc)));
  }
  std::vector<ChainEntry> chain;
  Layers layers;
  resolve_extends(doc, fs::path(), origin, chain, layers);
  layers.push_back(std::make_shared<const Layer>(Layer{origin, "", std::move(doc)}));
  nlohmann::json merged = merge_layers(layers);
  return build(std::move(origin), std::move(layers), std::move(merged));
}

Spec Spec::with_patches(std::vector<std::pair<std::string, nlohmann::json>> overrides) const {
  Layers layers = layers_;
  nlohmann::json merged = merged_;
  for (auto& [dotted, value] : overrides) {
    const std::string pointer = resolve_path(dotted, origin_);
    // A patch from the root whose only leaf is the value: merge_patch then creates missing
    // sections, merges objects, and deletes on null, exactly as an "extends" file would.
    std::string shown = value.dump();
    if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
    nlohmann::json patch = nlohmann::json::object();
    patch[nlohmann::json::json_pointer(pointer)] = std::move(value);
    merged.merge_patch(patch);
    layers.push_back(std::make_shared<const Layer>(
        Layer{origin_, fmt::format("{}={}", dotted, shown), std::move(patch)}));
  }
  return build(origin_, std::move(layers), std::move(merged));
}

Spec Spec::with(std::string_view dotted_path, const nlohmann::json& value) const {
  return with_patches({{std::string(dotted_path), value}});
}

namespace {

std::pair<std::string, nlohmann::json> parse_assignment(std::string_view assignment,
                                                        const std::string& origin) {
  const auto eq = assignment.find('=');
  const std::string path = eq == std::string_view::npos ? "" : trim(assignment.substr(0, eq));
  if (path.empty()) {
    throw SpecError(origin, "",
                    fmt::format("override \"{}\" is not PATH=VALUE; write e.g. "
                                "system.ucie.bandwidth_GBps=512",
                                assignment));
  }
  try {
    (void)nlohmann::json(std::string(assignment)).dump();
  } catch (const nlohmann::json::type_error& e) {
    // Every value ends up in reports and keys as JSON text, which must be UTF-8.
    throw SpecError(
        origin, "",
        fmt::format("override {} is not valid UTF-8 ({}); write the value as UTF-8 text",
                    nlohmann::json(std::string(assignment))
                        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                    parse_reason(e.what())));
  }
  const std::string text(assignment.substr(eq + 1));
  nlohmann::json value;
  std::size_t read = 0;
  try {
    value = parse_bounded(text, read, [](int, json::parse_event_t, json&) { return true; });
  } catch (const TooDeep& e) {
    throw SpecError(
        origin, "",
        fmt::format("override {}=...: the value, {}", path, too_deep_detail(text, e.byte)));
  } catch (const json::exception&) {
    value = trim(text);  // not JSON: a bare word such as ring
  }
  return {path, std::move(value)};
}

}  // namespace

Spec Spec::with_assignment(std::string_view assignment) const {
  return with_patches({parse_assignment(assignment, origin_)});
}

Spec Spec::with_assignments(std::span<const std::string> assignments) const {
  std::vector<std::pair<std::string, nlohmann::json>> overrides;
  for (const std::string& a : assignments) overrides.push_back(parse_assignment(a, origin_));
  return with_patches(std::move(overrides));
}

Spec Spec::with_assignments(std::initializer_list<std::string_view> assignments) const {
  std::vector<std::pair<std::string, nlohmann::json>> overrides;
  for (const std::string_view a : assignments) overrides.push_back(parse_assignment(a, origin_));
  return with_patches(std::move(overrides));
}

Spec Spec::with(std::initializer_list<std::pair<std::string_view, nlohmann::json>> fields) const {
  std::vector<std::pair<std::string, nlohmann::json>> overrides;
  for (const auto& [path, value] : fields) overrides.emplace_back(std::string(path), value);
  return with_patches(std::move(overrides));
}

}  // namespace cubesim::components
