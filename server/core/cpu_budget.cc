#include "core/cpu_budget.h"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace osprey::server {

int parse_cgroup_cpu_max(const std::string& text) {
  std::istringstream in(text);
  std::string quota;
  long long period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return 0;
  long long q = 0;
  try {
    q = std::stoll(quota);
  } catch (...) {
    return 0;
  }
  if (q <= 0) return 0;
  return static_cast<int>(std::min<long long>((q + period - 1) / period, 1 << 16));
}

int default_thread_budget() {
  int cpus = 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpus = std::max(1, CPU_COUNT(&set));
  std::ifstream f("/sys/fs/cgroup/cpu.max");
  if (f) {
    std::stringstream ss;
    ss << f.rdbuf();
    int quota = parse_cgroup_cpu_max(ss.str());
    if (quota > 0) cpus = std::min(cpus, quota);
  }
  return cpus;
}

}  // namespace osprey::server
