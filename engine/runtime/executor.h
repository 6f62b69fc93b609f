// Runs an ir::Graph node by node over a frame of values; runs subgraphs for control flow.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "kernels/kernel.h"

namespace osprey {

struct ExecutorLimits {
  int64_t max_tensor_elements = 0;
  int64_t memory_limit_bytes = 0;  // 0 = unlimited
};

class ThreadPool;

class Executor final : public SubgraphRunner {
 public:
  // `pool` (may be null) is shared by concurrent runs; kernels split work across it.
  Executor(ExecutorLimits limits, ThreadPool* pool) : limits_(limits), pool_(pool) {}

  // `frame` has one slot per value of `g`; inputs, initializers and captures already set.
  // On return, g.outputs' slots hold the results.
  Status run_graph(const ir::Graph& g, std::vector<Value>& frame);

  // SubgraphRunner: binds inputs by position; captures come from the frame that is running.
  Result<std::vector<Value>> run(const ir::Graph& g, std::vector<Value> inputs) override;

 private:
  Status run_node(const ir::Node& n, std::vector<Value>& frame);

  ExecutorLimits limits_;
  ThreadPool* pool_;
  std::vector<std::pair<const ir::Graph*, std::vector<Value>*>> stack_;  // frames being run
  int64_t live_bytes_ = 0;
};

}  // namespace osprey
