#include "emu/fiber.hpp"

#include <new>
#include <utility>

#include "emu/stack_pool.hpp"

namespace cubesim::emu {
namespace {

namespace bctx = boost::context;

struct PoolAllocator {
  StackPool* pool;
  std::uint32_t* slot_out;
  const void** bottom_out;

  bctx::stack_context allocate() {
    const StackPool::Stack s = pool->acquire();
    *slot_out = s.slot;
    *bottom_out = static_cast<const char*>(s.top) - s.size;
    bctx::stack_context sc;
    sc.sp = s.top;
    sc.size = s.size;
    return sc;
  }
  void deallocate(bctx::stack_context& sc) noexcept { pool->release(sc.sp); }
};

}  // namespace

std::uint32_t Fiber::start(StackPool& pool, Body body, void* arg) {
  std::uint32_t slot = 0;
  context_ = bctx::fiber(std::allocator_arg, PoolAllocator{&pool, &slot, &stack_bottom_},
                         [body, arg](bctx::fiber&& caller) -> bctx::fiber {
                           if (switched_from_) switched_from_->context_ = std::move(caller);
                           Fiber& next = body(arg);
                           switched_from_ = nullptr;
                           running_stack_bottom_ = next.stack_bottom_;
                           return std::move(next.context_);
                         });
  return slot;
}

void Fiber::forget() noexcept {
  // Reusing the storage ends the old object's lifetime without its destructor, which would
  // resume the context to unwind it.
  ::new (static_cast<void*>(&context_)) boost::context::fiber();
}

}  // namespace cubesim::emu
