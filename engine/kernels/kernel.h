// What a kernel sees: its node's attributes, its inputs, and where to put outputs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "osprey/status.h"
#include "osprey/tensor.h"
#include "threading/thread_pool.h"

namespace osprey {

class KernelContext;
using KernelFn = Status (*)(KernelContext&);

// What a kernel prepares once per node at session load and reuses on every run (weights
// reordered into a fast layout, cached primitives). One state is shared by all concurrent
// runs of a session, so an implementation must be safe to use from many threads at once.
class KernelState {
 public:
  virtual ~KernelState() = default;

  // Packed constants. True when this state keeps its own copy of the node's constant input
  // `input` in every form the kernel can need (e.g. weights prepacked at load), so that the
  // kernel can run without reading that input's data.
  virtual bool holds_constant(int input) const {
    (void)input;
    return false;
  }
  // The session calls this (after holds_constant(input) said true) when it frees the plain
  // tensor because no other node reads it. From then on the kernel receives, at that input, a
  // tensor with the constant's dtype and shape and no data (raw_data() == nullptr).
  virtual void constant_released(int input) { (void)input; }
  // How the kernel last ran its node, for profiles: the primitive or form it picked (oneDNN's
  // implementation name, or one of ours); empty where the kernel does not say.
  virtual std::string form() const { return {}; }
};

// True for the stand-in of a constant whose plain data a kernel state holds in its own form
// (see KernelState::constant_released): a shape without data.
inline bool is_released_constant(const Tensor& t) { return t.numel() > 0 && t.raw_data() == nullptr; }

// A kernel's optional prepare step. It sees a KernelContext whose inputs are the node's
// constant inputs (initializers) only; every other input reads as absent. It may return
// nullptr (nothing worth preparing). Errors fail the session load.
using PrepareFn = Result<std::shared_ptr<KernelState>> (*)(const KernelContext&);

// Runs nested graphs for control-flow kernels (If, Loop, Scan); implemented by the executor.
class SubgraphRunner {
 public:
  virtual ~SubgraphRunner() = default;
  // Binds `inputs` to g.inputs in order, runs g, returns g.outputs in order.
  virtual Result<std::vector<Value>> run(const ir::Graph& g, std::vector<Value> inputs) = 0;
};

// Where a node's outputs get their memory when the session plans it (runtime/run_memory.h);
// without one, outputs are ordinary heap tensors.
class OutputAllocator {
 public:
  virtual ~OutputAllocator() = default;
  // A tensor of `shape` (zero-filled when `zero`) after the checks Tensor::create makes.
  virtual Result<Tensor> allocate(DType dtype, Shape shape, bool zero, int64_t max_elements) = 0;
};

class KernelContext {
 public:
  KernelContext(const ir::Node& node, std::vector<const Value*> inputs, std::vector<Value>* outputs,
                int64_t max_elements, SubgraphRunner* subgraphs, ThreadPool* pool = nullptr)
      : node_(node),
        inputs_(std::move(inputs)),
        outputs_(outputs),
        max_elements_(max_elements),
        subgraphs_(subgraphs),
        pool_(pool) {}

  const ir::Node& node() const { return node_; }
  // The inputs vector, for the caller to reuse its storage (the context reads no input after).
  std::vector<const Value*> release_inputs() { return std::move(inputs_); }
  int opset() const { return node_.opset; }

  // ---- inputs
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  // True when input i exists and was not omitted (optional inputs may be "").
  bool has_input(int i) const {
    return i < num_inputs() && inputs_[i] != nullptr && !inputs_[i]->is_none();
  }
  // The tensor at input i; the executor guarantees it is a tensor unless the
  // kernel is registered as taking sequences (see input_value).
  // An absent input reads as an undefined tensor / empty value, never out of bounds.
  const Tensor& input(int i) const { return input_value(i).tensor; }
  const Value& input_value(int i) const {
    static const Value kAbsent;
    return i >= 0 && i < num_inputs() && inputs_[i] ? *inputs_[i] : kAbsent;
  }

  // ---- outputs
  int num_outputs() const { return static_cast<int>(outputs_->size()); }
  // False when output i is omitted by the node (optional outputs may be "").
  bool output_requested(int i) const {
    return i < num_outputs() && node_.outputs[i] != ir::kNoValue;
  }
  // Allocates a zero-filled tensor after checking the element limit.
  Result<Tensor> new_tensor(DType dtype, Shape shape) const {
    return Tensor::create(dtype, std::move(shape), max_elements_);
  }
  // Shorthand: allocate and set output i in one go; returns the tensor to fill.
  // Outputs come from the run's OutputAllocator when the executor set one (planned memory).
  Result<Tensor> new_output(int i, DType dtype, Shape shape) {
    auto t = allocator_ && dtype != DType::kString
                 ? allocator_->allocate(dtype, std::move(shape), /*zero=*/true, max_elements_)
                 : new_tensor(dtype, std::move(shape));
    if (t.ok()) set_output(i, t.value());
    return t;
  }
  // As new_output, without zero-filling: for kernels that write every element.
  Result<Tensor> new_output_uninitialized(int i, DType dtype, Shape shape) {
    auto t = allocator_ && dtype != DType::kString
                 ? allocator_->allocate(dtype, std::move(shape), /*zero=*/false, max_elements_)
                 : Tensor::create_uninitialized(dtype, std::move(shape), max_elements_);
    if (t.ok()) set_output(i, t.value());
    return t;
  }
  // True when the executor marked input `in` donatable (see set_donatable) and no other tensor
  // or view holds its storage: an output may then take over its bytes.
  bool input_donatable(int in) const {
    if (in < 0 || in >= 64 || in >= num_inputs() || !(donatable_ >> in & 1u)) return false;
    const Tensor& t = inputs_[static_cast<size_t>(in)]->tensor;
    return t.raw_data() != nullptr && t.sole_owner();
  }
  // Output i written over input `in`'s bytes when that input is donatable and its tensor has
  // `dtype` and exactly the output's byte size; otherwise a new uninitialized output. The
  // kernel must read each element of that input it needs before (or as) it writes the same
  // element of the output: an element-wise op, or a kernel that takes the input as the output's
  // initial value (a residual sum). Returns the tensor to fill (compare data pointers to tell
  // which it is).
  Result<Tensor> new_output_over_input(int i, int in, DType dtype, Shape shape) {
    if (input_donatable(in)) {
      const Tensor& t = inputs_[static_cast<size_t>(in)]->tensor;
      if (t.dtype() == dtype && shape_numel(shape) == t.numel()) {
        Tensor y = t.reshaped(std::move(shape));
        set_output(i, y);
        return y;
      }
    }
    return new_output_uninitialized(i, dtype, std::move(shape));
  }
  // Bit i set: input i is a tensor made in this run that no later node reads and that this
  // node reads through input i only, so an output may take over its bytes (executor only).
  void set_donatable(uint64_t mask) { donatable_ = mask; }
  void set_allocator(OutputAllocator* a) { allocator_ = a; }
  void set_output(int i, Tensor t) {
    if (i < num_outputs()) (*outputs_)[i] = Value(std::move(t));
  }
  void set_output_value(int i, Value v) {
    if (i < num_outputs()) (*outputs_)[i] = std::move(v);
  }
  int64_t max_elements() const { return max_elements_; }

  // ---- attributes (default returned when absent). An attribute of another type than
  // asked for also returns the default and records an error that the executor reports
  // after the kernel returns ("attribute 'axis' must be int, got string").
  bool has_attr(const std::string& name) const { return node_.find_attribute(name) != nullptr; }
  int64_t attr_int(const std::string& name, int64_t def) const;
  float attr_float(const std::string& name, float def) const;
  std::string attr_string(const std::string& name, const std::string& def) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> def = {}) const;
  std::vector<float> attr_floats(const std::string& name, std::vector<float> def = {}) const;
  std::vector<std::string> attr_strings(const std::string& name,
                                        std::vector<std::string> def = {}) const;
  const Tensor* attr_tensor(const std::string& name) const;  // nullptr if absent
  const ir::Graph* attr_graph(const std::string& name) const;

  const std::string& attribute_error() const { return attr_error_; }

  // ---- threads: the session's pool (nullptr = run on the calling thread)
  ThreadPool* pool() const { return pool_; }
  // fn(begin, end) over [0, n), split across the pool when the work is worth it.
  template <class F>
  void parallel_for(int64_t n, int64_t cost_per_item, F&& fn) const {
    if (pool_) pool_->parallel_for(n, cost_per_item, std::forward<F>(fn));
    else if (n > 0) fn(int64_t{0}, n);
  }

  // ---- shape hints (prepare step only): the declared shape of a non-constant input, when the
  // graph knows all its dims (a symbolic first dim reads as 1: a guess at the batch). For
  // choosing layouts ahead of the first run; the run's real shapes may differ.
  bool shape_hint(int i, Shape* shape) const {
    if (i < 0 || static_cast<size_t>(i) >= shape_hints_.size() || !shape_hints_[static_cast<size_t>(i)].known)
      return false;
    *shape = shape_hints_[static_cast<size_t>(i)].shape;
    return true;
  }
  void set_shape_hint(int i, Shape shape) {
    if (i < 0) return;
    if (static_cast<size_t>(i) >= shape_hints_.size()) shape_hints_.resize(static_cast<size_t>(i) + 1);
    shape_hints_[static_cast<size_t>(i)] = {true, std::move(shape)};
  }

  // ---- prepared state: what the kernel's prepare step returned for this node (nullptr when
  // it has none, e.g. when run outside a session). Kernels must also run without it.
  KernelState* state() const { return state_; }
  void set_state(KernelState* s) { state_ = s; }

  // ---- control flow
  Result<std::vector<Value>> run_subgraph(const ir::Graph& g, std::vector<Value> inputs) {
    if (!subgraphs_) return internal_error("no subgraph runner");
    return subgraphs_->run(g, std::move(inputs));
  }

 private:
  const ir::Node& node_;
  std::vector<const Value*> inputs_;
  std::vector<Value>* outputs_;
  int64_t max_elements_;
  SubgraphRunner* subgraphs_;
  ThreadPool* pool_;
  KernelState* state_ = nullptr;
  OutputAllocator* allocator_ = nullptr;
  uint64_t donatable_ = 0;
  struct ShapeHint {
    bool known = false;
    Shape shape;
  };
  std::vector<ShapeHint> shape_hints_;
  mutable std::string attr_error_;

  // The attribute `name` if present and of type `t`; records a type error otherwise.
  const ir::Attribute* typed_attr(const std::string& name, ir::Attribute::Type t) const;
};

}  // namespace osprey
