#include "core/version_policy.h"

#include <gtest/gtest.h>

namespace osprey::server {
namespace {

using V = std::vector<int64_t>;

inference::ModelVersionPolicy latest(uint32_t n) {
  inference::ModelVersionPolicy p;
  p.mutable_latest()->set_num_versions(n);
  return p;
}
inference::ModelVersionPolicy all() {
  inference::ModelVersionPolicy p;
  p.mutable_all();
  return p;
}
inference::ModelVersionPolicy specific(V versions) {
  inference::ModelVersionPolicy p;
  for (auto v : versions) p.mutable_specific()->add_versions(v);
  return p;
}

TEST(VersionPolicy, Table) {
  struct Case {
    inference::ModelVersionPolicy policy;
    V available, serve, missing;
  } cases[] = {
      {inference::ModelVersionPolicy(), {3, 1, 2}, {3}, {}},  // default: latest 1
      {latest(0), {1, 2}, {2}, {}},
      {latest(2), {1, 5, 3}, {3, 5}, {}},
      {latest(10), {2, 1}, {1, 2}, {}},
      {latest(1), {}, {}, {}},
      {all(), {4, 2, 2}, {2, 4}, {}},
      {specific({1, 3}), {1, 2, 3}, {1, 3}, {}},
      {specific({3, 7}), {1, 3}, {3}, {7}},
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    auto sel = select_versions(cases[i].policy, cases[i].available);
    EXPECT_EQ(sel.serve, cases[i].serve) << "case " << i;
    EXPECT_EQ(sel.missing, cases[i].missing) << "case " << i;
  }
}

}  // namespace
}  // namespace osprey::server
