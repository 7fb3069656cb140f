#include "emu/stack_pool.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "emu/fatal_signal.hpp"
#include "emu/log.hpp"
#include "emu/stack_overflow.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace cubesim::emu {
namespace {

constexpr std::uint32_t kSlotsPerSlab = 64;
constexpr std::size_t kMinStack = 16 * 1024;
constexpr std::size_t kColourStep = 256;  // Boost.Context aligns its record down to 256 bytes
constexpr std::size_t kColours = 15;      // colours 0..14: at most 3.5 KiB below the page top
constexpr std::uint64_t kCanary = 0xC0BE5111DEADF00DULL;

std::atomic<bool> g_warned_unguarded{false};

// Sanitizer builds: stack memory keeps the shadow poison of frames that never returned (the
// context switch's entry frame, every frame of a fiber abandoned after a fault), and of an
// earlier pool's frames where the kernel maps a new slab over its addresses. Whoever gets the
// memory next must find it clean, as a fresh stack is.
void forget_frames([[maybe_unused]] std::byte* p, [[maybe_unused]] std::size_t bytes) {
#if defined(__SANITIZE_ADDRESS__)
  __asan_unpoison_memory_region(p, bytes);
#endif
}

}  // namespace

struct StackPool::Slab {
  std::byte* base = nullptr;
  std::size_t bytes = 0;
  bool guarded = false;
  std::unique_ptr<std::atomic<const char*>[]> owners;
  detail::GuardedRegion* region = nullptr;
};

StackPool::StackPool(std::size_t stack_size) {
  page_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (stack_size < kMinStack) stack_size = kMinStack;
  usable_ = (stack_size + page_ - 1) / page_ * page_;
  stride_ = usable_ + page_;
  install_fatal_signal_handler();
}

StackPool::~StackPool() {
  for (auto& slab : slabs_) {
    detail::unregister_region(slab->region);
    forget_frames(slab->base, slab->bytes);
    munmap(slab->base, slab->bytes);
  }
}

void StackPool::grow() {
  auto slab = std::make_unique<Slab>();
  slab->bytes = stride_ * kSlotsPerSlab;
#if defined(MAP_NORESERVE)
  constexpr int kNoReserve = MAP_NORESERVE;  // no swap reserved for stacks mostly untouched
#else
  constexpr int kNoReserve = 0;
#endif
  void* mem = mmap(nullptr, slab->bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | kNoReserve, -1, 0);
  if (mem == MAP_FAILED) {
    throw std::bad_alloc();
  }
  slab->base = static_cast<std::byte*>(mem);
  slab->owners = std::make_unique<std::atomic<const char*>[]>(kSlotsPerSlab);
  slab->guarded = true;
  for (std::uint32_t i = 0; i < kSlotsPerSlab; ++i) {
    if (mprotect(slab->base + i * stride_, page_, PROT_NONE) != 0) {
      // Out of mappings (vm.max_map_count): undo this slab's guards, fall back to canaries.
      for (std::uint32_t j = 0; j < i; ++j) {
        mprotect(slab->base + j * stride_, page_, PROT_READ | PROT_WRITE);
      }
      slab->guarded = false;
      if (!g_warned_unguarded.exchange(true)) {
        log().warn(
            "fiber stacks past {} run without guard pages ({}); overflow is detected by a "
            "canary at the next switch instead",
            in_use_, std::strerror(errno));
      }
      break;
    }
  }
  // Unguarded slabs too: the overflow handler names the fiber running on them.
  slab->region =
      detail::register_region(reinterpret_cast<std::uintptr_t>(slab->base), stride_, page_,
                              slab->guarded, usable_, kSlotsPerSlab, slab->owners.get());
  const auto first = static_cast<std::uint32_t>(slabs_.size() * kSlotsPerSlab);
  slabs_.push_back(std::move(slab));
  // Push in reverse so the lowest slot is handed out first.
  for (std::uint32_t i = kSlotsPerSlab; i-- > 0;) free_.push_back(first + i);
}

std::byte* StackPool::slot_base(std::uint32_t slot) const {
  return slabs_[slot / kSlotsPerSlab]->base + (slot % kSlotsPerSlab) * stride_;
}

StackPool::Stack StackPool::acquire() {
  if (free_.empty()) grow();
  const std::uint32_t slot = free_.back();
  free_.pop_back();
  ++in_use_;
  std::byte* base = slot_base(slot);
  std::byte* page_top = base + stride_;
  forget_frames(base + page_, usable_);
  // The slot index lives in the top 64 bytes; the coloured stack top lies below it.
  std::memcpy(page_top - sizeof slot, &slot, sizeof slot);
  const std::size_t colour = (slot * 7 % kColours) * kColourStep + kColourStep;
  std::byte* top = page_top - colour;
  std::byte* bottom = base + page_;
  std::memcpy(bottom, &kCanary, sizeof kCanary);
  slabs_[slot / kSlotsPerSlab]->owners[slot % kSlotsPerSlab].store(nullptr);
  // Keep the canary word out of the usable range handed to Boost.Context.
  return Stack{top, static_cast<std::size_t>(top - bottom) - 64, slot};
}

std::uint32_t StackPool::slot_of(void* top) const {
  auto* p = static_cast<std::byte*>(top);
  // Round up to the page end: the slot header sits in the last bytes of that page.
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  auto* page_top = reinterpret_cast<std::byte*>((addr / page_ + 1) * page_);
  std::uint32_t slot;
  std::memcpy(&slot, page_top - sizeof slot, sizeof slot);
  return slot;
}

void StackPool::release(void* top) {
  const std::uint32_t slot = slot_of(top);
  slabs_[slot / kSlotsPerSlab]->owners[slot % kSlotsPerSlab].store(nullptr);
  free_.push_back(slot);
  --in_use_;
}

void StackPool::set_owner(std::uint32_t slot, const char* label) {
  slabs_[slot / kSlotsPerSlab]->owners[slot % kSlotsPerSlab].store(label);
}

bool StackPool::guarded(std::uint32_t slot) const {
  return slabs_[slot / kSlotsPerSlab]->guarded;
}

bool StackPool::canary_intact(std::uint32_t slot) const {
  std::uint64_t word;
  std::memcpy(&word, slot_base(slot) + page_, sizeof word);
  return word == kCanary;
}

}  // namespace cubesim::emu
