// A user's kernel, launched on the installed spec, checked numerically and for sharding. The
// spec is a path or a name (found as the package's installed spec: its path is printed).
#include <cstdio>
#include <cubesim/cubesim.hpp>

void scale(cubesim::tl::Context& tl, cubesim::Ptr x, cubesim::Ptr y, std::int64_t per) {
  const auto pid = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0);
  const auto t = tl.load(x + pid * per * 4, {per}, cubesim::DType::f32);
  tl.store(y + pid * per * 4, t * 3.0);
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::printf("spec %s\n", cubesim::components::resolve_spec(argv[1]).c_str());
  cubesim::Simulation sim(cubesim::Spec::load(argv[1]));
  const std::int64_t per = 64, n = per * sim.config().total_pes();
  std::vector<float> host(n);
  for (std::int64_t i = 0; i < n; ++i) host[i] = 0.5f + static_cast<float>(i % 7);
  const auto x = sim.alloc(n * 4), y = sim.alloc(n * 4);
  sim.write(x, host);
  const auto r = sim.launch(scale, x, y, per);
  const auto out = sim.read<float>(y, n);
  for (std::int64_t i = 0; i < n; ++i)
    if (out[i] != 3.0f * host[i]) return 1;
  if (!r.coverage(y, n * 4).exactly_once()) return 1;
  std::printf("consumer ok: %llu ps\n", static_cast<unsigned long long>(r.sim_time_ps));
  return 0;
}
