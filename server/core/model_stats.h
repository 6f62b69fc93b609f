// Per-version inference statistics with Triton's fields (statistics extension).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "api/types.h"
#include "core/backend.h"

namespace osprey::server {

class VersionStats {
 public:
  // A request answered successfully: its whole duration, time queued, and its batch's compute.
  void record_success(uint64_t request_ns, uint64_t queue_ns, const BatchTiming& timing);
  // A request that reached the model and failed (validation, queue, execution).
  void record_failure(uint64_t request_ns);
  // One backend execution of `batch_size` items; `now_ms` = ms since the epoch.
  void record_execution(int64_t batch_size, const BatchTiming& timing, uint64_t now_ms);
  ModelStats snapshot(const std::string& model, const std::string& version) const;

 private:
  mutable std::mutex mu_;
  ModelStats stats_;
  std::map<uint64_t, BatchStats> batches_;
};

}  // namespace osprey::server
