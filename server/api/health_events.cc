#include "api/health_events.h"

#include <utility>
#include <vector>

namespace osprey::server {

HealthEvents::Subscription::~Subscription() {
  owner_->unsubscribe(id_);
}

std::unique_ptr<HealthEvents::Subscription> HealthEvents::subscribe(Listener listener) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t id = next_id_++;
  listeners_.emplace(id, std::make_shared<Listener>(std::move(listener)));
  return std::unique_ptr<Subscription>(new Subscription(this, id));
}

void HealthEvents::notify() {
  std::lock_guard<std::mutex> deliver(deliver_mu_);
  std::vector<std::shared_ptr<Listener>> listeners;
  {
    std::lock_guard<std::mutex> lock(mu_);
    listeners.reserve(listeners_.size());
    for (const auto& [id, listener] : listeners_) listeners.push_back(listener);
  }
  // Unsubscribing takes deliver_mu_, so every listener copied here is still subscribed.
  for (const auto& listener : listeners) (*listener)();
}

size_t HealthEvents::listener_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return listeners_.size();
}

void HealthEvents::unsubscribe(uint64_t id) {
  std::lock_guard<std::mutex> deliver(deliver_mu_);
  std::lock_guard<std::mutex> lock(mu_);
  listeners_.erase(id);
}

}  // namespace osprey::server
