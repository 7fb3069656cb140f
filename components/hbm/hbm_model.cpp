#include "components/hbm/hbm_model.hpp"

#include "components/hbm/simple_hbm.hpp"

namespace cubesim::components {
namespace {

template <class Model>
std::unique_ptr<HbmModel> make(const HbmConfig& config) {
  return std::make_unique<Model>(config);
}

}  // namespace

const emu::NameTable<MakeHbmModel>& hbm_models() {
  static const emu::NameTable<MakeHbmModel> table(
      "HBM model",
      {{"simple", &make<SimpleHbm>, "every channel an even share after a fixed latency"}});
  return table;
}

std::unique_ptr<HbmModel> make_hbm_model(const HbmConfig& config) {
  return hbm_models().at(config.model, "system.cube.hbm.model")(config);
}

}  // namespace cubesim::components
