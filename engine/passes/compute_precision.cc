#include "passes/compute_precision.h"

#include <map>
#include <set>
#include <vector>

#include "kernels/cpu/attention_bf16.h"
#include "kernels/cpu/cpu_capabilities.h"
#include "passes/pass_util.h"

namespace osprey::passes {
namespace {

bool is_bf16_fused_conv(const ir::Node& n) {
  const ir::Attribute* p = n.find_attribute(kComputePrecisionAttr);
  return n.domain == "com.osprey" && n.op_type == "FusedConv" && p && p->s == "bf16" &&
         n.outputs.size() == 1 && n.outputs[0] != ir::kNoValue;
}

bool is_bf16_fused_matmul(const ir::Node& n) {
  const ir::Attribute* p = n.find_attribute(kComputePrecisionAttr);
  return n.domain == "com.osprey" && n.op_type == "FusedMatMul" && p && p->s == "bf16" &&
         n.outputs.size() == 1 && n.outputs[0] != ir::kNoValue;
}

// com.osprey MaxPool over channels-last tensors with Y only (no Indices).
bool is_channels_last_max_pool(const ir::Node& n) {
  const ir::Attribute* cl = n.find_attribute("channels_last");
  return n.domain == "com.osprey" && n.op_type == "MaxPool" && cl && cl->i == 1 &&
         n.outputs.size() == 1 && n.outputs[0] != ir::kNoValue && !n.inputs.empty() &&
         n.inputs[0] != ir::kNoValue;
}

using Readers = std::map<int, std::vector<std::pair<size_t, size_t>>>;

// Who reads each value: (node index, input slot). `pinned` gets the values that must stay
// float32 whoever reads them: graph outputs and values a subgraph reads.
Readers readers_of(const ir::Graph& g, std::set<int>* pinned) {
  Readers readers;
  pinned->insert(g.outputs.begin(), g.outputs.end());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (n.inputs[k] != ir::kNoValue) readers[n.inputs[k]].emplace_back(i, k);
    pinned->insert(n.implicit_inputs.begin(), n.implicit_inputs.end());
  }
  return readers;
}

// Values that carry a graph input's data as the caller gave it: the (non-constant) graph inputs
// and what a Transpose or Reshape makes of them (the layout passes put a Transpose to
// channels-last after an image input).
std::set<int> caller_data(const ir::Graph& g) {
  std::set<int> data;
  for (int v : g.inputs)
    if (!g.initializers.count(v)) data.insert(v);
  // Until nothing changes: the nodes need not be in order between passes.
  for (size_t before = 0; before != data.size();) {
    before = data.size();
    for (const ir::Node& n : g.nodes)
      if ((n.op_type == "Transpose" || n.op_type == "Reshape") && n.domain.empty() &&
          !n.inputs.empty() && data.count(n.inputs[0]) && n.outputs.size() == 1)
        data.insert(n.outputs[0]);
  }
  return data;
}

// A small convolution over the caller's image: X is caller data, and the weights (constant)
// take at most kImageChannels channels per group through a window of at most kStemTaps taps.
constexpr int64_t kImageChannels = 4;
constexpr int64_t kStemTaps = 9;
bool is_small_image_stem(const ir::Graph& g, const ir::Node& n, const std::set<int>& data) {
  if (!(n.op_type == "Conv" || (n.domain == "com.osprey" && n.op_type == "FusedConv"))) return false;
  if (n.inputs.size() < 2 || !data.count(n.inputs[0])) return false;
  auto w = g.initializers.find(n.inputs[1]);
  if (w == g.initializers.end() || w->second.rank() < 3 || w->second.dim(1) > kImageChannels) return false;
  int64_t taps = 1;
  for (int64_t i = 2; i < w->second.rank(); ++i) taps *= w->second.dim(i);
  return taps <= kStemTaps;
}

}  // namespace

int keep_bf16_between_convs(ir::Graph& g) {
  std::set<int> pinned;
  auto readers = readers_of(g, &pinned);
  // Candidates: the Y of a bf16 FusedConv, and of a channels-last MaxPool (the pool passes
  // bfloat16 through: the max of bf16 values is one of them).
  std::map<int, size_t> producer;  // candidate value -> its FusedConv or MaxPool
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    if ((is_bf16_fused_conv(n) || is_channels_last_max_pool(n)) && !pinned.count(n.outputs[0]) &&
        readers.count(n.outputs[0]))
      producer[n.outputs[0]] = i;
  }
  // Drop candidates until every reader of one takes bfloat16 (a bf16 FusedConv as X or Z, or
  // a pool whose Y stays a candidate), every pool's X and Y agree, and every FusedConv's Z and
  // Y agree (Z is the sum post-op's starting value).
  auto z_of = [&](const ir::Node& n) { return n.inputs.size() > 3 ? n.inputs[3] : ir::kNoValue; };
  auto drop = [&](int v) { return producer.erase(v) > 0; };
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = producer.begin(); it != producer.end();) {
      bool ok = true;
      for (auto [r, slot] : readers[it->first]) {
        const ir::Node& rn = g.nodes[r];
        ok = ok && ((is_bf16_fused_conv(rn) && (slot == 0 || slot == 3)) ||
                    (is_channels_last_max_pool(rn) && slot == 0 && producer.count(rn.outputs[0])));
      }
      if (ok) {
        ++it;
      } else {
        it = producer.erase(it);
        changed = true;
      }
    }
    for (const ir::Node& n : g.nodes) {
      int a = ir::kNoValue, b = ir::kNoValue;  // two values that must share a type
      if (is_channels_last_max_pool(n)) {
        a = n.inputs[0];
        b = n.outputs[0];
      } else if (is_bf16_fused_conv(n)) {
        a = z_of(n);
        b = n.outputs[0];
      }
      if (a == ir::kNoValue) continue;
      if (producer.count(a) != producer.count(b)) changed = drop(a) || drop(b) || changed;
    }
  }
  int made = 0;
  for (const auto& [v, i] : producer) {
    g.values[static_cast<size_t>(v)].type.dtype = DType::kBFloat16;
    ++made;
    // A pool's type follows its X; a FusedConv says so in attributes its kernel checks.
    if (is_bf16_fused_conv(g.nodes[i])) g.nodes[i].attributes["bf16_output"] = int_attribute(1);
    for (auto [r, slot] : readers[v])
      if (slot == 0 && is_bf16_fused_conv(g.nodes[r])) g.nodes[r].attributes["bf16_input"] = int_attribute(1);
  }
  return made;
}

int keep_bf16_between_products(ir::Graph& g) {
  std::set<int> pinned;
  auto readers = readers_of(g, &pinned);
  int made = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    ir::Node& n = g.nodes[i];
    const bool has_z = n.inputs.size() > 3 && n.inputs[3] != ir::kNoValue;
    if (!is_bf16_fused_matmul(n) || has_z) continue;
    const int y = n.outputs[0];
    auto it = readers.find(y);
    if (pinned.count(y) || it == readers.end()) continue;
    bool ok = true;
    for (auto [r, slot] : it->second) ok = ok && slot == 0 && is_bf16_fused_matmul(g.nodes[r]);
    if (!ok) continue;
    g.values[static_cast<size_t>(y)].type.dtype = DType::kBFloat16;
    n.attributes["bf16_output"] = int_attribute(1);
    for (auto [r, slot] : it->second) g.nodes[r].attributes["bf16_input"] = int_attribute(1);
    ++made;
  }
  return made;
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
  // The fused attention's bf16 products need avx512_bf16 itself and pay only where its dot
  // product outruns the float32 FMA (attention_bf16_pays); elsewhere it stays float32, and
  // inspect's attributes say so by the mark's absence.
  const bool attention = cpu::attention_bf16_pays();
  int marked = 0;
  g.for_each_graph([&](ir::Graph& sg) {
    const std::set<int> data = caller_data(sg);
    for (auto& n : sg.nodes)
      if ((ops.count({n.domain, n.op_type}) && !is_small_image_stem(sg, n, data)) ||
          (attention && n.domain == "com.osprey" && n.op_type == "Attention")) {
        n.attributes[kComputePrecisionAttr] = bf16;
        ++marked;
      }
  });
  g.for_each_graph([](ir::Graph& sg) {
    keep_bf16_between_convs(sg);
    keep_bf16_between_products(sg);
  });
  return marked;
}

}  // namespace osprey::passes
