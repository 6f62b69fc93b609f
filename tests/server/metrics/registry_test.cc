#include "metrics/registry.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "metrics/exposition.h"

namespace osprey::server::metrics {
namespace {

TEST(Exposition, SmallRegistryRendersExactly) {
  Registry r;
  auto requests = r.add_counter("osprey_requests_total", "Requests handled.", {"model", "code"});
  ASSERT_TRUE(requests.ok()) << requests.status().to_string();
  auto queue = r.add_gauge("osprey_queue_size", "Requests waiting.", {});
  ASSERT_TRUE(queue.ok());
  auto latency =
      r.add_histogram("osprey_latency_seconds", "Request latency.", {"model"}, {0.00005, 0.5, 1});
  ASSERT_TRUE(latency.ok());

  (*requests)->with({"resnet", "200"}).inc(3);
  (*requests)->with({"bert", "200"}).inc();
  (*requests)->with({"bert", "503"}).inc(0.5);
  (*queue)->with({}).set(7);
  Histogram& h = (*latency)->with({"bert"});
  h.observe(0.000030517578125);  // 2^-15: every sum below is exact
  h.observe(0.25);
  h.observe(2);

  const std::string expected =
      "# HELP osprey_latency_seconds Request latency.\n"
      "# TYPE osprey_latency_seconds histogram\n"
      "osprey_latency_seconds_bucket{model=\"bert\",le=\"5e-05\"} 1\n"
      "osprey_latency_seconds_bucket{model=\"bert\",le=\"0.5\"} 2\n"
      "osprey_latency_seconds_bucket{model=\"bert\",le=\"1\"} 2\n"
      "osprey_latency_seconds_bucket{model=\"bert\",le=\"+Inf\"} 3\n"
      "osprey_latency_seconds_sum{model=\"bert\"} 2.250030517578125\n"
      "osprey_latency_seconds_count{model=\"bert\"} 3\n"
      "# HELP osprey_queue_size Requests waiting.\n"
      "# TYPE osprey_queue_size gauge\n"
      "osprey_queue_size 7\n"
      "# HELP osprey_requests_total Requests handled.\n"
      "# TYPE osprey_requests_total counter\n"
      "osprey_requests_total{model=\"bert\",code=\"200\"} 1\n"
      "osprey_requests_total{model=\"bert\",code=\"503\"} 0.5\n"
      "osprey_requests_total{model=\"resnet\",code=\"200\"} 3\n";
  EXPECT_EQ(r.render(), expected);
}

TEST(Exposition, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(escape_help("line1\nback\\slash \"quoted\""), "line1\\nback\\\\slash \"quoted\"");
  Registry r;
  auto c = r.add_counter("x_total", "Help with \\ and\nnewline.", {"path"});
  ASSERT_TRUE(c.ok());
  (*c)->with({"C:\\dir\n\"q\""}).inc();
  EXPECT_EQ(r.render(),
            "# HELP x_total Help with \\\\ and\\nnewline.\n"
            "# TYPE x_total counter\n"
            "x_total{path=\"C:\\\\dir\\n\\\"q\\\"\"} 1\n");
}

TEST(Exposition, FormatsValues) {
  EXPECT_EQ(format_value(0), "0");
  EXPECT_EQ(format_value(42), "42");
  EXPECT_EQ(format_value(0.1), "0.1");
  EXPECT_EQ(format_value(-2.5), "-2.5");
  EXPECT_EQ(format_value(1e21), "1e+21");
  EXPECT_EQ(format_value(1.0 / 0.0), "+Inf");
  EXPECT_EQ(format_value(-1.0 / 0.0), "-Inf");
  EXPECT_EQ(format_value(0.0 / 0.0), "NaN");
}

TEST(Exposition, LargeCounterStaysExact) {
  Registry r;
  auto c = r.add_counter("big_total", "Big.", {});
  ASSERT_TRUE(c.ok());
  (*c)->with({}).inc(uint64_t{9007199254740993});  // 2^53 + 1: not a double
  EXPECT_NE(r.render().find("big_total 9007199254740993\n"), std::string::npos) << r.render();
}

TEST(Registry, RejectsBadNamesAndClashes) {
  Registry r;
  EXPECT_EQ(r.add_counter("1abc", "h", {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.add_counter("a-b", "h", {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.add_counter("ok_total", "h", {"__x"}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.add_counter("ok_total", "h", {"a", "a"}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(r.add_counter("ok_total", "h", {"bad:label"}).status().code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(r.add_counter("ns:ok_total", "h", {"a"}).ok());
  const Status dup = r.add_gauge("ns:ok_total", "h", {}).status();
  EXPECT_EQ(dup.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dup.message().find("clashes"), std::string::npos) << dup.message();

  ASSERT_TRUE(r.add_histogram("lat_seconds", "h", {}, {1}).ok());
  EXPECT_FALSE(r.add_gauge("lat_seconds_count", "h", {}).ok()) << "a histogram owns _count";
  ASSERT_TRUE(r.add_gauge("other_sum", "h", {}).ok());
  EXPECT_FALSE(r.add_histogram("other", "h", {}, {1}).ok()) << "would render other_sum twice";

  const Status le = r.add_histogram("h2", "h", {"le"}, {1}).status();
  EXPECT_NE(le.message().find("\"le\" is reserved"), std::string::npos) << le.message();
  EXPECT_FALSE(r.add_histogram("h3", "h", {}, {}).ok());
  EXPECT_FALSE(r.add_histogram("h4", "h", {}, {2, 1}).ok());
  EXPECT_FALSE(r.add_histogram("h5", "h", {}, {1, 1}).ok());
  EXPECT_FALSE(r.add_histogram("h6", "h", {}, {1, 1.0 / 0.0}).ok());
}

TEST(Registry, ChildrenAreStableAndArityIsChecked) {
  Registry r;
  auto c = r.add_counter("c_total", "h", {"a", "b"});
  ASSERT_TRUE(c.ok());
  Counter& x = (*c)->with({"1", "2"});
  EXPECT_EQ(&x, &(*c)->with({"1", "2"}));
  EXPECT_NE(&x, &(*c)->with({"1", "3"}));
  const auto wrong = (*c)->get({"1"});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("c_total has 2 label(s) but 1 value(s)"),
            std::string::npos)
      << wrong.status().message();
  EXPECT_THROW((*c)->with({"1", "2", "3"}), std::invalid_argument);
}

TEST(Registry, EmptyFamilyRendersHeaderOnly) {
  Registry r;
  ASSERT_TRUE(r.add_gauge("idle", "Nothing yet.", {"model"}).ok());
  EXPECT_EQ(r.render(), "# HELP idle Nothing yet.\n# TYPE idle gauge\n");
}

}  // namespace
}  // namespace osprey::server::metrics
