// The unit-test binary replaces the global operator new / delete (counting_new.cc) to count
// what goes through them: the bytes held now and at the peak (every thread), and the
// allocations made by the calling thread.
#pragma once

#include <cstdint>

namespace osprey::testing {

int64_t live_heap_bytes();
int64_t peak_heap_bytes();
void reset_peak_heap_bytes(int64_t to);
// operator new calls (every form) made by the calling thread so far.
int64_t thread_heap_allocations();

}  // namespace osprey::testing
