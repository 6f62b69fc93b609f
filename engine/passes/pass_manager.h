// Runs graph optimization passes in order over the main graph and every subgraph.
//
// A pass runs when its level <= PassManagerOptions::level (the session's optimization_level;
// level 0 runs nothing). After a pass that changed anything, the whole graph is finalized again
// (node order, subgraph captures, release_after). On request the manager also times each pass,
// verifies the graph after every pass (finalize succeeds, main graph inputs/outputs unchanged),
// and hands a text dump of the graph (graph_dump.h) to a callback before and after each pass.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "osprey/options.h"
#include "osprey/session.h"
#include "passes/pass.h"

namespace osprey::passes {

struct PassManagerOptions {
  int level = 1;
  int64_t max_tensor_elements = int64_t{1} << 31;
  // Measure each pass's wall time (PassRecord::micros).
  bool time_passes = false;
  // After every pass (changing or not): finalize and check that the main graph's inputs and
  // outputs are the ones it had before. A failure is an internal error naming the pass.
  bool verify_each_pass = false;
  // Called with (pass name, "before" | "after", dump_graph() text) around each pass that runs.
  std::function<void(const std::string& pass, const std::string& stage, const std::string& dump)>
      dump;
  // Names of passes not to run, even when their level is enabled. A name that is no pass of
  // the pipeline makes run() fail (kInvalidArgument, listing the passes), at any level.
  std::vector<std::string> disabled;
  // Handed to the passes (PassContext::blocked_layout).
  BlockedLayout blocked_layout = BlockedLayout::kAuto;

  static PassManagerOptions from_session(const SessionOptions& o);
};

// What happened in one pass, over the main graph and all subgraphs.
struct PassRecord {
  std::string name;
  bool changed = false;
  int64_t nodes_before = 0;  // main graph nodes
  int64_t nodes_after = 0;
  int64_t micros = 0;  // when time_passes
};

class PassManager {
 public:
  explicit PassManager(PassManagerOptions options) : options_(std::move(options)) {}
  // The default pipeline (pass_manager.cc, in order; docs/ARCHITECTURE.md lists it with levels).
  static PassManager with_default_passes(PassManagerOptions options);

  void add(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  const std::vector<std::unique_ptr<Pass>>& passes() const { return passes_; }

  // `g` must be a finalized main graph (as the importer leaves it); it is finalized on return.
  Status run(ir::Graph& g);
  const std::vector<PassRecord>& records() const { return records_; }

 private:
  Result<bool> run_on_graph_tree(Pass& pass, ir::Graph& g, PassContext& ctx);
  PassManagerOptions options_;
  std::vector<std::unique_ptr<Pass>> passes_;
  std::vector<PassRecord> records_;
};

// What Session runs after import: the default passes at the session's optimization level,
// then the precision mode (apply_precision: fast mode marks the products for bf16) and the
// Winograd policy (apply_winograd); `marks`, when given, receives how many nodes each marked,
// and `reports` each pass that ran.
Status optimize(ir::Graph& g, const SessionOptions& options, OptimizationMarks* marks = nullptr,
                std::vector<PassReport>* reports = nullptr);

}  // namespace osprey::passes
