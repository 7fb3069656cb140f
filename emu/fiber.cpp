#include "emu/fiber.hpp"

#include <boost/context/fiber.hpp>
#include <new>
#include <utility>

#include "emu/stack_pool.hpp"

namespace cubesim::emu {
namespace {

namespace bctx = boost::context;
static_assert(sizeof(bctx::fiber) == sizeof(void*));

bctx::fiber& boost_fiber(unsigned char* storage) {
  return *std::launder(reinterpret_cast<bctx::fiber*>(storage));
}

// The context that most recently switched away; the context being resumed stores the
// continuation Boost hands it there. Null when the switching context has finished.
thread_local Fiber* t_switched_from = nullptr;

struct PoolAllocator {
  StackPool* pool;
  std::uint32_t* slot_out;

  bctx::stack_context allocate() {
    const StackPool::Stack s = pool->acquire();
    *slot_out = s.slot;
    bctx::stack_context sc;
    sc.sp = s.top;
    sc.size = s.size;
    return sc;
  }
  void deallocate(bctx::stack_context& sc) noexcept { pool->release(sc.sp); }
};

}  // namespace

#define CUBESIM_FIBER(f) boost_fiber((f).storage_)

Fiber::Fiber() noexcept { new (storage_) bctx::fiber(); }

Fiber::~Fiber() { CUBESIM_FIBER(*this).~fiber(); }

bool Fiber::holds_context() const noexcept {
  return static_cast<bool>(*std::launder(reinterpret_cast<const bctx::fiber*>(storage_)));
}

std::uint32_t Fiber::start(StackPool& pool, Body body, void* arg) {
  std::uint32_t slot = 0;
  CUBESIM_FIBER(*this) = bctx::fiber(
      std::allocator_arg, PoolAllocator{&pool, &slot},
      [body, arg](bctx::fiber&& caller) -> bctx::fiber {
        if (t_switched_from) CUBESIM_FIBER(*t_switched_from) = std::move(caller);
        Fiber& next = body(arg);
        t_switched_from = nullptr;
        return std::move(CUBESIM_FIBER(next));
      });
  return slot;
}

void Fiber::switch_to(Fiber& self, Fiber& to) {
  t_switched_from = &self;
  bctx::fiber from = std::move(CUBESIM_FIBER(to)).resume();
  if (t_switched_from) CUBESIM_FIBER(*t_switched_from) = std::move(from);
}

#undef CUBESIM_FIBER

}  // namespace cubesim::emu
