#include "base/large_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

namespace osprey {

void* allocate_large(size_t bytes) {
  constexpr size_t kAlign = 64;
  if (bytes < kLargePageBytes) {
    const size_t n = bytes == 0 ? kAlign : (bytes + kAlign - 1) / kAlign * kAlign;
    return std::aligned_alloc(kAlign, n);
  }
  // Only the whole 2 MiB blocks are advised: a huge page over the partial last block would
  // be resident in full (BERT-base's 2.25 MiB matrices would take 4 MiB each).
  const size_t n = (bytes + kAlign - 1) / kAlign * kAlign;
  // posix_memalign: aligned_alloc wants a size that is a multiple of the alignment.
  void* p = nullptr;
  if (posix_memalign(&p, kLargePageBytes, n) != 0) return nullptr;
  advise_large_pages(p, bytes);
  return p;
}

void advise_large_pages(void* p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (begin + kLargePageBytes - 1) / kLargePageBytes * kLargePageBytes;
  const uintptr_t last = (begin + bytes) / kLargePageBytes * kLargePageBytes;
  // advice only: failure leaves ordinary pages
  if (last > first) (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

void free_large(void* p) {
  std::free(p);
}

}  // namespace osprey
