#include "options.h"

#include <gtest/gtest.h>

#include "arrivals.h"
#include "model_info.h"

namespace osprey::loadgen {
namespace {

TEST(ParseRange, ExpandsStartEndStep) {
  auto r = parse_range("1:4:3", "--concurrency-range");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, (std::vector<double>{1, 4}));
  r = parse_range("2:5", "--concurrency-range");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<double>{2, 3, 4, 5}));
  r = parse_range("7", "--concurrency-range");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<double>{7}));
  r = parse_range("10:20:2.5", "--request-rate-range");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<double>{10, 12.5, 15, 17.5, 20}));
}

TEST(ParseRange, RejectsBadTextNamingTheOption) {
  for (const char* bad : {"", "a", "0", "4:2", "1:4:0", "1:2:3:4", "-1:2", "1:1000000:0.001"}) {
    auto r = parse_range(bad, "--concurrency-range");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("--concurrency-range"), std::string::npos) << bad;
  }
}

TEST(ParseLatencyBound, AcceptsPercentileAndMs) {
  auto b = parse_latency_bound("p99<=50");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->percentile, 99);
  EXPECT_EQ(b->max_ms, 50);
  b = parse_latency_bound("p95<=12.5ms");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->percentile, 95);
  EXPECT_EQ(b->max_ms, 12.5);
  for (const char* bad : {"p98<=5", "99<=5", "p99<5", "p99<=0", "p99<=x", "p99<="})
    EXPECT_FALSE(parse_latency_bound(bad).ok()) << bad;
}

TEST(ParseShapeOverride, NameAndDims) {
  auto s = parse_shape_override("INPUT0=2,16");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->name, "INPUT0");
  EXPECT_EQ(s->dims, (std::vector<int64_t>{2, 16}));
  EXPECT_TRUE(parse_shape_override("x=")->dims.empty());
  EXPECT_FALSE(parse_shape_override("=1").ok());
  EXPECT_FALSE(parse_shape_override("x=1,-2").ok());
  EXPECT_FALSE(parse_shape_override("x").ok());
}

TEST(ParseDistribution, KnownNamesOnly) {
  EXPECT_EQ(*parse_distribution("poisson"), Distribution::kPoisson);
  EXPECT_EQ(*parse_distribution("constant"), Distribution::kConstant);
  EXPECT_FALSE(parse_distribution("uniform").ok());
}

TEST(ResolveShape, BatchOverridesAndErrors) {
  const TensorSpec in{"INPUT0", "FP32", {-1, 16}};
  auto s = resolve_shape(in, {}, 4);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, (std::vector<int64_t>{4, 16}));
  s = resolve_shape(in, {{"INPUT0", {3, 16}}}, 1);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, (std::vector<int64_t>{3, 16}));
  EXPECT_FALSE(resolve_shape(in, {{"INPUT0", {3, 15}}}, 1).ok());  // fixed dim differs
  EXPECT_FALSE(resolve_shape(in, {{"INPUT0", {3}}}, 1).ok());      // rank differs
  const TensorSpec var{"x", "FP32", {1, -1}};
  auto e = resolve_shape(var, {}, 1);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("--shape x="), std::string::npos);
}

TEST(ParseMetadata, ReadsInputsAndOutputs) {
  auto m = parse_metadata_json(
      R"({"name":"add_sub","versions":["1"],"platform":"onnxruntime_onnx",)"
      R"("inputs":[{"name":"INPUT0","datatype":"FP32","shape":[-1,16]},)"
      R"({"name":"INPUT1","datatype":"FP32","shape":[-1,16]}],)"
      R"("outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[-1,16]}]})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->name, "add_sub");
  ASSERT_EQ(m->inputs.size(), 2u);
  EXPECT_EQ(m->inputs[1].name, "INPUT1");
  EXPECT_EQ(m->inputs[1].shape, (std::vector<int64_t>{-1, 16}));
  ASSERT_EQ(m->outputs.size(), 1u);
  EXPECT_FALSE(parse_metadata_json("not json").ok());
  EXPECT_FALSE(parse_metadata_json(R"({"name":"m","inputs":[{"name":"x"}]})").ok());
  EXPECT_FALSE(parse_metadata_json(R"({"name":"m","inputs":[]})").ok());
}

}  // namespace
}  // namespace osprey::loadgen
