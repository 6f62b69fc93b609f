// `osprey bench MODEL --profile`: per-op timing aggregated over the timed runs. Each run's
// RunProfile (Session::run) is added; the summary gives, per op type, the mean time per run,
// its share of the profiled node time and how many nodes of that type run per run, and the
// slowest nodes; then the slowest nodes of control-flow subgraphs (If branches, Loop and Scan
// bodies), by path, with how often each ran per run. Their time is inside their parent node's
// (the op-type table and the shares count the outermost graph's nodes only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "osprey/session.h"

namespace osprey::cli {

struct OpTypeTime {
  std::string op_type;  // "Conv", or "com.osprey.FusedConv" outside the ONNX domain
  double ms_per_run = 0;
  double share = 0;          // of all nodes' time, in [0, 1]
  double nodes_per_run = 0;  // how many nodes of this type ran, per run
};

struct NodeTime {
  size_t index = 0;  // position in execution order
  std::string name;  // as in the model; "#<index>" when the node has no name
  std::string op_type;
  double ms_per_run = 0;
  double share = 0;
  std::string kernel;  // NodeTiming::kernel of its last profiled run ("" where it does not say)
  double calls_per_run = 1;  // a subgraph's node: how often it ran, per run
};

struct ProfileSummary {
  int runs = 0;
  double node_ms_per_run = 0;       // sum of all nodes' time, per run
  std::vector<OpTypeTime> by_op;    // slowest first (ties: by name)
  std::vector<NodeTime> top_nodes;  // slowest first (ties: by position), at most top_n
  // Subgraph nodes, slowest first, at most top_n; `index` is the order they first ran in.
  std::vector<NodeTime> top_subgraph_nodes;
};

class ProfileAccumulator {
 public:
  void add(const RunProfile& profile);
  int runs() const { return runs_; }
  ProfileSummary summary(size_t top_n) const;

 private:
  struct NodeTotal {
    std::string name, op_type;
    double ms = 0;
    std::string kernel;
    int64_t calls = 0;
  };
  int runs_ = 0;
  std::map<std::string, std::pair<double, int>> op_totals_;  // op type -> (ms, node count)
  std::vector<NodeTotal> nodes_;                             // by position in execution order
  std::vector<NodeTotal> subgraph_nodes_;                    // in the order first seen
  std::map<std::string, size_t> subgraph_slots_;             // path -> subgraph_nodes_ index
};

// The tables as text ("op type  ms/run  share  count", then "top N nodes", then the subgraph
// nodes where there are any, each with the kernel's form where it says).
std::string profile_text(const ProfileSummary& s);
// {"runs": .., "node_ms_per_run": .., "by_op_type": [...], "top_nodes": [...],
//  "subgraph_nodes": [...]}.
std::string profile_json(const ProfileSummary& s);

}  // namespace osprey::cli
