#pragma once
// Plugins: a shared library of users' kernels that `cubesim --load FILE` adds to the registry.
// A plugin is compiled against cubesim's headers and not linked with its (static) libraries:
// its calls resolve to the cubesim executable that loads it, so there is one registry and one
// simulator. It exports two C functions, both written by CUBESIM_PLUGIN:
//
//   void register_my_kernels(cubesim::kernels::Registry& registry) {
//     registry.add(my_kernel_info());
//   }
//   CUBESIM_PLUGIN(register_my_kernels)
//
// Build it with cubesim_add_plugin() from the CMake package (docs/writing-kernels.md).

#include <cstddef>
#include <cubesim/version.hpp>
#include <filesystem>

#include "kernels/registry.hpp"

namespace cubesim::kernels {

// What a plugin was compiled against; the loader refuses a plugin whose answer differs from its
// own. `version` stays the first member so that any cubesim can read it.
struct PluginAbi {
  const char* version;  // CUBESIM_VERSION_STRING
  std::size_t kernel_info_bytes, outcome_bytes, registry_bytes;
  long cxx11_abi;  // libstdc++'s std::string ABI
};

#if defined(_GLIBCXX_USE_CXX11_ABI)
#define CUBESIM_PLUGIN_CXX11_ABI _GLIBCXX_USE_CXX11_ABI
#else
#define CUBESIM_PLUGIN_CXX11_ABI -1
#endif

// The description of this compilation; constexpr, so each plugin holds its own copy (an inline
// object would be merged with the loading executable's and always match).
#define CUBESIM_PLUGIN_ABI_HERE                                                    \
  ::cubesim::kernels::PluginAbi {                                                  \
    CUBESIM_VERSION_STRING, sizeof(::cubesim::kernels::KernelInfo),                \
        sizeof(::cubesim::kernels::Outcome), sizeof(::cubesim::kernels::Registry), \
        CUBESIM_PLUGIN_CXX11_ABI                                                   \
  }

// Loads a plugin into `registry` and calls its registration function. Loading the same file
// again does nothing. UsageError naming the file and the fix for a missing or unreadable file,
// one that is not an ELF shared library of this machine or is truncated (checked before dlopen:
// kernels/plugin_file.hpp), one dlopen refuses (with dlerror's reason), a library without the
// entry points or whose ABI answer is null, one built against another cubesim, a registration
// the registry refuses, or a plugin that registers no kernel. A fatal signal in the plugin's
// code meanwhile (its initialisers, its entry points) ends the program with exit 2 and a
// message naming the plugin and the stage (kernels/last_words.hpp).
void load_plugin(const std::filesystem::path& file, Registry& registry);

}  // namespace cubesim::kernels

// Defines the plugin's entry points: `register_function(cubesim::kernels::Registry&)` adds the
// plugin's kernels. Use it once, in one source of the plugin.
#define CUBESIM_PLUGIN(register_function)                                                \
  extern "C" __attribute__((visibility("default"))) const ::cubesim::kernels::PluginAbi* \
  cubesim_plugin_abi() {                                                                 \
    static constexpr ::cubesim::kernels::PluginAbi abi = CUBESIM_PLUGIN_ABI_HERE;        \
    return &abi;                                                                         \
  }                                                                                      \
  extern "C" __attribute__((visibility("default"))) void cubesim_register_kernels(       \
      ::cubesim::kernels::Registry& registry) {                                          \
    register_function(registry);                                                         \
  }
