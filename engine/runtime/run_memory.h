// Planned memory for a session's runs: the node outputs of the top-level graph live in one
// arena per concurrent run, laid out by planner::plan_memory from the lifetimes a first run
// recorded.
//
// How: the first run with a given input signature (dtypes and shapes) records, for each
// output allocation in execution order, its size, the step (node index) that made it and the
// step at which its last reference went away (its storage's owner is released; aliases such as
// Reshape outputs extend it automatically). Allocations still referenced when the run ends
// (graph outputs and whatever they alias) escape: they stay on the heap. The plan is cached
// per signature in a capped LRU. Later runs with that signature take an arena from the
// session's pool and hand the k-th allocation its planned offset, but only when the size
// matches the plan and every allocation planned to share those bytes has been released;
// otherwise the allocation goes to the heap and the plan is dropped, to be recorded again
// (a data-dependent model: shape tensors as inputs, NonZero). An arena goes back to the pool
// only when nothing references it any more, so a tensor that escaped into an arena (only
// after such a divergence) keeps its memory alive instead of seeing it reused.
//
// Subgraph (If/Loop/Scan body) outputs and string tensors are ordinary heap tensors.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/kernel.h"
#include "osprey/session.h"
#include "planner/lru_cache.h"

namespace osprey {

struct RunPlanData;
struct RunRecording;
struct PlannedRunState;

// One run's allocator: recording (no plan yet) or planned.
class RunAllocator final : public OutputAllocator {
 public:
  ~RunAllocator() override;
  Result<Tensor> allocate(DType dtype, Shape shape, bool zero, int64_t max_elements) override;
  // The step (top-level node index) now running: allocations and releases belong to it.
  void set_step(int step);

 private:
  friend class RunMemory;
  RunAllocator() = default;
  Result<Tensor> heap(DType dtype, Shape shape, bool zero, int64_t max_elements);

  std::vector<int64_t> key_;
  int step_ = 0;
  size_t next_ = 0;  // allocations made so far
  std::shared_ptr<RunRecording> recording_;       // recording mode
  std::shared_ptr<const RunPlanData> plan_;       // planned mode
  std::shared_ptr<PlannedRunState> planned_;      // planned mode
  std::shared_ptr<std::byte> arena_;              // planned mode: plan_->arena_bytes
  bool diverged_ = false;
  RunMemoryStats stats_;
};

// Hash of an input signature.
struct KeyHash {
  size_t operator()(const std::vector<int64_t>& k) const {
    size_t h = 1469598103934665603ull;
    for (int64_t v : k) h = (h ^ static_cast<size_t>(v)) * 1099511628211ull;
    return h;
  }
};

class RunMemory {
 public:
  explicit RunMemory(size_t max_plans = 8) : plans_(max_plans) {}

  // The allocator for a run whose inputs have signature `key`.
  std::unique_ptr<RunAllocator> begin(std::vector<int64_t> key);
  // Call after the run's frame is gone (only its outputs remain): stores a recorded plan (of a
  // run that succeeded), drops a diverged one, returns the arena to the pool when nothing
  // references it.
  RunMemoryStats finish(std::unique_ptr<RunAllocator> run, bool succeeded);

  // Drops every cached plan and pooled arena.
  void trim();
  SessionMemoryUsage usage() const;

 private:
  mutable std::mutex mu_;
  planner::LruCache<std::vector<int64_t>, std::shared_ptr<const RunPlanData>, KeyHash> plans_;
  std::vector<std::pair<size_t, std::shared_ptr<std::byte>>> pool_;  // idle arenas and sizes
};

}  // namespace osprey
