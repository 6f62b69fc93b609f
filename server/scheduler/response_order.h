// Responses in arrival order (dynamic_batching.preserve_ordering).
//
// ResponseOrder is the pure sequencer: every request accepted by the queue is admitted in the
// order it arrived; its answer (a response, or an error: queue timeout, failed batch) is handed
// in with complete() whenever it is ready, and take_ready() gives back the answers whose turn has
// come: an answer is released only after every earlier admitted request's answer was. No locks,
// no threads.
//
// ResponseSequencer is the thread-safe form used by BatchQueue: complete() is called from any
// thread, and the answers run in order, one at a time, on whichever thread filled the gap that
// held them back (never under a lock). A thread whose answer must wait returns at once.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "osprey/status.h"

namespace osprey::server::scheduler {

class ResponseOrder {
 public:
  // Sends one request's answer to its client. Runs once, in the request's turn.
  using Answer = std::function<void()>;

  // The request `id` arrived: its answer goes after those of every request admitted before it.
  // kInvalidArgument if `id` is admitted and not yet released.
  Status admit(uint64_t id);
  // The answer for `id` is ready. kNotFound if `id` was not admitted (or was already released),
  // kFailedPrecondition if it already has an answer; the answer is dropped in both cases.
  Status complete(uint64_t id, Answer answer);
  // Removes and returns the answers that may go now, in arrival order (empty = the oldest
  // admitted request has no answer yet, or nothing is held).
  std::vector<Answer> take_ready();

  bool admitted(uint64_t id) const { return seq_of_.count(id) != 0; }
  // Admitted and still waiting for its answer.
  bool awaiting(uint64_t id) const;
  // Admitted requests that have no answer yet, in arrival order.
  std::vector<uint64_t> unanswered() const;
  size_t outstanding() const { return slots_.size(); }  // admitted, not yet released
  size_t held() const { return held_; }                 // answered, waiting for their turn

 private:
  struct Slot {
    uint64_t id = 0;
    Answer answer;  // empty until complete()
    bool answered = false;
  };
  std::deque<Slot> slots_;                         // slots_[i] has sequence number released_ + i
  std::unordered_map<uint64_t, uint64_t> seq_of_;  // id -> sequence number
  uint64_t released_ = 0;                          // sequence number of slots_.front()
  size_t held_ = 0;
};

class ResponseSequencer {
 public:
  using Answer = ResponseOrder::Answer;

  Status admit(uint64_t id);
  // Hands in the answer for `id` and runs every answer whose turn has come, in order, on this
  // thread, unless another thread is already doing so (it picks this one up). An answer that
  // throws counts as sent: the exception is dropped so that later answers still go.
  // Errors as ResponseOrder::complete (the answer is not run).
  Status complete(uint64_t id, Answer answer);
  bool admitted(uint64_t id) const;
  bool awaiting(uint64_t id) const;
  std::vector<uint64_t> unanswered() const;
  size_t outstanding() const;

 private:
  mutable std::mutex mu_;
  ResponseOrder order_;
  bool releasing_ = false;  // a thread is running answers
};

}  // namespace osprey::server::scheduler
