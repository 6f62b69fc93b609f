// channels_blocked (level 2, after channels_last): connected channels-last convolutions move to
// oneDNN's blocked layout nChw8c. Their X, Z and Y become [N, C/8, H, W, 8] (channel c at
// [c / 8, ..., c % 8]) and each FusedConv trades channels_last = 1 for channels_blocked = 8.
// A value crossing into the region from a channels-last producer becomes blocked through a
// Reshape to [N, H, W, C/8, 8] and a Transpose; one leaving it comes back the opposite way.
//
// Why: without AVX-512, oneDNN's 1x1 convolution with a residual sum post-op (ResNet's
// expanding convolutions) runs 1.2-1.6x slower over nhwc than over nChw8c when Y and Z come
// from memory (docs/PERFORMANCE.md, 2026-12-01 and 2026-12-02); in a ResNet50 they do, because
// its weights stream through the cache every run. The 3x3 convolutions keep their tap form in
// the blocked layout (conv_taps.h) where it pays.
//
// What converts: a FusedConv with channels_last = 1, one group, constant 4-D weights and input
// and output channel counts that are multiples of 8. Such convolutions are grouped into regions
// (one reads another's Y as its X or Z). SessionOptions::blocked_layout (PassContext) decides:
// kAuto converts only where oneDNN has no AVX-512 kernels, and only a region with at least 4
// convolutions and 4 per conversion it needs (entering or leaving values), so MobileNet-like
// graphs, whose pointwise convolutions alternate with depthwise ones, stay as they are; kOn
// converts every region; kOff none. Element-wise and pooling ops stay channels-last. The main
// graph only.
#include <algorithm>
#include <numeric>

#include "kernels/cpu/cpu_capabilities.h"
#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {
namespace {

constexpr int64_t kBlock = 8;

bool candidate(const ir::Graph& g, const GraphIndex& ix, const ir::Node& n) {
  if (n.domain != kOspreyDomain || n.op_type != "FusedConv" || n.inputs.size() < 2 ||
      n.outputs.size() != 1 || n.outputs[0] == ir::kNoValue || n.inputs[0] == ir::kNoValue)
    return false;
  const ir::Attribute* cl = n.find_attribute("channels_last");
  if (!cl || cl->type != ir::Attribute::Type::kInt || cl->i != 1) return false;
  if (n.find_attribute("channels_blocked")) return false;
  const ir::Attribute* group = n.find_attribute("group");
  if (group && (group->type != ir::Attribute::Type::kInt || group->i != 1)) return false;
  const Tensor* w = constant_tensor(g, n.inputs[1]);
  if (!w || w->dtype() != DType::kFloat32 || w->rank() != 4 || w->dim(0) % kBlock != 0) return false;
  const auto x = static_cast<size_t>(n.inputs[0]);
  if (!ix.facts.has_shape[x] || ix.facts.shapes[x].size() != 4 ||
      ix.dtype(n.inputs[0]) != DType::kFloat32)
    return false;
  const auto& c = ix.facts.shapes[x][3];
  if (!c.fixed() || c.value % kBlock != 0 || c.value != w->dim(1)) return false;
  // A residual Z is converted on its own when it comes from outside: its channels must be known.
  const int z = input_at(n, 3);
  if (z == ir::kNoValue) return true;
  const auto zu = static_cast<size_t>(z);
  return ix.facts.has_shape[zu] && ix.facts.shapes[zu].size() == 4 &&
         ix.facts.shapes[zu][3].fixed() && ix.facts.shapes[zu][3].value == w->dim(0);
}

// Union-find over node indices.
int root(std::vector<int>& parent, int i) {
  while (parent[static_cast<size_t>(i)] != i)
    i = parent[static_cast<size_t>(i)] = parent[static_cast<size_t>(parent[static_cast<size_t>(i)])];
  return i;
}

// The name a blocked twin of channels-last value `name` gets.
std::string blocked_name(const std::string& name) {
  const std::string suffix = "_nhwc";
  const bool nhwc = name.size() > suffix.size() &&
                    name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  return (nhwc ? name.substr(0, name.size() - suffix.size()) : name) + "_nChw8c";
}

class ChannelsBlocked final : public Pass {
 public:
  const char* name() const override { return "channels_blocked"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    const BlockedLayout policy = ctx.blocked_layout;
    if (ctx.in_subgraph || policy == BlockedLayout::kOff) return false;
    if (policy == BlockedLayout::kAuto && cpu::avx512_kernels_available()) return false;
    GraphIndex ix(g, false);
    const size_t nodes = g.nodes.size();
    std::vector<bool> cand(nodes, false);
    std::vector<int> parent(nodes);
    std::iota(parent.begin(), parent.end(), 0);
    for (size_t i = 0; i < nodes; ++i) cand[i] = candidate(g, ix, g.nodes[i]);
    // Regions: a candidate joins the candidates that produce its X or Z.
    for (size_t i = 0; i < nodes; ++i) {
      if (!cand[i]) continue;
      for (int v : activations(g.nodes[i])) {
        const int p = ix.producers[static_cast<size_t>(v)];
        if (p >= 0 && cand[static_cast<size_t>(p)])
          parent[static_cast<size_t>(root(parent, p))] = root(parent, static_cast<int>(i));
      }
    }
    // Per region: its convolutions and the conversions it needs.
    std::vector<int> convs(nodes, 0), crossings(nodes, 0);
    std::vector<bool> counted_in(g.values.size(), false);
    for (size_t i = 0; i < nodes; ++i) {
      if (!cand[i]) continue;
      const int r = root(parent, static_cast<int>(i));
      ++convs[static_cast<size_t>(r)];
      for (int v : activations(g.nodes[i])) {
        const int p = ix.producers[static_cast<size_t>(v)];
        if ((p < 0 || !cand[static_cast<size_t>(p)]) && !counted_in[static_cast<size_t>(v)]) {
          counted_in[static_cast<size_t>(v)] = true;
          ++crossings[static_cast<size_t>(r)];
        }
      }
      if (leaves(g, ix, cand, g.nodes[i].outputs[0])) ++crossings[static_cast<size_t>(r)];
    }
    std::vector<bool> convert(nodes, false);
    bool any = false;
    for (size_t i = 0; i < nodes; ++i) {
      if (!cand[i]) continue;
      const auto r = static_cast<size_t>(root(parent, static_cast<int>(i)));
      convert[i] = policy == BlockedLayout::kOn ||
                   (convs[r] >= 4 && convs[r] >= 4 * crossings[r]);
      any = any || convert[i];
    }
    if (!any) return false;

    opset_ = default_opset(g);
    added_.clear();
    twin_.assign(g.values.size(), ir::kNoValue);
    // Every converted Y gets its blocked twin first, so readers find it whatever the order.
    for (size_t i = 0; i < nodes; ++i) {
      if (!convert[i]) continue;
      const int y = g.nodes[i].outputs[0];
      twin_[static_cast<size_t>(y)] =
          add_unique_value(g, blocked_name(g.values[static_cast<size_t>(y)].name), float_tensor_type());
    }
    for (size_t i = 0; i < nodes; ++i) {
      if (!convert[i]) continue;
      ir::Node& n = g.nodes[i];
      n.attributes.erase("channels_last");
      n.attributes["channels_blocked"] = int_attribute(kBlock);
      n.kernel = nullptr;
      n.inputs[0] = twin_of(g, ix, n.inputs[0]);
      if (input_at(n, 3) != ir::kNoValue) n.inputs[3] = twin_of(g, ix, n.inputs[3]);
      const int y = n.outputs[0];
      n.outputs[0] = twin_[static_cast<size_t>(y)];
      if (leaves(g, ix, convert, y)) to_channels_last(g, n.outputs[0], y, n.name);
    }
    for (auto& n : added_) g.nodes.push_back(std::move(n));
    return true;
  }

 private:
  // A convolution's X and residual Z (the values that carry its layout).
  static std::vector<int> activations(const ir::Node& n) {
    std::vector<int> v = {n.inputs[0]};
    if (input_at(n, 3) != ir::kNoValue) v.push_back(n.inputs[3]);
    return v;
  }

  // True when `y` is read other than as X or Z of a node in `in_region` (or is a graph output
  // or captured by a subgraph).
  static bool leaves(const ir::Graph& g, const GraphIndex& ix, const std::vector<bool>& in_region,
                     int y) {
    const auto u = static_cast<size_t>(y);
    if (ix.uses.output[u] || ix.uses.captured[u]) return true;
    for (int r : ix.readers[u]) {
      const ir::Node& n = g.nodes[static_cast<size_t>(r)];
      if (!in_region[static_cast<size_t>(r)]) return true;
      for (size_t s = 0; s < n.inputs.size(); ++s)
        if (n.inputs[s] == y && s != 0 && s != 3) return true;
    }
    return false;
  }

  // The blocked twin of channels-last `v`: a converted producer's Y, or one conversion of a
  // value from outside (made once, shared by every converted reader).
  int twin_of(ir::Graph& g, const GraphIndex& ix, int v) {
    const auto u = static_cast<size_t>(v);
    if (twin_[u] != ir::kNoValue) return twin_[u];
    const std::string name = g.values[u].name;
    const int64_t c = ix.facts.shapes[u][3].value;
    const int split = add_unique_value(g, blocked_name(name) + "_split", float_tensor_type());
    add_reshape(g, v, split, {0, 0, 0, c / kBlock, kBlock}, name + "/to_nChw8c");
    const int made = add_unique_value(g, blocked_name(name), float_tensor_type());
    add_transpose(split, made, {0, 3, 1, 2, 4}, name + "/to_nChw8c");
    twin_[u] = made;
    return made;
  }

  // blocked `t` [N, C/8, H, W, 8] back to channels-last `y` [N, H, W, C].
  void to_channels_last(ir::Graph& g, int t, int y, const std::string& near) {
    const int split = add_unique_value(g, g.values[static_cast<size_t>(t)].name + "_split", float_tensor_type());
    add_transpose(t, split, {0, 2, 3, 1, 4}, near + "/from_nChw8c");
    add_reshape(g, split, y, {0, 0, 0, -1}, near + "/from_nChw8c");
  }

  void add_transpose(int from, int to, std::vector<int64_t> perm, const std::string& name) {
    ir::Node t;
    t.name = name;
    t.op_type = "Transpose";
    t.opset = opset_;
    t.inputs = {from};
    t.outputs = {to};
    t.attributes["perm"] = ints_attribute(std::move(perm));
    added_.push_back(std::move(t));
  }

  void add_reshape(ir::Graph& g, int from, int to, const std::vector<int64_t>& shape,
                   const std::string& name) {
    Tensor s(DType::kInt64, {static_cast<int64_t>(shape.size())});
    for (size_t i = 0; i < shape.size(); ++i) s.data<int64_t>()[i] = shape[i];
    const int sid = add_unique_value(g, name + "/shape", tensor_value_type(s));
    g.initializers[sid] = std::move(s);
    ir::Node r;
    r.name = name + "/reshape";
    r.op_type = "Reshape";
    r.opset = std::max(opset_, 5);  // the shape as an input (opset 5 on)
    r.inputs = {from, sid};
    r.outputs = {to};
    added_.push_back(std::move(r));
  }

  int opset_ = 13;
  std::vector<int> twin_;  // value id -> its blocked twin
  std::vector<ir::Node> added_;
};

}  // namespace

std::unique_ptr<Pass> make_channels_blocked() {
  return std::make_unique<ChannelsBlocked>();
}

}  // namespace osprey::passes
