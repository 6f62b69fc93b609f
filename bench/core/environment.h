// The machine a benchmark ran on, captured so a reader can judge the numbers: CPU model and
// ISA flags, frequency governor and current vs maximum clock (with warnings when throttled or
// in powersave), cgroup CPU quota, CPU affinity, memory, load, kernel and library versions.
// Parsing is split into pure functions over file contents so it is tested on fake files.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace osprey::bench {

struct Environment {
  std::string cpu_model;
  std::vector<std::string> cpu_flags;  // the ISA flags that matter for inference, if present
  int logical_cpus = 0;                // processors listed in /proc/cpuinfo
  std::string affinity;                // CPUs this process may run on, "0-3,8"
  int affinity_count = 0;
  std::string cgroup_cpu_quota;  // "2 CPUs (200000/100000)" or "none"
  std::string governor;          // "performance", "powersave", or "not exposed"
  double cur_mhz = -1;           // mean over the affinity CPUs; -1 when unknown
  double max_mhz = -1;
  double mem_total_mb = -1;
  std::string loadavg;   // /proc/loadavg's first three fields
  std::string kernel;    // uname -r
  std::string compiler;  // of this build
  std::string libc;
  std::vector<std::string> warnings;  // throttling, powersave, load, quota below thread count
};

// Facts from /proc/cpuinfo text: model name, count of "processor" lines, the ISA flags of
// interest (avx, avx2, fma, f16c, avx512f, avx512_bf16, avx512_vnni, avx_vnni, amx_tile,
// amx_bf16, amx_int8, neon/asimd) in that order, and the mean "cpu MHz" (-1 when absent).
struct CpuInfo {
  std::string model;
  int processors = 0;
  std::vector<std::string> flags;
  double mean_mhz = -1;
};
CpuInfo parse_cpuinfo(std::string_view text);

// cgroup v2 "cpu.max" ("max 100000" or "200000 100000") -> CPUs allowed; nullopt = no limit
// or unparseable.
std::optional<double> parse_cgroup_v2_cpu_max(std::string_view text);
// cgroup v1 cfs_quota_us / cfs_period_us contents -> CPUs allowed; nullopt when quota is -1.
std::optional<double> parse_cgroup_v1_quota(std::string_view quota, std::string_view period);

// Sorted CPU ids -> "0-3,8".
std::string format_cpu_list(const std::vector<int>& cpus);

// Warnings about a frequency reading: powersave governor, current clock below 90% of max.
std::vector<std::string> frequency_warnings(const std::string& governor, double cur_mhz,
                                            double max_mhz);

// Reads everything from /proc, /sys and the C library. Never fails: what cannot be read is
// reported as unknown. `threads` (largest thread count of the run) adds a warning when the
// affinity or quota allows fewer CPUs.
Environment capture_environment(int threads);

}  // namespace osprey::bench
