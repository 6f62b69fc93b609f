#include "runtime/executor.h"

#include <algorithm>
#include <chrono>

#include "kernels/registry.h"
#include "passes/shape_inference.h"
#include "runtime/run_memory.h"

namespace osprey {

namespace {
Shape shape_of(const Value* v) { return v && v->is_tensor() ? v->tensor.shape() : Shape{}; }

// The shape of value `id` when shape inference knows every dim (a symbolic first dim taken
// as 1: a guess at the batch size).
bool inferred_shape(const passes::ShapeFacts& facts, int id, Shape* shape) {
  const size_t v = static_cast<size_t>(id);
  if (v >= facts.has_shape.size() || !facts.has_shape[v]) return false;
  shape->clear();
  const passes::SymShape& dims = facts.shapes[v];
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d].fixed()) shape->push_back(dims[d].value);
    else if (d == 0 && dims[d].known()) shape->push_back(1);
    else return false;
  }
  return true;
}

// Inputs of `n` whose tensors it may write over: values of `frame` itself (not constants)
// released after `n`, read by `n` once (not also by one of its subgraphs).
uint64_t donatable_inputs(const ir::Node& n, const std::vector<Value>& frame, const std::vector<int>& released) {
  uint64_t mask = 0;
  for (size_t i = 0; i < n.inputs.size() && i < 64; ++i) {
    const int id = n.inputs[i];
    if (id == ir::kNoValue || !frame[static_cast<size_t>(id)].is_tensor()) continue;
    if (std::find(released.begin(), released.end(), id) == released.end()) continue;
    if (std::count(n.inputs.begin(), n.inputs.end(), id) != 1) continue;
    if (std::find(n.implicit_inputs.begin(), n.implicit_inputs.end(), id) != n.implicit_inputs.end()) continue;
    mask |= uint64_t{1} << i;
  }
  return mask;
}

int64_t value_bytes(const Value& v) {
  if (v.is_tensor()) return static_cast<int64_t>(v.tensor.nbytes());
  int64_t n = 0;
  for (const auto& t : v.sequence) n += static_cast<int64_t>(t.nbytes());
  return n;
}

// Whether value `id` of `g` was counted in the live bytes when it was made: the output of one
// of the nodes [first_node, ...) that this executor ran, not a graph input, initializer or
// capture (the caller's memory) nor a value of an earlier span of the graph.
bool counted(const ir::Graph& g, int id, size_t first_node) {
  const size_t v = static_cast<size_t>(id);
  return v < g.produced_by.size() && g.produced_by[v] >= static_cast<int>(first_node);
}
}  // namespace

Status Executor::run_nodes(const ir::Graph& g, std::vector<Value>& frame, size_t begin, size_t end) {
  const bool timed = profile_ != nullptr;
  stack_.emplace_back(&g, &frame);
  Status status;
  const bool outermost = stack_.size() == 1;
  if (outermost)
    for (int id : g.inputs)
      if (frame[static_cast<size_t>(id)].is_tensor()) held_inputs_.push_back(frame[static_cast<size_t>(id)].tensor);
  for (size_t ni = begin; ni < end && ni < g.nodes.size() && status.ok(); ++ni) {
    if (allocator_ && outermost) allocator_->set_step(static_cast<int>(ni));
    if (outermost) releasing_ = &g.release_after[ni];
    status = timed ? run_timed_node(g.nodes[ni], ni, frame) : run_node(g.nodes[ni], frame);
    for (int v : g.release_after[ni]) {
      if (counted(g, v, begin)) live_bytes_ -= value_bytes(frame[static_cast<size_t>(v)]);
      frame[static_cast<size_t>(v)] = Value();
    }
  }
  if (outermost) {
    releasing_ = nullptr;
    held_inputs_.clear();
  }
  stack_.pop_back();
  return status;
}

const Value& Executor::value_at(const std::vector<Value>& frame, int id) const {
  const Value& v = frame[static_cast<size_t>(id)];
  if (constants_ && v.is_none() && !stack_.empty() && &frame == stack_.front().second &&
      static_cast<size_t>(id) < constants_->size())
    return (*constants_)[static_cast<size_t>(id)];
  return v;
}

Status Executor::run_timed_node(const ir::Node& n, size_t index, std::vector<Value>& frame) {
  // A subgraph's node (stack_ deeper than the outermost graph) is summed into one entry of
  // profile_->subgraph_nodes per node however often it runs, named by its path (made on its
  // first run from the entry of the node whose subgraph it is in).
  const bool nested = stack_.size() > 1;
  NodeTiming* t = nullptr;
  size_t slot = 0;
  if (nested) {
    auto [it, first] = nested_slots_.emplace(&n, profile_->subgraph_nodes.size());
    slot = it->second;
    if (first) profile_->subgraph_nodes.emplace_back().runs = 0;
    t = &profile_->subgraph_nodes[slot];
  } else {
    profile_->nodes.emplace_back();
    slot = profile_->nodes.size() - 1;
    t = &profile_->nodes[slot];
  }
  const bool first_run = t->runs == 0 || !nested;
  if (first_run) {
    t->name = n.name.empty() ? "#" + std::to_string(index) : n.name;
    if (nested) {
      const auto [parent_nested, parent_slot] = timed_path_.back();
      const auto& parents = parent_nested ? profile_->subgraph_nodes : profile_->nodes;
      t->name = parents[parent_slot].name + " > " + t->name;
    }
    t->op_type = n.op_type;
    t->domain = n.domain;
    t->input_shapes.reserve(n.inputs.size());
    for (int id : n.inputs)
      t->input_shapes.push_back(id == ir::kNoValue ? Shape{} : shape_of(&value_at(frame, id)));
  }
  timed_path_.emplace_back(nested, slot);
  const auto start = std::chrono::steady_clock::now();
  Status s = run_node(n, frame);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  timed_path_.pop_back();
  // The entry again: the vectors may have grown while the node's subgraphs ran.
  t = nested ? &profile_->subgraph_nodes[slot] : &profile_->nodes[slot];
  t->ms += ms;
  if (nested) ++t->runs;
  if (first_run) {
    if (states_) {
      const auto it = states_->find(&n);
      if (it != states_->end() && it->second) t->kernel = it->second->form();
    }
    t->output_shapes.reserve(n.outputs.size());
    for (int id : n.outputs)
      t->output_shapes.push_back(id == ir::kNoValue ? Shape{} : shape_of(&frame[static_cast<size_t>(id)]));
  }
  return s;
}

Status Executor::run_node(const ir::Node& n, std::vector<Value>& frame) {
  const size_t depth = stack_.size() - 1;
  while (buffers_.size() <= depth) buffers_.push_back(std::make_unique<NodeBuffers>());
  NodeBuffers& buf = *buffers_[depth];
  std::vector<const Value*> inputs = std::move(buf.inputs);
  inputs.clear();
  bool any_none_input = false;
  for (int id : n.inputs) {
    const Value* v = id == ir::kNoValue ? nullptr : &value_at(frame, id);
    if (v && v->is_none()) any_none_input = true;
    inputs.push_back(v);
  }
  // Pick the kernel for input 0's element type (the resolved one, or another device's).
  const KernelDef* k = n.kernel;
  if (!inputs.empty() && inputs[0] && inputs[0]->is_tensor() && k && !k->accepts(inputs[0]->tensor.dtype())) {
    k = find_kernel(n.op_type, n.domain, n.opset, inputs[0]->tensor.dtype(), false);
    if (!k)
      return invalid_argument(n.display_name(), ": element type ",
                              dtype_name(inputs[0]->tensor.dtype()), " is not supported by this op");
  }
  if (!k) return unimplemented(n.display_name(), ": no kernel");
  if (k != n.kernel)  // another kernel cannot read a constant that n.kernel's state holds packed
    for (const Value* v : inputs)
      if (v && v->is_tensor() && is_released_constant(v->tensor))
        return invalid_argument(n.display_name(), ": input 0 has element type ",
                                dtype_name(inputs[0]->tensor.dtype()),
                                ", which the kernel this node was prepared for does not take");
  std::vector<Value>& outputs = buf.outputs;
  outputs.clear();
  outputs.resize(n.outputs.size());
  KernelContext ctx(n, std::move(inputs), &outputs, limits_.max_tensor_elements, this, pool_);
  if (allocator_ && stack_.size() == 1) ctx.set_allocator(allocator_);
  if (releasing_ && stack_.size() == 1) ctx.set_donatable(donatable_inputs(n, frame, *releasing_));
  if (states_ && k == n.kernel && k->prepare) {  // a state belongs to the resolved kernel only
    auto it = states_->find(&n);
    if (it != states_->end()) ctx.set_state(it->second.get());
  }
  Status s = k->fn(ctx);
  buf.inputs = ctx.release_inputs();
  if (!ctx.attribute_error().empty()) return invalid_argument(n.display_name(), ": ", ctx.attribute_error());
  if (!s.ok()) return s.with_context(n.display_name());
  const bool may_leave_empty = any_none_input || n.op_type == "Optional" || n.op_type == "If" ||
                               n.op_type == "Loop" || n.op_type == "Scan";
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const int id = n.outputs[i];
    if (id == ir::kNoValue) continue;
    if (outputs[i].is_none() && !may_leave_empty)
      return internal_error(n.display_name(), ": kernel did not produce output ", i);
    live_bytes_ += value_bytes(outputs[i]);
    frame[static_cast<size_t>(id)] = std::move(outputs[i]);
  }
  if (limits_.memory_limit_bytes > 0 && live_bytes_ > limits_.memory_limit_bytes)
    return resource_exhausted(n.display_name(), ": live tensors take ", live_bytes_,
                              " bytes, above the memory limit of ", limits_.memory_limit_bytes);
  return Status::Ok();
}

Status prepare_kernels(ir::Graph& graph, int64_t max_tensor_elements, ThreadPool* pool,
                       KernelStates* states,
                       const std::function<void(const ir::Node&, KernelState*)>& on_prepared) {
  Status status;
  // Shape hints for the prepare steps, in the main graph (subgraph inputs are not known).
  const passes::ShapeFacts facts = passes::infer_shapes(graph, /*in_subgraph=*/false);
  graph.for_each_graph([&](ir::Graph& g) {
    const bool top = &g == &graph;
    for (const auto& n : g.nodes) {
      if (!status.ok()) continue;
      if (!n.kernel || !n.kernel->prepare) {
        if (on_prepared) on_prepared(n, nullptr);
        continue;
      }
      std::vector<Value> constants(n.inputs.size());
      std::vector<const Value*> inputs(n.inputs.size(), nullptr);
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        auto it = g.initializers.find(n.inputs[i]);
        if (n.inputs[i] == ir::kNoValue || it == g.initializers.end()) continue;
        constants[i] = Value(it->second);
        inputs[i] = &constants[i];
      }
      std::vector<Value> no_outputs(n.outputs.size());
      KernelContext ctx(n, std::move(inputs), &no_outputs, max_tensor_elements, nullptr, pool);
      for (size_t i = 0; i < n.inputs.size() && top; ++i) {
        Shape hint;
        if (n.inputs[i] != ir::kNoValue && !constants[i].is_tensor() &&
            inferred_shape(facts, n.inputs[i], &hint))
          ctx.set_shape_hint(static_cast<int>(i), std::move(hint));
      }
      auto state = n.kernel->prepare(ctx);
      if (!ctx.attribute_error().empty()) {
        status = invalid_argument(n.display_name(), ": ", ctx.attribute_error());
      } else if (!state.ok()) {
        status = state.status().with_context(n.display_name());
      } else {
        KernelState* made = state->get();
        if (made) (*states)[&n] = std::move(*state);
        if (on_prepared) on_prepared(n, made);
      }
    }
  });
  return status;
}

Result<std::vector<Value>> Executor::run(const ir::Graph& g, std::vector<Value> inputs) {
  if (inputs.size() != g.inputs.size())
    return invalid_argument("subgraph '", g.name, "' takes ", g.inputs.size(), " inputs, got ",
                            inputs.size());
  if (stack_.empty()) return internal_error("subgraph run outside a graph");
  const std::vector<Value>& parent = *stack_.back().second;
  std::vector<Value> frame(g.values.size());
  for (const auto& [id, t] : g.initializers) frame[static_cast<size_t>(id)] = Value(t);
  for (size_t i = 0; i < g.captures.size(); ++i)
    frame[static_cast<size_t>(g.captures[i])] = value_at(parent, g.capture_sources[i]);
  for (size_t i = 0; i < inputs.size(); ++i) frame[static_cast<size_t>(g.inputs[i])] = std::move(inputs[i]);
  OSPREY_RETURN_IF_ERROR(run_graph(g, frame));
  std::vector<Value> outs;
  outs.reserve(g.outputs.size());
  for (int o : g.outputs) outs.push_back(frame[static_cast<size_t>(o)]);
  // The frame goes: what its nodes made and still hold, its outputs (every other value was
  // released), now the calling node's to count as its own, leaves the live bytes (once each).
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const int o = g.outputs[i];
    if (counted(g, o, 0) && std::find(g.outputs.begin(), g.outputs.begin() + static_cast<std::ptrdiff_t>(i), o) ==
                                g.outputs.begin() + static_cast<std::ptrdiff_t>(i))
      live_bytes_ -= value_bytes(frame[static_cast<size_t>(o)]);
  }
  return outs;
}

}  // namespace osprey
