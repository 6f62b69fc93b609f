// Options that shape how a Session loads and runs a model.
#pragma once

#include <cstdint>
#include <string>

namespace osprey {

struct SessionOptions {
  // Worker threads for one run; 0 = what sched_getaffinity and the cgroup CPU quota allow.
  int threads = 0;
  // 0 = run the graph as imported; 1 = clean-ups and folds; 2 = also fusions into com.osprey
  // ops (see docs/ARCHITECTURE.md, Optimization passes).
  int optimization_level = 2;
  // Upper bound on the elements of any one tensor (declared or computed). Shapes above
  // this are refused before anything is allocated.
  int64_t max_tensor_elements = int64_t{1} << 31;
  // Upper bound on the bytes held by one run's live intermediates; 0 = no limit.
  int64_t memory_limit_bytes = 0;
  // Directory that external-data paths are relative to when loading from bytes.
  std::string external_data_dir;
};

}  // namespace osprey
