// Response encoding: JSON data per datatype, binary outputs after the JSON, and round trips
// through the request decoder.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string_view>

#include "fake_server.h"
#include "frontend/http/infer_codec.h"

namespace osprey::server::http {
namespace {

WireTensor tensor(const std::string& name, const std::string& dt, std::vector<int64_t> shape,
                  std::string data) {
  WireTensor t;
  t.name = name;
  t.datatype = dt;
  t.shape = std::move(shape);
  t.data = std::move(data);
  return t;
}

template <class T>
std::string raw_of(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return s;
}

rapidjson::Document parse(const std::string& s) {
  rapidjson::Document d;
  d.Parse<rapidjson::kParseNanAndInfFlag>(s.data(), s.size());
  EXPECT_FALSE(d.HasParseError()) << s;
  return d;
}

TEST(InferResponseEncode, JsonOutputs) {
  InferResponse r;
  r.model_name = "m";
  r.model_version = "3";
  r.id = "abc";
  r.parameters["sequence_end"] = true;
  r.outputs.push_back(tensor("i", "INT32", {2, 2}, raw_of<int32_t>({1, -2, 3, 4})));
  r.outputs.push_back(tensor("b", "BOOL", {2}, std::string("\1\0", 2)));
  r.outputs.push_back(tensor("s", "BYTES", {1}, std::string("\2\0\0\0hi", 6)));
  r.outputs.push_back(tensor("f", "FP32", {2}, raw_of<float>({0.5f, -1.f / 0.f})));
  auto enc = encode_infer_response(r, OutputEncoding{});
  ASSERT_TRUE(enc.ok()) << enc.status().to_string();
  EXPECT_FALSE(enc->json_length.has_value());
  auto d = parse(enc->body);
  EXPECT_STREQ(d["model_name"].GetString(), "m");
  EXPECT_STREQ(d["model_version"].GetString(), "3");
  EXPECT_STREQ(d["id"].GetString(), "abc");
  EXPECT_TRUE(d["parameters"]["sequence_end"].GetBool());
  const auto& outs = d["outputs"];
  ASSERT_EQ(outs.Size(), 4u);
  EXPECT_STREQ(outs[0]["datatype"].GetString(), "INT32");
  EXPECT_EQ(outs[0]["shape"][1].GetInt(), 2);
  EXPECT_EQ(outs[0]["data"][1].GetInt(), -2);
  EXPECT_EQ(outs[0]["data"].Size(), 4u);
  EXPECT_TRUE(outs[1]["data"][0].GetBool());
  EXPECT_FALSE(outs[1]["data"][1].GetBool());
  EXPECT_STREQ(outs[2]["data"][0].GetString(), "hi");
  EXPECT_EQ(outs[3]["data"][0].GetDouble(), 0.5);
  EXPECT_TRUE(std::isinf(outs[3]["data"][1].GetDouble()));
  EXPECT_FALSE(outs[0].HasMember("parameters"));
}

TEST(InferResponseEncode, BinaryOutputsFollowTheJson) {
  InferResponse r;
  r.model_name = "m";
  r.model_version = "1";
  std::string a = raw_of<float>({1.f, 2.f, 3.f});
  std::string c = raw_of<int64_t>({7});
  r.outputs.push_back(tensor("a", "FP32", {3}, a));
  r.outputs.push_back(tensor("j", "INT64", {1}, c));
  r.outputs.push_back(tensor("c", "INT64", {1}, c));
  OutputEncoding enc;
  enc.binary_default = true;
  enc.binary_by_name["j"] = false;
  auto out = encode_infer_response(r, enc);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_TRUE(out->json_length.has_value());
  const size_t n = *out->json_length;
  ASSERT_EQ(out->body.size(), n + a.size() + c.size());
  EXPECT_EQ(std::string_view(out->body).substr(n, a.size()), a);
  EXPECT_EQ(std::string_view(out->body).substr(n + a.size()), c);
  auto d = parse(out->body.substr(0, n));
  const auto& outs = d["outputs"];
  EXPECT_EQ(outs[0]["parameters"]["binary_data_size"].GetInt(), 12);
  EXPECT_FALSE(outs[0].HasMember("data"));
  EXPECT_EQ(outs[1]["data"][0].GetInt(), 7);
  EXPECT_FALSE(outs[1].HasMember("parameters"));
  EXPECT_EQ(outs[2]["parameters"]["binary_data_size"].GetInt(), 8);
}

TEST(InferResponseEncode, InconsistentOutputIsInternalError) {
  InferResponse r;
  r.outputs.push_back(tensor("a", "FP32", {3}, raw_of<float>({1.f})));
  auto out = encode_infer_response(r, OutputEncoding{});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInternal);
  EXPECT_NE(out.status().message().find("output 'a'"), std::string::npos);
  InferResponse bad_bytes;
  bad_bytes.outputs.push_back(tensor("s", "BYTES", {2}, std::string("\1\0\0\0x", 5)));
  EXPECT_EQ(encode_infer_response(bad_bytes, OutputEncoding{}).status().code(),
            StatusCode::kInvalidArgument);
}

// decode -> identity model -> encode -> parse: every value survives, for JSON and binary.
TEST(InferRoundTrip, JsonAndBinaryThroughIdentity) {
  std::string json = R"({"id":"7","inputs":[
      {"name":"INPUT0","datatype":"FP16","shape":[2],"data":[1.5,-0.25]},
      {"name":"INPUT1","datatype":"UINT64","shape":[1],"data":[18446744073709551615]},
      {"name":"INPUT2","datatype":"FP32","shape":[2],"parameters":{"binary_data_size":8}}],
      "outputs":[{"name":"OUTPUT0"},{"name":"OUTPUT1"},{"name":"OUTPUT2","parameters":{"binary_data":true}}]})";
  std::string tail = raw_of<float>({3.25f, -8.f});
  std::string body = json;
  body.append(tail);
  auto req = decode_infer_request(std::move(body), json.size(), 1 << 20);
  ASSERT_TRUE(req.ok()) << req.status().to_string();
  req->model_name = "identity";
  auto enc = output_encoding_of(*req);
  ASSERT_TRUE(enc.ok());
  auto resp = testing::identity(*req);
  ASSERT_TRUE(resp.ok());
  auto out = encode_infer_response(*resp, *enc);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_TRUE(out->json_length);
  auto d = parse(out->body.substr(0, *out->json_length));
  EXPECT_STREQ(d["id"].GetString(), "7");
  EXPECT_EQ(d["outputs"][0]["data"][0].GetDouble(), 1.5);
  EXPECT_EQ(d["outputs"][0]["data"][1].GetDouble(), -0.25);
  EXPECT_EQ(d["outputs"][1]["data"][0].GetUint64(), UINT64_MAX);
  EXPECT_EQ(out->body.substr(*out->json_length), tail);
}

}  // namespace
}  // namespace osprey::server::http
