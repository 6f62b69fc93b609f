#include "runtime/run_memory.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "base/large_pages.h"
#include "planner/memory_plan.h"

namespace osprey {

namespace {
constexpr size_t kAlign = 64;
constexpr int kNeverReleased = -1;

size_t rounded_bytes(DType dtype, int64_t numel) {
  size_t bytes = static_cast<size_t>(numel) * dtype_size(dtype);
  if (bytes == 0) bytes = kAlign;
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

// In transparent huge pages from 2 MiB up (base/large_pages.h).
std::shared_ptr<std::byte> new_arena(size_t bytes) {
  void* p = allocate_large(bytes);
  if (!p) throw std::bad_alloc();
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(p),
                                    [](std::byte* q) { free_large(q); });
}
}  // namespace

// What a recording run learns: per allocation, its size and lifetime in steps.
struct RunRecording {
  struct Slot {
    size_t bytes = 0;
    int first = 0;
    int last = kNeverReleased;
  };
  std::mutex mu;
  std::vector<Slot> slots;
  std::atomic<int> step{0};
  void released(size_t k) {
    std::lock_guard<std::mutex> lock(mu);
    slots[k].last = step.load();
  }
};

// A plan: per allocation, its size and arena offset (-1 = heap), and the earlier allocations
// whose bytes it shares (they must be released before it is handed out).
struct RunPlanData {
  std::vector<size_t> bytes;
  std::vector<int64_t> offsets;
  std::vector<std::vector<uint32_t>> shares_with;
  size_t arena_bytes = 0;
};

struct PlannedRunState {
  enum : uint8_t { kUnused, kInArena, kReleased };
  explicit PlannedRunState(size_t n) : slots(n) {}
  std::vector<std::atomic<uint8_t>> slots;
};

RunAllocator::~RunAllocator() = default;

void RunAllocator::set_step(int step) {
  step_ = step;
  if (recording_) recording_->step = step;
}

Result<Tensor> RunAllocator::heap(DType dtype, Shape shape, bool zero, int64_t max_elements) {
  auto t = zero ? Tensor::create(dtype, std::move(shape), max_elements)
                : Tensor::create_uninitialized(dtype, std::move(shape), max_elements);
  if (t.ok()) {
    ++stats_.heap_outputs;
    stats_.heap_output_bytes += static_cast<int64_t>(t->nbytes());
  }
  return t;
}

Result<Tensor> RunAllocator::allocate(DType dtype, Shape shape, bool zero, int64_t max_elements) {
  OSPREY_ASSIGN_OR_RETURN(int64_t numel, Tensor::checked_numel(dtype, shape, max_elements));
  const size_t bytes = rounded_bytes(dtype, numel);
  const size_t k = next_++;
  if (recording_) {
    OSPREY_ASSIGN_OR_RETURN(Tensor t, heap(dtype, shape, zero, max_elements));
    {
      std::lock_guard<std::mutex> lock(recording_->mu);
      recording_->slots.push_back({bytes, step_, kNeverReleased});
    }
    // The returned tensor shares t's memory; its owner notes the step it is released at.
    auto holder = std::make_shared<Tensor>(t);
    std::shared_ptr<void> owner(holder.get(), [holder, rec = recording_, k](void*) mutable {
      rec->released(k);
      holder.reset();
    });
    return Tensor::wrap(dtype, std::move(shape), t.raw_data(), std::move(owner));
  }
  const RunPlanData& p = *plan_;
  bool fits = k < p.offsets.size() && p.offsets[k] >= 0 && p.bytes[k] == bytes;
  if (fits)
    for (uint32_t j : p.shares_with[k])
      if (planned_->slots[j].load() == PlannedRunState::kInArena) fits = false;  // still alive
  if (!fits) {
    if (k >= p.offsets.size() || p.offsets[k] >= 0) diverged_ = true;  // not what was recorded
    return heap(dtype, std::move(shape), zero, max_elements);
  }
  planned_->slots[k] = PlannedRunState::kInArena;
  std::byte* data = arena_.get() + p.offsets[k];
  if (zero) std::memset(data, 0, bytes);
  ++stats_.arena_outputs;
  // The owner keeps the arena alive and marks the slot free when the last reference goes.
  std::shared_ptr<void> owner(data, [state = planned_, arena = arena_, k](void*) {
    state->slots[k] = PlannedRunState::kReleased;
  });
  return Tensor::wrap(dtype, std::move(shape), data, std::move(owner));
}

std::unique_ptr<RunAllocator> RunMemory::begin(std::vector<int64_t> key) {
  std::unique_ptr<RunAllocator> run(new RunAllocator());
  std::lock_guard<std::mutex> lock(mu_);
  if (auto* plan = plans_.get(key)) {
    run->plan_ = *plan;
    run->planned_ = std::make_shared<PlannedRunState>(run->plan_->offsets.size());
    const size_t need = run->plan_->arena_bytes;
    for (size_t i = 0; i < pool_.size(); ++i)
      if (pool_[i].first >= need) {
        run->arena_ = std::move(pool_[i].second);
        pool_.erase(pool_.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    if (!run->arena_) run->arena_ = new_arena(need);
    run->stats_.planned = true;
    run->stats_.arena_bytes = static_cast<int64_t>(need);
  } else {
    run->recording_ = std::make_shared<RunRecording>();
  }
  run->key_ = std::move(key);
  return run;
}

namespace {
std::shared_ptr<const RunPlanData> make_plan(const std::vector<RunRecording::Slot>& slots) {
  auto p = std::make_shared<RunPlanData>();
  std::vector<planner::BufferRequest> requests;
  std::vector<size_t> planned;  // slot of each request
  p->bytes.resize(slots.size());
  p->offsets.assign(slots.size(), -1);
  p->shares_with.resize(slots.size());
  for (size_t k = 0; k < slots.size(); ++k) {
    p->bytes[k] = slots[k].bytes;
    if (slots[k].last == kNeverReleased) continue;  // escaped: heap
    planner::BufferRequest r;
    r.size_bytes = slots[k].bytes;
    r.first_step = slots[k].first;
    r.last_step = std::max(slots[k].first, slots[k].last);
    requests.push_back(r);
    planned.push_back(k);
  }
  const planner::MemoryPlan mp = planner::plan_memory(requests, kAlign);
  p->arena_bytes = mp.arena_bytes;
  for (size_t i = 0; i < planned.size(); ++i) p->offsets[planned[i]] = static_cast<int64_t>(mp.offsets[i]);
  // Earlier slots whose bytes overlap: O(n^2) over the planned slots, once per signature.
  for (size_t i = 0; i < planned.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const size_t a = planned[i], b = planned[j];
      const int64_t ao = p->offsets[a], bo = p->offsets[b];
      if (ao < bo + static_cast<int64_t>(p->bytes[b]) && bo < ao + static_cast<int64_t>(p->bytes[a]))
        p->shares_with[a].push_back(static_cast<uint32_t>(b));
    }
  return p;
}
}  // namespace

RunMemoryStats RunMemory::finish(std::unique_ptr<RunAllocator> run, bool succeeded) {
  RunMemoryStats stats = run->stats_;
  stats.diverged = run->diverged_;
  std::shared_ptr<const RunPlanData> recorded;
  if (run->recording_ && succeeded) {
    std::vector<RunRecording::Slot> slots;
    {
      std::lock_guard<std::mutex> lock(run->recording_->mu);
      slots = run->recording_->slots;
    }
    recorded = make_plan(slots);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (recorded) plans_.put(run->key_, std::move(recorded));
  if (run->diverged_) plans_.erase(run->key_);
  // Nothing but this run refers to the arena: keep it for the next run (at most one idle
  // arena per signature's worth of concurrency; the pool is bounded by trim()).
  if (run->arena_ && run->arena_.use_count() == 1 && pool_.size() < 4)
    pool_.emplace_back(static_cast<size_t>(stats.arena_bytes), std::move(run->arena_));
  return stats;
}

void RunMemory::trim() {
  std::lock_guard<std::mutex> lock(mu_);
  plans_.clear();
  pool_.clear();
}

SessionMemoryUsage RunMemory::usage() const {
  std::lock_guard<std::mutex> lock(mu_);
  SessionMemoryUsage u;
  u.cached_plans = static_cast<int64_t>(plans_.size());
  u.pooled_arenas = static_cast<int64_t>(pool_.size());
  for (const auto& [bytes, arena] : pool_) u.pooled_arena_bytes += static_cast<int64_t>(bytes);
  return u;
}

}  // namespace osprey
