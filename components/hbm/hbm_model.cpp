#include "components/hbm/hbm_model.hpp"

#include <algorithm>
#include <stdexcept>

#include "components/hbm/simple_hbm.hpp"

namespace cubesim::components {
namespace {

struct Registered {
  const char* name;
  std::unique_ptr<HbmModel> (*make)(const HbmConfig&);
};

template <class Model>
std::unique_ptr<HbmModel> make(const HbmConfig& config) {
  return std::make_unique<Model>(config);
}

constexpr Registered kModels[] = {
    {"simple", &make<SimpleHbm>},
};

}  // namespace

const std::vector<std::string>& hbm_model_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Registered& r : kModels) v.emplace_back(r.name);
    return v;
  }();
  return names;
}

std::unique_ptr<HbmModel> make_hbm_model(const HbmConfig& config) {
  const auto* it = std::find_if(std::begin(kModels), std::end(kModels),
                                [&](const Registered& r) { return config.model == r.name; });
  if (it != std::end(kModels)) return it->make(config);
  std::string known;
  for (const std::string& n : hbm_model_names()) known += (known.empty() ? "'" : ", '") + n + "'";
  throw std::invalid_argument("unknown HBM model '" + config.model +
                              "' (system.cube.hbm.model); known models: " + known);
}

}  // namespace cubesim::components
