// One long-lived thread that runs the functions handed to it, one at a time, while the caller
// waits. OpenMP keeps a worker team per calling thread and a pinned session leaves that team's
// workers pinned, so OspreyRunner runs pinned sessions from this thread: the workers of the
// benchmark's main thread, which unpinned cells use, stay where the OS puts them.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace osprey::bench {

class CallThread {
 public:
  CallThread();
  ~CallThread();
  CallThread(const CallThread&) = delete;
  CallThread& operator=(const CallThread&) = delete;

  // Runs fn on this object's thread and returns when it has returned. fn must not throw.
  void call(const std::function<void()>& fn);

 private:
  void loop();

  std::mutex mu_;
  std::condition_variable cv_;
  const std::function<void()>* job_ = nullptr;
  bool done_ = false;
  bool stop_ = false;
  std::thread thread_;  // last: started after the members it uses
};

}  // namespace osprey::bench
