// Hooks a serving version calls as requests move through it (metrics listen here).
#pragma once

#include <cstdint>
#include <string>

#include "core/backend.h"

namespace osprey::server {

class VersionObserver {
 public:
  virtual ~VersionObserver() = default;
  virtual void on_success(uint64_t request_ns, uint64_t queue_ns, const BatchTiming& timing) = 0;
  // reason: "REJECTED" (queue full, timed out, not ready), "INVALID" (bad request),
  // "BACKEND" (execution failed).
  virtual void on_failure(const std::string& reason, uint64_t request_ns) = 0;
  virtual void on_execution(int64_t batch_size, const BatchTiming& timing) = 0;
  virtual void on_pending(int64_t delta) = 0;  // requests queued (+1) or taken/answered (-1)
};

}  // namespace osprey::server
