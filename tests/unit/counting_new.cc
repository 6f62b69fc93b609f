// Global operator new / delete for the unit-test binary, counting through malloc: see
// counting_new.h. Every form goes through the same malloc/free pair, or a sanitizer sees new and
// free mismatched.
#include "counting_new.h"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<int64_t> g_live_bytes{0};
std::atomic<int64_t> g_peak_bytes{0};
thread_local int64_t t_allocations = 0;

void* counted(void* p) {
  if (!p) throw std::bad_alloc();
  ++t_allocations;
  const int64_t now = g_live_bytes += static_cast<int64_t>(malloc_usable_size(p));
  int64_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (now > peak && !g_peak_bytes.compare_exchange_weak(peak, now)) {
  }
  return p;
}

void uncounted(void* p) {
  if (!p) return;
  g_live_bytes -= static_cast<int64_t>(malloc_usable_size(p));
  std::free(p);
}

void* aligned(std::size_t n, std::align_val_t a) {
  const auto align = static_cast<std::size_t>(a);
  return std::aligned_alloc(align, (n + align - 1) / align * align);
}
}  // namespace

void* operator new(std::size_t n) {
  return counted(std::malloc(n ? n : 1));
}
void* operator new[](std::size_t n) {
  return counted(std::malloc(n ? n : 1));
}
void* operator new(std::size_t n, std::align_val_t a) {
  return counted(aligned(n ? n : 1, a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return counted(aligned(n ? n : 1, a));
}
void operator delete(void* p) noexcept {
  uncounted(p);
}
void operator delete[](void* p) noexcept {
  uncounted(p);
}
void operator delete(void* p, std::size_t) noexcept {
  uncounted(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  uncounted(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  uncounted(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  uncounted(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  uncounted(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  uncounted(p);
}
// The nothrow forms too (std::stable_sort's temporary buffer uses them): every form must go
// through the same malloc/free pair, or a sanitizer sees new and free mismatched.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  void* p = std::malloc(n ? n : 1);
  return p ? counted(p) : nullptr;
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  void* p = std::malloc(n ? n : 1);
  return p ? counted(p) : nullptr;
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  void* p = aligned(n ? n : 1, a);
  return p ? counted(p) : nullptr;
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  void* p = aligned(n ? n : 1, a);
  return p ? counted(p) : nullptr;
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  uncounted(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  uncounted(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  uncounted(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  uncounted(p);
}

namespace osprey::testing {

int64_t live_heap_bytes() { return g_live_bytes.load(); }
int64_t peak_heap_bytes() { return g_peak_bytes.load(); }
void reset_peak_heap_bytes(int64_t to) { g_peak_bytes = to; }
int64_t thread_heap_allocations() { return t_allocations; }

}  // namespace osprey::testing
