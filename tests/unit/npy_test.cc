#include "osprey/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace osprey {
namespace {

// Builds an .npy file by hand: magic, version, little-endian header length, header, data.
std::string make_npy(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  const size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const auto len = static_cast<uint32_t>(header.size());
  for (size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape +
         ", }";
}

template <class T>
std::string bytes_of(const std::vector<T>& v) {
  std::string s(v.size() * sizeof(T), '\0');
  if (!v.empty()) std::memcpy(s.data(), v.data(), s.size());
  return s;
}

std::string big_endian(std::string little, size_t esz) {
  for (size_t i = 0; i + esz <= little.size(); i += esz) std::reverse(little.begin() + i, little.begin() + i + esz);
  return little;
}

template <class T>
std::vector<T> values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

// Fills a tensor's bytes with a deterministic pattern (valid for every numeric dtype).
Tensor patterned(DType dtype, Shape shape) {
  Tensor t(dtype, std::move(shape));
  auto* p = static_cast<unsigned char*>(t.raw_data());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<unsigned char>(i * 37 + 11);
  if (dtype == DType::kBool)
    for (size_t i = 0; i < t.nbytes(); ++i) p[i] &= 1;
  return t;
}

TEST(Npy, RoundTripsEveryNumericDType) {
  const DType types[] = {DType::kBool,   DType::kInt8,   DType::kUInt8,   DType::kInt16,  DType::kUInt16,
                         DType::kInt32,  DType::kUInt32, DType::kInt64,   DType::kUInt64, DType::kFloat16,
                         DType::kFloat32, DType::kFloat64};
  const Shape shapes[] = {{}, {0}, {5}, {2, 3}, {2, 0, 4}, {1, 2, 3, 4}};
  for (DType dt : types) {
    for (const Shape& shape : shapes) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + shape_to_string(shape));
      const Tensor t = patterned(dt, shape);
      auto bytes = serialize_npy(t);
      ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
      auto back = parse_npy(*bytes);
      ASSERT_TRUE(back.ok()) << back.status().to_string();
      EXPECT_EQ(back->dtype(), dt);
      EXPECT_EQ(back->shape(), shape);
      ASSERT_EQ(back->nbytes(), t.nbytes());
      EXPECT_EQ(0, std::memcmp(back->raw_data(), t.raw_data(), t.nbytes()));
    }
  }
}

TEST(Npy, WritesNumpyCompatibleHeader) {
  auto bytes = serialize_npy(Tensor::from_vector<float>({1.f, 2.f, 3.f}));
  ASSERT_TRUE(bytes.ok());
  const std::string& b = *bytes;
  ASSERT_GE(b.size(), 64u + 12u);
  EXPECT_EQ(b.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t header_len = static_cast<unsigned char>(b[8]) | (static_cast<unsigned char>(b[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  const std::string header = b.substr(10, header_len);
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 0), 0u) << header;
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(b.size(), 10 + header_len + 12);

  auto scalar = serialize_npy(Tensor::scalar<int64_t>(7));
  ASSERT_TRUE(scalar.ok());
  EXPECT_NE(scalar->find("'descr': '<i8'"), std::string::npos);
  EXPECT_NE(scalar->find("'shape': ()"), std::string::npos);
  auto b1 = serialize_npy(Tensor(DType::kBool, {2, 2}));
  ASSERT_TRUE(b1.ok());
  EXPECT_NE(b1->find("'descr': '|b1'"), std::string::npos);
  EXPECT_NE(b1->find("'shape': (2, 2)"), std::string::npos);
}

TEST(Npy, Bfloat16NeedsExplicitConversion) {
  Tensor t(DType::kBFloat16, {3});
  t.data<BFloat16>()[0] = BFloat16(1.5f);
  t.data<BFloat16>()[1] = BFloat16(-2.0f);
  t.data<BFloat16>()[2] = BFloat16(0.25f);
  auto refused = serialize_npy(t);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("bfloat16"), std::string::npos);
  NpyWriteOptions wo;
  wo.bfloat16_as_float32 = true;
  auto bytes = serialize_npy(t, wo);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  auto back = parse_npy(*bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->dtype(), DType::kFloat32);
  EXPECT_EQ(values<float>(*back), (std::vector<float>{1.5f, -2.0f, 0.25f}));
}

TEST(Npy, RefusesStringAndUndefinedTensors) {
  EXPECT_FALSE(serialize_npy(Tensor(DType::kString, {2})).ok());
  EXPECT_FALSE(serialize_npy(Tensor()).ok());
}

TEST(Npy, ReadsBigEndianData) {
  auto i4 = parse_npy(make_npy(dict(">i4", "(3,)"), big_endian(bytes_of<int32_t>({1, -2, 300000}), 4)));
  ASSERT_TRUE(i4.ok()) << i4.status().to_string();
  EXPECT_EQ(i4->dtype(), DType::kInt32);
  EXPECT_EQ(values<int32_t>(*i4), (std::vector<int32_t>{1, -2, 300000}));

  auto f8 = parse_npy(make_npy(dict(">f8", "(2,)"), big_endian(bytes_of<double>({1.25, -3.5e100}), 8)));
  ASSERT_TRUE(f8.ok());
  EXPECT_EQ(values<double>(*f8), (std::vector<double>{1.25, -3.5e100}));

  auto f2 = parse_npy(make_npy(dict(">f2", "(1,)"), big_endian(bytes_of<uint16_t>({Float16(0.5f).bits}), 2)));
  ASSERT_TRUE(f2.ok());
  EXPECT_EQ(static_cast<float>(f2->data<Float16>()[0]), 0.5f);

  auto u8 = parse_npy(make_npy(dict(">u8", "(1,)"), big_endian(bytes_of<uint64_t>({0x0102030405060708ull}), 8)));
  ASSERT_TRUE(u8.ok());
  EXPECT_EQ(u8->data<uint64_t>()[0], 0x0102030405060708ull);
}

TEST(Npy, AcceptsDescrVariants) {
  auto native = parse_npy(make_npy(dict("=f4", "(1,)"), bytes_of<float>({2.f})));
  ASSERT_TRUE(native.ok());
  EXPECT_EQ(native->data<float>()[0], 2.f);
  auto pipe_u1 = parse_npy(make_npy(dict("|u1", "(2,)"), std::string("\x05\xff", 2)));
  ASSERT_TRUE(pipe_u1.ok());
  EXPECT_EQ(values<uint8_t>(*pipe_u1), (std::vector<uint8_t>{5, 255}));
  // Double quotes, no trailing comma, extra whitespace, Python 2 long suffix.
  auto odd = parse_npy(make_npy("{ \"descr\" : \"<i2\" , \"shape\":(2L, 1L) ,\"fortran_order\":False}",
                                bytes_of<int16_t>({-1, 7})));
  ASSERT_TRUE(odd.ok()) << odd.status().to_string();
  EXPECT_EQ(odd->shape(), (Shape{2, 1}));
  EXPECT_EQ(values<int16_t>(*odd), (std::vector<int16_t>{-1, 7}));
}

TEST(Npy, NormalizesBoolBytes) {
  auto t = parse_npy(make_npy(dict("|b1", "(3,)"), std::string("\x00\x02\x01", 3)));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(values<bool>(*t), (std::vector<bool>{false, true, true}));
}

TEST(Npy, TransposesFortranOrder) {
  // A 2x3 matrix [[1,2,3],[4,5,6]] stored column-major.
  auto t = parse_npy(make_npy(dict("<f4", "(2, 3)", true), bytes_of<float>({1, 4, 2, 5, 3, 6})));
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(*t), (std::vector<float>{1, 2, 3, 4, 5, 6}));

  // 2x3x4, value 100i+10j+k at Fortran offset i + 2j + 6k.
  std::vector<int64_t> f(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) f[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
  auto t3 = parse_npy(make_npy(dict("<i8", "(2, 3, 4)", true), bytes_of(f)));
  ASSERT_TRUE(t3.ok());
  std::vector<int64_t> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) want.push_back(100 * i + 10 * j + k);
  EXPECT_EQ(values<int64_t>(*t3), want);

  // Big-endian and Fortran order together.
  auto both = parse_npy(make_npy(dict(">i2", "(2, 2)", true), big_endian(bytes_of<int16_t>({1, 3, 2, 4}), 2)));
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(values<int16_t>(*both), (std::vector<int16_t>{1, 2, 3, 4}));
}

TEST(Npy, ReadsVersions2And3) {
  for (int major : {2, 3}) {
    auto t = parse_npy(make_npy(dict("<u2", "(2,)"), bytes_of<uint16_t>({9, 65535}), major));
    ASSERT_TRUE(t.ok()) << major << ": " << t.status().to_string();
    EXPECT_EQ(values<uint16_t>(*t), (std::vector<uint16_t>{9, 65535}));
  }
}

void expect_error(const std::string& bytes, const std::string& fragment, const NpyReadOptions& options = {}) {
  auto t = parse_npy(bytes, options);
  ASSERT_FALSE(t.ok()) << "expected an error containing '" << fragment << "'";
  EXPECT_NE(t.status().message().find(fragment), std::string::npos) << t.status().message();
}

TEST(Npy, RejectsCorruptFiles) {
  const std::string good = make_npy(dict("<f4", "(2,)"), bytes_of<float>({1, 2}));
  expect_error("", "not an .npy file");
  expect_error("PK\x03\x04 zip data", "not an .npy file");
  expect_error(good.substr(0, 7), "truncated");
  expect_error(good.substr(0, 9), "truncated");
  expect_error(good.substr(0, 40), "truncated");
  expect_error(good.substr(0, good.size() - 1), "truncated .npy data");
  expect_error(good + "x", "unexpected bytes");
  std::string v4 = good;
  v4[6] = 4;
  expect_error(v4, "version 4.0");
  std::string huge = "\x93NUMPY\x02";
  huge += std::string("\x00\xff\xff\xff\xff", 5);
  expect_error(huge, "header length");
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False}", ""), "'shape'");
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", bytes_of<float>({1, 2})),
               "unexpected key");
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}", ""), "True or False");
  expect_error(make_npy("garbage", ""), "corrupt .npy header");
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} tail", ""), "unexpected text");
  expect_error(make_npy("{'descr': '<f4', 'shape': (2,", ""), "corrupt .npy header");
  expect_error(make_npy("{'descr': '<f4, 'shape': (2,)}", ""), "corrupt .npy header");
}

TEST(Npy, RejectsUnsupportedDTypes) {
  expect_error(make_npy(dict("<c8", "(1,)"), std::string(8, '\0')), "complex");
  expect_error(make_npy(dict("<U5", "(1,)"), std::string(20, '\0')), "unicode");
  expect_error(make_npy(dict("|O", "(1,)"), std::string(8, '\0')), "object");
  expect_error(make_npy(dict("<f16", "(1,)"), std::string(16, '\0')), "long double");
  expect_error(make_npy(dict("<i3", "(1,)"), std::string(3, '\0')), "'<i3'");
  expect_error(make_npy(dict("", "(1,)"), ""), "invalid numpy dtype");
  expect_error(make_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", std::string(4, '\0')),
               "structured");
}

TEST(Npy, RejectsAbsurdShapes) {
  expect_error(make_npy(dict("<f4", "(-1,)"), ""), "negative");
  expect_error(make_npy(dict("<f4", "(99999999999999999999,)"), ""), "too large");
  expect_error(make_npy(dict("<f4", "(4294967296, 4294967296)"), ""), "overflows");
  expect_error(make_npy(dict("<f8", "(3037000499, 3037000499)"), ""), "limit");  // fits int64, not the limit
  NpyReadOptions small;
  small.max_elements = 10;
  expect_error(make_npy(dict("<f4", "(11,)"), std::string(44, '\0')), "limit of 10", small);
  std::string many = "(";
  for (int i = 0; i < 65; ++i) many += "1, ";
  many += ")";
  expect_error(make_npy(dict("<f4", many), std::string(4, '\0')), "more than 64");
  expect_error(make_npy(dict("<f4", "[2]"), ""), "'('");
}

// Every truncation and every single-byte corruption of a valid file either parses or returns an
// error; none may crash (run under ASan in the sanitizer build).
TEST(Npy, SurvivesMutations) {
  const std::string good =
      make_npy(dict("<i4", "(2, 3)", true), bytes_of<int32_t>({1, 2, 3, 4, 5, 6}));
  for (size_t n = 0; n < good.size(); ++n) EXPECT_FALSE(parse_npy(good.substr(0, n)).ok()) << n;
  for (size_t i = 0; i < good.size(); ++i) {
    for (int v : {0, 1, 0x27, 0x29, 0x2c, 0x39, 0x7f, 0xff}) {
      std::string m = good;
      m[i] = static_cast<char>(v);
      auto t = parse_npy(m);
      if (t.ok()) {
        EXPECT_LE(t->numel(), 64);
      }
    }
  }
}

class NpyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("osprey_npy_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write_raw(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }
  std::filesystem::path dir_;
};

TEST_F(NpyFileTest, WritesAndReadsFiles) {
  Tensor t(DType::kFloat32, {2, 2});
  for (int i = 0; i < 4; ++i) t.data<float>()[i] = static_cast<float>(i) - 1.5f;
  ASSERT_TRUE(write_npy(path("a.npy"), t).ok());
  auto back = read_npy(path("a.npy"));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>(*back), values<float>(t));
  // Overwrites an existing file.
  ASSERT_TRUE(write_npy(path("a.npy"), Tensor::scalar<int8_t>(-3)).ok());
  auto again = read_npy(path("a.npy"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->dtype(), DType::kInt8);
  EXPECT_EQ(again->data<int8_t>()[0], -3);
  // Fortran order from disk.
  write_raw("f.npy", make_npy(dict("<f4", "(2, 3)", true), bytes_of<float>({1, 4, 2, 5, 3, 6})));
  auto f = read_npy(path("f.npy"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(values<float>(*f), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST_F(NpyFileTest, FileErrorsNameThePath) {
  auto missing = read_npy(path("missing.npy"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("missing.npy"), std::string::npos);

  auto dir = read_npy(dir_.string());
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("directory"), std::string::npos);

  const std::string good = make_npy(dict("<f4", "(4,)"), bytes_of<float>({1, 2, 3, 4}));
  write_raw("short.npy", good.substr(0, good.size() - 3));
  auto short_file = read_npy(path("short.npy"));
  ASSERT_FALSE(short_file.ok());
  EXPECT_NE(short_file.status().message().find("short.npy"), std::string::npos);
  EXPECT_NE(short_file.status().message().find("truncated"), std::string::npos);

  write_raw("long.npy", good + "zz");
  EXPECT_FALSE(read_npy(path("long.npy")).ok());
  write_raw("text.npy", "hello, world\n");
  auto text = read_npy(path("text.npy"));
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("not an .npy file"), std::string::npos);
  write_raw("empty.npy", "");
  EXPECT_FALSE(read_npy(path("empty.npy")).ok());
  // A huge declared shape in a tiny file is refused before allocating.
  write_raw("huge.npy", make_npy(dict("<f4", "(100000, 100000)"), ""));
  auto huge = read_npy(path("huge.npy"));
  ASSERT_FALSE(huge.ok());

  auto unwritable = write_npy(path("no/such/dir/x.npy"), Tensor::scalar<float>(1));
  ASSERT_FALSE(unwritable.ok());
  EXPECT_NE(unwritable.message().find("x.npy"), std::string::npos);
}

}  // namespace
}  // namespace osprey
