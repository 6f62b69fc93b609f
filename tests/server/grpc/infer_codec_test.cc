// ModelInferRequest -> InferRequest (each validation error, typed == raw), InferResponse ->
// ModelInferResponse, parameter maps.
#include "frontend/grpc/infer_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace osprey::server::grpc_frontend {
namespace {

using ::testing::HasSubstr;
using Input = inference::ModelInferRequest::InferInputTensor;

Input* add_input(inference::ModelInferRequest* m, const std::string& name, const std::string& dt,
                 std::vector<int64_t> shape) {
  Input* in = m->add_inputs();
  in->set_name(name);
  in->set_datatype(dt);
  for (int64_t d : shape) in->add_shape(d);
  return in;
}

std::string floats(std::vector<float> v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

inference::ModelInferRequest raw_request() {
  inference::ModelInferRequest m;
  m.set_model_name("echo");
  m.set_model_version("2");
  m.set_id("req-1");
  add_input(&m, "a", "FP32", {2, 2});
  add_input(&m, "b", "INT8", {3});
  m.add_raw_input_contents(floats({1, 2, 3, 4}));
  m.add_raw_input_contents(std::string("\x01\x02\x03", 3));
  return m;
}

// Decodes and returns the error message (empty when decoding succeeded).
std::string decode_error(inference::ModelInferRequest m, ServerLimits limits = {}) {
  Result<InferRequest> r = decode_infer_request(m, limits);
  return r.ok() ? std::string() : r.status().message();
}

TEST(GrpcInferCodec, RawInputsMovedInOrder) {
  inference::ModelInferRequest m = raw_request();
  const char* first_bytes = m.raw_input_contents(0).data();
  Result<InferRequest> r = decode_infer_request(m, ServerLimits{});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->model_name, "echo");
  EXPECT_EQ(r->model_version, "2");
  EXPECT_EQ(r->id, "req-1");
  ASSERT_EQ(r->inputs.size(), 2u);
  EXPECT_EQ(r->inputs[0].name, "a");
  EXPECT_EQ(r->inputs[0].datatype, "FP32");
  EXPECT_EQ(r->inputs[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(r->inputs[0].data, floats({1, 2, 3, 4}));
  EXPECT_EQ(r->inputs[1].data, std::string("\x01\x02\x03", 3));
  // Moved, not copied: the bytes now live in the decoded tensor and the message is emptied.
  EXPECT_EQ(r->inputs[0].data.data(), first_bytes);
  EXPECT_TRUE(m.raw_input_contents(0).empty());
}

TEST(GrpcInferCodec, TypedContentsEqualRawForEveryDatatype) {
  struct Case {
    std::string dt;
    std::function<void(inference::InferTensorContents*)> fill;
    std::string raw;
  };
  auto i32 = [](std::vector<int32_t> v) {
    std::string s(v.size() * 4, '\0');
    std::memcpy(s.data(), v.data(), s.size());
    return s;
  };
  std::vector<Case> cases = {
      {"BOOL",
       [](auto* c) {
         c->add_bool_contents(true);
         c->add_bool_contents(false);
       },
       std::string("\x01\x00", 2)},
      {"INT8",
       [](auto* c) {
         c->add_int_contents(-1);
         c->add_int_contents(2);
       },
       std::string("\xff\x02", 2)},
      {"INT16",
       [](auto* c) {
         c->add_int_contents(-2);
         c->add_int_contents(258);
       },
       std::string("\xfe\xff\x02\x01", 4)},
      {"INT32",
       [](auto* c) {
         c->add_int_contents(-3);
         c->add_int_contents(65536);
       },
       i32({-3, 65536})},
      {"INT64",
       [](auto* c) {
         c->add_int64_contents(-1);
         c->add_int64_contents(1);
       },
       std::string("\xff\xff\xff\xff\xff\xff\xff\xff\x01\0\0\0\0\0\0\0", 16)},
      {"UINT8",
       [](auto* c) {
         c->add_uint_contents(255);
         c->add_uint_contents(1);
       },
       std::string("\xff\x01", 2)},
      {"UINT16",
       [](auto* c) {
         c->add_uint_contents(258);
         c->add_uint_contents(0);
       },
       std::string("\x02\x01\x00\x00", 4)},
      {"UINT32",
       [](auto* c) {
         c->add_uint_contents(1);
         c->add_uint_contents(2);
       },
       i32({1, 2})},
      {"UINT64",
       [](auto* c) {
         c->add_uint64_contents(2);
         c->add_uint64_contents(3);
       },
       std::string("\x02\0\0\0\0\0\0\0\x03\0\0\0\0\0\0\0", 16)},
      {"FP32",
       [](auto* c) {
         c->add_fp32_contents(0.5f);
         c->add_fp32_contents(-2);
       },
       floats({0.5f, -2})},
      {"FP64",
       [](auto* c) {
         c->add_fp64_contents(1.0);
         c->add_fp64_contents(0);
       },
       std::string("\0\0\0\0\0\0\xf0\x3f\0\0\0\0\0\0\0\0", 16)},
      {"BYTES",
       [](auto* c) {
         c->add_bytes_contents("hi");
         c->add_bytes_contents("x");
       },
       std::string("\x02\0\0\0hi\x01\0\0\0x", 11)},
  };
  for (const Case& c : cases) {
    inference::ModelInferRequest typed;
    typed.set_model_name("m");
    c.fill(add_input(&typed, "t", c.dt, {2})->mutable_contents());
    Result<InferRequest> from_typed = decode_infer_request(typed, ServerLimits{});
    ASSERT_TRUE(from_typed.ok()) << c.dt << ": " << from_typed.status().to_string();
    EXPECT_EQ(from_typed->inputs[0].data, c.raw) << c.dt;

    inference::ModelInferRequest raw;
    raw.set_model_name("m");
    add_input(&raw, "t", c.dt, {2});
    raw.add_raw_input_contents(c.raw);
    Result<InferRequest> from_raw = decode_infer_request(raw, ServerLimits{});
    ASSERT_TRUE(from_raw.ok()) << c.dt << ": " << from_raw.status().to_string();
    EXPECT_EQ(from_raw->inputs[0].data, from_typed->inputs[0].data) << c.dt;
  }
}

TEST(GrpcInferCodec, MissingModelName) {
  inference::ModelInferRequest m = raw_request();
  m.clear_model_name();
  EXPECT_THAT(decode_error(m), HasSubstr("request has no model_name"));
}

TEST(GrpcInferCodec, UnknownDatatypeNamesTensor) {
  inference::ModelInferRequest m = raw_request();
  m.mutable_inputs(1)->set_datatype("INT3");
  EXPECT_THAT(decode_error(m), HasSubstr("input 'b': unknown datatype 'INT3'"));
}

TEST(GrpcInferCodec, NegativeDimension) {
  inference::ModelInferRequest m = raw_request();
  m.mutable_inputs(0)->set_shape(1, -2);
  EXPECT_THAT(decode_error(m), HasSubstr("input 'a': negative dimension -2 in shape [2,-2]"));
}

TEST(GrpcInferCodec, ElementLimitCheckedBeforeConversion) {
  inference::ModelInferRequest m;
  m.set_model_name("m");
  Input* in = add_input(&m, "big", "FP32", {1000, 1000});
  in->mutable_contents()->add_fp32_contents(1);
  ServerLimits limits;
  limits.max_tensor_elements = 1000;
  Result<InferRequest> r = decode_infer_request(m, limits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(r.status().message(),
              HasSubstr("input 'big': shape [1000,1000] has more than 1000 elements"));
}

TEST(GrpcInferCodec, RawByteSizeMismatch) {
  inference::ModelInferRequest m = raw_request();
  m.set_raw_input_contents(0, floats({1, 2, 3}));
  EXPECT_THAT(decode_error(m),
              HasSubstr("input 'a': raw contents hold 12 bytes but 4 FP32 elements need 16"));
}

TEST(GrpcInferCodec, RawAndTypedTogether) {
  inference::ModelInferRequest m = raw_request();
  m.mutable_inputs(1)->mutable_contents()->add_int_contents(1);
  EXPECT_THAT(decode_error(m),
              HasSubstr("input 'b': both raw_input_contents and typed contents given"));
}

TEST(GrpcInferCodec, RawCountMismatch) {
  inference::ModelInferRequest m = raw_request();
  m.mutable_raw_input_contents()->RemoveLast();
  EXPECT_THAT(decode_error(m), HasSubstr("raw_input_contents has 1 entries for 2 inputs"));
}

TEST(GrpcInferCodec, NoDataForInput) {
  inference::ModelInferRequest m;
  m.set_model_name("m");
  add_input(&m, "x", "FP32", {2});
  EXPECT_THAT(decode_error(m), HasSubstr("input 'x': no data"));
  inference::ModelInferRequest empty;  // a zero-element tensor needs no data
  empty.set_model_name("m");
  add_input(&empty, "x", "FP32", {0, 3});
  EXPECT_EQ(decode_error(empty), "");
}

TEST(GrpcInferCodec, TypedErrorsNameTensor) {
  inference::ModelInferRequest m;
  m.set_model_name("m");
  add_input(&m, "x", "INT16", {1})->mutable_contents()->add_int_contents(40000);
  EXPECT_THAT(decode_error(m),
              HasSubstr("input 'x': value 40000 at index 0 is out of range for INT16"));
}

TEST(GrpcInferCodec, UnnamedAndDuplicateInputs) {
  inference::ModelInferRequest m = raw_request();
  m.mutable_inputs(1)->set_name("");
  EXPECT_THAT(decode_error(m), HasSubstr("input 1 has no name"));
  m = raw_request();
  m.mutable_inputs(1)->set_name("a");
  m.mutable_inputs(1)->set_datatype("FP32");
  m.mutable_inputs(1)->clear_shape();
  m.mutable_inputs(1)->add_shape(4);
  m.set_raw_input_contents(1, floats({1, 2, 3, 4}));
  EXPECT_THAT(decode_error(m), HasSubstr("input 'a' is given twice"));
}

TEST(GrpcInferCodec, RequestParametersDecodedAndChecked) {
  inference::ModelInferRequest m = raw_request();
  auto& p = *m.mutable_parameters();
  p["priority"].set_uint64_param(2);
  p["timeout"].set_int64_param(5000);
  p["binary_data_output"].set_bool_param(true);
  p["custom"].set_string_param("v");
  p["scale"].set_double_param(0.5);
  Result<InferRequest> r = decode_infer_request(m, ServerLimits{});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(std::get<int64_t>(r->parameters.at("priority")), 2);
  EXPECT_EQ(std::get<int64_t>(r->parameters.at("timeout")), 5000);
  EXPECT_TRUE(std::get<bool>(r->parameters.at("binary_data_output")));
  EXPECT_EQ(std::get<std::string>(r->parameters.at("custom")), "v");
  EXPECT_EQ(std::get<double>(r->parameters.at("scale")), 0.5);

  m = raw_request();
  (*m.mutable_parameters())["priority"].set_string_param("high");
  EXPECT_THAT(decode_error(m), HasSubstr("request: parameter 'priority' must be an integer"));
  m = raw_request();
  (*m.mutable_parameters())["timeout"].set_int64_param(-1);
  EXPECT_THAT(decode_error(m), HasSubstr("request: parameter 'timeout' must be >= 0, got -1"));
  m = raw_request();
  (*m.mutable_parameters())["binary_data_output"].set_int64_param(1);
  EXPECT_THAT(decode_error(m), HasSubstr("parameter 'binary_data_output' must be a bool"));
  m = raw_request();
  (*m.mutable_parameters())["big"].set_uint64_param(UINT64_MAX);
  EXPECT_THAT(decode_error(m),
              HasSubstr("parameter 'big' = 18446744073709551615 does not fit in int64"));
  m = raw_request();
  (*m.mutable_parameters())["empty"];
  EXPECT_THAT(decode_error(m), HasSubstr("request: parameter 'empty' has no value"));
  m = raw_request();
  (*m.mutable_inputs(0)->mutable_parameters())["empty"];
  EXPECT_THAT(decode_error(m), HasSubstr("input 'a': parameter 'empty' has no value"));
}

TEST(GrpcInferCodec, RequestedOutputs) {
  inference::ModelInferRequest m = raw_request();
  auto* o = m.add_outputs();
  o->set_name("probs");
  (*o->mutable_parameters())["classification"].set_int64_param(3);
  inference::ModelInferRequest copy = m;
  Result<InferRequest> r = decode_infer_request(copy, ServerLimits{});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_EQ(r->outputs[0].name, "probs");
  EXPECT_EQ(std::get<int64_t>(r->outputs[0].parameters.at("classification")), 3);

  (*o->mutable_parameters())["classification"].set_int64_param(0);
  EXPECT_THAT(decode_error(m),
              HasSubstr("output 'probs': parameter 'classification' must be >= 1, got 0"));
  (*o->mutable_parameters())["classification"].set_int64_param(1);
  (*o->mutable_parameters())["binary_data"].set_string_param("yes");
  EXPECT_THAT(decode_error(m), HasSubstr("output 'probs': parameter 'binary_data' must be a bool"));
  o->clear_name();
  EXPECT_THAT(decode_error(m), HasSubstr("a requested output has no name"));
}

TEST(GrpcInferCodec, ResponseCarriesRawOutputsInOrder) {
  InferResponse resp;
  resp.model_name = "echo";
  resp.model_version = "3";
  resp.id = "r9";
  resp.parameters["sequence_end"] = true;
  const std::vector<float> y(32, 5.0f);  // long enough to live on the heap (no SSO)
  resp.outputs.push_back({"y", "FP32", {1, 32}, floats(y), {{"note", std::string("n")}}});
  resp.outputs.push_back({"z", "BYTES", {1}, std::string("\x01\0\0\0q", 5), {}});
  const char* y_bytes = resp.outputs[0].data.data();
  inference::ModelInferResponse out;
  encode_infer_response(std::move(resp), &out);
  EXPECT_EQ(out.model_name(), "echo");
  EXPECT_EQ(out.model_version(), "3");
  EXPECT_EQ(out.id(), "r9");
  EXPECT_TRUE(out.parameters().at("sequence_end").bool_param());
  ASSERT_EQ(out.outputs_size(), 2);
  ASSERT_EQ(out.raw_output_contents_size(), 2);
  EXPECT_EQ(out.outputs(0).name(), "y");
  EXPECT_EQ(out.outputs(0).datatype(), "FP32");
  EXPECT_EQ(std::vector<int64_t>(out.outputs(0).shape().begin(), out.outputs(0).shape().end()),
            (std::vector<int64_t>{1, 32}));
  EXPECT_EQ(out.outputs(0).parameters().at("note").string_param(), "n");
  EXPECT_FALSE(out.outputs(0).has_contents());
  EXPECT_EQ(out.raw_output_contents(0), floats(y));
  EXPECT_EQ(out.raw_output_contents(0).data(), y_bytes);  // moved, not copied
  EXPECT_EQ(out.outputs(1).name(), "z");
  EXPECT_EQ(out.raw_output_contents(1), std::string("\x01\0\0\0q", 5));
}

TEST(GrpcInferCodec, ParametersRoundTrip) {
  Parameters in = {{"b", true}, {"i", int64_t{-7}}, {"d", 2.5}, {"s", std::string("x")}};
  ProtoParameters proto;
  encode_parameters(in, &proto);
  EXPECT_EQ(proto.at("i").parameter_choice_case(), inference::InferParameter::kInt64Param);
  EXPECT_EQ(proto.at("d").parameter_choice_case(), inference::InferParameter::kDoubleParam);
  Result<Parameters> out = decode_parameters(proto, "request");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, in);
}

}  // namespace
}  // namespace osprey::server::grpc_frontend
