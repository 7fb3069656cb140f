// Accesses are checked against the buffers alloc() handed out, not only the HBM window: a kernel
// that runs off the end of one buffer into the next, or reads memory nobody allocated, faults.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>
#include <functional>

#include "spec_path.hpp"
#include "triton_emu/memory/allocations.hpp"

namespace cubesim {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string fault_of(Simulation& sim, const std::function<void(tl::Context&)>& body) {
  try {
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, body);
  } catch (const KernelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no fault";
  return "";
}

std::string hex(std::uint64_t a) {
  return components::hex_address(a);
}

TEST(Allocations, AccessesPastTheEndOfABufferIntoItsNeighbourFault) {
  for (const bool timing_only : {false, true}) {
    Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = timing_only});
    const Ptr first = sim.alloc(4096), second = sim.alloc(4096);  // adjacent, interleaved
    ASSERT_EQ(first.addr, second.addr + 4096) << "interleaved buffers grow down, back to back";
    const std::string load = fault_of(sim, [&](tl::Context& tl) {
      (void)tl.load(second, {2048}, DType::f32);  // 8 KiB from a 4 KiB buffer
    });
    EXPECT_THAT(load, AllOf(HasSubstr("load of 8192 bytes"), HasSubstr("sip0.cube0.pe0"),
                            HasSubstr("the buffer [" + hex(second.addr) + ", " +
                                      hex(second.addr + 4096) + ") of 4096 bytes"),
                            HasSubstr("runs 4096 bytes past its end")));
    const std::string store = fault_of(
        sim, [&](tl::Context& tl) { tl.store(second + 4092, tl.full({2}, 1.0, DType::f32)); });
    EXPECT_THAT(store, AllOf(HasSubstr("store of 8 bytes"), HasSubstr("runs 4 bytes past")));
    const std::string gemm = fault_of(sim, [&](tl::Context& tl) {
      const auto a = tl.ref(second, {32, 32}, DType::f16);  // 2 KiB: inside
      auto h = tl.composite(Op::gemm, a, a, second + 2048, {.out_dtype = DType::f32});  // 4 KiB
      tl.wait(h);
    });
    EXPECT_THAT(gemm, AllOf(HasSubstr("composite gemm output of 4096 bytes"),
                            HasSubstr("runs 2048 bytes past its end")));
    // Inside its buffer all is well.
    sim.launch_on(Grid{.pes = 1, .cubes = 1},
                  [&](tl::Context& tl) { tl.store(first, tl.load(second, {1024}, DType::f32)); });
  }
}

TEST(Allocations, MemoryNobodyAllocatedCannotBeReadOrWritten) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const Ptr direct = sim.alloc(4096, Placement::on_cube(0, 1));
  const Ptr below = Ptr{direct.addr + 65536};  // mapped HBM of cube 1, never allocated
  EXPECT_THAT(fault_of(sim, [&](tl::Context& tl) { (void)tl.load(below, {4}, DType::f32); }),
              AllOf(HasSubstr("lies outside every allocated buffer"),
                    HasSubstr("the nearest is the buffer [" + hex(direct.addr)),
                    HasSubstr("ends " + std::to_string(65536 - 4096) + " bytes before it")));
  std::vector<float> host(4, 1.0f);
  try {
    sim.write(below, host);
    FAIL() << "host write outside every buffer";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("write of 16 bytes"));
  }
  EXPECT_THROW((void)sim.read<float>(direct + 4092, 2), UsageError);
}

TEST(Allocations, AZeroByteBufferHasAnAddressOfItsOwn) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  for (const Placement where : {Placement::interleaved_across_cubes(), Placement::on_cube(0, 0)}) {
    const Ptr live = sim.alloc(4096, where);
    const Ptr empty = sim.alloc(0, where);
    const Ptr next = sim.alloc(64, where);
    EXPECT_NE(empty.addr, live.addr);
    EXPECT_NE(empty.addr, next.addr);
    EXPECT_TRUE(empty.addr >= live.addr + 4096 || empty.addr < live.addr);
    // Nothing can be read through it, and the live buffer's bytes are not reachable from it.
    EXPECT_THAT(fault_of(sim, [&](tl::Context& tl) { (void)tl.load(empty, {1}, DType::f32); }),
                HasSubstr("of 0 bytes"));
  }
}

TEST(Allocations, DescribeMissNamesTheNearestBuffer) {
  detail::Allocations a;
  a.add(0x1000, 0x100);
  a.add(0x3000, 0x100);
  EXPECT_TRUE(a.contains(0x1000, 0x100));
  EXPECT_TRUE(a.contains(0x30f0, 0x10));
  EXPECT_FALSE(a.contains(0x10f0, 0x20));
  EXPECT_FALSE(a.contains(0x2000, 4));
  EXPECT_THAT(a.describe_miss(0x1200, 4, "load"), HasSubstr("ends 256 bytes before it"));
  EXPECT_THAT(a.describe_miss(0x2f00, 4, "load"), HasSubstr("starts 252 bytes after it"));
  EXPECT_THAT(a.describe_miss(0x2ff0, 0x20, "load"), HasSubstr("starts before the buffer [0x3000"));
  EXPECT_THAT(a.describe_miss(0x800, 4, "load"), HasSubstr("starts 2044 bytes after it"));
}

}  // namespace
}  // namespace cubesim
