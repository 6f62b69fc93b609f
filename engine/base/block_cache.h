// A process-wide cache of large tensor buffers. Buffers of at least kMinBytes are rounded up to
// a whole MiB and, when released, kept (up to kMaxCachedBytes in all) for the next request of
// the same rounded size instead of going back to the system. An inference loop allocates the
// same large intermediates every run; without the cache each one above glibc's mmap threshold
// (at most 32 MiB) is mapped and unmapped per run, so every run pays its page faults again (a
// batch-8 MobileNetV2 spent more time in them than in the convolutions).
// Thread-safe. release_cached_blocks() gives every cached buffer back (osprey::trim_memory()).
#pragma once

#include <cstddef>

namespace osprey::detail {

inline constexpr size_t kBlockAlign = 64;
inline constexpr size_t kMinBytes = size_t{1} << 20;
inline constexpr size_t kMaxCachedBytes = size_t{512} << 20;

// The size a request of `bytes` is served with (a whole MiB at and above kMinBytes).
size_t block_size_for(size_t bytes);
// A kBlockAlign-aligned buffer of block_size_for(bytes) bytes (contents unspecified); throws
// std::bad_alloc like operator new.
void* acquire_block(size_t bytes);
// Returns a buffer from acquire_block(bytes) (same `bytes`).
void release_block(void* p, size_t bytes);
size_t cached_block_bytes();
void release_cached_blocks();

}  // namespace osprey::detail
