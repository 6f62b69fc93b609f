#include "core/environment.h"

#include <gnu/libc-version.h>
#include <sched.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace osprey::bench {
namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::optional<double> to_double(std::string_view s) {
  const std::string t = trim(s);
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || *end != '\0') return std::nullopt;
  return v;
}

std::string fmt(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

const char* const kFlagsOfInterest[] = {"avx",      "avx2",        "fma",         "f16c",
                                        "avx512f",  "avx512_bf16", "avx512_vnni", "avx_vnni",
                                        "amx_tile", "amx_bf16",    "amx_int8",    "asimd"};

// The cgroup path of this process ("/user.slice/..."), from /proc/self/cgroup; v2 line "0::/path".
std::string own_cgroup_path(const std::string& proc_cgroup, std::string_view controller) {
  std::istringstream is(proc_cgroup);
  std::string line;
  while (std::getline(is, line)) {
    const auto a = line.find(':');
    const auto b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string ctrls = line.substr(a + 1, b - a - 1);
    if (controller.empty() ? ctrls.empty() : ctrls.find(controller) != std::string::npos)
      return line.substr(b + 1);
  }
  return "";
}

std::string cgroup_quota() {
  const std::string proc = read_file("/proc/self/cgroup").value_or("");
  // v2: walk from the process's cgroup up to the root, take the tightest limit.
  std::optional<double> best;
  std::string path = own_cgroup_path(proc, "");
  std::string source;
  for (int guard = 0; guard < 64; ++guard) {
    if (auto t = read_file("/sys/fs/cgroup" + path + "/cpu.max")) {
      if (auto cpus = parse_cgroup_v2_cpu_max(*t); cpus && (!best || *cpus < *best)) {
        best = cpus;
        source = trim(*t);
      }
    }
    if (path.empty() || path == "/") break;
    path = path.substr(0, path.find_last_of('/'));
  }
  if (!best) {
    for (const char* dir : {"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu"}) {
      auto q = read_file(std::string(dir) + "/cpu.cfs_quota_us");
      auto p = read_file(std::string(dir) + "/cpu.cfs_period_us");
      if (q && p) {
        if (auto cpus = parse_cgroup_v1_quota(*q, *p)) {
          best = cpus;
          source = trim(*q) + "/" + trim(*p);
        }
        break;
      }
    }
  }
  if (!best) return "none";
  return fmt(*best, 2) + " CPUs (" + source + ")";
}

}  // namespace

CpuInfo parse_cpuinfo(std::string_view text) {
  CpuInfo info;
  std::vector<std::string> flags;
  double mhz_sum = 0;
  int mhz_n = 0;
  std::istringstream is{std::string(text)};
  std::string line;
  while (std::getline(is, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(std::string_view(line).substr(0, colon));
    const std::string value = trim(std::string_view(line).substr(colon + 1));
    if (key == "processor") {
      ++info.processors;
    } else if ((key == "model name" || key == "Model") && info.model.empty()) {
      info.model = value;
    } else if ((key == "flags" || key == "Features") && flags.empty()) {
      std::istringstream fs(value);
      std::string f;
      while (fs >> f) flags.push_back(f);
    } else if (key == "cpu MHz") {
      if (auto v = to_double(value)) {
        mhz_sum += *v;
        ++mhz_n;
      }
    }
  }
  for (const char* want : kFlagsOfInterest)
    if (std::find(flags.begin(), flags.end(), want) != flags.end()) info.flags.push_back(want);
  if (mhz_n > 0) info.mean_mhz = mhz_sum / mhz_n;
  return info;
}

std::optional<double> parse_cgroup_v2_cpu_max(std::string_view text) {
  std::istringstream is{std::string(text)};
  std::string quota, period;
  if (!(is >> quota >> period)) return std::nullopt;
  if (quota == "max") return std::nullopt;
  auto q = to_double(quota), p = to_double(period);
  if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;
  return *q / *p;
}

std::optional<double> parse_cgroup_v1_quota(std::string_view quota, std::string_view period) {
  auto q = to_double(quota), p = to_double(period);
  if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;
  return *q / *p;
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(cpus[j]);
    }
    i = j + 1;
  }
  return out;
}

std::vector<std::string> frequency_warnings(const std::string& governor, double cur_mhz,
                                            double max_mhz) {
  std::vector<std::string> w;
  if (governor == "powersave")
    w.push_back(
        "CPU frequency governor is 'powersave': clocks may be held low; use 'performance' for "
        "stable numbers");
  if (cur_mhz > 0 && max_mhz > 0 && cur_mhz < 0.9 * max_mhz)
    w.push_back("CPU clock " + fmt(cur_mhz, 0) + " MHz is below 90% of its maximum " +
                fmt(max_mhz, 0) + " MHz: throttled or idle-scaled");
  return w;
}

Environment capture_environment(int threads) {
  Environment env;
  const CpuInfo cpu = parse_cpuinfo(read_file("/proc/cpuinfo").value_or(""));
  env.cpu_model = cpu.model.empty() ? "unknown" : cpu.model;
  env.cpu_flags = cpu.flags;
  env.logical_cpus = cpu.processors;

  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int i = 0; i < CPU_SETSIZE; ++i)
      if (CPU_ISSET(i, &set)) cpus.push_back(i);
  env.affinity = cpus.empty() ? "unknown" : format_cpu_list(cpus);
  env.affinity_count = static_cast<int>(cpus.size());
  env.cgroup_cpu_quota = cgroup_quota();

  const int first = cpus.empty() ? 0 : cpus.front();
  const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(first) + "/cpufreq/";
  env.governor = trim(read_file(base + "scaling_governor").value_or("not exposed"));
  double cur_sum = 0;
  int cur_n = 0;
  for (int c : cpus) {
    auto t =
        read_file("/sys/devices/system/cpu/cpu" + std::to_string(c) + "/cpufreq/scaling_cur_freq");
    if (auto v = t ? to_double(*t) : std::nullopt) {
      cur_sum += *v / 1000.0;
      ++cur_n;
    }
  }
  env.cur_mhz = cur_n > 0 ? cur_sum / cur_n : cpu.mean_mhz;
  if (auto t = read_file(base + "cpuinfo_max_freq"))
    if (auto v = to_double(*t)) env.max_mhz = *v / 1000.0;
  env.warnings = frequency_warnings(env.governor, env.cur_mhz, env.max_mhz);
  if (env.governor == "not exposed")
    env.warnings.push_back(
        "cpufreq is not exposed (VM or container): governor and throttling cannot be checked");

  if (auto mem = read_file("/proc/meminfo")) {
    std::istringstream is(*mem);
    std::string key;
    double kb = 0;
    if (is >> key >> kb && key == "MemTotal:") env.mem_total_mb = kb / 1024.0;
  }
  if (auto la = read_file("/proc/loadavg")) {
    std::istringstream is(*la);
    std::string a, b, c;
    is >> a >> b >> c;
    env.loadavg = a + " " + b + " " + c;
    if (auto one = to_double(a); one && env.affinity_count > 0 && *one > env.affinity_count)
      env.warnings.push_back("load average " + a + " exceeds the " +
                             std::to_string(env.affinity_count) +
                             " CPUs available: other work competes with the benchmark");
  }
  if (env.affinity_count > 0 && threads > env.affinity_count)
    env.warnings.push_back("threads " + std::to_string(threads) + " exceed the " +
                           std::to_string(env.affinity_count) +
                           " CPUs in this process's affinity mask");
  struct utsname u;
  if (uname(&u) == 0) env.kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
#if defined(__clang__)
  env.compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  env.compiler = std::string("gcc ") + __VERSION__;
#endif
  env.libc = std::string("glibc ") + gnu_get_libc_version();
  return env;
}

}  // namespace osprey::bench
