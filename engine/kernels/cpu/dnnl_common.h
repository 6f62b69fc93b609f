// Shared pieces of the oneDNN-backed CPU kernels: the engine, thread sizing, error mapping,
// fused activations as post-ops, per-run scratchpads and a small per-shape primitive cache.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <list>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/kernel.h"

namespace osprey::cpu {

// The one CPU engine all kernels use.
const dnnl::engine& dnnl_engine();

// Threads a kernel may use: the session pool's size (1 without a pool).
int kernel_threads(const KernelContext& ctx);

// Sizes oneDNN's OpenMP team for the calling thread (omp_set_num_threads is a per-thread
// setting) to `threads`. Call before creating or executing a primitive. The workers are the
// same libgomp threads the session's ThreadPool::parallel_for uses from this thread (it asks
// for its team size explicitly, so this setting only sizes oneDNN's regions); called from
// inside a parallel_for range, oneDNN runs the primitive on the calling thread alone.
void use_threads(int threads);

// Runs `fn` (which may throw dnnl::error) and turns an exception into a Status naming `what`.
template <class F>
Status guarded(const char* what, F&& fn) {
  try {
    return fn();
  } catch (const dnnl::error& e) {
    return internal_error(what, ": oneDNN error ", static_cast<int>(e.status), " (", e.what(), ")");
  } catch (const std::bad_alloc&) {
    return resource_exhausted(what, ": out of memory");
  }
}

// A fused activation (com.osprey ops' `activation` + `activation_params`).
struct Activation {
  std::string name;           // "" = none
  std::vector<float> params;  // checked count
  std::vector<float> affine;  // activation_affine: {} or {scale, shift}, applied after
};
Status read_activation(const KernelContext& ctx, Activation* act);
// Appends the activation's eltwise post-op(s) to `ops`.
void append_activation(const Activation& act, dnnl::post_ops* ops);

// Memory that a primitive reads from or writes to, 64-byte aligned, owned by one run.
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(size_t bytes);
  void* data() const { return ptr_.get(); }

 private:
  struct Free {
    size_t bytes;  // set whenever a pointer is owned (no initializer: see unique_ptr's default ctor)
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> ptr_;
};

// A oneDNN memory of `md` for weights packed at load, in storage from allocate_large (2 MiB
// pages from 2 MiB up, base/large_pages.h) that `owner` keeps: the memory must not outlive
// it. Throws std::bad_alloc when out of memory (kernels run under guarded()).
dnnl::memory large_memory(const dnnl::memory::desc& md, std::vector<std::shared_ptr<void>>* owner);

// Wraps a plain tensor buffer as oneDNN memory (no copy). Creating a memory object allocates:
// the run path binds buffers through ExecArgs instead.
inline dnnl::memory wrap(const dnnl::memory::desc& md, const void* data) {
  return dnnl::memory(md, dnnl_engine(), const_cast<void*>(data));
}

// One argument of a primitive's execution: this run's `data` laid out as `md` (the descriptor
// must outlive the call: the cache entry's), or an existing memory object (packed weights).
struct ExecArg {
  int id = 0;
  const dnnl::memory::desc* md = nullptr;
  const void* data = nullptr;
  const dnnl::memory* mem = nullptr;
};
inline ExecArg arg(int id, const dnnl::memory::desc& md, const void* data) {
  return {id, &md, data, nullptr};
}
inline ExecArg arg(int id, const dnnl::memory& m) { return {id, nullptr, nullptr, &m}; }

// The arguments of one execution, held inline (no heap).
class ExecArgs {
 public:
  static constexpr int kMax = 8;
  ExecArgs() = default;
  ExecArgs(std::initializer_list<ExecArg> args) {
    for (const ExecArg& a : args) add(a);
  }
  void add(const ExecArg& a);
  int size() const { return n_; }
  const ExecArg& operator[](int i) const { return args_[i]; }

 private:
  ExecArg args_[kMax];
  int n_ = 0;
};

// Executes `prim` on a stream of the calling thread with `args`, plus a scratchpad of
// scratch_md's size. Without heap allocation once warm: the memory objects that point oneDNN at
// this run's buffers are kept per thread (per primitive and argument) and re-pointed with
// set_data_handle, and the scratchpad is a per-thread buffer that grows to the largest asked
// for (each concurrent run is on its own thread, so nothing is shared between runs).
void execute(const dnnl::primitive& prim, const ExecArgs& args, const dnnl::memory::desc& scratch_md);

// The most memory objects a thread keeps bound (default 4096); past it the thread's map starts
// again, before an execution binds its arguments. For tests, which lower it to reach that case.
void set_bound_memory_capacity(size_t objects);

// A reorder primitive between two layouts of the same tensor, and its execution: between two
// memory objects (load-time packing), or between this run's buffers (no heap once warm).
dnnl::reorder make_reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to);
void run_reorder(const dnnl::reorder& r, const dnnl::memory& from, const dnnl::memory& to);
void run_reorder(const dnnl::reorder& r, const dnnl::memory::desc& from_md, const void* from,
                 const dnnl::memory::desc& to_md, void* to);

// A capped, least-recently-used map from a shape key to a shared, immutable entry.
// Safe for concurrent use: lookups and inserts take a mutex; entries are shared_ptrs so a
// run keeps using its entry even if it is evicted meanwhile.
template <class Entry>
class ShapeCache {
 public:
  using Key = std::vector<int64_t>;
  explicit ShapeCache(size_t capacity = 8) : capacity_(capacity) {}

  // The entry for `key`, built by `make()` (returning Result<shared_ptr<const Entry>>) when
  // absent. `make` runs under the lock, so one shape is built once.
  template <class Make>
  Result<std::shared_ptr<const Entry>> get(const Key& key, Make&& make) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = items_.begin(); it != items_.end(); ++it)
      if (it->first == key) {
        items_.splice(items_.begin(), items_, it);
        return items_.front().second;
      }
    Result<std::shared_ptr<const Entry>> made = make();
    if (!made.ok()) return made.status();
    items_.emplace_front(key, *made);
    if (items_.size() > capacity_) items_.pop_back();
    return *made;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return items_.size();
  }

 private:
  size_t capacity_;
  mutable std::mutex mu_;
  std::list<std::pair<Key, std::shared_ptr<const Entry>>> items_;
};

// Plain row-major descriptor of float32 `dims`.
dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims,
                              dnnl::memory::data_type dt = dnnl::memory::data_type::f32);

// Channels-last layouts (the channels_last pass's NHWC tensors, and nwc / ndhwc):
// [N, C, spatial...] from [N, spatial..., C] (or the shape itself when !channels_last), and back.
Shape channels_first(const Shape& s, bool channels_last);
Shape channels_last_of(const Shape& s);
// nwc / nhwc / ndhwc for a rank 3 / 4 / 5 tensor.
dnnl::memory::format_tag channels_last_tag(size_t rank);
// A tensor of `dims` ([N, C, spatial...]) as it lies at an op's boundary: plain, or
// channels-last in memory; float32 unless `dt` says otherwise.
dnnl::memory::desc boundary_desc(const dnnl::memory::dims& dims, bool channels_last,
                                 dnnl::memory::data_type dt = dnnl::memory::data_type::f32);

// The node's compute_precision attribute (set by the session in fast mode): true for "bf16",
// false when absent or "fp32"; any other value is an error naming it.
Result<bool> read_bf16_compute(const KernelContext& ctx);

// Checks that input i, when present, is a float32 tensor.
Status require_f32(const KernelContext& ctx, int i, const char* what);

}  // namespace osprey::cpu
