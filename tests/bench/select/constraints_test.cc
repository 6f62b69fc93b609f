#include "select/constraints.h"

#include <gtest/gtest.h>

#include "test_candidates.h"

namespace osprey::bench::select {
namespace {

TEST(SelectConstraints, SlaParsesStatsAndUnits) {
  auto r = parse_sla("p99<=30ms, p50 <= 500us,max<=1.5s,p90<=2ms,p95<=3ms");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 5u);
  EXPECT_EQ((*r)[0].stat, LatencyStat::kP99);
  EXPECT_DOUBLE_EQ((*r)[0].max_ms, 30);
  EXPECT_EQ((*r)[1].stat, LatencyStat::kP50);
  EXPECT_DOUBLE_EQ((*r)[1].max_ms, 0.5);
  EXPECT_EQ((*r)[2].stat, LatencyStat::kMax);
  EXPECT_DOUBLE_EQ((*r)[2].max_ms, 1500);
  EXPECT_EQ((*r)[3].stat, LatencyStat::kP90);
  EXPECT_EQ((*r)[4].stat, LatencyStat::kP95);
}

TEST(SelectConstraints, SlaErrorsNameTheBadToken) {
  const std::pair<const char*, const char*> bad[] = {
      {"p99<=30ms,p98<=4ms", "'p98<=4ms': unknown statistic 'p98'"},
      {"p99<30ms", "'p99<30ms': no '<='"},
      {"p99<=30", "missing unit"},
      {"p99<=30min", "unknown unit 'min'"},
      {"p99<=-3ms", "no non-negative number"},
      {"p99<=ms", "no non-negative number"},
      {"p99<=30ms,", "empty limit"},
  };
  for (const auto& [text, want] : bad) {
    auto r = parse_sla(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(want), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("--sla"), std::string::npos);
  }
}

TEST(SelectConstraints, MemoryUnits) {
  EXPECT_EQ(parse_memory("2GiB").value(), 2LL << 30);
  EXPECT_EQ(parse_memory("512MiB").value(), 512LL << 20);
  EXPECT_EQ(parse_memory("1.5KiB").value(), 1536);
  EXPECT_EQ(parse_memory("3GB").value(), 3000000000LL);
  EXPECT_EQ(parse_memory("7MB").value(), 7000000);
  EXPECT_EQ(parse_memory("2KB").value(), 2000);
  EXPECT_EQ(parse_memory("100B").value(), 100);
  for (const char* bad : {"2", "2gib", "GiB", "-1GiB", "2 GiBs", "1e30TB"}) {
    auto r = parse_memory(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(std::string("'") + bad + "'"), std::string::npos)
        << r.status().message();
  }
}

TEST(SelectConstraints, Throughput) {
  EXPECT_DOUBLE_EQ(parse_throughput("200/s").value(), 200);
  EXPECT_DOUBLE_EQ(parse_throughput("12.5/s").value(), 12.5);
  for (const char* bad : {"200", "200/min", "fast/s", "-2/s"}) {
    auto r = parse_throughput(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--min-throughput"), std::string::npos);
  }
}

TEST(SelectConstraints, Agreement) {
  Constraints k;
  ASSERT_TRUE(parse_agreement("cosine>=0.999", &k).ok());
  EXPECT_DOUBLE_EQ(*k.min_cosine, 0.999);
  EXPECT_FALSE(k.min_top1);
  ASSERT_TRUE(parse_agreement("cosine>=0.99,top1>=0.95", &k).ok());
  EXPECT_DOUBLE_EQ(*k.min_top1, 0.95);
  for (const char* bad : {"cosine>0.9", "l2>=0.9", "cosine>=1.5", "cosine>=x"}) {
    Status s = parse_agreement(bad, &k);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find(std::string("'") + bad + "'"), std::string::npos) << s.message();
  }
}

TEST(SelectConstraints, ViolationsCarryTheNumbers) {
  Candidate c = testing::make("onnxruntime", 1, 27.4667, 180, 3 << 10, 10);  // p99 41.2 ms
  Constraints k;
  k.sla = parse_sla("p99<=30ms,p50<=100ms").value();
  k.max_memory = parse_memory("2GiB").value();
  k.min_throughput = 200;
  k.min_cosine = 0.999999;
  const auto v = violations(c, k);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0], "p99 41.2 ms > 30.0 ms");
  EXPECT_EQ(v[1], "peak RSS 3.0 GiB > 2.0 GiB");
  EXPECT_EQ(v[2], "throughput 180/s < 200/s");
  EXPECT_EQ(v[3], "cosine 0.999990 < 0.999999");
}

TEST(SelectConstraints, MissingValuesViolateAndTheReferencePassesAgreement) {
  Candidate c = testing::make("osprey", 1, 1, 100, 10, 5);
  c.peak_rss_bytes = -1;
  c.min_cosine = -1;
  c.agreement_note = "outputs not available";
  Constraints k;
  k.max_memory = 1 << 30;
  k.min_cosine = 0.9;
  auto v = violations(c, k);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0], "peak RSS not recorded (--max-memory needs it)");
  EXPECT_EQ(v[1], "cosine agreement not measured (outputs not available)");
  c.is_reference = true;
  c.peak_rss_bytes = 1;
  EXPECT_TRUE(violations(c, k).empty());
}

}  // namespace
}  // namespace osprey::bench::select
