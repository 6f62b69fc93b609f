#include "scheduler/response_order.h"

#include <utility>

namespace osprey::server::scheduler {

Status ResponseOrder::admit(uint64_t id) {
  if (seq_of_.count(id) != 0) {
    return invalid_argument("request ", id, " is already waiting for its turn to be answered");
  }
  seq_of_.emplace(id, released_ + slots_.size());
  slots_.push_back(Slot{id, nullptr, false});
  return Status::Ok();
}

Status ResponseOrder::complete(uint64_t id, Answer answer) {
  auto it = seq_of_.find(id);
  if (it == seq_of_.end()) {
    return not_found("request ", id, " was not admitted to the response order");
  }
  Slot& slot = slots_[it->second - released_];
  if (slot.answered) return failed_precondition("request ", id, " was already answered");
  slot.answer = std::move(answer);
  slot.answered = true;
  ++held_;
  return Status::Ok();
}

std::vector<ResponseOrder::Answer> ResponseOrder::take_ready() {
  std::vector<Answer> ready;
  while (!slots_.empty() && slots_.front().answered) {
    Slot& front = slots_.front();
    if (front.answer) ready.push_back(std::move(front.answer));
    seq_of_.erase(front.id);
    slots_.pop_front();
    ++released_;
    --held_;
  }
  return ready;
}

bool ResponseOrder::awaiting(uint64_t id) const {
  auto it = seq_of_.find(id);
  return it != seq_of_.end() && !slots_[it->second - released_].answered;
}

std::vector<uint64_t> ResponseOrder::unanswered() const {
  std::vector<uint64_t> ids;
  for (const Slot& s : slots_) {
    if (!s.answered) ids.push_back(s.id);
  }
  return ids;
}

Status ResponseSequencer::admit(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  return order_.admit(id);
}

Status ResponseSequencer::complete(uint64_t id, Answer answer) {
  std::unique_lock<std::mutex> lock(mu_);
  OSPREY_RETURN_IF_ERROR(order_.complete(id, std::move(answer)));
  if (releasing_) return Status::Ok();  // that thread runs this answer in its turn
  releasing_ = true;
  while (true) {
    std::vector<Answer> ready = order_.take_ready();
    if (ready.empty()) break;
    lock.unlock();
    for (Answer& a : ready) {
      try {
        a();
      } catch (...) {
        // Nobody to report it to; the order must go on.
      }
    }
    lock.lock();
  }
  releasing_ = false;
  return Status::Ok();
}

bool ResponseSequencer::admitted(uint64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return order_.admitted(id);
}

bool ResponseSequencer::awaiting(uint64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return order_.awaiting(id);
}

std::vector<uint64_t> ResponseSequencer::unanswered() const {
  std::lock_guard<std::mutex> lock(mu_);
  return order_.unanswered();
}

size_t ResponseSequencer::outstanding() const {
  std::lock_guard<std::mutex> lock(mu_);
  return order_.outstanding();
}

}  // namespace osprey::server::scheduler
