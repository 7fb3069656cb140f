#include "kernels/plugin.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <exception>
#include <string>
#include <system_error>

#include "emu/fatal_signal.hpp"
#include "kernels/last_words.hpp"
#include "kernels/plugin_file.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::kernels {

namespace {

namespace fs = std::filesystem;

constexpr const char* kHowToBuild =
    "build it with cubesim_add_plugin() from this cubesim's CMake package "
    "(docs/writing-kernels.md, "
    "\"Your kernels in the CLI\")";

std::string describe(const PluginAbi& abi) {
  return "KernelInfo " + std::to_string(abi.kernel_info_bytes) + " bytes, Outcome " +
         std::to_string(abi.outcome_bytes) + ", Registry " + std::to_string(abi.registry_bytes) +
         ", C++11 string ABI " + std::to_string(abi.cxx11_abi);
}

bool same(const PluginAbi& a, const PluginAbi& b) {
  return a.kernel_info_bytes == b.kernel_info_bytes && a.outcome_bytes == b.outcome_bytes &&
         a.registry_bytes == b.registry_bytes && a.cxx11_abi == b.cxx11_abi;
}

// Restores the registry's "registered by" on every way out.
class AddingFrom {
 public:
  AddingFrom(std::string& slot, std::string origin) : slot_(slot), saved_(slot) {
    slot_ = std::move(origin);
  }
  ~AddingFrom() { slot_ = saved_; }
  AddingFrom(const AddingFrom&) = delete;
  AddingFrom& operator=(const AddingFrom&) = delete;

 private:
  std::string& slot_;
  std::string saved_;
};

}  // namespace

namespace {

using AbiFunction = const PluginAbi* (*)();
using RegisterFunction = void (*)(Registry&);

// The absolute path of the plugin `file` names; UsageError when it names no regular file.
fs::path plugin_path(const fs::path& file, const std::string& shown) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(file, ec);
  if (file.empty())
    throw UsageError("--load needs the path of a plugin library (libNAME.so); " +
                     std::string(kHowToBuild));
  if (!fs::is_regular_file(absolute, ec))
    throw UsageError(shown + ": " +
                     (fs::exists(absolute, ec) ? "not a regular file" : "no such file") +
                     " (looked for " + absolute.string() +
                     "); give the path of the plugin's shared library, e.g. build/libmine.so");
  const fs::path canonical = fs::canonical(absolute, ec);
  return ec ? absolute : canonical;
}

// From dlopen on the plugin's own code runs (initialisers, entry points): a fatal signal in it
// ends cubesim with a message naming the plugin and the stage.
emu::LastWords fatal_signal_in(const fs::path& key, const std::string& stage) {
  return plugin_last_words("plugin " + key.string(), stage);
}

// RTLD_NOW: a symbol the plugin needs and this cubesim lacks is reported here, not mid-run.
// The library is never closed: the registry keeps pointers into its code.
void* open_plugin(const fs::path& key, const std::string& shown) {
  void* handle = nullptr;
  {
    const emu::FatalSignalScope loading(fatal_signal_in(
        key, "while dlopen ran its initialisers (constructors of its static objects)"));
    handle = ::dlopen(key.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (handle == nullptr) {
    const char* why = ::dlerror();
    throw UsageError(shown + " cannot be loaded: " + (why ? why : "unknown dlopen error") +
                     "; it must be a shared library built against this cubesim: " + kHowToBuild);
  }
  return handle;
}

// UsageError unless the plugin's cubesim_plugin_abi() describes this cubesim's version and
// layout of the types the two share.
void check_abi(AbiFunction abi_function, const fs::path& key, const std::string& shown) {
  static constexpr PluginAbi here = CUBESIM_PLUGIN_ABI_HERE;
  const std::string rebuild = "; rebuild the plugin against this cubesim's package (find_package(" +
                              std::string("cubesim ") + here.version + " EXACT CONFIG))";
  const std::string not_made_by_macro =
      ": CUBESIM_PLUGIN(your_register_function) (kernels/plugin.hpp) writes it; use it and " +
      std::string(kHowToBuild);
  const emu::FatalSignalScope asking(
      fatal_signal_in(key, "in cubesim_plugin_abi() or reading what it answered"));
  const PluginAbi* theirs = abi_function();
  if (theirs == nullptr)
    throw UsageError(shown + "'s cubesim_plugin_abi() answered a null pointer" + not_made_by_macro);
  if (theirs->version == nullptr)
    throw UsageError(shown + "'s cubesim_plugin_abi() answered no version (a null string)" +
                     not_made_by_macro);
  // Only `version` is read from a plugin of another version: the rest may be laid out
  // otherwise.
  if (std::string(theirs->version) != here.version)
    throw UsageError(shown + " was built against cubesim " + theirs->version +
                     ", but this is cubesim " + here.version + rebuild);
  if (!same(*theirs, here))
    throw UsageError(shown + " was built against different cubesim headers: " + describe(*theirs) +
                     ", but this is " + describe(here) + rebuild);
}

}  // namespace

void load_plugin(const fs::path& file, Registry& registry) {
  const std::string shown = "plugin " + file.string();
  const fs::path key = plugin_path(file, shown);
  const auto& loaded = registry.plugins();
  if (std::find(loaded.begin(), loaded.end(), key) != loaded.end()) return;

  check_plugin_file(key, shown);
  void* handle = open_plugin(key, shown);
  auto* abi_function = reinterpret_cast<AbiFunction>(::dlsym(handle, "cubesim_plugin_abi"));
  auto* register_function =
      reinterpret_cast<RegisterFunction>(::dlsym(handle, "cubesim_register_kernels"));
  if (abi_function == nullptr || register_function == nullptr)
    throw UsageError(shown +
                     " is not a cubesim plugin: it does not export cubesim_plugin_abi and "
                     "cubesim_register_kernels; add CUBESIM_PLUGIN(your_register_function) "
                     "(kernels/plugin.hpp) to one of its sources and " +
                     kHowToBuild);
  check_abi(abi_function, key, shown);

  const std::size_t before = registry.kernels().size();
  {
    AddingFrom scope(registry.adding_from_, "plugin " + key.string());
    const emu::FatalSignalScope registering(
        fatal_signal_in(key, "in its registration function (cubesim_register_kernels)"));
    try {
      register_function(registry);
    } catch (const UsageError&) {
      throw;  // Registry::add's message names the plugin already
    } catch (const std::exception& e) {
      throw UsageError(shown + " failed while registering its kernels: " + e.what());
    }
  }
  registry.plugins_.push_back(key);
  if (registry.kernels().size() == before)
    throw UsageError(shown +
                     " registered no kernel; its registration function must call "
                     "registry.add(KernelInfo{...}) for each of its kernels");
}

}  // namespace cubesim::kernels
