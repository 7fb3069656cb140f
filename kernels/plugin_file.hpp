#pragma once
// What can be known of a plugin file before dlopen runs any of it: dlopen maps a library and
// runs its initialisers, so a file cut short dies with a bus error there, and a file of another
// kind or machine gets a terse reason at best. check_plugin_file reads the ELF header instead.

#include <filesystem>
#include <string>

namespace cubesim::kernels {

// Throws UsageError, starting with `shown` (e.g. "plugin build/libmine.so"), unless `file` is a
// readable ELF shared library of this machine's class, byte order and architecture whose
// program header table, section header table and loadable segments lie within the file (a
// truncated copy or an interrupted build fails here). Each message says what is wrong and how
// to get a good file.
void check_plugin_file(const std::filesystem::path& file, const std::string& shown);

}  // namespace cubesim::kernels
