// What CPUs this process may use, and what they can do.
//
// default_thread_count() is the engine's default thread count: the CPUs in the process's
// affinity mask (sched_getaffinity), further capped by the cgroup CPU quota (v2 cpu.max, v1
// cpu.cfs_quota_us / cpu.cfs_period_us), rounded up, at least 1. It is never the host's core
// count when the process is restricted. The parsing is split into pure functions over file
// contents (and a file-reading callback) so it is testable without the real files.
#pragma once

#include <sched.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace osprey::cpu {

// ---- Affinity -------------------------------------------------------------------------------

// CPU ids set in `set`, ascending.
std::vector<int> cpus_in_set(const cpu_set_t& set);
// The CPU ids this process may run on (sched_getaffinity of the calling thread); empty if the
// call fails.
std::vector<int> affinity_cpus();

// ---- cgroup CPU quota -----------------------------------------------------------------------

// A CFS bandwidth limit: `quota` microseconds of CPU time per `period` microseconds.
struct CpuQuota {
  int64_t quota = 0;
  int64_t period = 0;
  // ceil(quota / period), at least 1: the CPUs this quota allows.
  int cpus() const;
};

// cgroup v2 `cpu.max`: "max 100000" (no limit) or "150000 100000". nullopt for "max", an
// empty file or anything malformed or non-positive.
std::optional<CpuQuota> parse_cgroup_v2_cpu_max(std::string_view contents);
// cgroup v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us`: quota -1 means no limit (nullopt).
std::optional<CpuQuota> parse_cgroup_v1_quota(std::string_view quota_us,
                                              std::string_view period_us);

// Where this process's cgroups are, from /proc/self/cgroup.
struct CgroupPaths {
  std::optional<std::string> v2;      // from the "0::<path>" line
  std::optional<std::string> v1_cpu;  // from the "N:<controllers>:<path>" line naming "cpu"
};
CgroupPaths parse_proc_self_cgroup(std::string_view contents);

// Reads a whole file; nullopt when it does not exist or cannot be read.
using FileReader = std::function<std::optional<std::string>(const std::string& path)>;
std::optional<std::string> read_small_file(const std::string& path);

// The tightest CPU quota that applies to this process, looked up through `read` under
// `cgroup_root` (normally "/sys/fs/cgroup"): the process's own cgroup and every ancestor, for
// v2 (`cpu.max`) and v1 (`cpu/`, `cpu,cpuacct/`, `cpuacct,cpu/` hierarchies), plus the mount
// roots themselves (a container usually sees its own cgroup there). nullopt = no limit found.
std::optional<CpuQuota> cgroup_cpu_quota(const FileReader& read,
                                         const std::string& cgroup_root = "/sys/fs/cgroup");

// min(affinity_cpus, quota CPUs), at least 1. affinity_cpus <= 0 counts as 1.
int thread_count_for(int affinity_cpus, std::optional<CpuQuota> quota);

// thread_count_for(affinity_cpus().size(), cgroup quota from the real files).
int default_thread_count();

// The last-level cache's size in bytes as the C library reports it (the L3, else the L2), or 0
// when it reports none.
int64_t last_level_cache_bytes();

// ---- Model and ISA (for bench reports) ------------------------------------------------------

struct CpuFeatures {
  bool avx2 = false;
  bool avx512f = false;
  bool avx512_bf16 = false;
  bool avx512_vnni = false;
  bool amx_tile = false;
  bool amx_bf16 = false;
  bool amx_int8 = false;
  // The set flags by their /proc/cpuinfo names, space-separated ("avx2 avx512f ..."); empty
  // when none.
  std::string to_string() const;
};

struct CpuDescription {
  std::string model_name;  // e.g. "Intel(R) Xeon(R) Platinum 8480+"; empty if unknown
  CpuFeatures features;
};

// The "model name" and "flags" of the first processor in /proc/cpuinfo contents.
CpuDescription parse_proc_cpuinfo(std::string_view contents);
// From cpuid (x86 only; on other machines an empty description). Unlike /proc/cpuinfo this
// does not know whether the OS enabled the AVX-512/AMX register state.
CpuDescription cpuid_description();
// /proc/cpuinfo when readable and it names a model, else cpuid.
CpuDescription describe_cpu();

}  // namespace osprey::cpu
