// Sanitizer builds only (CUBESIM_SANITIZE): they switch fibers through ucontext, whose per-thread
// "current activation record" Debian's libboost_context (built for fcontext) does not define.
// This supplies it: each thread starts in a main-context record it owns.
#if defined(BOOST_USE_UCONTEXT)

#include <boost/context/fiber.hpp>
#include <memory>

namespace boost::context::detail {
namespace {

struct ThreadRecords {
  std::unique_ptr<fiber_activation_record> main{new fiber_activation_record()};
  fiber_activation_record* current = main.get();
};

}  // namespace

fiber_activation_record*& fiber_activation_record::current() noexcept {
  thread_local ThreadRecords records;
  return records.current;
}

}  // namespace boost::context::detail

#endif
