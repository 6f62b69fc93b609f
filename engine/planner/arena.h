// The memory a MemoryPlan's offsets point into: one 64-byte-aligned block that grows only when a
// bigger plan arrives (contents are not preserved across growth) and can be trimmed back.
// Not thread-safe: one arena per concurrent run.
#pragma once

#include <cstddef>
#include <limits>

#include "osprey/status.h"

namespace osprey::planner {

class Arena {
 public:
  static constexpr size_t kAlignment = 64;

  // `limit_bytes` caps the capacity; reserve() beyond it fails with kResourceExhausted.
  explicit Arena(size_t limit_bytes = std::numeric_limits<size_t>::max()) : limit_(limit_bytes) {}
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  Arena(Arena&& other) noexcept;
  Arena& operator=(Arena&& other) noexcept;

  // Makes capacity() >= bytes. Reallocates (discarding the contents) only when bytes exceeds the
  // current capacity; the new capacity is `bytes` rounded up to kAlignment.
  Status reserve(size_t bytes);
  // Shrinks the capacity to `keep_bytes` (rounded up to kAlignment) if it is larger, discarding
  // the contents; trim() with no argument frees everything.
  void trim(size_t keep_bytes = 0);

  std::byte* data() { return data_; }  // nullptr while capacity() == 0
  const std::byte* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  size_t limit() const { return limit_; }
  // How many times reserve() had to allocate: a steady state should stop growing.
  size_t grow_count() const { return grow_count_; }

 private:
  void release();

  std::byte* data_ = nullptr;
  size_t capacity_ = 0;
  size_t limit_;
  size_t grow_count_ = 0;
};

}  // namespace osprey::planner
