#include "core/model_config_loader.h"

#include <gtest/gtest.h>

#include "core/serving_version.h"

namespace osprey::server {
namespace {

Result<inference::ModelConfig> parse_and_validate(const std::string& text,
                                                  const std::string& model = "m") {
  OSPREY_ASSIGN_OR_RETURN(auto config, parse_model_config(text, "repo/m/config.pbtxt"));
  OSPREY_RETURN_IF_ERROR(validate_model_config(model, &config));
  return config;
}

void expect_error(const std::string& text, const std::string& fragment) {
  auto r = parse_and_validate(text);
  ASSERT_FALSE(r.ok()) << "accepted: " << text;
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(fragment), std::string::npos)
      << "message '" << r.status().message() << "' lacks '" << fragment << "'";
}

TEST(ModelConfigLoader, ParsesTritonConfig) {
  auto r = parse_and_validate(R"(
name: "m"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "x" data_type: TYPE_FP32 dims: [ 3, -1 ] } ]
output [ { name: "y" data_type: TYPE_INT64 dims: [ 2 ] } ]
instance_group [ { count: 2 kind: KIND_CPU } ]
version_policy: { latest { num_versions: 2 } }
dynamic_batching { preferred_batch_size: [ 4, 8 ] max_queue_delay_microseconds: 100 }
parameters { key: "threads" value: { string_value: "2" } }
model_warmup [ { name: "w" batch_size: 2 inputs { key: "x" value: { data_type: TYPE_FP32 dims: [3, 4] zero_data: true } } } ]
)");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->max_batch_size(), 8);
  EXPECT_EQ(r->input(0).dims(1), -1);
  EXPECT_EQ(r->output(0).data_type(), inference::TYPE_INT64);
  EXPECT_EQ(instance_count(*r), 2);
  EXPECT_EQ(r->version_policy().latest().num_versions(), 2u);
  EXPECT_EQ(r->dynamic_batching().preferred_batch_size_size(), 2);
  EXPECT_EQ(r->backend(), "osprey");
  auto params = engine_parameters(*r);
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(params->threads, 2);
  // Not given: the engine's default level (the fusions and the layout pass), as `osprey run`.
  EXPECT_EQ(params->optimization_level, SessionOptions{}.optimization_level);
  EXPECT_EQ(params->optimization_level, 2);
}

TEST(ModelConfigLoader, EmptyConfigGetsNameAndDefaults) {
  auto r = parse_and_validate("", "resnet");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->name(), "resnet");
  EXPECT_EQ(r->platform(), "onnxruntime_onnx");
  EXPECT_EQ(instance_count(*r), 1);
}

TEST(ModelConfigLoader, UnknownFieldNamesFieldWithLineAndColumn) {
  auto r = parse_model_config("name: \"m\"\nsequence_batching { }\n", "repo/m/config.pbtxt");
  ASSERT_FALSE(r.ok());
  const std::string& msg = r.status().message();
  EXPECT_NE(msg.find("repo/m/config.pbtxt:2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no field named \"sequence_batching\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("inference.ModelConfig"), std::string::npos) << msg;
}

TEST(ModelConfigLoader, SyntaxErrorHasPosition) {
  auto r = parse_model_config("name: \"m\"\nmax_batch_size: \"eight\"\n", "c.pbtxt");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("c.pbtxt:2:"), std::string::npos) << r.status().message();
}

TEST(ModelConfigLoader, BadFieldsAreNamed) {
  expect_error("name: \"other\"", "does not match the model directory");
  expect_error("platform: \"tensorrt_plan\"", "platform 'tensorrt_plan'");
  expect_error("backend: \"python\"", "backend 'python'");
  expect_error("max_batch_size: -1", "max_batch_size -1");
  expect_error("input [ { name: \"x\" dims: [ 3 ] } ]", "input 'x': data_type is required");
  expect_error("input [ { name: \"x\" data_type: TYPE_FP32 dims: [ -2 ] } ]", "input 'x': dims[0]");
  expect_error("input [ { data_type: TYPE_FP32 dims: [ 1 ] } ]", "input[0]: name is required");
  expect_error(
      "input [ { name: \"x\" data_type: TYPE_FP32 dims: [1] }, { name: \"x\" data_type: TYPE_FP32 "
      "dims: [1] } ]",
      "input 'x': declared twice");
  expect_error("output [ { name: \"y\" data_type: TYPE_FP32 dims: [ 4 ] reshape { shape: [ 3 ] } } ]",
               "output 'y': reshape");
  expect_error("instance_group [ { kind: KIND_GPU } ]", "KIND_GPU is not supported");
  expect_error("instance_group [ { count: -1 } ]", "instance_group[0]: count -1");
  expect_error("instance_group [ { count: 1000 } ]", "the limit is");
  expect_error("dynamic_batching { }", "dynamic_batching: needs max_batch_size > 0");
  expect_error("max_batch_size: 4 dynamic_batching { preferred_batch_size: [ 8 ] }",
               "preferred_batch_size: 8");
  expect_error("max_batch_size: 4 dynamic_batching { priority_levels: 2 default_priority_level: 3 }",
               "default_priority_level: 3");
  expect_error("version_policy { specific { versions: [ 0 ] } }", "version 0 is not a positive");
  expect_error("parameters { key: \"threads\" value { string_value: \"many\" } }",
               "parameters 'threads': 'many' is not an integer");
  expect_error("parameters { key: \"optimization_level\" value { string_value: \"7\" } }",
               "parameters 'optimization_level': 7 is outside [0, 3]");
  expect_error("parameters { key: \"precision\" value { string_value: \"int8\" } }",
               "parameters 'precision': 'int8'");
  expect_error("parameters { key: \"intra_op_thread_count\" value { string_value: \"1\" } }",
               "unknown key 'intra_op_thread_count'");
  expect_error("default_model_filename: \"../evil.onnx\"", "default_model_filename");
  expect_error(
      "model_warmup [ { name: \"w\" batch_size: 2 inputs { key: \"x\" value { data_type: "
      "TYPE_FP32 dims: [1] zero_data: true } } } ]",
      "model_warmup[0] 'w': batch_size 2 is outside [1, 1]");
  expect_error(
      "model_warmup [ { batch_size: 1 inputs { key: \"x\" value { data_type: TYPE_FP32 dims: [1] "
      "} } } ]",
      "set one of zero_data");
  expect_error(
      "model_warmup [ { batch_size: 1 inputs { key: \"x\" value { data_type: TYPE_FP32 dims: [1] "
      "input_data_file: \"../x\" } } } ]",
      "input_data_file '../x'");
}

TEST(ModelConfigLoader, PreserveOrderingIsAcceptedAndReachesTheBatcher) {
  auto r = parse_and_validate("max_batch_size: 4 dynamic_batching { preserve_ordering: true }");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->dynamic_batching().preserve_ordering());
  EXPECT_TRUE(batcher_config(*r, 16).preserve_ordering);
  auto off = parse_and_validate("max_batch_size: 4 dynamic_batching { }");
  ASSERT_TRUE(off.ok()) << off.status().to_string();
  EXPECT_FALSE(batcher_config(*off, 16).preserve_ordering);
}

TEST(ModelConfigLoader, JsonUsesProtoFieldNames) {
  auto r = parse_and_validate("max_batch_size: 2 input [ { name: \"x\" data_type: TYPE_FP32 dims: [3] } ]");
  ASSERT_TRUE(r.ok());
  std::string json = model_config_to_json(*r);
  EXPECT_NE(json.find("\"max_batch_size\":2"), std::string::npos) << json;
  EXPECT_NE(json.find("\"data_type\":\"TYPE_FP32\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"dims\":[\"3\"]"), std::string::npos) << json;  // int64 as string
}

TEST(ModelConfigLoader, OversizedConfigIsRefused) {
  std::string big(kMaxConfigBytes + 1, ' ');
  auto r = parse_model_config(big, "c.pbtxt");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("over the limit"), std::string::npos);
}

}  // namespace
}  // namespace osprey::server

namespace osprey::server {
namespace {

TEST(ModelConfigLoader, NonUtf8StringsAreRefusedNamingTheField) {
  // TextFormat accepts byte escapes; the config is served as JSON and over gRPC, so only UTF-8.
  auto bad = parse_model_config(
      "input [ { name: \"x\\377\" data_type: TYPE_FP32 dims: [ 4 ] } ]", "repo/m/config.pbtxt");
  ASSERT_TRUE(bad.ok()) << bad.status().to_string();
  Status st = validate_model_config("m", &bad.value());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'input.name' is not valid UTF-8"), std::string::npos) << st.message();

  for (const char* text : {"parameters { key: \"threads\" value { string_value: \"\\300\\200\" } }",
                           "output [ { name: \"\\355\\240\\200\" data_type: TYPE_FP32 dims: [ 1 ] } ]"}) {
    auto c = parse_model_config(text, "repo/m/config.pbtxt");
    ASSERT_TRUE(c.ok()) << text;
    EXPECT_NE(validate_model_config("m", &c.value()).message().find("not valid UTF-8"),
              std::string::npos)
        << text;  // an overlong encoding and a UTF-16 surrogate
  }
  // Multi-byte UTF-8 is fine.
  auto good = parse_model_config(
      "input [ { name: \"\xC3\xA9t\xE2\x82\xAC\xF0\x9F\x98\x80\" data_type: TYPE_FP32 dims: [ 4 ] } ]",
      "repo/m/config.pbtxt");
  ASSERT_TRUE(good.ok());
  EXPECT_TRUE(validate_model_config("m", &good.value()).ok());
}

}  // namespace
}  // namespace osprey::server
