#include "tools/cubesim/common.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <system_error>

#include "components/dtype.hpp"
#include "emu/fatal_signal.hpp"
#include "kernels/last_words.hpp"
#include "tools/cubesim/option_values.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::cli {

namespace fs = std::filesystem;

nlohmann::json describe_system(const components::System& system) {
  nlohmann::json d = system.describe();
  const auto& ucie = system.config().ucie;
  if (components::has_grid(ucie.topology)) d["ucie_mesh"] = {ucie.mesh_x, ucie.mesh_y};
  const auto& sips = system.config().inter_sip;
  if (components::has_grid(sips.topology)) d["sip_grid"] = {sips.grid_x, sips.grid_y};
  return d;
}

std::string ops_unit(std::string_view dtype) {
  const auto t = dtype_from_name(dtype);
  return t && is_integer(*t) ? "OP" : "FLOP";
}

components::Spec load_spec(const std::string& file, const std::vector<std::string>& sets) {
  auto spec = components::Spec::load(file);
  if (!sets.empty()) spec = spec.with_assignments(sets);
  return spec;
}

namespace {
std::string& phase_text() {
  static std::string text = "reading the command line";
  return text;
}
}  // namespace

void set_phase(std::string phase) {
  phase_text() = std::move(phase);
}

const std::string& phase() {
  return phase_text();
}

std::uint64_t memory_limit_from_environment() {
  if (const char* limit = std::getenv("CUBESIM_MEMORY_LIMIT"); limit != nullptr && *limit != '\0')
    return parse_byte_size(limit, "CUBESIM_MEMORY_LIMIT");
  return 0;
}

std::unique_ptr<Simulation> make_simulation(const components::Spec& spec,
                                            const SimOptions& options) {
  SimOptions o = options;
  if (const std::uint64_t limit = memory_limit_from_environment(); limit != 0)
    o.host_memory_limit = limit;
  try {
    return std::make_unique<Simulation>(spec, o);
  } catch (const Error&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
}

kernels::Outcome run_kernel(const kernels::KernelInfo& kernel, Simulation& sim,
                            const kernels::Params& params) {
  const emu::FatalSignalScope last_words(
      kernels::kernel_last_words(kernel, kernels::kernel_registry().origin(kernel.name)));
  return kernel.run(sim, params);
}

}  // namespace cubesim::cli
