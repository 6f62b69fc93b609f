// Triton-style dynamic batching as pure logic: requests go in with enqueue(), batches come out of
// poll(now). No threads, no clock of its own: the caller passes the time and locks around calls
// (see batch_queue.h for the threaded runtime around it).
//
// How a batch is formed (one per poll):
//  - Requests whose queue timeout has passed are handled first, per their level's policy:
//    kReject -> returned in Decision::expired; kDelay -> moved behind the level's other requests
//    (they still run, after those that have not timed out).
//  - The batch starts with the oldest request of the highest non-empty priority level (level 1
//    is highest; FIFO within a level, requests moved behind by kDelay after the others) and takes
//    following requests in that order, across levels, that have the same shape_key. Requests with
//    a different shape_key are skipped (they wait for a later batch). A request that does not fit
//    in what remains of max_batch_size stops the batch: nothing behind it overtakes it.
//  - The batch is sent at once when its rows reach max_batch_size, when they reach the largest
//    preferred batch size, or when it cannot grow further (the next request of its shape does
//    not fit). Otherwise it waits until its oldest request has waited max_queue_delay_us, then
//    sends the largest preferred batch size that a prefix of it makes, or all of it if no
//    prefix is a preferred size.
//  - max_batch_size 0 (the model does not batch): every request is its own batch, at once.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "osprey/status.h"

namespace osprey::server::scheduler {

struct QueuePolicy {
  enum class TimeoutAction { kReject, kDelay };
  TimeoutAction timeout_action = TimeoutAction::kReject;
  int64_t default_timeout_us = 0;       // 0 = no timeout
  bool allow_timeout_override = false;  // a request's timeout may shorten the default (never
                                        // lengthen it); with no default, it sets the timeout
  int64_t max_queue_size = 0;           // per level; 0 = only BatcherConfig::max_queue_size
};

struct BatcherConfig {
  int max_batch_size = 0;                  // 0 = model does not batch: every request runs alone
  std::vector<int> preferred_batch_sizes;  // strictly ascending, each in [1, max_batch_size]
  int64_t max_queue_delay_us = 0;  // how long the OLDEST request of a batch may wait for more
  bool preserve_ordering = false;  // responses in arrival order (enforced by the caller)
  int priority_levels = 0;         // 0 = one level; else levels 1..N, 1 = highest
  int default_priority_level = 0;  // level for priority 0; in [1, N] when N > 0
  QueuePolicy default_policy;
  std::map<int, QueuePolicy> priority_policies;  // level -> policy; others use default_policy
  int64_t max_queue_size = 1024;                 // hard cap over all levels (>= 1)
};

struct PendingItem {
  uint64_t id = 0;     // unique among pending items
  int batch_size = 1;  // rows this request contributes (its dim 0; 1 if the model does not batch)
  std::string shape_key;   // non-batch dims + datatypes; different keys never share a batch
  int priority = 0;        // 0 = default level, else 1..priority_levels
  int64_t timeout_us = 0;  // requested timeout; honoured only if the policy allows override
  int64_t enqueue_us = 0;  // when it arrived (the caller's clock)
};

struct Decision {
  std::vector<uint64_t> batch;    // ids to execute together now, in order (empty = none ready)
  std::vector<uint64_t> expired;  // ids whose timeout passed (kReject): answer them "timed out"
  int64_t wake_at_us = -1;        // call poll() again at this time if nothing arrives (-1 = idle);
                                  // <= the time passed to poll() means "poll again now"
};

class DynamicBatcher {
 public:
  // The config should have passed validate(); if it has not, enqueue() refuses every item with
  // kFailedPrecondition carrying validate()'s message.
  explicit DynamicBatcher(BatcherConfig config);

  // OK, or kInvalidArgument naming the bad field.
  static Status validate(const BatcherConfig& config);

  // kUnavailable "queue full (N pending, max_queue_size M)" (global or per-level cap);
  // kInvalidArgument for batch_size < 1, batch_size > max_batch_size, a bad priority or an id
  // that is already pending.
  Status enqueue(PendingItem item);

  // Expires timed-out requests and forms at most one batch.
  Decision poll(int64_t now_us);
  // As poll(), but as if max_queue_delay_us had already passed for every request: sends the
  // best batch available now (used to flush at shutdown).
  Decision poll_without_delay(int64_t now_us);
  // Only the timeout handling of poll(): returns the rejected ids. For a caller that has no
  // instance free to run a batch but must still answer timed-out requests.
  std::vector<uint64_t> expire(int64_t now_us);
  // The earliest time a pending request's timeout passes (-1 = none).
  int64_t next_timeout_us() const;

  size_t pending() const { return pending_; }
  size_t pending_at_level(int level) const;  // level as in PendingItem::priority (0 = default)
  std::vector<uint64_t> drain();             // removes and returns everything pending, for shutdown

  const BatcherConfig& config() const { return config_; }

 private:
  struct Entry {
    PendingItem item;
    int64_t deadline_us;  // -1 = no timeout (or already moved behind by kDelay)
  };
  struct Level {
    QueuePolicy policy;
    std::deque<Entry> waiting;  // FIFO
    std::deque<Entry> delayed;  // timed out under kDelay: run after `waiting`
    size_t size() const { return waiting.size() + delayed.size(); }
  };
  // Where a candidate batch's entries are: (level index, in delayed queue?, position).
  struct Slot {
    size_t level;
    bool delayed;
    size_t pos;
  };
  struct Candidate {
    std::vector<Slot> slots;
    std::vector<int> prefix_rows;  // rows after each slot
    bool blocked = false;          // the next request of this shape does not fit
    int64_t oldest_enqueue_us = 0;
  };
  enum class DelayMode { kHonour, kIgnore };

  Decision poll_impl(int64_t now_us, DelayMode mode);
  Candidate candidate() const;
  // How many leading slots of `c` to send now (0 = wait), and when to look again if waiting.
  size_t ready_count(const Candidate& c, int64_t now_us, DelayMode mode, int64_t* wake_at) const;
  int64_t wake_after(int64_t now_us, DelayMode mode) const;
  std::vector<uint64_t> take(const Candidate& c, size_t count);
  size_t level_index(int priority) const;
  int64_t deadline_for(const PendingItem& item, const QueuePolicy& policy) const;

  BatcherConfig config_;
  Status config_status_;
  std::vector<Level> levels_;  // index 0 = highest priority
  std::unordered_set<uint64_t> ids_;
  size_t pending_ = 0;
};

}  // namespace osprey::server::scheduler
