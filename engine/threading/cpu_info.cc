#include "threading/cpu_info.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace osprey::cpu {

namespace {

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// The whole of `s` (trimmed) as an integer.
std::optional<int64_t> parse_int(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::optional<CpuQuota> make_quota(int64_t quota, int64_t period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  return CpuQuota{quota, period};
}

// The tighter of two limits (fewer CPUs; on a tie, the smaller fraction).
std::optional<CpuQuota> tighter(std::optional<CpuQuota> a, std::optional<CpuQuota> b) {
  if (!a) return b;
  if (!b) return a;
  // a.quota / a.period < b.quota / b.period, without overflow for realistic values.
  const __int128 lhs = static_cast<__int128>(a->quota) * b->period;
  const __int128 rhs = static_cast<__int128>(b->quota) * a->period;
  return lhs <= rhs ? a : b;
}

// `path` and each of its ancestors, as paths under `root` ("/a/b" -> root/a/b, root/a, root).
std::vector<std::string> self_and_ancestors(const std::string& root, std::string_view path) {
  std::vector<std::string> dirs;
  std::string p(trim(path));
  while (!p.empty() && p.back() == '/') p.pop_back();
  while (true) {
    dirs.push_back(root + p);
    if (p.empty()) break;
    const size_t slash = p.rfind('/');
    p = slash == std::string::npos ? std::string() : p.substr(0, slash);
  }
  return dirs;
}

}  // namespace

// ---- Affinity -------------------------------------------------------------------------------

std::vector<int> cpus_in_set(const cpu_set_t& set) {
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

std::vector<int> affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return {};
  return cpus_in_set(set);
}

// ---- cgroup CPU quota -----------------------------------------------------------------------

int CpuQuota::cpus() const {
  if (quota <= 0 || period <= 0) return 1;
  const int64_t n = quota / period + (quota % period != 0 ? 1 : 0);
  return static_cast<int>(std::clamp<int64_t>(n, 1, 1 << 20));
}

std::optional<CpuQuota> parse_cgroup_v2_cpu_max(std::string_view contents) {
  contents = trim(contents);
  const size_t sp = contents.find_first_of(" \t");
  const std::string_view quota = contents.substr(0, sp);
  if (quota.empty() || quota == "max") return std::nullopt;
  const auto q = parse_int(quota);
  // The period is optional in what the kernel accepts on write; it always prints it, default
  // 100000.
  const auto p = sp == std::string_view::npos ? std::optional<int64_t>(100000)
                                              : parse_int(contents.substr(sp));
  if (!q || !p) return std::nullopt;
  return make_quota(*q, *p);
}

std::optional<CpuQuota> parse_cgroup_v1_quota(std::string_view quota_us,
                                              std::string_view period_us) {
  const auto q = parse_int(quota_us);
  const auto p = parse_int(period_us);
  if (!q || !p) return std::nullopt;
  return make_quota(*q, *p);
}

CgroupPaths parse_proc_self_cgroup(std::string_view contents) {
  CgroupPaths out;
  for (std::string_view line : split(contents, '\n')) {
    line = trim(line);
    // "hierarchy-id:controller-list:path"; the path may itself contain ':'.
    const size_t c1 = line.find(':');
    if (c1 == std::string_view::npos) continue;
    const size_t c2 = line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    const std::string_view id = line.substr(0, c1);
    const std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
    const std::string path(line.substr(c2 + 1));
    if (id == "0" && controllers.empty()) {
      out.v2 = path;
      continue;
    }
    for (std::string_view c : split(controllers, ','))
      if (c == "cpu") out.v1_cpu = path;
  }
  return out;
}

std::optional<std::string> read_small_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return std::nullopt;
  return ss.str();
}

std::optional<CpuQuota> cgroup_cpu_quota(const FileReader& read, const std::string& cgroup_root) {
  const auto self = read("/proc/self/cgroup");
  const CgroupPaths paths = parse_proc_self_cgroup(self ? *self : std::string());
  std::optional<CpuQuota> best;

  // v2: the unified hierarchy is mounted at the root (pure v2) or at root/unified (hybrid).
  for (const std::string& mount : {cgroup_root, cgroup_root + "/unified"}) {
    std::vector<std::string> dirs = self_and_ancestors(mount, paths.v2.value_or(""));
    for (const std::string& dir : dirs)
      if (const auto c = read(dir + "/cpu.max")) best = tighter(best, parse_cgroup_v2_cpu_max(*c));
  }
  // v1: the cpu controller's hierarchy, under whichever name it is mounted.
  for (const char* name : {"/cpu", "/cpu,cpuacct", "/cpuacct,cpu"}) {
    const std::string mount = cgroup_root + name;
    for (const std::string& dir : self_and_ancestors(mount, paths.v1_cpu.value_or(""))) {
      const auto q = read(dir + "/cpu.cfs_quota_us");
      if (!q) continue;
      const auto p = read(dir + "/cpu.cfs_period_us");
      if (p) best = tighter(best, parse_cgroup_v1_quota(*q, *p));
    }
  }
  return best;
}

int thread_count_for(int affinity_cpus, std::optional<CpuQuota> quota) {
  int n = std::max(affinity_cpus, 1);
  if (quota) n = std::min(n, quota->cpus());
  return std::max(n, 1);
}

int default_thread_count() {
  const auto cpus = affinity_cpus();
  return thread_count_for(static_cast<int>(cpus.size()), cgroup_cpu_quota(read_small_file));
}

// ---- Model and ISA --------------------------------------------------------------------------

std::string CpuFeatures::to_string() const {
  std::string s;
  const auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!s.empty()) s += ' ';
    s += name;
  };
  add(avx2, "avx2");
  add(avx512f, "avx512f");
  add(avx512_bf16, "avx512_bf16");
  add(avx512_vnni, "avx512_vnni");
  add(amx_tile, "amx_tile");
  add(amx_bf16, "amx_bf16");
  add(amx_int8, "amx_int8");
  return s;
}

CpuDescription parse_proc_cpuinfo(std::string_view contents) {
  CpuDescription d;
  bool have_model = false, have_flags = false;
  for (std::string_view line : split(contents, '\n')) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      // A blank line ends the first processor's block once we have what we need.
      if (trim(line).empty() && (have_model || have_flags)) break;
      continue;
    }
    const std::string_view key = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    if (key == "model name" && !have_model) {
      d.model_name = std::string(value);
      have_model = true;
    } else if (key == "flags" && !have_flags) {
      have_flags = true;
      for (std::string_view f : split(value, ' ')) {
        CpuFeatures& x = d.features;
        if (f == "avx2")
          x.avx2 = true;
        else if (f == "avx512f")
          x.avx512f = true;
        else if (f == "avx512_bf16")
          x.avx512_bf16 = true;
        else if (f == "avx512_vnni")
          x.avx512_vnni = true;
        else if (f == "amx_tile")
          x.amx_tile = true;
        else if (f == "amx_bf16")
          x.amx_bf16 = true;
        else if (f == "amx_int8")
          x.amx_int8 = true;
      }
    }
  }
  return d;
}

CpuDescription cpuid_description() {
  CpuDescription d;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, e = 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &e)) {
    d.features.avx2 = (b >> 5) & 1;
    d.features.avx512f = (b >> 16) & 1;
    d.features.avx512_vnni = (c >> 11) & 1;
    d.features.amx_bf16 = (e >> 22) & 1;
    d.features.amx_tile = (e >> 24) & 1;
    d.features.amx_int8 = (e >> 25) & 1;
    if (a >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &e)) d.features.avx512_bf16 = (a >> 5) & 1;
  }
  unsigned max_ext = __get_cpuid_max(0x80000000u, nullptr);
  if (max_ext >= 0x80000004u) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      unsigned r[4] = {};
      __get_cpuid(0x80000002u + i, &r[0], &r[1], &r[2], &r[3]);
      for (int k = 0; k < 4; ++k)
        for (int byte = 0; byte < 4; ++byte)
          brand[i * 16 + k * 4 + byte] = static_cast<char>((r[k] >> (8 * byte)) & 0xff);
    }
    d.model_name = std::string(trim(std::string_view(brand)));
  }
#endif
  return d;
}

CpuDescription describe_cpu() {
  if (const auto info = read_small_file("/proc/cpuinfo")) {
    CpuDescription d = parse_proc_cpuinfo(*info);
    if (!d.model_name.empty()) return d;
  }
  return cpuid_description();
}

int64_t last_level_cache_bytes() {
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    const long v = sysconf(name);
    if (v > 0) return static_cast<int64_t>(v);
  }
  return 0;
}

}  // namespace osprey::cpu
