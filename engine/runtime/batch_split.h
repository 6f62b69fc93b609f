// Image-by-image runs of a batch: whether a graph's result for a batch of N is the N results of
// its items, concatenated, so that a session may run a batch one item at a time.
//
// Why: oneDNN 2.6's channels-last convolutions stream the whole batch through every layer, so a
// batch of 8 images keeps ~8x the working set of one image between layers and falls out of the
// caches: MobileNetV2 at batch 8 took ~13 ms per image where one image alone takes ~7.5 ms
// (AVX2). Run item by item, each layer's input is still in cache; with AVX-512 (Zen 5) item by
// item was 0.90-0.97x the whole batch's time as well.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/shape_inference.h"

namespace osprey {

// Why `g` (a main graph, after the passes; `facts` its infer_shapes) is not separable along axis 0, or "" when it is:
// every non-initializer graph input is a tensor whose first dim is symbolic (the same symbol
// for all of them), every node is one whose items do not mix along axis 0 (convolutions,
// pools, element-wise ops against constants that do not broadcast along it, reductions,
// softmaxes and concatenations over other axes, Transpose keeping axis 0 first, Flatten,
// Reshape keeping dim 0, products of batched rows by constant weights), and every graph
// output carries the batch on axis 0. Nodes with subgraphs are not separable.
std::string batch_split_obstacle(const ir::Graph& g, const passes::ShapeFacts& facts);

// True when the graph has a convolution (the kind of model the split is for).
bool has_convolution(const ir::Graph& g);

// What a whole batch shares and what it keeps, from the weighted nodes' shapes with the batch dim
// as 1 (convolutions, and products of batched rows by constant weights: MatMul, Gemm), those
// from node `first_node` on: their constant weights' bytes; per item the bytes of their inputs
// and outputs, summed and the largest single node's. `known` is false when there is no weighted
// node or some weighted node's shape is not fixed beyond its batch dim.
struct WeightTraffic {
  double weight_bytes = 0, act_bytes = 0, max_act_bytes = 0;
  bool known = false;
};
WeightTraffic weight_traffic(const ir::Graph& g, const passes::ShapeFacts& facts, size_t first_node = 0);

// The largest batch that runs faster whole than item by item (0: none): the weights must be at
// least half the bytes the weighted nodes move per item (a whole batch reads each weight once
// instead of once per item: ResNet50, 94 MB of weights against 86 MB of activations per item),
// and four times the largest weighted node's inputs and outputs over the whole batch must fit in
// the last-level cache (`llc_bytes`; 0 when unknown), so that the batch's activations stay
// cached between layers. Measured at batch 8, one core: ResNet50 whole in 0.85x the split's
// time on a Xeon with a 480 MiB L3, split in 0.93-0.97x the whole batch's on a Zen 5 with 32
// MiB; MobileNetV2 and EfficientNet-Lite0 (weights a sixth of their activations) split faster
// on both. Four, not two: on an Ice Lake Xeon with a 48 MiB L3 (shared with other tenants),
// ResNet50's layer3.0 conv1 at batch 8 (19 MB in and out, 40% of the L3) took 2.1x the time of
// its 8 items one by one.
int64_t whole_batch_limit(const WeightTraffic& t, int64_t llc_bytes);

// Where a batch may run whole: from node `node` of the node list on (0: the whole graph). The
// nodes before it run item by item, and `value` (kNoValue when node is 0), the one value they
// make that later nodes read, batched, is gathered into the whole batch for the rest.
// `whole_up_to` is whole_batch_limit of the weighted nodes from `node` on; `gain` is their
// weight bytes twice less their activation bytes per item (what reusing the weights saves
// against what the batch's activations cost in cache), so the larger the better.
struct BatchCut {
  size_t node = 0;
  int value = ir::kNoValue;
  int64_t whole_up_to = 0;
  double gain = 0;
};

// The places where a batch of `g` (separable: batch_split_obstacle is "") may run whole, best
// (largest gain; at equal gains the later node) first: the whole graph and each node boundary
// that exactly one batched value made before it crosses, where the weighted nodes after it have
// a gain of at least 0 and a whole_up_to of at least 2. ResNet50 on an Ice Lake with a 48 MiB
// L3: batches of 6 to 10 run whole from layer3.1 on (layers 1 and 2 carry 4x the activations per
// weight byte and ran 8-20% slower whole at batch 8; layers 3 and 4 and the classifier ran
// faster, the classifier 5.5 -> 0.8 ms).
std::vector<BatchCut> batch_cuts(const ir::Graph& g, const passes::ShapeFacts& facts, int64_t llc_bytes);

}  // namespace osprey
