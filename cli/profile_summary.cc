#include "profile_summary.h"

#include <algorithm>
#include <cstdio>

#include "format.h"

namespace osprey::cli {
namespace {

std::string op_key(const NodeTiming& n) {
  return n.domain.empty() || n.domain == "ai.onnx" ? n.op_type : n.domain + "." + n.op_type;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

// The rows of a node table: "#  node  op type  ms/run  [calls/run]  share  kernel".
std::string nodes_text(const std::vector<NodeTime>& nodes, bool calls) {
  size_t nw = 4, tw = 7;
  for (const auto& n : nodes) nw = std::max(nw, n.name.size()), tw = std::max(tw, n.op_type.size());
  std::string out = pad("#", 5) + "  " + pad("node", nw) + "  " + pad("op type", tw) + "  ms/run     " +
                    (calls ? "calls/run  " : "") + "share   kernel\n";
  for (const auto& n : nodes)
    out += pad(std::to_string(n.index), 5) + "  " + pad(n.name, nw) + "  " + pad(n.op_type, tw) + "  " +
           pad(fmt("%.4f", n.ms_per_run), 9) + "  " + (calls ? pad(fmt("%g", n.calls_per_run), 9) + "  " : "") +
           (n.kernel.empty() ? fmt("%.1f%%", n.share * 100)
                             : pad(fmt("%.1f%%", n.share * 100), 6) + "  " + n.kernel) +
           "\n";
  return out;
}

// A node table as a JSON array (with "calls_per_run" for subgraph nodes).
std::string nodes_json(const std::vector<NodeTime>& nodes, bool calls) {
  std::string j = "[";
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    j += std::string(i ? ", " : "") + "{\"index\": " + std::to_string(n.index) +
         ", \"name\": " + json_string(n.name) + ", \"op_type\": " + json_string(n.op_type) +
         ", \"ms_per_run\": " + json_number(n.ms_per_run) +
         (calls ? ", \"calls_per_run\": " + json_number(n.calls_per_run) : std::string()) +
         ", \"share\": " + json_number(n.share) + ", \"kernel\": " + json_string(n.kernel) + "}";
  }
  return j + "]";
}

}  // namespace

void ProfileAccumulator::add(const RunProfile& profile) {
  ++runs_;
  for (size_t i = 0; i < profile.nodes.size(); ++i) {
    const NodeTiming& n = profile.nodes[i];
    auto& [ms, count] = op_totals_[op_key(n)];
    ms += n.ms;
    ++count;
    if (nodes_.size() <= i)
      nodes_.push_back({n.name.empty() ? "#" + std::to_string(i) : n.name, op_key(n), 0, {}});
    nodes_[i].ms += n.ms;
    nodes_[i].kernel = n.kernel;
  }
  for (const NodeTiming& n : profile.subgraph_nodes) {
    auto [it, first] = subgraph_slots_.emplace(n.name, subgraph_nodes_.size());
    if (first) subgraph_nodes_.push_back({n.name, op_key(n), 0, {}, 0});
    NodeTotal& t = subgraph_nodes_[it->second];
    t.ms += n.ms;
    t.calls += n.runs;
    t.kernel = n.kernel;
  }
}

ProfileSummary ProfileAccumulator::summary(size_t top_n) const {
  ProfileSummary s;
  s.runs = runs_;
  if (runs_ == 0) return s;
  const double runs = runs_;
  double total = 0;
  for (const auto& [op, t] : op_totals_) total += t.first;
  s.node_ms_per_run = total / runs;
  for (const auto& [op, t] : op_totals_)
    s.by_op.push_back({op, t.first / runs, total > 0 ? t.first / total : 0, t.second / runs});
  std::sort(s.by_op.begin(), s.by_op.end(), [](const OpTypeTime& a, const OpTypeTime& b) {
    return a.ms_per_run != b.ms_per_run ? a.ms_per_run > b.ms_per_run : a.op_type < b.op_type;
  });
  for (size_t i = 0; i < nodes_.size(); ++i)
    s.top_nodes.push_back({i, nodes_[i].name, nodes_[i].op_type, nodes_[i].ms / runs,
                           total > 0 ? nodes_[i].ms / total : 0, nodes_[i].kernel});
  std::stable_sort(
      s.top_nodes.begin(), s.top_nodes.end(),
      [](const NodeTime& a, const NodeTime& b) { return a.ms_per_run > b.ms_per_run; });
  if (s.top_nodes.size() > top_n) s.top_nodes.resize(top_n);
  for (size_t i = 0; i < subgraph_nodes_.size(); ++i) {
    const NodeTotal& t = subgraph_nodes_[i];
    s.top_subgraph_nodes.push_back({i, t.name, t.op_type, t.ms / runs, total > 0 ? t.ms / total : 0,
                                    t.kernel, static_cast<double>(t.calls) / runs});
  }
  std::stable_sort(
      s.top_subgraph_nodes.begin(), s.top_subgraph_nodes.end(),
      [](const NodeTime& a, const NodeTime& b) { return a.ms_per_run > b.ms_per_run; });
  if (s.top_subgraph_nodes.size() > top_n) s.top_subgraph_nodes.resize(top_n);
  return s;
}

std::string profile_text(const ProfileSummary& s) {
  std::string out = "profile:    " + std::to_string(s.runs) + " runs, " +
                    fmt("%.3f", s.node_ms_per_run) + " ms per run in nodes\n";
  size_t w = 7;
  for (const auto& o : s.by_op) w = std::max(w, o.op_type.size());
  out += "\n" + pad("op type", w) + "  ms/run     share   count\n";
  for (const auto& o : s.by_op)
    out += pad(o.op_type, w) + "  " + pad(fmt("%.4f", o.ms_per_run), 9) + "  " +
           pad(fmt("%.1f%%", o.share * 100), 6) + "  " + fmt("%g", o.nodes_per_run) + "\n";
  out += "\ntop " + std::to_string(s.top_nodes.size()) + " nodes by time\n" + nodes_text(s.top_nodes, false);
  if (!s.top_subgraph_nodes.empty())
    out += "\ntop " + std::to_string(s.top_subgraph_nodes.size()) +
           " subgraph nodes by time (inside their parent node's time above)\n" +
           nodes_text(s.top_subgraph_nodes, true);
  return out;
}

std::string profile_json(const ProfileSummary& s) {
  std::string j = "{\"runs\": " + std::to_string(s.runs) +
                  ", \"node_ms_per_run\": " + json_number(s.node_ms_per_run) +
                  ", \"by_op_type\": [";
  for (size_t i = 0; i < s.by_op.size(); ++i) {
    const auto& o = s.by_op[i];
    j += std::string(i ? ", " : "") + "{\"op_type\": " + json_string(o.op_type) +
         ", \"ms_per_run\": " + json_number(o.ms_per_run) + ", \"share\": " + json_number(o.share) +
         ", \"nodes_per_run\": " + json_number(o.nodes_per_run) + "}";
  }
  j += "], \"top_nodes\": " + nodes_json(s.top_nodes, false);
  j += ", \"subgraph_nodes\": " + nodes_json(s.top_subgraph_nodes, true);
  return j + "}";
}

}  // namespace osprey::cli
