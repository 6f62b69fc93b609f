#include "scheduler/batch_queue.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

namespace osprey::server::scheduler {

BatchQueue::BatchQueue(BatcherConfig config, int num_instances, const Clock* clock,
                       ExecuteFn execute, RejectFn reject)
    : clock_(clock),
      execute_(std::move(execute)),
      reject_(std::move(reject)),
      init_status_(DynamicBatcher::validate(config)),
      batcher_(std::move(config)) {
  if (!init_status_.ok()) {
    init_status_ = failed_precondition("invalid batcher config: ", init_status_.message());
  } else if (num_instances < 1) {
    init_status_ = failed_precondition("num_instances must be >= 1 (got ", num_instances, ")");
  } else if (clock_ == nullptr || !execute_ || !reject_) {
    init_status_ = failed_precondition("BatchQueue needs a clock, an ExecuteFn and a RejectFn");
  }
  if (!init_status_.ok()) return;
  if (batcher_.config().preserve_ordering) order_ = std::make_unique<ResponseSequencer>();
  for (int i = 0; i < num_instances; ++i) workers_.push_back(std::make_unique<Worker>());
  for (int i = 0; i < num_instances; ++i) {
    workers_[i]->thread = std::thread([this, i] { worker_loop(i); });
  }
  scheduler_ = std::thread([this] { scheduler_loop(); });
}

BatchQueue::~BatchQueue() {
  stop();
}

Status BatchQueue::submit(PendingItem item) {
  if (!init_status_.ok()) return init_status_;
  Worker* direct = nullptr;
  bool wake_scheduler = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return unavailable("shutting down: no new requests are accepted");
    const int64_t now = clock_->now_us();
    item.enqueue_us = now;
    const uint64_t id = item.id;
    // Only admit() adds to the order, and only here under mu_: if `id` is not in it now, it is not
    // when admit() runs below.
    if (order_ != nullptr && order_->admitted(id)) {
      return invalid_argument("request id ", id, " is still waiting for its answer to be sent");
    }
    OSPREY_RETURN_IF_ERROR(batcher_.enqueue(std::move(item)));
    // Arrival order is decided here, under the same lock as the batcher's own FIFO.
    if (order_ != nullptr) OSPREY_RETURN_IF_ERROR(order_->admit(id));
    const int instance = free_instance();
    if (instance >= 0) {
      std::vector<uint64_t> batch = take_ready_batch(now);
      if (!batch.empty()) {
        direct = workers_[instance].get();
        direct->busy = true;
        direct->batch = std::move(batch);
      }
    }
    wake_scheduler = scheduler_needed();
  }
  // Outside the lock, so that the woken thread does not block on mu_ at once.
  if (direct != nullptr) direct->cv.notify_one();
  if (wake_scheduler) scheduler_cv_.notify_one();
  return Status::Ok();
}

Status BatchQueue::deliver(uint64_t id, Answer answer) {
  if (order_ == nullptr) {
    answer();
    return Status::Ok();
  }
  return order_->complete(id, std::move(answer));
}

void BatchQueue::reject_in_turn(uint64_t id, Status why) {
  if (order_ == nullptr) {
    reject_(id, std::move(why));
    return;
  }
  const Status st = order_->complete(id, [this, id, why] { reject_(id, why); });
  (void)st;  // only fails if `id` was answered already: then it must not be answered twice
}

void BatchQueue::stop() {
  std::call_once(stop_once_, [this] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      poke_ = true;
    }
    scheduler_cv_.notify_one();
    if (scheduler_.joinable()) scheduler_.join();
    for (auto& w : workers_) {
      if (w->thread.joinable()) w->thread.join();
    }
    // Every admitted request ran or was rejected, so nothing should be left; if something is,
    // answer it rather than leave it (and every answer after it) held for ever.
    if (order_ != nullptr) {
      for (uint64_t id : order_->unanswered()) {
        reject_in_turn(id,
                       internal_error("the queue stopped before request ", id, " was answered"));
      }
    }
  });
}

void BatchQueue::wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    poke_ = true;
  }
  scheduler_cv_.notify_one();
}

size_t BatchQueue::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return batcher_.pending();
}

uint64_t BatchQueue::scheduler_passes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return passes_;
}

uint64_t BatchQueue::direct_batches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return direct_batches_;
}

int BatchQueue::free_instance() const {
  for (size_t i = 0; i < workers_.size(); ++i) {
    if (!workers_[i]->busy) return static_cast<int>(i);
  }
  return -1;
}

std::vector<uint64_t> BatchQueue::take_ready_batch(int64_t now_us) {
  const int64_t next_timeout = batcher_.next_timeout_us();
  if (next_timeout >= 0 && next_timeout <= now_us) return {};  // the scheduler expires it first
  // Nothing has timed out, so this poll expires nothing: d.expired is empty.
  Decision d = stopping_ ? batcher_.poll_without_delay(now_us) : batcher_.poll(now_us);
  if (!d.batch.empty()) ++direct_batches_;
  return std::move(d.batch);
}

bool BatchQueue::scheduler_needed() {
  if (!stopping_) {
    if (batcher_.pending() == 0) return false;
    if (asleep_ && free_instance() < 0) {
      // Every instance is busy, so the scheduler can only answer timeouts (workers poll for
      // themselves when they finish): its plan holds unless a timeout now comes sooner.
      const int64_t timeout = batcher_.next_timeout_us();
      if (timeout < 0 || (asleep_until_ >= 0 && timeout >= asleep_until_)) return false;
    }
  }
  poke_ = true;
  return true;
}

void BatchQueue::scheduler_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    poke_ = false;
    ++passes_;
    const int64_t now = clock_->now_us();
    const int instance = free_instance();
    Decision d;
    if (instance >= 0) {
      d = stopping_ ? batcher_.poll_without_delay(now) : batcher_.poll(now);
    } else {
      // Every instance is busy: a batch formed now could not run and would stop growing, so
      // only answer timeouts until an instance frees up.
      d.expired = batcher_.expire(now);
      d.wake_at_us = batcher_.next_timeout_us();
    }
    const bool dispatched = !d.batch.empty();
    if (dispatched) {
      Worker& w = *workers_[instance];
      w.busy = true;
      w.batch = std::move(d.batch);
      w.cv.notify_one();
    }
    if (!d.expired.empty()) {
      lock.unlock();
      for (uint64_t id : d.expired) {
        reject_in_turn(id, unavailable("request ", id, " timed out waiting in the queue"));
      }
      lock.lock();
      continue;
    }
    if (dispatched || poke_) continue;
    if (stopping_ && batcher_.pending() == 0 &&
        std::none_of(workers_.begin(), workers_.end(), [](const auto& w) { return w->busy; })) {
      finished_ = true;
      for (auto& w : workers_) w->cv.notify_one();
      return;
    }
    if (d.wake_at_us > now || d.wake_at_us < 0) {
      asleep_ = true;
      asleep_until_ = d.wake_at_us;
      if (d.wake_at_us < 0) {
        scheduler_cv_.wait(lock, [this] { return poke_; });
      } else {
        scheduler_cv_.wait_for(lock, std::chrono::microseconds(d.wake_at_us - now),
                               [this] { return poke_; });
      }
      asleep_ = false;
    }
  }
}

void BatchQueue::worker_loop(int instance) {
  Worker& w = *workers_[instance];
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    w.cv.wait(lock, [&] { return w.batch.has_value() || finished_; });
    if (!w.batch.has_value()) return;  // finished_
    std::vector<uint64_t> ids = std::move(*w.batch);
    w.batch.reset();
    while (!ids.empty()) {
      lock.unlock();
      run_batch(instance, std::move(ids));
      lock.lock();
      // The next ready batch runs here, without a hop through the scheduler thread.
      ids = take_ready_batch(clock_->now_us());
      w.busy = !ids.empty();
      if (scheduler_needed()) scheduler_cv_.notify_one();
    }
  }
}

void BatchQueue::run_batch(int instance, std::vector<uint64_t> ids) {
  const std::vector<uint64_t> copy = ids;
  std::string what;
  bool threw = true;
  try {
    execute_(instance, std::move(ids));
    if (order_ == nullptr) return;
    threw = false;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "unknown exception";
  }
  for (uint64_t id : copy) {
    // With ordering, only the ids the ExecuteFn did not answer through deliver().
    if (order_ != nullptr && !order_->awaiting(id)) continue;
    reject_in_turn(id,
                   threw ? internal_error("instance ", instance, " failed to run the batch: ", what)
                         : internal_error("instance ", instance,
                                          " finished the batch without answering request ", id));
  }
}

}  // namespace osprey::server::scheduler
