#include "core/call_thread.h"

namespace osprey::bench {

CallThread::CallThread() : thread_([this] { loop(); }) {}

CallThread::~CallThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void CallThread::call(const std::function<void()>& fn) {
  std::unique_lock<std::mutex> lock(mu_);
  job_ = &fn;
  done_ = false;
  cv_.notify_all();
  cv_.wait(lock, [this] { return done_; });
  job_ = nullptr;
}

void CallThread::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || (job_ != nullptr && !done_); });
    if (stop_) return;
    const std::function<void()>* job = job_;
    lock.unlock();
    (*job)();
    lock.lock();
    done_ = true;
    cv_.notify_all();
  }
}

}  // namespace osprey::bench
