// A graph optimization pass: a small IR -> IR rewrite with a name and a level.
// Passes are run by the PassManager (pass_manager.h) over the main graph and every subgraph.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "osprey/options.h"
#include "osprey/status.h"

namespace osprey::passes {

// What a pass may know about where it runs.
struct PassContext {
  int optimization_level = 1;
  // The session's element limit; passes never create a tensor above it.
  int64_t max_tensor_elements = int64_t{1} << 31;
  // True while the pass runs on a subgraph (If/Loop/Scan body) rather than the main graph.
  bool in_subgraph = false;
  // SessionOptions::blocked_layout, for channels_blocked.
  BlockedLayout blocked_layout = BlockedLayout::kAuto;
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual const char* name() const = 0;
  // The lowest session optimization level at which the pass runs (>= 1; level 0 runs none).
  virtual int level() const = 0;
  // Rewrites `g` (one graph, not its subgraphs: the manager visits those) and returns whether
  // it changed anything. The manager re-finalizes the graph after a changing pass, so a pass
  // need not keep node order, release_after or implicit inputs up to date; it must keep every
  // read value defined and must not change the graph's input or output names.
  virtual Result<bool> run(ir::Graph& g, PassContext& ctx) = 0;
};

// One factory per pass file.
std::unique_ptr<Pass> make_inline_captured_constants();
std::unique_ptr<Pass> make_identity_elimination();
std::unique_ptr<Pass> make_constant_folding();
std::unique_ptr<Pass> make_conv_bn_fold();
std::unique_ptr<Pass> make_dead_code_elimination();
std::unique_ptr<Pass> make_shape_folding();
std::unique_ptr<Pass> make_common_subexpression_elimination();
std::unique_ptr<Pass> make_gelu_fusion();
std::unique_ptr<Pass> make_hard_swish_fusion();
std::unique_ptr<Pass> make_qdq_conv_fusion();
// Tests: qdq_conv_fusion and qdq_matmul_fusion fuse even where oneDNN's int8 kernels have no
// VNNI (their kernels then run the reference), so that the passes are checked on every machine.
void force_qdq_conv_fusion(bool on);
// Whether the QDQ int8 fusions run: where oneDNN's int8 kernels have VNNI, or when forced.
bool qdq_int8_fusions_allowed();
std::unique_ptr<Pass> make_qdq_matmul_fusion();
std::unique_ptr<Pass> make_qdq_add_fusion();
std::unique_ptr<Pass> make_matmul_integer_fusion();
std::unique_ptr<Pass> make_qoperator_rewrite();
std::unique_ptr<Pass> make_activation_affine_fusion();
std::unique_ptr<Pass> make_layer_norm_fusion();
std::unique_ptr<Pass> make_conv_mul_add_fold();
std::unique_ptr<Pass> make_conv_add_fusion();
std::unique_ptr<Pass> make_conv_activation_fusion();
std::unique_ptr<Pass> make_matmul_add_fusion();
std::unique_ptr<Pass> make_attention_fusion();
std::unique_ptr<Pass> make_qkv_projection_merge();
std::unique_ptr<Pass> make_transpose_reshape_cancellation();
std::unique_ptr<Pass> make_channels_last();
std::unique_ptr<Pass> make_channels_blocked();
std::unique_ptr<Pass> make_pad_conv_fold();

}  // namespace osprey::passes
