#include "triton_emu/launch/run_result.hpp"

#include "triton_emu/errors.hpp"

namespace cubesim {

Coverage RunResult::coverage(Ptr region, std::uint64_t bytes) const {
  if (!accesses) throw UsageError("coverage: no access log (SimOptions::record_accesses is off)");
  return cubesim::coverage(*accesses, region, bytes);
}
std::vector<Race> RunResult::races() const {
  if (!accesses) throw UsageError("races: no access log (SimOptions::record_accesses is off)");
  return cubesim::races(*accesses);
}
MessageHazards RunResult::message_hazards() const {
  if (!accesses)
    throw UsageError("message_hazards: no access log (SimOptions::record_accesses is off)");
  return cubesim::message_hazards(accesses->sync(), programs);
}
std::string RunResult::describe(const Coverage& c, Ptr region) const {
  return cubesim::describe(c, region, programs);
}
std::string RunResult::describe(const std::vector<Race>& r) const {
  return cubesim::describe(r, programs);
}
std::string RunResult::describe(const MessageHazards& h) const {
  return cubesim::describe(h, programs);
}

}  // namespace cubesim
