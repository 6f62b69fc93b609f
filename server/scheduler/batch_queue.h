// The threaded runtime around DynamicBatcher: batches run on `num_instances` worker threads (an
// instance runs one batch at a time); one scheduler thread forms the batches that have to wait.
//
// Direct path: a batching decision is the same DynamicBatcher::poll() wherever it is made, so it
// is made where the work already is, under the queue's one mutex:
//  - submit(): when an instance is idle and poll() sends a batch at once (the model does not
//    batch, max_queue_delay is 0, or the batch is full / the largest preferred size), the batch
//    goes straight to that idle worker: one wake-up, no scheduler thread in between;
//  - a worker that finishes a batch polls again and runs the next ready batch itself.
// The scheduler thread is woken only when something is left pending that it must act on: a
// batching delay to wait for, or, while every instance is busy, a queue timeout sooner than the
// one it sleeps until (busy workers take queued work themselves when they finish); and at
// stop(). Requests whose queue timeout has passed are always answered by the scheduler thread:
// the direct path steps aside whenever a timeout is due, so a submitter never runs a RejectFn.
// The scheduler sleeps on a condition variable until the next batching delay or timeout elapses
// or it is woken: no busy polling, and an idle queue uses no CPU (workers sleep on their own
// condition variables; nothing spins).
//
// Response order: with BatcherConfig::preserve_ordering, every request accepted by submit() takes
// its place in a ResponseSequencer (response_order.h) at once, under the queue's mutex, so the
// order is the order of arrival at the queue. Its answer (from the ExecuteFn through deliver(),
// or a RejectFn call for a timeout or a failed batch) is held until every earlier request was
// answered. Without the option there is no sequencer: answers go as soon as they are made.
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
#include "scheduler/response_order.h"

namespace osprey::server::scheduler {

class BatchQueue {
 public:
  // Runs a batch (ids in order) on an instance in [0, num_instances). Called from that
  // instance's worker thread, never concurrently for the same instance, without locks held.
  // It answers its ids itself, and with preserve_ordering it must do so through deliver(): an id
  // it leaves unanswered when it returns is rejected (kInternal) in its turn.
  using ExecuteFn = std::function<void(int instance, std::vector<uint64_t> ids)>;
  // Answers a request that will not run: its queue timeout passed (kUnavailable), or the
  // ExecuteFn threw for its batch (kInternal; an ExecuteFn should answer its ids itself and not
  // throw). Called from the scheduler or a worker thread, without locks held; with
  // preserve_ordering, in the request's turn.
  using RejectFn = std::function<void(uint64_t id, Status why)>;
  // Sends one request's answer (see deliver()).
  using Answer = ResponseSequencer::Answer;

  // `config` should have passed DynamicBatcher::validate() and num_instances should be >= 1;
  // otherwise every submit() fails with kFailedPrecondition naming the problem.
  // `clock` must outlive the queue.
  BatchQueue(BatcherConfig config, int num_instances, const Clock* clock, ExecuteFn execute,
             RejectFn reject);
  ~BatchQueue();  // = stop()
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  // Thread-safe. item.enqueue_us is set from the clock. Errors from DynamicBatcher::enqueue are
  // returned here; after stop() every submit fails with kUnavailable. A refused request never
  // enters the response order: the caller answers it at once. With preserve_ordering, an id
  // whose answer is still held is refused too (kInvalidArgument).
  Status submit(PendingItem item);

  // Whether answers must go through deliver() (BatcherConfig::preserve_ordering).
  bool preserves_order() const { return order_ != nullptr; }
  // Sends the answer for request `id`: at once without preserve_ordering; with it, once every
  // request that arrived before `id` was answered, possibly on another thread (the one that
  // answered the last of those). Never blocks waiting for other answers. kNotFound or
  // kFailedPrecondition (and `answer` is not run) if `id` is not waiting for an answer.
  Status deliver(uint64_t id, Answer answer);

  // Refuses new work, runs everything already queued (without waiting for batching delays; queue
  // timeouts still apply), waits for running batches, joins the threads. Idempotent. Must not be
  // called from an ExecuteFn or RejectFn. When it returns, every answer held for ordering has
  // been sent.
  void stop();

  // Re-reads the clock now. Only needed when the clock moves by itself without real time passing
  // (a FakeClock in tests): the scheduler sleeps in real time until the next deadline.
  void wake();

  size_t pending() const;  // queued, not yet handed to an instance
  // How many times the scheduler thread has woken up to look at the queue (a diagnostic: it
  // grows with arrivals that must wait, batches it forms, timeouts and wake() calls, not with
  // idle time nor with batches on the direct path).
  uint64_t scheduler_passes() const;
  // Batches handed to an instance without the scheduler thread (by submit() or by a worker
  // taking its next batch). A diagnostic, like scheduler_passes().
  uint64_t direct_batches() const;

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
  // RejectFn for `id`, in its turn when ordering.
  void reject_in_turn(uint64_t id, Status why);
  int free_instance() const;  // -1 if none; caller holds mu_
  // The batch poll() sends now, for an instance that is idle; empty when none is ready or when a
  // queue timeout is due (the scheduler answers those). Caller holds mu_.
  std::vector<uint64_t> take_ready_batch(int64_t now_us);
  // Wakes the scheduler if it has something to do (see the top of this file) or stop() is under
  // way. Caller holds mu_; returns whether the caller must notify scheduler_cv_.
  bool scheduler_needed();

  const Clock* clock_;
  ExecuteFn execute_;
  RejectFn reject_;
  Status init_status_;
  std::unique_ptr<ResponseSequencer> order_;  // null without preserve_ordering

  mutable std::mutex mu_;
  std::condition_variable scheduler_cv_;
  DynamicBatcher batcher_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::thread scheduler_;
  bool stopping_ = false;      // no new work; flush what is queued
  bool finished_ = false;      // queue empty and instances idle after stopping_: threads exit
  bool poke_ = false;          // wake() was called or state changed
  bool asleep_ = false;        // the scheduler waits on scheduler_cv_ ...
  int64_t asleep_until_ = -1;  // ... until this clock time (-1 = until woken)
  uint64_t passes_ = 0;
  uint64_t direct_batches_ = 0;
  std::once_flag stop_once_;
};

}  // namespace osprey::server::scheduler
