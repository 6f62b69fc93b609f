#include "metrics/process_metrics.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>

namespace osprey::server::metrics {
namespace {

// proc(5) layout; the command holds a space and a ')' to exercise the split.
const char* kStat =
    "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 3 0 5000 "
    "104857600 2560 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0";

TEST(ProcessMetrics, ParsesProcStat) {
  ProcessSample s;
  ASSERT_TRUE(parse_proc_stat(kStat, 100, 4096, 1'700'000'000, &s).ok());
  EXPECT_DOUBLE_EQ(s.cpu_seconds, 3.0);                     // (250 + 50) / 100
  EXPECT_DOUBLE_EQ(s.start_time_seconds, 1'700'000'050.0);  // btime + 5000 / 100
  EXPECT_DOUBLE_EQ(s.virtual_bytes, 104857600.0);
  EXPECT_DOUBLE_EQ(s.resident_bytes, 2560.0 * 4096);
}

TEST(ProcessMetrics, RejectsTruncatedStat) {
  ProcessSample s;
  const Status st = parse_proc_stat("1 (x) S 1 2 3", 100, 4096, 0, &s);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("fields"), std::string::npos) << st.message();
  EXPECT_FALSE(parse_proc_stat("no parenthesis", 100, 4096, 0, &s).ok());
}

TEST(ProcessMetrics, ParsesBootTimeAndFdLimit) {
  auto boot = parse_boot_time("cpu  1 2 3\nintr 5\nbtime 1699999999\nprocesses 7\n");
  ASSERT_TRUE(boot.ok());
  EXPECT_DOUBLE_EQ(*boot, 1699999999.0);
  EXPECT_FALSE(parse_boot_time("cpu 1 2 3\n").ok());
  auto limit = parse_max_open_files(
      "Limit                     Soft Limit           Hard Limit           Units\n"
      "Max open files            1024                 1048576              files\n");
  ASSERT_TRUE(limit.ok());
  ASSERT_TRUE(limit->has_value());
  EXPECT_DOUBLE_EQ(**limit, 1024.0);
  auto unlimited =
      parse_max_open_files("Max open files            unlimited            unlimited  files\n");
  ASSERT_TRUE(unlimited.ok());
  EXPECT_FALSE(unlimited->has_value());
}

TEST(ProcessMetrics, ReadsThisProcess) {
  auto s = read_process_sample();
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_GT(s->resident_bytes, 0);
  EXPECT_GE(s->virtual_bytes, s->resident_bytes);
  EXPECT_GE(s->open_fds, 3);  // stdin, stdout, stderr
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_LE(s->start_time_seconds, now + 2);
  EXPECT_GT(s->start_time_seconds, now - 24 * 3600.0) << "this test process started today";
  EXPECT_GE(s->cpu_seconds, 0);
}

TEST(ProcessMetrics, RegistryRendersTheStandardNames) {
  Registry r;
  ASSERT_TRUE(r.add_process_metrics().ok());
  const std::string text = r.render();
  for (const char* line :
       {"# TYPE process_cpu_seconds_total counter\n",
        "# TYPE process_resident_memory_bytes gauge\n",
        "# TYPE process_virtual_memory_bytes gauge\n", "# TYPE process_start_time_seconds gauge\n",
        "# TYPE process_open_fds gauge\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  EXPECT_EQ(text.find("unavailable"), std::string::npos) << text;
  EXPECT_FALSE(r.add_gauge("process_open_fds", "h", {}).ok()) << "the collector owns the name";
  EXPECT_FALSE(r.add_process_metrics().ok()) << "registered twice";
}

TEST(ProcessMetrics, RenderSampleExactly) {
  ProcessSample s;
  s.cpu_seconds = 1.5;
  s.resident_bytes = 4096;
  s.virtual_bytes = 8192;
  s.start_time_seconds = 1700000000.25;
  s.open_fds = 9;
  std::string out;
  ProcessCollector::render_sample(s, &out);
  EXPECT_EQ(out,
            "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
            "# TYPE process_cpu_seconds_total counter\n"
            "process_cpu_seconds_total 1.5\n"
            "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
            "# TYPE process_resident_memory_bytes gauge\n"
            "process_resident_memory_bytes 4096\n"
            "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
            "# TYPE process_virtual_memory_bytes gauge\n"
            "process_virtual_memory_bytes 8192\n"
            "# HELP process_start_time_seconds Start time of the process since unix epoch in "
            "seconds.\n"
            "# TYPE process_start_time_seconds gauge\n"
            "process_start_time_seconds 1700000000.25\n"
            "# HELP process_open_fds Number of open file descriptors.\n"
            "# TYPE process_open_fds gauge\n"
            "process_open_fds 9\n");
}

}  // namespace
}  // namespace osprey::server::metrics
