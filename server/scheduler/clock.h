// Time source for the scheduler. Everything that waits or times out reads the time through a
// Clock, so the batching logic can be driven by a FakeClock in tests.
#pragma once

#include <atomic>
#include <cstdint>

namespace osprey::server::scheduler {

class Clock {
 public:
  virtual ~Clock();
  // Microseconds on a monotonic time line; only differences are meaningful.
  virtual int64_t now_us() const = 0;
};

// std::chrono::steady_clock.
class SystemClock final : public Clock {
 public:
  int64_t now_us() const override;
};

// A clock that moves only when told to. Safe to read and move from different threads.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_us = 0) : now_(start_us) {}
  int64_t now_us() const override { return now_.load(std::memory_order_acquire); }
  void set_us(int64_t t) { now_.store(t, std::memory_order_release); }
  void advance_us(int64_t dt) { now_.fetch_add(dt, std::memory_order_acq_rel); }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace osprey::server::scheduler
