// Aggregation of per-node timings for `osprey bench --profile`.
#include <gtest/gtest.h>

#include "profile_summary.h"

namespace osprey::cli {
namespace {

NodeTiming t(const std::string& name, const std::string& op, double ms,
             const std::string& domain = "") {
  NodeTiming n;
  n.name = name;
  n.op_type = op;
  n.domain = domain;
  n.ms = ms;
  return n;
}

TEST(ProfileSummary, AggregatesPerOpTypeAndNodeOverRuns) {
  ProfileAccumulator acc;
  acc.add({{t("c1", "Conv", 3), t("r1", "Relu", 0.5), t("c2", "FusedConv", 4, "com.osprey"),
             t("", "Relu", 0.5)},
            1, {}});
  acc.add({{t("c1", "Conv", 5), t("r1", "Relu", 1.5), t("c2", "FusedConv", 2, "com.osprey"),
             t("", "Relu", 0.5)},
            1, {}});
  const ProfileSummary s = acc.summary(3);
  EXPECT_EQ(s.runs, 2);
  EXPECT_DOUBLE_EQ(s.node_ms_per_run, 8.5);  // (8 + 9) / 2
  ASSERT_EQ(s.by_op.size(), 3u);
  EXPECT_EQ(s.by_op[0].op_type, "Conv");
  EXPECT_DOUBLE_EQ(s.by_op[0].ms_per_run, 4);
  EXPECT_DOUBLE_EQ(s.by_op[0].share, 8.0 / 17);
  EXPECT_DOUBLE_EQ(s.by_op[0].nodes_per_run, 1);
  EXPECT_EQ(s.by_op[1].op_type, "com.osprey.FusedConv");
  EXPECT_DOUBLE_EQ(s.by_op[1].ms_per_run, 3);
  EXPECT_EQ(s.by_op[2].op_type, "Relu");
  EXPECT_DOUBLE_EQ(s.by_op[2].ms_per_run, 1.5);
  EXPECT_DOUBLE_EQ(s.by_op[2].nodes_per_run, 2);
  ASSERT_EQ(s.top_nodes.size(), 3u);  // capped at top_n
  EXPECT_EQ(s.top_nodes[0].name, "c1");
  EXPECT_EQ(s.top_nodes[1].name, "c2");
  EXPECT_EQ(s.top_nodes[2].name, "r1");  // 1.0 ms/run, ahead of the unnamed 0.5
  EXPECT_EQ(s.top_nodes[2].index, 1u);
  EXPECT_EQ(acc.summary(10).top_nodes[3].name, "#3");  // unnamed nodes by position

  const std::string text = profile_text(s);
  EXPECT_NE(text.find("op type"), std::string::npos) << text;
  EXPECT_NE(text.find("top 3 nodes by time"), std::string::npos) << text;
  EXPECT_NE(text.find("47.1%"), std::string::npos) << text;  // Conv's share
  const std::string json = profile_json(s);
  EXPECT_NE(json.find("\"op_type\": \"com.osprey.FusedConv\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"runs\": 2"), std::string::npos) << json;
}

// A node's kernel form (NodeTiming::kernel) is the one of its last run, in both tables' forms;
// nodes whose kernel does not say have none.
TEST(ProfileSummary, NodesCarryTheirKernelsForm) {
  ProfileAccumulator acc;
  NodeTiming conv = t("c1", "FusedConv", 3, "com.osprey"), relu = t("r1", "Relu", 1);
  conv.kernel = "brgconv:avx512_core";
  acc.add({{conv, relu}, 1, {}});
  conv.kernel = "winograd F(4x4, 3x3)";
  acc.add({{conv, relu}, 1, {}});
  const ProfileSummary s = acc.summary(5);
  ASSERT_EQ(s.top_nodes.size(), 2u);
  EXPECT_EQ(s.top_nodes[0].kernel, "winograd F(4x4, 3x3)");
  EXPECT_EQ(s.top_nodes[1].kernel, "");
  const std::string text = profile_text(s);
  EXPECT_NE(text.find("share   kernel"), std::string::npos) << text;
  EXPECT_NE(text.find("75.0%   winograd F(4x4, 3x3)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("25.0%\n"), std::string::npos) << text;
  const std::string json = profile_json(s);
  EXPECT_NE(json.find("\"kernel\": \"winograd F(4x4, 3x3)\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"kernel\": \"\""), std::string::npos) << json;
}

// Subgraph nodes are summed by path over runs, with how often they ran per run, in a table of
// their own; the op-type table and the shares stay the outermost graph's.
TEST(ProfileSummary, SubgraphNodesByPath) {
  ProfileAccumulator acc;
  NodeTiming body = t("loop > mm", "MatMul", 3);
  body.runs = 4;
  NodeTiming other = t("loop > relu", "Relu", 1);
  RunProfile a{{t("loop", "Loop", 5)}, 1, {}, {body, other}};
  body.runs = 6;
  body.ms = 5;
  RunProfile b{{t("loop", "Loop", 7)}, 1, {}, {body}};
  acc.add(a);
  acc.add(b);
  const ProfileSummary s = acc.summary(10);
  EXPECT_DOUBLE_EQ(s.node_ms_per_run, 6);  // (5 + 7) / 2: the Loop only
  ASSERT_EQ(s.by_op.size(), 1u);
  ASSERT_EQ(s.top_subgraph_nodes.size(), 2u);
  EXPECT_EQ(s.top_subgraph_nodes[0].name, "loop > mm");
  EXPECT_DOUBLE_EQ(s.top_subgraph_nodes[0].ms_per_run, 4);      // (3 + 5) / 2
  EXPECT_DOUBLE_EQ(s.top_subgraph_nodes[0].calls_per_run, 5);   // (4 + 6) / 2
  EXPECT_DOUBLE_EQ(s.top_subgraph_nodes[0].share, 8.0 / 12);
  EXPECT_EQ(s.top_subgraph_nodes[1].name, "loop > relu");
  EXPECT_DOUBLE_EQ(s.top_subgraph_nodes[1].calls_per_run, 0.5);
  EXPECT_EQ(acc.summary(1).top_subgraph_nodes.size(), 1u);  // capped at top_n
  const std::string text = profile_text(s);
  EXPECT_NE(text.find("top 2 subgraph nodes by time"), std::string::npos) << text;
  EXPECT_NE(text.find("calls/run"), std::string::npos) << text;
  const std::string json = profile_json(s);
  EXPECT_NE(json.find("\"subgraph_nodes\": [{\"index\": 0, \"name\": \"loop > mm\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"calls_per_run\": 5"), std::string::npos) << json;
  // Without subgraphs the text has no such table.
  ProfileAccumulator flat;
  flat.add({{t("c1", "Conv", 3)}, 1, {}});
  EXPECT_EQ(profile_text(flat.summary(5)).find("subgraph"), std::string::npos);
}

TEST(ProfileSummary, NoRunsIsEmpty) {
  const ProfileSummary s = ProfileAccumulator().summary(15);
  EXPECT_EQ(s.runs, 0);
  EXPECT_TRUE(s.by_op.empty());
  EXPECT_TRUE(s.top_nodes.empty());
}

}  // namespace
}  // namespace osprey::cli
