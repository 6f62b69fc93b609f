// The engine's entry point: load a model once, run it many times (concurrently).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "osprey/options.h"
#include "osprey/status.h"
#include "osprey/tensor.h"

namespace osprey {

// One dimension of a declared shape: a fixed size, or a symbol ("batch"), or unknown.
struct Dim {
  int64_t value = -1;  // >= 0 when fixed
  std::string symbol;  // set for named symbolic dims
  bool is_fixed() const { return value >= 0; }
  std::string to_string() const;  // "3", "batch" or "?"
};

struct TensorInfo {
  std::string name;
  DType dtype = DType::kUndefined;
  std::vector<Dim> shape;
  bool has_shape = false;  // false when the model declares no shape at all
  bool is_sequence = false;
  bool is_optional = false;
  std::string to_string() const;  // "input: float32[batch,3,224,224]"
};

using NamedTensor = std::pair<std::string, Tensor>;
using NamedValue = std::pair<std::string, Value>;

struct ModelStats {
  int64_t ir_version = 0;
  std::vector<std::pair<std::string, int64_t>> opsets;  // (domain, version)
  std::string producer;
  std::vector<std::pair<std::string, int>> op_histogram;  // op type -> count (top graph)
  int64_t node_count = 0;
  int64_t parameter_count = 0;  // elements in initializers
  int64_t parameter_bytes = 0;
};

// Wall time of one node in one profiled run. Only nodes of the top-level graph are timed: the
// nodes of a control-flow subgraph (If, Loop, Scan bodies) count toward their parent node.
struct NodeTiming {
  std::string name;     // the node's name in the model (may be empty)
  std::string op_type;  // "Conv", "FusedConv", ...
  std::string domain;   // "" for ONNX ops, "com.osprey" for the engine's fused ops
  // How the kernel ran the node, where it says: the primitive or form it picked (a oneDNN
  // implementation such as "brgconv_1x1:avx512_core", or one of ours such as
  // "winograd F(4x4, 3x3)"); empty otherwise. Convolutions say.
  std::string kernel;
  double ms = 0;        // wall time of the node's kernel
  // How many runs `ms` sums: the items of a batch that ran item by item through this node (its
  // shapes are then one item's), or the times a subgraph's node ran in one run (a Loop body's
  // nodes once per iteration; its shapes are then those of the first), else 1.
  int64_t runs = 1;
  // Shapes the node saw in this run, by position; an empty shape for an absent or non-tensor
  // input/output (a scalar tensor also has an empty shape). Enough to count FLOPs afterwards.
  std::vector<Shape> input_shapes;
  std::vector<Shape> output_shapes;
};

// Where one run's node outputs lived (planned memory, see docs/ARCHITECTURE.md).
struct RunMemoryStats {
  bool planned = false;        // a cached plan served this run (false: this run recorded one)
  int64_t arena_bytes = 0;     // the run's arena; 0 when recording
  int64_t arena_outputs = 0;   // node outputs placed in the arena
  int64_t heap_outputs = 0;    // node outputs on the heap: graph outputs (and what they alias),
                               // every output of a recording run, mismatches of a diverged run
  int64_t heap_output_bytes = 0;
  bool diverged = false;  // the run did not follow its plan (dropped; recorded again next time)
};

// What a session holds for planned memory between runs.
struct SessionMemoryUsage {
  int64_t cached_plans = 0;   // one per input signature seen recently (capped LRU)
  int64_t pooled_arenas = 0;  // idle arenas kept for the next runs
  int64_t pooled_arena_bytes = 0;
};

// What the session's load-time choices marked in its optimized graph.
struct OptimizationMarks {
  int64_t bf16_nodes = 0;      // nodes set to compute in bf16 (fast precision)
  int64_t winograd_nodes = 0;  // convolutions marked for Winograd (they run it where oneDNN
                               // offers it; see SessionOptions::winograd)
};

// One optimization pass as it ran at load, over the main graph and its subgraphs.
struct PassReport {
  std::string name;
  bool changed = false;
  int64_t nodes_before = 0;  // main graph nodes
  int64_t nodes_after = 0;
  double ms = 0;  // wall time, the graph's re-finalization after a change included
};

// Where a session's load time went (Session::load_report), in wall milliseconds.
struct LoadReport {
  double import_ms = 0;    // reading the model and building its graph
  double optimize_ms = 0;  // the passes, then the precision and Winograd marks
  double prepare_ms = 0;   // kernels chosen, weights packed, primitives created
  std::vector<PassReport> passes;  // those that ran, in order
};

// Per-node timings of one run, in execution order, and where its outputs lived.
struct RunProfile {
  // Run item by item (SessionOptions::batch_split), in whole or up to a cut: each node run item
  // by item sums its ms over the items (NodeTiming::runs) with one item's shapes, and `items`
  // says how many there were (1: the batch at once).
  std::vector<NodeTiming> nodes;
  int64_t items = 1;
  RunMemoryStats memory;
  // Nodes of control-flow subgraphs (If branches, Loop and Scan bodies), in the order they
  // first ran, each once however often it ran (`runs`). `name` is the path from the outermost
  // node, " > " between levels ("If_0 > Conv_3"); their time is also inside their parent's.
  std::vector<NodeTiming> subgraph_nodes;
};

class SessionImpl;

class Session {
 public:
  static Result<std::unique_ptr<Session>> load(const std::string& path,
                                               const SessionOptions& options = {});
  static Result<std::unique_ptr<Session>> load_from_bytes(const std::string& bytes,
                                                          const SessionOptions& options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<TensorInfo>& inputs() const;   // excludes inputs that have initializers
  const std::vector<TensorInfo>& outputs() const;
  const ModelStats& stats() const;
  const SessionOptions& options() const;
  // The graph as it runs, after the optimization passes of options().optimization_level:
  // one line per node (op, name, inputs -> outputs, key attributes), subgraphs indented.
  // Stable text, for review and golden dumps (`osprey inspect --optimized`).
  std::string graph_dump() const;
  // How a batch (first input dim > 1) runs: "item by item"; under BatchSplit::kAuto where the
  // weights dominate, the sizes that run whole and from where ("whole batch up to N items",
  // "up to N items: item by item until <node>, whole batch from there; ...", then "(...); item
  // by item above"); or "whole batch (<why>)".
  std::string batch_split_summary() const;
  // How many nodes the precision mode and the Winograd policy marked at load.
  const OptimizationMarks& optimization_marks() const;
  // The load's phases and each optimization pass (`osprey inspect --passes`).
  const LoadReport& load_report() const;

  // Runs the model. Every required input must be given; inputs with defaults
  // (initializers) may be overridden. Outputs come back in declared order.
  // Thread-safe: many threads may call run() on one Session at once.
  Result<std::vector<NamedTensor>> run(const std::vector<NamedTensor>& inputs) const;
  // As run(), and also times every executed top-level node into `profile` (cleared first; on
  // error it holds the nodes that ran). `profile` == nullptr is run() without timing overhead.
  Result<std::vector<NamedTensor>> run(const std::vector<NamedTensor>& inputs,
                                       RunProfile* profile) const;
  // As run(), for models whose inputs or outputs are sequences or optionals.
  Result<std::vector<NamedValue>> run_values(const std::vector<NamedValue>& inputs) const;

  // Planned memory held between runs (plans per input signature, idle arenas).
  SessionMemoryUsage memory_usage() const;
  // Gives back the idle arenas, the cached plans and the process's cached tensor blocks
  // (osprey::trim_memory); the next run of each signature records its plan again.
  void trim() const;

 private:
  explicit Session(std::unique_ptr<SessionImpl> impl);
  std::unique_ptr<SessionImpl> impl_;
};

}  // namespace osprey
