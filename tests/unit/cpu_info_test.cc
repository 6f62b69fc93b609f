#include "threading/cpu_info.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <map>
#include <string>

namespace osprey::cpu {
namespace {

int cpus_of(std::optional<CpuQuota> q) {
  return q ? q->cpus() : -1;
}

TEST(CpuInfo, CgroupV2CpuMax) {
  EXPECT_FALSE(parse_cgroup_v2_cpu_max("max 100000"));
  EXPECT_FALSE(parse_cgroup_v2_cpu_max("max 100000\n"));
  EXPECT_FALSE(parse_cgroup_v2_cpu_max("max"));
  EXPECT_EQ(cpus_of(parse_cgroup_v2_cpu_max("150000 100000")), 2);
  EXPECT_EQ(cpus_of(parse_cgroup_v2_cpu_max("50000 100000")), 1);
  EXPECT_EQ(cpus_of(parse_cgroup_v2_cpu_max("200000 100000\n")), 2);
  EXPECT_EQ(cpus_of(parse_cgroup_v2_cpu_max("200001 100000\n")), 3);
  EXPECT_EQ(cpus_of(parse_cgroup_v2_cpu_max("400000 50000")), 8);
  EXPECT_EQ(cpus_of(parse_cgroup_v2_cpu_max("100000")), 1);  // period defaults to 100000
  const auto q = parse_cgroup_v2_cpu_max("150000 100000");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->quota, 150000);
  EXPECT_EQ(q->period, 100000);
  // Malformed or non-positive: no limit rather than a wrong one.
  for (const char* bad : {"", "\n", "abc", "0 100000", "-5 100000", "100000 0", "100000 -1",
                          "10x 100000", "100000 abc", "1 2 3"})
    EXPECT_FALSE(parse_cgroup_v2_cpu_max(bad)) << "'" << bad << "'";
}

TEST(CpuInfo, CgroupV1Quota) {
  EXPECT_FALSE(parse_cgroup_v1_quota("-1", "100000"));
  EXPECT_FALSE(parse_cgroup_v1_quota("-1\n", "100000\n"));
  EXPECT_EQ(cpus_of(parse_cgroup_v1_quota("150000", "100000")), 2);
  EXPECT_EQ(cpus_of(parse_cgroup_v1_quota("50000\n", "100000\n")), 1);
  EXPECT_EQ(cpus_of(parse_cgroup_v1_quota("300000", "100000")), 3);
  EXPECT_FALSE(parse_cgroup_v1_quota("", "100000"));
  EXPECT_FALSE(parse_cgroup_v1_quota("100000", ""));
  EXPECT_FALSE(parse_cgroup_v1_quota("100000", "0"));
  EXPECT_FALSE(parse_cgroup_v1_quota("lots", "100000"));
}

TEST(CpuInfo, ThreadCountIsAffinityCappedByQuota) {
  EXPECT_EQ(thread_count_for(8, std::nullopt), 8);
  EXPECT_EQ(thread_count_for(8, CpuQuota{150000, 100000}), 2);
  EXPECT_EQ(thread_count_for(8, CpuQuota{50000, 100000}), 1);
  EXPECT_EQ(thread_count_for(2, CpuQuota{400000, 100000}), 2);  // quota above the mask: the mask
  EXPECT_EQ(thread_count_for(1, std::nullopt), 1);
  EXPECT_EQ(thread_count_for(0, std::nullopt), 1);  // a failed affinity query still gives 1
  EXPECT_EQ(thread_count_for(-3, CpuQuota{150000, 100000}), 1);
}

TEST(CpuInfo, CountsCpusInSet) {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_TRUE(cpus_in_set(set).empty());
  CPU_SET(0, &set);
  CPU_SET(3, &set);
  CPU_SET(5, &set);
  EXPECT_EQ(cpus_in_set(set), (std::vector<int>{0, 3, 5}));
  CPU_SET(CPU_SETSIZE - 1, &set);
  EXPECT_EQ(cpus_in_set(set).size(), 4u);
  EXPECT_EQ(cpus_in_set(set).back(), CPU_SETSIZE - 1);
}

TEST(CpuInfo, RealAffinityAndDefaultThreadCount) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  const auto cpus = affinity_cpus();
  EXPECT_EQ(static_cast<int>(cpus.size()), CPU_COUNT(&set));
  const int n = default_thread_count();
  EXPECT_GE(n, 1);
  EXPECT_LE(n, static_cast<int>(cpus.size()));
  const auto quota = cgroup_cpu_quota(read_small_file);
  if (quota) {
    EXPECT_LE(n, quota->cpus());
  }
}

TEST(CpuInfo, ParsesProcSelfCgroup) {
  // Hybrid v1 + v2 (systemd), cpu in its own hierarchy.
  auto p =
      parse_proc_self_cgroup("9:name=systemd:/\n4:memory:/x/y\n2:cpuacct:/\n1:cpu:/a/b\n0::/\n");
  ASSERT_TRUE(p.v1_cpu);
  EXPECT_EQ(*p.v1_cpu, "/a/b");
  ASSERT_TRUE(p.v2);
  EXPECT_EQ(*p.v2, "/");
  // cpu,cpuacct co-mounted; no v2 line.
  p = parse_proc_self_cgroup("5:cpu,cpuacct:/docker/abc\n3:cpuset:/docker/abc\n");
  EXPECT_EQ(p.v1_cpu.value_or("?"), "/docker/abc");
  EXPECT_FALSE(p.v2);
  // "cpuacct" or "cpuset" alone is not "cpu".
  p = parse_proc_self_cgroup("2:cpuacct:/q\n3:cpuset:/r\n");
  EXPECT_FALSE(p.v1_cpu);
  // Pure v2; a path containing ':'.
  p = parse_proc_self_cgroup("0::/user.slice/app:1.scope\n");
  EXPECT_EQ(p.v2.value_or("?"), "/user.slice/app:1.scope");
  EXPECT_FALSE(p.v1_cpu);
  p = parse_proc_self_cgroup("");
  EXPECT_FALSE(p.v2);
  EXPECT_FALSE(p.v1_cpu);
}

// A fake file system for cgroup_cpu_quota.
FileReader fake_fs(std::map<std::string, std::string> files) {
  return [files = std::move(files)](const std::string& path) -> std::optional<std::string> {
    const auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
}

TEST(CpuInfo, FindsTightestCgroupQuota) {
  // No files at all: no limit.
  EXPECT_FALSE(cgroup_cpu_quota(fake_fs({})));
  // Container with a cgroup namespace (v2): its own cgroup is the mount root.
  EXPECT_EQ(cpus_of(cgroup_cpu_quota(fake_fs(
                {{"/proc/self/cgroup", "0::/\n"}, {"/sys/fs/cgroup/cpu.max", "150000 100000\n"}}))),
            2);
  EXPECT_FALSE(cgroup_cpu_quota(
      fake_fs({{"/proc/self/cgroup", "0::/\n"}, {"/sys/fs/cgroup/cpu.max", "max 100000\n"}})));
  // v2 without a namespace: a parent's limit is tighter than the leaf's.
  EXPECT_EQ(cpus_of(cgroup_cpu_quota(fake_fs({{"/proc/self/cgroup", "0::/a/b\n"},
                                              {"/sys/fs/cgroup/a/b/cpu.max", "400000 100000\n"},
                                              {"/sys/fs/cgroup/a/cpu.max", "250000 100000\n"}}))),
            3);
  // v1 co-mounted cpu,cpuacct with the process's path.
  EXPECT_EQ(cpus_of(cgroup_cpu_quota(
                fake_fs({{"/proc/self/cgroup", "4:cpu,cpuacct:/docker/abc\n"},
                         {"/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "50000\n"},
                         {"/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n"},
                         {"/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n"},
                         {"/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n"}}))),
            1);
  // v1 path from the host's view but the container sees its own cgroup at the mount root.
  EXPECT_EQ(
      cpus_of(cgroup_cpu_quota(fake_fs({{"/proc/self/cgroup", "1:cpu:/docker/abc\n"},
                                        {"/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "200000"},
                                        {"/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000"}}))),
      2);
  // v1 unlimited.
  EXPECT_FALSE(cgroup_cpu_quota(fake_fs({{"/proc/self/cgroup", "1:cpu:/\n"},
                                         {"/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n"},
                                         {"/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n"}})));
  // Another root (tests, unusual mounts).
  EXPECT_EQ(
      cpus_of(cgroup_cpu_quota(
          fake_fs({{"/proc/self/cgroup", "0::/\n"}, {"/cg/cpu.max", "100000 100000"}}), "/cg")),
      1);
}

TEST(CpuInfo, ParsesProcCpuinfo) {
  const char* text =
      "processor\t: 0\n"
      "vendor_id\t: GenuineIntel\n"
      "model name\t: Intel(R) Xeon(R) Platinum 8480+\n"
      "flags\t\t: fpu sse2 avx avx2 avx512f avx512_vnni avx512_bf16 amx_bf16 amx_tile amx_int8 "
      "avx_vnni\n"
      "\n"
      "processor\t: 1\n"
      "model name\t: Something Else\n"
      "flags\t\t: fpu\n";
  const CpuDescription d = parse_proc_cpuinfo(text);
  EXPECT_EQ(d.model_name, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_TRUE(d.features.avx2);
  EXPECT_TRUE(d.features.avx512f);
  EXPECT_TRUE(d.features.avx512_bf16);
  EXPECT_TRUE(d.features.avx512_vnni);
  EXPECT_TRUE(d.features.amx_tile);
  EXPECT_TRUE(d.features.amx_bf16);
  EXPECT_TRUE(d.features.amx_int8);
  EXPECT_EQ(d.features.to_string(),
            "avx2 avx512f avx512_bf16 avx512_vnni amx_tile amx_bf16 amx_int8");

  // avx_vnni is not avx512_vnni; avx512fp16 is not avx512f.
  const CpuDescription e =
      parse_proc_cpuinfo("model name : Tiny\nflags : avx avx2 avx_vnni avx512fp16\n");
  EXPECT_EQ(e.model_name, "Tiny");
  EXPECT_TRUE(e.features.avx2);
  EXPECT_FALSE(e.features.avx512f);
  EXPECT_FALSE(e.features.avx512_vnni);
  EXPECT_EQ(e.features.to_string(), "avx2");

  const CpuDescription none = parse_proc_cpuinfo("");
  EXPECT_TRUE(none.model_name.empty());
  EXPECT_EQ(none.features.to_string(), "");
}

TEST(CpuInfo, DescribesThisMachine) {
  const CpuDescription d = describe_cpu();
  const CpuDescription c = cpuid_description();
#if defined(__x86_64__)
  EXPECT_FALSE(d.model_name.empty());
  // The kernel only clears flags cpuid reports (when the OS does not enable them), never adds.
  if (d.features.avx2) {
    EXPECT_TRUE(c.features.avx2);
  }
  if (d.features.avx512f) {
    EXPECT_TRUE(c.features.avx512f);
  }
#endif
  std::printf("cpu: %s [%s]; cpuid: [%s]; default threads: %d\n", d.model_name.c_str(),
              d.features.to_string().c_str(), c.features.to_string().c_str(),
              default_thread_count());
}

}  // namespace
}  // namespace osprey::cpu
