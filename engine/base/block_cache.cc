#include "base/block_cache.h"

#include <map>
#include <mutex>
#include <new>

namespace osprey::detail {
namespace {

struct Cache {
  std::mutex mu;
  std::multimap<size_t, void*> free;  // size -> buffers
  size_t bytes = 0;
};

Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: buffers may be released during exit
  return *c;
}

void give_back(void* p) { ::operator delete(p, std::align_val_t(kBlockAlign)); }

}  // namespace

size_t block_size_for(size_t bytes) {
  if (bytes < kMinBytes) return bytes;
  const size_t mib = size_t{1} << 20;
  return (bytes + mib - 1) / mib * mib;
}

void* acquire_block(size_t bytes) {
  const size_t size = block_size_for(bytes);
  if (size >= kMinBytes) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.free.find(size);
    if (it != c.free.end()) {
      void* p = it->second;
      c.free.erase(it);
      c.bytes -= size;
      return p;
    }
  }
  return ::operator new(size, std::align_val_t(kBlockAlign));
}

void release_block(void* p, size_t bytes) {
  const size_t size = block_size_for(bytes);
  if (size >= kMinBytes) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    if (c.bytes + size <= kMaxCachedBytes) {
      c.free.emplace(size, p);
      c.bytes += size;
      return;
    }
  }
  give_back(p);
}

size_t cached_block_bytes() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.bytes;
}

void release_cached_blocks() {
  std::multimap<size_t, void*> all;
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    all.swap(c.free);
    c.bytes = 0;
  }
  for (auto& [size, p] : all) give_back(p);
}

}  // namespace osprey::detail
