#include "runtime/packed_constants.h"

#include <malloc.h>

#include "osprey/tensor.h"

namespace osprey {

namespace {

// Value ids of `g` that a subgraph of one of its nodes captures.
std::set<int> captured_ids(const ir::Graph& g) {
  std::set<int> ids;
  for (const auto& n : g.nodes)
    for (const auto& [name, a] : n.attributes) {
      if (a.g) ids.insert(a.g->capture_sources.begin(), a.g->capture_sources.end());
      for (const auto& sg : a.graphs) ids.insert(sg->capture_sources.begin(), sg->capture_sources.end());
    }
  return ids;
}

}  // namespace

PackedConstantReleaser::PackedConstantReleaser(ir::Graph& g) : g_(g) {
  std::set<int> keep(g.inputs.begin(), g.inputs.end());
  keep.insert(g.outputs.begin(), g.outputs.end());
  const std::set<int> captured = captured_ids(g);
  keep.insert(captured.begin(), captured.end());
  for (const auto& n : g.nodes)
    for (int id : n.inputs) {
      if (id == ir::kNoValue || !g.initializers.count(id)) continue;
      Readers& r = readers_[id];
      r.pending += 1;
      r.blocked = r.blocked || keep.count(id) > 0;
    }
}

void PackedConstantReleaser::node_prepared(const ir::Node& n, KernelState* state) {
  if (g_.nodes.empty() || &n < &g_.nodes.front() || &n > &g_.nodes.back()) return;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    auto it = readers_.find(n.inputs[i]);
    if (it == readers_.end()) continue;
    Readers& r = it->second;
    if (state && state->holds_constant(static_cast<int>(i)))
      r.holders.emplace_back(state, static_cast<int>(i));
    else
      r.blocked = true;
    if (--r.pending == 0 && !r.blocked) release(it->first, r);
  }
}

void PackedConstantReleaser::release(int id, Readers& r) {
  Tensor& t = g_.initializers.at(id);
  if (t.numel() == 0 || t.raw_data() == nullptr) return;
  released_.count += 1;
  released_.bytes += static_cast<int64_t>(t.nbytes());
  t = Tensor::wrap(t.dtype(), t.shape(), nullptr, nullptr);
  for (auto& [state, input] : r.holders) state->constant_released(input);
  // The last reference is gone: hand the bytes to the system, not to the block cache.
  trim_memory();
  malloc_trim(0);
}

}  // namespace osprey
