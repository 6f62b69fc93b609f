#include "base/large_pages.h"

#include <sys/mman.h>

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
#ifdef MADV_HUGEPAGE
  const size_t whole = bytes / kLargePageBytes * kLargePageBytes;
  (void)madvise(p, whole, MADV_HUGEPAGE);  // advice only: failure leaves ordinary pages
#endif
  return p;
}

void free_large(void* p) {
  std::free(p);
}

}  // namespace osprey
