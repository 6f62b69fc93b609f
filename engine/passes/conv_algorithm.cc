#include "passes/conv_algorithm.h"

#include "kernels/cpu/conv_dnnl.h"
#include "passes/compute_precision.h"
#include "passes/pass_util.h"

namespace osprey::passes {
namespace {

bool all_ones(const ir::Node& n, const char* name) {
  const ir::Attribute* a = n.find_attribute(name);
  if (!a) return true;
  for (int64_t v : a->ints)
    if (v != 1) return false;
  return true;
}

bool winograd_shaped(const ir::Graph& g, const ir::Node& n, Winograd policy) {
  const bool conv = is_op(n, "Conv") || (n.domain == "com.osprey" && n.op_type == "FusedConv");
  const ir::Attribute* precision = n.find_attribute(kComputePrecisionAttr);
  if (!conv || (precision && precision->s == "bf16")) return false;  // "fp32" stays eligible
  const ir::Attribute* group = n.find_attribute("group");
  if (group && group->i != 1) return false;
  if (!all_ones(n, "strides") || !all_ones(n, "dilations")) return false;
  const Tensor* w = constant_tensor(g, input_at(n, 1));
  if (!w || w->dtype() != DType::kFloat32 || w->rank() != 4 || w->dim(2) != 3 || w->dim(3) != 3)
    return false;
  return policy == Winograd::kOn ||
         (w->dim(0) >= cpu::kWinogradMinChannels && w->dim(1) >= cpu::kWinogradMinChannels);
}

}  // namespace

int apply_winograd(ir::Graph& g, Winograd policy, int optimization_level) {
  if (policy == Winograd::kOff || optimization_level < 1) return 0;
  const int64_t mode = policy == Winograd::kOn ? 2 : 1;
  int marked = 0;
  g.for_each_graph([&](ir::Graph& sg) {
    for (auto& n : sg.nodes)
      if (winograd_shaped(sg, n, policy)) {
        n.attributes[kWinogradAttr] = int_attribute(mode);
        ++marked;
      }
  });
  return marked;
}

}  // namespace osprey::passes
