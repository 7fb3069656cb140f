#pragma once
// A table of things chosen by name (an HBM model's factory, a network model, a topology, a GEMM
// backend): the one place that knows the names. The spec schema's allowed values, the CLI's
// choices and the error for an unknown name all read them from here, so a new entry is added
// in one line and cannot be missing from any of them.
//
//   const emu::NameTable<Make>& hbm_models() {
//     static const emu::NameTable<Make> table("HBM model", {{"simple", &make<SimpleHbm>}});
//     return table;
//   }
//   hbm_models().at(config.model)(config);  // unknown: lists 'simple'

#include <algorithm>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cubesim::emu {

// Contract: names are unique and kept in the order given (the order schemas, help texts and
// errors list them); a row's `about` is an optional one-line description shown beside its name
// in help texts and errors.
template <class Entry>
class NameTable {
 public:
  struct Row {
    std::string name;
    Entry entry;
    std::string about = {};
  };

  // `what` names one entry in messages: "HBM model", "network model", "topology".
  NameTable(std::string what, std::initializer_list<Row> rows) : what_(std::move(what)) {
    for (const Row& r : rows) {
      if (find(r.name) != nullptr)
        throw std::logic_error(what_ + " '" + r.name + "' is registered twice");
      rows_.push_back(r);
      names_.push_back(r.name);
    }
  }

  const std::string& what() const { return what_; }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<Row>& rows() const { return rows_; }

  // The entry called `name`, or nullptr.
  const Entry* find(std::string_view name) const {
    const auto it =
        std::find_if(rows_.begin(), rows_.end(), [&](const Row& r) { return r.name == name; });
    return it == rows_.end() ? nullptr : &it->entry;
  }

  // The entry called `name`; std::invalid_argument naming it, `where` it came from (a spec
  // path, an option; may be empty) and every known name otherwise.
  const Entry& at(std::string_view name, std::string_view where = {}) const {
    if (const Entry* e = find(name)) return *e;
    throw std::invalid_argument(unknown(name, where));
  }

  // The name of the first row whose entry equals `entry` (for tables of values, such as enums).
  const std::string& name_of(const Entry& entry) const {
    for (const Row& r : rows_)
      if (r.entry == entry) return r.name;
    throw std::logic_error("a " + what_ + " that has no name in its table");
  }

  // "unknown network model 'fluid' (--network); the known ones are 'packet' (...), 'flow' (...)".
  std::string unknown(std::string_view name, std::string_view where = {}) const {
    const std::string at = where.empty() ? "" : " (" + std::string(where) + ")";
    return "unknown " + what_ + " '" + std::string(name) + "'" + at + "; " + known();
  }

  // "the known ones are 'a' (about a), 'b'", or "the only known one is 'a'".
  std::string known() const {
    std::string s = rows_.size() == 1 ? "the only known one is " : "the known ones are ";
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      s += (i == 0 ? "'" : ", '") + rows_[i].name + "'";
      if (!rows_[i].about.empty()) s += " (" + rows_[i].about + ")";
    }
    return s;
  }

 private:
  std::string what_;
  std::vector<Row> rows_;
  std::vector<std::string> names_;
};

}  // namespace cubesim::emu
