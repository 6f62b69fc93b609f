#include "core/version_policy.h"

#include <algorithm>
#include <set>

namespace osprey::server {

VersionSelection select_versions(const inference::ModelVersionPolicy& policy,
                                 std::vector<int64_t> available) {
  std::sort(available.begin(), available.end());
  available.erase(std::unique(available.begin(), available.end()), available.end());
  VersionSelection out;
  switch (policy.policy_choice_case()) {
    case inference::ModelVersionPolicy::kAll:
      out.serve = available;
      break;
    case inference::ModelVersionPolicy::kSpecific: {
      std::set<int64_t> wanted(policy.specific().versions().begin(),
                               policy.specific().versions().end());
      for (int64_t v : wanted) {
        if (std::binary_search(available.begin(), available.end(), v))
          out.serve.push_back(v);
        else
          out.missing.push_back(v);
      }
      break;
    }
    case inference::ModelVersionPolicy::kLatest:
    case inference::ModelVersionPolicy::POLICY_CHOICE_NOT_SET: {
      size_t n = 1;
      if (policy.has_latest() && policy.latest().num_versions() > 0)
        n = policy.latest().num_versions();
      size_t first = available.size() > n ? available.size() - n : 0;
      out.serve.assign(available.begin() + static_cast<std::ptrdiff_t>(first), available.end());
      break;
    }
  }
  return out;
}

}  // namespace osprey::server
