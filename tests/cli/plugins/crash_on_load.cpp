// A plugin whose static initialiser aborts: it dies inside dlopen, before cubesim sees an entry
// point.
#include <cstdlib>
#include <kernels/plugin.hpp>

namespace {
void register_nothing(cubesim::kernels::Registry&) {}

struct AbortsWhenLoaded {
  AbortsWhenLoaded() { std::abort(); }
} aborts_when_loaded;
}  // namespace

CUBESIM_PLUGIN(register_nothing)
