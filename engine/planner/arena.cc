#include "planner/arena.h"

#include <new>
#include <utility>

namespace osprey::planner {
namespace {

// Rounds up to kAlignment; 0 if that overflows (callers treat it as too large).
size_t round_up(size_t bytes) {
  size_t r = bytes % Arena::kAlignment;
  if (r == 0) return bytes;
  size_t pad = Arena::kAlignment - r;
  return bytes > std::numeric_limits<size_t>::max() - pad ? 0 : bytes + pad;
}

std::byte* allocate(size_t bytes) {
  return static_cast<std::byte*>(
      ::operator new (bytes, std::align_val_t{Arena::kAlignment}, std::nothrow));
}

}  // namespace

Arena::~Arena() {
  release();
}

Arena::Arena(Arena&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      capacity_(std::exchange(other.capacity_, 0)),
      limit_(other.limit_),
      grow_count_(other.grow_count_) {}

Arena& Arena::operator=(Arena&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
    limit_ = other.limit_;
    grow_count_ = other.grow_count_;
  }
  return *this;
}

void Arena::release() {
  if (data_ != nullptr) ::operator delete (data_, std::align_val_t{kAlignment});
  data_ = nullptr;
  capacity_ = 0;
}

Status Arena::reserve(size_t bytes) {
  if (bytes <= capacity_) return Status::Ok();
  size_t want = round_up(bytes);
  if (want == 0 || want > limit_)
    return resource_exhausted("memory arena: ", bytes, " bytes requested, limit is ", limit_);
  release();  // the old contents are not kept, so free first and keep the peak low
  data_ = allocate(want);
  if (data_ == nullptr)
    return resource_exhausted("memory arena: could not allocate ", want, " bytes");
  capacity_ = want;
  ++grow_count_;
  return Status::Ok();
}

void Arena::trim(size_t keep_bytes) {
  size_t keep = round_up(keep_bytes);
  if (keep_bytes > 0 && keep == 0) return;  // overflow: larger than any capacity
  if (keep >= capacity_) return;
  release();
  if (keep == 0) return;
  data_ = allocate(keep);
  if (data_ != nullptr) capacity_ = keep;
}

}  // namespace osprey::planner
