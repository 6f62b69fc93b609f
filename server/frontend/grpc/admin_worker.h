// One thread for the slow administrative calls (model load/unload), so that they never hold
// a gRPC callback thread. Tasks run in submission order; the destructor runs the ones queued.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace osprey::server::grpc_frontend {

class AdminWorker {
 public:
  AdminWorker() : thread_([this] { run(); }) {}
  ~AdminWorker() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  AdminWorker(const AdminWorker&) = delete;
  AdminWorker& operator=(const AdminWorker&) = delete;

  void post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, nothing left
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the members it uses exist
};

}  // namespace osprey::server::grpc_frontend
