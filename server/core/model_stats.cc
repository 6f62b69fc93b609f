#include "core/model_stats.h"

namespace osprey::server {
namespace {

void add(StatDuration* d, uint64_t ns) {
  d->count += 1;
  d->ns += ns;
}

}  // namespace

void VersionStats::record_success(uint64_t request_ns, uint64_t queue_ns, const BatchTiming& t) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& s = stats_.inference_stats;
  add(&s.success, request_ns);
  add(&s.queue, queue_ns);
  add(&s.compute_input, t.compute_input_ns);
  add(&s.compute_infer, t.compute_infer_ns);
  add(&s.compute_output, t.compute_output_ns);
}

void VersionStats::record_failure(uint64_t request_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  add(&stats_.inference_stats.fail, request_ns);
}

void VersionStats::record_execution(int64_t batch_size, const BatchTiming& t, uint64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.execution_count += 1;
  stats_.inference_count += static_cast<uint64_t>(batch_size);
  stats_.last_inference_ms = now_ms;
  BatchStats& b = batches_[static_cast<uint64_t>(batch_size)];
  b.batch_size = static_cast<uint64_t>(batch_size);
  add(&b.compute_input, t.compute_input_ns);
  add(&b.compute_infer, t.compute_infer_ns);
  add(&b.compute_output, t.compute_output_ns);
}

ModelStats VersionStats::snapshot(const std::string& model, const std::string& version) const {
  std::lock_guard<std::mutex> lock(mu_);
  ModelStats out = stats_;
  out.name = model;
  out.version = version;
  for (const auto& [size, b] : batches_) out.batch_stats.push_back(b);
  return out;
}

}  // namespace osprey::server
