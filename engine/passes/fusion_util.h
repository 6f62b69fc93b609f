// Matching helpers shared by the fusion passes (not a pass itself): the activation that may
// follow a fused node, the residual Add that may follow it, and turning a node into one of the
// com.osprey fused ops (contract in engine/kernels/reference/fused.cc).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/pass_util.h"
#include "passes/shape_inference.h"

namespace osprey::passes {

inline constexpr const char* kOspreyDomain = "com.osprey";

// What a pass knows about one graph while it rewrites it; `refresh()` recomputes it.
struct GraphIndex {
  explicit GraphIndex(const ir::Graph& g, bool in_subgraph) : g_(g), in_subgraph_(in_subgraph) {
    refresh();
  }
  void refresh();
  ValueUses uses;
  std::vector<int> producers;
  std::vector<std::vector<int>> readers;
  ShapeFacts facts;
  // The one node reading `id` (read once, not captured, not a graph output), else -1.
  int sole_reader(int id) const;
  DType dtype(int id) const;

 private:
  const ir::Graph& g_;
  bool in_subgraph_;
};

// Calls rewrite(g, index, i) on nodes in order until one reports a change, rebuilds the index
// and starts over, until a whole sweep changes nothing. Returns whether anything changed.
template <class Rewrite>
bool rewrite_until_fixed_point(ir::Graph& g, bool in_subgraph, Rewrite rewrite) {
  bool changed = false;
  for (bool progress = true; progress;) {
    progress = false;
    GraphIndex ix(g, in_subgraph);
    for (size_t i = 0; i < g.nodes.size() && !progress; ++i) progress = rewrite(g, ix, i);
    changed = changed || progress;
  }
  return changed;
}

// An activation reading a fused node's output `y`: which one, its parameters, the nodes it is
// made of and the value it produces.
struct ActivationMatch {
  std::string name;
  std::vector<float> params;
  std::vector<int> nodes;
  int output = ir::kNoValue;
};
// The operand of two-input node `n` other than a float32 scalar constant equal to `want` (to a
// relative 1e-4), or kNoValue.
int operand_besides(const ir::Graph& g, const ir::Node& n, double want);
// The one node reading `v` when it is the default-domain binary op `op` with one present
// output; -1 otherwise.
int sole_binary_reader(const ir::Graph& g, const GraphIndex& ix, int v, const char* op);

// A BatchNormalization in inference mode: its first output only, no training_mode, spatial 1.
bool batch_norm_inference(const ir::Node& bn);
// Its constant per-channel parameters for `m` channels, as y = (x - mean) * scale + bias with
// scale = gamma / sqrt(var + eps) computed in double; false when any is not a float32 constant
// of m values or a scale is not finite.
struct BatchNormParams {
  std::vector<double> scale;
  const Tensor* bias = nullptr;
  const Tensor* mean = nullptr;
};
bool batch_norm_params(const ir::Graph& g, const ir::Node& bn, int64_t m, BatchNormParams* p);

// The node writing `v` when it is op `op` of the default domain, else nullptr.
const ir::Node* producer_op(const ir::Graph& g, const GraphIndex& ix, int v, const char* op);

// A QuantizeLinear or DequantizeLinear with per-tensor parameters: a one-value float32
// constant scale and a zero point absent or a one-value uint8 / int8 constant, none of the
// block_size / output_dtype / saturate attributes of later opsets.
bool per_tensor_quantization(const ir::Graph& g, const ir::Node& n);

// A Pad that zero-pads only spatial dims (mode "constant", value 0 or none, constant
// non-negative pads leaving the batch and channel dims alone, no `axes`): its pads (2 * rank
// entries); false otherwise. pad_conv_fold and qdq_conv_fusion fold such pads into a
// convolution's.
bool zero_padding(const ir::Graph& g, const ir::Node& pad, std::vector<int64_t>* pads);
// The same for a Pad of any constant value (of any type), which goes to *value.
bool constant_padding(const ir::Graph& g, const ir::Node& pad, std::vector<int64_t>* pads, double* value);

// Clip's bounds {lo, hi} when they are constants (inputs from opset 11, attributes before).
bool clip_bounds(const ir::Graph& g, const ir::Node& n, std::vector<float>* params);

// Relu, Clip (constant bounds), LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh,
// Mul(y, Sigmoid(y)) (Silu), Gelu (ours, or ONNX's from opset 20), Mish (opset 18). `y` must
// have no other use.
bool match_activation(const ir::Graph& g, const GraphIndex& ix, int y, ActivationMatch* m);

// An Add reading `y` (its only use) and a value `z` of exactly y's shape that does not depend
// on node `fused` (so it can become that node's residual input).
bool match_residual_add(const ir::Graph& g, const GraphIndex& ix, int y, int fused, int* add,
                        int* z);

// The fused node's activation attribute ("" when none or absent).
std::string activation_of(const ir::Node& n);
void set_activation(ir::Node& n, const ActivationMatch& m);
// Makes `n` the com.osprey op `op` (opset 1) with `inputs` input slots (missing ones "").
void make_fused(ir::Node& n, const char* op, size_t inputs);
// Claims a match's nodes for erase_nodes: when none of `nodes` is already dead (taken by an
// earlier match), marks them all dead except `keep` (the node rewritten into the fused op)
// and returns true; otherwise changes nothing and returns false.
bool claim_match(const std::vector<int>& nodes, int keep, std::vector<bool>* dead);
// True when value `v` is computed (directly or not) from an output of node `node`.
bool depends_on(const ir::Graph& g, const std::vector<int>& producers, int v, int node);

}  // namespace osprey::passes
