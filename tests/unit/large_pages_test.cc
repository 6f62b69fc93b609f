// base/large_pages.h: small buffers are ordinary 64-byte aligned allocations; from 2 MiB up a
// buffer starts on a 2 MiB boundary, its whole 2 MiB blocks carry the huge-page advice (the
// "hg" flag of their mapping in /proc/self/smaps), and every byte asked for is usable.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "base/large_pages.h"

namespace osprey {
namespace {

// The VmFlags of the mapping that holds address a, or "" when /proc/self/smaps has none.
std::string vm_flags_at(uintptr_t a) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = a >= lo && a < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

bool thp_built() {
  return std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good();
}

TEST(LargePages, SmallBuffersAreOrdinaryAndAligned) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{100}, size_t{4096}, kLargePageBytes - 64}) {
    void* p = allocate_large(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
    std::memset(p, 0x5a, bytes);
    free_large(p);
  }
}

TEST(LargePages, LargeBuffersStartOnA2MiBBoundaryWithTheAdviceOnWholeBlocks) {
  const size_t bytes = 3 * kLargePageBytes + 12345;  // three whole blocks and a partial one
  auto* p = static_cast<unsigned char*>(allocate_large(bytes));
  ASSERT_NE(p, nullptr);
  const auto a = reinterpret_cast<uintptr_t>(p);
  EXPECT_EQ(a % kLargePageBytes, 0u);
  std::memset(p, 0x33, bytes);  // every byte asked for is usable
  EXPECT_EQ(p[bytes - 1], 0x33);
  if (thp_built()) {
    EXPECT_NE(vm_flags_at(a).find(" hg"), std::string::npos) << vm_flags_at(a);
    EXPECT_NE(vm_flags_at(a + 3 * kLargePageBytes - 1).find(" hg"), std::string::npos);
    // (Whether the partial last block is left unadvised is not checked here: in one process
    // with other tests, an allocator may hand out memory a previous buffer advised.)
  }
  free_large(p);
}

TEST(LargePages, AdviceCoversOnlyTheWhole2MiBBlocksInsideARange) {
  // A fresh mapping of its own, so no other test's advice is seen: 8 blocks, the range from
  // half a block in to one and a half blocks before the end.
  const size_t map_bytes = 8 * kLargePageBytes;
  void* m = mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  const auto base = reinterpret_cast<uintptr_t>(m);
  const uintptr_t begin = base + kLargePageBytes / 2, end = base + map_bytes - 3 * kLargePageBytes / 2;
  advise_large_pages(reinterpret_cast<void*>(begin), end - begin);
  if (thp_built()) {
    const uintptr_t first = (begin + kLargePageBytes - 1) / kLargePageBytes * kLargePageBytes;
    const uintptr_t last = end / kLargePageBytes * kLargePageBytes;
    ASSERT_GT(last, first);
    EXPECT_NE(vm_flags_at(first).find(" hg"), std::string::npos) << vm_flags_at(first);
    EXPECT_NE(vm_flags_at(last - 1).find(" hg"), std::string::npos) << vm_flags_at(last - 1);
    EXPECT_EQ(vm_flags_at(first - 1).find(" hg"), std::string::npos) << vm_flags_at(first - 1);
    EXPECT_EQ(vm_flags_at(last).find(" hg"), std::string::npos) << vm_flags_at(last);
  }
  // A range holding no whole block is not advised at all: a quarter of the block after `last`.
  const uintptr_t quarter = end / kLargePageBytes * kLargePageBytes + kLargePageBytes / 4;
  advise_large_pages(reinterpret_cast<void*>(quarter), kLargePageBytes / 2);
  if (thp_built()) {
    EXPECT_EQ(vm_flags_at(quarter).find(" hg"), std::string::npos) << vm_flags_at(quarter);
  }
  munmap(m, map_bytes);
}

}  // namespace
}  // namespace osprey
