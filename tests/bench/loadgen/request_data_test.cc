#include "request_data.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cstring>
#include <filesystem>

#include "osprey/npy.h"

namespace osprey::loadgen {
namespace {

const ModelInfo kModel{"add_sub", {{"INPUT0", "FP32", {-1, 4}}, {"INPUT1", "INT64", {-1, 2}}}, {}};

TEST(MakeInputs, RandomIsSeededZeroIsZero) {
  auto a = make_inputs(kModel, {{2, 4}, {2, 2}}, parse_input_source("random", 5));
  auto b = make_inputs(kModel, {{2, 4}, {2, 2}}, parse_input_source("random", 5));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ((*a)[0].bytes.size(), 32u);
  EXPECT_EQ((*a)[1].bytes.size(), 32u);
  EXPECT_EQ((*a)[0].bytes, (*b)[0].bytes);
  EXPECT_NE((*a)[0].bytes, std::string(32, '\0'));
  auto z = make_inputs(kModel, {{2, 4}, {2, 2}}, parse_input_source("zero", 5));
  EXPECT_EQ((*z)[0].bytes, std::string(32, '\0'));
}

TEST(MakeInputs, BytesUnsupportedAndTooLargeRefused) {
  const ModelInfo s{"m", {{"t", "BYTES", {1}}}, {}};
  EXPECT_EQ(make_inputs(s, {{1}}, {}).status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(make_inputs(kModel, {{1 << 20, 1 << 10}, {1}}, {}).status().code(),
            StatusCode::kResourceExhausted);
}

TEST(MakeInputs, NpyDirectoryChecksShapeAndDtype) {
  const auto dir = std::filesystem::temp_directory_path() / "osprey_loadgen_npy_test";
  std::filesystem::create_directories(dir);
  Tensor x(DType::kFloat32, {2, 4});
  for (int i = 0; i < 8; ++i) x.data<float>()[i] = static_cast<float>(i);
  ASSERT_TRUE(write_npy((dir / "INPUT0.npy").string(), x).ok());
  const ModelInfo one{"m", {kModel.inputs[0]}, {}};
  auto r = make_inputs(one, {{2, 4}}, parse_input_source(dir.string(), 0));
  ASSERT_TRUE(r.ok()) << r.status().message();
  float v[8];
  std::memcpy(v, (*r)[0].bytes.data(), 32);
  EXPECT_EQ(v[7], 7.0f);
  EXPECT_FALSE(make_inputs(one, {{1, 4}}, parse_input_source(dir.string(), 0)).ok());  // shape
  EXPECT_EQ(make_inputs(kModel, {{2, 4}, {2, 2}}, parse_input_source(dir.string(), 0)).status().code(),
            StatusCode::kNotFound);  // INPUT1.npy missing
  std::filesystem::remove_all(dir);
}

TEST(EncodeBody, BinaryHeaderThenRawBytes) {
  auto in = make_inputs(kModel, {{1, 4}, {1, 2}}, parse_input_source("random", 1));
  ASSERT_TRUE(in.ok());
  const HttpBody b = encode_binary_body(*in);
  ASSERT_GT(b.json_header_size, 0u);
  EXPECT_EQ(b.body.size(), b.json_header_size + 16 + 16);
  rapidjson::Document d;
  d.Parse(b.body.data(), b.json_header_size);
  ASSERT_FALSE(d.HasParseError());
  EXPECT_EQ(d["inputs"][0]["parameters"]["binary_data_size"].GetUint64(), 16u);
  EXPECT_STREQ(d["inputs"][1]["datatype"].GetString(), "INT64");
  EXPECT_TRUE(d["parameters"]["binary_data_output"].GetBool());
  EXPECT_EQ(b.body.substr(b.json_header_size, 16), (*in)[0].bytes);
}

TEST(EncodeBody, JsonData) {
  auto in = make_inputs(kModel, {{1, 4}, {1, 2}}, parse_input_source("zero", 1));
  auto b = encode_json_body(*in);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->json_header_size, 0u);
  rapidjson::Document d;
  d.Parse(b->body.c_str());
  ASSERT_FALSE(d.HasParseError());
  EXPECT_EQ(d["inputs"][0]["data"].Size(), 4u);
  EXPECT_EQ(d["inputs"][1]["data"][1].GetInt64(), 0);
}

}  // namespace
}  // namespace osprey::loadgen
