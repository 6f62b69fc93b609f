// Counts calls in progress (a unary call from its start until Finish, a stream until OnDone),
// so that shutdown can wait for every reactor to be done before the services are destroyed.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace osprey::server::grpc_frontend {

class CallTracker {
 public:
  void begin() {
    std::lock_guard<std::mutex> lock(mu_);
    ++active_;
  }
  void end() {
    std::lock_guard<std::mutex> lock(mu_);
    if (--active_ == 0) idle_.notify_all();
  }
  void wait_idle() {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [this] { return active_ == 0; });
  }
  int64_t active() const {
    std::lock_guard<std::mutex> lock(mu_);
    return active_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable idle_;
  int64_t active_ = 0;
};

}  // namespace osprey::server::grpc_frontend
