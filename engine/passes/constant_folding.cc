// constant_folding (level 1): a node whose inputs are all constants (initializers that are not
// graph inputs) is run once with its reference kernel and its outputs become initializers.
// Also folds Shape of a main-graph input declared with fixed dims only (the session rejects
// inputs of any other shape). Not folded: nodes with subgraphs, random ops, Dropout, outputs
// that are not plain tensors, and results above kMaxFoldElements elements that are larger than
// the node's inputs (folding must not blow up the model). A node whose kernel fails is left
// for run time, so the error surfaces as it would without the pass.
#include <algorithm>
#include <set>

#include "kernels/registry.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace osprey::passes {
namespace {

constexpr int64_t kMaxFoldElements = int64_t{1} << 20;

bool never_fold(const ir::Node& n) {
  static const std::set<std::string> kOps = {
      "RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike",
      "Bernoulli",     "Multinomial",  "Dropout",
  };
  return (n.domain.empty() && kOps.count(n.op_type)) || has_subgraph(n);
}

// Shape (with opset-15 start/end) of a main-graph input declared with fixed dims; else undefined.
Tensor static_shape_of(const ir::Graph& g, const ir::Node& n, const PassContext& ctx) {
  if (ctx.in_subgraph || n.inputs.size() != 1 || n.inputs[0] == ir::kNoValue) return {};
  const int x = n.inputs[0];
  if (!is_graph_input(g, x) || g.initializers.count(x)) return {};
  const ir::ValueType& vt = g.values[static_cast<size_t>(x)].type;
  if (vt.kind != ir::ValueType::Kind::kTensor || !vt.has_shape) return {};
  std::vector<int64_t> dims;
  for (const Dim& d : vt.shape) {
    if (!d.is_fixed()) return {};
    dims.push_back(d.value);
  }
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t start = 0, end = rank;
  for (auto [attr, slot] : {std::pair{"start", &start}, std::pair{"end", &end}}) {
    const ir::Attribute* a = n.find_attribute(attr);
    if (!a) continue;
    if (a->type != ir::Attribute::Type::kInt || n.opset < 15) return {};
    int64_t v = a->i < 0 ? a->i + rank : a->i;
    *slot = std::clamp<int64_t>(v, 0, rank);
  }
  std::vector<int64_t> out;
  for (int64_t i = start; i < end; ++i) out.push_back(dims[static_cast<size_t>(i)]);
  Tensor t(DType::kInt64, {static_cast<int64_t>(out.size())});
  for (size_t i = 0; i < out.size(); ++i) t.data<int64_t>()[i] = out[i];
  return t;
}

// Runs the node's reference kernel on constant inputs, as the executor would.
bool evaluate(const ir::Graph& g, const ir::Node& n, int64_t max_elements,
              std::vector<Value>* outputs) {
  std::vector<Value> in_values;
  in_values.reserve(n.inputs.size());
  for (int id : n.inputs)
    in_values.push_back(id == ir::kNoValue ? Value() : Value(g.initializers.at(id)));
  std::vector<const Value*> inputs;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    inputs.push_back(n.inputs[i] == ir::kNoValue ? nullptr : &in_values[i]);
  const DType dtype = !in_values.empty() && in_values[0].is_tensor() ? in_values[0].tensor.dtype()
                                                                     : DType::kUndefined;
  const KernelDef* k = find_kernel(n.op_type, n.domain, n.opset, dtype, /*reference_only=*/true);
  if (!k) return false;
  outputs->assign(n.outputs.size(), Value());
  KernelContext kctx(n, std::move(inputs), outputs, max_elements, nullptr);
  const Status s = k->fn(kctx);
  if (!s.ok() || !kctx.attribute_error().empty()) return false;
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (n.outputs[i] != ir::kNoValue && !(*outputs)[i].is_tensor()) return false;
  return true;
}

class ConstantFolding final : public Pass {
 public:
  const char* name() const override { return "constant_folding"; }
  int level() const override { return 1; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    std::vector<bool> dead(g.nodes.size(), false);
    bool changed = false;
    // Nodes are in topological order, so a folded output is a constant for the nodes after it.
    for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
      const ir::Node& n = g.nodes[ni];
      if (never_fold(n)) continue;
      std::vector<Value> outputs;
      if (n.domain.empty() && n.op_type == "Shape") {
        Tensor t = static_shape_of(g, n, ctx);
        if (t.defined()) outputs.emplace_back(std::move(t));
      }
      if (outputs.empty()) {
        bool all_constant = true;
        int64_t input_elements = 0;
        for (int id : n.inputs) {
          if (id == ir::kNoValue) continue;
          const Tensor* t = constant_tensor(g, id);
          if (!t) {
            all_constant = false;
            break;
          }
          input_elements += t->numel();
        }
        if (!all_constant) continue;
        const int64_t limit =
            std::min(ctx.max_tensor_elements, std::max(kMaxFoldElements, input_elements));
        if (!evaluate(g, n, limit, &outputs)) continue;
        int64_t out_elements = 0;
        for (const auto& v : outputs)
          if (v.is_tensor()) out_elements += v.tensor.numel();
        if (out_elements > kMaxFoldElements && out_elements > input_elements) continue;
      }
      if (outputs.size() != n.outputs.size()) continue;
      for (size_t i = 0; i < n.outputs.size(); ++i) {
        const int o = n.outputs[i];
        if (o == ir::kNoValue) continue;
        g.initializers[o] = std::move(outputs[i].tensor);
      }
      dead[ni] = true;
      changed = true;
    }
    if (changed) erase_nodes(g, dead);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_constant_folding() {
  return std::make_unique<ConstantFolding>();
}

}  // namespace osprey::passes
