#include "core/serving_version.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <variant>

namespace osprey::server {
namespace {

scheduler::QueuePolicy queue_policy(const inference::ModelQueuePolicy& p) {
  scheduler::QueuePolicy q;
  q.timeout_action = p.timeout_action() == inference::ModelQueuePolicy::DELAY
                         ? scheduler::QueuePolicy::TimeoutAction::kDelay
                         : scheduler::QueuePolicy::TimeoutAction::kReject;
  q.default_timeout_us = static_cast<int64_t>(p.default_timeout_microseconds());
  q.allow_timeout_override = p.allow_timeout_override();
  q.max_queue_size = p.max_queue_size();
  return q;
}

int64_t int_parameter(const Parameters& params, const std::string& key) {
  auto it = params.find(key);
  if (it == params.end()) return 0;
  if (const auto* v = std::get_if<int64_t>(&it->second)) return *v;
  return 0;
}

uint64_t since_epoch_ms() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

// Sends a response, in the request's turn when the queue preserves ordering.
void respond(scheduler::BatchQueue& queue, uint64_t id, Server::InferCallback done,
             Result<InferResponse> result) {
  if (!queue.preserves_order()) {
    done(std::move(result));
    return;
  }
  // preserve_ordering: the queue sends it once every earlier request was answered.
  auto held = std::make_shared<Result<InferResponse>>(std::move(result));
  auto answer = [done, held] { done(std::move(*held)); };
  const Status st = queue.deliver(id, answer);
  // The queue admitted `id` and nothing else answers it, so this does not happen; if it did,
  // sending out of turn beats never sending.
  if (!st.ok()) answer();
}

}  // namespace

uint64_t steady_now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

scheduler::BatcherConfig batcher_config(const inference::ModelConfig& config,
                                        int64_t server_max_queue_size) {
  scheduler::BatcherConfig b;
  b.max_queue_size = std::max<int64_t>(1, server_max_queue_size);
  if (!config.has_dynamic_batching()) return b;  // max_batch_size 0: every request alone
  const auto& db = config.dynamic_batching();
  b.max_batch_size = config.max_batch_size();
  b.preferred_batch_sizes.assign(db.preferred_batch_size().begin(), db.preferred_batch_size().end());
  std::sort(b.preferred_batch_sizes.begin(), b.preferred_batch_sizes.end());
  b.preferred_batch_sizes.erase(
      std::unique(b.preferred_batch_sizes.begin(), b.preferred_batch_sizes.end()),
      b.preferred_batch_sizes.end());
  b.max_queue_delay_us = static_cast<int64_t>(db.max_queue_delay_microseconds());
  b.preserve_ordering = db.preserve_ordering();
  b.priority_levels = static_cast<int>(db.priority_levels());
  b.default_priority_level = static_cast<int>(db.default_priority_level());
  b.default_policy = queue_policy(db.default_queue_policy());
  for (const auto& [level, policy] : db.priority_queue_policy())
    b.priority_policies[static_cast<int>(level)] = queue_policy(policy);
  return b;
}

ServingVersion::ServingVersion(std::string model, int64_t version,
                               std::unique_ptr<LoadedModel> loaded, int64_t server_max_queue_size,
                               const scheduler::Clock* clock,
                               std::unique_ptr<VersionObserver> observer)
    : model_(std::move(model)),
      version_(version),
      loaded_(std::move(loaded)),
      clock_(clock),
      observer_(std::move(observer)) {
  queue_ = std::make_unique<scheduler::BatchQueue>(
      batcher_config(loaded_->config(), server_max_queue_size), loaded_->instance_count(), clock_,
      [this](int instance, std::vector<uint64_t> ids) { execute(instance, std::move(ids)); },
      [this](uint64_t id, Status why) { reject(id, std::move(why)); });
}

ServingVersion::~ServingVersion() { drain(); }

void ServingVersion::drain() { queue_->stop(); }

void ServingVersion::record_failure(const std::string& reason, uint64_t request_ns) {
  stats_.record_failure(request_ns);
  if (observer_) observer_->on_failure(reason, request_ns);
}

Status ServingVersion::submit(InferRequest request, const RequestShape& shape,
                              Server::InferCallback done, uint64_t start_ns) {
  scheduler::PendingItem item;
  item.batch_size = loaded_->config().has_dynamic_batching() ? static_cast<int>(shape.batch_size) : 1;
  item.shape_key = shape.shape_key;
  item.priority = static_cast<int>(int_parameter(request.parameters, "priority"));
  item.timeout_us = int_parameter(request.parameters, "timeout");
  {
    std::lock_guard<std::mutex> lock(mu_);
    item.id = next_id_++;
    Job& job = jobs_[item.id];
    job.request = std::move(request);
    job.done = std::move(done);
    job.batch_size = shape.batch_size;
    job.start_ns = start_ns;
    job.enqueue_ns = steady_now_ns();
  }
  const uint64_t id = item.id;
  // Counted before submit(): an idle instance may start (and un-count) it before submit returns.
  if (observer_) observer_->on_pending(+1);
  Status st = queue_->submit(std::move(item));
  if (!st.ok()) {
    if (observer_) observer_->on_pending(-1);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(id);
    // Give the request back to the caller: it answers (the callback was not called).
    if (it != jobs_.end()) jobs_.erase(it);
    return st;
  }
  return Status::Ok();
}

void ServingVersion::reject(uint64_t id, Status why) {
  Job job;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return;
    job = std::move(it->second);
    jobs_.erase(it);
  }
  if (observer_) observer_->on_pending(-1);
  record_failure("REJECTED", steady_now_ns() - job.start_ns);
  job.done(Status(why.code(), str_cat("model '", model_, "' version ", version_, ": ", why.message())));
}

void ServingVersion::execute(int instance, std::vector<uint64_t> ids) {
  std::vector<Job> jobs;
  std::vector<uint64_t> job_ids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (uint64_t id : ids) {
      auto it = jobs_.find(id);
      if (it == jobs_.end()) continue;
      jobs.push_back(std::move(it->second));
      job_ids.push_back(id);
      jobs_.erase(it);
    }
  }
  if (jobs.empty()) return;
  const uint64_t exec_start = steady_now_ns();
  std::vector<const InferRequest*> batch;
  int64_t items = 0;
  for (const Job& j : jobs) {
    batch.push_back(&j.request);
    items += j.batch_size;
  }
  if (observer_) observer_->on_pending(-static_cast<int64_t>(jobs.size()));
  BatchTiming timing;
  auto results = loaded_->execute(instance, batch, &timing);
  stats_.record_execution(items, timing, since_epoch_ms());
  if (observer_) observer_->on_execution(items, timing);
  const std::string version = std::to_string(version_);
  for (size_t i = 0; i < jobs.size(); ++i) {
    Job& job = jobs[i];
    Result<InferResponse> result =
        i < results.size() ? std::move(results[i])
                           : Result<InferResponse>(internal_error("the backend gave no result"));
    const uint64_t request_ns = steady_now_ns() - job.start_ns;
    if (result.ok()) {
      result->model_name = model_;
      result->model_version = version;
      result->id = job.request.id;
      const uint64_t queue_ns = exec_start - job.enqueue_ns;
      stats_.record_success(request_ns, queue_ns, timing);
      if (observer_) observer_->on_success(request_ns, queue_ns, timing);
    } else {
      record_failure("BACKEND", request_ns);
      result = Status(result.status().code(), str_cat("model '", model_, "' version ", version, ": ",
                                                      result.status().message()));
    }
    respond(*queue_, job_ids[i], std::move(job.done), std::move(result));
  }
}

}  // namespace osprey::server
