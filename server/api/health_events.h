// Notification that the server's health (Server::live() / Server::ready()) may have changed, so
// that watchers (gRPC Health/Watch) react at once instead of re-reading the status on a timer.
//
// A notification carries no status: a listener reads the status it cares about itself. Two
// guarantees make that enough:
//  - Notifications are delivered one at a time (never two listener calls at once), so a listener
//    that reads the status when called always ends on the latest status: every change is
//    followed by a notification that starts after it.
//  - Once a Subscription is destroyed its listener is not running and will not be called again.
// A listener must not block, subscribe, unsubscribe or notify (it runs under the delivery lock).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

namespace osprey::server {

class HealthEvents {
 public:
  using Listener = std::function<void()>;

  // Unsubscribes on destruction. Must not outlive the HealthEvents that made it.
  class Subscription {
   public:
    ~Subscription();
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;

   private:
    friend class HealthEvents;
    Subscription(HealthEvents* owner, uint64_t id) : owner_(owner), id_(id) {}
    HealthEvents* owner_;
    uint64_t id_;
  };

  HealthEvents() = default;
  HealthEvents(const HealthEvents&) = delete;
  HealthEvents& operator=(const HealthEvents&) = delete;

  [[nodiscard]] std::unique_ptr<Subscription> subscribe(Listener listener);
  // Calls every listener, on the calling thread, after any delivery in progress.
  void notify();
  size_t listener_count() const;

 private:
  void unsubscribe(uint64_t id);

  std::mutex deliver_mu_;  // one delivery at a time; unsubscribing waits for the one running
  mutable std::mutex mu_;  // guards listeners_ and next_id_
  std::map<uint64_t, std::shared_ptr<Listener>> listeners_;
  uint64_t next_id_ = 1;
};

}  // namespace osprey::server
