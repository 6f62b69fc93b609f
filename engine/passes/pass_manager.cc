#include "passes/pass_manager.h"

#include <algorithm>
#include <chrono>

#include "passes/compute_precision.h"
#include "passes/conv_algorithm.h"
#include "passes/graph_dump.h"

namespace osprey::passes {

PassManagerOptions PassManagerOptions::from_session(const SessionOptions& o) {
  PassManagerOptions p;
  p.level = o.optimization_level;
  p.max_tensor_elements = o.max_tensor_elements;
  p.blocked_layout = o.blocked_layout;
  p.disabled = o.disabled_passes;
  p.time_passes = true;  // a clock read per pass: Session::load_report
  p.dump = o.pass_dump;
  return p;
}

PassManager PassManager::with_default_passes(PassManagerOptions options) {
  PassManager pm(std::move(options));
  // Level 1: clean-ups and folds.
  pm.add(make_identity_elimination());
  pm.add(make_qdq_conv_fusion());  // before folding turns DequantizeLinear(w_q) into floats
  pm.add(make_qdq_matmul_fusion());  // likewise
  pm.add(make_constant_folding());
  pm.add(make_inline_captured_constants());  // what folding made constant, into subgraphs
  pm.add(make_shape_folding());
  pm.add(make_constant_folding());  // what the folded shapes made constant
  // The Shape chains that folded targets no longer read: the fusions below see the readers of a
  // value, and a dead Shape of one (an attention's output) would stop them.
  pm.add(make_dead_code_elimination());
  pm.add(make_qdq_conv_fusion());   // Pads whose pads folding computed, into the int8 convolutions
  pm.add(make_qdq_add_fusion());
  pm.add(make_qoperator_rewrite());  // QOperator-format int8 ops onto the ones the QDQ path runs
  pm.add(make_common_subexpression_elimination());
  pm.add(make_conv_bn_fold());
  pm.add(make_pad_conv_fold());
  // Level 2: fusions into com.osprey ops. GELU first, so that it can become the activation of
  // a fused product; residual Adds before activations (act(conv + z)).
  pm.add(make_gelu_fusion());
  pm.add(make_matmul_integer_fusion());
  pm.add(make_layer_norm_fusion());
  pm.add(make_hard_swish_fusion());
  pm.add(make_conv_mul_add_fold());
  pm.add(make_conv_add_fusion());
  pm.add(make_conv_activation_fusion());
  pm.add(make_matmul_add_fusion());
  pm.add(make_activation_affine_fusion());
  pm.add(make_attention_fusion());
  pm.add(make_qkv_projection_merge());  // Q, K, V products of one input, packed
  pm.add(make_transpose_reshape_cancellation());
  // Layout last: the convolutions it moves to channels-last are the fused ones.
  pm.add(make_channels_last());
  pm.add(make_channels_blocked());
  pm.add(make_dead_code_elimination());
  return pm;
}

// The pass runs on `g` first, then on the subgraphs of the nodes that remain.
Result<bool> PassManager::run_on_graph_tree(Pass& pass, ir::Graph& g, PassContext& ctx) {
  OSPREY_ASSIGN_OR_RETURN(bool changed, pass.run(g, ctx));
  const bool was_sub = ctx.in_subgraph;
  ctx.in_subgraph = true;
  for (auto& n : g.nodes)
    for (auto& [k, a] : n.attributes) {
      std::vector<ir::Graph*> subs;
      if (a.g) subs.push_back(a.g.get());
      for (auto& sg : a.graphs) subs.push_back(sg.get());
      for (ir::Graph* sg : subs) {
        auto r = run_on_graph_tree(pass, *sg, ctx);
        if (!r.ok()) {
          ctx.in_subgraph = was_sub;
          return r.status().with_context(n.display_name() + " subgraph");
        }
        changed = changed || *r;
      }
    }
  ctx.in_subgraph = was_sub;
  return changed;
}

namespace {
std::vector<std::string> names_of(const ir::Graph& g, const std::vector<int>& ids) {
  std::vector<std::string> out;
  for (int id : ids) out.push_back(g.values[static_cast<size_t>(id)].name);
  return out;
}

// Every disabled name is a pass of the pipeline; the error lists them (each once, in order).
Status check_disabled(const std::vector<std::unique_ptr<Pass>>& passes,
                      const std::vector<std::string>& disabled) {
  std::vector<std::string> names;
  for (const auto& p : passes)
    if (std::find(names.begin(), names.end(), p->name()) == names.end()) names.push_back(p->name());
  for (const auto& d : disabled) {
    if (std::find(names.begin(), names.end(), d) != names.end()) continue;
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    return invalid_argument("disabled pass '", d, "' is not an optimization pass; the passes are: ",
                            list);
  }
  return Status::Ok();
}
}  // namespace

Status PassManager::run(ir::Graph& g) {
  records_.clear();
  OSPREY_RETURN_IF_ERROR(check_disabled(passes_, options_.disabled));
  if (options_.level <= 0) return Status::Ok();
  const auto inputs = names_of(g, g.inputs);
  const auto outputs = names_of(g, g.outputs);
  PassContext ctx;
  ctx.optimization_level = options_.level;
  ctx.max_tensor_elements = options_.max_tensor_elements;
  ctx.blocked_layout = options_.blocked_layout;
  for (auto& pass : passes_) {
    if (pass->level() > options_.level) continue;
    if (std::find(options_.disabled.begin(), options_.disabled.end(), pass->name()) !=
        options_.disabled.end())
      continue;
    PassRecord rec;
    rec.name = pass->name();
    rec.nodes_before = static_cast<int64_t>(g.nodes.size());
    if (options_.dump) options_.dump(rec.name, "before", dump_graph(g));
    const auto t0 = std::chrono::steady_clock::now();
    auto changed = run_on_graph_tree(*pass, g, ctx);
    if (!changed.ok()) return changed.status().with_context(str_cat("pass ", rec.name));
    rec.changed = *changed;
    if (rec.changed || options_.verify_each_pass) {
      Status s = g.finalize({});
      if (!s.ok())
        return internal_error("pass ", rec.name, " left an invalid graph: ", s.message());
    }
    if (options_.time_passes)
      rec.micros = std::chrono::duration_cast<std::chrono::microseconds>(
                       std::chrono::steady_clock::now() - t0)
                       .count();
    if (options_.verify_each_pass) {
      if (!g.captures.empty())
        return internal_error("pass ", rec.name, " left value '",
                              g.values[static_cast<size_t>(g.captures[0])].name, "' undefined");
      if (names_of(g, g.inputs) != inputs || names_of(g, g.outputs) != outputs)
        return internal_error("pass ", rec.name, " changed the graph's inputs or outputs");
    }
    rec.nodes_after = static_cast<int64_t>(g.nodes.size());
    if (options_.dump) options_.dump(rec.name, "after", dump_graph(g));
    records_.push_back(std::move(rec));
  }
  return Status::Ok();
}

Status optimize(ir::Graph& g, const SessionOptions& options, OptimizationMarks* marks,
                std::vector<PassReport>* reports) {
  auto pm = PassManager::with_default_passes(PassManagerOptions::from_session(options));
  OSPREY_RETURN_IF_ERROR(pm.run(g));
  if (reports) {
    reports->clear();
    for (const PassRecord& r : pm.records())
      reports->push_back(PassReport{r.name, r.changed, r.nodes_before, r.nodes_after,
                                    static_cast<double>(r.micros) / 1000.0});
  }
  OSPREY_ASSIGN_OR_RETURN(const int bf16, apply_precision(g, options.precision, options.optimization_level));
  const int winograd = apply_winograd(g, options.winograd, options.optimization_level);
  if (marks) *marks = OptimizationMarks{bf16, winograd};
  return Status::Ok();
}

}  // namespace osprey::passes
