#include "scheduler/clock.h"

#include <chrono>

namespace osprey::server::scheduler {

Clock::~Clock() = default;

int64_t SystemClock::now_us() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace osprey::server::scheduler
