// A float buffer for one thread's scratch (thread_local in a kernel): grown on demand, kept
// between calls up to a size so that a warm run allocates nothing, given back after a call
// that needed more.
#pragma once

#include <cstddef>
#include <memory>

namespace osprey::cpu {

class KeptBuffer {
 public:
  explicit KeptBuffer(size_t kept_bytes) : kept_bytes_(kept_bytes) {}

  // At least n floats, uninitialized.
  float* get(size_t n) {
    if (n > capacity_) {
      data_.reset();
      data_ = std::make_unique_for_overwrite<float[]>(n);
      capacity_ = n;
    }
    return data_.get();
  }
  // Gives the memory back when it is above the kept size.
  void trim() {
    if (capacity_ * sizeof(float) > kept_bytes_) {
      data_.reset();
      capacity_ = 0;
    }
  }

 private:
  size_t kept_bytes_;
  std::unique_ptr<float[]> data_;
  size_t capacity_ = 0;  // floats
};

}  // namespace osprey::cpu
