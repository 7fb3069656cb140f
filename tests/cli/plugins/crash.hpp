#pragma once
// What the crashing test plugins die of. The address and the divisor are volatile, so the
// compiler cannot prove the fault and drop it or warn about it.
#include <cstdint>

namespace crash {

// The first page is never mapped: a write there is a SIGSEGV.
inline volatile std::uintptr_t bad_address = 16;
// Both operands volatile: GCC computes 1 / x for int without a division.
inline volatile int zero = 0, seven = 7;

inline void write_through_bad_pointer() {
  *reinterpret_cast<volatile int*>(bad_address) = 1;
}

}  // namespace crash
