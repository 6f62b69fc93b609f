// Request decoding: every datatype, nested data, the binary extension, and every error path.
#include <gtest/gtest.h>

#include <cstring>

#include "frontend/http/infer_codec.h"
#include "osprey/dtype.h"

namespace osprey::server::http {
namespace {

constexpr int64_t kMax = 1 << 20;

template <class T>
std::string raw_of(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return s;
}

std::string bytes_raw(std::initializer_list<std::string> values) {
  std::string s;
  for (const auto& v : values) {
    uint32_t n = static_cast<uint32_t>(v.size());
    s.append(reinterpret_cast<const char*>(&n), 4);
    s += v;
  }
  return s;
}

Result<InferRequest> decode(const std::string& json) {
  return decode_infer_request(json, std::nullopt, kMax);
}

std::string one_input(const std::string& datatype, const std::string& shape,
                      const std::string& data) {
  return R"({"inputs":[{"name":"x","datatype":")" + datatype + R"(","shape":)" + shape +
         R"(,"data":)" + data + "}]}";
}

// Expects an error of `code` whose message contains every fragment.
void expect_error(const Result<InferRequest>& r, StatusCode code,
                  std::initializer_list<const char*> fragments) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  for (const char* f : fragments)
    EXPECT_NE(r.status().message().find(f), std::string::npos)
        << "'" << f << "' not in: " << r.status().message();
}

TEST(InferRequestDecode, FlatAndNestedDataAreRowMajor) {
  auto flat = decode(one_input("FP32", "[2,2]", "[1,2,3,4.5]"));
  auto nested = decode(one_input("FP32", "[2,2]", "[[1,2],[3,4.5]]"));
  ASSERT_TRUE(flat.ok()) << flat.status().to_string();
  ASSERT_TRUE(nested.ok()) << nested.status().to_string();
  EXPECT_EQ(flat->inputs[0].data, raw_of<float>({1, 2, 3, 4.5f}));
  EXPECT_EQ(nested->inputs[0].data, flat->inputs[0].data);
  EXPECT_EQ(flat->inputs[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(flat->inputs[0].datatype, "FP32");
}

TEST(InferRequestDecode, EveryDatatype) {
  struct Case {
    const char* dt;
    const char* data;
    std::string raw;
  };
  const Case cases[] = {
      {"BOOL", "[true,false,true]", std::string("\1\0\1", 3)},
      {"UINT8", "[0,255,7]", raw_of<uint8_t>({0, 255, 7})},
      {"UINT16", "[0,65535,7]", raw_of<uint16_t>({0, 65535, 7})},
      {"UINT32", "[0,4294967295,7]", raw_of<uint32_t>({0, 4294967295u, 7})},
      {"UINT64", "[0,18446744073709551615,7]", raw_of<uint64_t>({0, UINT64_MAX, 7})},
      {"INT8", "[-128,127,0]", raw_of<int8_t>({-128, 127, 0})},
      {"INT16", "[-32768,32767,0]", raw_of<int16_t>({-32768, 32767, 0})},
      {"INT32", "[-2147483648,2147483647,0]", raw_of<int32_t>({INT32_MIN, INT32_MAX, 0})},
      {"INT64", "[-9223372036854775808,9223372036854775807,0]",
       raw_of<int64_t>({INT64_MIN, INT64_MAX, 0})},
      {"FP16", "[1.5,-2,0.25]",
       raw_of<uint16_t>({Float16::from_float(1.5f), Float16::from_float(-2.f),
                         Float16::from_float(0.25f)})},
      {"BF16", "[1.5,-2,0.25]",
       raw_of<uint16_t>({BFloat16::from_float(1.5f), BFloat16::from_float(-2.f),
                         BFloat16::from_float(0.25f)})},
      {"FP32", "[1.5,-2,1e-3]", raw_of<float>({1.5f, -2.f, 1e-3f})},
      {"FP64", "[1.5,-2,0.1]", raw_of<double>({1.5, -2, 0.1})},
      {"BYTES", R"(["ab","","xyz"])", bytes_raw({"ab", "", "xyz"})},
  };
  for (const Case& c : cases) {
    auto r = decode(one_input(c.dt, "[3]", c.data));
    ASSERT_TRUE(r.ok()) << c.dt << ": " << r.status().to_string();
    EXPECT_EQ(r->inputs[0].data, c.raw) << c.dt;
  }
}

TEST(InferRequestDecode, IdParametersAndRequestedOutputs) {
  auto r = decode(R"({"id":"req-7","parameters":{"priority":2,"binary_data_output":true,"t":0.5,"s":"x"},
    "inputs":[{"name":"x","datatype":"INT32","shape":[1],"data":[3],"parameters":{"p":false}}],
    "outputs":[{"name":"a","parameters":{"binary_data":false}},{"name":"b","parameters":{"classification":3}}]})");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->id, "req-7");
  EXPECT_EQ(std::get<int64_t>(r->parameters.at("priority")), 2);
  EXPECT_EQ(std::get<double>(r->parameters.at("t")), 0.5);
  EXPECT_EQ(std::get<std::string>(r->parameters.at("s")), "x");
  EXPECT_EQ(std::get<bool>(r->inputs[0].parameters.at("p")), false);
  ASSERT_EQ(r->outputs.size(), 2u);
  EXPECT_EQ(std::get<int64_t>(r->outputs[1].parameters.at("classification")), 3);
  auto enc = output_encoding_of(*r);
  ASSERT_TRUE(enc.ok());
  EXPECT_FALSE(enc->is_binary("a"));  // explicit false beats the request default
  EXPECT_TRUE(enc->is_binary("b"));   // request-level binary_data_output
}

TEST(InferRequestDecode, BinaryTailInInputOrder) {
  std::string json = R"({"inputs":[
    {"name":"a","datatype":"FP32","shape":[2],"parameters":{"binary_data_size":8}},
    {"name":"j","datatype":"INT8","shape":[1],"data":[5]},
    {"name":"s","datatype":"BYTES","shape":[2],"parameters":{"binary_data_size":11}}]})";
  std::string a = raw_of<float>({1.f, 2.f});
  std::string s = bytes_raw({"hi", "you"});
  ASSERT_EQ(s.size(), 13u);
  json.replace(json.find("11"), 2, "13");
  auto r = decode_infer_request(json + a + s, json.size(), kMax);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->inputs[0].data, a);
  EXPECT_EQ(r->inputs[1].data, raw_of<int8_t>({5}));
  EXPECT_EQ(r->inputs[2].data, s);
  EXPECT_EQ(r->inputs[0].parameters.count("binary_data_size"), 0u);
}

TEST(InferRequestDecode, LargeLastBinaryInputKeepsItsBytes) {
  std::string json =
      R"({"inputs":[{"name":"a","datatype":"UINT8","shape":[3],"parameters":{"binary_data_size":3}},)"
      R"({"name":"b","datatype":"UINT8","shape":[10000],"parameters":{"binary_data_size":10000}}]})";
  std::string b(10000, '\0');
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<char>(i * 7);
  auto r = decode_infer_request(json + "xyz" + b, json.size(), kMax);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->inputs[0].data, "xyz");
  EXPECT_EQ(r->inputs[1].data, b);
}

TEST(InferRequestDecode, MalformedJsonNamesTheOffset) {
  expect_error(decode(R"({"inputs": [ }")"), StatusCode::kInvalidArgument,
               {"malformed JSON", "offset 13"});
  expect_error(decode(""), StatusCode::kInvalidArgument, {"no JSON body"});
  expect_error(decode("[1]"), StatusCode::kInvalidArgument, {"JSON object"});
  expect_error(decode(R"({"inputs":1})"), StatusCode::kInvalidArgument, {"'inputs' must be an array"});
  expect_error(decode(R"({"id":1,"inputs":[]})"), StatusCode::kInvalidArgument, {"'id'"});
  expect_error(decode(R"({})"), StatusCode::kInvalidArgument, {"no 'inputs'"});
}

TEST(InferRequestDecode, DeepNestingIsRejectedWithoutRecursion) {
  std::string deep(100000, '[');
  expect_error(decode(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":)" + deep),
               StatusCode::kInvalidArgument, {"malformed JSON"});
  expect_error(decode(one_input("FP32", "[2]", "[[1],[2]]")), StatusCode::kInvalidArgument,
               {"input 'x'", "nested deeper"});
}

TEST(InferRequestDecode, MissingFieldsNameTheTensor) {
  expect_error(decode(R"({"inputs":[{"datatype":"FP32","shape":[1],"data":[1]}]})"),
               StatusCode::kInvalidArgument, {"input 0", "missing 'name'"});
  expect_error(decode(R"({"inputs":[{"name":"x","shape":[1],"data":[1]}]})"),
               StatusCode::kInvalidArgument, {"input 'x'", "missing 'datatype'"});
  expect_error(decode(R"({"inputs":[{"name":"x","datatype":"FP32","data":[1]}]})"),
               StatusCode::kInvalidArgument, {"input 'x'", "missing 'shape'"});
  expect_error(decode(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1]}]})"),
               StatusCode::kInvalidArgument, {"input 'x'", "neither 'data'"});
  expect_error(decode(R"({"inputs":[{"name":"","datatype":"FP32","shape":[1],"data":[1]}]})"),
               StatusCode::kInvalidArgument, {"'name' is empty"});
  expect_error(decode(R"({"inputs":[5]})"), StatusCode::kInvalidArgument, {"input 0", "object"});
}

TEST(InferRequestDecode, BadDatatypeShapeAndCounts) {
  expect_error(decode(one_input("FLOAT", "[1]", "[1]")), StatusCode::kInvalidArgument,
               {"input 'x'", "unknown datatype 'FLOAT'"});
  expect_error(decode(one_input("FP32", "[2,-1]", "[1]")), StatusCode::kInvalidArgument,
               {"input 'x'", "dim 1", "negative"});
  expect_error(decode(one_input("FP32", "[2,1.5]", "[1]")), StatusCode::kInvalidArgument,
               {"dim 1", "integer"});
  expect_error(decode(one_input("FP32", "[2,3]", "[1,2,3,4,5]")), StatusCode::kInvalidArgument,
               {"input 'x'", "5 elements", "holds 6"});
  expect_error(decode(one_input("FP32", "[2]", "[1,2,3]")), StatusCode::kInvalidArgument,
               {"input 'x'", "more than the 2"});
  expect_error(decode(one_input("FP32", "[1]", "3")), StatusCode::kInvalidArgument,
               {"'data' must be an array"});
}

TEST(InferRequestDecode, ElementTypesAndRangesAreChecked) {
  expect_error(decode(one_input("UINT8", "[1]", "[256]")), StatusCode::kInvalidArgument,
               {"input 'x'", "256", "out of range for UINT8"});
  expect_error(decode(one_input("INT8", "[1]", "[-129]")), StatusCode::kInvalidArgument,
               {"out of range for INT8"});
  expect_error(decode(one_input("UINT32", "[1]", "[-1]")), StatusCode::kInvalidArgument,
               {"out of range for UINT32"});
  expect_error(decode(one_input("INT64", "[1]", "[9223372036854775808]")),
               StatusCode::kInvalidArgument, {"out of range for INT64"});
  expect_error(decode(one_input("INT32", "[1]", "[1.5]")), StatusCode::kInvalidArgument,
               {"element 0", "integer"});
  expect_error(decode(one_input("FP32", "[2]", R"([1,"2"])")), StatusCode::kInvalidArgument,
               {"element 1", "number", "string"});
  expect_error(decode(one_input("BOOL", "[1]", "[1]")), StatusCode::kInvalidArgument,
               {"true or false"});
  expect_error(decode(one_input("BYTES", "[1]", "[1]")), StatusCode::kInvalidArgument,
               {"a string"});
}

TEST(InferRequestDecode, ElementLimitIsCheckedBeforeAllocating) {
  auto r = decode_infer_request(one_input("FP32", "[1000000,1000000]", "[1]"), std::nullopt, 1000);
  expect_error(r, StatusCode::kResourceExhausted, {"input 'x'", "1000 elements", "limit"});
  auto overflow =
      decode(one_input("FP32", "[4611686018427387904,4611686018427387904,4]", "[1]"));
  expect_error(overflow, StatusCode::kResourceExhausted, {"limit"});
  auto binary = decode_infer_request(
      R"({"inputs":[{"name":"b","datatype":"FP32","shape":[2000],"parameters":{"binary_data_size":8000}}]})",
      std::nullopt, 1000);
  expect_error(binary, StatusCode::kResourceExhausted, {"input 'b'", "limit"});
}

TEST(InferRequestDecode, BinaryErrors) {
  const std::string json =
      R"({"inputs":[{"name":"b","datatype":"FP32","shape":[2],"parameters":{"binary_data_size":8}}]})";
  expect_error(decode_infer_request(json + "1234", json.size(), kMax),
               StatusCode::kInvalidArgument, {"input 'b'", "binary_data_size 8", "4 bytes", "truncated"});
  expect_error(decode_infer_request(json, std::nullopt, kMax), StatusCode::kInvalidArgument,
               {"no Inference-Header-Content-Length"});
  expect_error(decode_infer_request(json + "12345678xx", json.size(), kMax),
               StatusCode::kInvalidArgument, {"2 unexpected trailing bytes"});
  expect_error(decode_infer_request(json, json.size() + 1, kMax), StatusCode::kInvalidArgument,
               {"Inference-Header-Content-Length", "exceeds"});
  const std::string wrong =
      R"({"inputs":[{"name":"b","datatype":"FP32","shape":[2],"parameters":{"binary_data_size":4}}]})";
  expect_error(decode_infer_request(wrong + "1234", wrong.size(), kMax),
               StatusCode::kInvalidArgument, {"binary_data_size 4", "does not match", "8 bytes"});
  const std::string both =
      R"({"inputs":[{"name":"b","datatype":"FP32","shape":[1],"data":[1],"parameters":{"binary_data_size":4}}]})";
  expect_error(decode_infer_request(both + "1234", both.size(), kMax),
               StatusCode::kInvalidArgument, {"both 'data'"});
  const std::string neg =
      R"({"inputs":[{"name":"b","datatype":"FP32","shape":[1],"parameters":{"binary_data_size":-4}}]})";
  expect_error(decode_infer_request(neg, neg.size(), kMax), StatusCode::kInvalidArgument,
               {"non-negative integer"});
  const std::string str =
      R"({"inputs":[{"name":"s","datatype":"BYTES","shape":[2],"parameters":{"binary_data_size":9}}]})";
  std::string tail = bytes_raw({"ab"}) + std::string("\7\0\0", 3);
  expect_error(decode_infer_request(str + tail, str.size(), kMax), StatusCode::kInvalidArgument,
               {"input 's'", "BYTES element 1", "truncated length"});
  std::string one = bytes_raw({"abcde"});
  expect_error(decode_infer_request(str + one, str.size(), kMax), StatusCode::kInvalidArgument,
               {"holds 1 elements"});
  expect_error(decode_infer_request(one_input("FP32", "[1]", "[1]") + "zz",
                                    one_input("FP32", "[1]", "[1]").size(), kMax),
               StatusCode::kInvalidArgument, {"2 unexpected trailing bytes"});
}

TEST(InferRequestDecode, ParametersAndOutputsAreValidated) {
  expect_error(decode(R"({"parameters":{"a":null},"inputs":[]})"), StatusCode::kInvalidArgument,
               {"parameter 'a'", "null"});
  expect_error(decode(R"({"parameters":[],"inputs":[]})"), StatusCode::kInvalidArgument,
               {"'parameters' must be an object"});
  expect_error(decode(R"({"parameters":{"binary_data_output":1},"inputs":[]})"),
               StatusCode::kInvalidArgument, {"binary_data_output", "bool"});
  expect_error(decode(R"({"inputs":[],"outputs":[{"name":"o","parameters":{"binary_data":"yes"}}]})"),
               StatusCode::kInvalidArgument, {"requested output 'o'", "binary_data"});
  expect_error(decode(R"({"inputs":[],"outputs":[{"name":"o","parameters":{"classification":0}}]})"),
               StatusCode::kInvalidArgument, {"classification", "positive"});
  expect_error(decode(R"({"inputs":[],"outputs":[{"name":"o"},{"name":"o"}]})"),
               StatusCode::kInvalidArgument, {"'o' appears more than once"});
  expect_error(decode(R"({"inputs":[],"outputs":[{}]})"), StatusCode::kInvalidArgument,
               {"requested output 0", "missing 'name'"});
  expect_error(
      decode(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1]},{"name":"x","datatype":"FP32","shape":[1],"data":[1]}]})"),
      StatusCode::kInvalidArgument, {"input 'x' appears more than once"});
  expect_error(
      decode(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"parameters":{"shared_memory_region":"r"}}]})"),
      StatusCode::kUnimplemented, {"shared memory"});
}

TEST(InferRequestDecode, HeaderLengthParsing) {
  auto ok = parse_header_length("123");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 123u);
  for (const char* bad : {"", "-1", "12a", " 1", "99999999999999999999999"}) {
    auto r = parse_header_length(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("Inference-Header-Content-Length"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace osprey::server::http
