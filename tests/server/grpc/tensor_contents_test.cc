// Typed contents -> raw bytes for every datatype, raw buffer checks, element counting.
#include "frontend/grpc/tensor_contents.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace osprey::server::grpc_frontend {
namespace {

template <class T>
std::string le_bytes(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::string raw_of(const inference::InferTensorContents& c, const std::string& dt, int64_t n) {
  Result<std::string> r = typed_contents_to_raw(c, dt, n, "input 'x'");
  EXPECT_TRUE(r.ok()) << dt << ": " << r.status().to_string();
  return r.ok() ? *r : std::string();
}

TEST(GrpcTensorContents, BoolToOneBytePerElement) {
  inference::InferTensorContents c;
  for (bool b : {true, false, true}) c.add_bool_contents(b);
  EXPECT_EQ(raw_of(c, "BOOL", 3), std::string("\x01\x00\x01", 3));
}

TEST(GrpcTensorContents, SignedIntegersNarrowedLittleEndian) {
  inference::InferTensorContents c;
  for (int v : {-128, 0, 127}) c.add_int_contents(v);
  EXPECT_EQ(raw_of(c, "INT8", 3), le_bytes<int8_t>({-128, 0, 127}));
  c.Clear();
  for (int v : {-32768, 1, 32767}) c.add_int_contents(v);
  EXPECT_EQ(raw_of(c, "INT16", 3), le_bytes<int16_t>({-32768, 1, 32767}));
  c.Clear();
  for (int v : {std::numeric_limits<int32_t>::min(), -1, 7}) c.add_int_contents(v);
  EXPECT_EQ(raw_of(c, "INT32", 3), le_bytes<int32_t>({std::numeric_limits<int32_t>::min(), -1, 7}));
  c.Clear();
  for (int64_t v : {int64_t{-5}, int64_t{1} << 40}) c.add_int64_contents(v);
  EXPECT_EQ(raw_of(c, "INT64", 2), le_bytes<int64_t>({-5, int64_t{1} << 40}));
}

TEST(GrpcTensorContents, UnsignedIntegersNarrowedLittleEndian) {
  inference::InferTensorContents c;
  for (unsigned v : {0u, 255u}) c.add_uint_contents(v);
  EXPECT_EQ(raw_of(c, "UINT8", 2), le_bytes<uint8_t>({0, 255}));
  c.Clear();
  for (unsigned v : {1u, 65535u}) c.add_uint_contents(v);
  EXPECT_EQ(raw_of(c, "UINT16", 2), le_bytes<uint16_t>({1, 65535}));
  c.Clear();
  for (unsigned v : {3u, 4000000000u}) c.add_uint_contents(v);
  EXPECT_EQ(raw_of(c, "UINT32", 2), le_bytes<uint32_t>({3u, 4000000000u}));
  c.Clear();
  c.add_uint64_contents(std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(raw_of(c, "UINT64", 1), le_bytes<uint64_t>({std::numeric_limits<uint64_t>::max()}));
}

TEST(GrpcTensorContents, FloatsKeepTheirBits) {
  inference::InferTensorContents c;
  for (float v : {1.5f, -0.0f, std::numeric_limits<float>::infinity()}) c.add_fp32_contents(v);
  EXPECT_EQ(raw_of(c, "FP32", 3),
            le_bytes<float>({1.5f, -0.0f, std::numeric_limits<float>::infinity()}));
  c.Clear();
  for (double v : {3.25, -1e300}) c.add_fp64_contents(v);
  EXPECT_EQ(raw_of(c, "FP64", 2), le_bytes<double>({3.25, -1e300}));
}

TEST(GrpcTensorContents, BytesBecomeLengthPrefixed) {
  inference::InferTensorContents c;
  c.add_bytes_contents("ab");
  c.add_bytes_contents("");
  c.add_bytes_contents(std::string("\0z", 2));
  EXPECT_EQ(raw_of(c, "BYTES", 3), std::string("\x02\x00\x00\x00"
                                               "ab"
                                               "\x00\x00\x00\x00"
                                               "\x02\x00\x00\x00\x00z",
                                               16));
}

TEST(GrpcTensorContents, OutOfRangeValueNamesTensorIndexAndType) {
  inference::InferTensorContents c;
  c.add_int_contents(5);
  c.add_int_contents(200);
  auto r = typed_contents_to_raw(c, "INT8", 2, "input 'x'");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("input 'x': value 200 at index 1 is out of range for INT8"),
            std::string::npos)
      << r.status().message();
  c.Clear();
  c.add_uint_contents(70000);
  EXPECT_FALSE(typed_contents_to_raw(c, "UINT16", 1, "input 'x'").ok());
}

TEST(GrpcTensorContents, WrongFieldForDatatype) {
  inference::InferTensorContents c;
  c.add_int_contents(1);
  auto r = typed_contents_to_raw(c, "FP32", 1, "input 'x'");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("contents.int_contents is set but datatype FP32 uses "
                                      "contents.fp32_contents"),
            std::string::npos)
      << r.status().message();
}

TEST(GrpcTensorContents, ValueCountMustMatchShape) {
  inference::InferTensorContents c;
  c.add_fp32_contents(1);
  c.add_fp32_contents(2);
  auto r = typed_contents_to_raw(c, "FP32", 3, "input 'x'");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("fp32_contents holds 2 values but the shape needs 3"),
            std::string::npos)
      << r.status().message();
}

TEST(GrpcTensorContents, HalfFloatsHaveNoTypedField) {
  inference::InferTensorContents c;
  c.add_fp32_contents(1);
  for (const char* dt : {"FP16", "BF16"}) {
    auto r = typed_contents_to_raw(c, dt, 1, "input 'h'");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("raw_input_contents"), std::string::npos);
  }
}

TEST(GrpcTensorContents, RawSizeMustMatch) {
  EXPECT_TRUE(check_raw_contents(std::string(24, '\0'), "FP32", 6, "t").ok());
  Status s = check_raw_contents(std::string(20, '\0'), "FP32", 6, "input 'x'");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("input 'x': raw contents hold 20 bytes but 6 FP32 elements need 24"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(check_raw_contents(std::string(12, '\0'), "FP16", 6, "t").ok());
}

TEST(GrpcTensorContents, RawBytesLayoutChecked) {
  const std::string two(
      "\x01\x00\x00\x00"
      "a"
      "\x00\x00\x00\x00",
      9);
  EXPECT_TRUE(check_raw_contents(two, "BYTES", 2, "t").ok());
  Status count = check_raw_contents(two, "BYTES", 3, "input 's'");
  EXPECT_NE(count.message().find("hold 2 BYTES elements but the shape needs 3"), std::string::npos)
      << count.message();
  Status prefix = check_raw_contents(two + std::string("\x01\x00", 2), "BYTES", 3, "input 's'");
  EXPECT_NE(prefix.message().find("element 2 is cut off inside its 4-byte length prefix"),
            std::string::npos)
      << prefix.message();
  Status overrun = check_raw_contents(std::string("\x09\x00\x00\x00"
                                                  "abc",
                                                  7),
                                      "BYTES", 1, "s");
  EXPECT_NE(overrun.message().find("element 0 claims 9 bytes but only 3 remain"), std::string::npos)
      << overrun.message();
}

TEST(GrpcTensorContents, ElementCount) {
  EXPECT_EQ(*checked_element_count({2, 3, 4}, 100, "t"), 24);
  EXPECT_EQ(*checked_element_count({}, 100, "t"), 1);
  EXPECT_EQ(*checked_element_count({0, int64_t{1} << 62}, 100, "t"), 0);
  auto neg = checked_element_count({2, -1}, 100, "input 'x'");
  ASSERT_FALSE(neg.ok());
  EXPECT_NE(neg.status().message().find("input 'x': negative dimension -1 in shape [2,-1]"),
            std::string::npos);
  auto big = checked_element_count({11, 10}, 100, "input 'x'");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(big.status().message().find("more than 100 elements (limit max_tensor_elements)"),
            std::string::npos);
  auto overflow = checked_element_count({int64_t{1} << 40, int64_t{1} << 40}, INT64_MAX, "t");
  EXPECT_FALSE(overflow.ok());
}

}  // namespace
}  // namespace osprey::server::grpc_frontend
