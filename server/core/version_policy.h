// Which versions of a model to serve: a pure function of the policy and what is on disk.
#pragma once

#include <cstdint>
#include <vector>

#include "osprey_server/model_config.pb.h"

namespace osprey::server {

struct VersionSelection {
  std::vector<int64_t> serve;    // ascending
  std::vector<int64_t> missing;  // asked for by a `specific` policy but not available
};

// `available` need not be sorted or unique. No policy set = latest 1 (Triton's default);
// latest with num_versions 0 is treated as 1.
VersionSelection select_versions(const inference::ModelVersionPolicy& policy,
                                 std::vector<int64_t> available);

}  // namespace osprey::server
