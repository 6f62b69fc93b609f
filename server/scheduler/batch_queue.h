// The threaded runtime around DynamicBatcher: one scheduler thread forms batches and hands them
// to `num_instances` worker threads (an instance runs one batch at a time). The scheduler sleeps
// on a condition variable until the next batching delay or timeout elapses, a request arrives or
// an instance becomes free: no busy polling.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "osprey/status.h"
#include "scheduler/clock.h"
#include "scheduler/dynamic_batcher.h"

namespace osprey::server::scheduler {

class BatchQueue {
 public:
  // Runs a batch (ids in order) on an instance in [0, num_instances). Called from that
  // instance's worker thread, never concurrently for the same instance, without locks held.
  using ExecuteFn = std::function<void(int instance, std::vector<uint64_t> ids)>;
  // Answers a request that will not run: its queue timeout passed (kUnavailable), or the
  // ExecuteFn threw for its batch (kInternal; an ExecuteFn should answer its ids itself and not
  // throw). Called from the scheduler or a worker thread, without locks held.
  using RejectFn = std::function<void(uint64_t id, Status why)>;

  // `config` should have passed DynamicBatcher::validate() and num_instances should be >= 1;
  // otherwise every submit() fails with kFailedPrecondition naming the problem.
  // `clock` must outlive the queue.
  BatchQueue(BatcherConfig config, int num_instances, const Clock* clock, ExecuteFn execute,
             RejectFn reject);
  ~BatchQueue();  // = stop()
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  // Thread-safe. item.enqueue_us is set from the clock. Errors from DynamicBatcher::enqueue are
  // returned here; after stop() every submit fails with kUnavailable.
  Status submit(PendingItem item);

  // Refuses new work, runs everything already queued (without waiting for batching delays; queue
  // timeouts still apply), waits for running batches, joins the threads. Idempotent. Must not be
  // called from an ExecuteFn or RejectFn.
  void stop();

  // Re-reads the clock now. Only needed when the clock moves by itself without real time passing
  // (a FakeClock in tests): the scheduler sleeps in real time until the next deadline.
  void wake();

  size_t pending() const;  // queued, not yet handed to an instance
  // How many times the scheduler thread has woken up to look at the queue (a diagnostic: it
  // grows with arrivals, batches, timeouts and wake() calls, not with idle time).
  uint64_t scheduler_passes() const;

 private:
  struct Worker {
    std::thread thread;
    std::condition_variable cv;
    std::optional<std::vector<uint64_t>> batch;
    bool busy = false;
  };

  void scheduler_loop();
  void worker_loop(int instance);
  void run_batch(int instance, std::vector<uint64_t> ids);
  int free_instance() const;  // -1 if none; caller holds mu_

  const Clock* clock_;
  ExecuteFn execute_;
  RejectFn reject_;
  Status init_status_;

  mutable std::mutex mu_;
  std::condition_variable scheduler_cv_;
  DynamicBatcher batcher_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::thread scheduler_;
  bool stopping_ = false;  // no new work; flush what is queued
  bool finished_ = false;  // queue empty and instances idle after stopping_: threads exit
  bool poke_ = false;      // wake() was called or state changed
  uint64_t passes_ = 0;
  std::once_flag stop_once_;
};

}  // namespace osprey::server::scheduler
