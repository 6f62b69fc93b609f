// A capped least-recently-used cache, for per-shape memory plans (and anything else keyed by
// shape): the runtime must not keep an unbounded map of every input shape it has seen.
// Not thread-safe: callers that share one lock it.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <unordered_map>
#include <utility>

namespace osprey::planner {

template <class Key, class Value, class Hash = std::hash<Key>, class KeyEqual = std::equal_to<Key>>
class LruCache {
 public:
  // capacity 0 disables the cache: put() stores nothing and get() always misses.
  explicit LruCache(size_t capacity) : capacity_(capacity) {}

  // The cached value, now the most recently used; nullptr on a miss. The pointer stays valid
  // until the entry is evicted, replaced or erased.
  Value* get(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) {
      ++misses_;
      return nullptr;
    }
    ++hits_;
    entries_.splice(entries_.begin(), entries_, it->second);
    return &it->second->second;
  }

  // Inserts or replaces `key`, making it the most recently used; evicts the least recently used
  // entry when over capacity. Returns the stored value (nullptr when capacity is 0).
  Value* put(const Key& key, Value value) {
    if (capacity_ == 0) return nullptr;
    auto it = index_.find(key);
    if (it != index_.end()) {
      it->second->second = std::move(value);
      entries_.splice(entries_.begin(), entries_, it->second);
      return &it->second->second;
    }
    entries_.emplace_front(key, std::move(value));
    index_.emplace(key, entries_.begin());
    while (entries_.size() > capacity_) {
      index_.erase(entries_.back().first);
      entries_.pop_back();
      ++evictions_;
    }
    return &entries_.front().second;
  }

  // True if present; does not change the recency order or the hit/miss counts.
  bool contains(const Key& key) const { return index_.count(key) != 0; }
  bool erase(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    entries_.erase(it->second);
    index_.erase(it);
    return true;
  }
  void clear() {
    entries_.clear();
    index_.clear();
  }

  // Keys from most to least recently used.
  template <class F>
  void for_each_key(F&& f) const {
    for (const auto& e : entries_) f(e.first);
  }

  size_t size() const { return entries_.size(); }
  size_t capacity() const { return capacity_; }
  size_t evictions() const { return evictions_; }
  size_t hits() const { return hits_; }
  size_t misses() const { return misses_; }

 private:
  using Entry = std::pair<Key, Value>;
  size_t capacity_;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<Key, typename std::list<Entry>::iterator, Hash, KeyEqual> index_;
  size_t evictions_ = 0;
  size_t hits_ = 0;
  size_t misses_ = 0;
};

}  // namespace osprey::planner
