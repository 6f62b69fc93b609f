// The load parameter "config": JSON into a validated ModelConfig.
#include "core/config_override.h"

#include <gtest/gtest.h>

#include "api/server.h"

namespace osprey::server {
namespace {

TEST(ConfigOverride, ProtoAndJsonFieldNamesBothParse) {
  auto proto_names = parse_config_override(
      R"({"max_batch_size": 4, "dynamic_batching": {"max_queue_delay_microseconds": 100},
          "input": [{"name": "x", "data_type": "TYPE_FP32", "dims": [3]}]})",
      "m");
  ASSERT_TRUE(proto_names.ok()) << proto_names.status().to_string();
  EXPECT_EQ(proto_names->max_batch_size(), 4);
  EXPECT_EQ(proto_names->dynamic_batching().max_queue_delay_microseconds(), 100u);
  ASSERT_EQ(proto_names->input_size(), 1);
  EXPECT_EQ(proto_names->input(0).data_type(), inference::TYPE_FP32);
  auto json_names = parse_config_override(R"({"maxBatchSize": 2, "name": "m"})", "m");
  ASSERT_TRUE(json_names.ok()) << json_names.status().to_string();
  EXPECT_EQ(json_names->max_batch_size(), 2);
  // Completed as a config.pbtxt is: the name from the model, Osprey's platform and backend.
  EXPECT_EQ(json_names->name(), "m");
  EXPECT_EQ(json_names->platform(), "onnxruntime_onnx");
  EXPECT_EQ(json_names->backend(), "osprey");
}

TEST(ConfigOverride, BadOverridesNameTheProblem) {
  struct Case {
    const char* json;
    const char* expected;
  };
  const Case cases[] = {
      {R"({"max_batch_size": 4, "colour": "red"})", "colour"},
      {R"({"max_batch_size": "four"})", "max_batch_size"},
      {R"({"max_batch_size": 4)", "not a valid model configuration"},
      {R"([1, 2])", "not a valid model configuration"},
      {"", "empty"},
      {R"({"name": "other"})", "name 'other' does not match"},
      {R"({"max_batch_size": -1})", "max_batch_size -1 is negative"},
      {R"({"parameters": {"shininess": {"string_value": "9"}}})", "shininess"},
      {R"({"instance_group": [{"count": 100000}]})", "instance"},
  };
  for (const Case& c : cases) {
    auto r = parse_config_override(c.json, "m");
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.json;
    EXPECT_NE(r.status().message().find(c.expected), std::string::npos)
        << c.json << " -> " << r.status().message();
    EXPECT_NE(r.status().message().find("config override"), std::string::npos);
  }
}

TEST(ConfigOverride, SizeIsLimited) {
  std::string big =
      R"({"name": "m", "platform": ")" + std::string(kMaxConfigOverrideBytes, ' ') + R"("})";
  auto r = parse_config_override(big, "m");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("over the limit"), std::string::npos);
}

}  // namespace
}  // namespace osprey::server
