// Runs an ir::Graph node by node over a frame of values; runs subgraphs for control flow.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "kernels/kernel.h"
#include "osprey/session.h"

namespace osprey {

struct ExecutorLimits {
  int64_t max_tensor_elements = 0;
  int64_t memory_limit_bytes = 0;  // 0 = unlimited
};

class ThreadPool;
class RunAllocator;

// What each node's kernel prepared at session load (only nodes whose kernel has a prepare
// step), shared read-only by every run; the states themselves are thread-safe.
using KernelStates = std::unordered_map<const ir::Node*, std::shared_ptr<KernelState>>;

// Runs the prepare step of every node's resolved kernel in `g` and its subgraphs, with the
// node's initializers as its constant inputs, and stores the states in `states`. Calls
// `on_prepared` (when set) after each node, with its state or nullptr.
Status prepare_kernels(ir::Graph& g, int64_t max_tensor_elements, ThreadPool* pool,
                       KernelStates* states,
                       const std::function<void(const ir::Node&, KernelState*)>& on_prepared = {});

class Executor final : public SubgraphRunner {
 public:
  // `pool` (may be null) is shared by concurrent runs; kernels split work across it.
  // `states` (may be null) holds the prepared kernel states of the session's nodes.
  Executor(ExecutorLimits limits, ThreadPool* pool, const KernelStates* states = nullptr)
      : limits_(limits), pool_(pool), states_(states) {}

  // `frame` has one slot per value of `g`; inputs, initializers and captures already set.
  // On return, g.outputs' slots hold the results.
  Status run_graph(const ir::Graph& g, std::vector<Value>& frame) { return run_nodes(g, frame, 0, g.nodes.size()); }
  // Nodes [begin, end) of `g` only (the outermost graph: part of a batch run item by item),
  // with the values they read from earlier nodes already in `frame`.
  Status run_nodes(const ir::Graph& g, std::vector<Value>& frame, size_t begin, size_t end);

  // Times each node run into `profile` (null = no timing): the outermost graph's into
  // `nodes`, appended; those of subgraphs summed per node into `subgraph_nodes` (their time is
  // also part of their parent node's).
  void set_profile(RunProfile* profile) { profile_ = profile; }
  // Outputs of the outermost graph's nodes come from `a` (planned memory; null = the heap).
  void set_allocator(RunAllocator* a) { allocator_ = a; }
  // The outermost graph's initializers, indexed by value id (none elsewhere): read in place
  // of an empty frame slot, so that a run does not copy them into its frame.
  void set_constants(const std::vector<Value>* constants) { constants_ = constants; }

  // SubgraphRunner: binds inputs by position; captures come from the frame that is running.
  Result<std::vector<Value>> run(const ir::Graph& g, std::vector<Value> inputs) override;

 private:
  Status run_node(const ir::Node& n, std::vector<Value>& frame);
  Status run_timed_node(const ir::Node& n, size_t index, std::vector<Value>& frame);
  // Value `id` of `frame`, or the constant when `frame` is the outermost graph's and its slot
  // is empty.
  const Value& value_at(const std::vector<Value>& frame, int id) const;

  // Per nesting depth (subgraphs run inside a node): the node's input pointers and outputs,
  // reused from node to node so that a run does not allocate them.
  struct NodeBuffers {
    std::vector<const Value*> inputs;
    std::vector<Value> outputs;
  };

  ExecutorLimits limits_;
  ThreadPool* pool_;
  const KernelStates* states_;
  std::vector<std::pair<const ir::Graph*, std::vector<Value>*>> stack_;  // frames being run
  int64_t live_bytes_ = 0;
  RunProfile* profile_ = nullptr;
  // The timed nodes running, outermost first: (in subgraph_nodes, else nodes; the entry's index).
  std::vector<std::pair<bool, size_t>> timed_path_;
  std::unordered_map<const ir::Node*, size_t> nested_slots_;  // profile_->subgraph_nodes index
  RunAllocator* allocator_ = nullptr;
  const std::vector<Value>* constants_ = nullptr;
  // Outermost graph only: the values released after the node now running (their tensors may
  // be donated to its outputs, see KernelContext::new_output_over_input), and copies of the
  // graph's input tensors, held for the run so that neither they nor views of them are ever
  // written over (their memory belongs to the caller).
  const std::vector<int>* releasing_ = nullptr;
  std::vector<Tensor> held_inputs_;
  std::vector<std::unique_ptr<NodeBuffers>> buffers_;  // [depth]
};

}  // namespace osprey
