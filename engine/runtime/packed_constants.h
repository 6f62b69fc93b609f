// Frees the plain copy of constants that kernel states keep in their own (packed) form.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "kernels/kernel.h"

namespace osprey {

struct ReleasedConstants {
  int count = 0;
  int64_t bytes = 0;  // plain bytes no longer held by the graph
};

// Watches the prepare steps of the top-level graph's nodes (node_prepared, in any order, once
// per node) and releases each initializer as soon as all its readers are prepared, when every
// reader is a top-level node whose state holds it (KernelState::holds_constant) and it is
// neither a graph input (a caller may override it) nor a graph output nor captured by a
// subgraph: the tensor in g.initializers becomes a data-less stand-in of the same dtype and
// shape, each reader's state is told (KernelState::constant_released), and the freed memory
// goes back to the system at once (not to the tensor block cache), so that a model's plain
// and packed weights are never all resident together.
class PackedConstantReleaser {
 public:
  explicit PackedConstantReleaser(ir::Graph& g);
  // `state` is what the node's prepare step returned (nullptr: none). Nodes of subgraphs are
  // ignored.
  void node_prepared(const ir::Node& n, KernelState* state);
  const ReleasedConstants& released() const { return released_; }

 private:
  struct Readers {
    int pending = 0;  // readers not prepared yet
    bool blocked = false;
    std::vector<std::pair<KernelState*, int>> holders;
  };
  void release(int id, Readers& r);

  ir::Graph& g_;
  std::map<int, Readers> readers_;  // initializer id -> its readers
  ReleasedConstants released_;
};

}  // namespace osprey
