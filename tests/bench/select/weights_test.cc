#include "select/weights.h"

#include <gtest/gtest.h>

namespace osprey::bench::select {
namespace {

TEST(SelectWeights, DefaultsSumToOne) {
  const Weights w = default_weights();
  EXPECT_DOUBLE_EQ(w[0] + w[1] + w[2] + w[3], 1);
  EXPECT_DOUBLE_EQ(w[static_cast<size_t>(Criterion::kLatency)], 0.4);
}

TEST(SelectWeights, ParsedAndNormalized) {
  auto w = parse_weights("latency=2, throughput=1,memory=1");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_DOUBLE_EQ((*w)[0], 0.5);
  EXPECT_DOUBLE_EQ((*w)[1], 0.25);
  EXPECT_DOUBLE_EQ((*w)[2], 0.25);
  EXPECT_DOUBLE_EQ((*w)[3], 0);  // not named: weighs 0
  auto one = parse_weights("cold_start=0.1");
  ASSERT_TRUE(one.ok());
  EXPECT_DOUBLE_EQ((*one)[3], 1);
}

TEST(SelectWeights, BadWeightsAreRefusedByName) {
  const std::pair<const char*, const char*> bad[] = {
      {"latency=0.5,speed=0.5", "unknown criterion 'speed'"},
      {"latency=-0.1,memory=1", "'latency=-0.1': the weight must be a non-negative number"},
      {"latency=abc", "'latency=abc'"},
      {"latency=0.5,latency=0.2", "'latency' is given twice"},
      {"latency=0,throughput=0", "all weights are zero"},
      {"latency", "expected NAME=WEIGHT"},
      {"latency=inf", "non-negative number"},
  };
  for (const auto& [text, want] : bad) {
    auto r = parse_weights(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(want), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace osprey::bench::select
