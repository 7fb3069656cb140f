#pragma once
// Copies between memory and SRAM tiles: tl.load, tl.store, tl.ref and their asynchronous forms
// (DESIGN.md "Kernel API"). A copy is cut into transfers (ops/access.hpp), each a request on the
// network; a blocking copy returns once its last transfer has landed, an asynchronous one at
// once, and its wait blocks until then. A program ends only once its copies have landed.

#include <cstdint>
#include <memory>

#include "triton_emu/api/vocabulary.hpp"
#include "triton_emu/ops/copy.hpp"
#include "triton_emu/ops/program.hpp"

namespace cubesim::ops {

tl::Tile load(detail::Program& program, Ptr ptr, tl::Shape shape, DType dtype,
              const tl::LoadOptions& options);
tl::Ref ref(const detail::Program& program, Ptr ptr, tl::Shape shape, DType dtype,
            std::int64_t row_stride);
void store(detail::Program& program, Ptr ptr, const tl::Tile& tile,
           const tl::StoreOptions& options);

// The copy in flight (on the program's list until it lands), for its handle.
std::shared_ptr<detail::Copy> load_async(detail::Program& program, Ptr ptr, tl::Shape shape,
                                         DType dtype, const tl::LoadOptions& options);
std::shared_ptr<detail::Copy> store_async(detail::Program& program, Ptr ptr, const tl::Tile& tile,
                                          const tl::StoreOptions& options);
// Blocks until `copy` (a LoadHandle's, or a StoreHandle's when `store`; nullptr for a handle
// of no copy: a fault) has landed.
void wait_async(detail::Program& program, detail::Copy* copy, bool store);

// The program's end: waits until its asynchronous copies have landed.
void finish_copies(detail::Program& program);

}  // namespace cubesim::ops
