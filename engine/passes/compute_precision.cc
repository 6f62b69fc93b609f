#include "passes/compute_precision.h"

#include <map>
#include <set>
#include <vector>

#include "kernels/cpu/cpu_capabilities.h"
#include "passes/pass_util.h"

namespace osprey::passes {
namespace {

bool is_bf16_fused_conv(const ir::Node& n) {
  const ir::Attribute* p = n.find_attribute(kComputePrecisionAttr);
  return n.domain == "com.osprey" && n.op_type == "FusedConv" && p && p->s == "bf16" &&
         n.outputs.size() == 1 && n.outputs[0] != ir::kNoValue;
}

}  // namespace

int keep_bf16_between_convs(ir::Graph& g) {
  // Who reads each value: (node index, input slot); values that must stay float32 otherwise.
  std::map<int, std::vector<std::pair<size_t, size_t>>> readers;
  std::set<int> pinned(g.outputs.begin(), g.outputs.end());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (n.inputs[k] != ir::kNoValue) readers[n.inputs[k]].emplace_back(i, k);
    pinned.insert(n.implicit_inputs.begin(), n.implicit_inputs.end());  // read by a subgraph
  }
  // Candidates: the Y of a bf16 FusedConv that only bf16 FusedConvs read, as X or Z.
  std::map<int, size_t> producer;  // candidate value -> its FusedConv
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    if (!is_bf16_fused_conv(n)) continue;
    const int y = n.outputs[0];
    auto it = readers.find(y);
    if (pinned.count(y) || it == readers.end()) continue;
    bool ok = true;
    for (auto [r, slot] : it->second)
      ok = ok && is_bf16_fused_conv(g.nodes[r]) && (slot == 0 || slot == 3);
    if (ok) producer[y] = i;
  }
  // Z and Y of one node share their element type (Z is the sum post-op's starting value):
  // drop candidates until every such pair agrees.
  auto z_of = [&](const ir::Node& n) { return n.inputs.size() > 3 ? n.inputs[3] : ir::kNoValue; };
  for (bool changed = true; changed;) {
    changed = false;
    for (const ir::Node& n : g.nodes) {
      if (!is_bf16_fused_conv(n)) continue;
      const int z = z_of(n);
      if (z == ir::kNoValue) continue;
      const bool y_bf16 = producer.count(n.outputs[0]) > 0, z_bf16 = producer.count(z) > 0;
      if (y_bf16 != z_bf16) {
        producer.erase(y_bf16 ? n.outputs[0] : z);
        changed = true;
      }
    }
  }
  for (const auto& [v, i] : producer) {
    g.nodes[i].attributes["bf16_output"] = int_attribute(1);
    g.values[static_cast<size_t>(v)].type.dtype = DType::kBFloat16;
    for (auto [r, slot] : readers[v])
      if (slot == 0) g.nodes[r].attributes["bf16_input"] = int_attribute(1);
  }
  return static_cast<int>(producer.size());
}

Result<int> apply_precision(ir::Graph& g, Precision precision, int optimization_level) {
  if (precision == Precision::kExact) return 0;
  if (optimization_level < 1)
    return failed_precondition(
        "precision 'fast' needs the oneDNN kernels (optimization level >= 1); level 0 runs the "
        "float32 reference kernels only");
  if (!cpu::bf16_compute_available())
    return failed_precondition(
        "precision 'fast' needs a CPU with native bfloat16 (avx512_bf16 or AMX-BF16); oneDNN "
        "offers only '",
        cpu::bf16_probe_implementation(), "' here: use precision 'exact'");
  static const std::set<std::pair<std::string, std::string>> ops = {
      {"", "Conv"},   {"com.osprey", "FusedConv"},   {"", "MatMul"},
      {"", "Gemm"},   {"com.osprey", "FusedMatMul"},
  };
  ir::Attribute bf16;
  bf16.type = ir::Attribute::Type::kString;
  bf16.s = "bf16";
  int marked = 0;
  g.for_each_graph([&](ir::Graph& sg) {
    for (auto& n : sg.nodes)
      if (ops.count({n.domain, n.op_type})) {
        n.attributes[kComputePrecisionAttr] = bf16;
        ++marked;
      }
  });
  g.for_each_graph([](ir::Graph& sg) { keep_bf16_between_convs(sg); });
  return marked;
}

}  // namespace osprey::passes
