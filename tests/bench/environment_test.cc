#include "core/environment.h"

#include <gtest/gtest.h>

namespace osprey::bench {
namespace {

TEST(BenchEnvironment, ParsesCpuinfo) {
  const char* text =
      "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\ncpu MHz\t\t: 2000.000\n"
      "flags\t\t: fpu sse avx avx2 fma avx512f avx512_bf16 amx_tile amx_bf16\n\n"
      "processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\ncpu MHz\t\t: 3000.000\n"
      "flags\t\t: fpu sse avx avx2 fma avx512f avx512_bf16 amx_tile amx_bf16\n";
  const CpuInfo c = parse_cpuinfo(text);
  EXPECT_EQ(c.model, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(c.processors, 2);
  EXPECT_EQ(c.flags, (std::vector<std::string>{"avx", "avx2", "fma", "avx512f", "avx512_bf16",
                                               "amx_tile", "amx_bf16"}));
  EXPECT_DOUBLE_EQ(c.mean_mhz, 2500);
  const CpuInfo empty = parse_cpuinfo("");
  EXPECT_EQ(empty.processors, 0);
  EXPECT_LT(empty.mean_mhz, 0);
}

TEST(BenchEnvironment, ParsesCgroupQuotas) {
  EXPECT_FALSE(parse_cgroup_v2_cpu_max("max 100000\n").has_value());
  EXPECT_DOUBLE_EQ(*parse_cgroup_v2_cpu_max("200000 100000\n"), 2.0);
  EXPECT_DOUBLE_EQ(*parse_cgroup_v2_cpu_max("50000 100000"), 0.5);
  EXPECT_FALSE(parse_cgroup_v2_cpu_max("garbage").has_value());
  EXPECT_FALSE(parse_cgroup_v1_quota("-1\n", "100000\n").has_value());
  EXPECT_DOUBLE_EQ(*parse_cgroup_v1_quota("150000\n", "100000\n"), 1.5);
  EXPECT_FALSE(parse_cgroup_v1_quota("x", "100000").has_value());
}

TEST(BenchEnvironment, FormatsCpuLists) {
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8}), "0-3,8");
  EXPECT_EQ(format_cpu_list({5}), "5");
  EXPECT_EQ(format_cpu_list({0, 2, 4, 5}), "0,2,4-5");
  EXPECT_EQ(format_cpu_list({}), "");
}

TEST(BenchEnvironment, WarnsOnPowersaveAndThrottling) {
  EXPECT_TRUE(frequency_warnings("performance", 3000, 3100).empty());
  const auto w = frequency_warnings("powersave", 1200, 3000);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[0].find("powersave"), std::string::npos);
  EXPECT_NE(w[1].find("1200 MHz"), std::string::npos);
  EXPECT_TRUE(frequency_warnings("not exposed", -1, -1).empty());
}

TEST(BenchEnvironment, CaptureFillsTheBasics) {
  const Environment e = capture_environment(1);
  EXPECT_FALSE(e.cpu_model.empty());
  EXPECT_GE(e.affinity_count, 1);
  EXPECT_FALSE(e.affinity.empty());
  EXPECT_FALSE(e.cgroup_cpu_quota.empty());
  EXPECT_FALSE(e.kernel.empty());
  EXPECT_NE(e.libc.find("glibc"), std::string::npos);
  // Asking for more threads than CPUs available must warn.
  const Environment over = capture_environment(e.affinity_count + 1);
  bool warned = false;
  for (const auto& w : over.warnings) warned |= w.find("affinity") != std::string::npos;
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace osprey::bench
