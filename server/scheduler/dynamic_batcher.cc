#include "scheduler/dynamic_batcher.h"

#include <algorithm>
#include <utility>

namespace osprey::server::scheduler {
namespace {

Status validate_policy(const QueuePolicy& p, const std::string& where) {
  if (p.default_timeout_us < 0) {
    return invalid_argument(where, ".default_timeout_us must be >= 0 (got ", p.default_timeout_us,
                            ")");
  }
  if (p.max_queue_size < 0) {
    return invalid_argument(where, ".max_queue_size must be >= 0 (got ", p.max_queue_size, ")");
  }
  return Status::Ok();
}

int64_t min_deadline(int64_t a, int64_t b) {
  if (a < 0) return b;
  if (b < 0) return a;
  return std::min(a, b);
}

}  // namespace

Status DynamicBatcher::validate(const BatcherConfig& c) {
  if (c.max_batch_size < 0) {
    return invalid_argument("max_batch_size must be >= 0 (got ", c.max_batch_size, ")");
  }
  if (c.max_batch_size == 0 && !c.preferred_batch_sizes.empty()) {
    return invalid_argument(
        "preferred_batch_sizes given but max_batch_size is 0 (the model does not batch)");
  }
  for (size_t i = 0; i < c.preferred_batch_sizes.size(); ++i) {
    const int p = c.preferred_batch_sizes[i];
    if (p < 1 || p > c.max_batch_size) {
      return invalid_argument("preferred_batch_sizes[", i, "] = ", p, " must be in [1, ",
                              c.max_batch_size, "] (max_batch_size)");
    }
    if (i > 0 && p <= c.preferred_batch_sizes[i - 1]) {
      return invalid_argument("preferred_batch_sizes must be strictly ascending: [", i, "] = ", p,
                              " after [", i - 1, "] = ", c.preferred_batch_sizes[i - 1]);
    }
  }
  if (c.max_queue_delay_us < 0) {
    return invalid_argument("max_queue_delay_us must be >= 0 (got ", c.max_queue_delay_us, ")");
  }
  if (c.priority_levels < 0) {
    return invalid_argument("priority_levels must be >= 0 (got ", c.priority_levels, ")");
  }
  if (c.priority_levels == 0 && c.default_priority_level != 0) {
    return invalid_argument("default_priority_level is ", c.default_priority_level,
                            " but priority_levels is 0 (no levels)");
  }
  if (c.priority_levels > 0 &&
      (c.default_priority_level < 1 || c.default_priority_level > c.priority_levels)) {
    return invalid_argument("default_priority_level ", c.default_priority_level, " must be in [1, ",
                            c.priority_levels, "] (priority_levels)");
  }
  OSPREY_RETURN_IF_ERROR(validate_policy(c.default_policy, "default_policy"));
  for (const auto& [level, policy] : c.priority_policies) {
    if (level < 1 || level > c.priority_levels) {
      return invalid_argument("priority_policies has level ", level, ", not in [1, ",
                              c.priority_levels, "] (priority_levels)");
    }
    OSPREY_RETURN_IF_ERROR(validate_policy(policy, str_cat("priority_policies[", level, "]")));
  }
  if (c.max_queue_size < 1) {
    return invalid_argument("max_queue_size must be >= 1 (got ", c.max_queue_size,
                            "); the queue is never unbounded");
  }
  return Status::Ok();
}

DynamicBatcher::DynamicBatcher(BatcherConfig config)
    : config_(std::move(config)), config_status_(validate(config_)) {
  if (!config_status_.ok()) {
    config_status_ = failed_precondition("invalid batcher config: ", config_status_.message());
    levels_.resize(1);
    return;
  }
  const int n = std::max(1, config_.priority_levels);
  levels_.resize(n);
  for (int i = 0; i < n; ++i) {
    auto it = config_.priority_policies.find(i + 1);
    levels_[i].policy = it != config_.priority_policies.end() && config_.priority_levels > 0
                            ? it->second
                            : config_.default_policy;
  }
}

size_t DynamicBatcher::level_index(int priority) const {
  if (config_.priority_levels == 0) return 0;
  if (priority == 0) return static_cast<size_t>(config_.default_priority_level - 1);
  return static_cast<size_t>(priority - 1);
}

int64_t DynamicBatcher::deadline_for(const PendingItem& item, const QueuePolicy& policy) const {
  int64_t timeout = policy.default_timeout_us;
  if (policy.allow_timeout_override && item.timeout_us > 0) {
    timeout = timeout == 0 ? item.timeout_us : std::min(timeout, item.timeout_us);
  }
  return timeout > 0 ? item.enqueue_us + timeout : -1;
}

Status DynamicBatcher::enqueue(PendingItem item) {
  if (!config_status_.ok()) return config_status_;
  if (item.batch_size < 1) {
    return invalid_argument("request ", item.id, ": batch_size must be >= 1 (got ", item.batch_size,
                            ")");
  }
  if (config_.max_batch_size > 0 && item.batch_size > config_.max_batch_size) {
    return invalid_argument("request ", item.id, ": batch size ", item.batch_size,
                            " exceeds the model's max_batch_size ", config_.max_batch_size);
  }
  if (item.priority < 0 || item.priority > config_.priority_levels) {
    if (config_.priority_levels == 0) {
      return invalid_argument("request ", item.id, ": priority ", item.priority,
                              " given but the model has no priority levels (only 0 is valid)");
    }
    return invalid_argument("request ", item.id, ": priority ", item.priority, " must be in [0, ",
                            config_.priority_levels, "] (0 = default level)");
  }
  if (item.timeout_us < 0) {
    return invalid_argument("request ", item.id, ": timeout must be >= 0 µs (got ", item.timeout_us,
                            ")");
  }
  if (ids_.count(item.id) != 0) {
    return invalid_argument("request id ", item.id, " is already queued");
  }
  if (pending_ >= static_cast<size_t>(config_.max_queue_size)) {
    return unavailable("queue full (", pending_, " pending, max_queue_size ",
                       config_.max_queue_size, ")");
  }
  const size_t li = level_index(item.priority);
  Level& level = levels_[li];
  if (level.policy.max_queue_size > 0 &&
      level.size() >= static_cast<size_t>(level.policy.max_queue_size)) {
    return unavailable("queue full (", level.size(), " pending at priority level ", li + 1,
                       ", max_queue_size ", level.policy.max_queue_size, ")");
  }
  const int64_t deadline = deadline_for(item, level.policy);
  ids_.insert(item.id);
  level.waiting.push_back(Entry{std::move(item), deadline});
  ++pending_;
  return Status::Ok();
}

std::vector<uint64_t> DynamicBatcher::expire(int64_t now_us) {
  std::vector<uint64_t> rejected;
  for (Level& level : levels_) {
    auto due = [now_us](const Entry& e) { return e.deadline_us >= 0 && e.deadline_us <= now_us; };
    if (std::none_of(level.waiting.begin(), level.waiting.end(), due)) continue;
    std::deque<Entry> kept;
    for (Entry& e : level.waiting) {
      if (!due(e)) {
        kept.push_back(std::move(e));
      } else if (level.policy.timeout_action == QueuePolicy::TimeoutAction::kReject) {
        rejected.push_back(e.item.id);
        ids_.erase(e.item.id);
        --pending_;
      } else {
        e.deadline_us = -1;  // runs after the others; never rejected later
        level.delayed.push_back(std::move(e));
      }
    }
    level.waiting = std::move(kept);
  }
  return rejected;
}

int64_t DynamicBatcher::next_timeout_us() const {
  int64_t next = -1;
  for (const Level& level : levels_) {
    for (const Entry& e : level.waiting) next = min_deadline(next, e.deadline_us);
  }
  return next;
}

DynamicBatcher::Candidate DynamicBatcher::candidate() const {
  Candidate c;
  const std::string* key = nullptr;
  int rows = 0;
  for (size_t li = 0; li < levels_.size(); ++li) {
    for (bool delayed : {false, true}) {
      const std::deque<Entry>& q = delayed ? levels_[li].delayed : levels_[li].waiting;
      for (size_t pos = 0; pos < q.size(); ++pos) {
        const PendingItem& item = q[pos].item;
        if (key == nullptr) {
          key = &item.shape_key;
          c.oldest_enqueue_us = item.enqueue_us;
        } else if (item.shape_key != *key) {
          continue;  // waits for a batch of its own shape
        }
        if (config_.max_batch_size == 0) {
          c.slots.push_back({li, delayed, pos});
          c.prefix_rows.push_back(1);
          return c;  // the model does not batch: one request per batch
        }
        if (rows + item.batch_size > config_.max_batch_size) {
          c.blocked = true;
          return c;
        }
        rows += item.batch_size;
        c.slots.push_back({li, delayed, pos});
        c.prefix_rows.push_back(rows);
        c.oldest_enqueue_us = std::min(c.oldest_enqueue_us, item.enqueue_us);
      }
    }
  }
  return c;
}

size_t DynamicBatcher::ready_count(const Candidate& c, int64_t now_us, DelayMode mode,
                                   int64_t* wake_at) const {
  *wake_at = -1;
  if (c.slots.empty()) return 0;
  if (config_.max_batch_size == 0) return 1;
  const int rows = c.prefix_rows.back();
  if (rows >= config_.max_batch_size) return c.slots.size();
  const auto& preferred = config_.preferred_batch_sizes;
  // The longest prefix whose rows are a preferred size.
  size_t best = 0;
  int best_rows = 0;
  for (size_t i = 0; i < c.prefix_rows.size(); ++i) {
    if (std::binary_search(preferred.begin(), preferred.end(), c.prefix_rows[i])) {
      best = i + 1;
      best_rows = c.prefix_rows[i];
    }
  }
  if (!preferred.empty() && best_rows == preferred.back()) return best;  // largest preferred
  if (c.blocked) return c.slots.size();  // cannot grow: waiting would only add latency
  const int64_t send_at = c.oldest_enqueue_us + config_.max_queue_delay_us;
  if (mode == DelayMode::kIgnore || now_us >= send_at) return best > 0 ? best : c.slots.size();
  *wake_at = send_at;
  return 0;
}

std::vector<uint64_t> DynamicBatcher::take(const Candidate& c, size_t count) {
  std::vector<uint64_t> ids;
  ids.reserve(count);
  // Positions per queue, erased from the back so earlier positions stay valid.
  std::map<std::pair<size_t, bool>, std::vector<size_t>> positions;
  for (size_t i = 0; i < count; ++i) {
    const Slot& s = c.slots[i];
    std::deque<Entry>& q = s.delayed ? levels_[s.level].delayed : levels_[s.level].waiting;
    ids.push_back(q[s.pos].item.id);
    positions[{s.level, s.delayed}].push_back(s.pos);
  }
  for (auto& [where, pos] : positions) {
    std::deque<Entry>& q =
        where.second ? levels_[where.first].delayed : levels_[where.first].waiting;
    std::sort(pos.rbegin(), pos.rend());
    for (size_t p : pos) q.erase(q.begin() + static_cast<std::ptrdiff_t>(p));
  }
  for (uint64_t id : ids) ids_.erase(id);
  pending_ -= ids.size();
  return ids;
}

int64_t DynamicBatcher::wake_after(int64_t now_us, DelayMode mode) const {
  int64_t wake = -1;
  const size_t ready = ready_count(candidate(), now_us, mode, &wake);
  if (ready > 0) wake = now_us;
  return min_deadline(wake, next_timeout_us());
}

Decision DynamicBatcher::poll_impl(int64_t now_us, DelayMode mode) {
  Decision d;
  d.expired = expire(now_us);
  const Candidate c = candidate();
  int64_t unused = -1;
  const size_t ready = ready_count(c, now_us, mode, &unused);
  if (ready > 0) d.batch = take(c, ready);
  d.wake_at_us = wake_after(now_us, mode);
  return d;
}

Decision DynamicBatcher::poll(int64_t now_us) {
  return poll_impl(now_us, DelayMode::kHonour);
}

Decision DynamicBatcher::poll_without_delay(int64_t now_us) {
  return poll_impl(now_us, DelayMode::kIgnore);
}

size_t DynamicBatcher::pending_at_level(int level) const {
  if (level < 0 || level > config_.priority_levels || !config_status_.ok()) return 0;
  return levels_[level_index(level)].size();
}

std::vector<uint64_t> DynamicBatcher::drain() {
  std::vector<uint64_t> ids;
  ids.reserve(pending_);
  for (Level& level : levels_) {
    for (const Entry& e : level.waiting) ids.push_back(e.item.id);
    for (const Entry& e : level.delayed) ids.push_back(e.item.id);
    level.waiting.clear();
    level.delayed.clear();
  }
  ids_.clear();
  pending_ = 0;
  return ids;
}

}  // namespace osprey::server::scheduler
