#include "frontend/grpc/health_watch.h"

#include <utility>
#include <vector>

namespace osprey::server::grpc_frontend {

using grpc::health::v1::HealthCheckResponse;

HealthWatchReactor::HealthWatchReactor(HealthWatchers* owner, std::string service)
    : owner_(owner), service_(std::move(service)) {}

void HealthWatchReactor::update(ServingStatus status) {
  std::unique_lock<std::mutex> lock(mu_);
  if (closing_) return;
  wanted_ = status;
  advance(std::move(lock));
}

void HealthWatchReactor::close() {
  std::unique_lock<std::mutex> lock(mu_);
  closing_ = true;
  wanted_ = HealthCheckResponse::NOT_SERVING;
  advance(std::move(lock));
}

void HealthWatchReactor::OnWriteDone(bool ok) {
  std::unique_lock<std::mutex> lock(mu_);
  write_active_ = false;
  if (!ok) cancelled_ = true;
  advance(std::move(lock));
}

void HealthWatchReactor::OnCancel() {
  std::unique_lock<std::mutex> lock(mu_);
  cancelled_ = true;
  advance(std::move(lock));
}

void HealthWatchReactor::OnDone() {
  owner_->done(this);  // may delete this: nothing after it
}

void HealthWatchReactor::advance(std::unique_lock<std::mutex> lock) {
  // Every gRPC operation below is started by the one thread that changed the state to start
  // it, so no two run at once, and none after Finish.
  if (finished_ || write_active_) return;
  if (cancelled_) {
    finished_ = true;
    lock.unlock();
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the Watch was cancelled"));
    return;
  }
  if (wanted_.has_value() && wanted_ != sent_) {
    sent_ = wanted_;
    writing_.set_status(*wanted_);
    write_active_ = true;
    lock.unlock();
    StartWrite(&writing_);
    return;
  }
  if (closing_) {
    finished_ = true;
    lock.unlock();
    Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down"));
  }
}

HealthWatchers::HealthWatchers(StatusFn status) : status_(std::move(status)) {}

HealthWatchers::~HealthWatchers() {
  close_all();
  wait_idle();
}

HealthWatchReactor* HealthWatchers::open(const std::string& service) {
  auto reactor = std::make_shared<HealthWatchReactor>(this, service);
  std::lock_guard<std::mutex> send(send_mu_);
  bool closing = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    open_[reactor.get()] = reactor;
    closing = closing_;
  }
  if (closing) {
    reactor->close();
  } else {
    reactor->update(status_(service));
  }
  return reactor.get();  // open_ keeps it until OnDone
}

void HealthWatchers::refresh() {
  std::lock_guard<std::mutex> send(send_mu_);
  std::vector<std::shared_ptr<HealthWatchReactor>> streams;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_) return;
    for (const auto& [ptr, reactor] : open_) streams.push_back(reactor);
  }
  std::map<std::string, ServingStatus> statuses;  // one look per service name
  for (const auto& reactor : streams) {
    auto it = statuses.find(reactor->service());
    if (it == statuses.end())
      it = statuses.emplace(reactor->service(), status_(reactor->service())).first;
    reactor->update(it->second);
  }
}

void HealthWatchers::close_all() {
  std::vector<std::shared_ptr<HealthWatchReactor>> streams;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
    for (const auto& [ptr, reactor] : open_) streams.push_back(reactor);
  }
  for (const auto& reactor : streams) reactor->close();
}

void HealthWatchers::wait_idle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return open_.empty(); });
}

int64_t HealthWatchers::open_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(open_.size());
}

void HealthWatchers::done(HealthWatchReactor* reactor) {
  std::shared_ptr<HealthWatchReactor> last;  // destroyed after the lock is released
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = open_.find(reactor);
    if (it == open_.end()) return;
    last = std::move(it->second);
    open_.erase(it);
  }
  cv_.notify_all();
}

}  // namespace osprey::server::grpc_frontend
