// JSON bodies of the metadata, repository, statistics and config endpoints.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "frontend/http/metadata_json.h"
#include "osprey_server/model_config.pb.h"

namespace osprey::server::http {
namespace {

rapidjson::Document parse(const std::string& s) {
  rapidjson::Document d;
  d.Parse(s.data(), s.size());
  EXPECT_FALSE(d.HasParseError()) << s;
  return d;
}

TEST(MetadataJson, ErrorEscapesTheMessage) {
  auto d = parse(error_json("bad \"x\"\n"));
  EXPECT_STREQ(d["error"].GetString(), "bad \"x\"\n");
}

TEST(MetadataJson, ServerAndModelMetadata) {
  auto s = parse(server_metadata_json({"osprey", "0.1", {"a", "b"}}));
  EXPECT_STREQ(s["name"].GetString(), "osprey");
  EXPECT_STREQ(s["extensions"][1].GetString(), "b");
  ModelMetadata m{"m", {"1", "2"}, "onnxruntime_onnx", {{"x", "FP32", {-1, 3}}}, {{"y", "INT64", {}}}};
  auto d = parse(model_metadata_json(m));
  EXPECT_STREQ(d["versions"][1].GetString(), "2");
  EXPECT_STREQ(d["platform"].GetString(), "onnxruntime_onnx");
  EXPECT_EQ(d["inputs"][0]["shape"][0].GetInt(), -1);
  EXPECT_STREQ(d["outputs"][0]["datatype"].GetString(), "INT64");
  EXPECT_EQ(d["outputs"][0]["shape"].Size(), 0u);
}

TEST(MetadataJson, RepositoryIndex) {
  auto d = parse(repository_index_json({{"a", "1", "READY", ""}, {"b", "", "UNAVAILABLE", "oops"}}));
  ASSERT_TRUE(d.IsArray());
  ASSERT_EQ(d.Size(), 2u);
  EXPECT_STREQ(d[0]["state"].GetString(), "READY");
  EXPECT_STREQ(d[1]["reason"].GetString(), "oops");
  EXPECT_STREQ(d[1]["version"].GetString(), "");
}

TEST(MetadataJson, StatisticsHaveTritonsShape) {
  ModelStats s;
  s.name = "m";
  s.version = "1";
  s.last_inference_ms = 1700000000123;
  s.inference_count = 10;
  s.execution_count = 4;
  s.inference_stats.success = {4, 400};
  s.inference_stats.compute_output = {4, 9};
  s.batch_stats.push_back({2, {1, 2}, {3, 4}, {5, 6}});
  auto d = parse(statistics_json({s}));
  const auto& m = d["model_stats"][0];
  EXPECT_STREQ(m["name"].GetString(), "m");
  EXPECT_EQ(m["last_inference"].GetUint64(), 1700000000123u);
  EXPECT_EQ(m["inference_count"].GetUint64(), 10u);
  EXPECT_EQ(m["execution_count"].GetUint64(), 4u);
  for (const char* k : {"success", "fail", "queue", "compute_input", "compute_infer", "compute_output"})
    EXPECT_TRUE(m["inference_stats"][k].HasMember("count")) << k;
  EXPECT_EQ(m["inference_stats"]["success"]["ns"].GetUint64(), 400u);
  EXPECT_EQ(m["inference_stats"]["compute_output"]["ns"].GetUint64(), 9u);
  EXPECT_EQ(m["batch_stats"][0]["batch_size"].GetUint64(), 2u);
  EXPECT_EQ(m["batch_stats"][0]["compute_infer"]["count"].GetUint64(), 3u);
  EXPECT_EQ(m["batch_stats"][0]["compute_output"]["ns"].GetUint64(), 6u);
}

TEST(MetadataJson, ModelConfigKeepsProtoFieldNames) {
  inference::ModelConfig c;
  c.set_name("m");
  c.set_max_batch_size(8);
  auto json = model_config_json(c);
  ASSERT_TRUE(json.ok());
  auto d = parse(*json);
  EXPECT_STREQ(d["name"].GetString(), "m");
  EXPECT_EQ(d["max_batch_size"].GetInt(), 8);
  EXPECT_TRUE(d.HasMember("platform"));  // primitive fields are printed even when empty
}

TEST(MetadataJson, ConfigPrints64BitIntegersAsNumbers) {
  inference::ModelConfig c;
  c.set_name("123");
  auto* in = c.add_input();
  in->set_name("x");
  in->add_dims(-1);
  in->add_dims(224);
  auto* db = c.mutable_dynamic_batching();
  db->set_max_queue_delay_microseconds(2000);
  db->set_priority_levels(2);
  (*db->mutable_priority_queue_policy())[1].set_default_timeout_microseconds(500);
  auto json = model_config_json(c);
  ASSERT_TRUE(json.ok());
  auto d = parse(*json);
  const auto& dims = d["input"][0]["dims"];
  ASSERT_TRUE(dims.IsArray());
  EXPECT_EQ(dims[0].GetInt64(), -1);
  EXPECT_EQ(dims[1].GetInt64(), 224);
  EXPECT_EQ(d["dynamic_batching"]["max_queue_delay_microseconds"].GetInt64(), 2000);
  EXPECT_EQ(d["dynamic_batching"]["priority_levels"].GetInt64(), 2);
  // Map keys stay object member names; the values' 64-bit fields are numbers too.
  const auto& policy = d["dynamic_batching"]["priority_queue_policy"]["1"];
  EXPECT_EQ(policy["default_timeout_microseconds"].GetInt64(), 500);
  // A string that happens to look like a number is left a string.
  ASSERT_TRUE(d["name"].IsString());
  EXPECT_STREQ(d["name"].GetString(), "123");
}

}  // namespace
}  // namespace osprey::server::http
