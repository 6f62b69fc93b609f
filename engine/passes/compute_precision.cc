#include "passes/compute_precision.h"

#include <set>

#include "kernels/cpu/cpu_capabilities.h"

namespace osprey::passes {

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
  int marked = 0;
  g.for_each_graph([&](ir::Graph& sg) {
    for (auto& n : sg.nodes)
      if (ops.count({n.domain, n.op_type})) {
        n.attributes[kComputePrecisionAttr] = bf16;
        ++marked;
      }
  });
  return marked;
}

}  // namespace osprey::passes
