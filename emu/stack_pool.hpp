#pragma once
// Fiber stacks: carved from large mmap'ed slabs, recycled LIFO (the most recently used stack is
// the one most likely still in cache), each with a guard page below it.
//
// Placement matters for speed: equal-sized stacks at a power-of-two stride put every fiber's hot
// top-of-stack lines in the same cache sets. Slots are one guard page longer than the stack,
// which walks the tops through the L2 sets, and each top is lowered by a slot-dependent colour
// (a multiple of 256 bytes within the top page) to spread them over the L1 sets too.
//
// Overflow: a write into a guard page raises SIGSEGV; the handler (emu/fatal_signal.cpp) names
// the process whose fiber was running and the stack size, and Scheduler::run() turns it into an
// error. When the kernel refuses more guard pages (vm.max_map_count; 2 mappings per guard),
// further slabs go unguarded: an overflow there that faults is still named by the running
// fiber, and a canary word at the bottom of each stack is checked at every context switch.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace cubesim::emu {

inline constexpr std::size_t kDefaultStackSize = 64 * 1024;

class StackPool {
 public:
  struct Stack {
    void* top;         // highest usable address, 256-byte aligned, coloured
    std::size_t size;  // usable bytes below `top`
    std::uint32_t slot;
  };

  // `stack_size`: usable bytes per stack, rounded up to whole pages; at least 16 KiB.
  explicit StackPool(std::size_t stack_size = kDefaultStackSize);
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  Stack acquire();
  void release(void* top);  // any address within the top page of an acquired stack

  // The label the overflow report prints for this stack (a process name; must outlive use).
  void set_owner(std::uint32_t slot, const char* label);
  bool guarded(std::uint32_t slot) const;
  bool canary_intact(std::uint32_t slot) const;

  std::size_t stack_size() const { return usable_; }
  std::size_t in_use() const { return in_use_; }

 private:
  struct Slab;
  void grow();
  std::uint32_t slot_of(void* top) const;
  std::byte* slot_base(std::uint32_t slot) const;  // the guard page's address

  std::size_t page_;
  std::size_t usable_;
  std::size_t stride_;
  std::vector<std::unique_ptr<Slab>> slabs_;
  std::vector<std::uint32_t> free_;
  std::size_t in_use_ = 0;
};

}  // namespace cubesim::emu
