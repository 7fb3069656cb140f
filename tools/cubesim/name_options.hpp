#pragma once
// Options that pick an implementation by name (--network, --backend): their checks and help
// texts read the names from the part's table (emu/name_table.hpp), so the CLI lists exactly
// what the library knows, and an unknown name gets the table's error listing every known one.

#include <CLI/CLI.hpp>
#include <string>

#include "emu/name_table.hpp"
#include "triton_emu/backends/gemm_backend.hpp"

namespace cubesim::cli {

// "packet (every packet and hop, the default) or flow (...)": the names, with what each is.
template <class Entry>
std::string choices_text(const emu::NameTable<Entry>& table) {
  std::string s;
  const auto& rows = table.rows();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    s += i == 0 ? "" : (i + 1 == rows.size() ? " or " : ", ");
    s += rows[i].name + (rows[i].about.empty() ? "" : " (" + rows[i].about + ")");
  }
  return s;
}

// Accepts a name of `table`; refuses anything else with the table's error, naming `option`.
template <class Entry>
CLI::Validator one_of(const emu::NameTable<Entry>& table, const std::string& option) {
  std::string names;
  for (const std::string& n : table.names()) names += (names.empty() ? "" : ",") + n;
  return CLI::Validator(
      [&table, option](std::string& value) {
        return table.find(value) != nullptr ? std::string() : table.unknown(value, option);
      },
      "{" + names + "}");
}

// --backend: a backend built into this binary (backends::gemm_backends()); a known backend this
// binary lacks is told apart from a typo.
inline CLI::Validator gemm_backend_check() {
  std::string names;
  for (const std::string& n : backends::gemm_backends().names())
    names += (names.empty() ? "" : ",") + n;
  return CLI::Validator([](std::string& value) { return backends::gemm_backend_refusal(value); },
                        "{" + names + "}");
}

}  // namespace cubesim::cli
