// Unit tests for the CLI's testable pieces (osprey_cli_lib): percentiles and summary
// statistics, argument syntax, output file names and seeded input generation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "args.h"
#include "input_generator.h"
#include "inputs.h"
#include "stats.h"

namespace osprey::cli {
namespace {

TEST(CliStats, PercentileInterpolatesBetweenClosestRanks) {
  const std::vector<double> x = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(percentile_sorted(x, 0), 1);
  EXPECT_DOUBLE_EQ(percentile_sorted(x, 100), 4);
  EXPECT_DOUBLE_EQ(percentile_sorted(x, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile_sorted(x, 90), 3.7);       // h = 2.7
  EXPECT_DOUBLE_EQ(percentile_sorted(x, 25), 1.75);      // h = 0.75
  EXPECT_DOUBLE_EQ(percentile_sorted(x, 150), 4);        // clamped
  EXPECT_DOUBLE_EQ(percentile_sorted(x, -5), 1);
  EXPECT_DOUBLE_EQ(percentile_sorted({7}, 99), 7);
  EXPECT_TRUE(std::isnan(percentile_sorted({}, 50)));
  // numpy.percentile(range(1, 101), [50, 90, 95, 99]) == [50.5, 90.1, 95.05, 99.01]
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_NEAR(percentile_sorted(hundred, 50), 50.5, 1e-12);
  EXPECT_NEAR(percentile_sorted(hundred, 90), 90.1, 1e-12);
  EXPECT_NEAR(percentile_sorted(hundred, 95), 95.05, 1e-12);
  EXPECT_NEAR(percentile_sorted(hundred, 99), 99.01, 1e-12);
}

TEST(CliStats, SummarizeSortsAndUsesSampleStdev) {
  const LatencySummary s = summarize({9, 2, 5, 4, 4, 5, 7, 4});
  EXPECT_EQ(s.count, 8u);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_NEAR(s.stdev, std::sqrt(32.0 / 7.0), 1e-12);
  EXPECT_DOUBLE_EQ(s.p50, 4.5);
  EXPECT_NEAR(s.p90, 7 + 0.3 * 2, 1e-12);  // h = 6.3 over {2,4,4,4,5,5,7,9}
  EXPECT_LE(s.p90, s.p95);
  EXPECT_LE(s.p95, s.p99);
  EXPECT_LE(s.p99, s.max);

  const LatencySummary one = summarize({3.5});
  EXPECT_EQ(one.count, 1u);
  EXPECT_DOUBLE_EQ(one.stdev, 0);
  EXPECT_DOUBLE_EQ(one.p99, 3.5);
  const LatencySummary none = summarize({});
  EXPECT_EQ(none.count, 0u);
  EXPECT_DOUBLE_EQ(none.mean, 0);
}

TEST(CliArgs, ParsesAssignmentsAndDims) {
  auto kv = parse_assignment("images=/tmp/a=b.npy", "--input");
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ(kv->first, "images");
  EXPECT_EQ(kv->second, "/tmp/a=b.npy");
  EXPECT_FALSE(parse_assignment("images", "--input").ok());
  EXPECT_FALSE(parse_assignment("=x.npy", "--input").ok());
  EXPECT_FALSE(parse_assignment("x=", "--input").ok());

  auto d = parse_dims("1x3x224x224");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, (Shape{1, 3, 224, 224}));
  EXPECT_EQ(*parse_dims("2,0,5"), (Shape{2, 0, 5}));
  EXPECT_EQ(*parse_dims("7"), (Shape{7}));
  for (const char* bad : {"", "x", "1x", "x1", "1xx2", "1x-3", "1.5", "a", "1 x 2", "99999999999999999999"})
    EXPECT_FALSE(parse_dims(bad).ok()) << bad;

  EXPECT_FALSE(parse_shape_options({"a=1x2", "a=3"}).ok());
  EXPECT_FALSE(parse_input_options({"a=x.npy", "a=y.npy"}).ok());
  auto shapes = parse_shape_options({"a=1x2", "b=3"});
  ASSERT_TRUE(shapes.ok());
  EXPECT_EQ(shapes->size(), 2u);
  auto bad_shape = parse_shape_options({"a=1xq"});
  ASSERT_FALSE(bad_shape.ok());
  EXPECT_NE(bad_shape.status().message().find("1xq"), std::string::npos);
}

TEST(CliArgs, SafeFileStemsAreSafeAndUnique) {
  const auto s = safe_file_stems({"logits", "a/b", "a_b", "../../etc/passwd", "", ".", "..", "x y:z", "logits"});
  ASSERT_EQ(s.size(), 9u);
  EXPECT_EQ(s[0], "logits");
  EXPECT_EQ(s[1], "a_b");
  EXPECT_EQ(s[2], "a_b_1");
  EXPECT_EQ(s[3], "output_3");  // starts with '.'
  EXPECT_EQ(s[4], "output_4");
  EXPECT_EQ(s[5], "output_5");
  EXPECT_EQ(s[6], "output_6");
  EXPECT_EQ(s[7], "x_y_z");
  EXPECT_EQ(s[8], "logits_1");
  for (const auto& stem : s) EXPECT_EQ(stem.find('/'), std::string::npos);
}

TEST(CliInputs, RandomTensorsAreSeededAndInRange) {
  auto a = random_tensor(DType::kFloat32, {1000}, 42);
  auto b = random_tensor(DType::kFloat32, {1000}, 42);
  auto c = random_tensor(DType::kFloat32, {1000}, 43);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(0, std::memcmp(a->raw_data(), b->raw_data(), a->nbytes()));
  EXPECT_NE(0, std::memcmp(a->raw_data(), c->raw_data(), a->nbytes()));
  double sum = 0;
  for (int i = 0; i < 1000; ++i) {
    const float v = a->data<float>()[i];
    EXPECT_GE(v, -1.f);
    EXPECT_LT(v, 1.f);
    sum += v;
  }
  EXPECT_LT(std::abs(sum / 1000), 0.1);

  GeneratorOptions normal;
  normal.distribution = Distribution::kNormal;
  auto n = random_tensor(DType::kFloat64, {4000}, 1, normal);
  ASSERT_TRUE(n.ok());
  double m = 0, v = 0;
  for (int i = 0; i < 4000; ++i) m += n->data<double>()[i];
  m /= 4000;
  for (int i = 0; i < 4000; ++i) v += (n->data<double>()[i] - m) * (n->data<double>()[i] - m);
  v /= 3999;
  EXPECT_LT(std::abs(m), 0.1);
  EXPECT_NEAR(v, 1.0, 0.1);

  auto ints = random_tensor(DType::kInt64, {500}, 3);
  ASSERT_TRUE(ints.ok());
  for (int i = 0; i < 500; ++i) {
    EXPECT_GE(ints->data<int64_t>()[i], 0);
    EXPECT_LT(ints->data<int64_t>()[i], 100);
  }
  auto u8 = random_tensor(DType::kInt8, {500}, 3);
  ASSERT_TRUE(u8.ok());
  for (int i = 0; i < 500; ++i) EXPECT_GE(u8->data<int8_t>()[i], 0);
  auto bools = random_tensor(DType::kBool, {200}, 9);
  ASSERT_TRUE(bools.ok());
  int ones = 0;
  for (int i = 0; i < 200; ++i) {
    const auto byte = static_cast<const unsigned char*>(bools->raw_data())[i];
    EXPECT_LE(byte, 1);
    ones += byte;
  }
  EXPECT_GT(ones, 50);
  EXPECT_LT(ones, 150);
  for (DType t : {DType::kFloat16, DType::kBFloat16, DType::kUInt64, DType::kInt16, DType::kUInt32})
    EXPECT_TRUE(random_tensor(t, {2, 3}, 0).ok()) << dtype_name(t);
  EXPECT_FALSE(random_tensor(DType::kString, {2}, 0).ok());
  GeneratorOptions tiny;
  tiny.max_elements = 10;
  EXPECT_FALSE(random_tensor(DType::kFloat32, {11}, 0, tiny).ok());
}

TEST(CliInputs, SeedsDependOnNameNotOrder) {
  EXPECT_EQ(input_seed(0, "x"), input_seed(0, "x"));
  EXPECT_NE(input_seed(0, "x"), input_seed(0, "y"));
  EXPECT_NE(input_seed(0, "x"), input_seed(1, "x"));
}

TensorInfo info(const std::string& name, DType dt, std::vector<Dim> dims) {
  TensorInfo i;
  i.name = name;
  i.dtype = dt;
  i.shape = std::move(dims);
  i.has_shape = true;
  return i;
}

TEST(CliInputs, ResolvesShapes) {
  const TensorInfo x = info("x", DType::kFloat32, {Dim{-1, "batch"}, Dim{3, ""}, Dim{-1, ""}});
  bool applied = false;
  auto s = resolve_shape(x, nullptr, 0, &applied);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, (Shape{1, 3, 1}));
  EXPECT_FALSE(applied);
  s = resolve_shape(x, nullptr, 8, &applied);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, (Shape{8, 3, 1}));
  EXPECT_TRUE(applied);
  const Shape ok_override = {2, 3, 7};
  s = resolve_shape(x, &ok_override, 8, &applied);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, ok_override);
  EXPECT_FALSE(applied);
  const Shape bad_dim = {2, 4, 7}, bad_rank = {2, 3};
  EXPECT_FALSE(resolve_shape(x, &bad_dim, 0, &applied).ok());
  EXPECT_FALSE(resolve_shape(x, &bad_rank, 0, &applied).ok());
  TensorInfo unknown;
  unknown.name = "u";
  unknown.dtype = DType::kFloat32;
  EXPECT_FALSE(resolve_shape(unknown, nullptr, 0, &applied).ok());
  const Shape any = {5};
  EXPECT_TRUE(resolve_shape(unknown, &any, 0, &applied).ok());
}

TEST(CliInputs, PrepareInputsChecksNames) {
  const std::vector<TensorInfo> declared = {info("a", DType::kFloat32, {Dim{2, ""}}),
                                            info("b", DType::kInt64, {Dim{-1, "n"}})};
  InputSpec spec;
  spec.seed = 5;
  spec.shapes = {{"b", {4}}};
  auto in = prepare_inputs(declared, spec);
  ASSERT_TRUE(in.ok()) << in.status().to_string();
  ASSERT_EQ(in->size(), 2u);
  EXPECT_EQ((*in)[0].name, "a");
  EXPECT_EQ((*in)[0].tensor.shape(), (Shape{2}));
  EXPECT_EQ((*in)[1].tensor.dtype(), DType::kInt64);
  EXPECT_EQ((*in)[1].tensor.shape(), (Shape{4}));

  spec.shapes = {{"c", {4}}};
  auto unknown = prepare_inputs(declared, spec);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("no input 'c'"), std::string::npos);
  spec.shapes = {};
  spec.files = {{"a", "/nonexistent/a.npy"}};
  auto missing = prepare_inputs(declared, spec);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/a.npy"), std::string::npos);
}

}  // namespace
}  // namespace osprey::cli
