// common_subexpression_elimination (level 1): nodes with the same op, domain, opset, attributes
// and inputs compute the same outputs; the later one is removed and its readers read the
// earlier one's outputs. Inputs are compared after earlier merges, so whole repeated chains
// (BERT's per-layer Shape -> Gather -> Unsqueeze) collapse in one run.
// Never merged: nodes with subgraphs, random ops (RandomUniform/Normal(Like), Bernoulli,
// Multinomial), Dropout (random in training mode), nodes without inputs other than Constant,
// and a node whose outputs are graph outputs or read by a subgraph (their names must stay).
#include <cstring>
#include <set>
#include <unordered_map>

#include "passes/pass.h"
#include "passes/pass_util.h"

namespace osprey::passes {
namespace {

bool never_merge(const ir::Node& n) {
  static const std::set<std::string> kOps = {
      "RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Bernoulli",
      "Multinomial",   "Dropout"};
  if (has_subgraph(n)) return true;
  if (!n.domain.empty()) return n.domain != "com.osprey";
  return kOps.count(n.op_type) > 0 || (n.inputs.empty() && n.op_type != "Constant");
}

void append_tensor(const Tensor& t, std::string* key) {
  *key += str_cat("T", static_cast<int>(t.dtype()), "[");
  for (int64_t d : t.shape()) *key += str_cat(d, ",");
  *key += "]";
  if (t.dtype() == DType::kString) {
    for (int64_t i = 0; i < t.numel(); ++i) {
      const std::string& s = t.data<std::string>()[i];
      *key += str_cat(s.size(), ":", s);
    }
    return;
  }
  const auto* p = static_cast<const char*>(t.raw_data());
  key->append(p, static_cast<size_t>(t.nbytes()));
}

// A byte string equal for two nodes exactly when they compute the same thing.
std::string node_key(const ir::Node& n) {
  std::string key = str_cat(n.domain, "|", n.op_type, "|", n.opset, "|", n.outputs.size(), "|");
  for (int i : n.inputs) key += str_cat(i, ",");
  for (int o : n.outputs) key += o == ir::kNoValue ? "-," : "+,";
  for (const auto& [name, a] : n.attributes) {
    key += str_cat("|", name, "=", static_cast<int>(a.type), ":");
    switch (a.type) {
      case ir::Attribute::Type::kFloat:
        key.append(reinterpret_cast<const char*>(&a.f), sizeof a.f);
        break;
      case ir::Attribute::Type::kInt: key += str_cat(a.i); break;
      case ir::Attribute::Type::kString: key += str_cat(a.s.size(), ":", a.s); break;
      case ir::Attribute::Type::kTensor: append_tensor(a.t, &key); break;
      case ir::Attribute::Type::kFloats:
        key.append(reinterpret_cast<const char*>(a.floats.data()), a.floats.size() * sizeof(float));
        break;
      case ir::Attribute::Type::kInts:
        for (int64_t v : a.ints) key += str_cat(v, ",");
        break;
      case ir::Attribute::Type::kStrings:
        for (const auto& s : a.strings) key += str_cat(s.size(), ":", s);
        break;
      case ir::Attribute::Type::kTensors:
        for (const auto& t : a.tensors) append_tensor(t, &key);
        break;
      default: break;  // graphs never reach here (never_merge)
    }
  }
  return key;
}

class CommonSubexpressionElimination final : public Pass {
 public:
  const char* name() const override { return "common_subexpression_elimination"; }
  int level() const override { return 1; }

  Result<bool> run(ir::Graph& g, PassContext&) override {
    const ValueUses uses = compute_uses(g);
    std::unordered_map<std::string, size_t> seen;
    std::vector<bool> dead(g.nodes.size(), false);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {  // topological order
      const ir::Node& n = g.nodes[i];
      if (never_merge(n)) continue;
      auto [it, fresh] = seen.emplace(node_key(n), i);
      if (fresh) continue;
      bool keeps_names = false;
      for (int o : n.outputs)
        if (o != ir::kNoValue)
          keeps_names = keeps_names || uses.output[static_cast<size_t>(o)] ||
                        uses.captured[static_cast<size_t>(o)];
      if (keeps_names) continue;
      const ir::Node& first = g.nodes[it->second];
      for (size_t k = 0; k < n.outputs.size(); ++k)
        if (n.outputs[k] != ir::kNoValue) replace_uses(g, n.outputs[k], first.outputs[k]);
      dead[i] = true;
      changed = true;
    }
    if (changed) erase_nodes(g, dead);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_common_subexpression_elimination() {
  return std::make_unique<CommonSubexpressionElimination>();
}

}  // namespace osprey::passes
